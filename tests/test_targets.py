"""Targets: per-datum gradients vs finite differences, bounds, validation, factor graphs, alias, thinning."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from samplers import alias, poisson_minibatch
from samplers.registry import build_problem
from samplers.targets import factor_graph as fgm
from samplers.targets import tall

RNG = np.random.default_rng(12345)


def _models():
    Y, s2 = tall.make_truncated_gaussian_data(RNG, 50, 4)
    X, y = tall.make_regression_data(RNG, 50, 3)
    yl = (RNG.random(50) < 0.5).astype(float)
    return {
        "tg": (tall.truncated_gaussian(Y, s2, beta=0.1, K=3.0), 4),
        "rlr": (tall.robust_regression(X, y, beta=0.1, nu=4.0, R=5.0), 3),
        "logistic": (tall.logistic_regression(X, yl, prior_prec=0.5, R=4.0), 3),
        "mixture": (tall.gaussian_mixture(tall.make_mixture_data(RNG, 50), 10.0, box=6.0), 2),
        "gauss": (tall.gaussian_location(Y, beta=0.5, box=2.0), 4),
    }


@pytest.mark.parametrize("name", ["tg", "rlr", "logistic", "mixture", "gauss"])
def test_gradient_matches_finite_differences(name):
    t, d = _models()[name]
    theta = RNG.uniform(-0.5, 0.5, d)
    for i in range(5):
        g = np.zeros(d)
        ll = tall.loglik_grad_i(t, i, theta, 1.0, g)
        assert ll == pytest.approx(tall.loglik_i(t, i, theta), rel=1e-12, abs=1e-14)
        eps = 1e-6
        fd = np.array(
            [
                (tall.loglik_i(t, i, theta + eps * e) - tall.loglik_i(t, i, theta - eps * e)) / (2 * eps)
                for e in np.eye(d)
            ]
        )
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-8)
    g = np.zeros(d)
    lp = tall.log_post_grad(t, theta, g)
    assert lp == pytest.approx(tall.log_post(t, theta), rel=1e-12)
    # the specialised full-data loops agree with the per-datum functions the minibatch kernels use
    g_ref = np.zeros(d)
    tall.log_prior_grad(t, theta, g_ref)
    lp_ref = tall.log_prior(t, theta)
    for i in range(t.X.shape[0]):
        lp_ref += tall.loglik_grad_i(t, i, theta, 1.0, g_ref)
    assert lp == pytest.approx(lp_ref, rel=1e-10)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["tg", "rlr", "logistic", "mixture", "gauss"])
def test_poisson_and_tuna_bounds_hold_on_support(name):
    t, d = _models()[name]
    lo = t.lo if t.support == tall.SUPPORT_BOX else -0.999999 * t.R / np.sqrt(d)
    hi = t.hi if t.support == tall.SUPPORT_BOX else 0.999999 * t.R / np.sqrt(d)
    pts = [RNG.uniform(lo, hi, d) for _ in range(200)]
    pts += [np.array(c, float) for c in itertools.product([lo, hi], repeat=d)]  # corners
    for a, b in zip(pts[:-1], pts[1:], strict=True):
        assert tall.in_support(t, a)
        for i in range(t.X.shape[0]):
            ph = tall.phi_i(t, i, a)
            assert -1e-12 <= ph <= t.M[i] + 1e-12
            du = abs(tall.loglik_i(t, i, b) - tall.loglik_i(t, i, a))
            assert du <= t.c[i] * np.linalg.norm(b - a) + 1e-12


def test_support_and_prior():
    t, d = _models()["tg"]
    assert tall.log_prior(t, np.full(d, 3.5)) == -np.inf
    assert not tall.in_support(t, np.array([np.nan, 0, 0, 0.0]))
    r, _ = _models()["rlr"]
    assert not tall.in_support(r, np.array([5.0, 1.0, 0.0]))
    assert tall.in_support(r, np.array([4.0, 1.0, 0.0]))
    # the one-pass form (no early exit, docs/performance.md §7.5) must reject any single bad coordinate
    inside = np.full(d, 0.5 * (t.lo + t.hi))
    assert tall.in_support(t, inside)
    assert tall.in_support(t, np.full(d, t.lo)) and tall.in_support(t, np.full(d, t.hi))  # closed box
    for j in (0, d - 1):
        for bad in (np.nan, np.inf, -np.inf, t.hi + 1e-12, t.lo - 1e-12):
            x = inside.copy()
            x[j] = bad
            assert not tall.in_support(t, x) and tall.log_prior(t, x) == -np.inf
    R = r.R
    assert tall.in_support(r, np.array([R, 0.0, 0.0]))  # closed ball
    assert not tall.in_support(r, np.array([0.0, 0.0, R * (1 + 1e-12)]))
    assert not tall.in_support(r, np.array([0.0, 0.0, np.nan]))


@pytest.mark.parametrize(
    "call",
    [
        lambda: tall.truncated_gaussian(np.zeros((3, 2)), np.array([1.0, -1.0])),
        lambda: tall.truncated_gaussian(np.zeros((3, 2)), np.ones(3)),
        lambda: tall.robust_regression(np.zeros((3, 2)), np.zeros(3), nu=0.0),
        lambda: tall.logistic_regression(np.zeros((3, 2)), np.array([0, 1, 2.0])),
        lambda: tall.truncated_gaussian(np.array([[np.nan, 0.0]]), np.ones(2)),
        lambda: tall.gaussian_mixture(np.zeros(3), temperature=0.0),
    ],
)
def test_constructors_reject_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_truncated_gaussian_constants_match_app_f1():
    p = build_problem("truncated_gaussian", 0)
    t = p.model
    assert t.X.shape == (100_000, 20)
    # M_i = beta/2 * lambda_max(Sigma^-1) * sum_j (|y_ij| + K)^2, lambda_max = 1/0.05 = 20
    i = 7
    expect = 0.5 * 1e-5 * 20.0 * ((np.abs(t.X[i]) + 3.0) ** 2).sum()
    assert t.M[i] == pytest.approx(expect, rel=1e-12)
    # computed from the recipe: L ~ 2.57e3
    assert 2.4e3 < p.meta["L"] < 2.75e3


def test_factor_graph_energy_and_conditionals():
    fg = fgm.potts(fgm.grid_coupling(2, 2), 3, beta=0.7)
    X, p = fgm.exact_joint(fg)
    assert X.shape == (81, 4) and p.sum() == pytest.approx(1.0)
    # brute-force energy: beta * sum over nearest-neighbour pairs of [x_i == x_j]
    pairs = [(0, 1), (0, 2), (1, 3), (2, 3)]
    U = np.array([0.7 * sum(x[i] == x[j] for i, j in pairs) for x in X])
    q = np.exp(U - U.max())
    np.testing.assert_allclose(p, q / q.sum(), rtol=1e-12)
    logits = np.empty(3)
    x = np.array([0, 1, 2, 0])
    ne = fgm.conditional_logits(fg, x, 0, logits)
    assert ne == 3 * 2  # D * |A[0]|
    np.testing.assert_allclose(logits - logits.min(), 0.7 * np.array([0, 1, 1]) - 0.0)


def test_factor_graph_rejects_bad_tables():
    with pytest.raises(ValueError):
        fgm.from_tables([2, 2], [((0, 1), np.zeros((2, 3)))])
    with pytest.raises(ValueError):
        fgm.from_tables([2, 2], [((0, 0), np.zeros((2, 2)))])
    with pytest.raises(ValueError):
        fgm.from_tables([2], [((0,), np.array([0.0, np.inf]))])


def test_alias_table_is_exact():
    w = RNG.random(37) ** 3
    prob, al = alias.build_alias(w)
    np.testing.assert_allclose(alias.alias_probabilities(prob, al), w / w.sum(), rtol=1e-12)
    with pytest.raises(ValueError):
        poisson_minibatch.alias_for(np.array([1.0, -1.0]))


def test_poisson_thinning_gives_independent_poisson_counts():
    """s_i ~ Poisson(a_i + phi_i): chi-square test of the mean counts (alpha = 1e-4)."""
    from numba import njit

    @njit
    def counts(prob, al, Lam, a, phi, b, reps, seed_rng):
        out = np.zeros(a.shape[0])
        buf = np.empty(16, dtype=np.int64)
        for _ in range(reps):
            B, buf, st = poisson_minibatch.draw_candidates(prob, al, Lam, seed_rng, buf)
            for k in range(B):
                i = buf[k]
                if poisson_minibatch.keep(st, B, k, a[i], phi[i], b[i]):
                    out[i] += 1
        return out

    a = np.array([0.5, 1.0, 2.0, 0.1])
    b = np.array([1.0, 0.5, 3.0, 2.0])
    phi = np.array([0.3, 0.5, 0.0, 1.7])
    prob, al = poisson_minibatch.alias_for(a + b)
    reps = 20_000
    c = counts(prob, al, (a + b).sum(), a, phi, b, reps, np.random.default_rng(3))
    lam = a + phi
    z = (c - reps * lam) / np.sqrt(reps * lam)  # sum of reps Poisson(lam) counts
    assert np.all(np.abs(z) < stats.norm.isf(1e-4 / 8))
    # a wrong thinning rate (phi + 1) is caught by the same test
    c2 = counts(prob, al, (a + b).sum(), a, np.minimum(phi + 0.5, b), b, reps, np.random.default_rng(3))
    z2 = (c2 - reps * lam) / np.sqrt(reps * lam)
    assert np.any(np.abs(z2) > stats.norm.isf(1e-4 / 8))
