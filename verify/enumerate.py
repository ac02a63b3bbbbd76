"""Exact transition matrices on enumerable state spaces, built independently of the kernels.

Nothing here calls the kernels, :mod:`samplers.proposals` or the njit target functions: proposal
probabilities are recomputed from their formulas, densities by :mod:`verify.densities` (NumPy) or
directly from the factor tables, and every source of randomness is enumerated (Blang-style,
``DiscreteMCTest``; verification tier T0).

Contents
--------
* Lattice MH (finite grid ``{lo + k h}^d`` restricted to the support; moves that leave the grid are
  rejected, so their probability stays on the diagonal):
  :func:`lattice_rw_proposal`, :func:`lattice_barker_proposal`, :func:`lattice_langevin_proposal`
  (proposal matrices ``Q``), :func:`mh_matrix` (exact acceptance ``min(1, r)``, the uniform
  integrated exactly), :func:`mh_matrix_from_acceptance` (when a family averages the acceptance
  over its own auxiliary variables), :func:`lattice_mh_matrix` (all in one for the baselines).
* Factor graphs: :func:`factor_graph_log_joint`, :func:`gibbs_site_matrices`,
  :func:`gibbs_random_scan_matrix`, :func:`gibbs_systematic_sweep_matrix`.
  Systematic scan: the kernel's one step updates site ``counter % n``, so its exact one-step
  object is the per-site matrix ``P_i`` (what kernel-vs-matrix tests compare); the sweep matrix
  ``P_0 P_1 ... P_{n-1}`` is the time-homogeneous chain used for stationarity/gap statements.
* Auxiliary randomness for the families' checks: :func:`enumerate_poisson_counts` (products of
  truncated Poissons with a certified neglected tail mass), :func:`minibatch_subsets` /
  :func:`minibatch_orderings` (without replacement), :func:`integrate_uniform` (exact integral
  of a piecewise-constant function of ``u ~ U(0, 1)`` over its breakpoints).

Tolerance rule for truncated enumerations: if the enumerated auxiliary configurations carry mass
``1 - eps`` (``eps = PoissonEnumeration.neglected``) and the acceptance is in ``[0, 1]``, every
off-diagonal entry computed from them satisfies ``P_trunc <= P_exact <= P_trunc + Q[x, y] eps``
(and the diagonal absorbs the rest), so checks must use ``tol + eps``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from scipy import stats

from samplers.targets.factor_graph import FactorGraph
from samplers.targets.tall import TallData
from verify import densities as D

# ============================================================================ lattice MH
MAX_STATES = 20_000


class Lattice(NamedTuple):
    """Finite lattice state space: ``points`` (S, d) = ``lo + h * ints``; ``index`` maps the integer
    coordinate tuple to the row of the transition matrix."""

    points: np.ndarray
    ints: np.ndarray
    lo: float
    h: float
    index: dict


def make_lattice(points: np.ndarray, lo: float, h: float) -> Lattice:
    """Wrap grid points (e.g. ``problem.meta["grid"]`` of ``tiny_grid``) as a :class:`Lattice`."""
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[0] == 0:
        raise ValueError("points must be a non-empty (S, d) array")
    if pts.shape[0] > MAX_STATES:
        raise ValueError(f"lattice too large to enumerate ({pts.shape[0]} > {MAX_STATES})")
    if not h > 0:
        raise ValueError("lattice step h must be > 0")
    ints = np.rint((pts - lo) / h).astype(np.int64)
    if np.max(np.abs(lo + h * ints - pts)) > 1e-9 * max(1.0, abs(lo), h):
        raise ValueError("points are not on the lattice lo + h * Z^d")
    index = {tuple(k): s for s, k in enumerate(ints)}
    if len(index) != pts.shape[0]:
        raise ValueError("duplicate lattice points")
    return Lattice(pts, ints, float(lo), float(h), index)


def lattice_lookup(lat: Lattice, x: np.ndarray) -> np.ndarray:
    """Row index of each point of ``x`` (n, d); -1 when it is not a state (off grid / support)."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    k = np.rint((x - lat.lo) / lat.h).astype(np.int64)
    on = np.all(np.abs(lat.lo + lat.h * k - x) <= 1e-9 * max(1.0, lat.h), axis=1)
    out = np.full(x.shape[0], -1, dtype=np.int64)
    for n in range(x.shape[0]):
        if on[n]:
            out[n] = lat.index.get(tuple(k[n]), -1)
    return out


def _add_moves(Q: np.ndarray, lat: Lattice, s: int, offsets: np.ndarray, probs: np.ndarray) -> None:
    """Add proposal mass ``probs`` of moves ``ints[s] + offsets`` that land on a state."""
    base = lat.ints[s]
    for off, p in zip(offsets, probs, strict=True):
        j = lat.index.get(tuple(base + off), -1)
        if j >= 0:
            Q[s, j] += p


