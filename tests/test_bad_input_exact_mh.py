"""Bad input to the exact minibatch MH family gets a clear error, never a silent wrong answer: data
changed after the target was built, zero / negative / NaN
bounds, NaN bound tests, initial states outside the support, overflowing Poisson rates, invalid
ising_param, tall-target and hyperparameter values. Every case goes through ``registry.build_problem`` /
``registry.run``."""

from __future__ import annotations

import numpy as np
import pytest

from samplers import registry as R

NAN = float("nan")


def tg(**kw):
    return R.build_problem("truncated_gaussian", 0, scale="smoke", N=200, d=2, **kw)


def rr(**kw):
    return R.build_problem("robust_regression", 0, scale="smoke", N=200, d=2, **kw)


def _raises(exc, match, fn, *a, **kw):
    with pytest.raises(exc, match=match):
        fn(*a, **kw)


# ---------------------------------------------------------------- data changed after the build
@pytest.mark.parametrize(
    ("method", "poke", "match"),
    [
        ("tuna_mh", lambda m: m.X.__setitem__((3, 0), NAN), r"data X contains NaN or inf \(datum 3"),
        ("tuna_sgld", lambda m: m.y.__setitem__(5, np.inf), r"data y contains NaN or inf \(datum 5"),
        (
            "poisson_mh",
            lambda m: m.M.__setitem__(slice(0, 5), 0.0),
            r"bound M_i = 0.0 for datum 0 \(5 data\)",
        ),
        ("poisson_mala", lambda m: m.M.__setitem__(7, NAN), r"data M contains NaN or inf \(datum 7"),
        ("tuna_mh", lambda m: m.c.__setitem__(2, -1.0), r"bound c_i = -1.0 for datum 2"),
        ("tuna_sgld", lambda m: m.c.__setitem__(4, 0.0), r"c_i must be > 0 .* never drawn"),
    ],
)
def test_data_changed_after_build_is_rejected_at_setup(method, poke, match):
    P = rr() if method == "tuna_sgld" else tg()
    poke(P.model)
    _raises(ValueError, match, R.run, method, P, 20, 0)


def test_zero_bound_is_legal_for_a_constant_likelihood():
    """x_i = 0 in robust regression: ll_i does not depend on theta, so M_i = c_i = 0 (the datum never
    drawn) leaves out only a constant factor: exact, accepted."""
    P = rr()
    for a in (P.model.X[0], P.model.y[0:1], P.model.M[0:1], P.model.c[0:1], P.model.shift[0:1]):
        a[:] = 0.0
    for m in ("poisson_mh", "tuna_mh"):
        assert R.run(m, P, 20, 0).samples.shape == (20, 2)


# ---------------------------------------------------------------- TunaMH: a NaN bound test is a bound error
def test_tuna_nan_difference_reports_the_bound():
    """y_i = 1e308 (finite, so setup accepts it): the RLR difference is inf / inf = NaN for every candidate;
    ``abs(du) > c_i M`` was False for NaN (silent), ``not (abs(du) <= c_i M)`` reports it."""
    P = rr()
    P.model.y[:] = 1e308
    _raises(ValueError, "TunaMH bound violated", R.run, "tuna_mh", P, 50, 0, chi=1.0)


def test_tuna_sgld_nonfinite_gradient_sets_the_error_code():
    P = tg(beta=1.0)
    P.model.X[:, 0] = 1.7e308  # finite data whose minibatch gradient overflows
    _raises(
        ValueError,
        r"Tuna-SGLD: the minibatch gradient \(drift\) is NaN or inf in coordinate 0",
        R.run,
        "tuna_sgld",
        P,
        20,
        0,
        step=1e-3,  # E[B] below N at the initial move size (the default step is refused as infeasible)
    )


# ---------------------------------------------------------------- initial state outside the support
def test_initial_state_outside_the_support():
    _raises(
        ValueError,
        r"x0.*log prior is -inf .*box \[-3.0, 3.0\]",
        R.run,
        "tuna_mh",
        tg(),
        20,
        0,
        x0=np.array([3.05, 0.0]),
    )
    _raises(
        ValueError,
        r"x0.*ball \|\|theta\|\| <= 2.0",
        R.run,
        "poisson_mh",
        rr(R=2.0),
        20,
        0,
        x0=np.array([5.0, 5.0]),
    )
    ip = R.build_problem("ising_param", 0, scale="smoke")
    _raises(
        ValueError,
        r"x0.*outside the prior support \[lo, hi\] = \[0.0, 0.6\]",
        R.run,
        "exchange",
        ip,
        20,
        0,
        x0=np.array([0.7]),
    )


