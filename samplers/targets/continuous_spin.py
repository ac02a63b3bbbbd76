"""Continuous-variable factor models on a box [lo, hi]^n for the Chebyshev Gibbs samplers (Zhang & De Sa
2019 §3, §4.2, §4.3).

:class:`ContinuousModel` (data only, Numba-typable) has two kinds:

* ``SPIN`` — pairwise continuous spin model (Zhang & De Sa 2019 §4.2): x_i in [0, 1], one factor per unordered
  pair phi_ij(x) = beta A_ij (x_i x_j + 1) with bound M_ij = 2 beta A_ij (phi in [beta A, 2 beta A]
  subset of [0, M]). CSR lists (``ptr``, ``nbr``, ``w`` = beta A_ij, ``M``) give the factors of each
  variable. A_ij = exp(-gamma ||r_i - r_j||^2) on a lattice: gamma = 0.4 reproduces L = 13.708 (paper:
  13.71; the kernel width is inferred, not stated in the paper).
* ``TALL`` — a tall-data posterior (samplers.targets.tall.TallData, e.g. the §4.3 truncated Gaussian
  mixture) whose N data factors phi_n = ll_n + shift_n in [0, M_n] all touch every coordinate; the log
  prior is evaluated exactly (not minibatched). Local factor k of any variable is datum k.

Kernels access factors only through :func:`n_local`, :func:`local_index`, :func:`local_phi`,
:func:`local_M` and :func:`log_prior_c`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from samplers.targets import tall

SPIN, TALL = 0, 1


class ContinuousModel(NamedTuple):
    kind: int
    n: int
    lo: float
    hi: float
    ptr: np.ndarray  # SPIN: (n+1,) CSR offsets; TALL: unused (zeros)
    nbr: np.ndarray  # SPIN: neighbour index per CSR entry
    w: np.ndarray  # SPIN: beta A_ij per CSR entry
    M: np.ndarray  # SPIN: bound per CSR entry; TALL: (N,) bounds M_n
    tall: tall.TallData  # TALL: the posterior; SPIN: a 1-datum placeholder


@njit(cache=True)
def n_local(m: ContinuousModel, i: int) -> int:
    if m.kind == SPIN:
        return m.ptr[i + 1] - m.ptr[i]
    return m.M.shape[0]


@njit(cache=True)
def local_offset(m: ContinuousModel, i: int) -> int:
    """Offset of variable i's local factors in the per-entry arrays (alias tables, M)."""
    if m.kind == SPIN:
        return m.ptr[i]
    return 0


@njit(cache=True)
def local_phi(m: ContinuousModel, i: int, k: int, x: np.ndarray) -> float:
    """Value at x of local factor k (absolute per-entry index) of variable i."""
    if m.kind == SPIN:
        return m.w[k] * (x[i] * x[m.nbr[k]] + 1.0)
    return tall.phi_i(m.tall, k, x)


@njit(cache=True)
def local_M(m: ContinuousModel, k: int) -> float:
    return m.M[k]


@njit(cache=True)
def log_prior_c(m: ContinuousModel, x: np.ndarray) -> float:
    if m.kind == SPIN:
        return 0.0
    return tall.log_prior(m.tall, x)


@njit(cache=True)
def full_energy(m: ContinuousModel, x: np.ndarray) -> float:
    """U(x) = sum over all factors + log prior (O(#factors); reference / tests)."""
    if m.kind == SPIN:
        s = 0.0
        for i in range(m.n):
            for k in range(m.ptr[i], m.ptr[i + 1]):
                if m.nbr[k] > i:
                    s += m.w[k] * (x[i] * x[m.nbr[k]] + 1.0)
        return s
    s = tall.log_prior(m.tall, x)
    for k in range(m.M.shape[0]):
        s += tall.phi_i(m.tall, k, x)
    return s


def _placeholder_tall() -> tall.TallData:
    return tall.gaussian_location(np.zeros((1, 1)), box=1.0)


def local_max_energy(m: ContinuousModel) -> float:
    """L = max_i sum_{f in A[i]} M_f."""
    if m.kind == SPIN:
        return float(max(m.M[m.ptr[i] : m.ptr[i + 1]].sum() for i in range(m.n)))
    return float(m.M.sum())


def spin_model(A: np.ndarray, beta: float = 1.0, lo: float = 0.0, hi: float = 1.0) -> ContinuousModel:
    """Continuous spin model U = sum_{i<j} beta A_ij (x_i x_j + 1) on [lo, hi]^n (Zhang & De Sa 2019 §4.2)."""
    A = np.asarray(A, dtype=np.float64)
    n = A.shape[0]
    if A.shape != (n, n) or not np.allclose(A, A.T) or np.any(A < 0) or not np.all(np.isfinite(A)):
        raise ValueError("A must be a symmetric non-negative finite (n, n) matrix")
    if not (beta > 0 and np.isfinite(beta)):
        raise ValueError("beta must be finite and > 0")
    if not (hi > lo) or lo < 0:
        raise ValueError("need 0 <= lo < hi (factors are non-negative and bounded by 2 beta A hi^2)")
    ptr = np.zeros(n + 1, dtype=np.int64)
    nbr, w = [], []
    for i in range(n):
        js = [j for j in range(n) if j != i and A[i, j] > 0]
        nbr.extend(js)
        w.extend(beta * A[i, js])
        ptr[i + 1] = len(nbr)
    w = np.asarray(w, dtype=np.float64)
    M = w * (1.0 + hi * hi)  # = 2 beta A_ij on [0, 1]
    return ContinuousModel(
        SPIN, int(n), float(lo), float(hi), ptr, np.asarray(nbr, np.int64), w, M, _placeholder_tall()
    )


def tall_model(t: tall.TallData) -> ContinuousModel:
    """Wrap a boxed 2-D tall-data posterior (e.g. the §4.3 mixture) as a ContinuousModel."""
    if t.support != tall.SUPPORT_BOX:
        raise ValueError("the tall target needs a box support [lo, hi]^d")
    d = t.prior_mean.shape[0]
    return ContinuousModel(
        TALL,
        int(d),
        float(t.lo),
        float(t.hi),
        np.zeros(d + 1, np.int64),
        np.zeros(1, np.int64),
        np.zeros(1),
        np.ascontiguousarray(t.M),
        t,
    )
