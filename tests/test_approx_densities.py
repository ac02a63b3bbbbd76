"""verify.densities (the independent NumPy path) for the LINREG (K14 §6.4, Laplace prior) and ICA (K14
§6.2, log|det W| in the prior path) kinds: values and gradients against the njit target code and finite
differences, and the MH / MALA detailed-balance identity of verify.continuous on both kinds
(which needs these densities), with the no-Hastings mutant rejected."""

from __future__ import annotations

import numpy as np
import pytest

import samplers  # noqa: F401  (sets the Numba cache dir before numba is used)
from samplers import proposals as PR
from samplers.methods import approx_targets as MA
from samplers.targets import tall
from verify import continuous as VC
from verify import densities as DN


def _linreg(seed: int = 0) -> tall.TallData:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((60, 3))
    y = X @ np.array([0.5, -1.0, 0.0]) + 0.4 * rng.standard_normal(60)
    return tall.linear_regression_l1(X, y, noise_var=0.3, prior_l1=2.5, beta=0.7)


def _ica(seed: int = 0) -> tall.TallData:
    X, _ = MA.make_ica_data(np.random.default_rng(seed), 80, 3)
    return tall.ica(X, beta=0.9)


def _thetas(t: tall.TallData, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    d = t.w.shape[0]
    base = np.eye(int(round(np.sqrt(d)))).reshape(-1) if t.kind == tall.ICA else np.zeros(d)
    return base + 0.3 * rng.standard_normal((n, d))


def _fd(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    g = np.empty_like(x)
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        g[j] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("make", [_linreg, _ica], ids=["linreg_l1", "ica"])
def test_values_and_gradients_match_njit_and_fd(make):
    t = make()
    TH = _thetas(t, 6, 1)
    lp_np = DN.log_post(t, TH)
    lt = DN.loglik_terms(t, TH)
    G = DN.log_post_grad(t, TH)
    N = t.X.shape[0]
    for k, th in enumerate(TH):
        assert lp_np[k] == pytest.approx(tall.log_post(t, th), rel=1e-11, abs=1e-9)
        assert lt[k, 5] == pytest.approx(tall.loglik_i(t, 5, th), rel=1e-12, abs=1e-12)
        assert DN.log_prior(t, th)[0] == pytest.approx(tall.log_prior(t, th), rel=1e-12, abs=1e-12)
        g = np.zeros(th.size)
        tall.log_post_grad(t, th, g)
        np.testing.assert_allclose(G[k], g, rtol=1e-9, atol=1e-8)
        fd = _fd(lambda x: DN.log_post(t, x)[0], th)
        np.testing.assert_allclose(G[k], fd, rtol=1e-5, atol=1e-4 * N)
        gi = np.zeros(th.size)
        tall.loglik_grad_i(t, 5, th, 1.0, gi)
        np.testing.assert_allclose(DN.loglik_grad_terms(t, th)[0, 5], gi, rtol=1e-10, atol=1e-12)


def test_prior_terms_are_in_the_numpy_path():
    """Mutant-style check: dropping the Laplace (resp. log|det W|) term changes the value, so the
    agreement above is not vacuous."""
    t = _linreg()
    th = np.array([0.3, -0.2, 0.1])
    assert DN.log_prior(t, th)[0] == pytest.approx(-2.5 * 0.6)
    assert DN.log_prior(t._replace(prior_l1=0.0), th)[0] == 0.0
    ti = _ica()
    W = np.diag([2.0, 1.0, 0.5]).reshape(-1) * 1.5
    assert DN.log_prior(ti, W)[0] == pytest.approx(0.9 * 80 * np.log(1.5**3))
    assert DN.log_prior(ti, np.zeros(9))[0] == -np.inf  # singular W


@pytest.mark.parametrize("make", [_linreg, _ica], ids=["linreg_l1", "ica"])
@pytest.mark.parametrize("prop", [PR.RW_GAUSS, PR.LANGEVIN_GAUSS], ids=["rw", "mala"])
def test_detailed_balance_identity_on_new_kinds(make, prop):
    """verify.continuous.mh_identity_check (kernel path vs densities) passes at 1e-10 on LINREG / ICA;
    for MALA the mutant without the Hastings term fails it (deterministic, no false alarms)."""
    t = make()
    starts = _thetas(t, 20, 2)
    sigma = 0.05
    res = VC.mh_identity_check(t, prop, sigma, starts, 3)
    assert res.passed, res.max_residual
    if prop == PR.LANGEVIN_GAUSS:
        mut = VC.mh_identity_check(t, prop, sigma, starts, 3, log_ratio=VC.kernel_log_ratio_no_hastings)
        assert not mut.passed
