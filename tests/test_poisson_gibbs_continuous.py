"""Chebyshev machinery and continuous Poisson-Gibbs kernels (Zhang & De Sa 2019 §3, Alg. 3, App. C.1)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from samplers import chebyshev as C
from samplers import registry as R
from samplers.kernels import continuous_gibbs as CG
from verify import poisson_gibbs_cont as V


def test_interpolant_exact_for_polynomials():
    rng = np.random.default_rng(0)
    coef = rng.normal(size=6)
    f = np.polynomial.Polynomial(coef)
    c = C.interpolate(f, 5, -2.0, 3.0)
    x = np.linspace(-2, 3, 101)
    np.testing.assert_allclose(C.evaluate(c, x, -2.0, 3.0), f(x), atol=1e-10)
    # degree too low: not exact
    c4 = C.interpolate(f, 4, -2.0, 3.0)
    assert np.max(np.abs(C.evaluate(c4, x, -2.0, 3.0) - f(x))) > 1e-3


def test_integral_and_inverse_cdf():
    c = C.interpolate(lambda t: 3 * t**2, 4, -1.0, 1.0)
    G = np.empty(6)
    C.cheb_integral(c, 5, G)
    assert abs(C.cheb_eval_t(G, 6, 1.0) - 2.0) < 1e-12
    assert abs(C.cheb_eval_t(G, 6, -1.0)) < 1e-12
    # density 2x on [0, 1]: F^{-1}(u) = sqrt(u)
    c = C.interpolate(lambda x: 2 * x, 3, 0.0, 1.0)
    C.cheb_integral(c, 4, G)
    for u in (0.01, 0.3, 0.81):
        assert abs(C.cheb_invert_cdf(G, 5, u, 0.0, 1.0, 60) - np.sqrt(u)) < 1e-10


def test_interpolation_error_within_bernstein_bound(monkeypatch):
    """Thm 3 at the quick and the full degrees (up to m = 24, where the bound meets the rounding floor
    that the check adds); an interpolant of half the degree (mutant) breaks it."""
    assert all(r["holds"] for r in V.thm3_rows(True))
    assert all(r["holds"] for r in V.thm3_rows(False))
    exact = V.C.interpolate
    monkeypatch.setattr(V.C, "interpolate", lambda f, m: exact(f, max(1, m // 2)))
    assert sum(not r["holds"] for r in V.thm3_rows(False)) >= 6


@pytest.mark.parametrize(
    "method,dm,dk,mutant,ok",
    [
        ("pgda", 2, 6, 0, True),
        ("pgits", 3, 10, 0, True),
        ("pgits", 1, 1, CG.MUT_NO_CORRECTION, False),
    ],
)
def test_continuous_kernel_keeps_pi(method, dm, dk, mutant, ok):
    """From 8000 exact draws of the 2-variable spin model, 3 kernel steps; KS of both coordinates
    against the exact marginal (Bonferroni over 2: alpha 1e-4)."""
    coupling = 3.0
    prob = R.build_problem("spin_pair", coupling=coupling, field=4)
    L = prob.meta["L"]
    tables = CG.continuous_tables(prob.model, 2 * L, L)
    rng = np.random.default_rng(3)
    X0 = V.spin_pair_exact(coupling, rng, 8000)
    Y = V.repeat_continuous_from(
        prob.model, X0, *tables, max(dm, dk), CG.METHOD_IDS[method], dm, dk, 3, rng, mutant
    )
    cdf = V.spin_pair_marginal_cdf(coupling)
    p = min(stats.kstest(Y[:, j], cdf).pvalue for j in range(2))
    assert (p > 0.5e-4) == ok, p


def test_pg_cost_and_determinism():
    prob = R.build_problem("continuous_spin", rows=6, cols=6)
    a = R.run("pgda", prob, 2_000, 4)
    b = R.run("pgda", prob, 2_000, 4)
    np.testing.assert_array_equal(a.samples, b.samples)
    L = a.extra["L"]
    lam = a.hyper["lam"]
    # candidates per iteration <= lambda + L on average (Statement 1), 6 sigma
    assert a.extra["mean_B"] <= lam + L + 6 * np.sqrt((lam + L) / 2000)
    assert np.all((a.samples >= 0) & (a.samples <= 1))


def test_continuous_bad_input():
    prob = R.build_problem("spin_pair")
    with pytest.raises(ValueError):
        R.run("pgda", prob, 10, 0, m=0)
    with pytest.raises(ValueError):
        R.run("pgits", prob, 10, 0, lam=-2.0)
    with pytest.raises(ValueError):
        R.run("pgda", prob, 10, 0, x0=np.array([0.5, 1.5]))
    with pytest.raises(ValueError):
        R.run("pgda", R.build_problem("potts_tiny"), 10, 0)
    with pytest.raises(ValueError):
        R.build_problem("continuous_spin", gamma=0.0)
