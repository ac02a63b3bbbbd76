"""Single-site Gibbs sampling on a discrete factor graph (random or systematic scan).

One iteration = one variable update; its cost ("batch size") is D_i * |A[i]| factor evaluations
(Zhang & De Sa 2019 Table 1: O(D Delta)). Systematic scan visits 0, 1, ..., n-1 cyclically.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.targets.factor_graph import FactorGraph, conditional_logits, sample_logits

RANDOM_SCAN, SYSTEMATIC_SCAN = 0, 1


@njit(cache=True)
def gibbs_init(fg: FactorGraph, x0: np.ndarray):
    x = x0.copy()
    counter = np.zeros(1, dtype=np.int64)  # position in a systematic scan
    return x, counter


@njit(cache=True)
def gibbs_step(fg: FactorGraph, x, counter, scan: int, rng, logits):
    if scan == RANDOM_SCAN:
        i = rng.integers(0, fg.n)
    else:
        i = counter[0] % fg.n
        counter[0] += 1
    ne = conditional_logits(fg, x, i, logits)
    x[i] = sample_logits(logits, fg.card[i], rng.random())
    return True, ne


@njit(cache=True)
def gibbs_sample(fg: FactorGraph, x, counter, n_iter: int, scan: int, rng, thin: int):
    samples = np.empty((n_iter // thin, fg.n), dtype=np.int64)
    acc = np.ones(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    logits = np.empty(fg.card.max())
    for it in range(n_iter):
        _, ne = gibbs_step(fg, x, counter, scan, rng, logits)
        nev[it] = ne
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = x
    return samples, acc, nev