def lattice_rw_proposal(lat: Lattice) -> np.ndarray:
    """``RW_LATTICE``: a uniformly chosen coordinate moves by ``+-h`` (prob ``1/(2d)`` each)."""
    S, d = lat.ints.shape
    offs = np.concatenate([np.eye(d, dtype=np.int64), -np.eye(d, dtype=np.int64)])
    probs = np.full(2 * d, 1.0 / (2 * d))
    Q = np.zeros((S, S))
    for s in range(S):
        _add_moves(Q, lat, s, offs, probs)
    return Q


def _sign_offsets(d: int) -> np.ndarray:
    return np.array(list(itertools.product((1, -1), repeat=d)), dtype=np.int64)


def lattice_barker_proposal(lat: Lattice, grad: np.ndarray) -> np.ndarray:
    """``BARKER_LATTICE``: every coordinate moves ``+h`` w.p. ``1/(1 + exp(-g_j h))``, else ``-h``
    (Livingstone & Zanella 2022 with ``mu = (delta_h + delta_-h)/2``); ``grad`` is (S, d)."""
    S, d = lat.ints.shape
    offs = _sign_offsets(d)
    Q = np.zeros((S, S))
    for s in range(S):
        # P(+) = 1/(1 + e^{-g h}); P(-) = 1/(1 + e^{g h}); log-space product over coordinates
        logp = -np.logaddexp(0.0, -grad[s][None, :] * lat.h * offs).sum(axis=1)
        _add_moves(Q, lat, s, offs, np.exp(logp))
    return Q


def lattice_langevin_proposal(lat: Lattice, grad: np.ndarray, sigma: float, K: int) -> np.ndarray:
    """``LANGEVIN_LATTICE``: per coordinate, offset ``k h`` (``|k| <= K``) with probability
    proportional to ``exp(-(k h - sigma^2 g_j / 2)^2 / (2 sigma^2))``, independently."""
    if not sigma > 0 or K < 1:
        raise ValueError("sigma must be > 0 and K >= 1")
    S, d = lat.ints.shape
    ks = np.arange(-K, K + 1)
    offs = np.array(list(itertools.product(ks, repeat=d)), dtype=np.int64)
    Q = np.zeros((S, S))
    for s in range(S):
        mu = 0.5 * sigma * sigma * grad[s]  # (d,)
        e = -((ks[None, :] * lat.h - mu[:, None]) ** 2) / (2 * sigma * sigma)  # (d, 2K+1)
        logp1 = e - np.logaddexp.reduce(e, axis=1, keepdims=True)
        logp = logp1[np.arange(d)[None, :], offs + K].sum(axis=1)
        _add_moves(Q, lat, s, offs, np.exp(logp))
    return Q


