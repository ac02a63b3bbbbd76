"""njit repeat loops that drive the exact-minibatch-MH kernels' compiled ``*_step`` functions from a fixed
state (for kernel-vs-matrix G-tests and per-draw identities), plus the deliberately broken variants
(mutants) that the checks must catch. Mutants are built from the same kernel helpers with one defect:

* ``poisson_mh``   MUT_COUNTS_AT_PROPOSAL: counts s drawn at theta' instead of theta;
                   MUT_RATE_OFF_BY_ONE: the ratio uses rates lam M_i/L + phi_i + 1;
                   MUT_SHALLOW_PIPELINE: the candidate loop ends at the pipeline's prefetch depth (the
                   candidates the prologue staged), so candidates b >= ``SLOT_AHEAD`` are never evaluated;
                   seen only when B > SLOT_AHEAD;
* ``tuna_mh``      MUT_SWAPPED: TunaMH estimator evaluated for the reverse move (phi_i(theta', theta));
* ``poisson_*``    MUT_NO_HASTINGS: the proposal ratio q_s(theta', theta)/q_s(theta, theta') dropped;
                   MUT_FORWARD_GRAD: the reverse density uses g(theta) instead of g(theta');
* ``tuna_sgld``    MUT_FORWARD_GRAD: reverse density with g_B(theta) instead of g_B(theta');
* ``exchange``     MUT_AUX_AT_CURRENT: auxiliary draw from p_theta instead of p_theta'.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64

from samplers.hotloop import log_accumulate, log_flush, packed, pair_dot, pair_quadratic, prefetch_row
from samplers.kernels.exchange import exchange_step
from samplers.kernels.poisson_grad import counts_and_grad, poisson_grad_step, ratio_and_grad_at
from samplers.kernels.poisson_mh import candidate_term, poisson_counts, poisson_mh_step, poisson_ratio_at
from samplers.kernels.sgld import uniform_minibatch
from samplers.kernels.tuna_mh import tuna_log_ratio, tuna_mh_step
from samplers.kernels.tuna_sgld import drift_map, tuna_sgld_step
from samplers.poisson_minibatch import (
    RESOLVE_AHEAD,
    ROW_A,
    ROW_PROB,
    ROW_SHIFT,
    ROW_Y,
    SLOT_AHEAD,
    open_candidates,
    pipeline_counters,
    resolve_slot,
    stage_at,
)
from samplers.proposals import log_q_ratio, propose
from samplers.targets.ising_param import IsingParam, draw_stat
from samplers.targets.tall import GAUSS, TG, TallData, grad_estimate, log_prior, phi_i

MUT_NONE, MUT_COUNTS_AT_PROPOSAL, MUT_SWAPPED, MUT_NO_HASTINGS, MUT_FORWARD_GRAD = 0, 1, 2, 3, 4
MUT_AUX_AT_CURRENT, MUT_RATE_OFF_BY_ONE, MUT_SHALLOW_PIPELINE = 5, 6, 7


def _scratch(Lam: float):
    n0 = int(Lam + 10.0 * np.sqrt(Lam + 1.0) + 64.0)
    return np.empty(n0, dtype=np.int64), np.empty(n0, dtype=np.int64), np.empty(n0)


@njit(cache=True)
def counts_ratio_shallow(t: TallData, theta, theta_p, a_scale: float, rows, Lam: float, rng, buf, err):
    """MUT_SHALLOW_PIPELINE: :func:`samplers.kernels.poisson_mh.poisson_counts_ratio` with one defect, the
    candidate loop bounded by the prefetch depth (``range(min(B, SLOT_AHEAD))``: the candidates the
    prologue staged), so a draw of B > SLOT_AHEAD candidates evaluates only the first SLOT_AHEAD.
    Returns ``(log_ratio, B)``."""
    kind = t.kind
    X = t.X
    w = t.w
    beta = t.beta
    nu = t.nu
    cy = X.shape[1] + ROW_Y
    crlr = -beta * 0.5 * (nu + 1.0)
    pk = packed(kind)
    n = rows.shape[0]
    cp = X.shape[1] + ROW_PROB
    B, buf, fb, st = open_candidates(rows, cp, X, pk, Lam, rng, buf)
    zs, zc, gam = pipeline_counters(st, B)
    cm = X.shape[1] + ROW_A
    cs = X.shape[1] + ROW_SHIFT
    s = 0.0
    p = 1.0
    npf = 0
    for b in range(min(B, SLOT_AHEAD)):
        if b + SLOT_AHEAD < B:
            prefetch_row(rows, stage_at(fb, zs, b + SLOT_AHEAD, n))
        zs += gam
        if b + RESOLVE_AHEAD < B:
            buf[b + RESOLVE_AHEAD] = resolve_slot(rows, cp, fb, b + RESOLVE_AHEAD)
        i = uint64(buf[b])
        if kind == TG or kind == GAUSS:
            l0, l1 = pair_quadratic(rows, w, beta, i, theta, theta_p)
        else:  # RLR (the mutant is driven on TG and RLR only)
            r0, r1 = pair_dot(rows, rows[i, cy], i, theta, theta_p)
            l0 = crlr * math.log1p(r0 * r0 / nu)
            l1 = crlr * math.log1p(r1 * r1 / nu)
        sh = rows[i, cs]
        ok, kept, ratio = candidate_term(zc, a_scale, rows[i, cm], l0 + sh, l1 + sh)
        zc += gam
        if not ok:
            err[0] = 1
            err[1] = i
            return np.nan, B
        if kept:
            s, p, npf = log_accumulate(s, p, npf, ratio)
    return log_flush(s, p), B


@njit(cache=True)
def repeat_poisson_mh(
    t: TallData,
    x0,
    rows,
    lam: float,
    L: float,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    reps: int,
    mutant: int,
    buf,
    kept_i,
    kept_r,
):
    d = x0.shape[0]
    out = np.empty((reps, d))
    theta = x0.copy()
    theta_p = np.empty(d)
    g0 = np.zeros(d)
    lp = np.empty(1)
    err = np.zeros(2, dtype=np.int64)
    for r in range(reps):
        theta[:] = x0
        lp[0] = log_prior(t, x0)
        if mutant == MUT_NONE:
            _, _, _, _, buf, kept_i, kept_r = poisson_mh_step(
                t,
                theta,
                lp,
                err,
                buf,
                kept_i,
                kept_r,
                rows,
                lam,
                L,
                prop,
                sigma,
                h,
                K,
                rng,
                theta_p,
                g0,
            )
        elif mutant == MUT_RATE_OFF_BY_ONE:
            propose(prop, theta, g0, sigma, h, K, rng, theta_p)
            lp_p = log_prior(t, theta_p)
            if lp_p > -np.inf:
                a = lam / L
                B, nk, buf, kept_i, kept_r = poisson_counts(
                    t, theta, a, rows, lam + L, rng, buf, kept_i, kept_r, err
                )
                log_r = lp_p - lp[0]
                for k in range(nk):
                    i = kept_i[k]
                    log_r += np.log((a * t.M[i] + phi_i(t, i, theta_p) + 1.0) / (kept_r[k] + 1.0))
                if np.log(rng.random()) < log_r:
                    theta[:] = theta_p
        elif mutant == MUT_SHALLOW_PIPELINE:
            propose(prop, theta, g0, sigma, h, K, rng, theta_p)
            lp_p = log_prior(t, theta_p)
            if lp_p > -np.inf:
                s, B = counts_ratio_shallow(t, theta, theta_p, lam / L, rows, lam + L, rng, buf, err)
                if B > buf.shape[0]:
                    buf = np.empty(2 * B, dtype=np.int64)
                if np.log(rng.random()) < s + lp_p - lp[0]:
                    theta[:] = theta_p
        else:  # MUT_COUNTS_AT_PROPOSAL
            propose(prop, theta, g0, sigma, h, K, rng, theta_p)
            lp_p = log_prior(t, theta_p)
            if lp_p > -np.inf:
                a = lam / L
                B, nk, buf, kept_i, kept_r = poisson_counts(
                    t, theta_p, a, rows, lam + L, rng, buf, kept_i, kept_r, err
                )
                log_r = -poisson_ratio_at(t, theta, a, kept_i, kept_r, nk, err) + lp_p - lp[0]
                if np.log(rng.random()) < log_r:
                    theta[:] = theta_p
        out[r] = theta
    return out, err


@njit(cache=True)
def repeat_poisson_grad(
    t: TallData,
    x0,
    rows,
    lam: float,
    L: float,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    reps: int,
    mutant: int,
    buf,
    kept_i,
    kept_r,
):
    d = x0.shape[0]
    out = np.empty((reps, d))
    theta = x0.copy()
    theta_p = np.empty(d)
    g = np.zeros(d)
    g_p = np.zeros(d)
    tmp = np.zeros(d)
    lp = np.empty(1)
    err = np.zeros(2, dtype=np.int64)
    for r in range(reps):
        theta[:] = x0
        lp[0] = log_prior(t, x0)
        if mutant == MUT_NONE:
            _, _, _, _, _, buf, kept_i, kept_r = poisson_grad_step(
                t,
                theta,
                lp,
                err,
                buf,
                kept_i,
                kept_r,
                rows,
                lam,
                L,
                prop,
                sigma,
                h,
                K,
                rng,
                theta_p,
                g,
                g_p,
                tmp,
            )
        else:
            a = lam / L
            B, nk, buf, kept_i, kept_r = counts_and_grad(
                t, theta, a, rows, lam + L, rng, buf, kept_i, kept_r, g, tmp, err
            )
            propose(prop, theta, g, sigma, h, K, rng, theta_p)
            lp_p = log_prior(t, theta_p)
            if lp_p > -np.inf:
                log_r = ratio_and_grad_at(t, rows, theta_p, a, kept_i, kept_r, nk, g_p, tmp, err)
                log_r += lp_p - lp[0]
                if mutant == MUT_FORWARD_GRAD:
                    log_r += log_q_ratio(prop, theta, theta_p, g, g, sigma, h, K)
                if np.log(rng.random()) < log_r:
                    theta[:] = theta_p
        out[r] = theta
    return out, err


@njit(cache=True)
def repeat_tuna_mh(
    t: TallData,
    x0,
    rows,
    chi: float,
    C: float,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    reps: int,
    mutant: int,
):
    d = x0.shape[0]
    out = np.empty((reps, d))
    theta = x0.copy()
    theta_p = np.empty(d)
    g0 = np.zeros(d)
    lp = np.empty(1)
    err = np.zeros(2, dtype=np.int64)
    buf = np.empty(256, dtype=np.int64)
    kept_i = np.empty(256, dtype=np.int64)
    for r in range(reps):
        theta[:] = x0
        lp[0] = log_prior(t, x0)
        if mutant == MUT_NONE:
            _, _, _, _, _, buf, kept_i = tuna_mh_step(
                t, theta, lp, err, buf, kept_i, rows, chi, C, prop, sigma, h, K, rng, theta_p, g0
            )
        else:  # MUT_SWAPPED
            propose(prop, theta, g0, sigma, h, K, rng, theta_p)
            lp_p = log_prior(t, theta_p)
            if lp_p > -np.inf:
                s, B, nk, buf, kept_i = tuna_log_ratio(t, theta_p, theta, chi, C, rows, rng, buf, kept_i, err)
                if np.log(rng.random()) < s + lp_p - lp[0]:
                    theta[:] = theta_p
        out[r] = theta
    return out, err


@njit(cache=True)
def repeat_tuna_sgld(
    t: TallData,
    x0,
    batch: int,
    chi: float,
    C: float,
    rows,
    prop: int,
    drift: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    reps: int,
    mutant: int,
):
    """``reps`` one-step Tuna-SGLD transitions from ``x0`` (MUT_NONE: the compiled kernel step;
    MUT_FORWARD_GRAD: the same steps with g_B(theta) in the reverse proposal density)."""
    d = x0.shape[0]
    out = np.empty((reps, d))
    theta = x0.copy()
    theta_p = np.empty(d)
    g = np.zeros(d)
    g_p = np.zeros(d)
    lp = np.empty(1)
    err = np.zeros(2, dtype=np.int64)
    buf = np.empty(256, dtype=np.int64)
    kept_i = np.empty(256, dtype=np.int64)
    perm = np.arange(t.X.shape[0])
    for r in range(reps):
        theta[:] = x0
        lp[0] = log_prior(t, x0)
        if mutant == MUT_NONE:
            _, _, _, _, _, buf, kept_i = tuna_sgld_step(
                t,
                theta,
                lp,
                err,
                buf,
                kept_i,
                perm,
                batch,
                chi,
                C,
                rows,
                prop,
                drift,
                sigma,
                h,
                K,
                rng,
                theta_p,
                g,
                g_p,
            )
        else:
            uniform_minibatch(perm, batch, rng)
            grad_estimate(t, theta, perm, batch, g)
            drift_map(g, drift, t.X.shape[0] / batch)
            propose(prop, theta, g, sigma, h, K, rng, theta_p)
            lp_p = log_prior(t, theta_p)
            if lp_p > -np.inf:
                grad_estimate(t, theta_p, perm, batch, g_p)
                drift_map(g_p, drift, t.X.shape[0] / batch)
                s, B, nk, buf, kept_i = tuna_log_ratio(t, theta, theta_p, chi, C, rows, rng, buf, kept_i, err)
                g_rev = g if mutant == MUT_FORWARD_GRAD else g_p
                log_r = s + lp_p - lp[0] + log_q_ratio(prop, theta, theta_p, g, g_rev, sigma, h, K)
                if np.log(rng.random()) < log_r:
                    theta[:] = theta_p
        out[r] = theta
    return out, err


@njit(cache=True)
def repeat_exchange(
    model: IsingParam, x0, prop: int, sigma: float, h: float, K: int, rng, reps: int, mutant: int
):
    out = np.empty((reps, 1))
    theta = x0.copy()
    theta_p = np.empty(1)
    g0 = np.zeros(1)
    us = np.empty((8, model.n))
    top = np.empty(model.n, dtype=np.int64)
    bot = np.empty(model.n, dtype=np.int64)
    for r in range(reps):
        theta[:] = x0
        if mutant == MUT_NONE:
            _, _, _, us = exchange_step(model, theta, us, top, bot, prop, sigma, h, K, rng, theta_p, g0)
        else:  # MUT_AUX_AT_CURRENT
            propose(prop, theta, g0, sigma, h, K, rng, theta_p)
            tp = theta_p[0]
            if tp >= model.lo and tp <= model.hi:
                s_aux = 0.0
                for _ in range(model.m):
                    s, c, us = draw_stat(model, theta[0], rng, us, top, bot)
                    s_aux += s
                if np.log(rng.random()) < (tp - theta[0]) * (model.s_data - s_aux):
                    theta[0] = tp
        out[r] = theta
    return out


# ----------------------------------------------------------------------------- per-draw records
@njit(cache=True)
def _store_multiset(KS, r: int, kept_i, nk: int):
    """Row ``r`` of the padded (-1) multiset table := ``kept_i[:nk]``, widening the table if needed."""
    if nk > KS.shape[1]:
        new = np.full((KS.shape[0], 2 * nk), -1, dtype=np.int64)
        new[:, : KS.shape[1]] = KS
        KS = new
    KS[r, :nk] = kept_i[:nk]
    return KS


@njit(cache=True)
def record_poisson_grad(
    t: TallData,
    X0,
    rows,
    lam: float,
    L: float,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    buf,
    kept_i,
    kept_r,
):
    """One step from each row of X0; returns proposals, kernel log r, count multisets (padded -1)."""
    n, d = X0.shape
    XP = np.empty((n, d))
    LR = np.empty(n)
    KS = np.full((n, 64), -1, dtype=np.int64)
    theta = np.empty(d)
    theta_p = np.empty(d)
    g = np.zeros(d)
    g_p = np.zeros(d)
    tmp = np.zeros(d)
    lp = np.empty(1)
    err = np.zeros(2, dtype=np.int64)
    for r in range(n):
        theta[:] = X0[r]
        lp[0] = log_prior(t, theta)
        _, _, _, nk, lr, buf, kept_i, kept_r = poisson_grad_step(
            t,
            theta,
            lp,
            err,
            buf,
            kept_i,
            kept_r,
            rows,
            lam,
            L,
            prop,
            sigma,
            h,
            K,
            rng,
            theta_p,
            g,
            g_p,
            tmp,
        )
        XP[r] = theta_p
        LR[r] = lr
        KS = _store_multiset(KS, r, kept_i, nk)
    return XP, LR, KS, err


@njit(cache=True)
def record_tuna_sgld(
    t: TallData,
    X0,
    batch: int,
    chi: float,
    C: float,
    rows,
    prop: int,
    drift: int,
    sigma: float,
    h: float,
    K: int,
    rng,
):
    """One Tuna-SGLD step from each row of X0: proposals, kernel log r, batches, Poisson multisets."""
    n, d = X0.shape
    XP = np.empty((n, d))
    LR = np.empty(n)
    BS = np.empty((n, batch), dtype=np.int64)
    KS = np.full((n, 64), -1, dtype=np.int64)
    theta = np.empty(d)
    theta_p = np.empty(d)
    g = np.zeros(d)
    g_p = np.zeros(d)
    lp = np.empty(1)
    err = np.zeros(2, dtype=np.int64)
    buf = np.empty(256, dtype=np.int64)
    kept_i = np.empty(256, dtype=np.int64)
    perm = np.arange(t.X.shape[0])
    for r in range(n):
        theta[:] = X0[r]
        lp[0] = log_prior(t, theta)
        _, _, _, nk, lr, buf, kept_i = tuna_sgld_step(
            t,
            theta,
            lp,
            err,
            buf,
            kept_i,
            perm,
            batch,
            chi,
            C,
            rows,
            prop,
            drift,
            sigma,
            h,
            K,
            rng,
            theta_p,
            g,
            g_p,
        )
        XP[r] = theta_p
        LR[r] = lr
        BS[r] = perm[:batch]
        KS = _store_multiset(KS, r, kept_i, nk)
    return XP, LR, BS, KS, err
