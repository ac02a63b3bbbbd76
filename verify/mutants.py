"""Deliberately broken kernels (negative controls): each is an njit copy of a real kernel with ONE bug.

The verification checks must FAIL on every mutant (that is what shows they have power; Blang's
``Bad*`` fixtures, emcee's negative control). Each mutant comes with a
"repeat" loop that has exactly the signature of the corresponding loop in :mod:`verify.empirical`
or :mod:`verify.continuous`, so the same checker runs it.

MH (``samplers.kernels.mh.mh_step``):
* ``no_hastings``    drops ``log_q_ratio`` (wrong for asymmetric proposals: Barker, Langevin)
* ``accept_shift``   accepts when ``log u < log r + 0.3`` (an off-by-a-constant acceptance)
* ``stale_logpi``    on acceptance the cached ``log pi`` is not updated (invisible in one step
  from a fresh state; caught by the two-step test against ``P @ P``)
* ``unscaled_reverse`` with a rescaled gradient (``glen != 0``, the authors' 2 g / ||g||) the reverse
  proposal density uses the raw gradient at theta' (the forward one the rescaled gradient at theta)
Gibbs (``samplers.kernels.gibbs.gibbs_step``):
* ``biased_scan``    random scan picks site 0 with probability 2/(n+1) instead of 1/n
* ``drop_factor``    the conditional omits the last factor touching the site
* ``scan_offset``    systematic scan updates site (counter + 1) % n (off-by-one scan position)
HMC (``samplers.kernels.hmc.hmc_step``):
* ``stale_grad``     both half-kicks of every leapfrog step use the gradient at the start of the
  step (Yuan & Wang's (2024) RLR code): not reversible.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.kernels.gibbs import RANDOM_SCAN, gibbs_init
from samplers.kernels.mh import mh_init
from samplers.proposals import log_q_ratio, propose, rescale_gradient, uses_gradient
from samplers.targets.factor_graph import (
    FactorGraph,
    conditional_logits,
    factor_value_at,
    sample_logits,
)
from samplers.targets.tall import TallData, in_support, log_post, log_post_grad

MUTANT_SHIFT = 0.3


# ============================================================================ MH mutants
@njit(cache=True)
def _mh_step_mutant(
    t: TallData,
    theta,
    grad,
    lp,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    theta_p,
    grad_p,
    bug: int,
    glen: float,
):
    """mh_step with bug 1 = no Hastings term, 2 = accept when log u < log r + 0.3,
    3 = stale cached log pi after an acceptance, 4 = reverse density with the unrescaled gradient."""
    propose(prop, theta, grad, sigma, h, K, rng, theta_p)
    if not in_support(t, theta_p):
        rng.random()
        return False, 0
    if uses_gradient(prop):
        lp_p = log_post_grad(t, theta_p, grad_p)
        if bug != 4:
            rescale_gradient(grad_p, glen)
    else:
        lp_p = log_post(t, theta_p)
    log_r = lp_p - lp[0]
    if bug != 1:
        log_r += log_q_ratio(prop, theta, theta_p, grad, grad_p, sigma, h, K)
    if bug == 2:
        log_r += MUTANT_SHIFT
    u = rng.random()
    if np.log(u) < log_r:
        theta[:] = theta_p
        grad[:] = grad_p
        if bug == 4:  # the state keeps the rescaled gradient (only the reverse density is wrong)
            rescale_gradient(grad, glen)
        if bug != 3:
            lp[0] = lp_p
        return True, t.X.shape[0]
    return False, t.X.shape[0]


@njit(cache=True)
def _repeat_mh_steps_mutant(t, theta0, prop, sigma, h, K, n_steps, rng, reps, bug):
    d = theta0.shape[0]
    th0, g0, lp0 = mh_init(t, theta0, prop, 0.0)
    out = np.empty((reps, d))
    theta = np.empty(d)
    grad = np.empty(d)
    lp = np.empty(1)
    theta_p = np.empty(d)
    grad_p = np.zeros(d)
    for r in range(reps):
        theta[:] = th0
        grad[:] = g0
        lp[0] = lp0[0]
        for _ in range(n_steps):
            _mh_step_mutant(t, theta, grad, lp, prop, sigma, h, K, rng, theta_p, grad_p, bug, 0.0)
        out[r] = theta
    return out


@njit(cache=True)
def repeat_mh_steps_stale_logpi(
    t: TallData, theta0, prop: int, sigma: float, h: float, K: int, n_steps: int, rng, reps: int
):
    """Mutant of ``verify.empirical.repeat_mh_steps``: cached log pi not updated on accept."""
    return _repeat_mh_steps_mutant(t, theta0, prop, sigma, h, K, n_steps, rng, reps, 3)


@njit(cache=True)
def _repeat_mh_mutant(t, theta0, prop, sigma, h, K, rng, reps, bug):
    d = theta0.shape[0]
    th0, g0, lp0 = mh_init(t, theta0, prop, 0.0)
    out = np.empty((reps, d))
    theta = np.empty(d)
    grad = np.empty(d)
    lp = np.empty(1)
    theta_p = np.empty(d)
    grad_p = np.zeros(d)
    for r in range(reps):
        theta[:] = th0
        grad[:] = g0
        lp[0] = lp0[0]
        _mh_step_mutant(t, theta, grad, lp, prop, sigma, h, K, rng, theta_p, grad_p, bug, 0.0)
        out[r] = theta
    return out


@njit(cache=True)
def repeat_mh_no_hastings(t: TallData, theta0, prop: int, sigma: float, h: float, K: int, rng, reps: int):
    """Mutant of ``verify.empirical.repeat_mh_step``: no Hastings correction."""
    return _repeat_mh_mutant(t, theta0, prop, sigma, h, K, rng, reps, 1)


@njit(cache=True)
def repeat_mh_accept_shift(t: TallData, theta0, prop: int, sigma: float, h: float, K: int, rng, reps: int):
    """Mutant of ``verify.empirical.repeat_mh_step``: accepts when log u < log r + 0.3."""
    return _repeat_mh_mutant(t, theta0, prop, sigma, h, K, rng, reps, 2)


@njit(cache=True)
def _chains_mh_mutant(t, X0, prop, sigma, h, K, n_steps, rng, bug, glen):
    n, d = X0.shape
    X = X0.copy()
    theta_p = np.empty(d)
    grad_p = np.zeros(d)
    for c in range(n):
        theta, grad, lp = mh_init(t, X0[c], prop, glen)
        for _ in range(n_steps):
            _mh_step_mutant(t, theta, grad, lp, prop, sigma, h, K, rng, theta_p, grad_p, bug, glen)
        X[c] = theta
    return X


@njit(cache=True)
def chains_mh_no_hastings(t: TallData, X0, prop: int, sigma: float, h: float, K: int, n_steps: int, rng):
    """Mutant of ``verify.continuous.run_chains_mh`` (no Hastings correction)."""
    return _chains_mh_mutant(t, X0, prop, sigma, h, K, n_steps, rng, 1, 0.0)


@njit(cache=True)
def chains_mh_unscaled_reverse(
    t: TallData, X0, prop: int, sigma: float, h: float, K: int, n_steps: int, rng, glen: float
):
    """Mutant of ``verify.continuous.run_chains_mh`` with ``glen``: the reverse proposal density uses
    the raw gradient at theta' instead of the rescaled one."""
    return _chains_mh_mutant(t, X0, prop, sigma, h, K, n_steps, rng, 4, glen)


# ============================================================================ Gibbs mutants
BIASED_SCAN, DROP_FACTOR, SCAN_OFFSET = 1, 2, 3


@njit(cache=True)
def _conditional_logits_drop_last(fg: FactorGraph, x, i: int, out) -> int:
    """conditional_logits without the last factor of A[i] (bug)."""
    D = fg.card[i]
    for v in range(D):
        out[v] = 0.0
    for k in range(fg.var_ptr[i], fg.var_ptr[i + 1] - 1):
        f = fg.var_fac[k]
        for v in range(D):
            out[v] += factor_value_at(fg, f, x, i, v)
    return D * (fg.var_ptr[i + 1] - fg.var_ptr[i] - 1)


@njit(cache=True)
def _gibbs_step_mutant(fg: FactorGraph, x, counter, scan: int, rng, logits, bug: int):
    if scan == RANDOM_SCAN:
        if bug == BIASED_SCAN:
            i = rng.integers(0, fg.n + 1)
            if i == fg.n:
                i = 0
        else:
            i = rng.integers(0, fg.n)
    else:
        if bug == SCAN_OFFSET:
            i = (counter[0] + 1) % fg.n
        else:
            i = counter[0] % fg.n
        counter[0] += 1
    if bug == DROP_FACTOR:
        ne = _conditional_logits_drop_last(fg, x, i, logits)
    else:
        ne = conditional_logits(fg, x, i, logits)
    x[i] = sample_logits(logits, fg.card[i], rng.random())
    return True, ne


