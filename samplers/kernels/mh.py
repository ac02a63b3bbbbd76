"""Full-batch Metropolis-Hastings with a pluggable proposal: ``rwm``, ``mala``, ``barker``.

One compiled kernel serves the three methods (they differ only in the proposal kind, see
:mod:`samplers.proposals`). State = (theta, grad, lp) with ``lp = [log pi(theta)]``; log pi and its
gradient are cached at the current state, so each iteration evaluates all N data once at theta'
(the "batch size" N). Proposals outside the support are rejected without evaluating the data.

``recompute=True`` in :func:`mh_sample` is Yuan & Wang's (2024) full-batch code:
log pi (and its gradient) is evaluated again at the current theta every step
instead of being cached, so an iteration costs 2N evaluations. The value is recomputed by the same
compiled loop, bit for bit, so the chain is identical to the cached one: only its cost changes.

``glen`` (default 0 = the exact gradient) rescales the gradient of MALA / Barker to that length,
``glen * g / ||g||`` (:func:`samplers.proposals.rescale_gradient`; Yuan & Wang's (2024) logistic
regression code). The state's ``grad`` then holds the rescaled gradient, at theta and theta'
alike, so the chain is still exact.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.proposals import log_q_ratio, propose, rescale_gradient, uses_gradient
from samplers.targets.tall import TallData, in_support, log_post, log_post_grad


@njit(cache=True)
def mh_init(t: TallData, theta0: np.ndarray, prop: int, glen: float):
    theta = theta0.copy()
    grad = np.zeros_like(theta)
    lp = np.empty(1)
    if uses_gradient(prop):
        lp[0] = log_post_grad(t, theta, grad)
        rescale_gradient(grad, glen)
    else:
        lp[0] = log_post(t, theta)
    return theta, grad, lp


@njit(cache=True)
def mh_step(
    t: TallData, theta, grad, lp, prop: int, sigma: float, h: float, K: int, rng, theta_p, grad_p, glen: float
):
    """One MH transition in place. Returns (accepted, data evaluations)."""
    propose(prop, theta, grad, sigma, h, K, rng, theta_p)
    if not in_support(t, theta_p):
        rng.random()  # keep the stream aligned with the in-support branch (one uniform per step)
        return False, 0
    if uses_gradient(prop):
        lp_p = log_post_grad(t, theta_p, grad_p)
        rescale_gradient(grad_p, glen)
    else:
        lp_p = log_post(t, theta_p)
    log_r = lp_p - lp[0] + log_q_ratio(prop, theta, theta_p, grad, grad_p, sigma, h, K)
    u = rng.random()
    if np.log(u) < log_r:
        theta[:] = theta_p
        grad[:] = grad_p
        lp[0] = lp_p
        return True, t.X.shape[0]
    return False, t.X.shape[0]


@njit(cache=True)
def mh_sample(
    t: TallData,
    theta,
    grad,
    lp,
    n_iter: int,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    recompute: bool,
    glen: float,
    rng,
    thin: int,
):
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    grad_p = np.zeros(d)
    N = t.X.shape[0]
    grad_g = uses_gradient(prop)
    for it in range(n_iter):
        if recompute:  # the authors' uncached variant (module docstring)
            if grad_g:
                lp[0] = log_post_grad(t, theta, grad)
                rescale_gradient(grad, glen)
            else:
                lp[0] = log_post(t, theta)
        a, ne = mh_step(t, theta, grad, lp, prop, sigma, h, K, rng, theta_p, grad_p, glen)
        acc[it] = a
        nev[it] = ne + (N if recompute else 0)
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev
