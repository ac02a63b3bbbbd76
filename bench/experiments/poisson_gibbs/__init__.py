"""Experiments of the poisson_gibbs family: Zhang & De Sa 2019, "Poisson-Minibatching for Gibbs Sampling
with Convergence Rate Guarantees", §4.

* :mod:`.potts` ``pg_potts``: Potts model, marginal l2 error vs iterations / time (§4.1, Figs. 1a, 1b,
  2a, 2b);
* :mod:`.continuous_spin` ``pg_spin``: continuous spin model, symmetric KL vs iterations / time (§4.2,
  Figs. 1c, 2c);
* :mod:`.truncated_gaussian_mixture` ``pg_tgm``: truncated Gaussian mixture density estimates (§4.3,
  App. D.2, Figs. 3, 4).

:mod:`.paper_values` holds the factors per iteration the paper prints, :mod:`.common` the Numba running
counts and checkpoints the experiments share.
"""

from __future__ import annotations

from bench.experiments.poisson_gibbs import continuous_spin, potts, truncated_gaussian_mixture

EXPERIMENTS = [
    *potts.EXPERIMENTS,
    *continuous_spin.EXPERIMENTS,
    *truncated_gaussian_mixture.EXPERIMENTS,
]
