"""MHSubLhd (Bardenet, Doucet & Holmes 2014, "B14" Alg. 3 with the empirical-Bernstein bound).

psi = (1/N) log[u p0(t) q(t'|t) / (p0(t') q(t|t'))] (K14's mu0); Lambda*_t = mean of l_i over t points
drawn without replacement. The range bound C_{theta,theta'} = max_i |l_i| is computed from the full
data each iteration, as S17 §6.2 / the authors' code do (its cost is reported: trace 0 = N). Batches
b = m, then b <- min(N, max(b + 1, ceil(gamma b))); at the k-th look (k = 1, 2, ...; B14's t_look = 0
would make delta_0 undefined) with delta_k = (p - 1) delta / (p k^p):

    c_t = sigma_t sqrt(2 log(3/delta_k)/t) + 6 C log(3/delta_k)/t  (sigma_t = sd of the t ratios, 1/t)

and the test stops when |Lambda*_t - psi| >= c_t (accept iff Lambda*_t > psi) or t = N (exact).
``n_evals`` = t at the decision.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.approx.seqtest import draw_next, full_pass_stats, li_arrays, mu0_of
from samplers.proposals import log_q_ratio, propose
from samplers.targets.tall import TallData, in_support, log_prior


@njit(cache=True)
def mh_sublhd_init(t: TallData, theta0: np.ndarray):
    return theta0.copy(), np.arange(t.X.shape[0])


@njit(cache=True)
def sublhd_test(
    t: TallData, theta, theta_p, psi: float, C: float, perm, m: int, gamma: float, p: float, delta: float, rng
):
    """B14 adaptive subsampling test. Returns (accept, data used)."""
    N = t.X.shape[0]
    kind, X, y, w, beta, nu, ops = t.kind, t.X, t.y, t.w, t.beta, t.nu, t.ops  # once, not per datum
    b = min(m, N)
    n = 0
    mean = 0.0
    m2 = 0.0
    look = 0
    while True:
        while n < b:
            i = draw_next(perm, n, rng)
            lv = li_arrays(kind, X, y, w, beta, nu, i, theta, theta_p, ops)
            n += 1
            dlt = lv - mean
            mean += dlt / n
            m2 += dlt * (lv - mean)
        look += 1
        if n >= N:
            return mean > psi, n
        dk = (p - 1.0) * delta / (p * look**p)
        lg = math.log(3.0 / dk)
        sd = math.sqrt(max(m2 / n, 0.0))
        c = sd * math.sqrt(2.0 * lg / n) + 6.0 * C * lg / n
        if abs(mean - psi) >= c:
            return mean > psi, n
        nb = int(math.ceil(gamma * n))
        if nb < n + 1:
            nb = n + 1
        b = min(N, nb)


@njit(cache=True)
def mh_sublhd_step(
    t: TallData,
    theta,
    perm,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    m: int,
    gamma: float,
    p: float,
    delta: float,
    rng,
    theta_p,
    g,
):
    propose(prop, theta, g, sigma, h, K, rng, theta_p)
    if not in_support(t, theta_p):
        rng.random()
        return False, 0, 0
    N = t.X.shape[0]
    u = rng.random()
    dlp = log_prior(t, theta_p) - log_prior(t, theta)
    lqr = log_q_ratio(prop, theta, theta_p, g, g, sigma, h, K)
    psi = mu0_of(N, math.log(u), dlp, lqr)
    _, _, C = full_pass_stats(t, theta, theta_p)
    acc, n = sublhd_test(t, theta, theta_p, psi, C, perm, m, gamma, p, delta, rng)
    if acc:
        theta[:] = theta_p
    return acc, n, N


@njit(cache=True)
def mh_sublhd_sample(
    t: TallData,
    theta,
    perm,
    n_iter: int,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    m: int,
    gamma: float,
    p: float,
    delta: float,
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
        a, ne, nf = mh_sublhd_step(t, theta, perm, prop, sigma, h, K, m, gamma, p, delta, rng, theta_p, g)
        acc[it] = a
        nev[it] = ne
        full[it] = nf
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, full
