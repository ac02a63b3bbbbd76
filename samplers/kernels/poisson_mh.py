"""PoissonMH (Zhang & De Sa 2019; Yuan & Wang 2024 Alg. 5, minibatch by Alg. 8): ``poisson_mh``.

Target ``pi(theta) ∝ prior(theta) exp(sum_i phi_i(theta))`` with ``0 <= phi_i <= M_i``, ``L = sum M_i``.
Per step: theta' ~ q (random walk, Gaussian or lattice); counts ``s_i ~ Poi(lam M_i / L + phi_i(theta))``
drawn at the *current* theta by Poisson thinning (shared sampler :mod:`samplers.poisson_minibatch`,
alias table on ``p_i = M_i / L`` built once, ``B ~ Poi(lam + L)`` candidates);
``log r = log prior(theta') - log prior(theta)
        + sum_{kept draws} log((lam M_i/L + phi_i(theta')) / (lam M_i/L + phi_i(theta))) + log q-ratio``.
Kept draws form a multiset (duplicates = multiplicity s_i), so no length-N count vector is ever touched:
O(B) work, no allocation in steady state.

Cost bookkeeping: ``n_evals`` = B (the candidates, the paper's "batch size"); the per-datum evaluation
count is the first extra trace (``datum_evals``): 2B, since each candidate row is read once and phi is
evaluated at theta and theta' back to back (:func:`poisson_counts_ratio`; theta' is proposed first, as
in Alg. 5, so the fused pass is possible).

The bounds are checked for every datum at the initial state, once at setup (:func:`bound_violations`,
O(N p), outside the timed loop), and on every evaluated factor in the loop: phi outside ``[0, M_i]``
(beyond a 1e-9 relative tolerance) sets ``err = [1, i]`` and stops the chain; the Python wrapper raises
ValueError.
The helpers :func:`poisson_counts` / :func:`poisson_ratio_at` are shared with Poisson-MALA/Barker.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64

from samplers.hotloop import (
    ll_one,
    ll_pair,
    log_accumulate,
    log_flush,
    one_dot,
    one_quadratic,
    packed,
    pair_dot,
    pair_quadratic,
    prefetch_row,
)
from samplers.poisson_minibatch import (
    RESOLVE_AHEAD,
    ROW_A,
    ROW_PROB,
    ROW_SHIFT,
    ROW_Y,
    SLOT_AHEAD,
    draw_from_rows,
    keep,
    keep_at,
    open_candidates,
    pipeline_counters,
    resolve_slot,
    stage_at,
)
from samplers.proposals import log_q_ratio, propose
from samplers.targets.tall import GAUSS, RLR, TG, TallData, log_prior, phi_i

ERR_NONE, ERR_PHI_BOUND, ERR_TUNA_BOUND, ERR_BAD_RATE = 0, 1, 2, 3
ERR_SGLD_GRAD = 10  # Tuna-SGLD (samplers.kernels.tuna_sgld): a NaN / inf minibatch gradient
ERR_MESSAGES = {
    ERR_PHI_BOUND: "PoissonMH bound violated: phi_i(theta) outside [0, M_i] for datum {i}",
    ERR_TUNA_BOUND: "TunaMH bound violated: |U_i(theta') - U_i(theta)| > c_i M(theta, theta') for datum {i}",
    ERR_BAD_RATE: "non-positive Poisson rate for datum {i} (lambda too small or M_i = 0)",
    ERR_SGLD_GRAD: "Tuna-SGLD: the minibatch gradient (drift) is NaN or inf in coordinate {i} "
    "(data with NaN/inf or overflowing values, or a step / state where the gradient overflows)",
}


@njit(cache=True)
def bound_ok(phi: float, Mi: float) -> bool:
    """``0 <= phi <= M_i`` up to a relative tolerance of 1e-9 (rounding at the box corners)."""
    tol = 1e-9 * Mi + 1e-12
    return phi >= -tol and phi <= Mi + tol


@njit(cache=True)
def bound_violations(t: TallData, theta: np.ndarray):
    """``(first, count)``: the first datum whose ``phi_i(theta)`` lies outside ``[0, M_i]`` (:func:`bound_ok`)
    and how many do (``(-1, 0)`` if none). O(N p): the setup check of the PoissonMH family at the initial
    state (a bound is a claim about every datum; the loop sees only the data it draws, and a datum with a
    tiny M_i is almost never drawn)."""
    first = -1
    count = 0
    for i in range(t.X.shape[0]):
        if not bound_ok(phi_i(t, i, theta), t.M[i]):
            if first < 0:
                first = i
            count += 1
    return first, count


COUNTS_MODES = ("sparse", "dense")


def counts_flag(counts: str) -> bool:
    """``counts="sparse"`` (the kernels as published: the draws in a length-B buffer, O(B) an iteration)
    or ``"dense"``: plus Yuan & Wang's (2024) bookkeeping (:func:`dense_recount`), a timing variant of
    the minibatch side as ``energy="recompute"`` is of the full-batch side. True for dense."""
    if counts not in COUNTS_MODES:
        raise ValueError(f"counts must be one of {COUNTS_MODES}, got {counts!r}")
    return counts == "dense"


@njit(cache=True)
def dense_recount(t: TallData, theta: np.ndarray, buf: np.ndarray, B: int, err: np.ndarray) -> int:
    """The authors' Poisson minibatch bookkeeping after a step (Yuan & Wang 2024 code): a
    length-N count vector allocated, filled from the step's draws ``buf[:B]`` (its thinned-out
    candidates too: >= 99 % are kept on the paper's problems), scanned over all N for the minibatch S
    (collected into a fresh index array, as Julia's ``findall`` does), and phi_i(theta) recomputed on S,
    each checked against [0, M_i] as a kernel checks its candidates (``err`` set on a violation; the
    check also keeps the compiler from dropping the work), by the kernels' array-argument one-point
    forms (no per-call reference counting of ``t``). Scan and recomputation are separate passes (a
    recomputation inside the scan's branch costs ~1.7x more on the TG: every mispredicted branch
    stalls the row fetches). Reads the chain's state only, so the chain is the same as with
    ``counts="sparse"``. Returns |S|."""
    kind, X, y, w, beta, nu, shift, M, ops = t.kind, t.X, t.y, t.w, t.beta, t.nu, t.shift, t.M, t.ops
    n = X.shape[0]
    s = np.zeros(n, dtype=np.int64)
    for b in range(B):
        s[buf[b]] += 1
    S = np.empty(B + 1, dtype=np.int64)  # nS <= B; the branch-free scan writes one past it
    nS = 0
    for i in range(n):  # branch-free: S[nS] is overwritten until a count is positive
        S[nS] = i
        nS += s[i] > 0
    crlr = -beta * 0.5 * (nu + 1.0)
    for k in range(nS):
        i = S[k]
        if kind == TG or kind == GAUSS:  # as the kernels: the one-point forms LLVM inlines
            ll = one_quadratic(X, w, beta, i, theta)
        elif kind == RLR:
            r = one_dot(X, y[i], i, theta)
            ll = crlr * math.log1p(r * r / nu)
        else:
            ll = ll_one(kind, X, y, w, beta, nu, i, theta, ops)
        if not bound_ok(ll + shift[i], M[i]) and err[0] == 0:
            err[0] = ERR_PHI_BOUND
            err[1] = i
    return nS


@njit(cache=True)
def grow(kept_i: np.ndarray, kept_v: np.ndarray, n: int):
    """Scratch arrays of length >= n (regrown by doubling only when needed)."""
    if n > kept_i.shape[0]:
        return np.empty(2 * n, dtype=np.int64), np.empty(2 * n)
    return kept_i, kept_v


@njit(cache=True)
def poisson_counts(t: TallData, theta, a_scale: float, rows, Lam: float, rng, buf, kept_i, kept_r, err):
    """Counts ``s_i ~ Poi(a_scale M_i + phi_i(theta))`` by thinning (Alg. 8), as a multiset.

    ``rows``: the candidate rows with the alias table on M (:func:`samplers.poisson_minibatch.table_rows`).
    Returns ``(B, nk, buf, kept_i, kept_r)``: B candidates, ``kept_i[:nk]`` kept indices with their
    rates ``kept_r[:nk] = a_scale M_i + phi_i(theta)``. ``a_scale = lam / L``."""
    B, buf, st = draw_from_rows(rows, t.X.shape[1], Lam, rng, buf)
    kept_i, kept_r = grow(kept_i, kept_r, B)
    nk = 0
    for b in range(B):
        i = buf[b]
        ph = phi_i(t, i, theta)
        Mi = t.M[i]
        if not bound_ok(ph, Mi):
            err[0] = ERR_PHI_BOUND
            err[1] = i
            return B, nk, buf, kept_i, kept_r
        ph = min(max(ph, 0.0), Mi)
        a = a_scale * Mi
        if keep(st, B, b, a, ph, Mi):
            kept_i[nk] = i
            kept_r[nk] = a + ph
            nk += 1
    return B, nk, buf, kept_i, kept_r


@njit(cache=True)
def poisson_ratio_at(t: TallData, theta_p, a_scale: float, kept_i, kept_r, nk: int, err) -> float:
    """``sum_k log(rate_k(theta') / rate_k(theta))`` over the kept multiset (nk evaluations)."""
    s = 0.0
    for k in range(nk):
        i = kept_i[k]
        ph = phi_i(t, i, theta_p)
        Mi = t.M[i]
        if not bound_ok(ph, Mi):
            err[0] = ERR_PHI_BOUND
            err[1] = i
            return 0.0
        ph = min(max(ph, 0.0), Mi)
        s += np.log((a_scale * Mi + ph) / kept_r[k])
    return s


@njit(cache=True, inline="always")
def candidate_term(zc, a_scale: float, Mi: float, ph: float, php: float):
    """A candidate of the fused PoissonMH pass given ``phi_i`` at theta (``ph``) and theta' (``php``) and
    the counter ``zc`` of its thinning coin (:func:`samplers.poisson_minibatch.pipeline_counters`):
    ``(ok, kept, ratio)``: ``ok`` False on a bound violation; else both clamped to ``[0, M_i]``, the
    thinning coin at theta, and if kept the ratio term ``(a + phi_i(theta')) / (a + phi_i(theta))`` with
    ``a = a_scale M_i``. Inlined (no call in the hot loop); shared with ``tools/expanded_form.py``."""
    if not (bound_ok(ph, Mi) and bound_ok(php, Mi)):
        return False, False, 1.0
    ph = min(max(ph, 0.0), Mi)
    php = min(max(php, 0.0), Mi)
    a = a_scale * Mi
    if keep_at(zc, a, ph, Mi):
        return True, True, (a + php) / (a + ph)
    return True, False, 1.0


@njit(cache=True)
def poisson_counts_ratio(t: TallData, theta, theta_p, a_scale: float, rows, Lam: float, rng, buf, err):
    """Fused Alg. 8 + the PoissonMH log-ratio: each candidate row is read once and phi is evaluated
    at theta (thinning) and theta' (ratio term if kept) in one pass (two accumulators; TG / RLR read
    the candidate row ``rows[i]`` = x_i, M_i, shift_i, the alias entry, y_i: one random row per
    candidate, usually the one its alias slot already touched; candidates come from the one-pass
    pipeline of :func:`samplers.poisson_minibatch.open_candidates`, which prefetches each row
    ``SLOT_AHEAD`` candidates ahead). The kept log-ratios are summed through a
    running product (:func:`samplers.hotloop.log_accumulate`, rounding-level equal to the sum of logs).
    Returns ``(log_ratio, B, nk, buf)``."""
    kind = t.kind
    X = t.X
    y = t.y
    w = t.w
    beta = t.beta
    nu = t.nu
    ops = t.ops
    cy = X.shape[1] + ROW_Y
    crlr = -beta * 0.5 * (nu + 1.0)  # rlr_pair's constant
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
        if kind == TG or kind == GAUSS:
            l0, l1 = pair_quadratic(rows, w, beta, i, theta, theta_p)
        elif kind == RLR:  # rlr_pair written out: LLVM does not inline it (a call per candidate)
            r0, r1 = pair_dot(rows, rows[i, cy], i, theta, theta_p)
            l0 = crlr * math.log1p(r0 * r0 / nu)
            l1 = crlr * math.log1p(r1 * r1 / nu)
        else:
            l0, l1 = ll_pair(kind, X, y, w, beta, nu, i, theta, theta_p, ops)
        sh = rows[i, cs]
        ok, kept, ratio = candidate_term(zc, a_scale, rows[i, cm], l0 + sh, l1 + sh)
        zc += gam
        if not ok:
            err[0] = ERR_PHI_BOUND
            err[1] = i
            return np.nan, B, nk, buf
        if kept:
            s, p, npf = log_accumulate(s, p, npf, ratio)
            nk += 1
    return log_flush(s, p), B, nk, buf


@njit(cache=True)
def poisson_mh_init(t: TallData, theta0: np.ndarray, Lam: float):
    """State: ``(theta, lp, err, buf, kept_i, kept_r)`` with ``lp[0] = log prior(theta)``."""
    theta = theta0.copy()
    lp = np.empty(1)
    lp[0] = log_prior(t, theta)
    err = np.zeros(2, dtype=np.int64)
    n0 = int(Lam + 10.0 * np.sqrt(Lam + 1.0) + 64.0)
    return theta, lp, err, np.empty(n0, dtype=np.int64), np.empty(n0, dtype=np.int64), np.empty(n0)


@njit(cache=True)
def poisson_mh_step(
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
    g0,
):
    """One PoissonMH transition in place.

    Returns ``(accepted, B, datum_evals, log_r, buf, kept_i, kept_r)`` (``log_r = -inf`` when theta'
    leaves the support; then no data are touched)."""
    propose(prop, theta, g0, sigma, h, K, rng, theta_p)
    lp_p = log_prior(t, theta_p)
    if lp_p == -np.inf:
        return False, 0, 0, -np.inf, buf, kept_i, kept_r
    s, B, nk, buf = poisson_counts_ratio(t, theta, theta_p, lam / L, rows, lam + L, rng, buf, err)
    if err[0] != 0:
        return False, B, 2 * B, np.nan, buf, kept_i, kept_r
    log_r = s + lp_p - lp[0] + log_q_ratio(prop, theta, theta_p, g0, g0, sigma, h, K)
    if np.log(rng.random()) < log_r:
        theta[:] = theta_p
        lp[0] = lp_p
        return True, B, 2 * B, log_r, buf, kept_i, kept_r
    return False, B, 2 * B, log_r, buf, kept_i, kept_r


@njit(cache=True)
def poisson_mh_sample(
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
    """Chain loop; returns ``(samples, accepted, n_evals=B, datum_evals)``. Stops on a bound error
    (remaining rows repeat the last state; the wrapper raises)."""
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    dev = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    g0 = np.zeros(d)
    for it in range(n_iter):
        if err[0] == 0:
            a, B, de, _, buf, kept_i, kept_r = poisson_mh_step(
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
            acc[it] = a
            nev[it] = B
            dev[it] = de
            if dense:  # counts="dense": the authors' O(N) bookkeeping, timed; the chain is unchanged
                dev[it] += dense_recount(t, theta, buf, B, err)
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, dev
