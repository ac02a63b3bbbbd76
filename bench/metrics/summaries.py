"""Cost and prediction summaries: evaluation counts per iteration, logistic-regression test accuracy, risk."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bench.metrics._validate import _finite_array


# ----------------------------------------------------------------------------------------------
# Cost, logistic regression accuracy, risk
# ----------------------------------------------------------------------------------------------
def batch_summary(n_evals) -> dict[str, float]:
    """Summary of per-iteration evaluation counts (minibatch sizes / factors evaluated).

    Keys: mean, std (ddof 0), min, q05, q25, median, q75, q95, max (numpy linear quantiles).
    """
    v = _finite_array(n_evals, "n_evals")
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"n_evals must be a non-empty 1-D array; got shape {v.shape}")
    if np.any(v < 0):
        raise ValueError("n_evals must be non-negative")
    q = np.quantile(v, [0.05, 0.25, 0.5, 0.75, 0.95])
    return {
        "mean": float(v.mean()),
        "std": float(v.std()),
        "min": float(v.min()),
        "q05": float(q[0]),
        "q25": float(q[1]),
        "median": float(q[2]),
        "q75": float(q[3]),
        "q95": float(q[4]),
        "max": float(v.max()),
    }


def test_accuracy(theta_running_mean, X, y) -> float | np.ndarray:
    """Test accuracy of ``predict = 1 if theta.x > 0 else 0`` vs labels in {0, 1}.

    As ruqizhang/tunamh ``logistic/tunamh.jl::test`` (Yuan & Wang 2024 MNIST protocol): ``theta`` is the
    running mean of all samples so far. ``theta_running_mean`` (d,) -> float; (k, d) -> (k,)
    (one accuracy per checkpoint). ``X`` (N, d), ``y`` (N,).
    """
    th = _finite_array(theta_running_mean, "theta_running_mean")
    xm = _finite_array(X, "X")
    yv = _finite_array(y, "y")
    if xm.ndim != 2 or xm.shape[0] == 0:
        raise ValueError(f"X must have shape (N, d) with N >= 1; got {xm.shape}")
    if th.ndim not in (1, 2) or th.shape[-1] != xm.shape[1]:
        raise ValueError(f"theta must have shape ({xm.shape[1]},) or (k, {xm.shape[1]}); got {th.shape}")
    if yv.shape != (xm.shape[0],):
        raise ValueError(f"y must have shape ({xm.shape[0]},); got {yv.shape}")
    if not np.all((yv == 0) | (yv == 1)):
        raise ValueError("y must contain only 0/1 labels")
    pred = (xm @ np.atleast_2d(th).T > 0).astype(float)  # (N, k)
    acc = np.mean(pred == yv[:, None], axis=0)
    return float(acc[0]) if th.ndim == 1 else acc


test_accuracy.__test__ = False  # not a pytest test, despite the name


class Risk(NamedTuple):
    """``risk = bias2 + variance`` (each averaged over coordinates)."""

    risk: float
    bias2: float
    variance: float


def risk(estimates, truth) -> Risk:
    """Risk of an estimator over independent chains: squared bias + variance (ddof 0).

    ``estimates`` (n_chains,) or (n_chains, d): one estimate per chain (e.g. the predictive
    mean per test point); ``truth`` scalar or (d,). Per coordinate, bias^2 = (mean over chains
    - truth)^2 and variance = var over chains; both are averaged over coordinates, and risk
    equals the mean over chains and coordinates of (estimate - truth)^2.
    """
    e = _finite_array(estimates, "estimates")
    if e.ndim == 1:
        e = e[:, None]
    if e.ndim != 2 or e.shape[0] < 1 or e.shape[1] < 1:
        raise ValueError(f"estimates must have shape (n_chains,) or (n_chains, d); got {e.shape}")
    t = _finite_array(truth, "truth")
    if t.ndim > 1 or (t.ndim == 1 and t.shape[0] != e.shape[1]):
        raise ValueError(f"truth must be a scalar or shape ({e.shape[1]},); got {t.shape}")
    bias2 = float(np.mean((e.mean(axis=0) - t) ** 2))
    var = float(np.mean(e.var(axis=0)))
    return Risk(bias2 + var, bias2, var)