@njit(cache=True)
def _repeat_gibbs_mutant(fg, x0, counter0, scan, n_steps, rng, reps, bug):
    x, counter = gibbs_init(fg, x0)
    out = np.empty((reps, fg.n), dtype=np.int64)
    logits = np.empty(fg.card.max())
    for r in range(reps):
        x[:] = x0
        counter[0] = counter0
        for _ in range(n_steps):
            _gibbs_step_mutant(fg, x, counter, scan, rng, logits, bug)
        out[r] = x
    return out


@njit(cache=True)
def repeat_gibbs_biased_scan(fg: FactorGraph, x0, counter0: int, scan: int, n_steps: int, rng, reps: int):
    """Mutant of ``verify.empirical.repeat_gibbs_steps``: non-uniform random scan."""
    return _repeat_gibbs_mutant(fg, x0, counter0, scan, n_steps, rng, reps, BIASED_SCAN)


@njit(cache=True)
def repeat_gibbs_drop_factor(fg: FactorGraph, x0, counter0: int, scan: int, n_steps: int, rng, reps: int):
    """Mutant of ``verify.empirical.repeat_gibbs_steps``: conditional drops one factor."""
    return _repeat_gibbs_mutant(fg, x0, counter0, scan, n_steps, rng, reps, DROP_FACTOR)


@njit(cache=True)
def repeat_gibbs_scan_offset(fg: FactorGraph, x0, counter0: int, scan: int, n_steps: int, rng, reps: int):
    """Mutant of ``verify.empirical.repeat_gibbs_steps``: systematic scan off by one site."""
    return _repeat_gibbs_mutant(fg, x0, counter0, scan, n_steps, rng, reps, SCAN_OFFSET)


# ============================================================================ HMC mutant
@njit(cache=True)
def hmc_step_stale_grad(t: TallData, theta, grad, lp, eps: float, n_leap: int, rng, q, p, g, glen: float):
    """hmc_step whose leapfrog reuses the start-of-step gradient in both half kicks (bug); ``glen`` as in
    ``hmc_step`` (the force rescaled to that length)."""
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
    g_old = np.empty(d)
    for _ in range(n_leap):
        g_old[:] = g
        for j in range(d):
            p[j] += 0.5 * eps * g_old[j]
            q[j] += eps * p[j]
        if not in_support(t, q):
            ok = False
            break
        lq = log_post_grad(t, q, g)
        rescale_gradient(g, glen)
        nev += N
        for j in range(d):
            p[j] += 0.5 * eps * g_old[j]  # bug: should be the new gradient g
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
def chains_hmc_stale_grad(t: TallData, X0, eps: float, n_leap: int, n_steps: int, rng, glen: float):
    """Mutant of ``verify.continuous.run_chains_hmc``."""
    n, d = X0.shape
    X = X0.copy()
    q = np.empty(d)
    p = np.empty(d)
    g = np.empty(d)
    for c in range(n):
        theta = X0[c].copy()
        grad = np.zeros(d)
        lp = np.empty(1)
        lp[0] = log_post_grad(t, theta, grad)
        rescale_gradient(grad, glen)
        for _ in range(n_steps):
            hmc_step_stale_grad(t, theta, grad, lp, eps, n_leap, rng, q, p, g, glen)
        X[c] = theta
    return X
