"""Reversible-jump MCMC for Bayesian variable selection in logistic regression (Korattikara, Chen &
Welling 2014, "K14", §6.3 and App. E; Green 1995), with the exact MH test or the K14 sequential t-test
(:func:`samplers.approx.seqtest.seq_ttest`, reused, not copied).

State. ``theta`` is the full D-vector of coefficients; feature j is in the model (gamma_j = 1) iff
``theta[j] != 0`` (active coefficients are never exactly 0: such proposals are rejected, a set of
measure zero in the continuous version and impossible on the lattice, whose points are
(i + 1/2) h). The likelihood is the LOGISTIC kind of :mod:`samplers.targets.tall` evaluated at the
full vector (inactive entries are 0), so the per-datum l_i of the test are those of the tall target.

Target (K14 §6.3, App. E): p(beta_j | nu) = e^{-|beta_j|/nu} / (2 nu) for
active j, p(nu) ~ 1/nu, p(gamma | lambda) ~ lambda^k / (C(D, k) k!) (right-truncated Poisson, k =
|gamma| >= 1). Integrating nu out gives, up to a constant,

    log pi(gamma, beta) = sum_i l_i(beta) - k log ||beta||_1 + k log lambda' + log B(k, D - k + 1),

where lambda' = lambda / 2 absorbs the 2^{-k} of the Laplace normaliser (K14's mu0 formulas omit it;
we expose ``log_lam`` = log lambda' and say so). k = 0 has zero mass (B(0, .) = inf is the
improper limit), so the chain stays in k >= 1.

Moves (K14 App. E; the move probabilities of Chen, Wang & McKeown 2011 are not given in K14, ASSUMPTION):
birth with probability ``p_bd`` if k < D, death with probability ``p_bd`` if k > 1, update otherwise.

* update: pick an active j uniformly, beta_j' = beta_j + sigma_u N(0, 1) (lattice: +- h);
* birth: pick an inactive j uniformly (1 / (D - k)), draw beta_j' ~ N(0, sigma_b^2) (lattice: the
  Gaussian weights normalised over the 2M lattice points (i - M + 1/2) h);
* death: pick an active j uniformly (1 / k) and set beta_j' = 0.

Birth/death are dimension-matching with the identity map (u = beta_j'), so the Jacobian is 1 and
log q(x | x') - log q(x' | x) = log[p_d(k + 1) / (k + 1)] - log[p_b(k) q_b(beta_j') / (D - k)] for a
birth (the reverse for a death); 0 for an update. The MH test is run on
mu0 = (1/N)[log u - (log prior' - log prior) - lqr] by :func:`seq_ttest`; with ``m >= N`` the decision
is exact MH's, mean_i l_i > mu0, from one full-data pass (:func:`full_pass_stats`, the test's all-N
decision without drawing an order). Lattice mode (``h > 0``, ``M`` points per sign, |beta_j| <=
(M - 1/2) h, updates leaving the range rejected) exists for the exact transition-matrix check in
:mod:`verify.approx_rjmcmc`.

Costs per iteration: ``n_evals`` = data used by the test (0 for rejected-before-test proposals);
trace 0 = full-data passes (always 0); trace 1 = move type (0 update, 1 birth, 2 death).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.approx.seqtest import full_pass_stats, mu0_of, seq_ttest
from samplers.targets.tall import TallData

UPDATE, BIRTH, DEATH = 0, 1, 2


@njit(cache=True)
def rj_k(theta: np.ndarray) -> int:
    """Model size k = number of non-zero coefficients."""
    k = 0
    for j in range(theta.shape[0]):
        if theta[j] != 0.0:
            k += 1
    return k


@njit(cache=True)
def rj_log_prior(theta: np.ndarray, log_lam: float, bmax: float) -> float:
    """log prior of (gamma, beta) with nu integrated out (module docstring); -inf if k = 0 or some
    |beta_j| > bmax (the lattice range; bmax = inf in the continuous version)."""
    D = theta.shape[0]
    k = 0
    l1 = 0.0
    for j in range(D):
        a = abs(theta[j])
        if a > bmax or not np.isfinite(a):
            return -np.inf
        if a != 0.0:
            k += 1
            l1 += a
    if k == 0:
        return -np.inf
    return -k * math.log(l1) + k * log_lam + math.lgamma(k) + math.lgamma(D - k + 1.0) - math.lgamma(D + 1.0)


@njit(cache=True)
def move_probs(k: int, D: int, p_bd: float):
    """(p_birth, p_death) in a model of size k (the rest is the update probability)."""
    pb = p_bd if k < D else 0.0
    pd = p_bd if k > 1 else 0.0
    return pb, pd


@njit(cache=True)
def birth_log_density(v: float, sig_b: float, h: float, M: int) -> float:
    """log q_b(v): N(0, sig_b^2) density, or on the lattice the normalised Gaussian weight of v."""
    if h > 0.0:
        z = 0.0
        for i in range(2 * M):
            g = (i - M + 0.5) * h
            z += math.exp(-0.5 * g * g / (sig_b * sig_b))
        return -0.5 * v * v / (sig_b * sig_b) - math.log(z)
    return -0.5 * v * v / (sig_b * sig_b) - math.log(sig_b) - 0.5 * math.log(2.0 * math.pi)


@njit(cache=True)
def _birth_draw(sig_b: float, h: float, M: int, rng) -> float:
    if h > 0.0:
        z = 0.0
        for i in range(2 * M):
            g = (i - M + 0.5) * h
            z += math.exp(-0.5 * g * g / (sig_b * sig_b))
        r = rng.random() * z
        c = 0.0
        for i in range(2 * M):
            g = (i - M + 0.5) * h
            c += math.exp(-0.5 * g * g / (sig_b * sig_b))
            if r < c:
                return g
        return (M - 0.5) * h
    return sig_b * rng.standard_normal()


@njit(cache=True)
def _pick(theta: np.ndarray, active: bool, r: int) -> int:
    """Index of the r-th active (or inactive) coordinate."""
    c = 0
    for j in range(theta.shape[0]):
        if (theta[j] != 0.0) == active:
            if c == r:
                return j
            c += 1
    return -1


@njit(cache=True)
def rj_propose(theta, theta_p, p_bd: float, sig_u: float, sig_b: float, h: float, M: int, rng):
    """Fill ``theta_p`` with a proposal; returns (move, lqr) with lqr = log q(x|x') - log q(x'|x)
    (move = -1: a proposal with an exact-zero active coefficient, to be rejected)."""
    D = theta.shape[0]
    k = rj_k(theta)
    theta_p[:] = theta
    pb, pd = move_probs(k, D, p_bd)
    r = rng.random()
    if r < pb:
        j = _pick(theta, False, rng.integers(0, D - k))
        v = _birth_draw(sig_b, h, M, rng)
        if v == 0.0:
            return -1, 0.0
        theta_p[j] = v
        _, pd_rev = move_probs(k + 1, D, p_bd)
        lqr = (
            math.log(pd_rev)
            - math.log(k + 1.0)
            - (math.log(pb) - math.log(D - k) + birth_log_density(v, sig_b, h, M))
        )
        return BIRTH, lqr
    if r < pb + pd:
        j = _pick(theta, True, rng.integers(0, k))
        v = theta[j]
        theta_p[j] = 0.0
        pb_rev, _ = move_probs(k - 1, D, p_bd)
        lqr = (math.log(pb_rev) - math.log(D - k + 1.0) + birth_log_density(v, sig_b, h, M)) - (
            math.log(pd) - math.log(k)
        )
        return DEATH, lqr
    j = _pick(theta, True, rng.integers(0, k))
    if h > 0.0:
        theta_p[j] = theta[j] + (h if rng.random() < 0.5 else -h)
    else:
        theta_p[j] = theta[j] + sig_u * rng.standard_normal()
    if theta_p[j] == 0.0:
        return -1, 0.0
    return UPDATE, 0.0


@njit(cache=True)
def rjmcmc_init(t: TallData, theta0: np.ndarray):
    if theta0.shape[0] != t.X.shape[1]:
        raise ValueError("rjmcmc: theta0 must have one entry per feature")
    if rj_k(theta0) == 0:
        raise ValueError("rjmcmc: the initial model must include at least one feature (k >= 1)")
    return theta0.copy(), np.arange(t.X.shape[0])


@njit(cache=True)
def rjmcmc_step(
    t: TallData,
    theta,
    perm,
    log_lam: float,
    p_bd: float,
    sig_u: float,
    sig_b: float,
    h: float,
    M: int,
    bmax: float,
    m: int,
    tcrit,
    rng,
    theta_p,
):
    """One RJMCMC transition in place. Returns (accepted, test data used, move type)."""
    move, lqr = rj_propose(theta, theta_p, p_bd, sig_u, sig_b, h, M, rng)
    if move < 0:
        return False, 0, UPDATE
    lp_p = rj_log_prior(theta_p, log_lam, bmax)
    if lp_p == -np.inf:
        return False, 0, move
    dlp = lp_p - rj_log_prior(theta, log_lam, bmax)
    u = rng.random()
    mu0 = mu0_of(t.X.shape[0], math.log(u), dlp, lqr)
    N = t.X.shape[0]
    if m >= N:  # exact MH: one full-data pass (the test's all-N decision, without drawing an order)
        mean_l, _, _ = full_pass_stats(t, theta, theta_p)
        acc, n = mean_l > mu0, N
    else:
        acc, n = seq_ttest(t, theta, theta_p, mu0, perm, m, tcrit, rng)
    if acc:
        theta[:] = theta_p
    return acc, n, move


@njit(cache=True)
def rjmcmc_sample(
    t: TallData,
    theta,
    perm,
    n_iter: int,
    log_lam: float,
    p_bd: float,
    sig_u: float,
    sig_b: float,
    h: float,
    M: int,
    bmax: float,
    m: int,
    tcrit,
    rng,
    thin: int,
):
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    full = np.zeros(n_iter, dtype=np.int64)
    moves = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    for it in range(n_iter):
        a, ne, mv = rjmcmc_step(
            t, theta, perm, log_lam, p_bd, sig_u, sig_b, h, M, bmax, m, tcrit, rng, theta_p
        )
        acc[it] = a
        nev[it] = ne
        moves[it] = mv
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, full, moves
