"""Proposal kernels shared by every MH-type method (one implementation of each density).

Kinds (``prop`` argument of :func:`propose` / :func:`log_q`):

* ``RW_GAUSS``        theta' = theta + sigma * xi                                   (symmetric)
* ``RW_LATTICE``      one uniformly chosen coordinate moves by +-h                   (symmetric, finite)
* ``LANGEVIN_GAUSS``  theta' ~ N(theta + sigma^2/2 g(theta), sigma^2 I)       (MALA; Yuan & Wang 2024 Alg. 2)
* ``LANGEVIN_LATTICE`` per coordinate, offset k h with k in {-K..K} and probability
  proportional to exp(-(k h - sigma^2/2 g_j)^2 / (2 sigma^2))  (a finite gradient-informed family)
* ``BARKER_GAUSS``    per coordinate z ~ N(0, sigma^2); move +z w.p. 1/(1 + e^{-g_j z}), else -z
  (Livingstone & Zanella 2022; Yuan & Wang 2024 Alg. 2, App. D). q_j(d) = 2 mu(d) / (1 + e^{-g_j d})
* ``BARKER_LATTICE``  the same with mu = 1/2 delta_{+h} + 1/2 delta_{-h} (finite state space)

``g`` is whatever gradient (exact or a minibatch surrogate) the calling kernel supplies; the reverse
density must be evaluated with the gradient at theta' computed from the *same* auxiliary variables.
Step-size convention: ``sigma`` as in the papers. Yuan & Wang's (2024) MALA code uses
theta + h^2 g + sqrt(2) h xi, i.e. sigma = sqrt(2) h.

Gradient rescaling (:func:`rescale_gradient`): Yuan & Wang's (2024) logistic-regression code
replaces the gradient of MALA, Barker, HMC and Tuna-SGLD by a
vector of fixed length, ``length * g / ||g||``. The kernels apply the map to the gradient *before* it
enters :func:`propose` / :func:`log_q_ratio` (or the leapfrog), at theta and at theta' alike, so the
sampler stays exact for any length: the map only changes the proposal, and the reverse density is
evaluated with the same map.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

RW_GAUSS, RW_LATTICE, LANGEVIN_GAUSS, LANGEVIN_LATTICE, BARKER_GAUSS, BARKER_LATTICE = range(6)
PROPOSAL_NAMES = (
    "rw_gauss",
    "rw_lattice",
    "langevin_gauss",
    "langevin_lattice",
    "barker_gauss",
    "barker_lattice",
)


# gradient modes of the full-batch gradient methods (samplers.methods.baselines ``grad=``)
GRAD_MODES = ("exact", "normalized", "authors")


@njit(cache=True)
def uses_gradient(prop: int) -> bool:
    return prop >= LANGEVIN_GAUSS


def gradient_length(method: str, grad: str) -> float:
    """``length`` argument of :func:`rescale_gradient` for a full-batch gradient method:

    * ``"exact"``: 0 (the gradient itself; the algorithms as published);
    * ``"normalized"``: 2, i.e. ``2 g / ||g||`` with g = grad log pi;
    * ``"authors"``: Yuan & Wang's (2024) logistic code exactly: ``2 g / ||g||`` for MALA and HMC,
      ``2 grad U / ||grad U|| = -2 g / ||g||`` for Barker (its flip probability uses the gradient of
      U = -log pi, ``barker_proposal!`` in src/bayes_logistic_reg/methods.jl).
    """
    if grad not in GRAD_MODES:
        raise ValueError(f"grad must be one of {GRAD_MODES}, got {grad!r}")
    if grad == "exact":
        return 0.0
    return -2.0 if (grad == "authors" and method == "barker") else 2.0


@njit(cache=True)
def rescale_gradient(g: np.ndarray, length: float) -> None:
    """``g <- length * g / ||g||`` in place; ``length = 0`` leaves the exact gradient (no-op). A zero
    gradient stays zero (the authors' code would divide by zero there)."""
    if length == 0.0:
        return
    s = 0.0
    for j in range(g.shape[0]):
        s += g[j] * g[j]
    nrm = math.sqrt(s)
    if nrm > 0.0:
        for j in range(g.shape[0]):
            g[j] = length * g[j] / nrm


@njit(cache=True)
def _log1pexp(z: float) -> float:
    if z > 0.0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


@njit(cache=True)
def _lattice_langevin_logp(k: int, h: float, sigma: float, gj: float, K: int) -> float:
    """log P(offset = k h) of the lattice Langevin proposal in one coordinate (exactly normalised)."""
    mu = 0.5 * sigma * sigma * gj
    m = -np.inf
    for kk in range(-K, K + 1):
        v = -((kk * h - mu) ** 2) / (2 * sigma * sigma)
        if v > m:
            m = v
    z = 0.0
    for kk in range(-K, K + 1):
        z += math.exp(-((kk * h - mu) ** 2) / (2 * sigma * sigma) - m)
    return -((k * h - mu) ** 2) / (2 * sigma * sigma) - m - math.log(z)


@njit(cache=True)
def propose(
    prop: int,
    theta: np.ndarray,
    g: np.ndarray,
    sigma: float,
    h: float,
    K: int,
    rng,
    out: np.ndarray,
) -> None:
    """Draw theta' into ``out``."""
    d = theta.shape[0]
    if prop == RW_GAUSS:
        for j in range(d):
            out[j] = theta[j] + sigma * rng.standard_normal()
    elif prop == RW_LATTICE:
        out[:] = theta
        j = rng.integers(0, d)
        if rng.random() < 0.5:
            out[j] = theta[j] + h
        else:
            out[j] = theta[j] - h
    elif prop == LANGEVIN_GAUSS:
        for j in range(d):
            out[j] = theta[j] + 0.5 * sigma * sigma * g[j] + sigma * rng.standard_normal()
    elif prop == LANGEVIN_LATTICE:
        for j in range(d):
            u = rng.random()
            acc = 0.0
            kk = K
            for k in range(-K, K + 1):
                acc += math.exp(_lattice_langevin_logp(k, h, sigma, g[j], K))
                if u < acc:
                    kk = k
                    break
            out[j] = theta[j] + kk * h
    else:  # Barker
        for j in range(d):
            if prop == BARKER_GAUSS:
                z = sigma * rng.standard_normal()
            else:
                z = h
            # P(+z) = 1 / (1 + exp(-g z))
            if rng.random() * (1.0 + math.exp(-g[j] * z)) < 1.0:
                out[j] = theta[j] + z
            else:
                out[j] = theta[j] - z


@njit(cache=True)
def log_q_ratio(
    prop: int,
    theta: np.ndarray,
    theta_p: np.ndarray,
    g: np.ndarray,
    g_p: np.ndarray,
    sigma: float,
    h: float,
    K: int,
) -> float:
    """``log q(theta', theta) - log q(theta, theta')`` (reverse minus forward)."""
    d = theta.shape[0]
    if prop == RW_GAUSS or prop == RW_LATTICE:
        return 0.0
    if prop == LANGEVIN_GAUSS:
        s2 = sigma * sigma
        fwd = 0.0
        rev = 0.0
        for j in range(d):
            a = theta_p[j] - theta[j] - 0.5 * s2 * g[j]
            b = theta[j] - theta_p[j] - 0.5 * s2 * g_p[j]
            fwd += a * a
            rev += b * b
        return -(rev - fwd) / (2.0 * s2)
    if prop == LANGEVIN_LATTICE:
        s = 0.0
        for j in range(d):
            k = int(round((theta_p[j] - theta[j]) / h))
            s += _lattice_langevin_logp(-k, h, sigma, g_p[j], K) - _lattice_langevin_logp(
                k, h, sigma, g[j], K
            )
        return s
    # Barker (Gaussian or lattice): mu symmetric, so only the flip probabilities remain
    s = 0.0
    for j in range(d):
        dj = theta_p[j] - theta[j]
        s += _log1pexp(-g[j] * dj) - _log1pexp(g_p[j] * dj)
    return s
