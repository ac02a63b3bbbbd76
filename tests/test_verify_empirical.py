"""Kernel-vs-matrix G-tests (family-wise false-alarm rate alpha = 1e-4 by Bonferroni over rows, fixed
seeds): the real compiled kernels pass, every mutant in verify.mutants fails."""

import numpy as np
import pytest

from samplers import proposals as PR
from samplers import registry
from samplers.kernels import gibbs as G
from verify import empirical as EM
from verify import enumerate as E
from verify import mutants as MU

ALPHA = 1e-4  # family-wise false-alarm probability of every kernel-vs-matrix test below


def test_g_test_basics():
    p = np.array([0.5, 0.3, 0.2])
    assert EM.g_test(np.array([500, 300, 200]), p)[1] == pytest.approx(1.0)
    assert EM.g_test(np.array([500, 300, 100, 100]), np.array([0.5, 0.3, 0.2, 0.0]))[1] == 0.0
    assert EM.g_test(np.array([10, 0]), np.array([1.0, 0.0]))[1] == 1.0  # deterministic row
    assert EM.g_test(np.array([90, 10, 0]), np.array([0.5, 0.5, 0.0]))[1] < 1e-10  # binomial
    assert EM.g_test(np.array([9, 1, 0]), np.array([0.5, 0.3, 0.0]))[1] == 1.0  # pooled to 1 cell
    # pooled small cells, out-of-state cell with probability 0
    p2 = np.array([0.98, 0.01, 0.01])
    assert EM.g_test(np.array([98, 1, 1, 0]), p2)[1] > 0.5
    assert EM.g_test(np.array([97, 1, 1, 1]), p2)[1] == 0.0
    with pytest.raises(ValueError):
        EM.g_test(np.array([1, 2]), np.array([0.2, 0.3, 0.5]))


@pytest.fixture(scope="module")
def grid():
    pb = registry.build_problem("tiny_grid", 0, d=2, half_width=1.0)
    return pb, E.make_lattice(pb.meta["grid"], pb.meta["lo"], pb.meta["h"])


LATTICE = [
    ("rw", PR.RW_LATTICE, 0.0, [MU.repeat_mh_accept_shift]),
    ("barker", PR.BARKER_LATTICE, 0.0, [MU.repeat_mh_no_hastings, MU.repeat_mh_accept_shift]),
    ("langevin", PR.LANGEVIN_LATTICE, 0.4, [MU.repeat_mh_no_hastings]),
]


@pytest.mark.parametrize("name,prop,sigma,mutants", LATTICE, ids=[c[0] for c in LATTICE])
def test_lattice_mh_kernel_matches_matrix_and_mutants_fail(grid, name, prop, sigma, mutants):
    pb, lat = grid
    P, _ = E.lattice_mh_matrix(pb.model, lat, name, sigma=sigma, K=3)
    reps = 4000
    res = EM.kernel_vs_matrix(
        P, EM.mh_lattice_row_sampler(pb.model, lat, prop, sigma, lat.h, 3, reps), reps, 1, alpha=ALPHA
    )
    assert res.passed, (res.min_p, res.worst_row)
    for rep in mutants:
        bad = EM.kernel_vs_matrix(
            P,
            EM.mh_lattice_row_sampler(pb.model, lat, prop, sigma, lat.h, 3, reps, repeat=rep),
            reps,
            2,
            alpha=ALPHA,
        )
        assert not bad.passed, rep.__name__


@pytest.mark.parametrize("tid", ["potts_grid", "random_ising"])
def test_gibbs_random_scan(tid):
    fg = registry.build_problem(tid, 0).model
    X, _, _ = E.gibbs_site_matrices(fg)
    P, _ = E.gibbs_random_scan_matrix(fg)
    reps = 3000
    res = EM.kernel_vs_matrix(P, EM.gibbs_row_sampler(fg, X, G.RANDOM_SCAN, 0, 1, reps), reps, 3)
    assert res.passed, res.min_p
    for rep in (MU.repeat_gibbs_biased_scan, MU.repeat_gibbs_drop_factor):
        bad = EM.kernel_vs_matrix(
            P, EM.gibbs_row_sampler(fg, X, G.RANDOM_SCAN, 0, 1, reps, repeat=rep), reps, 4
        )
        assert not bad.passed, rep.__name__


@pytest.mark.parametrize("tid", ["potts_grid", "random_ising"])
def test_gibbs_systematic_scan(tid):
    """Per-site matrices (the kernel's one step at counter = i) and the full sweep; alpha split
    over the n + 1 families so the total false-alarm rate is 1e-4."""
    fg = registry.build_problem(tid, 0).model
    X, _, mats = E.gibbs_site_matrices(fg)
    Ps, _ = E.gibbs_systematic_sweep_matrix(fg)
    cases = [(Pi, i, 1) for i, Pi in enumerate(mats)] + [(Ps, 0, fg.n)]
    a = ALPHA / len(cases)
    reps = 2000
    for k, (P, c0, n) in enumerate(cases):
        res = EM.kernel_vs_matrix(
            P, EM.gibbs_row_sampler(fg, X, G.SYSTEMATIC_SCAN, c0, n, reps), reps, 10 + k, alpha=a
        )
        assert res.passed, (k, res.min_p)
    for rep in (MU.repeat_gibbs_scan_offset, MU.repeat_gibbs_drop_factor):
        caught = [
            not EM.kernel_vs_matrix(
                P,
                EM.gibbs_row_sampler(fg, X, G.SYSTEMATIC_SCAN, c0, n, reps, repeat=rep),
                reps,
                20 + k,
                alpha=a,
            ).passed
            for k, (P, c0, n) in enumerate(cases)
        ]
        assert any(caught), rep.__name__


def test_kernel_vs_matrix_validates_input():
    with pytest.raises(ValueError):
        EM.kernel_vs_matrix(np.eye(2), lambda s, rng: np.array([3, 0]), 2, 0)
    with pytest.raises(ValueError):
        EM.kernel_vs_matrix(np.ones((2, 3)), lambda s, rng: np.array([1, 1]), 2, 0)


def test_two_step_test_catches_stale_cached_state(grid):
    """A bug in the state carried between steps is invisible in one step from a fresh state; the
    two-step comparison with P @ P catches it (alpha = 1e-4 family-wise)."""
    pb, lat = grid
    P, _ = E.lattice_mh_matrix(pb.model, lat, "rw")
    reps = 4000
    one = EM.kernel_vs_matrix(
        P, EM.mh_lattice_row_sampler(pb.model, lat, PR.RW_LATTICE, 0.0, lat.h, 3, reps), reps, 5
    )
    assert one.passed
    ok = EM.kernel_vs_matrix(
        P @ P,
        EM.mh_lattice_multistep_row_sampler(pb.model, lat, PR.RW_LATTICE, 0.0, lat.h, 3, 2, reps),
        reps,
        6,
    )
    assert ok.passed, ok.min_p
    bad = EM.kernel_vs_matrix(
        P @ P,
        EM.mh_lattice_multistep_row_sampler(
            pb.model, lat, PR.RW_LATTICE, 0.0, lat.h, 3, 2, reps, repeat=MU.repeat_mh_steps_stale_logpi
        ),
        reps,
        6,
    )
    assert not bad.passed
