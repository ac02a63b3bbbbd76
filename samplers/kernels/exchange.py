"""Exchange algorithm (Murray, Ghahramani & MacKay 2006; Yuan & Wang 2024 Alg. 4) for the Ising-parameter
posterior of :mod:`samplers.targets.ising_param`.

Per step: theta' ~ q(theta, .) (Gaussian or lattice random walk, :mod:`samplers.proposals`); if theta' is
inside the prior support, draw m auxiliary configurations omega^k ~ p_theta' exactly (enumeration or CFTP)
and accept with
``log r = log prior ratio + (theta' - theta) (S_data - sum_k S(omega^k)) + log q-ratio``
(``f_theta(x) = exp(theta S(x))``, so ``f_theta'(x) f_theta(omega) / (f_theta(x) f_theta'(omega))`` is that).
``n_evals`` = cost of the exact draws (levels scanned for enumeration, site updates for CFTP).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.proposals import log_q_ratio, propose
from samplers.targets.ising_param import IsingParam, draw_stat


@njit(cache=True)
def exchange_init(model: IsingParam, theta0: np.ndarray):
    """State: ``(theta, us, top, bot)`` (CFTP scratch)."""
    n = model.n
    return (theta0.copy(), np.empty((8, n)), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64))


@njit(cache=True)
def exchange_step(
    model: IsingParam, theta, us, top, bot, prop: int, sigma: float, h: float, K: int, rng, theta_p, g0
):
    """One exchange transition in place. Returns ``(accepted, cost, log_r, us)``."""
    propose(prop, theta, g0, sigma, h, K, rng, theta_p)
    tp = theta_p[0]
    if not (tp >= model.lo and tp <= model.hi):
        return False, 0, -np.inf, us
    s_aux = 0.0
    cost = 0
    for _ in range(model.m):
        s, c, us = draw_stat(model, tp, rng, us, top, bot)
        s_aux += s
        cost += c
    log_r = (tp - theta[0]) * (model.s_data - s_aux) + log_q_ratio(prop, theta, theta_p, g0, g0, sigma, h, K)
    if np.log(rng.random()) < log_r:
        theta[0] = tp
        return True, cost, log_r, us
    return False, cost, log_r, us


@njit(cache=True)
def exchange_sample(
    model: IsingParam,
    theta,
    us,
    top,
    bot,
    n_iter: int,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    thin: int,
):
    """Chain loop; returns ``(samples, accepted, n_evals)``."""
    samples = np.empty((n_iter // thin, 1))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(1)
    g0 = np.zeros(1)
    for it in range(n_iter):
        a, c, _, us = exchange_step(model, theta, us, top, bot, prop, sigma, h, K, rng, theta_p, g0)
        acc[it] = a
        nev[it] = c
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev
