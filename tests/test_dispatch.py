"""One per-datum dispatch (samplers.targets.likelihoods), no silent fallback: an unknown kind or a partly
defined user model is refused at setup with a message naming what is missing, and a kind that reaches a
kernel anyway evaluates to NaN, never to another kind's likelihood."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from samplers import registry
from samplers.problem import Problem
from samplers.targets import custom, likelihoods, tall

UNKNOWN = 42


class HalfModel(NamedTuple):
    """A model with its log-likelihood registered but not its gradient."""

    scale: float


half = custom.define_model(HalfModel)


@half.loglik
def _half_loglik(m, x, y, theta):
    return -m.scale * (y - x[0] * theta[0]) ** 2


def _mixture_data(rng):
    return tall.gaussian_mixture(rng.standard_normal(30), box=3.0)


def _problem(t: tall.TallData) -> Problem:
    return Problem("dispatch_probe", "continuous", t, t.prior_mean.shape[0], lambda rng: np.zeros(2))


def test_unknown_kind_is_refused_at_construction():
    t = _mixture_data(np.random.default_rng(0))
    args = list(t)[1:15]  # the fields after kind, before prior_l1
    with pytest.raises(ValueError, match=rf"^unknown tall-data kind {UNKNOWN}: no per-datum log-likelihood"):
        tall._make(UNKNOWN, *args)
    tall._make(tall.MIXTURE, *args)  # the same data with a known kind is accepted


@pytest.mark.parametrize("method", ["rwm", "mala", "hmc", "sgld", "poisson_mh", "tuna_mh"])
def test_unknown_kind_is_refused_before_a_run(method):
    """A target whose kind was changed after construction (``_replace``) is refused by every tall-data
    method before anything is compiled."""
    t = _mixture_data(np.random.default_rng(1))._replace(kind=UNKNOWN)
    with pytest.raises(ValueError, match=rf"unknown tall-data kind {UNKNOWN}"):
        registry.run(method, _problem(t), 10, 0, progress=False)


def test_unknown_kind_evaluates_to_nan_not_the_mixture():
    """The dispatch's last branch: NaN for every entry point. The same arrays under the MIXTURE kind (what
    the chains used to fall back to) give finite values, so the NaN comes from the kind alone."""
    t = _mixture_data(np.random.default_rng(2))
    th, thp = np.array([0.1, 0.4]), np.array([-0.2, 0.7])
    args = (t.X, t.y, t.w, t.beta, t.nu, 3)
    out = np.zeros(2)
    for kind, finite in ((tall.MIXTURE, True), (UNKNOWN, False)):
        vals = [
            likelihoods.ll_one(kind, *args, th),
            *likelihoods.ll_pair(kind, *args, th, thp),
            likelihoods.ll_grad_one(kind, *args, th, 1.0, out),
            likelihoods.full_loglik(kind, t.X, t.y, t.w, t.beta, t.nu, th, out, False),
        ]
        assert np.all(np.isfinite(vals)) == finite, (kind, vals)
        assert finite or np.all(np.isnan(vals))
    before = out.copy()
    likelihoods.ll_grad_one(UNKNOWN, *args, th, 1.0, out)
    assert np.array_equal(out, before)  # no gradient added for an unknown kind


def test_half_defined_model_is_refused_naming_the_missing_function():
    X = np.ones((5, 1))
    assert custom.missing_functions(HalfModel) == ["loglik_grad"]
    with pytest.raises(ValueError, match=r"^model HalfModel is missing loglik_grad: "):
        custom.custom_target(HalfModel(1.0), X, np.zeros(5))
    # a CUSTOM target assembled by hand is refused by the setup check too
    t = _mixture_data(np.random.default_rng(3))._replace(kind=likelihoods.CUSTOM, ops=HalfModel(1.0))
    with pytest.raises(ValueError, match=r"model HalfModel is missing loglik_grad"):
        tall.check_target(t)
    with pytest.raises(ValueError, match=r"model HalfModel is missing loglik_grad"):
        registry.run("rwm", _problem(t), 10, 0, progress=False)


def test_custom_kind_without_a_model_and_a_shipped_kind_with_one_are_refused():
    t = _mixture_data(np.random.default_rng(4))
    with pytest.raises(ValueError, match=r"^a CUSTOM target needs its model's parameters"):
        tall.check_target(t._replace(kind=likelihoods.CUSTOM))
    with pytest.raises(ValueError, match=r"^kind gaussian_mixture takes no model"):
        tall.check_target(t._replace(ops=HalfModel(1.0)))
    tall.check_target(t)  # the shipped target itself passes


def test_unregistered_model_class_is_refused():
    class Loose(NamedTuple):
        a: float

    t = _mixture_data(np.random.default_rng(5))._replace(kind=likelihoods.CUSTOM, ops=Loose(1.0))
    with pytest.raises(ValueError, match=r"^model Loose is not registered: samplers.targets.custom"):
        tall.check_target(t)
