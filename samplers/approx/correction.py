"""Correction distribution C_sigma of Seita et al. (2017, "S17") §4, App. C.1 and its sampler.

Goal: a density C_sigma with N(0, sigma^2) * C_sigma = logistic. Discretisation (S17 §4,
``code/genNormToLog.ssc``): V = range (20), X_i = i V/n (i = -2n..2n), Y_j = j V/n (j = -n..n),
M_ij = Phi((X_i - Y_j)/sigma), v_i = S(X_i) (logistic CDF); u = (M^T M + lambda I)^{-1} M^T v, negative
entries clipped to 0; L_inf = max_i |M max(u, 0) - v|_i (Table 3). Here n is the paper's "N" (grid
size, 4000 in the experiments); ``lam`` its lambda.

Because M is Toeplitz (M_ij = f(i - j), f(t) = Phi(t V/(n sigma))), M^T M is filled in O(n^2) by a
recurrence along its diagonals and M^T v, M u by O(n^2) loops; only the (2n+1)-square SPD solve is
cubic (about 20 s at n = 4000).

Sampling (all S17 code: U ~ U(0,1), binary search in cumsum(u), interpolation): our reading spreads
the mass u_j uniformly on the cell [Y_j - V/(2n), Y_j + V/(2n)] (centred, so no half-cell shift), i.e.
X_corr is a histogram density; the masses are renormalised to sum 1 (the clipped solution sums to
1.000886 at n = 4000, sigma = 1, lambda = 10).
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit


class Correction(NamedTuple):
    """Tabulated X_corr: cell centres ``y`` (2n+1,), cell width ``h``, normalised masses ``p`` and their
    cumulative sums ``cdf`` (cdf[-1] = 1); ``sigma`` = sd of the Gaussian it complements; ``linf`` =
    the Table 3 error of the clipped (unnormalised) solution; ``mass`` = its total mass."""

    y: np.ndarray
    h: float
    p: np.ndarray
    cdf: np.ndarray
    sigma: float
    linf: float
    mass: float


@njit(cache=True)
def _mtm(f: np.ndarray, n: int) -> np.ndarray:
    """A = M^T M with M_ij = f[i - j + 3n] (i in -2n..2n, j in -n..n); f indexed by t + 3n."""
    J = 2 * n + 1
    A = np.empty((J, J))
    off = 3 * n
    for d in range(J):  # k = j + d
        # first entry j = -n, k = -n + d
        s = 0.0
        j0 = -n
        k0 = -n + d
        for i in range(-2 * n, 2 * n + 1):
            s += f[i - j0 + off] * f[i - k0 + off]
        A[0, d] = s
        A[d, 0] = s
        for r in range(1, J - d):
            j = -n + r - 1
            k = j + d
            s += f[-2 * n - 1 - j + off] * f[-2 * n - 1 - k + off] - f[2 * n - j + off] * f[2 * n - k + off]
            A[r, r + d] = s
            A[r + d, r] = s
    return A


@njit(cache=True)
def _mt_vec(f: np.ndarray, n: int, v: np.ndarray) -> np.ndarray:
    J = 2 * n + 1
    out = np.zeros(J)
    off = 3 * n
    for jj in range(J):
        j = jj - n
        s = 0.0
        for ii in range(4 * n + 1):
            s += f[ii - 2 * n - j + off] * v[ii]
        out[jj] = s
    return out


@njit(cache=True)
def _m_vec(f: np.ndarray, n: int, u: np.ndarray) -> np.ndarray:
    out = np.zeros(4 * n + 1)
    off = 3 * n
    for ii in range(4 * n + 1):
        i = ii - 2 * n
        s = 0.0
        for jj in range(2 * n + 1):
            s += f[i - (jj - n) + off] * u[jj]
        out[ii] = s
    return out


def solve_correction(
    n: int = 4000, V: float = 20.0, lam: float = 10.0, sigma: float = 1.0
) -> tuple[np.ndarray, np.ndarray, float]:
    """S17 eq. 15 on the grid: returns (Y, clipped u, L_inf error of the clipped solution)."""
    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"grid size n must be an integer >= 2, got {n!r}")
    if not V > 0:
        raise ValueError(f"range V must be > 0, got {V!r}")
    if not lam > 0:
        raise ValueError(f"lambda must be > 0, got {lam!r}")
    if not 0.0 < sigma < math.pi / math.sqrt(3.0):
        raise ValueError(f"sigma must be in (0, pi/sqrt(3) ~ 1.814), got {sigma!r}")
    from scipy import linalg, special  # lazy: keeps `import samplers.registry` fast

    h = V / n
    t = np.arange(-3 * n, 3 * n + 1)
    f = special.ndtr(t * h / sigma)
    X = np.arange(-2 * n, 2 * n + 1) * h
    v = special.expit(X)
    A = _mtm(f, n)
    A[np.diag_indices_from(A)] += lam
    b = _mt_vec(f, n, v)
    u = linalg.solve(A, b, assume_a="pos", check_finite=False)
    u = np.maximum(u, 0.0)
    linf = float(np.max(np.abs(_m_vec(f, n, u) - v)))
    return np.arange(-n, n + 1) * h, u, linf


def _atomic_save(path: Path, **arrays) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz")
    os.close(fd)
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def build_correction(
    n: int = 4000,
    V: float = 20.0,
    lam: float = 10.0,
    sigma: float = 1.0,
    cache_dir: str | os.PathLike | None = None,
) -> Correction:
    """C_sigma as a :class:`Correction` (solved once; cached as .npz in ``cache_dir`` if given)."""
    path = None
    if cache_dir is not None:
        path = Path(cache_dir) / f"correction_n{n}_V{V:g}_lam{lam:g}_s{sigma:g}.npz"
        if path.exists():
            z = np.load(path)
            return _make(z["y"], z["u"], float(z["linf"]), sigma, V / n)
    y, u, linf = solve_correction(n, V, lam, sigma)
    if path is not None:
        _atomic_save(path, y=y, u=u, linf=np.array(linf))
    return _make(y, u, linf, sigma, V / n)


def _make(y, u, linf, sigma, h) -> Correction:
    mass = float(u.sum())
    if not mass > 0:
        raise ValueError("correction solution has no positive mass")
    p = u / mass
    cdf = np.cumsum(p)
    cdf[-1] = 1.0
    return Correction(np.asarray(y, float), float(h), p, cdf, float(sigma), float(linf), mass)


@njit(cache=True)
def sample_xcorr(y: np.ndarray, h: float, cdf: np.ndarray, U: float) -> float:
    """Inverse-CDF draw of X_corr: cell j with cdf[j-1] <= U < cdf[j], uniform within the cell."""
    lo = 0
    hi = cdf.shape[0] - 1
    while lo < hi:  # smallest j with cdf[j] > U
        mid = (lo + hi) // 2
        if cdf[mid] > U:
            hi = mid
        else:
            lo = mid + 1
    c0 = cdf[lo - 1] if lo > 0 else 0.0
    pj = cdf[lo] - c0
    frac = (U - c0) / pj if pj > 0 else 0.5
    return y[lo] - 0.5 * h + h * frac
