"""Discrete factor graphs as data: pi(x) ∝ exp(sum_f phi_f(x_f)), tables shifted to 0 <= phi_f <= M_f.

Used by ``gibbs`` and the Poisson-minibatching Gibbs family (Zhang & De Sa 2019 §2: A[i] = factors touching i,
L = max_i sum_{f in A[i]} M_f, Psi = sum_f M_f) and by herded Gibbs / austere Gibbs. Every factor is a
dense table over its variables (row-major with explicit strides); CSR arrays list the factors of each
variable. Builders: Potts / Ising (pairwise, any coupling matrix) and arbitrary table factors.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np
from numba import njit


class FactorGraph(NamedTuple):
    n: int
    card: np.ndarray  # (n,) domain sizes
    fac_ptr: np.ndarray  # (F+1,) offsets into fac_vars / fac_stride
    fac_vars: np.ndarray
    fac_stride: np.ndarray
    tab_ptr: np.ndarray  # (F+1,) offsets into tables
    tables: np.ndarray  # shifted log-potentials, 0 <= value <= M_f
    M: np.ndarray  # (F,) table maxima (bound of each factor)
    var_ptr: np.ndarray  # (n+1,) CSR offsets: factors touching each variable
    var_fac: np.ndarray


# The per-factor helpers are inlined into their callers (``inline="always"``): a non-inlined call
# passes the whole FactorGraph NamedTuple (10 arrays, NRT reference counting per array per call),
# which cost more than the table lookup itself in the minibatch Gibbs kernels (docs/performance.md §7.4).
@njit(cache=True, inline="always")
def factor_value(fg: FactorGraph, f: int, x: np.ndarray) -> float:
    """phi_f(x)."""
    idx = fg.tab_ptr[f]
    for k in range(fg.fac_ptr[f], fg.fac_ptr[f + 1]):
        idx += x[fg.fac_vars[k]] * fg.fac_stride[k]
    return fg.tables[idx]


@njit(cache=True, inline="always")
def factor_value_at(fg: FactorGraph, f: int, x: np.ndarray, i: int, v: int) -> float:
    """phi_f(x with x_i := v)."""
    idx = fg.tab_ptr[f]
    for k in range(fg.fac_ptr[f], fg.fac_ptr[f + 1]):
        var = fg.fac_vars[k]
        xv = v if var == i else x[var]
        idx += xv * fg.fac_stride[k]
    return fg.tables[idx]


@njit(cache=True, inline="always")
def factor_slice(fg: FactorGraph, f: int, x: np.ndarray, i: int) -> tuple[int, int]:
    """``(base, stride)`` with phi_f(x with x_i := v) = ``fg.tables[base + v * stride]`` for every v:
    the D conditional values of one factor from one index computation (stride 0 if i is not in f)."""
    base = fg.tab_ptr[f]
    stride = 0
    for k in range(fg.fac_ptr[f], fg.fac_ptr[f + 1]):
        var = fg.fac_vars[k]
        if var == i:
            stride = fg.fac_stride[k]
        else:
            base += x[var] * fg.fac_stride[k]
    return base, stride


@njit(cache=True)
def energy(fg: FactorGraph, x: np.ndarray) -> float:
    """U(x) = sum_f phi_f(x) (log of the unnormalised probability)."""
    s = 0.0
    for f in range(fg.M.shape[0]):
        s += factor_value(fg, f, x)
    return s


@njit(cache=True)
def conditional_logits(fg: FactorGraph, x: np.ndarray, i: int, out: np.ndarray) -> int:
    """out[v] = sum_{f in A[i]} phi_f(x_{i<-v}) for v < card[i]; returns the factor evaluations used
    (D |A[i]| table lookups; one index computation per factor, :func:`factor_slice`)."""
    D = fg.card[i]
    for v in range(D):
        out[v] = 0.0
    for k in range(fg.var_ptr[i], fg.var_ptr[i + 1]):
        base, stride = factor_slice(fg, fg.var_fac[k], x, i)
        for v in range(D):
            out[v] += fg.tables[base + v * stride]
    return D * (fg.var_ptr[i + 1] - fg.var_ptr[i])


@njit(cache=True)
def sample_logits(logits: np.ndarray, D: int, u: float) -> int:
    """Inverse-CDF draw from softmax(logits[:D]) with a given uniform ``u``."""
    m = logits[0]
    for v in range(1, D):
        if logits[v] > m:
            m = logits[v]
    z = 0.0
    for v in range(D):
        z += np.exp(logits[v] - m)
    acc = 0.0
    target = u * z
    for v in range(D):
        acc += np.exp(logits[v] - m)
        if target < acc:
            return v
    return D - 1


# ----------------------------------------------------------------------------- builders
def from_tables(card, factors: list[tuple[tuple[int, ...], np.ndarray]]) -> FactorGraph:
    """Build from ``[(vars, table), ...]`` with ``table.shape == tuple(card[v] for v in vars)``.

    Tables are log-potentials; each is shifted by its minimum so that 0 <= phi_f <= M_f.
    """
    card = np.asarray(card, dtype=np.int64)
    n = card.shape[0]
    if n == 0 or np.any(card < 1):
        raise ValueError("card must be a non-empty array of positive domain sizes")
    fac_ptr = [0]
    fac_vars: list[int] = []
    fac_stride: list[int] = []
    tab_ptr = [0]
    tables: list[np.ndarray] = []
    M = []
    adj: list[list[int]] = [[] for _ in range(n)]
    for f, (vs, tab) in enumerate(factors):
        vs = tuple(int(v) for v in vs)
        tab = np.asarray(tab, dtype=np.float64)
        if len(set(vs)) != len(vs) or any(v < 0 or v >= n for v in vs):
            raise ValueError(f"factor {f}: bad variable list {vs}")
        if tab.shape != tuple(int(card[v]) for v in vs):
            raise ValueError(f"factor {f}: table shape {tab.shape} does not match card of {vs}")
        if not np.all(np.isfinite(tab)):
            raise ValueError(f"factor {f}: table has NaN/inf")
        tab = tab - tab.min()
        strides = [int(s // 8) for s in np.ascontiguousarray(tab).strides]
        fac_vars.extend(vs)
        fac_stride.extend(strides)
        fac_ptr.append(len(fac_vars))
        tables.append(np.ascontiguousarray(tab).ravel())
        tab_ptr.append(tab_ptr[-1] + tab.size)
        M.append(float(tab.max()))
        for v in vs:
            adj[v].append(f)
    var_ptr = np.zeros(n + 1, dtype=np.int64)
    var_ptr[1:] = np.cumsum([len(a) for a in adj])
    var_fac = np.array([f for a in adj for f in a], dtype=np.int64)
    return FactorGraph(
        int(n),
        card,
        np.asarray(fac_ptr, np.int64),
        np.asarray(fac_vars, np.int64),
        np.asarray(fac_stride, np.int64),
        np.asarray(tab_ptr, np.int64),
        np.concatenate(tables) if tables else np.zeros(0),
        np.asarray(M, np.float64),
        var_ptr,
        var_fac,
    )


def potts(J: np.ndarray, D: int, beta: float = 1.0, unary: np.ndarray | None = None) -> FactorGraph:
    """Potts model U(x) = beta * sum_{i<j} J_ij [x_i == x_j] (+ sum_i unary[i, x_i]); one factor per
    unordered pair with J_ij != 0 (Zhang & De Sa 2019 §4.1 reading: M_f = beta J_ij)."""
    J = np.asarray(J, dtype=np.float64)
    n = J.shape[0]
    if J.shape != (n, n) or not np.allclose(J, J.T):
        raise ValueError("J must be a symmetric (n, n) matrix")
    if D < 2:
        raise ValueError("D must be >= 2")
    eye = np.eye(D)
    factors = [
        ((i, j), beta * J[i, j] * eye) for i, j in itertools.combinations(range(n), 2) if J[i, j] != 0.0
    ]
    if unary is not None:
        unary = np.asarray(unary, dtype=np.float64)
        if unary.shape != (n, D):
            raise ValueError("unary must be (n, D)")
        factors += [((i,), unary[i]) for i in range(n)]
    return from_tables(np.full(n, D), factors)


def ising(J: np.ndarray, h: np.ndarray | None = None) -> FactorGraph:
    """Ising model on spins s = 2x - 1 in {-1, +1}: U = sum_{i<j} J_ij s_i s_j + sum_i h_i s_i."""
    J = np.asarray(J, dtype=np.float64)
    n = J.shape[0]
    if J.shape != (n, n) or not np.allclose(J, J.T):
        raise ValueError("J must be a symmetric (n, n) matrix")
    s = np.array([-1.0, 1.0])
    factors = [
        ((i, j), J[i, j] * np.outer(s, s)) for i, j in itertools.combinations(range(n), 2) if J[i, j] != 0.0
    ]
    if h is not None:
        h = np.asarray(h, dtype=np.float64)
        factors += [((i,), h[i] * s) for i in range(n)]
    return from_tables(np.full(n, 2), factors)


def grid_coupling(rows: int, cols: int, kind: str = "nearest", gamma: float = 1.5) -> np.ndarray:
    """Coupling matrix on a rows x cols lattice: ``nearest`` (4-neighbour, weight 1) or ``gaussian``
    (fully connected, A_ij = exp(-gamma ||r_i - r_j||^2), Zhang & De Sa 2019 §4.1; no wrap, A_ii = 0)."""
    r = np.array([(a, b) for a in range(rows) for b in range(cols)], dtype=np.float64)
    d2 = ((r[:, None, :] - r[None, :, :]) ** 2).sum(-1)
    if kind == "nearest":
        A = (d2 == 1.0).astype(np.float64)
    elif kind == "gaussian":
        A = np.exp(-gamma * d2)
        np.fill_diagonal(A, 0.0)
    else:
        raise ValueError(f"unknown coupling kind {kind!r}")
    return A


def enumerate_states(fg: FactorGraph) -> np.ndarray:
    """All joint states (row-major, last variable fastest) as an (S, n) int64 array."""
    S = int(np.prod(fg.card))
    if S > 2_000_000:
        raise ValueError(f"state space too large to enumerate ({S})")
    return np.array(list(itertools.product(*[range(int(c)) for c in fg.card])), dtype=np.int64)


def exact_joint(fg: FactorGraph) -> tuple[np.ndarray, np.ndarray]:
    """(states, probabilities) by enumeration."""
    X = enumerate_states(fg)
    U = np.array([energy(fg, x) for x in X])
    p = np.exp(U - U.max())
    return X, p / p.sum()
