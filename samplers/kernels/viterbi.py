"""Viterbi (max-sum) decoding: the exact MAP of a batch of linear-chain models (the reference of Chen et al.
2016 §4.4).

A batch is given by ``ptr`` (sentence t spans tokens ptr[t]:ptr[t+1]), ``unary`` (N, K) scores and a
shared ``trans`` (K, K) score, trans[a, b] for label a followed by b. The score of a labelling is
sum_t unary[t, x_t] + sum_t trans[x_t, x_{t+1}] (within sentences). Ties go to the smallest label.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def viterbi_decode(unary: np.ndarray, trans: np.ndarray, ptr: np.ndarray):
    """(labels (N,), best score per sentence)."""
    N, K = unary.shape
    out = np.zeros(N, dtype=np.int64)
    scores = np.zeros(ptr.shape[0] - 1)
    delta = np.empty((N, K))
    back = np.zeros((N, K), dtype=np.int64)
    for s in range(ptr.shape[0] - 1):
        a, b = ptr[s], ptr[s + 1]
        if b <= a:
            continue
        for k in range(K):
            delta[a, k] = unary[a, k]
        for t in range(a + 1, b):
            for k in range(K):
                best = delta[t - 1, 0] + trans[0, k]
                arg = 0
                for j in range(1, K):
                    v = delta[t - 1, j] + trans[j, k]
                    if v > best:
                        best = v
                        arg = j
                delta[t, k] = best + unary[t, k]
                back[t, k] = arg
        k = 0
        for j in range(1, K):
            if delta[b - 1, j] > delta[b - 1, k]:
                k = j
        scores[s] = delta[b - 1, k]
        out[b - 1] = k
        for t in range(b - 1, a, -1):
            k = back[t, k]
            out[t - 1] = k
    return out, scores


@njit(cache=True)
def chain_score(unary: np.ndarray, trans: np.ndarray, ptr: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Score of labelling ``x`` per sentence."""
    out = np.zeros(ptr.shape[0] - 1)
    for s in range(ptr.shape[0] - 1):
        a, b = ptr[s], ptr[s + 1]
        v = 0.0
        for t in range(a, b):
            v += unary[t, x[t]]
            if t + 1 < b:
                v += trans[x[t], x[t + 1]]
        out[s] = v
    return out
