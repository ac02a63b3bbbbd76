"""Walker/Vose alias tables for O(1) categorical draws (Yuan & Wang 2024 App. C, Alg. 8/9).

Built once per target in O(N); a draw costs one uniform slot plus one uniform coin.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def build_alias(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vose's alias method. Returns ``(prob, alias)`` for probabilities proportional to ``weights``."""
    n = weights.shape[0]
    total = 0.0
    for i in range(n):
        if not (weights[i] >= 0.0) or not np.isfinite(weights[i]):
            raise ValueError("alias weights must be finite and non-negative")
        total += weights[i]
    if not total > 0.0:
        raise ValueError("alias weights must have a positive sum")
    prob = np.empty(n, dtype=np.float64)
    alias = np.zeros(n, dtype=np.int64)
    scaled = np.empty(n, dtype=np.float64)
    small = np.empty(n, dtype=np.int64)
    large = np.empty(n, dtype=np.int64)
    ns = 0
    nl = 0
    for i in range(n):
        scaled[i] = weights[i] * n / total
        if scaled[i] < 1.0:
            small[ns] = i
            ns += 1
        else:
            large[nl] = i
            nl += 1
    while ns > 0 and nl > 0:
        ns -= 1
        s = small[ns]
        nl -= 1
        g = large[nl]
        prob[s] = scaled[s]
        alias[s] = g
        scaled[g] = (scaled[g] + scaled[s]) - 1.0
        if scaled[g] < 1.0:
            small[ns] = g
            ns += 1
        else:
            large[nl] = g
            nl += 1
    while nl > 0:
        nl -= 1
        prob[large[nl]] = 1.0
        alias[large[nl]] = large[nl]
    while ns > 0:  # numerical leftovers
        ns -= 1
        prob[small[ns]] = 1.0
        alias[small[ns]] = small[ns]
    return prob, alias


@njit(cache=True, inline="always")
def slot_and_coin(v: float, n: int):
    """For ``v = u n`` (u uniform on [0, 1)): the table slot ``j = floor(v)`` (clamped to n - 1) and the
    coin ``v - j`` (uniform on [0, 1) and independent of j; for n <= 1e7 it keeps >= 29 bits)."""
    j = int(v)
    if j >= n:
        j = n - 1
    return j, v - j


@njit(cache=True, inline="always")
def alias_slot(prob: np.ndarray, alias: np.ndarray, p0: int, n: int, u: float) -> int:
    """The draw from the table ``prob[p0:p0+n]``, ``alias[p0:p0+n]`` (no slices made) by ONE
    uniform u (:func:`slot_and_coin` of ``u n``). Returns the local index in ``[0, n)``."""
    j, c = slot_and_coin(u * n, n)
    if c < prob[p0 + j]:
        return j
    return alias[p0 + j]


@njit(cache=True)
def alias_draw(prob: np.ndarray, alias: np.ndarray, rng) -> int:
    """One categorical draw from an alias table (O(1)) using one uniform of the Generator ``rng``
    (:func:`alias_slot`). About 4x cheaper in Numba than ``rng.integers`` + ``rng.random``."""
    return alias_slot(prob, alias, 0, prob.shape[0], rng.random())


def alias_probabilities(prob: np.ndarray, alias: np.ndarray) -> np.ndarray:
    """Exact categorical distribution encoded by an alias table (for tests/verify)."""
    n = prob.shape[0]
    p = prob / n
    out = p.copy()
    np.add.at(out, alias, (1.0 - prob) / n)
    return out
