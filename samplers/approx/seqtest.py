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

from samplers.targets.tall import TallData, loglik_i

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
    """Run the K14 sequential test. Returns (accept, n data used)."""
    N = t.X.shape[0]
    n = 0
    mean = 0.0
    m2 = 0.0
    while True:
        k = min(m, N - n)
        for _ in range(k):
            i = draw_next(perm, n, rng)
            lv = loglik_i(t, i, theta_p) - loglik_i(t, i, theta)
            n += 1
            dlt = lv - mean
            mean += dlt / n
            m2 += dlt * (lv - mean)
        diff = mean - mu0
        if n >= N:
            return diff > 0.0, n
        if n >= 2:
            var = m2 / (n - 1)
            if var < 0.0:
                var = 0.0
            sd = math.sqrt(var / n) * math.sqrt(1.0 - (n - 1.0) / (N - 1.0))
            if sd > 0.0:
                if abs(diff) > tcrit[n] * sd:
                    return diff > 0.0, n
            elif diff != 0.0:
                return diff > 0.0, n


@njit(cache=True)
def full_pass_stats(t: TallData, theta: np.ndarray, theta_p: np.ndarray):
    """(mean l_i, population sd of l_i, max |l_i|) over all N data (one O(N) pass)."""
    N = t.X.shape[0]
    mean = 0.0
    m2 = 0.0
    mx = 0.0
    for i in range(N):
        lv = loglik_i(t, i, theta_p) - loglik_i(t, i, theta)
        dlt = lv - mean
        mean += dlt / (i + 1)
        m2 += dlt * (lv - mean)
        if abs(lv) > mx:
            mx = abs(lv)
    var = m2 / N
    if var < 0.0:
        var = 0.0
    return mean, math.sqrt(var), mx
