"""Does the expanded quadratic form lift the efficiency bound of TG PoissonMH? (docs/performance.md §7.8).

A PoissonMH candidate on the truncated Gaussian (Yuan & Wang 2024 §5.1) evaluates
``phi_i = ll_i + shift_i`` at theta and theta' with ``ll_i(theta) = -beta/2 sum_j w_j (theta_j - x_ij)^2``
(:func:`samplers.hotloop.pair_quadratic`: a subtract, a multiply and a fused multiply-add per coordinate
and point). Expanded, ``ll_i(theta) = beta x_i . (w theta) - beta/2 sum_j w_j theta_j^2 - beta/2 sum_j
w_j x_ij^2``: with the last, per-datum term folded into the row's shift (:func:`expanded_rows`) a candidate
costs two dot products (one fused multiply-add per coordinate and point). The same rewrite applies to the
full-batch twin's loop (:func:`sum_expanded`), so the question is whether it changes the ratio datum /
candidate, which bounds the efficiency speed-up / (N / E[B]) (docs/performance.md §3). This script
times the four loops in alternated rounds on the sweep problems of ``mcmc-bench perf`` (lambda = 5e-4 L^2,
E[B] ~ 5860) and prints both bounds.

    .venv/bin/python tools/expanded_form.py [N ...]     # default 1e4 1e5 1e6; docs/performance.md §7.8
"""

from __future__ import annotations

import sys
import time

import numpy as np
from numba import njit, uint64

import samplers  # noqa: F401  (sets NUMBA_CACHE_DIR before numba is imported)
from samplers.hotloop import (
    DOT_FASTMATH,
    log_accumulate,
    log_flush,
    pair_z,
    prefetch_row,
)
from samplers.kernels.poisson_mh import ERR_PHI_BOUND, candidate_term
from samplers.poisson_minibatch import (
    RESOLVE_AHEAD,
    ROW_A,
    ROW_PROB,
    ROW_SHIFT,
    SLOT_AHEAD,
    open_candidates,
    pipeline_counters,
    resolve_slot,
    stage_at,
)
from samplers.targets.tall import FULL_DATA_FASTMATH


def datum_constants(X: np.ndarray, w: np.ndarray, beta: float) -> np.ndarray:
    """The per-datum term of the expanded form, ``cst_i = -beta/2 sum_j w_j x_ij^2``."""
    return -0.5 * beta * (w * X**2).sum(axis=1)


def expanded_rows(rows: np.ndarray, p: int, cst: np.ndarray) -> np.ndarray:
    """Copy of the candidate rows of a p-column target with ``shift_i + cst_i`` in the shift column
    (``cst`` from :func:`datum_constants`)."""
    out = rows.copy()
    out[:, p + ROW_SHIFT] += cst
    return out


@njit(cache=True, fastmath=DOT_FASTMATH)
def _lin_coef(theta, w, beta: float, v):
    """``v = beta w theta`` (in place); returns ``-beta/2 sum_j w_j theta_j^2``."""
    c = 0.0
    for j in range(theta.shape[0]):
        v[j] = beta * w[j] * theta[j]
        c += w[j] * theta[j] * theta[j]
    return -0.5 * beta * c


@njit(cache=True)
def ratio_expanded(theta, theta_p, w, beta: float, a_scale: float, erows, Lam: float, rng, buf, err, v0, v1):
    """:func:`samplers.kernels.poisson_mh.poisson_counts_ratio` for TG with the expanded form on
    :func:`expanded_rows`: the same draws, coins and bound checks; log-ratio equal up to rounding."""
    p = theta.shape[0]
    n = erows.shape[0]
    cp = p + ROW_PROB
    B, buf, fb, st = open_candidates(erows, cp, erows, True, Lam, rng, buf)
    zs, zc, gam = pipeline_counters(st, B)
    c0 = _lin_coef(theta, w, beta, v0)
    c1 = _lin_coef(theta_p, w, beta, v1)
    cm = p + ROW_A
    cs = p + ROW_SHIFT
    s = 0.0
    pr = 1.0
    npf = 0
    nk = 0
    for b in range(B):  # the kernel's candidate pipeline (poisson_minibatch.open_candidates)
        if b + SLOT_AHEAD < B:
            prefetch_row(erows, stage_at(fb, zs, b + SLOT_AHEAD, n))
        zs += gam
        if b + RESOLVE_AHEAD < B:
            buf[b + RESOLVE_AHEAD] = resolve_slot(erows, cp, fb, b + RESOLVE_AHEAD)
        i = uint64(buf[b])
        l0, l1 = pair_z(erows, i, v0, v1)  # x_i . v0, x_i . v1
        sh = erows[i, cs]
        ok, kept, ratio = candidate_term(zc, a_scale, erows[i, cm], l0 + c0 + sh, l1 + c1 + sh)
        zc += gam
        if not ok:
            err[0] = ERR_PHI_BOUND
            err[1] = i
            return np.nan, B, nk, buf
        if kept:
            s, pr, npf = log_accumulate(s, pr, npf, ratio)
            nk += 1
    return log_flush(s, pr), B, nk, buf


