"""Stochastic gradient Langevin dynamics (Welling & Teh 2011), fixed step, minibatch of size b.

theta' = theta + sigma^2/2 * g_B(theta) + sigma * xi with g_B = grad log prior + (N/b) sum_{i in B} grad ll_i,
B uniform without replacement (partial Fisher-Yates on a persistent permutation: O(b) per iteration,
no allocation). No MH correction (biased by design). Moves leaving the support are dropped, as in
Yuan & Wang's (2024) code. The shared minibatch routine :func:`uniform_minibatch` is reused by Tuna-SGLD.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.targets.tall import TallData, grad_estimate, in_support


@njit(cache=True)
def uniform_minibatch(perm: np.ndarray, b: int, rng) -> None:
    """Put a uniformly random b-subset (without replacement) of ``perm`` into ``perm[:b]`` in O(b)."""
    n = perm.shape[0]
    for k in range(b):
        j = rng.integers(k, n)
        tmp = perm[k]
        perm[k] = perm[j]
        perm[j] = tmp


@njit(cache=True)
def sgld_init(t: TallData, theta0: np.ndarray):
    return theta0.copy(), np.arange(t.X.shape[0])


@njit(cache=True)
def sgld_step(t: TallData, theta, perm, sigma: float, b: int, rng, g, theta_p):
    uniform_minibatch(perm, b, rng)
    grad_estimate(t, theta, perm, b, g)
    for j in range(theta.shape[0]):
        theta_p[j] = theta[j] + 0.5 * sigma * sigma * g[j] + sigma * rng.standard_normal()
    if in_support(t, theta_p):
        theta[:] = theta_p
        return True, b
    return False, b


@njit(cache=True)
def sgld_sample(t: TallData, theta, perm, n_iter: int, sigma: float, b: int, rng, thin: int):
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    g = np.empty(d)
    theta_p = np.empty(d)
    for it in range(n_iter):
        a, ne = sgld_step(t, theta, perm, sigma, b, rng, g, theta_p)
        acc[it] = a
        nev[it] = ne
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev
