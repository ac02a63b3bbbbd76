"""Calibration of austere Gibbs's conditional probabilities (Korattikara et al. 2014, App. F, Fig. 14).

For a state x and a variable i of a binary factor graph, exact Gibbs sets x_i = 1 with probability
p = sigmoid(sum_f [phi_f(x_{i<-1}) - phi_f(x_{i<-0})]). Austere Gibbs decides the same event by the K14
sequential t-test over the factors of i (:func:`samplers.kernels.austere_gibbs.factor_ttest`), so it sets
x_i = 1 with some probability p_eps(x, i). :func:`conditional_calibration` estimates p_eps by repeating the
test ``reps`` times (each with a fresh u and factor order) at every (state, variable) pair and returns it
beside the exact p, the points of K14's Fig. 14 (empirical against true conditional probability).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.kernels.austere_gibbs import factor_ttest
from samplers.targets.factor_graph import FactorGraph, factor_value_at


@njit(cache=True)
def exact_conditional(fg: FactorGraph, x, i: int) -> float:
    """P(x_i = 1 | x_-i) = sigmoid(sum over the factors of i of phi_f(x_{i<-1}) - phi_f(x_{i<-0}))."""
    s = 0.0
    for q in range(fg.var_ptr[i], fg.var_ptr[i + 1]):
        f = fg.var_fac[q]
        s += factor_value_at(fg, f, x, i, 1) - factor_value_at(fg, f, x, i, 0)
    if s >= 0.0:
        return 1.0 / (1.0 + math.exp(-s))
    e = math.exp(s)
    return e / (1.0 + e)


@njit(cache=True)
def _calibrate(fg: FactorGraph, states, var_idx, m: int, tcrit, reps: int, rng):
    n = states.shape[0]
    p = np.empty(n)
    p_hat = np.empty(n)
    used = np.empty(n)
    perm = fg.var_fac.copy()
    x = np.empty(fg.n, dtype=np.int64)
    for k in range(n):
        x[:] = states[k]
        i = var_idx[k]
        Ni = fg.var_ptr[i + 1] - fg.var_ptr[i]
        p[k] = exact_conditional(fg, x, i)
        ones = 0
        tot = 0
        for _ in range(reps):
            u = rng.random()
            mu0 = math.log(u / (1.0 - u)) / Ni
            one, nf = factor_ttest(fg, x, i, mu0, perm, m, tcrit, rng)
            ones += 1 if one else 0
            tot += nf
        p_hat[k] = ones / reps
        used[k] = tot / (reps * Ni)
    return p, p_hat, used


def conditional_calibration(
    fg: FactorGraph, states: np.ndarray, var_idx: np.ndarray, m: int, eps: float, reps: int, seed
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(p, p_hat, frac)`` at each pair (states[k], var_idx[k]): the exact conditional P(x_i = 1 | x_-i), the
    fraction of ``reps`` austere tests (batches of ``m`` factors, per-look error ``eps``) that set x_i = 1,
    and the mean fraction of i's factors the tests used."""
    from samplers.approx.seqtest import tcrit_table

    states = np.ascontiguousarray(states, dtype=np.int64)
    var_idx = np.ascontiguousarray(var_idx, dtype=np.int64)
    if states.ndim != 2 or states.shape[1] != fg.n:
        raise ValueError(f"states must be (n, {fg.n}), got shape {states.shape}")
    if var_idx.shape != (states.shape[0],):
        raise ValueError(f"var_idx must have one variable per state ({states.shape[0]}), got {var_idx.shape}")
    if np.any((states != 0) & (states != 1)) or np.any(fg.card != 2):
        raise ValueError("calibration needs binary variables and states in {0, 1}")
    if var_idx.size and (var_idx.min() < 0 or var_idx.max() >= fg.n):
        raise ValueError(f"var_idx must lie in [0, {fg.n})")
    if not (isinstance(m, (int, np.integer)) and m >= 1):
        raise ValueError(f"m must be a positive integer, got {m!r}")
    if not (isinstance(reps, (int, np.integer)) and reps >= 1):
        raise ValueError(f"reps must be a positive integer, got {reps!r}")
    if not (0.0 < eps < 0.5):
        raise ValueError(f"eps must be in (0, 0.5), got {eps!r}")
    deg = int(np.max(np.diff(fg.var_ptr)))
    if deg < 2 or np.any(np.diff(fg.var_ptr)[var_idx] < 2):
        raise ValueError("every tested variable needs at least 2 factors")
    rng = np.random.default_rng(seed)
    return _calibrate(fg, states, var_idx, int(m), tcrit_table(deg, float(eps)), int(reps), rng)


def calibration_curve(p: np.ndarray, p_hat: np.ndarray, bins: int = 20) -> dict:
    """Binned Fig. 14 curve: per bin of the exact p (equal width on [0, 1]) its centre, the mean p and p_hat
    and the pair count; and the largest |p_hat - p| over bins with >= 10 pairs."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    k = np.clip(np.digitize(p, edges) - 1, 0, bins - 1)
    cnt = np.bincount(k, minlength=bins)
    mp = np.bincount(k, weights=p, minlength=bins) / np.maximum(cnt, 1)
    mh = np.bincount(k, weights=p_hat, minlength=bins) / np.maximum(cnt, 1)
    good = cnt >= 10
    return {
        "centre": (0.5 * (edges[1:] + edges[:-1]))[good].tolist(),
        "p": mp[good].tolist(),
        "p_hat": mh[good].tolist(),
        "count": cnt[good].tolist(),
        "max_bin_error": float(np.max(np.abs(mh - mp)[good])) if good.any() else float("nan"),
    }
