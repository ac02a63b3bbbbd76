"""MIN-Gibbs (De Sa, Chen & Wong 2018), RECONSTRUCTED (no public code).

The state is augmented with a cached estimate eps_x of the global energy U(x). Global Poisson
estimator: s_f ~ Poisson(lambda M_f / Psi) over all factors (B ~ Poisson(lambda) draws from the global
alias table p(f) ∝ M_f), eps(y) = sum_draws log(1 + Psi phi_f(y) / (lambda M_f)); then
E[exp eps(y)] = exp(U(y)) (Poisson MGF), so exp(eps) is an unbiased estimate of exp(U) (up to the
global constant). Step: pick i; for every candidate u != x_i draw a FRESH estimate eps_u of
U(x_{i<-u}); for u = x_i reuse the cache; sample v ∝ exp(eps_u); set x_i = v and cache eps_v.
x-marginal of the augmented invariant law pi(x) q_x(eps) exp(eps) / exp(U(x)) is exactly pi.

Cost per iteration: (D - 1) * B factor evaluations, E = (D - 1) lambda (Table 1: O(D Psi^2) at lambda
= Theta(Psi^2)); n_evals counts every global candidate drawn. The registry's lambda is in units
of L^2 like the other methods (the theory's Theta(Psi^2) is ~1e6 on the §4.1 Potts model).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.alias import alias_draw
from samplers.targets.factor_graph import FactorGraph, factor_value_at, sample_logits

MUT_NONE, MUT_REFRESH_CURRENT = 0, 1


@njit(cache=True, inline="always")
def global_estimate(fg: FactorGraph, x, i: int, u: int, gprob, galias, glam: float, grate, rng):
    """One fresh Poisson estimate eps(x_{i<-u}) with B ~ Poisson(glam) global draws; ``grate[f] =
    glam M_f / Psi``. Returns ``(eps, B)``; allocation-free."""
    B = rng.poisson(glam)
    e = 0.0
    for _ in range(B):
        f = alias_draw(gprob, galias, rng)
        phi = factor_value_at(fg, f, x, i, u)
        if phi > 0.0:  # log1p(0) = 0 exactly: skipping it changes nothing
            e += math.log1p(phi / grate[f])
    return e, B


@njit(cache=True)
def min_gibbs_init(fg: FactorGraph, x0: np.ndarray, gprob, galias, grate):
    """The cached estimate starts as NaN; the first step draws it (chain RNG) at the current x."""
    x = x0.copy()
    eps = np.full(1, np.nan)
    logits = np.zeros(fg.card.max(), dtype=np.float64)
    return x, eps, gprob, galias, grate, logits


@njit(cache=True, inline="always")
def _min_gibbs_update(
    fg: FactorGraph, x, eps, gprob, galias, grate, logits, glam: float, i: int, rng, mutant: int
):
    """Body of :func:`min_gibbs_step`, inlined into the chain loop (no per-iteration call passing
    the FactorGraph and state arrays with reference counting)."""
    D = fg.card[i]
    xi = x[i]
    ne = 0
    if np.isnan(eps[0]):
        eps[0], ne = global_estimate(fg, x, i, xi, gprob, galias, glam, grate, rng)
    for u in range(D):
        if u == xi and mutant != MUT_REFRESH_CURRENT:
            logits[u] = eps[0]
        else:
            e, B = global_estimate(fg, x, i, u, gprob, galias, glam, grate, rng)
            logits[u] = e
            ne += B
    v = sample_logits(logits, D, rng.random())
    x[i] = v
    eps[0] = logits[v]
    return ne


@njit(cache=True)
def min_gibbs_step(
    fg: FactorGraph, x, eps, gprob, galias, grate, logits, glam: float, i: int, rng, mutant: int
):
    """Returns ``n_evals`` (global candidate draws)."""
    return _min_gibbs_update(fg, x, eps, gprob, galias, grate, logits, glam, i, rng, mutant)


@njit(cache=True)
def min_gibbs_sample(
    fg: FactorGraph,
    x,
    eps,
    gprob,
    galias,
    grate,
    logits,
    n_iter: int,
    glam: float,
    mutant: int,
    rng,
    thin: int,
):
    samples = np.empty((n_iter // thin, fg.n), dtype=np.int64)
    acc = np.ones(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    for it in range(n_iter):
        i = rng.integers(0, fg.n)
        nev[it] = _min_gibbs_update(fg, x, eps, gprob, galias, grate, logits, glam, i, rng, mutant)
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = x
    return samples, acc, nev
