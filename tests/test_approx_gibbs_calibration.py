"""K14 App. F, Fig. 14: the conditional-probability calibration of austere Gibbs on a dense MRF.

With batches of at least a variable's factor count the test decides on all factors at once, so its decision
is exact Gibbs's and the fraction of tests setting x_i = 1 is Binomial(reps, p) / reps at every pair: the sums
over the pairs of each of 10 bins of p are checked by z-tests, Bonferroni over the bins at a false-alarm
probability 1e-4 (|z| < 4.56 in every bin), which a graph with other potentials (the mutant: tables scaled by
1.5) fails. With small batches and a large eps, K14's
description holds: large probabilities are underestimated and small ones overestimated. Seeds are fixed."""

from __future__ import annotations

import numpy as np
import pytest

import samplers  # noqa: F401  (sets the Numba cache dir before numba is used)
from samplers.approx.gibbs_calibration import calibration_curve, conditional_calibration, exact_conditional
from samplers.approx.mrf import dense_triple_mrf
from samplers.targets.factor_graph import exact_joint

Z_CRIT = 4.56  # two-sided 1e-5 per bin, 10 bins


def _graph(scale: float = 1.0):
    fg = dense_triple_mrf(8, 0.5, np.random.default_rng(4))
    return fg._replace(tables=fg.tables * scale, M=fg.M * scale) if scale != 1.0 else fg


def _pairs(D: int, n_states: int = 40, seed: int = 2):
    rng = np.random.default_rng(seed)
    states = rng.integers(0, 2, (n_states, D))
    return np.repeat(states, D, axis=0), np.tile(np.arange(D), n_states)


def test_exact_conditional_matches_the_joint():
    fg = _graph()
    X, p = exact_joint(fg)
    x = X[37].copy()
    for i in range(fg.n):
        x1, x0 = x.copy(), x.copy()
        x1[i], x0[i] = 1, 0
        p1 = p[np.all(X == x1, axis=1)][0]
        p0 = p[np.all(X == x0, axis=1)][0]
        assert exact_conditional(fg, x, i) == pytest.approx(p1 / (p0 + p1), rel=1e-10)


def test_whole_batch_test_is_calibrated_and_a_wrong_graph_is_not():
    fg = _graph()
    states, var = _pairs(fg.n)
    Ni = int(np.diff(fg.var_ptr)[0])
    reps = 200
    p, p_hat, frac = conditional_calibration(fg, states, var, Ni, 0.05, reps, 9)
    assert np.all(frac == 1.0)

    def z(p_ref):
        b = np.minimum((p_ref * 10).astype(int), 9)
        out = []
        for k in range(10):
            sel = b == k
            v = reps * np.sum(p_ref[sel] * (1 - p_ref[sel]))
            if v > 0:
                out.append(abs((p_hat[sel].sum() - p_ref[sel].sum()) * reps) / np.sqrt(v))
        return max(out)

    assert z(p) < Z_CRIT
    p_wrong = np.array([exact_conditional(_graph(1.5), s, i) for s, i in zip(states, var, strict=True)])
    assert z(p_wrong) > Z_CRIT


def test_small_batches_shrink_conditionals_towards_one_half():
    fg = _graph()
    states, var = _pairs(fg.n, 60)
    p, p_hat, frac = conditional_calibration(fg, states, var, 3, 0.2, 200, 10)
    assert frac.mean() < 0.6
    hi, lo = p > 0.8, p < 0.2
    assert hi.sum() > 30 and lo.sum() > 30
    d_hi, d_lo = p_hat[hi] - p[hi], p_hat[lo] - p[lo]
    assert d_hi.mean() + 4 * d_hi.std(ddof=1) / np.sqrt(hi.sum()) < 0
    assert d_lo.mean() - 4 * d_lo.std(ddof=1) / np.sqrt(lo.sum()) > 0
    cur = calibration_curve(p, p_hat)
    assert cur["max_bin_error"] > 0.02 and len(cur["p"]) == len(cur["count"])


def test_calibration_bad_input():
    fg = _graph()
    states, var = _pairs(fg.n, 2)
    with pytest.raises(ValueError, match="states"):
        conditional_calibration(fg, states[:, :3], var, 5, 0.1, 10, 0)
    with pytest.raises(ValueError, match="var_idx"):
        conditional_calibration(fg, states, var + fg.n, 5, 0.1, 10, 0)
    with pytest.raises(ValueError, match="eps"):
        conditional_calibration(fg, states, var, 5, 0.6, 10, 0)
    with pytest.raises(ValueError, match="reps"):
        conditional_calibration(fg, states, var, 5, 0.1, 0, 0)
    with pytest.raises(ValueError, match="binary"):
        conditional_calibration(fg, states + 1, var, 5, 0.1, 10, 0)
