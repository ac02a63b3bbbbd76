"""The per-candidate cost split of the PoissonMH hot loop (``mcmc-bench perf``, section ``hotloop``;
docs/performance.md §4): alias draws, the fused candidate pass, its memory floor, and the full-batch
per-datum loop, each timed in CPU seconds (best of rounds) on the truncated Gaussian of the scaling sweep."""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit, uint64

from samplers.hotloop import prefetch_row
from samplers.kernels.poisson_mh import poisson_counts_ratio
from samplers.poisson_minibatch import (
    RESOLVE_AHEAD,
    ROW_PROB,
    SLOT_AHEAD,
    draw_from_rows,
    open_candidates,
    pipeline_counters,
    resolve_slot,
    stage_at,
)
from samplers.targets.tall import loglik_sum


@njit(cache=True)
def _hl_draws(rows, p, Lam, rng, buf, reps):
    """``reps`` candidate draws (B ~ Poi(Lam) alias draws each, the table in the candidate rows); returns
    the total B."""
    tot = 0
    for _ in range(reps):
        B, buf, _ = draw_from_rows(rows, p, Lam, rng, buf)
        tot += B
    return tot


@njit(cache=True)
def _hl_fused(t, theta, theta_p, a_scale, rows, Lam, rng, buf, err, reps):
    """``reps`` PoissonMH candidate passes (draws + fused two-point phi + coin + log-ratio)."""
    tot = 0
    for _ in range(reps):
        s, B, nk, buf = poisson_counts_ratio(t, theta, theta_p, a_scale, rows, Lam, rng, buf, err)
        tot += B
    return tot


@njit(cache=True)
def _hl_gather(rows, p, Lam, rng, buf, reps):
    """``reps`` memory floors of a PoissonMH candidate pass: the same alias draws and prefetching as the
    kernel's candidate pipeline (:func:`samplers.poisson_minibatch.open_candidates`), then one load per
    64-byte line of each candidate's row, and no arithmetic beyond summing those loads: about the least
    time any kernel reading the same rows with this prefetching can take."""
    tot = 0
    s = 0.0
    ncol = rows.shape[1]
    n = rows.shape[0]
    cp = p + ROW_PROB
    for _ in range(reps):
        B, buf, fb, st = open_candidates(rows, cp, rows, True, Lam, rng, buf)
        zs, _, gam = pipeline_counters(st, B)
        for b in range(B):
            if b + SLOT_AHEAD < B:
                prefetch_row(rows, stage_at(fb, zs, b + SLOT_AHEAD, n))
            zs += gam
            if b + RESOLVE_AHEAD < B:
                buf[b + RESOLVE_AHEAD] = resolve_slot(rows, cp, fb, b + RESOLVE_AHEAD)
            i = uint64(buf[b])
            for c in range(0, ncol, 8):
                s += rows[i, c]
        tot += B
    return tot + (1 if s == 1.2345 else 0)  # s is used: the loads cannot be dropped


@njit(cache=True)
def _hl_full(t, theta, reps):
    """``reps`` full-batch log-likelihood sums (the twins' per-datum loop)."""
    s = 0.0
    for _ in range(reps):
        s += loglik_sum(t, theta)
        theta[0] += 1e-300 * s  # data-dependent: the loop cannot be hoisted
    return s


def _cpu_min(fn, args, reps: int, rounds: int) -> float:
    fn(*args, 1)
    best = math.inf
    for _ in range(rounds):
        t0 = time.process_time()
        fn(*args, reps)
        best = min(best, time.process_time() - t0)
    return best


def hotloop_rows(Ns: list[int], budget: float, rounds: int, log=print) -> list[dict]:
    """Per-candidate cost split of the PoissonMH hot loop (docs/performance.md §4) on the truncated
    Gaussian of the scaling sweep (d = 20, lambda = 5e-4 L^2): ``draw_ns`` = alias draws only,
    ``fused_ns`` = the whole candidate pass (draw + phi at theta and theta' from one row read + coin +
    log-ratio), per candidate; ``gather_ns`` = the memory floor of that pass (the same draws and row
    reads, no arithmetic: :func:`_hl_gather`); ``datum_ns`` = the full-batch likelihood loop per datum.
    The bound on the efficiency of PoissonMH vs RWM is about ``datum_ns / fused_ns`` (a candidate needs
    two evaluations on a randomly accessed row, a full-batch datum one on a streamed row);
    ``gather_ns x E[B]`` at the largest N estimates how low the growth could go (:func:`target_rows`)."""
    from bench.perf import _problem
    from samplers.methods.exact_mh import poisson_setup

    rows = []
    for N in Ns:
        t = _problem("truncated_gaussian", N).model
        lam, L, crow = poisson_setup(t, 5e-4)
        Lam = lam + L
        d = t.X.shape[1]
        theta = np.full(d, 0.01)
        theta_p = theta + 0.001
        rng = np.random.default_rng(0)
        buf = np.empty(int(2 * Lam) + 64, dtype=np.int64)
        err = np.zeros(2, dtype=np.int64)
        reps = max(1, int(budget / (Lam * 60e-9)))
        draw = _cpu_min(_hl_draws, (crow, d, Lam, rng, buf), reps, rounds) / (reps * Lam)
        fused = _cpu_min(_hl_fused, (t, theta, theta_p, lam / L, crow, Lam, rng, buf, err), reps, rounds) / (
            reps * Lam
        )
        gather = _cpu_min(_hl_gather, (crow, d, Lam, rng, buf), reps, rounds) / (reps * Lam)
        freps = max(1, int(budget / (N * 15e-9)))
        datum = _cpu_min(_hl_full, (t, theta.copy()), freps, rounds) / (freps * N)
        rows.append(
            {
                "section": "hotloop",
                "method": "poisson_mh",
                "twin": "",
                "target": "truncated_gaussian",
                "N": N,
                "mean_batch": Lam,
                "draw_ns": draw * 1e9,
                "fused_ns": fused * 1e9,
                "gather_ns": gather * 1e9,
                "datum_ns": datum * 1e9,
                "efficiency_bound": datum / fused,
            }
        )
        log(
            f"hotloop N={N:.0e}: alias draw {draw * 1e9:.1f} ns, candidate pass {fused * 1e9:.1f} ns "
            f"(memory floor {gather * 1e9:.1f} ns) per candidate; full-batch datum {datum * 1e9:.1f} ns "
            f"-> efficiency bound {datum / fused:.2f}"
        )
    return rows
