"""Full-batch HMC with L leapfrog steps and unit mass (Neal 2011), exact gradient every step.

A trajectory that leaves the support is rejected (as the papers do for truncated targets). Note:
Yuan & Wang's (2024) RLR code reuses the start-of-step gradient in both half kicks (not reversible);
this is the correct leapfrog. ``recompute=True`` in :func:`hmc_sample` = the authors'
uncached energy (log pi and gradient evaluated again at the current theta every step; same chain,
one more full-data pass per iteration; see :mod:`samplers.kernels.mh`).

``glen`` (default 0 = the exact gradient) replaces the force by ``glen * g / ||g||``
(:func:`samplers.proposals.rescale_gradient`; Yuan & Wang's (2024) logistic HMC). Kicks
by any position-dependent force are shears, so the leapfrog stays volume preserving and reversible
under momentum flip, and the accept step with the true H keeps the chain exact.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.proposals import rescale_gradient
from samplers.targets.tall import TallData, in_support, log_post_grad


@njit(cache=True)
def hmc_init(t: TallData, theta0: np.ndarray, glen: float):
    theta = theta0.copy()
    grad = np.zeros_like(theta)
    lp = np.empty(1)
    lp[0] = log_post_grad(t, theta, grad)
    rescale_gradient(grad, glen)
    return theta, grad, lp


@njit(cache=True)
def hmc_step(t: TallData, theta, grad, lp, eps: float, n_leap: int, rng, q, p, g, glen: float):
    """One HMC transition in place; returns (accepted, data evaluations)."""
    d = theta.shape[0]
    N = t.X.shape[0]
    for j in range(d):
        p[j] = rng.standard_normal()
    h0 = -lp[0]
    for j in range(d):
        h0 += 0.5 * p[j] * p[j]
    q[:] = theta
    g[:] = grad
    lq = lp[0]
    nev = 0
    ok = True
    for _ in range(n_leap):
        for j in range(d):
            p[j] += 0.5 * eps * g[j]
            q[j] += eps * p[j]
        if not in_support(t, q):
            ok = False
            break
        lq = log_post_grad(t, q, g)
        rescale_gradient(g, glen)
        nev += N
        for j in range(d):
            p[j] += 0.5 * eps * g[j]
    u = rng.random()
    if not ok:
        return False, nev
    h1 = -lq
    for j in range(d):
        h1 += 0.5 * p[j] * p[j]
    if np.log(u) < h0 - h1:
        theta[:] = q
        grad[:] = g
        lp[0] = lq
        return True, nev
    return False, nev


@njit(cache=True)
def hmc_sample(
    t: TallData,
    theta,
    grad,
    lp,
    n_iter: int,
    eps: float,
    n_leap: int,
    recompute: bool,
    glen: float,
    rng,
    thin: int,
):
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    q = np.empty(d)
    p = np.empty(d)
    g = np.empty(d)
    N = t.X.shape[0]
    for it in range(n_iter):
        if recompute:  # the authors' uncached energy (module docstring)
            lp[0] = log_post_grad(t, theta, grad)
            rescale_gradient(grad, glen)
        a, ne = hmc_step(t, theta, grad, lp, eps, n_leap, rng, q, p, g, glen)
        acc[it] = a
        nev[it] = ne + (N if recompute else 0)
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev
