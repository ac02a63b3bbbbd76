"""AustereMH (Korattikara, Chen & Welling 2014, Alg. 1) and its variants, in Numba.

* ``austere_mh_c``  random-walk proposal + the K14 sequential t-test (:func:`seq_ttest`) with a fixed
  design (m, eps) — chosen beforehand (e.g. the worst-case design, S17 "AustereMH(c)").
* ``austere_mh_nc`` S17 §6 / App. C.2.1 non-conservative variant: every iteration computes the exact
  mu_std = (mu - mu0) sqrt(N-1)/sigma_l from a FULL-DATA pass, snaps |mu_std| to the nearest point of a
  precomputed DP table and picks the design (m, eps) of minimal expected data with E(mu_std) < bound
  (the minimal-error design if none qualifies); the test then runs with it. The full pass is reported
  as extra data touched (trace 0 = N per iteration with an in-support proposal).
* ``sgld_austere``  K14 §6.4: SGLD proposal theta' ~ N(theta + sigma^2/2 g_B(theta), sigma^2) with a
  minibatch B of size b, corrected by the approximate MH test; q uses the same B in both directions.

Costs per iteration: ``n_evals`` = data points whose l_i the test evaluated (sgld_austere: plus the 2b
per-datum gradient evaluations of g_B(theta), g_B(theta')); trace 0 = data points of a full-data pass
(0 for the c variant and sgld_austere). The log prior is exact. Proposals outside the support are
rejected (one uniform consumed).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.approx.seqtest import full_pass_stats, mu0_of, seq_ttest
from samplers.proposals import log_q_ratio, propose
from samplers.targets.tall import TallData, grad_estimate, in_support, log_prior


# ----------------------------------------------------------------------------- AustereMH (c)
@njit(cache=True)
def austere_init(t: TallData, theta0: np.ndarray):
    return theta0.copy(), np.arange(t.X.shape[0])


@njit(cache=True)
def austere_step(
    t: TallData, theta, perm, prop: int, sigma: float, h: float, K: int, m: int, tcrit, rng, theta_p, g
):
    """One AustereMH transition in place. Returns (accepted, test data used, full-pass data)."""
    propose(prop, theta, g, sigma, h, K, rng, theta_p)
    if not in_support(t, theta_p):
        rng.random()
        return False, 0, 0
    u = rng.random()
    dlp = log_prior(t, theta_p) - log_prior(t, theta)
    lqr = log_q_ratio(prop, theta, theta_p, g, g, sigma, h, K)
    mu0 = mu0_of(t.X.shape[0], math.log(u), dlp, lqr)
    acc, n = seq_ttest(t, theta, theta_p, mu0, perm, m, tcrit, rng)
    if acc:
        theta[:] = theta_p
    return acc, n, 0


@njit(cache=True)
def austere_sample(
    t: TallData,
    theta,
    perm,
    n_iter: int,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    m: int,
    tcrit,
    rng,
    thin: int,
):
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    full = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    g = np.zeros(d)
    for it in range(n_iter):
        a, ne, nf = austere_step(t, theta, perm, prop, sigma, h, K, m, tcrit, rng, theta_p, g)
        acc[it] = a
        nev[it] = ne
        full[it] = nf
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, full


# ----------------------------------------------------------------------------- AustereMH (nc)
@njit(cache=True)
def choose_design(E_tab, P_tab, mu_grid, mu_std: float, bound: float) -> int:
    """Index of the design with least expected data among those with E(|mu_std|) < bound (nearest
    grid point); the least-error design if none qualifies."""
    a = abs(mu_std)
    K = mu_grid.shape[0]
    if a >= mu_grid[K - 1]:
        k = K - 1
    else:
        step = mu_grid[1] - mu_grid[0]
        k = int(math.floor(a / step + 0.5))
        if k > K - 1:
            k = K - 1
    best = -1
    bestp = np.inf
    beste = -1
    minerr = np.inf
    for dd in range(E_tab.shape[0]):
        e = E_tab[dd, k]
        if e < bound and P_tab[dd, k] < bestp:
            bestp = P_tab[dd, k]
            best = dd
        if e < minerr:
            minerr = e
            beste = dd
    if best < 0:
        return beste
    return best


@njit(cache=True)
def austere_nc_step(
    t: TallData,
    theta,
    perm,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    bound: float,
    m_arr,
    eps_idx,
    tcrit_tab,
    E_tab,
    P_tab,
    mu_grid,
    rng,
    theta_p,
    g,
):
    """One AustereMH(nc) transition. Returns (accepted, test data used, full-pass data = N)."""
    propose(prop, theta, g, sigma, h, K, rng, theta_p)
    if not in_support(t, theta_p):
        rng.random()
        return False, 0, 0
    N = t.X.shape[0]
    u = rng.random()
    dlp = log_prior(t, theta_p) - log_prior(t, theta)
    lqr = log_q_ratio(prop, theta, theta_p, g, g, sigma, h, K)
    mu0 = mu0_of(N, math.log(u), dlp, lqr)
    mu, sl, _ = full_pass_stats(t, theta, theta_p)
    if sl > 0.0 and N > 1:
        ms = (mu - mu0) * math.sqrt(N - 1.0) / sl
    else:
        ms = 1e300
    dd = choose_design(E_tab, P_tab, mu_grid, ms, bound)
    acc, n = seq_ttest(t, theta, theta_p, mu0, perm, m_arr[dd], tcrit_tab[eps_idx[dd]], rng)
    if acc:
        theta[:] = theta_p
    return acc, n, N


@njit(cache=True)
def austere_nc_sample(
    t: TallData,
    theta,
    perm,
    n_iter: int,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    bound: float,
    m_arr,
    eps_idx,
    tcrit_tab,
    E_tab,
    P_tab,
    mu_grid,
    rng,
    thin: int,
):
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    full = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    g = np.zeros(d)
    for it in range(n_iter):
        a, ne, nf = austere_nc_step(
            t,
            theta,
            perm,
            prop,
            sigma,
            h,
            K,
            bound,
            m_arr,
            eps_idx,
            tcrit_tab,
            E_tab,
            P_tab,
            mu_grid,
            rng,
            theta_p,
            g,
        )
        acc[it] = a
        nev[it] = ne
        full[it] = nf
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, full


# ----------------------------------------------------------------------------- SGLD + approx MH
@njit(cache=True)
def sgld_austere_init(t: TallData, theta0: np.ndarray):
    N = t.X.shape[0]
    return theta0.copy(), np.arange(N), np.arange(N)


@njit(cache=True)
def sgld_austere_step(
    t: TallData, theta, perm, perm_g, sigma: float, b: int, m: int, tcrit, rng, theta_p, g, g_p
):
    """SGLD proposal from minibatch B (|B| = b) + K14 test with mu0 using q(.|., B) both ways.
    Returns (accepted, test data + 2b gradient evaluations, full-pass data = 0)."""
    N = t.X.shape[0]
    d = theta.shape[0]
    # minibatch B: uniform b-subset without replacement (partial Fisher-Yates)
    for k in range(b):
        j = rng.integers(k, N)
        tmp = perm_g[k]
        perm_g[k] = perm_g[j]
        perm_g[j] = tmp
    grad_estimate(t, theta, perm_g, b, g)
    s2 = sigma * sigma
    for j in range(d):
        theta_p[j] = theta[j] + 0.5 * s2 * g[j] + sigma * rng.standard_normal()
    if not in_support(t, theta_p):
        rng.random()
        return False, b, 0
    grad_estimate(t, theta_p, perm_g, b, g_p)
    fwd = 0.0
    rev = 0.0
    for j in range(d):
        a = theta_p[j] - theta[j] - 0.5 * s2 * g[j]
        c = theta[j] - theta_p[j] - 0.5 * s2 * g_p[j]
        fwd += a * a
        rev += c * c
    lqr = -(rev - fwd) / (2.0 * s2)
    u = rng.random()
    dlp = log_prior(t, theta_p) - log_prior(t, theta)
    mu0 = mu0_of(N, math.log(u), dlp, lqr)
    acc, n = seq_ttest(t, theta, theta_p, mu0, perm, m, tcrit, rng)
    if acc:
        theta[:] = theta_p
    return acc, n + 2 * b, 0


@njit(cache=True)
def sgld_austere_sample(
    t: TallData, theta, perm, perm_g, n_iter: int, sigma: float, b: int, m: int, tcrit, rng, thin: int
):
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    full = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    g = np.empty(d)
    g_p = np.empty(d)
    for it in range(n_iter):
        a, ne, nf = sgld_austere_step(t, theta, perm, perm_g, sigma, b, m, tcrit, rng, theta_p, g, g_p)
        acc[it] = a
        nev[it] = ne
        full[it] = nf
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, full
