"""TunaMH's direct differences against a full-batch twin written the same way (docs/performance.md §6.6).

TunaMH (Yuan & Wang 2024 Alg. 6) computes each candidate's U_i(theta') - U_i(theta) directly: the
factorised difference of squares on the truncated Gaussian (:func:`samplers.hotloop.quadratic_diff`,
2 flops a coordinate) and one ``log1p`` on robust regression (:func:`samplers.hotloop.pair_z` on theta',
theta - theta').
The efficiency target compares an iteration with the full-batch twin's (docs/performance.md §4):
the authors' twin recomputes log pi at theta and theta' (two sums), the cached twin evaluates one sum at
theta'. A full-batch MH needs only the difference too, so a twin written like TunaMH's candidates sums
``U_i(theta') - U_i(theta)`` over the data with the same per-datum arithmetic (:func:`sum_diff`). The
twins get any arithmetic the kernels get (§7.8), so that twin is the like-for-like one for direct
differences; this script times the three per-datum loops and TunaMH's chain in alternated rounds on the
paper problems (N = 1e5) and prints TunaMH's efficiency speed-up / (N / E[B]) against each.

    .venv/bin/python tools/difference_twin.py [rounds]     # default 5; docs/performance.md §6.6
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from numba import njit

import samplers  # noqa: F401  (sets NUMBA_CACHE_DIR before numba is imported)
from samplers.targets.tall import FULL_DATA_FASTMATH, RLR, loglik_sum


@njit(cache=True, fastmath=FULL_DATA_FASTMATH)
def sum_diff(kind: int, X, y, w, beta: float, nu: float, theta, theta_p) -> float:
    """``sum_i [ll_i(theta') - ll_i(theta)]`` with TunaMH's per-candidate arithmetic: TG the factorised
    difference of squares, RLR one log1p of ``(nu + r^2) / (nu + r'^2)``."""
    d = theta.shape[0]
    v = np.empty(d)
    sp = np.empty(d)
    for j in range(d):
        v[j] = (1.0 if kind == RLR else w[j]) * (theta[j] - theta_p[j])
        sp[j] = theta[j] + theta_p[j]
    s = 0.0
    if kind == RLR:
        c = -beta * 0.5 * (nu + 1.0)
        for i in range(X.shape[0]):
            r1 = y[i]
            e = 0.0
            for j in range(d):
                r1 -= theta_p[j] * X[i, j]
                e += v[j] * X[i, j]
            s -= c * math.log1p(e * (e - 2.0 * r1) / (nu + r1 * r1))
        return s
    for i in range(X.shape[0]):
        q = 0.0
        for j in range(d):
            q += v[j] * (sp[j] - 2.0 * X[i, j])
        s += q
    return 0.5 * beta * s


@njit(cache=True)
def _reps_sum(t, theta, reps: int) -> float:
    s = 0.0
    for _ in range(reps):
        s += loglik_sum(t, theta)
    return s


@njit(cache=True)
def _reps_diff(t, theta, theta_p, reps: int) -> float:
    s = 0.0
    for _ in range(reps):
        s += sum_diff(t.kind, t.X, t.y, t.w, t.beta, t.nu, theta, theta_p)
    return s


def measure(target: str, rounds: int = 5) -> dict:
    """Per-datum ns of the cached (one sum), authors' (two sums) and difference loops, TunaMH's µs per
    iteration and E[B] at the paper step; min over ``rounds`` alternated rounds."""
    from bench.perf import _paper_hyper
    from bench.perf_compare import timed_run
    from samplers import registry

    prob = registry.build_problem(target, 0)
    t = prob.model
    N = t.X.shape[0]
    hyp = _paper_hyper("tuna_mh", target, prob, True)
    theta = registry.run("tuna_mh", prob, 2000, 0, **hyp).extra["final_state"]
    theta_p = theta + hyp["step"] * np.random.default_rng(1).standard_normal(theta.shape[0])
    exact = loglik_sum(t, theta_p) - loglik_sum(t, theta)
    got = sum_diff(t.kind, t.X, t.y, t.w, t.beta, t.nu, theta, theta_p)
    assert abs(got - exact) <= 1e-8 * max(1.0, abs(exact)), (got, exact)
    reps = max(1, int(2e6 // N))
    n_iter = 40_000
    registry.run("tuna_mh", prob, 2, 0, **hyp)
    _reps_sum(t, theta_p, 1)  # compile / load before the timed rounds
    _reps_diff(t, theta, theta_p, 1)
    best = {"sum": math.inf, "diff": math.inf, "tuna": math.inf}
    eb = math.nan
    for _ in range(rounds):
        t0 = time.process_time()
        _reps_sum(t, theta_p, reps)
        best["sum"] = min(best["sum"], (time.process_time() - t0) / reps / N)
        t0 = time.process_time()
        _reps_diff(t, theta, theta_p, reps)
        best["diff"] = min(best["diff"], (time.process_time() - t0) / reps / N)
        res, cpu = timed_run("tuna_mh", prob, n_iter, 1, 100, **hyp)
        best["tuna"] = min(best["tuna"], cpu / n_iter)
        eb = res.mean_batch
    cand = best["tuna"] / eb  # seconds per candidate, fixed part included
    return {
        "target": target,
        "N": N,
        "E[B]": eb,
        "tuna_us_per_iter": best["tuna"] * 1e6,
        "datum_ns_cached": best["sum"] * 1e9,
        "datum_ns_authors": 2 * best["sum"] * 1e9,
        "datum_ns_difference": best["diff"] * 1e9,
        "eff_vs_cached": best["sum"] / cand,
        "eff_vs_authors": 2 * best["sum"] / cand,
        "eff_vs_difference": best["diff"] / cand,
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    rounds = int(argv[0]) if argv else 5
    for target in ("truncated_gaussian", "robust_regression"):
        r = measure(target, rounds)
        print(
            f"{target} N={r['N']}: TunaMH {r['tuna_us_per_iter']:.2f} us/iter (E[B] {r['E[B]']:.1f}); "
            f"per datum cached {r['datum_ns_cached']:.2f} ns, authors' 2 x that, "
            f"difference {r['datum_ns_difference']:.2f} ns; TunaMH efficiency vs cached "
            f"{r['eff_vs_cached']:.2f}, authors' {r['eff_vs_authors']:.2f}, "
            f"difference {r['eff_vs_difference']:.2f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
