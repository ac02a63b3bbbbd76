"""Continuous-kernel checks: detailed-balance identities (1e-10, deterministic), HMC reversibility,
invariance KS from exact draws (Bonferroni over coordinates, family-wise alpha = 1e-4, fixed seeds);
each must fail on its mutant."""

import numpy as np
import pytest

from samplers import proposals as PR
from samplers import registry
from verify import continuous as C
from verify import mutants as MU

ALPHA = 1e-4


@pytest.fixture(scope="module")
def gl():
    return registry.build_problem("gaussian_location", 0, N=100, d=2, box=0.15)


@pytest.mark.parametrize(
    "prop,f",
    [(PR.LANGEVIN_GAUSS, 1.2), (PR.BARKER_GAUSS, 1.5), (PR.RW_GAUSS, 1.0)],
    ids=["mala", "barker", "rwm"],
)
def test_detailed_balance_identity(gl, prop, f):
    sig = f * gl.meta["post_sd"].min()
    starts = gl.reference(np.random.default_rng(0), 40)
    res = C.mh_identity_check(gl.model, prop, sig, starts, 1)
    assert res.passed and res.max_residual < 1e-10 and res.n_pairs >= 10
    bad = C.mh_identity_check(gl.model, prop, sig, starts, 1, log_ratio=C.kernel_log_ratio_no_hastings)
    assert bad.passed == (prop == PR.RW_GAUSS)  # symmetric RW needs no Hastings term


@pytest.mark.parametrize(
    "prop,glen", [(PR.LANGEVIN_GAUSS, 2.0), (PR.BARKER_GAUSS, -2.0)], ids=["mala", "barker"]
)
def test_identity_with_the_authors_rescaled_gradient(gl, prop, glen):
    """grad="authors" (2 g/||g||; Barker -2 g/||g||): the kernel path still satisfies detailed balance;
    the mutant whose reverse density uses the unrescaled gradient at x' is caught."""
    sig = 1.2 * gl.meta["post_sd"].min()
    starts = gl.reference(np.random.default_rng(0), 40)
    res = C.mh_identity_check(gl.model, prop, sig, starts, 1, glen=glen)
    assert res.passed and res.n_pairs >= 10
    bad = C.mh_identity_check(
        gl.model, prop, sig, starts, 1, log_ratio=C.kernel_log_ratio_unscaled_reverse, glen=glen
    )
    assert not bad.passed and bad.max_residual > 1e-3


def test_hmc_reversibility_with_a_rescaled_force(gl):
    eps = 0.3 * gl.meta["post_sd"].min()
    starts = gl.reference(np.random.default_rng(0), 30)
    res = C.hmc_reversibility_check(gl.model, eps, 5, starts, 5, glen=2.0)
    assert res.passed, res
    bad = C.hmc_reversibility_check(gl.model, eps, 5, starts, 5, step=MU.hmc_step_stale_grad, glen=20.0)
    assert not bad.passed and bad.map_error > 1e-3


def test_db_residual_per_aux_draw():
    # an auxiliary draw enters as an extra log-density on each side
    r = C.db_residual(
        np.log(0.2) + np.log(0.5), np.log(0.3), 0.0, np.log(0.4) + np.log(0.25), np.log(0.3), 0.0
    )
    assert r < 1e-15


def test_hmc_reversibility(gl):
    eps = 0.3 * gl.meta["post_sd"].min()
    starts = gl.reference(np.random.default_rng(0), 30)
    res = C.hmc_reversibility_check(gl.model, eps, 5, starts, 5)
    assert res.passed, res
    bad = C.hmc_reversibility_check(gl.model, eps, 5, starts, 5, step=MU.hmc_step_stale_grad)
    assert not bad.passed and bad.map_error > 1e-3


def _inv(pb, run):
    return C.invariance_check(pb.reference, run, 10_000, 10, 7, alpha=ALPHA)


@pytest.mark.parametrize("prop,f", [(PR.LANGEVIN_GAUSS, 1.2), (PR.BARKER_GAUSS, 1.5)], ids=["mala", "barker"])
def test_invariance_mh_and_no_hastings_mutant(gl, prop, f):
    m, sig = gl.model, f * gl.meta["post_sd"].min()
    assert _inv(gl, lambda X0, rng: C.run_chains_mh(m, X0, prop, sig, 0.0, 3, 10, rng, 0.0)).passed
    bad = _inv(gl, lambda X0, rng: MU.chains_mh_no_hastings(m, X0, prop, sig, 0.0, 3, 10, rng))
    assert not bad.passed


def test_invariance_hmc_and_stale_gradient_mutant(gl):
    m, eps = gl.model, 0.3 * gl.meta["post_sd"].min()
    assert _inv(gl, lambda X0, rng: C.run_chains_hmc(m, X0, eps, 5, 10, rng, 0.0)).passed
    bad = _inv(gl, lambda X0, rng: MU.chains_hmc_stale_grad(m, X0, eps, 5, 10, rng, 0.0))
    assert not bad.passed


def test_invariance_rwm(gl):
    m, sig = gl.model, gl.meta["post_sd"].min()
    assert _inv(gl, lambda X0, rng: C.run_chains_mh(m, X0, PR.RW_GAUSS, sig, 0.0, 3, 10, rng, 0.0)).passed


@pytest.mark.slow
def test_invariance_truncated_gaussian_smoke():
    tg = registry.build_problem("truncated_gaussian", 0, scale="smoke")
    m, sd = tg.model, tg.meta["untruncated_sd"].min()
    for prop, f in ((PR.LANGEVIN_GAUSS, 1.2), (PR.BARKER_GAUSS, 1.5), (PR.RW_GAUSS, 1.0)):
        res = C.invariance_check(
            tg.reference,
            lambda X0, rng, p=prop, s=f * sd: C.run_chains_mh(m, X0, p, s, 0.0, 3, 3, rng, 0.0),
            10_000,
            3,
            8,
        )
        assert res.passed, (prop, res.min_p)
    res = C.invariance_check(
        tg.reference, lambda X0, rng: C.run_chains_hmc(m, X0, 0.3 * sd, 5, 10, rng, 0.0), 10_000, 10, 9
    )
    assert res.passed
    bad = C.invariance_check(
        tg.reference,
        lambda X0, rng: MU.chains_hmc_stale_grad(m, X0, 0.3 * sd, 5, 10, rng, 0.0),
        10_000,
        10,
        9,
    )
    assert not bad.passed
