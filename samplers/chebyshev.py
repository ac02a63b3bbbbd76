"""Chebyshev interpolation machinery in Numba for fast inverse transform sampling on [a, b]
(Zhang & De Sa 2019 §3, Alg. 3 / App. C.1 Alg. 5; Olver & Townsend 2013 "FITS"; Trefethen ATAP ch. 3, 8).

* nodes: the m + 1 Chebyshev points of the second kind t_j = cos(pi j / m) (incl. endpoints), mapped to
  [a, b] — the point set of ATAP Thm. 8.2, which Thm. 3 cites;
* coefficients: the DCT-I of the node values, c_k = (2/m) sum''_j f_j cos(pi j k / m) with the first
  and last terms (and c_0, c_m) halved (direct O(m^2) transform: m <= ~50 here);
* evaluation: Clenshaw's recurrence; integration: the antiderivative in Chebyshev coefficients
  (int T_k = T_{k+1}/(2(k+1)) - T_{k-1}/(2(k-1))), so the CDF is a polynomial;
* inversion: bisection on the CDF (robust, as in FITS).

Everything works on caller-provided buffers (no allocation per call).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def cheb_nodes(m: int, a: float, b: float, out: np.ndarray) -> None:
    """out[:m+1] = Chebyshev points of the 2nd kind mapped to [a, b] (out[0] = b, out[m] = a)."""
    if m == 0:
        out[0] = 0.5 * (a + b)
        return
    for j in range(m + 1):
        t = math.cos(math.pi * j / m)
        out[j] = a + 0.5 * (t + 1.0) * (b - a)


@njit(cache=True)
def cheb_coeffs(vals: np.ndarray, m: int, out: np.ndarray) -> None:
    """Coefficients out[:m+1] of the degree-m interpolant through vals[:m+1] at the 2nd-kind points."""
    if m == 0:
        out[0] = vals[0]
        return
    for k in range(m + 1):
        s = 0.5 * (vals[0] + vals[m] * (1.0 if k % 2 == 0 else -1.0))
        for j in range(1, m):
            s += vals[j] * math.cos(math.pi * j * k / m)
        out[k] = 2.0 * s / m
    out[0] *= 0.5
    out[m] *= 0.5


@njit(cache=True)
def cheb_eval_t(c: np.ndarray, n: int, t: float) -> float:
    """Clenshaw: sum_{k<n} c_k T_k(t), t in [-1, 1]."""
    b1 = 0.0
    b2 = 0.0
    for k in range(n - 1, 0, -1):
        b0 = c[k] + 2.0 * t * b1 - b2
        b2 = b1
        b1 = b0
    return c[0] + t * b1 - b2


@njit(cache=True)
def to_t(v: float, a: float, b: float) -> float:
    return 2.0 * (v - a) / (b - a) - 1.0


@njit(cache=True)
def cheb_eval(c: np.ndarray, n: int, v: float, a: float, b: float) -> float:
    """Interpolant with n coefficients evaluated at v in [a, b]."""
    return cheb_eval_t(c, n, to_t(v, a, b))


@njit(cache=True)
def cheb_integral(c: np.ndarray, n: int, out: np.ndarray) -> None:
    """out[:n+1] = coefficients (in t) of G(t) = int_{-1}^t p, p = sum_{k<n} c_k T_k (so G(-1) = 0)."""
    for k in range(n + 1):
        out[k] = 0.0
    for k in range(1, n + 1):
        cm = c[k - 1] if k - 1 < n else 0.0
        cp = c[k + 1] if k + 1 < n else 0.0
        if k == 1:
            out[1] = cm - 0.5 * cp
        else:
            out[k] = (cm - cp) / (2.0 * k)
    s = 0.0
    for k in range(1, n + 1):
        s += out[k] * (1.0 if k % 2 == 0 else -1.0)
    out[0] = -s


@njit(cache=True)
def cheb_invert_cdf(G: np.ndarray, n: int, u: float, a: float, b: float, iters: int = 60) -> float:
    """Solve G(t) = u G(1) for t by bisection (G from :func:`cheb_integral`, n = its length);
    returns the point in [a, b]."""
    total = cheb_eval_t(G, n, 1.0)
    target = u * total
    lo = -1.0
    hi = 1.0
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if cheb_eval_t(G, n, mid) < target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    t = 0.5 * (lo + hi)
    return a + 0.5 * (t + 1.0) * (b - a)


@njit(cache=True)
def guard_positive(c: np.ndarray, n: int, n_check: int, rel: float) -> float:
    """Practical guard (not in the paper, whose theory assumes a (1 +- C)-accurate interpolant): if the
    interpolant dips below rel * max on an ``n_check``-point uniform grid of [-1, 1], raise c_0 so that
    min >= rel * max there.
    Returns the shift added (0 if none). The proposal is then this shifted polynomial, which the
    MH correction uses consistently."""
    mn = np.inf
    mx = -np.inf
    for j in range(n_check):
        t = -1.0 + 2.0 * j / (n_check - 1)
        f = cheb_eval_t(c, n, t)
        if f < mn:
            mn = f
        if f > mx:
            mx = f
    floor = rel * max(mx, 0.0)
    if mn < floor:
        shift = floor - mn
        c[0] += shift
        return shift
    return 0.0


def interpolate(f, m: int, a: float = -1.0, b: float = 1.0) -> np.ndarray:
    """Coefficients of the degree-m interpolant of a vectorised Python function ``f`` on [a, b]
    (verification / tests helper)."""
    if m < 0 or not (b > a):
        raise ValueError("need m >= 0 and b > a")
    nodes = np.empty(m + 1)
    cheb_nodes(m, float(a), float(b), nodes)
    vals = np.ascontiguousarray(f(nodes), dtype=np.float64)
    c = np.empty(m + 1)
    cheb_coeffs(vals, m, c)
    return c


def evaluate(c: np.ndarray, v, a: float = -1.0, b: float = 1.0) -> np.ndarray:
    """Vectorised evaluation of an interpolant (tests helper)."""
    v = np.atleast_1d(np.asarray(v, dtype=np.float64))
    return np.array([cheb_eval(c, c.shape[0], float(x), float(a), float(b)) for x in v])
