"""TunaMH (Zhang, Cooper & De Sa 2020; Yuan & Wang 2024 Alg. 6, minibatch by Alg. 9): ``tuna_mh``.

Target ``pi ∝ prior(theta) exp(-sum_i U_i)`` with ``U_i = -ll_i`` and
``|U_i(theta') - U_i(theta)| <= c_i M(theta, theta')``, ``M = ||theta' - theta||_2``, ``C = sum c_i``.
Per step: theta' ~ q (random walk); ``lam = chi C^2 M^2``;
``phi_i(theta, theta') = (U_i(theta') - U_i(theta))/2 + c_i M/2 in [0, c_i M]``;
``s_i ~ Poi(lam c_i / C + phi_i)`` by thinning (alias on ``c_i / C``, ``B ~ Poi(lam + C M)``, keep with
probability ``(lam c_i + C phi_i) / (lam c_i + C c_i M)``);
``log r = log prior ratio + sum_{kept} log((lam c_i/C + c_i M - phi_i) / (lam c_i/C + phi_i)) + log q-ratio``
(``phi_i(theta', theta) = c_i M - phi_i(theta, theta')``, so one U pair per candidate suffices).

``n_evals`` = B; per-datum evaluations (first extra trace) = 2B (U_i at theta and theta').
:func:`tuna_log_ratio` is shared with Tuna-SGLD; its work is :func:`tuna_ratio_core`, compiled without
reference counting (:data:`samplers.hotloop.NO_REFCOUNT`; docs/performance.md §7.5).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64

from samplers.hotloop import (
    NO_REFCOUNT,
    ll_pair,
    log1pexp_diff,
    log_accumulate,
    log_flush,
    packed,
    pair_z,
    prefetch_row,
    quadratic_diff,
)
from samplers.kernels.poisson_mh import ERR_TUNA_BOUND
from samplers.poisson_minibatch import (
    RESOLVE_AHEAD,
    ROW_A,
    ROW_PROB,
    ROW_Y,
    SLOT_AHEAD,
    draw_count,
    keep_at,
    pipeline_counters,
    prime_candidates,
    resolve_slot,
    stage_at,
)
from samplers.proposals import log_q_ratio, propose
from samplers.streams import new_stream
from samplers.targets.tall import GAUSS, LOGISTIC, RLR, TG, TallData, log_prior


@njit(cache=True)
def tuna_log_ratio(t: TallData, theta, theta_p, chi: float, C: float, rows, rng, buf, kept_i, err):
    """TunaMH Poisson estimator of the log target-likelihood ratio (Alg. 6 steps 4-7, Alg. 9).

    ``rows``: the candidate rows with c_i and the alias table on c
    (:func:`samplers.poisson_minibatch.table_rows`).

    Returns ``(log_ratio, B, nk, buf, kept_i)``; ``kept_i[:nk]`` is the count multiset (``buf`` is
    scratch: its head holds the kept ratios on return; so is the tail of ``kept_i``, 2d float64 past B).
    The work is :func:`tuna_ratio_core`'s; this wrapper regrows the buffers when the drawn B needs it
    (the protocol :func:`tuna_mh_sample` writes out)."""
    s, B, nk = tuna_ratio_core(
        t.kind, t.X, t.y, t.w, t.beta, t.nu, theta, theta_p, chi, C, rows, rng, buf, kept_i, err, -1, t.ops
    )
    if nk < 0:
        buf, kept_i = grow_buffers(buf, kept_i, B, theta.shape[0])
        s, B, nk = tuna_ratio_core(
            t.kind, t.X, t.y, t.w, t.beta, t.nu, theta, theta_p, chi, C, rows, rng, buf, kept_i, err, B, t.ops
        )
    return s, B, nk, buf, kept_i


@njit(cache=True)
def grow_buffers(buf, kept_i, B: int, d: int):
    """``(buf, kept_i)`` regrown (doubling) to hold a draw of B candidates (:func:`tuna_ratio_core`)."""
    if B > buf.shape[0]:
        buf = np.empty(2 * B, dtype=np.int64)
    if B + 2 * d > kept_i.shape[0]:
        kept_i = np.empty(2 * (B + 2 * d), dtype=np.int64)
    return buf, kept_i


@njit(cache=True, **NO_REFCOUNT)
def tuna_ratio_core(
    kind: int,
    X,
    y,
    w,
    beta: float,
    nu: float,
    theta,
    theta_p,
    chi: float,
    C: float,
    rows,
    rng,
    buf,
    kept_i,
    err,
    B_in: int,
    ops=None,
):
    """:func:`tuna_log_ratio` on the target's arrays, compiled without reference counting
    (:data:`samplers.hotloop.NO_REFCOUNT`: scalars out, nothing allocated). Returns ``(log_ratio, B, nk)``.

    ``B_in < 0``: draw B ~ Poisson(lam + C M). If ``buf`` cannot hold B candidates or ``kept_i`` B + 2d
    entries, returns ``(0, B, -1)`` before drawing anything else; the caller regrows them
    (:func:`grow_buffers`) and calls again with ``B_in = B``, which continues the same draw (the same
    stream, candidates and chain as a draw that fitted). TG / GAUSS candidates get U_i(theta') - U_i(theta)
    from :func:`samplers.hotloop.quadratic_diff` (the difference of squares factorised: 2 flops a
    coordinate instead of 6)."""
    d = theta.shape[0]
    s2 = 0.0
    for j in range(d):
        dj = theta_p[j] - theta[j]
        s2 += dj * dj
    Md = math.sqrt(s2)
    if Md == 0.0:
        return 0.0, 0, 0
    lam = chi * C * C * Md * Md
    B = draw_count(lam + C * Md, rng) if B_in < 0 else B_in
    if B > buf.shape[0] or B + 2 * d > kept_i.shape[0]:
        return 0.0, B, -1
    # hot loop on the arrays (no NamedTuple per call), U(theta') - U(theta) from one pass over the row,
    # candidates from the one-pass pipeline (rows prefetched ahead), logs through a running product
    cy = X.shape[1] + ROW_Y
    crlr = -beta * 0.5 * (nu + 1.0)  # rlr_pair's constant
    pk = packed(kind)
    n = rows.shape[0]
    cp = X.shape[1] + ROW_PROB
    st = new_stream(rng)
    fb = buf.view(np.float64)
    prime_candidates(rows, cp, X, pk, B, st, buf, fb)
    zs, zc, gam = pipeline_counters(st, B)
    # factors of quadratic_diff (TG / GAUSS: v = w (theta - theta'), sp = theta + theta') and of
    # pair_z (RLR, logistic: v = theta - theta'), as float64 in the tail of kept_i,
    # past the B entries the loop may fill (no allocation per iteration)
    vs = kept_i[kept_i.shape[0] - 2 * d :].view(np.float64)
    v = vs[:d]
    sp = vs[d:]
    quad = kind == TG or kind == GAUSS
    for j in range(d):
        v[j] = (w[j] if quad else 1.0) * (theta[j] - theta_p[j])
        sp[j] = theta[j] + theta_p[j]
    cc = X.shape[1] + ROW_A
    lam_c = lam / C
    nk = 0
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
        ci = rows[i, cc]
        cm = ci * Md
        # du = U(theta') - U(theta) = ll(theta) - ll(theta')
        if quad:  # the difference of squares, factorised (docs/performance.md §7.6)
            du = -0.5 * beta * quadratic_diff(rows, v, sp, i)
        elif kind == RLR:  # crlr log[(nu + r0^2) / (nu + r1^2)], one log1p; r0 - r1 = -e (§7.6)
            z1, e = pair_z(rows, i, theta_p, v)  # (x^T theta', x^T (theta - theta') = r1 - r0)
            r1 = rows[i, cy] - z1
            du = crlr * math.log1p(e * (e - 2.0 * r1) / (nu + r1 * r1))
        elif kind == LOGISTIC:  # -beta [f(sg z0) - f(sg z1)], f(z) = log(1 + e^z), with one log (§7.6)
            z1, e = pair_z(X, i, theta_p, v)  # (x^T theta', x^T (theta - theta'))
            sg = -1.0 if y[i] > 0.5 else 1.0
            du = -beta * log1pexp_diff(sg * z1, sg * e)
        else:
            l0, l1 = ll_pair(kind, X, y, w, beta, nu, i, theta, theta_p, ops)
            du = l0 - l1
        if not (abs(du) <= cm * (1.0 + 1e-9) + 1e-12):  # a NaN du (or c_i) is a bound error too
            err[0] = ERR_TUNA_BOUND
            err[1] = i
            return np.nan, B, nk
        ph = min(max(0.5 * du + 0.5 * cm, 0.0), cm)
        a = lam_c * ci
        # about half the candidates are kept (a ~ 0 at the paper's chi), so a branch on the coin would
        # be mispredicted half the time (~9 ns a candidate: docs/performance.md §7.6); instead each
        # ratio is written, without a branch, to the consumed head of the candidate buffer, and nk
        # advances only if kept
        k = keep_at(zc, a, ph, cm)
        zc += gam
        fb[nk] = (a + cm - ph) / (a + ph + (0.0 if k else 1.0))
        kept_i[nk] = i
        nk += 1 if k else 0
    s = 0.0
    p = 1.0
    npf = 0
    for q in range(nk):  # the kept ratios in draw order: the same sum as a fold inside the loop
        s, p, npf = log_accumulate(s, p, npf, fb[q])
    return log_flush(s, p), B, nk


@njit(cache=True)
def tuna_mh_init(t: TallData, theta0: np.ndarray):
    """State: ``(theta, lp, err, buf, kept_i)`` with ``lp[0] = log prior(theta)``."""
    theta = theta0.copy()
    lp = np.empty(1)
    lp[0] = log_prior(t, theta)
    return (
        theta,
        lp,
        np.zeros(2, dtype=np.int64),
        np.empty(256, dtype=np.int64),
        np.empty(256, dtype=np.int64),
    )


@njit(cache=True)
def tuna_mh_step(
    t: TallData,
    theta,
    lp,
    err,
    buf,
    kept_i,
    rows,
    chi: float,
    C: float,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    theta_p,
    g0,
):
    """One TunaMH transition in place (verify's kernel-vs-matrix driver runs it; :func:`tuna_mh_sample`
    writes the same body out in its loop).

    Returns ``(accepted, B, datum_evals, nk, log_r, buf, kept_i)``."""
    propose(prop, theta, g0, sigma, h, K, rng, theta_p)
    lp_p = log_prior(t, theta_p)
    if lp_p == -np.inf:
        return False, 0, 0, 0, -np.inf, buf, kept_i
    s, B, nk, buf, kept_i = tuna_log_ratio(t, theta, theta_p, chi, C, rows, rng, buf, kept_i, err)
    if err[0] != 0:
        return False, B, 2 * B, nk, np.nan, buf, kept_i
    log_r = s + lp_p - lp[0] + log_q_ratio(prop, theta, theta_p, g0, g0, sigma, h, K)
    if np.log(rng.random()) < log_r:
        theta[:] = theta_p
        lp[0] = lp_p
        return True, B, 2 * B, nk, log_r, buf, kept_i
    return False, B, 2 * B, nk, log_r, buf, kept_i


@njit(cache=True)
def tuna_mh_sample(
    t: TallData,
    theta,
    lp,
    err,
    buf,
    kept_i,
    n_iter: int,
    rows,
    chi: float,
    C: float,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    thin: int,
):
    """Chain loop; returns ``(samples, accepted, n_evals=B, datum_evals)``; stops on a bound error.

    The body is :func:`tuna_mh_step` written out, not called: binding the step's 16 arguments (Numba
    IR inlining, or a call) cost an NRT incref / decref pair per array argument per iteration, ~0.12 µs
    (TG fixed part 0.78 -> 0.66 µs, RR iteration 1.42 -> 1.30 µs: docs/performance.md §7.6).
    ``tests/test_exact_mh.py::test_tuna_mh_sample_equals_its_step`` checks that the two give
    the same chains bit for bit, so verify's checks of the step hold for this loop."""
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    dev = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    g0 = np.zeros(d)
    kind, X, y, w, beta, nu, ops = t.kind, t.X, t.y, t.w, t.beta, t.nu, t.ops
    for it in range(n_iter):
        if err[0] == 0:  # = tuna_mh_step
            propose(prop, theta, g0, sigma, h, K, rng, theta_p)
            lp_p = log_prior(t, theta_p)
            if lp_p != -np.inf:
                s, B, nk = tuna_ratio_core(
                    kind, X, y, w, beta, nu, theta, theta_p, chi, C, rows, rng, buf, kept_i, err, -1, ops
                )
                if nk < 0:  # = tuna_log_ratio: the buffers regrown for this draw's B
                    buf, kept_i = grow_buffers(buf, kept_i, B, d)
                    s, B, nk = tuna_ratio_core(
                        kind, X, y, w, beta, nu, theta, theta_p, chi, C, rows, rng, buf, kept_i, err, B, ops
                    )
                nev[it] = B
                dev[it] = 2 * B
                if err[0] == 0:
                    log_r = s + lp_p - lp[0] + log_q_ratio(prop, theta, theta_p, g0, g0, sigma, h, K)
                    if np.log(rng.random()) < log_r:
                        theta[:] = theta_p
                        lp[0] = lp_p
                        acc[it] = True
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, dev
