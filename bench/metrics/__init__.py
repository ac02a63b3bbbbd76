"""Metrics for the minibatch-MCMC benchmark: one implementation of each, for the whole project.

* :mod:`bench.metrics.ess`: ``ess`` with four estimators (the papers' "identity", ArviZ "mean" / "bulk", and
  the Yuan & Wang 2024 code's "authors"), ``ess_report`` (ESS and ESS/s, min / median / max over coordinates,
  reliability flags), ``ess_cap``, ``capped_dims``, ``mcse_mean``.
* :mod:`bench.metrics.errors`: ``mse`` / ``mse_running`` (running mean and variance against a reference),
  ``ks_2samp_per_dim``, ``marginal_l2_error`` / ``marginal_l2_error_running`` / ``marginal_l2_from_counts``
  (discrete chains), ``sym_kl_hist`` / ``sym_kl``, ``tv_distance``, ``l1_error``.
* :mod:`bench.metrics.summaries`: ``batch_summary`` of per-iteration evaluation counts, ``test_accuracy`` and
  ``risk`` (logistic regression).

Import them from here (``from bench import metrics as MT``; ``MT.ess(...)``).
"""

from bench.metrics.errors import (
    RunningMSE,
    ks_2samp_per_dim,
    l1_error,
    marginal_l2_error,
    marginal_l2_error_running,
    marginal_l2_from_counts,
    mse,
    mse_running,
    sym_kl,
    sym_kl_hist,
    tv_distance,
)
from bench.metrics.ess import (
    AUTHORS_MAXLAG,
    ESS_METHODS,
    _ess_core,
    capped_dims,
    ess,
    ess_cap,
    ess_report,
    mcse_mean,
    min_median_max,
)
from bench.metrics.summaries import Risk, batch_summary, risk, test_accuracy

__all__ = [
    "AUTHORS_MAXLAG",
    "ESS_METHODS",
    "ess",
    "ess_cap",
    "capped_dims",
    "ess_report",
    "mcse_mean",
    "mse",
    "mse_running",
    "RunningMSE",
    "ks_2samp_per_dim",
    "min_median_max",
    "marginal_l2_error",
    "marginal_l2_error_running",
    "marginal_l2_from_counts",
    "sym_kl_hist",
    "sym_kl",
    "tv_distance",
    "l1_error",
    "batch_summary",
    "test_accuracy",
    "risk",
    "Risk",
    "_ess_core",
]