# ---------------------------------------------------------------- overflowing Poisson rates
def test_huge_rates_are_rejected():
    _raises(ValueError, r"RATE_CAP = 1e\+12: lower lam_mult", R.run, "poisson_mh", tg(), 5, 0, lam_mult=1e30)
    _raises(ValueError, r"chi = 1e\+307 overflows", R.run, "tuna_mh", tg(), 5, 0, chi=1e307)
    # refused at setup by the feasibility check (E[B] > N) before the kernel's RATE_CAP check sees it
    msg = r"TunaMH family infeasible: E\[B\] = .* exceeds N = 200 .*lower chi \(now 1e\+30\)"
    _raises(ValueError, msg, R.run, "tuna_sgld", tg(), 5, 0, chi=1e30)


# ---------------------------------------------------------------- an infeasible Poisson minibatch
@pytest.mark.parametrize("method", ["poisson_mh", "poisson_mala", "poisson_barker"])
def test_a_poisson_batch_larger_than_the_data_is_refused_before_sampling(method):
    """E[B] = lam + L > N: every iteration would cost more than a full-batch one (a long run stalls): one
    line with E[B], N and the remedies, before any sampling; at E[B] <= N the same target runs."""
    P = tg()
    msg = r"E\[B\] = lam \+ L = [0-9.e+]+ candidates an iteration exceeds N = 200 .*temper the likelihood"
    _raises(ValueError, msg, R.run, method, P, 5, 0, step=0.1, lam_mult=50.0)
    assert R.run(method, P, 5, 0, step=0.1, lam_mult=1e-3).samples.shape == (5, 2)


# ---------------------------------------------------------------- ising_param builder
@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"m": 0}, "m must be a finite integer > 0"),
        ({"m": -1}, "m must be a finite integer > 0"),
        ({"m": 2.5}, "m must be a finite integer > 0"),
        ({"rows": 2.5}, "rows must be a finite integer > 0"),
        ({"rows": 1, "cols": 1}, r"rows \* cols >= 2"),
        ({"theta_true": NAN}, "needs a finite theta >= 0, got theta = nan"),
    ],
)
def test_ising_param_builder_rejects(kw, match):
    _raises(ValueError, match, R.build_problem, "ising_param", 0, scale="smoke", **kw)


def test_ising_param_theta_true_outside_the_prior():
    _raises(
        ValueError,
        r"theta_true = 0.7 is outside the prior support",
        R.build_problem,
        "ising_param",
        0,
        scale="smoke",
        theta_true=0.7,
    )


# ---------------------------------------------------------------- a step whose square underflows
@pytest.mark.parametrize("method", ["poisson_mala", "tuna_sgld"])
def test_step_whose_square_underflows(method):
    _raises(ValueError, "step = 1e-200: its square 0.0 underflows", R.run, method, tg(), 5, 0, step=1e-200)


# ---------------------------------------------------------------- tall-target builders
@pytest.mark.parametrize(
    ("target", "kw", "match"),
    [
        ("truncated_gaussian", {"beta": NAN}, "beta must be a finite number > 0, got nan"),
        ("truncated_gaussian", {"K": NAN}, "K must be a finite number > 0, got nan"),
        ("robust_regression", {"R": NAN}, "R must be a finite number > 0, got nan"),
        ("truncated_gaussian", {"d": 0}, "d must be a finite integer > 0, got 0"),
        ("robust_regression", {"N": -5}, "N must be a finite integer > 0, got -5"),
        ("truncated_gaussian", {"N": 2.5}, "N must be a finite integer > 0, got 2.5"),
    ],
)
def test_tall_builders_reject(target, kw, match):
    _raises(ValueError, match, R.build_problem, target, 0, scale="smoke", **kw)


# ---------------------------------------------------------------- non-numeric and bool arguments
def test_non_numeric_x0_and_h():
    _raises(
        TypeError,
        "initial state x0 must be an int or float array, got dtype <U1",
        R.run,
        "tuna_mh",
        tg(),
        5,
        0,
        x0=np.array(["a", "b"]),
    )
    _raises(ValueError, "h must be a finite number >= 0, got 'x'", R.run, "poisson_mh", tg(), 5, 0, h="x")


@pytest.mark.parametrize(("name", "kw"), [("step", {"step": True}), ("batch", {"batch": True})])
def test_bools_are_not_numbers(name, kw):
    _raises(ValueError, f"{name} must be a finite .* got True", R.run, "tuna_sgld", tg(), 5, 0, **kw)
    _raises(ValueError, "n_iter must be a finite integer > 0, got True", R.run, "tuna_mh", tg(), True, 0)
