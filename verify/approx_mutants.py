"""Repeat loops driving the approximate kernels' compiled ``*_step`` functions one step from a fixed
state (for :func:`verify.empirical.kernel_vs_matrix`), and deliberately broken variants (mutants)
that the kernel-vs-matrix check must reject:

* ``MUT_REPLACE``  data drawn WITH replacement instead of without (AustereMH, MHSubLhd);
* ``MUT_NOFPC``    t-test without the finite-population correction (AustereMH c/nc, austere Gibbs);
* ``MUT_XNC``      MHminibatch with X_nc ~ N(0, sigma^2) instead of N(0, sigma^2 - s^2).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.approx.correction import sample_xcorr
from samplers.approx.seqtest import mu0_of
from samplers.kernels.austere import austere_init, austere_nc_step, austere_step, choose_design
from samplers.kernels.austere_gibbs import austere_gibbs_init, austere_gibbs_step
from samplers.kernels.mh_minibatch import mh_minibatch_init, mh_minibatch_step
from samplers.kernels.mh_sublhd import mh_sublhd_init, mh_sublhd_step
from samplers.proposals import log_q_ratio, propose
from samplers.targets.factor_graph import FactorGraph, factor_value_at
from samplers.targets.tall import TallData, in_support, log_prior, loglik_i

MUT_NONE, MUT_REPLACE, MUT_NOFPC, MUT_XNC = 0, 1, 2, 3


# ============================================================================ real kernels
@njit(cache=True)
def repeat_austere(
    t: TallData, theta0, prop: int, sigma: float, h: float, K: int, m: int, tcrit, rng, reps: int
):
    d = theta0.shape[0]
    _, perm = austere_init(t, theta0)
    out = np.empty((reps, d))
    theta = np.empty(d)
    theta_p = np.empty(d)
    g = np.zeros(d)
    for r in range(reps):
        theta[:] = theta0
        austere_step(t, theta, perm, prop, sigma, h, K, m, tcrit, rng, theta_p, g)
        out[r] = theta
    return out


@njit(cache=True)
def repeat_austere_nc(
    t: TallData,
    theta0,
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
    reps: int,
):
    d = theta0.shape[0]
    _, perm = austere_init(t, theta0)
    out = np.empty((reps, d))
    theta = np.empty(d)
    theta_p = np.empty(d)
    g = np.zeros(d)
    for r in range(reps):
        theta[:] = theta0
        austere_nc_step(
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
        out[r] = theta
    return out


@njit(cache=True)
def repeat_minibatch(
    t: TallData,
    theta0,
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
    reps: int,
):
    d = theta0.shape[0]
    _, perm, buf = mh_minibatch_init(t, theta0)
    out = np.empty((reps, d))
    theta = np.empty(d)
    theta_p = np.empty(d)
    g = np.zeros(d)
    for r in range(reps):
        theta[:] = theta0
        mh_minibatch_step(
            t, theta, perm, buf, prop, sigma, h, K, m, delta, csig, cy, ch, ccdf, rng, theta_p, g
        )
        out[r] = theta
    return out


@njit(cache=True)
def repeat_sublhd(
    t: TallData,
    theta0,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    m: int,
    gamma: float,
    p: float,
    delta: float,
    rng,
    reps: int,
):
    d = theta0.shape[0]
    _, perm = mh_sublhd_init(t, theta0)
    out = np.empty((reps, d))
    theta = np.empty(d)
    theta_p = np.empty(d)
    g = np.zeros(d)
    for r in range(reps):
        theta[:] = theta0
        mh_sublhd_step(t, theta, perm, prop, sigma, h, K, m, gamma, p, delta, rng, theta_p, g)
        out[r] = theta
    return out


@njit(cache=True)
def repeat_austere_gibbs(fg: FactorGraph, x0, scan: int, m: int, tcrit, rng, reps: int):
    x, counter, perm = austere_gibbs_init(fg, x0)
    out = np.empty((reps, fg.n), dtype=np.int64)
    for r in range(reps):
        x[:] = x0
        counter[0] = 0
        austere_gibbs_step(fg, x, counter, perm, scan, m, tcrit, rng)
        out[r] = x
    return out


# ============================================================================ mutants
@njit(cache=True)
def _mut_ttest(t: TallData, theta, theta_p, mu0: float, perm, m: int, tcrit, rng, mode: int):
    N = t.X.shape[0]
    n = 0
    mean = 0.0
    m2 = 0.0
    while True:
        k = min(m, N - n)
        for _ in range(k):
            if mode == MUT_REPLACE:
                i = rng.integers(0, N)
            else:
                j = rng.integers(n, N)
                tmp = perm[n]
                perm[n] = perm[j]
                perm[j] = tmp
                i = perm[n]
            lv = loglik_i(t, i, theta_p) - loglik_i(t, i, theta)
            n += 1
            dlt = lv - mean
            mean += dlt / n
            m2 += dlt * (lv - mean)
        diff = mean - mu0
        if n >= N:
            return diff > 0.0, n
        if n >= 2:
            var = max(m2 / (n - 1), 0.0)
            sd = math.sqrt(var / n)
            if mode != MUT_NOFPC:
                sd *= math.sqrt(1.0 - (n - 1.0) / (N - 1.0))
            if sd > 0.0:
                if abs(diff) > tcrit[n] * sd:
                    return diff > 0.0, n
            elif diff != 0.0:
                return diff > 0.0, n


@njit(cache=True)
def repeat_austere_mutant(
    t: TallData, theta0, prop: int, sigma: float, h: float, K: int, m: int, tcrit, rng, reps: int, mode: int
):
    d = theta0.shape[0]
    perm = np.arange(t.X.shape[0])
    out = np.empty((reps, d))
    theta_p = np.empty(d)
    g = np.zeros(d)
    N = t.X.shape[0]
    for r in range(reps):
        propose(prop, theta0, g, sigma, h, K, rng, theta_p)
        if not in_support(t, theta_p):
            rng.random()
            out[r] = theta0
            continue
        u = rng.random()
        mu0 = mu0_of(
            N,
            math.log(u),
            log_prior(t, theta_p) - log_prior(t, theta0),
            log_q_ratio(prop, theta0, theta_p, g, g, sigma, h, K),
        )
        acc, _ = _mut_ttest(t, theta0, theta_p, mu0, perm, m, tcrit, rng, mode)
        out[r] = theta_p if acc else theta0
    return out


@njit(cache=True)
def repeat_austere_nc_mutant(
    t: TallData,
    theta0,
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
    reps: int,
    mode: int,
):
    d = theta0.shape[0]
    N = t.X.shape[0]
    perm = np.arange(N)
    out = np.empty((reps, d))
    theta_p = np.empty(d)
    g = np.zeros(d)
    for r in range(reps):
        propose(prop, theta0, g, sigma, h, K, rng, theta_p)
        if not in_support(t, theta_p):
            rng.random()
            out[r] = theta0
            continue
        u = rng.random()
        mu0 = mu0_of(
            N,
            math.log(u),
            log_prior(t, theta_p) - log_prior(t, theta0),
            log_q_ratio(prop, theta0, theta_p, g, g, sigma, h, K),
        )
        mean = 0.0
        m2 = 0.0
        for i in range(N):
            lv = loglik_i(t, i, theta_p) - loglik_i(t, i, theta0)
            dl = lv - mean
            mean += dl / (i + 1)
            m2 += dl * (lv - mean)
        sl = math.sqrt(max(m2 / N, 0.0))
        ms = (mean - mu0) * math.sqrt(N - 1.0) / sl if sl > 0 else 1e300
        dd = choose_design(E_tab, P_tab, mu_grid, ms, bound)
        acc, _ = _mut_ttest(t, theta0, theta_p, mu0, perm, m_arr[dd], tcrit_tab[eps_idx[dd]], rng, mode)
        out[r] = theta_p if acc else theta0
    return out


@njit(cache=True)
def repeat_minibatch_mutant(
    t: TallData,
    theta0,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    m: int,
    csig: float,
    cy,
    ch: float,
    ccdf,
    rng,
    reps: int,
):
    """MUT_XNC: X_nc ~ N(0, csig^2) ignoring s^2 (delta = inf)."""
    d = theta0.shape[0]
    N = t.X.shape[0]
    perm = np.arange(N)
    out = np.empty((reps, d))
    theta_p = np.empty(d)
    g = np.zeros(d)
    for r in range(reps):
        propose(prop, theta0, g, sigma, h, K, rng, theta_p)
        if not in_support(t, theta_p):
            rng.random()
            out[r] = theta0
            continue
        kk = log_prior(t, theta_p) - log_prior(t, theta0)
        n = 0
        mean = 0.0
        m2 = 0.0
        acc = False
        while True:
            for _ in range(min(m, N - n)):
                j = rng.integers(n, N)
                tmp = perm[n]
                perm[n] = perm[j]
                perm[j] = tmp
                lam = N * (loglik_i(t, perm[n], theta_p) - loglik_i(t, perm[n], theta0))
                n += 1
                dl = lam - mean
                mean += dl / n
                m2 += dl * (lam - mean)
            if n >= N:
                U = rng.random()
                acc = mean + kk + math.log(U / (1.0 - U)) > 0.0
                break
            if n < 2 or m2 / (n - 1) / n >= csig * csig:
                continue
            xnc = csig * rng.standard_normal()
            acc = mean + kk + xnc + sample_xcorr(cy, ch, ccdf, rng.random()) > 0.0
            break
        out[r] = theta_p if acc else theta0
    return out


@njit(cache=True)
def repeat_sublhd_mutant(
    t: TallData,
    theta0,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    m: int,
    gamma: float,
    p: float,
    delta: float,
    rng,
    reps: int,
):
    """MUT_REPLACE: MHSubLhd drawing its data with replacement."""
    d = theta0.shape[0]
    N = t.X.shape[0]
    out = np.empty((reps, d))
    theta_p = np.empty(d)
    g = np.zeros(d)
    for r in range(reps):
        propose(prop, theta0, g, sigma, h, K, rng, theta_p)
        if not in_support(t, theta_p):
            rng.random()
            out[r] = theta0
            continue
        u = rng.random()
        psi = mu0_of(N, math.log(u), log_prior(t, theta_p) - log_prior(t, theta0), 0.0)
        C = 0.0
        for i in range(N):
            C = max(C, abs(loglik_i(t, i, theta_p) - loglik_i(t, i, theta0)))
        b = min(m, N)
        n = 0
        mean = 0.0
        m2 = 0.0
        look = 0
        acc = False
        while True:
            while n < b:
                i = rng.integers(0, N)
                lv = loglik_i(t, i, theta_p) - loglik_i(t, i, theta0)
                n += 1
                dl = lv - mean
                mean += dl / n
                m2 += dl * (lv - mean)
            look += 1
            if n >= N:
                acc = mean > psi
                break
            dk = (p - 1.0) * delta / (p * look**p)
            lg = math.log(3.0 / dk)
            c = math.sqrt(max(m2 / n, 0.0)) * math.sqrt(2.0 * lg / n) + 6.0 * C * lg / n
            if abs(mean - psi) >= c:
                acc = mean > psi
                break
            b = min(N, max(n + 1, int(math.ceil(gamma * n))))
        out[r] = theta_p if acc else theta0
    return out


@njit(cache=True)
def repeat_austere_gibbs_mutant(fg: FactorGraph, x0, m: int, tcrit, rng, reps: int):
    """MUT_NOFPC austere Gibbs (random scan, one step)."""
    out = np.empty((reps, fg.n), dtype=np.int64)
    perm = fg.var_fac.copy()
    x = x0.copy()
    for r in range(reps):
        x[:] = x0
        i = rng.integers(0, fg.n)
        u = rng.random()
        a = fg.var_ptr[i]
        Ni = fg.var_ptr[i + 1] - a
        mu0 = math.log(u / (1.0 - u)) / Ni
        n = 0
        mean = 0.0
        m2 = 0.0
        one = False
        while True:
            for _ in range(min(m, Ni - n)):
                j = a + rng.integers(n, Ni)
                tmp = perm[a + n]
                perm[a + n] = perm[j]
                perm[j] = tmp
                f = perm[a + n]
                lv = factor_value_at(fg, f, x, i, 1) - factor_value_at(fg, f, x, i, 0)
                n += 1
                dl = lv - mean
                mean += dl / n
                m2 += dl * (lv - mean)
            diff = mean - mu0
            if n >= Ni:
                one = diff > 0.0
                break
            if n >= 2:
                sd = math.sqrt(max(m2 / (n - 1), 0.0) / n)
                if sd > 0.0 and abs(diff) > tcrit[n] * sd:
                    one = diff > 0.0
                    break
                if sd == 0.0 and diff != 0.0:
                    one = diff > 0.0
                    break
        x[i] = 1 if one else 0
        out[r] = x
    return out
