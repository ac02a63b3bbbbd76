"""Baseline kernels: correctness against known moments (MCSE z-tests), negative controls,
determinism, costs and bad input.

Statistical tests: fixed seeds; each z-test family uses Bonferroni over its statistics with a total
false-alarm probability alpha = 1e-4 (|z| threshold printed in the assertion)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bench.metrics import mcse_mean
from samplers import registry
from samplers.targets import factor_graph as fgm

ALPHA = 1e-4


def _truncated_moments(problem):
    m, s = problem.meta["post_mean"], problem.meta["post_sd"]
    lo, hi = problem.model.lo, problem.model.hi
    a, b = (lo - m) / s, (hi - m) / s
    mean = stats.truncnorm.mean(a, b, loc=m, scale=s)
    var = stats.truncnorm.var(a, b, loc=m, scale=s)
    return mean, var + mean**2


@pytest.fixture(scope="module")
def box_problem():
    # posterior sd 0.1 per dim and a box that cuts it: truncation must be respected
    return registry.build_problem("gaussian_location", 11, N=100, d=2, beta=1.0, box=0.12)


def z_scores(samples, mean, second):
    zs = []
    for f, truth in ((samples, mean), (samples**2, second)):
        zs.append((f.mean(0) - truth) / mcse_mean(f))
    return np.concatenate(zs)


def threshold(n_stats: int) -> float:
    return float(stats.norm.isf(ALPHA / (2 * n_stats)))


CASES = {
    "rwm": {"step": 0.08},
    "mala": {"step": 0.12},
    "barker": {"step": 0.08},
    "hmc": {"step": 0.05, "n_leapfrog": 5},
}


@pytest.mark.parametrize("method", list(CASES))
def test_kernel_matches_known_moments(method, box_problem):
    mean, second = _truncated_moments(box_problem)
    res = registry.run(method, box_problem, 40_000, np.random.SeedSequence(2024), **CASES[method])
    z = z_scores(res.samples[2000:], mean, second)
    thr = threshold(z.size)
    assert np.all(np.abs(z) < thr), f"{method}: z={z}, threshold {thr:.2f}"
    assert 0.05 < res.accept_rate < 0.99


def test_unadjusted_langevin_is_caught(box_problem):
    """Negative control: MALA without the MH step (= full-batch SGLD, i.e. ULA) at the same step
    must fail the same z-test (bias from the discretisation and from leaving the box)."""
    mean, second = _truncated_moments(box_problem)
    res = registry.run(
        "sgld",
        box_problem,
        40_000,
        np.random.SeedSequence(2024),
        step=0.12,
        batch=box_problem.model.X.shape[0],
    )
    z = z_scores(res.samples[2000:], mean, second)
    assert np.any(np.abs(z) > threshold(z.size)), z


def test_gibbs_matches_exact_marginals():
    p = registry.build_problem("potts_grid", 0, beta=0.8)
    X, prob = fgm.exact_joint(p.model)
    D = 3
    exact = np.array([[prob[X[:, i] == v].sum() for v in range(D)] for i in range(p.dim)])
    for scan in ("random", "systematic"):
        res = registry.run("gibbs", p, 60_000, np.random.SeedSequence(5), scan=scan)
        ind = (res.samples[:, :, None] == np.arange(D)).astype(float).reshape(len(res.samples), -1)
        z = (ind.mean(0) - exact.ravel()) / mcse_mean(ind)
        assert np.all(np.abs(z) < threshold(z.size)), (scan, z)
        assert res.mean_batch == pytest.approx(D * 2)  # D * |A[i]| on the 2x2 lattice


def test_gibbs_with_a_dropped_factor_is_caught():
    """Negative control: Gibbs on a graph missing one coupling samples the wrong marginals."""
    p = registry.build_problem("potts_grid", 0, beta=0.8)
    J = fgm.grid_coupling(2, 2)
    J[0, 1] = J[1, 0] = 0.0
    wrong = registry.Problem(p.name, p.space, fgm.potts(J, 3, 0.8), p.dim, p.init)
    X, prob = fgm.exact_joint(p.model)
    res = registry.run("gibbs", wrong, 60_000, np.random.SeedSequence(5))
    ind = (res.samples[:, :2, None] == res.samples[:, 1:2, None]).astype(float)[:, 0, 0]
    exact_eq = prob[X[:, 0] == X[:, 1]].sum()
    z = (ind.mean() - exact_eq) / mcse_mean(ind)
    assert abs(z) > threshold(1)


def test_same_seed_is_bit_identical_and_chunking_does_not_matter(box_problem):
    a = registry.run("mala", box_problem, 3000, 7, step=0.05)
    b = registry.run("mala", box_problem, 3000, 7, step=0.05)
    np.testing.assert_array_equal(a.samples, b.samples)
    c = registry.run("mala", box_problem, 3000, 8, step=0.05)
    assert not np.array_equal(a.samples, c.samples)
    from samplers.kernels import mh
    from samplers.run import drive

    one = drive(
        "mala",
        box_problem,
        3000,
        7,
        mh.mh_init,
        (2, 0.0),
        mh.mh_sample,
        (2, 0.05, 0.0, 3, False, 0.0),
        n_chunks=1,
    )
    np.testing.assert_array_equal(a.samples, one.samples)
    s1 = registry.run("sgld", box_problem, 500, 3, step=0.01, batch=10)
    s2 = registry.run("sgld", box_problem, 500, 3, step=0.01, batch=10)
    np.testing.assert_array_equal(s1.samples, s2.samples)


def test_costs_are_counted(box_problem):
    N = box_problem.model.X.shape[0]
    r = registry.run("rwm", box_problem, 2000, 1, step=0.05)
    assert set(np.unique(r.n_evals)) <= {0, N}  # 0 only for proposals outside the box
    h = registry.run("hmc", box_problem, 200, 1, step=0.01, n_leapfrog=4)
    assert h.n_evals.max() == 4 * N
    s = registry.run("sgld", box_problem, 200, 1, step=0.01, batch=17)
    assert np.all(s.n_evals == 17)
    assert r.sample_seconds > 0 and r.compile_seconds >= 0


@pytest.mark.parametrize(
    "method, kw",
    [
        ("rwm", {"step": -1.0}),
        ("rwm", {"step": float("nan")}),
        ("mala", {"proposal": "banana"}),
        ("hmc", {"n_leapfrog": 0}),
        ("hmc", {"n_leapfrog": 2.5}),
        ("sgld", {"batch": 10**9}),
        ("rwm", {"stepsize": 0.1}),
    ],
)
def test_bad_hyperparameters_raise(method, kw, box_problem):
    with pytest.raises(ValueError):
        registry.run(method, box_problem, 10, 0, **kw)


def test_bad_states_and_spaces_raise(box_problem):
    with pytest.raises(ValueError, match="NaN"):
        registry.run("rwm", box_problem, 10, 0, x0=np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="shape"):
        registry.run("rwm", box_problem, 10, 0, x0=np.zeros(3))
    with pytest.raises(ValueError, match="n_iter"):
        registry.run("rwm", box_problem, 0, 0)
    with pytest.raises(ValueError, match="seed"):
        registry.run("rwm", box_problem, 10, -3)
    with pytest.raises(ValueError, match="applies to"):
        registry.run("gibbs", box_problem, 10, 0)
    with pytest.raises(ValueError, match="unknown method"):
        registry.run("nope", box_problem, 10, 0)
    p = registry.build_problem("potts_grid", 0)
    with pytest.raises(ValueError, match="domains"):
        registry.run("gibbs", p, 10, 0, x0=np.array([0, 1, 2, 3]))
    with pytest.raises(ValueError, match="unknown parameters"):
        registry.build_problem("potts_grid", 0, colour=3)


def test_tuning_hits_the_target_acceptance(box_problem):
    from samplers.tuning import tune_step

    for target in (0.25, 0.55):
        step, acc = tune_step("rwm", box_problem, target, 3, pilot_iters=2000)
        assert abs(acc - target) < 0.05
        res = registry.run("rwm", box_problem, 20_000, 4, step=step)
        assert abs(res.accept_rate - target) < 0.05
    with pytest.raises(ValueError):
        tune_step("gibbs", box_problem, 0.4)
    with pytest.raises(ValueError):
        tune_step("rwm", box_problem, 1.2)


def test_result_roundtrip_and_config_hash(tmp_path, box_problem):
    from samplers.result import ChainResult, config_hash

    r = registry.run("barker", box_problem, 100, 1, step=0.05)
    r.extra["note"] = "x"
    r.extra["trace"] = np.arange(3)
    path = r.save(tmp_path / "r.npz")
    back = ChainResult.load(path)
    np.testing.assert_array_equal(back.samples, r.samples)
    assert back.hyper == r.hyper and back.extra["note"] == "x"
    np.testing.assert_array_equal(back.extra["trace"], np.arange(3))
    assert config_hash({"a": 1, "b": [1, 2]}) == config_hash({"b": [1, 2], "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2})
    assert not list(tmp_path.glob("*.tmp*"))


def test_registry_lists_the_six_baselines():
    for m in ("rwm", "mala", "barker", "hmc", "sgld", "gibbs"):
        spec = registry.get_method(m)
        assert spec.family == "baseline"
    assert registry.get_method("sgld").exact is False


@pytest.mark.parametrize(
    "method,hyper",
    [
        ("rwm", {"step": 0.05}),
        ("mala", {"step": 0.05}),
        ("barker", {"step": 0.05}),
        ("hmc", {"step": 0.02, "n_leapfrog": 3}),
    ],
)
def test_authors_recompute_variant_is_the_same_chain_at_double_cost(box_problem, method, hyper):
    """energy="recompute" (the uncached full batch of the Yuan & Wang 2024 code) gives the cached chain bit
    for bit and counts N more data evaluations per iteration; a bad mode is a clear error."""
    N = box_problem.model.X.shape[0]
    a = registry.run(method, box_problem, 1500, 4, **hyper)
    b = registry.run(method, box_problem, 1500, 4, energy="recompute", **hyper)
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(b.n_evals, a.n_evals + N)
    assert b.hyper["energy"] == "recompute"
    with pytest.raises(ValueError, match="energy"):
        registry.run(method, box_problem, 10, 4, energy="uncached", **hyper)


@pytest.mark.parametrize(
    "method,hyper",
    [("mala", {"step": 0.05}), ("barker", {"step": 0.05}), ("hmc", {"step": 0.02, "n_leapfrog": 3})],
)
def test_authors_gradient_setting(box_problem, method, hyper):
    """grad="exact" is the default chain bit for bit; "normalized" / "authors" (the Yuan & Wang 2024
    code's 2 g/||g||, Barker with the sign of grad U) change the chain and are recorded;
    Barker's two non-exact modes differ only in that sign. Exactness: verify baselines.authors_grad."""
    a = registry.run(method, box_problem, 800, 4, **hyper)
    e = registry.run(method, box_problem, 800, 4, grad="exact", **hyper)
    np.testing.assert_array_equal(a.samples, e.samples)
    n = registry.run(method, box_problem, 800, 4, grad="normalized", **hyper)
    u = registry.run(method, box_problem, 800, 4, grad="authors", **hyper)
    assert not np.array_equal(a.samples, n.samples)
    assert u.hyper["grad"] == "authors" and a.hyper["grad"] == "exact"
    assert np.array_equal(n.samples, u.samples) == (method != "barker")
    with pytest.raises(ValueError, match="grad"):
        registry.run(method, box_problem, 10, 4, grad="clipped", **hyper)


def test_gradient_rescaling_map():
    from samplers import proposals as P

    assert P.gradient_length("mala", "exact") == 0.0
    assert P.gradient_length("hmc", "authors") == 2.0
    assert P.gradient_length("barker", "normalized") == 2.0
    assert P.gradient_length("barker", "authors") == -2.0
    with pytest.raises(ValueError, match="grad"):
        P.gradient_length("mala", "unit")
    g = np.array([3.0, -4.0])
    P.rescale_gradient(g, -2.0)
    np.testing.assert_allclose(g, [-1.2, 1.6], rtol=1e-15)
    z = np.zeros(3)
    P.rescale_gradient(z, 2.0)  # a zero gradient stays zero (no division by zero)
    assert np.all(z == 0.0)
    g = np.array([1.0, 2.0])
    P.rescale_gradient(g, 0.0)  # exact: untouched
    assert np.array_equal(g, [1.0, 2.0])
    with pytest.raises(ValueError, match="uses no gradient"):
        from samplers.methods.baselines import grad_flag

        grad_flag("rwm", "authors")
