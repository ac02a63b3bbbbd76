"""Annealed Gibbs with a linear cooling schedule (Chen et al. 2016 §4.4 baseline; Stanford NER
CoolingSchedule / SequenceGibbsSampler).

``n_total`` sweeps k = 0..n_total-1 in the fixed order 0..n-1 at temperature
T_k = 1 - k / (n_total - 1) (T = 0 for a single sweep); a site is drawn from softmax(logits / T_k)
and T = 0 takes the argmax (ties to the smallest label). The best-energy state per connected
component seen after any sweep (and the initial state) is kept in ``best_x`` (MAP prediction).
The schedule position lives in the state, so a chunked run equals one long run.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.kernels.herded import HerdIndex, track_best
from samplers.targets.factor_graph import FactorGraph, conditional_logits, sample_logits


@njit(cache=True)
def annealed_gibbs_init(fg: FactorGraph, x0: np.ndarray):
    x = x0.copy()
    counter = np.zeros(1, dtype=np.int64)
    best_x = x0.copy()
    return x, counter, best_x


@njit(cache=True)
def temperature(k: int, n_total: int) -> float:
    if n_total <= 1:
        return 0.0
    t = 1.0 - k / (n_total - 1)
    return t if t > 0.0 else 0.0


@njit(cache=True)
def annealed_gibbs_step(fg: FactorGraph, x, counter, n_total: int, rng, logits) -> int:
    """One sweep at temperature T_{counter}; returns factor evaluations."""
    T = temperature(counter[0], n_total)
    ne = 0
    for i in range(fg.n):
        ne += conditional_logits(fg, x, i, logits)
        K = fg.card[i]
        if T == 0.0:
            b = 0
            for v in range(1, K):
                if logits[v] > logits[b]:
                    b = v
            x[i] = b
        else:
            for v in range(K):
                logits[v] = logits[v] / T
            x[i] = sample_logits(logits, K, rng.random())
    counter[0] += 1
    return ne


@njit(cache=True)
def annealed_gibbs_sample(
    fg: FactorGraph,
    idx: HerdIndex,
    x,
    counter,
    best_x,
    n_iter: int,
    n_total: int,
    track: bool,
    rng,
    thin: int,
):
    samples = np.empty((n_iter // thin, fg.n), dtype=np.int64)
    acc = np.ones(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    logits = np.empty(fg.card.max())
    best_e = np.full(idx.n_comp, -np.inf)
    e_buf = np.empty(idx.n_comp)
    if track:
        track_best(fg, idx, best_x, best_x, best_e, e_buf)
    for it in range(n_iter):
        ne = annealed_gibbs_step(fg, x, counter, n_total, rng, logits)
        if track:
            ne += track_best(fg, idx, x, best_x, best_e, e_buf)
        nev[it] = ne
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = x
    return samples, acc, nev
