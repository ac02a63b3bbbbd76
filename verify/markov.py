"""Finite Markov-chain utilities for exact transition matrices (NumPy only).

Everything here works on a dense row-stochastic matrix ``P`` (``P[x, y] = P(x -> y)``) and a
probability vector ``pi``. Used by every family to check stationarity / detailed balance, and to
compute spectral gaps and mixing distances for the theory-vs-empirics table.

Spectral facts used (Levin, Peres & Wilmer 2017, §12): for a chain reversible w.r.t. ``pi`` the
matrix ``A = D^{1/2} P D^{-1/2}`` (``D = diag(pi)``) is symmetric with the eigenvalues of ``P``;
``gap = 1 - lambda_2`` and the absolute gap ``gap_* = 1 - max(|lambda_2|, |lambda_min|)``; and
(Thm 12.4 / eq. 12.13) ``||P^t(x, .) - pi||_TV <= (1/2) (1 - gap_*)^t sqrt((1 - pi(x)) / pi(x))``.
"""

from __future__ import annotations

import numpy as np


def _as_matrix(P: np.ndarray) -> np.ndarray:
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ValueError(f"transition matrix must be square, got shape {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ValueError("transition matrix contains NaN or inf")
    return P


def _as_dist(pi: np.ndarray, S: int | None = None) -> np.ndarray:
    pi = np.asarray(pi, dtype=np.float64)
    if pi.ndim != 1 or (S is not None and pi.shape[0] != S):
        raise ValueError(f"distribution must be a vector of length {S}, got shape {pi.shape}")
    if np.any(pi < 0) or not np.all(np.isfinite(pi)):
        raise ValueError("distribution has negative or non-finite entries")
    return pi


def stochasticity_residual(P: np.ndarray) -> float:
    """``max(max_x |sum_y P[x, y] - 1|, -min P)``: 0 for an exact stochastic matrix."""
    P = _as_matrix(P)
    return float(max(np.max(np.abs(P.sum(axis=1) - 1.0)), -min(P.min(), 0.0)))


def check_stochastic(P: np.ndarray, atol: float = 1e-12) -> float:
    """Raise ValueError unless ``P`` is row-stochastic to ``atol``; return the residual."""
    r = stochasticity_residual(P)
    if r > atol:
        raise ValueError(f"matrix is not row-stochastic (residual {r:.3g} > {atol:.3g})")
    return r


def normalize_log(logp: np.ndarray) -> np.ndarray:
    """``exp(logp)`` normalised to sum 1 (stable)."""
    logp = np.asarray(logp, dtype=np.float64)
    w = np.exp(logp - logp.max())
    return w / w.sum()


def stationary(P: np.ndarray) -> np.ndarray:
    """The stationary distribution of an irreducible ``P`` (solves ``pi (P - I) = 0, sum pi = 1``)."""
    P = _as_matrix(P)
    S = P.shape[0]
    A = np.vstack([(P - np.eye(S)).T, np.ones((1, S))])
    b = np.zeros(S + 1)
    b[-1] = 1.0
    pi, *_ = np.linalg.lstsq(A, b, rcond=None)
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def stationarity_residual(P: np.ndarray, pi: np.ndarray) -> float:
    """``max_y |(pi P)_y - pi_y|``."""
    P = _as_matrix(P)
    pi = _as_dist(pi, P.shape[0])
    return float(np.max(np.abs(pi @ P - pi)))


def detailed_balance_residual(P: np.ndarray, pi: np.ndarray) -> float:
    """``max_{x,y} |pi_x P[x, y] - pi_y P[y, x]|`` (0 iff ``P`` is ``pi``-reversible)."""
    P = _as_matrix(P)
    pi = _as_dist(pi, P.shape[0])
    F = pi[:, None] * P
    return float(np.max(np.abs(F - F.T)))


def reversible_eigenvalues(P: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Eigenvalues (descending) of a ``pi``-reversible ``P`` via the symmetric ``D^1/2 P D^-1/2``.

    The tiny asymmetry left by round-off is removed by symmetrising; call
    :func:`detailed_balance_residual` first if reversibility is itself in question."""
    P = _as_matrix(P)
    pi = _as_dist(pi, P.shape[0])
    if np.any(pi <= 0):
        raise ValueError("pi must be strictly positive for the symmetrised eigenproblem")
    s = np.sqrt(pi)
    A = s[:, None] * P / s[None, :]
    A = 0.5 * (A + A.T)
    return np.linalg.eigvalsh(A)[::-1]


def spectral_gap(P: np.ndarray, pi: np.ndarray) -> float:
    """``1 - lambda_2`` of a reversible chain (the gap of the theorems in Zhang & De Sa 2019 and Yuan & Wang
    2024)."""
    ev = reversible_eigenvalues(P, pi)
    return float(1.0 - ev[1])


def absolute_spectral_gap(P: np.ndarray, pi: np.ndarray) -> float:
    """``1 - max(|lambda_2|, |lambda_min|)`` (governs TV convergence, Levin-Peres §12.2)."""
    ev = reversible_eigenvalues(P, pi)
    return float(1.0 - max(abs(ev[1]), abs(ev[-1])))


def tv(p: np.ndarray, q: np.ndarray) -> float:
    """Total-variation distance ``(1/2) sum |p - q|``."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if p.shape != q.shape:
        raise ValueError(f"shapes differ: {p.shape} vs {q.shape}")
    return float(0.5 * np.abs(p - q).sum())


def tv_to_stationarity(P: np.ndarray, pi: np.ndarray, ts: int | list[int] | np.ndarray) -> np.ndarray:
    """``d(t) = max_x ||P^t(x, .) - pi||_TV`` for each t in ``ts`` (worst start)."""
    P = _as_matrix(P)
    pi = _as_dist(pi, P.shape[0])
    ts_arr = np.atleast_1d(np.asarray(ts, dtype=np.int64))
    if np.any(ts_arr < 0):
        raise ValueError("t must be >= 0")
    out = np.empty(ts_arr.shape[0])
    order = np.argsort(ts_arr)
    Pt = np.eye(P.shape[0])
    cur = 0
    for k in order:
        t = int(ts_arr[k])
        Pt = Pt @ np.linalg.matrix_power(P, t - cur)
        cur = t
        out[k] = 0.5 * np.abs(Pt - pi[None, :]).sum(axis=1).max()
    return out


def tv_bound_reversible(P: np.ndarray, pi: np.ndarray, ts: int | list[int] | np.ndarray) -> np.ndarray:
    """Upper bound on ``d(t)`` for a reversible chain: ``(1/2)(1-gap_*)^t sqrt((1-pi_min)/pi_min)``
    (Levin-Peres-Wilmer Thm 12.4 / eq. 12.13; the factor 1/2 converts the l2 bound to TV)."""
    lam = 1.0 - absolute_spectral_gap(P, pi)
    pi = _as_dist(pi)
    pmin = float(pi.min())
    ts_arr = np.atleast_1d(np.asarray(ts, dtype=np.float64))
    return 0.5 * lam**ts_arr * np.sqrt((1.0 - pmin) / pmin)


def is_irreducible(P: np.ndarray, tol: float = 0.0) -> bool:
    """True iff every state reaches every other state through entries ``> tol``."""
    P = _as_matrix(P)
    A = (P > tol).astype(np.float64)
    S = P.shape[0]
    R = np.eye(S) + A
    reach = np.eye(S)
    for _ in range(int(np.ceil(np.log2(max(S, 2)))) + 1):
        reach = np.minimum(reach @ R, 1.0)
        R = np.minimum(R @ R, 1.0)
    return bool(np.all(reach > 0))
