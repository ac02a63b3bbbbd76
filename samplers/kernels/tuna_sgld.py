"""Tuna-SGLD (Yuan & Wang 2024 Alg. 3, §3.2.2): Metropolised SGLD with two independent minibatches.

omega_1 = B, a uniform K-subset (shared routine :func:`samplers.kernels.sgld.uniform_minibatch`), gives
``g_B(theta) = grad log prior + (N/K) sum_{i in B} grad ll_i(theta)``; the proposal is Langevin with
that drift. omega_2 = the TunaMH Poisson minibatch (:func:`samplers.kernels.tuna_mh.tuna_log_ratio`,
``lam = chi C^2 ||theta' - theta||^2``), drawn independently of B. The reverse proposal density uses
the gradient at theta' from the *same* B.

Drift variants (``drift``):

* ``DRIFT_PAPER`` (0): mean ``theta + (eps^2/2) g_B(theta)``, covariance ``eps^2 I`` (paper, §3.2.2);
* ``DRIFT_NORMALIZED`` (1): Yuan & Wang's (2024) logistic code (``tuna_sgld_proposal!``) normalises
  the minibatch gradient and applies the N/K scale after it: g -> ``(N/K) 2 g / ||g||``, i.e. mean
  ``theta + eps^2 (N/K) g_B / ||g_B||`` (a drift of length eps^2 N/K). Still exact: forward and
  reverse densities use the same map. Without the N/K factor the drift would be 578x too short on
  MNIST 3v5 at K = 20.

Proposal kinds: ``LANGEVIN_GAUSS`` (the method) or ``LANGEVIN_LATTICE`` (finite family for the exact
matrix checks); the drift map is applied to the gradient before it enters :mod:`samplers.proposals`.
``n_evals`` = K + B (distinct draws); per-datum evaluations (first extra trace) = 2K + 2B.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.kernels.poisson_mh import ERR_SGLD_GRAD
from samplers.kernels.sgld import uniform_minibatch
from samplers.kernels.tuna_mh import tuna_log_ratio
from samplers.proposals import log_q_ratio, propose, rescale_gradient
from samplers.targets.tall import TallData, grad_estimate, log_prior

DRIFT_PAPER, DRIFT_NORMALIZED = 0, 1


@njit(cache=True)
def first_nonfinite(g: np.ndarray) -> int:
    """Index of the first NaN / inf entry of ``g``, -1 if none (O(d); no branch taken on finite g)."""
    for j in range(g.shape[0]):
        if not np.isfinite(g[j]):
            return j
    return -1


@njit(cache=True)
def drift_map(g: np.ndarray, drift: int, scale: float) -> None:
    """Apply the drift variant to the gradient estimate in place; ``scale`` = N/K (the authors'
    normalised drift ``scale * 2 g / ||g||``; ignored by the paper's drift)."""
    if drift == DRIFT_NORMALIZED:
        rescale_gradient(g, 2.0 * scale)


@njit(cache=True)
def tuna_sgld_init(t: TallData, theta0: np.ndarray):
    """State: ``(theta, lp, err, buf, kept_i, perm)``; ``perm`` is the persistent permutation of the
    uniform minibatch routine (``perm[:K]`` = B after a step)."""
    theta = theta0.copy()
    lp = np.empty(1)
    lp[0] = log_prior(t, theta)
    return (
        theta,
        lp,
        np.zeros(2, dtype=np.int64),
        np.empty(256, dtype=np.int64),
        np.empty(256, dtype=np.int64),
        np.arange(t.X.shape[0]),
    )


@njit(cache=True)
def tuna_sgld_step(
    t: TallData,
    theta,
    lp,
    err,
    buf,
    kept_i,
    perm,
    batch: int,
    chi: float,
    C: float,
    rows,
    prop: int,
    drift: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    theta_p,
    g,
    g_p,
):
    """One Tuna-SGLD transition in place.

    Returns ``(accepted, n_evals, datum_evals, nk, log_r, buf, kept_i)``."""
    uniform_minibatch(perm, batch, rng)
    grad_estimate(t, theta, perm, batch, g)
    scale = t.X.shape[0] / batch
    drift_map(g, drift, scale)
    j = first_nonfinite(g)
    if j >= 0:
        err[0] = ERR_SGLD_GRAD
        err[1] = j
        return False, batch, batch, 0, np.nan, buf, kept_i
    propose(prop, theta, g, sigma, h, K, rng, theta_p)
    lp_p = log_prior(t, theta_p)
    if lp_p == -np.inf:
        return False, batch, batch, 0, -np.inf, buf, kept_i
    grad_estimate(t, theta_p, perm, batch, g_p)
    drift_map(g_p, drift, scale)
    j = first_nonfinite(g_p)
    if j >= 0:
        err[0] = ERR_SGLD_GRAD
        err[1] = j
        return False, batch, 2 * batch, 0, np.nan, buf, kept_i
    s, B, nk, buf, kept_i = tuna_log_ratio(t, theta, theta_p, chi, C, rows, rng, buf, kept_i, err)
    if err[0] != 0:
        return False, batch + B, 2 * (batch + B), nk, np.nan, buf, kept_i
    log_r = s + lp_p - lp[0] + log_q_ratio(prop, theta, theta_p, g, g_p, sigma, h, K)
    if np.log(rng.random()) < log_r:
        theta[:] = theta_p
        lp[0] = lp_p
        return True, batch + B, 2 * (batch + B), nk, log_r, buf, kept_i
    return False, batch + B, 2 * (batch + B), nk, log_r, buf, kept_i


@njit(cache=True)
def tuna_sgld_sample(
    t: TallData,
    theta,
    lp,
    err,
    buf,
    kept_i,
    perm,
    n_iter: int,
    batch: int,
    chi: float,
    C: float,
    rows,
    prop: int,
    drift: int,
    sigma: float,
    h: float,
    K: int,
    rng,
    thin: int,
):
    """Chain loop; returns ``(samples, accepted, n_evals, datum_evals)``; stops on a bound error or a
    NaN / inf gradient (``err = [ERR_SGLD_GRAD, coordinate]``)."""
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    dev = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    g = np.zeros(d)
    g_p = np.zeros(d)
    for it in range(n_iter):
        if err[0] == 0:
            a, ne, de, _, _, buf, kept_i = tuna_sgld_step(
                t,
                theta,
                lp,
                err,
                buf,
                kept_i,
                perm,
                batch,
                chi,
                C,
                rows,
                prop,
                drift,
                sigma,
                h,
                K,
                rng,
                theta_p,
                g,
                g_p,
            )
            acc[it] = a
            nev[it] = ne
            dev[it] = de
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, dev
