"""Layout-independent memory floor of a Poisson-minibatch candidate pass (docs/performance.md §6.2).

Any exact minibatch kernel must at least read each candidate's d feature doubles from a random row.
This script times exactly that (indices drawn beforehand: no alias table, no RNG, no arithmetic beyond
one add per 64-byte line, software prefetch at distance 8/16/32) for E[B] = 5.86% of N random rows
(the measured E[B] of PoissonMH on the Yuan & Wang 2024 §5.1 truncated Gaussian), on d-double rows and
on 24-double rows (our packed layout), beside a streaming pass of the truncated-Gaussian quadratic form
over all N rows (a stand-in for the full-batch twin; the real twin's per-datum time is ``hotloop``
``datum_ns`` of ``mcmc-bench perf``). ``twin_ns / gather_ns`` bounds the efficiency (speed-up / (N/E[B]))
any kernel with these reads can reach against a twin that costs ``twin_ns`` per datum.

    .venv/bin/python tools/gather_floor.py [N ...]    # default 1e4 1e5 1e6; docs/performance.md §5.4, §6.2
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from numba import njit

import samplers  # noqa: F401  (sets NUMBA_CACHE_DIR before numba is imported)
from samplers.hotloop import prefetch_row

BATCH_FRACTION = 0.0586  # measured E[B] / N of the TG PoissonMH at N = 1e5 (docs/performance.md §6.1)


@njit(cache=True)
def gather(X, idxs, reps, dist):
    """``reps`` passes, pass r reading the rows ``idxs[r % len(idxs)]`` (fresh rows every pass)."""
    s = 0.0
    B = idxs.shape[1]
    ncol = X.shape[1]
    for r in range(reps):
        idx = idxs[r % idxs.shape[0]]
        for b in range(-min(B, dist), B):
            if b + dist < B:
                prefetch_row(X, idx[b + dist])  # the kernels' own per-row prefetch
            if b >= 0:
                i = idx[b]
                for c in range(0, ncol, 8):
                    s += X[i, c]
                s += X[i, ncol - 1]
    return s


@njit(cache=True, fastmath={"contract", "reassoc"})
def stream(X, w, th, reps):
    """``reps`` streaming passes of sum_i sum_j w_j (theta_j - x_ij)^2 (the TG twin's loop)."""
    s = 0.0
    N, d = X.shape
    for _ in range(reps):
        for i in range(N):
            q = 0.0
            for j in range(d):
                r = th[j] - X[i, j]
                q += w[j] * r * r
            s += q
        th[0] += 1e-300 * s  # data-dependent: passes cannot be merged
    return s


def _best(fn, args: tuple, rounds: int = 7) -> float:
    b = math.inf
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(*args)
        b = min(b, time.perf_counter() - t0)
    return b


def measure(N: int, d: int = 20, seed: int = 1) -> dict:
    """ns per streamed datum and per gathered candidate (best of 7) for each layout / distance."""
    rng = np.random.default_rng(seed)
    B = int(round(BATCH_FRACTION * N))
    X = rng.standard_normal((N, d))
    Xp = np.zeros((N, 24 if d <= 24 else d))
    Xp[:, :d] = X
    w, th = np.ones(d), np.zeros(d)
    reps_s = max(1, int(2e6 // N))
    stream(X, w, th, 1)
    out = {"N": N, "B": B, "stream_ns": _best(stream, (X, w, th, reps_s)) / reps_s / N * 1e9}
    reps = max(1, int(2e6 // B))
    for name, A in ((f"{d}", X), (f"{Xp.shape[1]}", Xp)):
        for dist in (8, 16, 32):
            idx = rng.integers(0, N, size=(reps, B))
            gather(A, idx, 1, dist)
            out[f"gather_ns[row {name}, dist {dist}]"] = _best(gather, (A, idx, reps, dist)) / reps / B * 1e9
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    Ns = [int(float(x)) for x in argv] or [10_000, 100_000, 1_000_000]
    for N in Ns:
        r = measure(N)
        g = {k: v for k, v in r.items() if k.startswith("gather")}
        lo = min(g.values())
        print(
            f"N={N} E[B]={r['B']} stream {r['stream_ns']:.2f} ns/datum; gather (best) {lo:.2f} ns/candidate; "
            + "; ".join(f"{k} {v:.2f}" for k, v in g.items()),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
