"""User-defined tall-data targets (samplers.targets.custom): the per-datum functions reach every entry point
of the dispatch, the methods run on them, the kernels stay cached across processes, and verify's bound
checker takes them.

The references are the shipped kinds with the same formulas (Gaussian linear regression = LINREG,
logistic regression = LOGISTIC, the user model of ``bench.user_target_cost``): a user model must give
their values to rounding and, run with the same seed, the same chains. Each check is shown to catch a
broken model (a mutant with a scaled likelihood or a wrong-sign gradient)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from typing import NamedTuple

import numpy as np
import pytest

from bench.user_target_cost import logistic_pair as _logistic_pair
from samplers import registry
from samplers.problem import Problem
from samplers.targets import custom, likelihoods, tall
from verify.bounds import check_tall_bounds


# ----------------------------------------------------------------------------- user models (module level)
class UserLinReg(NamedTuple):
    noise_var: float


linreg = custom.define_model(UserLinReg)


@linreg.loglik
def _linreg_ll(m, x, y, theta):
    r = y
    for j in range(theta.shape[0]):
        r -= x[j] * theta[j]
    return -0.5 * r * r / m.noise_var


@linreg.loglik_grad
def _linreg_grad(m, x, y, theta, scale, out):
    r = y
    for j in range(theta.shape[0]):
        r -= x[j] * theta[j]
    g = scale * r / m.noise_var
    for j in range(theta.shape[0]):
        out[j] += g * x[j]
    return -0.5 * r * r / m.noise_var


def _linreg_pair(rng, N=300, d=4):
    X = rng.standard_normal((N, d))
    y = X @ np.linspace(-1, 1, d) + 0.5 * rng.standard_normal(N)
    shipped = tall.linear_regression_l1(X, y, noise_var=0.3, prior_l1=0.0, beta=0.7)
    user = custom.custom_target(UserLinReg(0.3), X, y, beta=0.7)
    return shipped, user


# ----------------------------------------------------------------------------- the dispatch
@pytest.mark.parametrize("pair", [_linreg_pair, _logistic_pair])
def test_user_model_equals_the_shipped_kind_at_every_entry_point(pair):
    rng = np.random.default_rng(0)
    ref, t = pair(rng)
    assert t.kind == likelihoods.CUSTOM
    N, d = ref.X.shape
    for _ in range(5):
        th, thp = 0.3 * rng.standard_normal(d), 0.3 * rng.standard_normal(d)
        g_ref, g = np.zeros(d), np.zeros(d)
        assert tall.log_post_grad(t, th, g) == pytest.approx(tall.log_post_grad(ref, th, g_ref), rel=1e-12)
        np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12)
        assert tall.loglik_sum(t, th) == pytest.approx(tall.loglik_sum(ref, th), rel=1e-12)
        for i in rng.integers(0, N, 5):
            assert tall.loglik_i(t, i, th) == pytest.approx(tall.loglik_i(ref, i, th), rel=1e-12, abs=1e-15)
            a = likelihoods.ll_pair(t.kind, t.X, t.y, t.w, t.beta, t.nu, i, th, thp, t.ops)
            b = likelihoods.ll_pair(ref.kind, ref.X, ref.y, ref.w, ref.beta, ref.nu, i, th, thp)
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
            o1, o2 = np.zeros(d), np.zeros(d)
            v1 = likelihoods.ll_grad_one(t.kind, t.X, t.y, t.w, t.beta, t.nu, i, th, 2.0, o1, t.ops)
            v2 = likelihoods.ll_grad_one(ref.kind, ref.X, ref.y, ref.w, ref.beta, ref.nu, i, th, 2.0, o2)
            assert v1 == pytest.approx(v2, rel=1e-12, abs=1e-15)
            np.testing.assert_allclose(o1, o2, rtol=1e-10, atol=1e-14)


def test_a_wrong_user_gradient_is_seen_by_the_same_comparison():
    """Mutant: the wrong-sign gradient differs from the shipped kind's (the value still agrees)."""
    rng = np.random.default_rng(1)
    ref, t = _logistic_pair(rng, grad_sign=-1.0)
    th = 0.3 * rng.standard_normal(3)
    g_ref, g = np.zeros(3), np.zeros(3)
    assert tall.log_post_grad(t, th, g) == pytest.approx(tall.log_post_grad(ref, th, g_ref), rel=1e-12)
    assert not np.allclose(g, g_ref, rtol=1e-3)


# ----------------------------------------------------------------------------- the methods
METHODS = {
    "rwm": {"step": 0.2},
    "mala": {"step": 0.2},
    "barker": {"step": 0.2},
    "hmc": {"step": 0.1},
    "sgld": {"step": 1e-3, "batch": 20},
    "poisson_mh": {"step": 0.2, "lam_mult": 1e-3},
    "poisson_mala": {"step": 0.2, "lam_mult": 1e-3},
    "poisson_barker": {"step": 0.2, "lam_mult": 1e-3},
    "tuna_mh": {"step": 0.2, "chi": 1e-4},
    "tuna_sgld": {"step": 0.05, "chi": 1e-4, "batch": 20},
    "austere_mh_c": {"step": 0.2, "m": 50, "eps": 0.05},
    "austere_mh_nc": {"step": 0.2},
    "mh_sublhd": {"step": 0.2, "m": 50},
    "mh_minibatch": {"step": 0.2, "m": 50, "corr_n": 400},
    "sgld_austere": {"step": 1e-3, "batch": 20, "m": 50, "eps": 0.05},
}