@njit(cache=True, fastmath=FULL_DATA_FASTMATH)
def sum_expanded(X, cst, w, theta, beta: float, v) -> float:
    """Full-batch ``sum_i ll_i(theta)`` in the expanded form; ``cst_i = -beta/2 sum_j w_j x_ij^2``."""
    c = _lin_coef(theta, w, beta, v)
    s = 0.0
    for i in range(X.shape[0]):
        a = cst[i]
        for j in range(X.shape[1]):
            a += X[i, j] * v[j]
        s += a
    return s + c * X.shape[0]


@njit(cache=True)
def _reps_expanded(theta, theta_p, w, beta, a_scale, erows, Lam, rng, buf, err, v0, v1, reps):
    tot = 0
    for _ in range(reps):
        _, B, _, buf = ratio_expanded(theta, theta_p, w, beta, a_scale, erows, Lam, rng, buf, err, v0, v1)
        tot += B
    return tot


@njit(cache=True)
def _reps_sum_expanded(X, cst, w, theta, beta, v, reps):
    s = 0.0
    for _ in range(reps):
        s += sum_expanded(X, cst, w, theta, beta, v)
        theta[0] += 1e-300 * s  # data-dependent: the loop cannot be hoisted
    return s


def measure(N: int, rounds: int = 9, budget: float = 0.3) -> dict:
    """ns per candidate (direct / expanded form) and per full-batch datum (direct / expanded), medians of
    ``rounds`` alternated rounds (CPU time), and the two efficiency bounds datum / candidate."""
    from bench.perf import _problem
    from bench.perf_hotloop import _hl_full, _hl_fused
    from samplers.methods.exact_mh import poisson_setup

    t = _problem("truncated_gaussian", N).model
    lam, L, rows = poisson_setup(t, 5e-4)
    Lam = lam + L
    d = t.X.shape[1]
    cst = datum_constants(t.X, t.w, t.beta)
    erows = expanded_rows(rows, d, cst)
    theta = np.full(d, 0.01)
    theta_p = theta + 0.001
    buf = np.empty(int(2 * Lam) + 64, dtype=np.int64)
    err = np.zeros(2, dtype=np.int64)
    v0, v1 = np.empty(d), np.empty(d)
    reps = max(1, int(budget / (Lam * 40e-9)))
    freps = max(1, int(budget / (N * 8e-9)))
    loops = {
        "cand_direct": (
            _hl_fused,
            (t, theta, theta_p, lam / L, rows, Lam, np.random.default_rng(0), buf, err),
            reps,
        ),
        "cand_expanded": (
            _reps_expanded,
            (
                theta,
                theta_p,
                t.w,
                t.beta,
                lam / L,
                erows,
                Lam,
                np.random.default_rng(0),
                buf.copy(),
                err,
                v0,
                v1,
            ),
            reps,
        ),
        "datum_direct": (_hl_full, (t, theta.copy()), freps),
        "datum_expanded": (_reps_sum_expanded, (t.X, cst, t.w, theta.copy(), t.beta, v0.copy()), freps),
    }
    per = {k: Lam * r if k.startswith("cand") else N * r for k, (_, _, r) in loops.items()}
    times = {k: [] for k in loops}
    for fn, args, _ in loops.values():
        fn(*args, 1)  # compile / warm
    for _ in range(rounds):
        for k, (fn, args, r) in loops.items():
            t0 = time.process_time()
            fn(*args, r)
            times[k].append((time.process_time() - t0) / per[k] * 1e9)
    out = {"N": N, "mean_batch": Lam, **{k + "_ns": float(np.median(v)) for k, v in times.items()}}
    out["bound_direct"] = out["datum_direct_ns"] / out["cand_direct_ns"]
    out["bound_expanded"] = out["datum_expanded_ns"] / out["cand_expanded_ns"]
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    Ns = [int(float(x)) for x in argv] or [10_000, 100_000, 1_000_000]
    for N in Ns:
        r = measure(N)
        print(
            f"N={N:.0e} E[B]={r['mean_batch']:.0f}: candidate direct {r['cand_direct_ns']:.1f} / expanded "
            f"{r['cand_expanded_ns']:.1f} ns; full-batch datum direct {r['datum_direct_ns']:.2f} / expanded "
            f"{r['datum_expanded_ns']:.2f} ns; efficiency bound direct {r['bound_direct']:.2f}, "
            f"expanded {r['bound_expanded']:.2f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
