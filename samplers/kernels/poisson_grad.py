"""Locally balanced PoissonMH (Yuan & Wang 2024 Alg. 2, App. D): ``poisson_mala`` and ``poisson_barker``.

One kernel, parameterised by the proposal kind of :mod:`samplers.proposals` (Langevin or Barker,
Gaussian or lattice). Per step (Case 2 of Alg. 1, omega_1 = omega_2 = s):

1. counts ``s_i ~ Poi(lam M_i/L + phi_i(theta))`` by Poisson thinning at the current theta (Alg. 8);
2. surrogate gradient ``g(theta) = grad log prior(theta) + sum_{kept} grad phi_i(theta) / rate_i(theta)``
   (= grad log[pi(theta) P_theta(s)], App. D), computed in the same pass as the thinning;
3. theta' ~ q_s(theta, .) (MALA: N(theta + sigma^2/2 g, sigma^2 I); Barker: sign-flip construction);
4. with the *same* counts: ``g(theta')`` and the Poisson log-ratio
   ``sum_{kept} log(rate_i(theta') / rate_i(theta))``;
5. ``log r = log prior ratio + Poisson log-ratio + log q_s(theta', theta) - log q_s(theta, theta')``.

Cost: B candidates at theta (value and gradient in one pass) + the kept draws at theta'; no O(N) work.
``n_evals`` = B; first extra trace = per-datum evaluations (B + kept).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64

from samplers.hotloop import (
    PREFETCH_AHEAD,
    add_row,
    ll_grad_one,
    log_accumulate,
    log_flush,
    one_dot,
    one_quadratic,
    packed,
    prefetch_first_candidates,
    prefetch_row,
)
from samplers.kernels.poisson_mh import ERR_PHI_BOUND, bound_ok, dense_recount, grow, poisson_mh_init
from samplers.poisson_minibatch import (
    RESOLVE_AHEAD,
    ROW_A,
    ROW_PROB,
    ROW_SHIFT,
    ROW_Y,
    SLOT_AHEAD,
    keep_at,
    open_candidates,
    pipeline_counters,
    resolve_slot,
    stage_at,
)
from samplers.proposals import log_q_ratio, propose
from samplers.targets.tall import GAUSS, RLR, TG, TallData, log_prior, log_prior_grad


@njit(cache=True)
def counts_and_grad(
    t: TallData, theta, a_scale: float, rows, Lam: float, rng, buf, kept_i, kept_r, g, tmp, err
):
    """Thinning at theta (Alg. 8) and ``g = grad log[pi(theta) P_theta(s)]`` in one pass.

    Hot loop on the arrays (:mod:`samplers.hotloop`: no NamedTuple per call, rows prefetched ahead);
    the gradient of a candidate is computed only if it is kept (it only enters g then).
    Returns ``(B, nk, buf, kept_i, kept_r)`` as :func:`samplers.kernels.poisson_mh.poisson_counts`."""
    d = theta.shape[0]
    g[:] = 0.0
    log_prior_grad(t, theta, g)
    kind = t.kind
    X = t.X
    pk = packed(kind)
    n = rows.shape[0]
    cp = X.shape[1] + ROW_PROB
    B, buf, fb, st = open_candidates(rows, cp, X, pk, Lam, rng, buf)
    zs, zc, gam = pipeline_counters(st, B)
    kept_i, kept_r = grow(kept_i, kept_r, B)
    y = t.y
    w = t.w
    beta = t.beta
    nu = t.nu
    ops = t.ops
    p = X.shape[1]
    crlr = -beta * 0.5 * (nu + 1.0)
    nk = 0
    r = 0.0
    tmp[:] = 0.0
    for b in range(B):
        if b + SLOT_AHEAD < B:
            prefetch_row(rows, stage_at(fb, zs, b + SLOT_AHEAD, n))
        zs += gam
        if b + RESOLVE_AHEAD < B:
            ia = resolve_slot(rows, cp, fb, b + RESOLVE_AHEAD)
            buf[b + RESOLVE_AHEAD] = ia
            if not pk:
                prefetch_row(X, ia)
        i = uint64(buf[b])
        if kind == TG or kind == GAUSS:
            ll = one_quadratic(rows, w, beta, i, theta)
        elif kind == RLR:
            r = one_dot(rows, rows[i, p + ROW_Y], i, theta)
            ll = crlr * math.log1p(r * r / nu)
        else:
            tmp[:] = 0.0
            ll = ll_grad_one(kind, X, y, w, beta, nu, i, theta, 1.0, tmp, ops)
        ph = ll + rows[i, p + ROW_SHIFT]
        Mi = rows[i, p + ROW_A]
        if not bound_ok(ph, Mi):
            err[0] = ERR_PHI_BOUND
            err[1] = i
            return B, nk, buf, kept_i, kept_r
        ph = min(max(ph, 0.0), Mi)
        a = a_scale * Mi
        kept = keep_at(zc, a, ph, Mi)
        zc += gam
        if kept:
            rate = a + ph
            kept_i[nk] = i
            kept_r[nk] = rate
            nk += 1
            if kind == TG or kind == GAUSS:
                c = 1.0 / rate
                for j in range(d):
                    tmp[j] += c * (theta[j] - rows[i, j])
            elif kind == RLR:
                add_row(rows, i, beta * (nu + 1.0) * r / (nu + r * r) / rate, g)
            else:
                for j in range(d):
                    g[j] += tmp[j] / rate
    if kind == TG or kind == GAUSS:
        for j in range(d):
            g[j] -= beta * w[j] * tmp[j]
    return B, nk, buf, kept_i, kept_r


@njit(cache=True)
def ratio_and_grad_at(
    t: TallData, rows, theta_p, a_scale: float, kept_i, kept_r, nk: int, g_p, tmp, err
) -> float:
    """With the same multiset: ``g(theta')`` into ``g_p`` and the Poisson log-ratio (nk evaluations;
    rows prefetched ahead, logs through a running product)."""
    d = theta_p.shape[0]
    g_p[:] = 0.0
    log_prior_grad(t, theta_p, g_p)
    kind = t.kind
    X = t.X
    pk = packed(kind)
    y = t.y
    w = t.w
    beta = t.beta
    nu = t.nu
    ops = t.ops
    q = X.shape[1]
    crlr = -beta * 0.5 * (nu + 1.0)
    s = 0.0
    p = 1.0
    npf = 0
    tmp[:] = 0.0
    prefetch_first_candidates(rows, X, pk, kept_i, nk)
    for k in range(nk):
        if k + PREFETCH_AHEAD < nk:
            ia = kept_i[k + PREFETCH_AHEAD]  # kept rows, read in pass 1: into L1
            prefetch_row(rows, ia, False)
            if not pk:
                prefetch_row(X, ia, False)
        i = kept_i[k]
        r = 0.0
        if kind == TG or kind == GAUSS:
            ll = one_quadratic(rows, w, beta, i, theta_p)
        elif kind == RLR:
            r = one_dot(rows, rows[i, q + ROW_Y], i, theta_p)
            ll = crlr * math.log1p(r * r / nu)
        else:
            tmp[:] = 0.0
            ll = ll_grad_one(kind, X, y, w, beta, nu, i, theta_p, 1.0, tmp, ops)
        ph = ll + rows[i, q + ROW_SHIFT]
        Mi = rows[i, q + ROW_A]
        if not bound_ok(ph, Mi):
            err[0] = ERR_PHI_BOUND
            err[1] = i
            return 0.0
        ph = min(max(ph, 0.0), Mi)
        rate = a_scale * Mi + ph
        s, p, npf = log_accumulate(s, p, npf, rate / kept_r[k])
        if kind == TG or kind == GAUSS:
            c = 1.0 / rate
            for j in range(d):
                tmp[j] += c * (theta_p[j] - rows[i, j])
        elif kind == RLR:
            add_row(rows, i, beta * (nu + 1.0) * r / (nu + r * r) / rate, g_p)
        else:
            for j in range(d):
                g_p[j] += tmp[j] / rate
    if kind == TG or kind == GAUSS:
        for j in range(d):
            g_p[j] -= beta * w[j] * tmp[j]
    return log_flush(s, p)


# Same explicit state as PoissonMH: ``(theta, lp, err, buf, kept_i, kept_r)``.
poisson_grad_init = poisson_mh_init


@njit(cache=True)
def poisson_grad_step(
    t: TallData,
    theta,
    lp,
    err,
    buf,
    kept_i,
    kept_r,
    rows,
    lam: float,
    L: float,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    theta_p,
    g,
    g_p,
    tmp,
):
    """One Poisson-MALA / Poisson-Barker transition in place.

    Returns ``(accepted, B, datum_evals, nk, log_r, buf, kept_i, kept_r)``; after the call
    ``kept_i[:nk]`` is the count multiset, ``g``/``g_p`` the surrogate gradients, ``theta_p`` the
    proposal (used by verify's per-draw detailed-balance identity)."""
    a_scale = lam / L
    B, nk, buf, kept_i, kept_r = counts_and_grad(
        t, theta, a_scale, rows, lam + L, rng, buf, kept_i, kept_r, g, tmp, err
    )
    if err[0] != 0:
        return False, B, B, nk, np.nan, buf, kept_i, kept_r
    propose(prop, theta, g, sigma, h, K, rng, theta_p)
    lp_p = log_prior(t, theta_p)
    if lp_p == -np.inf:
        return False, B, B, nk, -np.inf, buf, kept_i, kept_r
    log_r = ratio_and_grad_at(t, rows, theta_p, a_scale, kept_i, kept_r, nk, g_p, tmp, err)
    if err[0] != 0:
        return False, B, B + nk, nk, np.nan, buf, kept_i, kept_r
    log_r += lp_p - lp[0] + log_q_ratio(prop, theta, theta_p, g, g_p, sigma, h, K)
    if np.log(rng.random()) < log_r:
        theta[:] = theta_p
        lp[0] = lp_p
        return True, B, B + nk, nk, log_r, buf, kept_i, kept_r
    return False, B, B + nk, nk, log_r, buf, kept_i, kept_r


@njit(cache=True)
def poisson_grad_sample(
    t: TallData,
    theta,
    lp,
    err,
    buf,
    kept_i,
    kept_r,
    n_iter: int,
    rows,
    lam: float,
    L: float,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    dense: bool,
    rng,
    thin: int,
):
    """Chain loop; returns ``(samples, accepted, n_evals=B, datum_evals)``; stops on a bound error."""
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    dev = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    g = np.zeros(d)
    g_p = np.zeros(d)
    tmp = np.zeros(d)
    for it in range(n_iter):
        if err[0] == 0:
            a, B, de, _, _, buf, kept_i, kept_r = poisson_grad_step(
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
            acc[it] = a
            nev[it] = B
            dev[it] = de
            if dense:  # counts="dense": the authors' O(N) bookkeeping, timed; the chain is unchanged
                dev[it] += dense_recount(t, theta, buf, B, err)
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, dev
