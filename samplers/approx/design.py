"""Error analysis and optimal design of the K14 sequential test (Korattikara et al. 2014 §5, App. A, B, D).

Model (K14 App. A, Prop. 2): with batches drawn without replacement and s_l = sigma_l, the z-statistics
z_j = (lbar_j - mu0)/sigma_{lbar,j} of the cumulative fractions pi_j = n_j/N form a Gaussian random walk
z_0 = 0, z_j | z_{j-1} ~ N(a_j mu_std + b_j z_{j-1}, v_j) with

    a_j = (pi_j - pi_{j-1}) / ((1 - pi_{j-1}) sqrt(pi_j (1 - pi_j))),
    b_j = sqrt(pi_{j-1} (1 - pi_j) / (pi_j (1 - pi_{j-1}))),  v_j = (pi_j - pi_{j-1}) / (pi_j (1 - pi_{j-1})),

mu_std = (mu - mu0) sqrt(N - 1)/sigma_l. The test stops at the first j with |z_j| > G_j (Pocock:
G_j = G = Phi^{-1}(1 - eps); Wang-Tsiatis: G_j = G_0 pi_j^(0.5 - alpha)); at pi_J = 1 it is exact.
:func:`seq_dp` is the dynamic program of Chen's ``seq_test_dynprog.m`` (the K14 authors' MATLAB code): L bins
on each [-G_j, G_j], exit masses by the normal CDF, carried mass w N(centre; mean, v_j) renormalised to the
unexited total (stopped early once the unexited mass is < 1e-15). Each bin's kernel is evaluated only on
the bins within max(12 sd, bin width) of its mean (the others weigh < e^-54 of the nearest): O(L^2 J) while
sqrt(v_j) is comparable with the bin width, O(L J) once v_j ~ 1/j is small (most stages when N/m is large:
7-13x faster at N = 1.95M, m = 50, eps = .001-.05, equal to the dense sum to the last bit with Pocock
bounds). mu_std = 0 counts as "accept" (so its error is the early-reject mass); the error is symmetric in
mu_std.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit

DEFAULT_EPS_GRID = (0.001, 0.005, 0.01, 0.05, 0.1, 0.2)  # S17 App. C.2.1
DEFAULT_M_GRID = (50, 100, 150, 200, 250, 300, 350, 400, 450, 500)
WINDOW_SD = 12.0  # seq_dp's Gaussian kernel is evaluated within 12 sd of its mean (e^-72)


@njit(cache=True)
def _ncdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@njit(cache=True)
def seq_dp(mu_std: float, pis: np.ndarray, Gs: np.ndarray, L: int):
    """Error probability, expected number of stages E[j'] and expected data fraction pi_bar of the
    sequential test with cumulative fractions ``pis`` (increasing, last = 1 for a complete test) and
    z-bounds ``Gs`` (K14 App. A, eqs. 21-22). Returns (err, Ej, pibar, stop_probs)."""
    J = pis.shape[0]
    mu = abs(mu_std)  # symmetric; mu_std = 0 counts as accept
    stop = np.zeros(J)
    err = 0.0
    prev = 0.0
    cen_prev = np.zeros(1)
    mass_prev = np.ones(1)
    cen = np.empty(L)
    for j in range(J):
        pj = pis[j]
        rem = 0.0
        for k in range(mass_prev.shape[0]):
            rem += mass_prev[k]
        if rem < 1e-15:
            break
        if pj >= 1.0:  # all data used: exact decision
            stop[j] = rem
            break
        a = (pj - prev) / ((1.0 - prev) * math.sqrt(pj * (1.0 - pj)))
        b = math.sqrt(prev * (1.0 - pj) / (pj * (1.0 - prev)))
        sd = math.sqrt((pj - prev) / (pj * (1.0 - prev)))
        G = Gs[j]
        w = 2.0 * G / L
        for k in range(L):
            cen[k] = -G + w * (k + 0.5)
        new_mass = np.zeros(L)
        lo_tot = 0.0
        hi_tot = 0.0
        inner_tot = 0.0
        last = j == J - 1
        for k in range(mass_prev.shape[0]):
            pm = mass_prev[k]
            if pm == 0.0:
                continue
            mean = a * mu + b * cen_prev[k]
            if last:  # incomplete test (pi_J < 1): the sign of z_J decides
                plo = _ncdf((0.0 - mean) / sd)
                lo_tot += pm * plo
                hi_tot += pm * (1.0 - plo)
                continue
            plo = _ncdf((-G - mean) / sd)
            phi_ = 1.0 - _ncdf((G - mean) / sd)
            lo_tot += pm * plo
            hi_tot += pm * phi_
            inner_tot += pm * (1.0 - plo - phi_)
            c0 = pm * w / (sd * math.sqrt(2.0 * math.pi))
            # bins within max(WINDOW_SD sd, w) of the mean: the rest weigh < e^-54 of the nearest bin
            h = max(WINDOW_SD * sd, w)
            qlo = max(0, int(math.floor((mean - h + G) / w - 0.5)))
            qhi = min(L - 1, int(math.ceil((mean + h + G) / w - 0.5)))
            for q in range(qlo, qhi + 1):
                r = (cen[q] - mean) / sd
                new_mass[q] += c0 * math.exp(-0.5 * r * r)
        s = 0.0
        for q in range(L):
            s += new_mass[q]
        if s > 0.0:
            for q in range(L):
                new_mass[q] *= inner_tot / s
        stop[j] = lo_tot + hi_tot
        err += lo_tot
        cen_prev = cen.copy()
        mass_prev = new_mass
        prev = pj
    Ej = 0.0
    pibar = 0.0
    for j in range(J):
        Ej += (j + 1) * stop[j]
        pibar += pis[j] * stop[j]
    return err, Ej, pibar, stop


def stage_fractions(N: int, m: int) -> np.ndarray:
    """pi_j = min(j m, N)/N, j = 1..ceil(N/m)."""
    if m < 1 or N < 1:
        raise ValueError(f"need N >= 1 and m >= 1, got N={N}, m={m}")
    J = -(-N // m)
    return np.minimum(np.arange(1, J + 1) * m, N) / N


def boundaries(
    pis: np.ndarray, eps: float, boundary: str = "pocock", alpha: float = 0.5, G0: float | None = None
) -> np.ndarray:
    """z-bounds G_j: Pocock G = Phi^{-1}(1 - eps) (K14 prints "Phi(1 - eps)"; Chen's code norminv);
    Wang-Tsiatis G_j = G_0 pi_j^(0.5 - alpha) with G_0 = Phi^{-1}(1 - eps) unless given."""
    if not (0.0 < eps < 0.5):
        raise ValueError(f"eps must be in (0, 0.5), got {eps!r}")
    from scipy import stats  # lazy: keeps `import samplers.registry` fast (warm start)

    G = float(stats.norm.ppf(1.0 - eps)) if G0 is None else float(G0)
    if boundary == "pocock":
        return np.full(pis.shape[0], G)
    if boundary == "wang_tsiatis":
        if not 0.5 <= alpha <= 1.0:
            raise ValueError(f"Wang-Tsiatis alpha must be in [0.5, 1], got {alpha!r}")
        return G * pis ** (0.5 - alpha)
    raise ValueError(f"boundary must be 'pocock' or 'wang_tsiatis', got {boundary!r}")


def test_error(
    mu_std: float, N: int, m: int, eps: float, L: int = 100, boundary: str = "pocock", alpha: float = 0.5
) -> tuple[float, float, float]:
    """(error E, expected stages E[j'], expected data fraction pi_bar) for one design."""
    pis = stage_fractions(N, m)
    err, Ej, pibar, _ = seq_dp(float(mu_std), pis, boundaries(pis, eps, boundary, alpha), int(L))
    return float(err), float(Ej), float(pibar)


def dp_curve(
    N: int, m: int, eps: float, mu_grid, L: int = 100, boundary: str = "pocock", alpha: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """(E, pi_bar) of one design at every |mu_std| of ``mu_grid`` (one DP a point)."""
    pis = stage_fractions(N, int(m))
    Gs = boundaries(pis, eps, boundary, alpha)
    out = np.array([seq_dp(float(z), pis, Gs, int(L))[:3] for z in np.asarray(mu_grid, float)])
    return out[:, 0].copy(), out[:, 2].copy()


def design_table(
    N: int, m_grid=DEFAULT_M_GRID, eps_grid=DEFAULT_EPS_GRID, mu_grid: np.ndarray | None = None, L: int = 100
) -> dict:
    """E and pi_bar on a |mu_std| grid for every design (m, eps) (Pocock), as S17's precomputed
    ``*_D4001_*.mat`` tables (there 4001 points on [-10, 10]; here [0, 10] by symmetry)."""
    mu_grid = np.linspace(0.0, 10.0, 201) if mu_grid is None else np.asarray(mu_grid, float)
    designs = [(int(m), float(e)) for m in m_grid for e in eps_grid if int(m) <= N]
    if not designs:
        raise ValueError("no design with m <= N")
    E = np.empty((len(designs), mu_grid.size))
    P = np.empty_like(E)
    for d, (m, e) in enumerate(designs):
        E[d], P[d] = dp_curve(N, m, e, mu_grid, L)
    return {
        "N": N,
        "designs": designs,
        "m": np.array([d[0] for d in designs], np.int64),
        "eps": np.array([d[1] for d in designs]),
        "mu_grid": mu_grid,
        "E": E,
        "pibar": P,
    }


def worst_case_grid(
    N: int,
    m_grid=DEFAULT_M_GRID,
    eps_grid=DEFAULT_EPS_GRID,
    L: int = 100,
    boundary: str = "pocock",
    alphas=(0.5,),
) -> list[tuple]:
    """(m, eps, alpha, E, E[j'], expected data) at mu_std = 0 for every design on the grid (m <= N)."""
    rows = []
    for m in m_grid:
        if m > N:
            continue
        pis = stage_fractions(N, int(m))
        for e in eps_grid:
            for al in alphas:
                Gs = boundaries(pis, float(e), boundary, float(al))
                err, Ej, pibar, _ = seq_dp(0.0, pis, Gs, int(L))
                rows.append((int(m), float(e), float(al), float(err), float(Ej), float(pibar * N)))
    return rows


def worst_case_design(
    N: int,
    bound: float,
    m_grid=DEFAULT_M_GRID,
    eps_grid=DEFAULT_EPS_GRID,
    L: int = 100,
    boundary: str = "pocock",
    alphas=(0.5,),
    grid: list | None = None,
) -> dict:
    """K14 eq. 8 / S17 App. C.2.1: minimise the expected data m E[j'] at mu_std = 0 subject to
    E(0, m, eps) < bound (strict, as the authors' code). Grid over (m, eps[, alpha]); ``grid`` = the
    rows of :func:`worst_case_grid` for these settings (several bounds, one set of DPs)."""
    if not bound > 0:
        raise ValueError(f"bound must be > 0, got {bound!r}")
    rows = worst_case_grid(N, m_grid, eps_grid, L, boundary, alphas) if grid is None else grid
    best = None
    for row in rows:
        if row[3] < bound and (best is None or row[5] < best[5]):
            best = row
    if best is None:
        raise ValueError(f"no design on the grid has worst-case error < {bound}")
    return {
        "m": best[0],
        "eps": best[1],
        "alpha": best[2],
        "E": best[3],
        "Ej": best[4],
        "data": best[5],
        "grid": rows,
    }


@functools.lru_cache(maxsize=16)
def _leggauss(nq: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(nq)


def _pair_terms(mu: float, sigma_l: float, k: float, N: int, nq: int = 64):
    """Gauss-Legendre nodes over u split at P_a; returns (u, weights, mu_std(u), P_a)."""
    Pa = min(1.0, math.exp(min(700.0, N * mu + k)))
    x, w = _leggauss(nq)
    us, ws = [], []
    for a, b in ((0.0, Pa), (Pa, 1.0)):
        if b > a:
            us.append(0.5 * (b - a) * x + 0.5 * (a + b))
            ws.append(0.5 * (b - a) * w)
    u = np.concatenate(us)
    wt = np.concatenate(ws)
    mu0 = (np.log(u) - k) / N
    mu_std = (mu - mu0) * math.sqrt(N - 1) / sigma_l if sigma_l > 0 else np.sign(mu - mu0) * 1e3
    return u, wt, mu_std, Pa


def acceptance_error(
    mu: float,
    sigma_l: float,
    k: float,
    N: int,
    m: int,
    eps: float,
    L: int = 100,
    nq: int = 64,
    table: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[float, float]:
    """K14 §5.1 / App. B: Delta = P_{a,eps} - P_a = int_{P_a}^1 E du - int_0^{P_a} E du for a pair
    summarised by mu (mean l_i), sigma_l and k = log p0(t')/p0(t) + log q(t|t')/q(t'|t) (so that
    mu0(u) = (log u - k)/N), by Gauss-Legendre quadrature; also returns E_u[pi_bar]. ``table`` =
    (|mu_std| grid, E values) interpolates instead of running the DP at each node."""
    u, wt, ms, Pa = _pair_terms(mu, sigma_l, k, N, nq)
    if table is None:
        E, pb = dp_curve(N, m, eps, np.abs(ms), L)
    else:
        grid, Et, Pt = table
        E = np.interp(np.abs(ms), grid, Et)
        pb = np.interp(np.abs(ms), grid, Pt)
    sign = np.where(u > Pa, 1.0, -1.0)
    return float(np.sum(wt * sign * E)), float(np.sum(wt * pb))


def average_design(
    N: int,
    bound: float,
    pairs: np.ndarray,
    m_grid=DEFAULT_M_GRID,
    eps_grid=DEFAULT_EPS_GRID,
    L: int = 100,
    table: dict | None = None,
) -> dict:
    """K14 eq. 7: minimise the mean over pairs (rows of ``pairs`` = (mu, sigma_l, k)) of E_u[pi_bar]
    subject to mean |Delta| <= bound; grid search. Returns the best design and the whole grid."""
    if not bound > 0:
        raise ValueError(f"bound must be > 0, got {bound!r}")
    pairs = np.atleast_2d(np.asarray(pairs, float))
    tab = table if table is not None else design_table(N, m_grid, eps_grid, L=L)
    rows = []
    best = None
    for d, (m, e) in enumerate(tab["designs"]):
        dl, us = [], []
        for mu, sl, k in pairs:
            D_, U_ = acceptance_error(
                mu, sl, k, N, m, e, L, table=(tab["mu_grid"], tab["E"][d], tab["pibar"][d])
            )
            dl.append(abs(D_))
            us.append(U_)
        row = (m, e, float(np.mean(dl)), float(np.mean(us)) * N)
        rows.append(row)
        if row[2] <= bound and (best is None or row[3] < best[3]):
            best = row
    if best is None:
        raise ValueError(f"no design on the grid has mean |Delta| <= {bound}")
    return {"m": best[0], "eps": best[1], "mean_abs_delta": best[2], "data": best[3], "grid": rows}
