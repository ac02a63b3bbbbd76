"""Sequential t-test of Korattikara, Chen & Welling (2014, "K14") §4, Alg. 1, in Numba.

l_i = ll_i(theta') - ll_i(theta) (tempered log-likelihoods, so a temperature divides l_i and not mu0);
mu0 = (1/N) [log u - (log p0(theta') - log p0(theta)) - (log q(theta|theta') - log q(theta'|theta))].
Exact MH accepts iff mean_i l_i > mu0. The test draws data without replacement in stages of
min(m, N - n) points (a persistent permutation extended by partial Fisher-Yates: O(m) per stage, no
allocation), and after n points computes

    s = s_l / sqrt(n) * sqrt(1 - (n - 1)/(N - 1)),  s_l^2 = sample variance (ddof 1),
    t = (lbar - mu0) / s,

deciding (accept iff lbar > mu0) as soon as 1 - F_{t, n-1}(|t|) < eps, i.e. |t| > tcrit[n] with
tcrit[n] = F^{-1}_{t, n-1}(1 - eps). With n = N the decision is exact MH's (s = 0). Conventions for
cases the paper leaves undefined: no decision before n >= 2 (unless n = N); with s = 0 and n < N
(all drawn l_i equal) the test decides at once if lbar != mu0 (|t| = inf), and continues if
lbar == mu0 (0/0).

A per-stage boundary (Wang & Tsiatis 1987; K14 App. D) is the same test with ``tcrit[n]`` replaced by
G_0 (n/N)^(0.5 - alpha); :func:`tcrit_table` builds both.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.hotloop import NO_REFCOUNT, PREFETCH_AHEAD, ll_pair, log1pexp_diff, pair_z, prefetch_row
from samplers.streams import new_stream, uniform_at
from samplers.targets.tall import LOGISTIC, TallData

T_EXACT_MAX = 20_000  # df beyond this use the normal quantile (relative error < 1e-4 at z <= 4)


def tcrit_table(N: int, eps: float, boundary: str = "pocock", alpha: float = 0.5) -> np.ndarray:
    """``tcrit[n]`` (n = 0..N) for per-test threshold ``eps``.

    ``boundary="pocock"``: tcrit[n] = F^{-1}_{t,n-1}(1 - eps) (K14 §4; constant z-bound G).
    ``boundary="wang_tsiatis"``: tcrit[n] = F^{-1}_{t,n-1}(1 - eps) * (n/N)^(0.5 - alpha),
    alpha in [0.5, 1] (0.5 = Pocock, 1 = O'Brien-Fleming). Entries 0 and 1 are +inf (no decision).
    """
    if not (0.0 < eps < 0.5):
        raise ValueError(f"eps must be in (0, 0.5), got {eps!r}")
    if N < 1:
        raise ValueError(f"N must be >= 1, got {N!r}")
    if boundary not in ("pocock", "wang_tsiatis"):
        raise ValueError(f"boundary must be 'pocock' or 'wang_tsiatis', got {boundary!r}")
    if boundary == "wang_tsiatis" and not (0.5 <= alpha <= 1.0):
        raise ValueError(f"Wang-Tsiatis alpha must be in [0.5, 1], got {alpha!r}")
    tc = np.full(N + 1, np.inf)
    n = np.arange(2, N + 1)
    if n.size:
        from scipy import stats  # lazy: keeps `import samplers.registry` fast (warm start)

        df = n - 1
        vals = np.full(n.size, stats.norm.ppf(1.0 - eps))
        ex = df <= T_EXACT_MAX
        vals[ex] = stats.t.ppf(1.0 - eps, df[ex])
        if boundary == "wang_tsiatis":
            vals = vals * (n / N) ** (0.5 - alpha)
        tc[2:] = vals
    return tc


@njit(cache=True)
def draw_next(perm: np.ndarray, pos: int, rng) -> int:
    """Extend the uniformly random prefix ``perm[:pos]`` by one element (Fisher-Yates step)."""
    j = rng.integers(pos, perm.shape[0])
    tmp = perm[pos]
    perm[pos] = perm[j]
    perm[j] = tmp
    return perm[pos]


@njit(cache=True)
def mu0_of(N: int, log_u: float, dlogprior: float, lqr: float) -> float:
    """K14 mu0 = (1/N) log[u rho(t) q(t'|t) / (rho(t') q(t|t'))] with lqr = log q(t|t') - log q(t'|t)."""
    return (log_u - dlogprior - lqr) / N


@njit(cache=True, inline="always")
def li_arrays(kind: int, X, y, w, beta: float, nu: float, i: int, theta, theta_p, ops) -> float:
    """``l_i = ll_i(theta') - ll_i(theta)`` on the arrays, row i read once (:func:`samplers.hotloop.ll_pair`);
    logistic as one ``log1p`` of the increment (:func:`samplers.hotloop.log1pexp_diff`); ``ops`` selects a
    CUSTOM model's functions (the shipped kinds pass ``NoOps``)."""
    if kind == LOGISTIC:
        z0, z1 = pair_z(X, i, theta, theta_p)
        sg = -1.0 if y[i] > 0.5 else 1.0
        return -beta * log1pexp_diff(sg * z0, sg * (z1 - z0))
    a, b = ll_pair(kind, X, y, w, beta, nu, i, theta, theta_p, ops)
    return b - a


@njit(cache=True, **NO_REFCOUNT)
def _ttest_core(kind, X, y, w, beta, nu, ops, theta, theta_p, mu0, perm, m, tcrit, seed, gamma):
    """The test on the arrays (no reference counting: scalars in and out, nothing allocated)."""
    N = X.shape[0]
    n = 0
    c = 0.0  # shift of the running sums: the first l_i (s1, s2 = sums of l_i - c and its square)
    s1 = 0.0
    s2 = 0.0
    z = seed + gamma  # counter of the stream's uniform 0
    while True:
        k = min(m, N - n)
        # extend the uniformly random prefix perm[:n] by the stage's k data (Fisher-Yates steps)
        for q in range(n, n + k):
            j = q + int(uniform_at(z) * (N - q))
            z += gamma
            if j >= N:
                j = N - 1
            tmp = perm[q]
            perm[q] = perm[j]
            perm[j] = tmp
        for q in range(n, min(n + PREFETCH_AHEAD, n + k)):
            prefetch_row(X, perm[q], False)
        for q in range(n, n + k):
            if q + PREFETCH_AHEAD < n + k:
                prefetch_row(X, perm[q + PREFETCH_AHEAD], False)
            lv = li_arrays(kind, X, y, w, beta, nu, perm[q], theta, theta_p, ops)
            if q == 0:
                c = lv
            a = lv - c
            s1 += a
            s2 += a * a
        n += k
        mean = c + s1 / n
        diff = mean - mu0
        if n >= N:
            return diff > 0.0, n
        if n >= 2:
            var = (s2 - s1 * s1 / n) / (n - 1)
            if var < 0.0:
                var = 0.0
            sd = math.sqrt(var / n) * math.sqrt(1.0 - (n - 1.0) / (N - 1.0))
            if sd > 0.0:
                if abs(diff) > tcrit[n] * sd:
                    return diff > 0.0, n
            elif diff != 0.0:
                return diff > 0.0, n


@njit(cache=True)
def seq_ttest(
    t: TallData,
    theta: np.ndarray,
    theta_p: np.ndarray,
    mu0: float,
    perm: np.ndarray,
    m: int,
    tcrit: np.ndarray,
    rng,
):
    """Run the K14 sequential test. Returns (accept, n data used).

    One Generator draw opens the test's stream (:func:`samplers.streams.new_stream`); each datum then costs
    a stream uniform for its Fisher-Yates step, ``l_i`` on the arrays and two additions into shifted
    sums (mean and variance at the end of a stage only); a stage's rows are prefetched
    ``PREFETCH_AHEAD`` data ahead. Measured on MNIST 7v9 (``bench.experiments.approx.austerity_cost``):
    the generic path (``rng.integers``, two ``loglik_i`` calls on the NamedTuple, Welford) costs
    ~6x this one per datum."""
    seed, gamma = new_stream(rng)
    return _ttest_core(
        t.kind, t.X, t.y, t.w, t.beta, t.nu, t.ops, theta, theta_p, mu0, perm, m, tcrit, seed, gamma
    )


@njit(cache=True, **NO_REFCOUNT)
def _full_pass_core(kind, X, y, w, beta, nu, ops, theta, theta_p):
    """The pass on the arrays (no reference counting per datum, as :func:`_ttest_core`); shifted sums."""
    N = X.shape[0]
    c = li_arrays(kind, X, y, w, beta, nu, 0, theta, theta_p, ops)  # shift: the first l_i
    s1 = 0.0
    s2 = 0.0
    mx = abs(c)
    for i in range(1, N):
        lv = li_arrays(kind, X, y, w, beta, nu, i, theta, theta_p, ops)
        a = lv - c
        s1 += a
        s2 += a * a
        if abs(lv) > mx:
            mx = abs(lv)
    mean = s1 / N
    var = s2 / N - mean * mean
    return c + mean, math.sqrt(var if var > 0.0 else 0.0), mx


@njit(cache=True)
def full_pass_stats(t: TallData, theta: np.ndarray, theta_p: np.ndarray):
    """(mean l_i, population sd of l_i, max |l_i|) over all N data (one O(N) pass)."""
    return _full_pass_core(t.kind, t.X, t.y, t.w, t.beta, t.nu, t.ops, theta, theta_p)