def _run(method, t, seed, n=300):
    pb = Problem("user_logistic", "continuous", t, 3, lambda rng: np.zeros(3))
    return registry.run(method, pb, n, seed, progress=False, **METHODS[method])


@pytest.mark.slow
@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_tall_method_runs_a_user_model_as_the_shipped_kind(method):
    """Same seed, same chain: the user logistic model gives the shipped LOGISTIC kind's draws (to rounding:
    the two evaluate the same formulas in different code), and a mutant model (likelihood scaled by 1.5)
    does not."""
    rng = np.random.default_rng(2)
    ref, t = _logistic_pair(rng)
    a = _run(method, ref, 7)
    b = _run(method, t, 7)
    np.testing.assert_allclose(b.samples, a.samples, rtol=1e-8, atol=1e-10)
    assert np.array_equal(a.n_evals, b.n_evals)
    _, bad = _logistic_pair(np.random.default_rng(2), scale=1.5)
    bad = bad._replace(M=1.5 * bad.M, shift=1.5 * bad.shift, c=1.5 * bad.c)  # its bounds still hold
    c = _run(method, bad, 7)
    assert not np.allclose(c.samples, a.samples, rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------- verify
def test_bound_checker_takes_a_user_model_and_catches_a_wrong_bound():
    _, t = _logistic_pair(np.random.default_rng(4))
    assert check_tall_bounds(t, "user_logistic", max_data=200).passed
    assert not check_tall_bounds(t._replace(M=0.5 * t.M), "user_logistic_bad_M", max_data=200).passed
    assert not check_tall_bounds(t._replace(c=0.5 * t.c), "user_logistic_bad_c", max_data=200).passed


# ----------------------------------------------------------------------------- caching across processes
PROBE = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import samplers
from samplers.targets import custom, likelihoods, tall

def stats(fn, t, *args):
    fn(t, *args)
    sig = [s for s in fn.signatures if s[0] == __import__("numba").typeof(t)][0]
    return fn.stats.cache_hits[sig], fn.stats.cache_misses[sig]

rng = np.random.default_rng(0)
X = rng.standard_normal((50, 2))
y = X @ np.array([1.0, -1.0])
th, g = np.array([0.2, 0.1]), np.zeros(2)
shipped = tall.linear_regression_l1(X, y, 0.5, 0.0)
out = {"shipped": stats(tall.log_post_grad, shipped, th, g)}
if sys.argv[2] == "user":
    from probe_model import Probe
    user = custom.custom_target(Probe(0.5), X, y)
    out["user"] = stats(tall.log_post_grad, user, th, g)
print(out)
"""


def _probe(tmp_path, what):
    r = subprocess.run(
        [sys.executable, str(tmp_path / "probe.py"), str(tmp_path / "model"), what],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return eval(r.stdout.strip().splitlines()[-1])  # noqa: S307 - our own probe's dict of ints


@pytest.mark.slow
def test_user_and_shipped_kernels_cache_hit_in_a_second_process(tmp_path):
    """A user model (unique source, so the first process compiles it) is a cache miss in the first process
    and a hit in the second; a shipped target is a hit in a process where the user model's module cannot
    be imported (its entry in the same cache index does not break the load)."""
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "probe_model.py").write_text(
        textwrap.dedent(
            f'''
            from typing import NamedTuple
            from samplers.targets import custom

            class Probe(NamedTuple):
                """{uuid.uuid4().hex}"""
                noise_var: float

            m = custom.define_model(Probe)

            @m.loglik
            def ll(p, x, y, theta):
                r = y - x[0] * theta[0] - x[1] * theta[1]
                return -0.5 * r * r / p.noise_var

            @m.loglik_grad
            def grad(p, x, y, theta, scale, out):
                r = y - x[0] * theta[0] - x[1] * theta[1]
                out[0] += scale * r * x[0] / p.noise_var
                out[1] += scale * r * x[1] / p.noise_var
                return -0.5 * r * r / p.noise_var
            '''
        )
    )
    (tmp_path / "probe.py").write_text(PROBE)
    first = _probe(tmp_path, "user")
    assert first["user"] == (0, 1)  # compiled (a fresh fingerprint)
    second = _probe(tmp_path, "user")
    assert second["user"] == (1, 0) and second["shipped"] == (1, 0)
    (tmp_path / "model" / "probe_model.py").rename(tmp_path / "model" / "gone.py")
    third = _probe(tmp_path, "shipped")
    assert third["shipped"] == (1, 0)
