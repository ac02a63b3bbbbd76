"""Experiments of the exact minibatch MH family: Yuan & Wang 2024, "Markov Chain Monte Carlo without
Evaluating the Target: an Auxiliary Variable Approach", §5 and App. G.

* :mod:`.truncated_gaussian` ``exact_mh_tg``: heterogeneous truncated Gaussian, ESS/s (Tables 1, 4), KS
  vs exact draws (Table 3), MSE vs time (Fig. 3);
* :mod:`.robust_regression` ``exact_mh_rlr``: robust linear regression, ESS/s (Tables 2, 5, 6, 7) and
  MSE figures (Figs. 1, 4-9);
* :mod:`.mnist` ``exact_mh_mnist``: logistic regression on MNIST 3v5 / 7v9, test accuracy vs time
  (Figs. 2, 10-13);
* :mod:`.exchange` ``exact_mh_exchange``: the exchange algorithm (Alg. 4) vs the exact posterior.

:mod:`.paper_values` holds the paper's tables and the authors' step sizes, :mod:`.common` what the
experiments share, :mod:`.verdicts` the claims decided on replicated runs (with their intervals).
"""

from __future__ import annotations

from bench.experiments.exact_mh import exchange, mnist, robust_regression, truncated_gaussian

EXPERIMENTS = [
    *truncated_gaussian.EXPERIMENTS,
    *robust_regression.EXPERIMENTS,
    *mnist.EXPERIMENTS,
    *exchange.EXPERIMENTS,
]