def mh_matrix_from_acceptance(Q: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``P[x, y] = Q[x, y] A[x, y]`` off the diagonal, ``P[x, x] = 1 - sum_{y != x} P[x, y]``.

    ``Q`` may have rows summing to < 1 (proposals off the state space are rejected); ``A`` is the
    acceptance probability already averaged over any auxiliary variables (values in [0, 1])."""
    Q = np.asarray(Q, dtype=np.float64)
    A = np.asarray(A, dtype=np.float64)
    if Q.shape != A.shape or Q.ndim != 2 or Q.shape[0] != Q.shape[1]:
        raise ValueError("Q and A must be square matrices of the same shape")
    if np.any(A < -1e-15) or np.any(A > 1 + 1e-12) or np.any(Q < 0):
        raise ValueError("A must lie in [0, 1] and Q must be non-negative")
    if np.any(Q.sum(axis=1) > 1 + 1e-12):
        raise ValueError("proposal rows sum to more than 1")
    P = Q * A
    np.fill_diagonal(P, 0.0)
    np.fill_diagonal(P, 1.0 - P.sum(axis=1))
    return P


def mh_acceptance(Q: np.ndarray, logpi: np.ndarray) -> np.ndarray:
    """``A[x, y] = min(1, pi(y) Q[y, x] / (pi(x) Q[x, y]))`` where ``Q[x, y] > 0`` (else 0).

    This is ``P(log u < log r)`` for ``u ~ U(0, 1)``, i.e. the uniform integrated exactly."""
    Q = np.asarray(Q, dtype=np.float64)
    logpi = np.asarray(logpi, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        logQ = np.log(Q)
        logr = logpi[None, :] - logpi[:, None] + logQ.T - logQ
    A = np.where(Q > 0, np.exp(np.minimum(0.0, np.nan_to_num(logr, nan=-np.inf))), 0.0)
    return A


def mh_matrix(Q: np.ndarray, logpi: np.ndarray) -> np.ndarray:
    """Exact Metropolis-Hastings matrix for proposal ``Q`` and unnormalised ``log pi``."""
    return mh_matrix_from_acceptance(Q, mh_acceptance(Q, logpi))


def lattice_mh_matrix(
    model: TallData, lat: Lattice, proposal: str, sigma: float = 0.0, K: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Exact (P, log pi) of full-batch MH with ``proposal`` in {"rw", "barker", "langevin"} on
    ``lat``; densities and gradients from :mod:`verify.densities` (the exact full-data gradient,
    as ``samplers.kernels.mh`` uses)."""
    logpi = D.log_post(model, lat.points)
    if not np.all(np.isfinite(logpi)):
        raise ValueError("some lattice points are outside the target's support")
    if proposal == "rw":
        Q = lattice_rw_proposal(lat)
    elif proposal == "barker":
        Q = lattice_barker_proposal(lat, D.log_post_grad(model, lat.points))
    elif proposal == "langevin":
        Q = lattice_langevin_proposal(lat, D.log_post_grad(model, lat.points), sigma, K)
    else:
        raise ValueError(f"proposal must be 'rw', 'barker' or 'langevin', got {proposal!r}")
    return mh_matrix(Q, logpi), logpi


# ============================================================================ factor graphs
def factor_graph_states(card: np.ndarray) -> np.ndarray:
    """All joint states, row-major (last variable fastest): (S, n) int64."""
    card = np.asarray(card, dtype=np.int64)
    S = int(np.prod(card))
    if S > 2_000_000:
        raise ValueError(f"state space too large to enumerate ({S})")
    return np.indices(tuple(int(c) for c in card)).reshape(len(card), -1).T.copy()


def state_index(card: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Row index (mixed radix, last variable fastest) of each state in ``X`` (m, n)."""
    card = np.asarray(card, dtype=np.int64)
    strides = np.ones(len(card), dtype=np.int64)
    for i in range(len(card) - 2, -1, -1):
        strides[i] = strides[i + 1] * card[i + 1]
    return np.asarray(X, dtype=np.int64) @ strides


def factor_graph_log_joint(fg: FactorGraph) -> tuple[np.ndarray, np.ndarray]:
    """(states, log pi(x) = sum_f phi_f(x_f)) by reading each factor's table as a C-ordered array
    over its variables (independent of the kernels' stride arithmetic)."""
    X = factor_graph_states(fg.card)
    U = np.zeros(X.shape[0])
    for f in range(fg.M.shape[0]):
        vs = fg.fac_vars[fg.fac_ptr[f] : fg.fac_ptr[f + 1]]
        tab = fg.tables[fg.tab_ptr[f] : fg.tab_ptr[f + 1]].reshape([int(fg.card[v]) for v in vs])
        U += tab[tuple(X[:, v] for v in vs)]
    return X, U


def gibbs_site_matrices(fg: FactorGraph) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """(states, log pi, [P_i]) where ``P_i`` resamples site ``i`` from its exact conditional,
    computed from the joint: ``P_i[x, x_{i<-v}] = pi(x_{i<-v}) / sum_w pi(x_{i<-w})``."""
    X, U = factor_graph_log_joint(fg)
    S = X.shape[0]
    mats = []
    for i in range(fg.n):
        P = np.zeros((S, S))
        Dk = int(fg.card[i])
        for s in range(S):
            Y = np.repeat(X[s][None, :], Dk, axis=0)
            Y[:, i] = np.arange(Dk)
            js = state_index(fg.card, Y)
            w = np.exp(U[js] - U[js].max())
            P[s, js] = w / w.sum()
        mats.append(P)
    return X, U, mats


def gibbs_random_scan_matrix(
    fg: FactorGraph, site_probs: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(P, log pi) of random-scan Gibbs: ``P = sum_i w_i P_i`` (uniform ``w`` by default)."""
    _, U, mats = gibbs_site_matrices(fg)
    w = np.full(fg.n, 1.0 / fg.n) if site_probs is None else np.asarray(site_probs, float)
    if w.shape != (fg.n,) or np.any(w < 0) or abs(w.sum() - 1) > 1e-12:
        raise ValueError("site_probs must be a probability vector over the sites")
    return sum(wi * P for wi, P in zip(w, mats, strict=True)), U


def gibbs_systematic_sweep_matrix(
    fg: FactorGraph, order: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(P, log pi) of one systematic sweep ``P_{o_0} P_{o_1} ... P_{o_{n-1}}`` (order 0..n-1)."""
    _, U, mats = gibbs_site_matrices(fg)
    order = range(fg.n) if order is None else order
    P = np.eye(U.shape[0])
    for i in order:
        P = P @ mats[i]
    return P, U


# ============================================================================ auxiliary randomness
class PoissonEnumeration(NamedTuple):
    """``counts`` (K, N) int64 configurations, ``probs`` (K,) their exact probabilities,
    ``neglected`` = 1 - sum(probs) = P(some s_i > nmax_i) (certified: computed from the exact
    Poisson CDFs, not by subtraction), ``nmax`` (N,) the per-coordinate truncation."""

    counts: np.ndarray
    probs: np.ndarray
    neglected: float
    nmax: np.ndarray


def enumerate_poisson_counts(
    rates: np.ndarray, tail: float = 1e-12, max_configs: int = 2_000_000
) -> PoissonEnumeration:
    """All count vectors of independent ``s_i ~ Poisson(rates_i)`` with ``s_i <= nmax_i``, where
    ``nmax_i`` is the smallest n with ``P(s_i > n) <= tail / N``; the neglected mass
    ``1 - prod_i P(s_i <= nmax_i) <= tail`` is returned so tolerances can include it.

    Used for PoissonMH / TunaMH / Poisson-Gibbs matrices (N = 3-6 data points)."""
    rates = np.asarray(rates, dtype=np.float64)
    if rates.ndim != 1 or np.any(rates < 0) or not np.all(np.isfinite(rates)):
        raise ValueError("rates must be a finite non-negative vector")
    if not 0 < tail < 1:
        raise ValueError("tail must be in (0, 1)")
    N = rates.shape[0]
    nmax = np.zeros(N, dtype=np.int64)
    for i, lam in enumerate(rates):
        if lam > 0:
            n = int(stats.poisson.isf(tail / N, lam))
            while stats.poisson.sf(n, lam) > tail / N:
                n += 1
            nmax[i] = n
    total = int(np.prod(nmax + 1))
    if total > max_configs:
        raise ValueError(f"{total} Poisson configurations exceed max_configs={max_configs}")
    pmfs = [
        stats.poisson.pmf(np.arange(n + 1), lam) if lam > 0 else np.array([1.0])
        for n, lam in zip(nmax, rates, strict=True)
    ]
    counts = np.indices(tuple(int(n) + 1 for n in nmax)).reshape(N, -1).T.copy()
    probs = np.ones(counts.shape[0])
    for i in range(N):
        probs *= pmfs[i][counts[:, i]]
    log_cdf = sum(float(stats.poisson.logcdf(n, lam)) for n, lam in zip(nmax, rates, strict=True) if lam > 0)
    neglected = float(-math.expm1(log_cdf))
    return PoissonEnumeration(counts, probs, neglected, nmax)


def minibatch_subsets(N: int, b: int) -> tuple[np.ndarray, float]:
    """All size-``b`` subsets of ``range(N)`` (uniform without replacement): (idx (C, b), 1/C)."""
    if not 0 < b <= N:
        raise ValueError(f"need 0 < b <= N, got b={b}, N={N}")
    idx = np.array(list(itertools.combinations(range(N), b)), dtype=np.int64)
    return idx, 1.0 / idx.shape[0]


def minibatch_orderings(N: int, b: int | None = None) -> tuple[np.ndarray, float]:
    """All ordered draws of ``b`` (default N) distinct indices: (idx (N!/(N-b)!, b), probability
    of each). A sequential test that draws without replacement until it decides is a function of
    the first ``b`` entries of a uniform permutation, so ``b = N`` enumerates it completely."""
    b = N if b is None else b
    if not 0 < b <= N or N > 9:
        raise ValueError(f"need 0 < b <= N <= 9, got b={b}, N={N}")
    idx = np.array(list(itertools.permutations(range(N), b)), dtype=np.int64)
    return idx, 1.0 / idx.shape[0]


def integrate_uniform(
    f: Callable[[float], float], breakpoints: Sequence[float] | np.ndarray, lo: float = 0.0, hi: float = 1.0
) -> float:
    """Exact ``int_lo^hi f(u) du`` for ``f`` constant between consecutive ``breakpoints``.

    ``f`` is evaluated at the midpoint of each piece (so its value at the breakpoints themselves,
    a null set, does not matter). Example: the MH coin ``1{log u < log r}`` has the single
    breakpoint ``exp(log r)``; an Austerity-type sequential test with ``mu0(u) = log(u)/N + c`` is
    piecewise constant in ``u`` with breakpoints where ``mu0`` crosses a stage's decision
    threshold, i.e. ``u = exp(N (threshold - c))``."""
    if not lo < hi:
        raise ValueError("need lo < hi")
    b = np.asarray(breakpoints, dtype=np.float64).ravel()
    b = b[np.isfinite(b) & (b > lo) & (b < hi)]
    edges = np.concatenate([[lo], np.unique(b), [hi]])
    total = 0.0
    for a, c in zip(edges[:-1], edges[1:], strict=True):
        if c > a:
            total += (c - a) * float(f(0.5 * (a + c)))
    return total
