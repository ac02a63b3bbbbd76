"""MHminibatch (Seita, Pan, Chen & Canny 2017, Alg. 1): Barker test with a correction variable.

Lambda_i = N l_i (l_i = tempered ll_i(theta') - ll_i(theta)); Delta* = mean_batch(Lambda_i) - psi(1) with
psi(1) = log[q(t'|t) p0(t)/(q(t|t') p0(t'))]; s^2 = var(Lambda_i)/b (sample variance, ddof 1, no
finite-population correction, as S17). The batch (drawn without replacement, persistent partial
Fisher-Yates) starts at m points and grows by m while s^2 >= sigma^2 (sigma = 1 in S17) or the
Corollary-1 estimate eps = (6.4 E|X|^3 + 2 E|X|)/sqrt(b) exceeds ``delta``; X_i = standardised
Lambda_i (moments from the batch: Novak's (2005) bound is for unit-variance X). Then accept iff
Delta* + X_nc + X_corr > 0, X_nc ~ N(0, sigma^2 - s^2), X_corr ~ C_sigma (:mod:`samplers.approx.correction`).
No u is drawn (BIDMach 853f4cc6). ``delta = inf`` skips the Corollary-1 check (as all authors' code).

Conventions the paper leaves open: s^2 needs b >= 2 (grow otherwise); if the batch reaches all N data
the exact Barker test is applied (accept iff Delta + logit(U) > 0), so with all data the kernel is the
exact Barker chain. The authors' "|Delta*|/s > 5 => deterministic" shortcut (in their code, not in the
paper) is NOT used.
Costs: ``n_evals`` = final batch size; trace 0 = 0 (no full-data pass).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.approx.correction import sample_xcorr
from samplers.approx.seqtest import draw_next, li_arrays
from samplers.proposals import log_q_ratio, propose
from samplers.targets.tall import TallData, in_support, log_prior


@njit(cache=True)
def mh_minibatch_init(t: TallData, theta0: np.ndarray):
    N = t.X.shape[0]
    return theta0.copy(), np.arange(N), np.empty(N)


@njit(cache=True)
def cor1_eps(buf: np.ndarray, n: int, mean: float, sd: float) -> float:
    """Corollary-1 bound (6.4 E|X|^3 + 2 E|X|)/sqrt(n) with X = (Lambda_i - mean)/sd over buf[:n]."""
    if sd <= 0.0:
        return 0.0
    a1 = 0.0
    a3 = 0.0
    for k in range(n):
        z = abs(buf[k] - mean) / sd
        a1 += z
        a3 += z * z * z
    return (6.4 * a3 / n + 2.0 * a1 / n) / math.sqrt(n)


@njit(cache=True)
def barker_minibatch_test(
    t: TallData,
    theta,
    theta_p,
    k: float,
    perm,
    buf,
    m: int,
    delta: float,
    csig: float,
    cy,
    ch: float,
    ccdf,
    rng,
):
    """The S17 test for log-ratio offset k = log p0(t')/p0(t) + log q(t|t')/q(t'|t). Returns
    (accept, batch size)."""
    N = t.X.shape[0]
    kind, X, y, w, beta, nu, ops = t.kind, t.X, t.y, t.w, t.beta, t.nu, t.ops  # once, not per datum
    n = 0
    mean = 0.0
    m2 = 0.0
    s2max = csig * csig
    while True:
        kk = min(m, N - n)
        for _ in range(kk):
            i = draw_next(perm, n, rng)
            lam = N * li_arrays(kind, X, y, w, beta, nu, i, theta, theta_p, ops)
            buf[n] = lam
            n += 1
            dlt = lam - mean
            mean += dlt / n
            m2 += dlt * (lam - mean)
        if n >= N:  # exact Barker test
            U = rng.random()
            return mean + k + math.log(U / (1.0 - U)) > 0.0, n
        if n < 2:
            continue
        var = m2 / (n - 1)
        s2 = var / n
        if s2 >= s2max:
            continue
        if delta < np.inf:
            if cor1_eps(buf, n, mean, math.sqrt(var)) > delta:
                continue
        break
    dstar = mean + k
    xnc = math.sqrt(s2max - s2) * rng.standard_normal()
    xc = sample_xcorr(cy, ch, ccdf, rng.random())
    return dstar + xnc + xc > 0.0, n


@njit(cache=True)
def mh_minibatch_step(
    t: TallData,
    theta,
    perm,
    buf,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    m: int,
    delta: float,
    csig: float,
    cy,
    ch: float,
    ccdf,
    rng,
    theta_p,
    g,
):
    propose(prop, theta, g, sigma, h, K, rng, theta_p)
    if not in_support(t, theta_p):
        rng.random()
        return False, 0, 0
    k = log_prior(t, theta_p) - log_prior(t, theta) + log_q_ratio(prop, theta, theta_p, g, g, sigma, h, K)
    acc, n = barker_minibatch_test(t, theta, theta_p, k, perm, buf, m, delta, csig, cy, ch, ccdf, rng)
    if acc:
        theta[:] = theta_p
    return acc, n, 0


@njit(cache=True)
def mh_minibatch_sample(
    t: TallData,
    theta,
    perm,
    buf,
    n_iter: int,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    m: int,
    delta: float,
    csig: float,
    cy,
    ch: float,
    ccdf,
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
        a, ne, nf = mh_minibatch_step(
            t, theta, perm, buf, prop, sigma, h, K, m, delta, csig, cy, ch, ccdf, rng, theta_p, g
        )
        acc[it] = a
        nev[it] = ne
        full[it] = nf
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, full
