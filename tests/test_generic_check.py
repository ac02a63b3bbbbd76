"""The generic kernel-vs-matrix check (verify.empirical.step_vs_matrix) drives any one-step function.

The real lattice random-walk MH step (samplers.kernels.mh) passes against the exact matrix of
verify.enumerate on a 5 x 5 tiny grid, in one and two steps and in the batched form; one-bug copies of it
(verify.mutants: acceptance shifted by 0.3; cached log pi not updated on acceptance) fail. Each G-test has
family-wise false-alarm probability 1e-4 (Bonferroni over the 25 rows), fixed seeds.
"""

from __future__ import annotations

import numpy as np
import pytest

from samplers import proposals as PR
from samplers import registry
from samplers.kernels import mh as MH
from verify import empirical as EM
from verify import enumerate as E
from verify import mutants as MU

H, K = 0.25, 3
REPS = 3_000


@pytest.fixture(scope="module")
def grid():
    pb = registry.build_problem("tiny_grid", 0, d=2, half_width=0.5, h=H)
    lat = E.make_lattice(pb.meta["grid"], pb.meta["lo"], pb.meta["h"])
    P, _ = E.lattice_mh_matrix(pb.model, lat, "rw", sigma=0.0, K=K)
    return pb.model, lat.points, P


def _kernel(t, bug: int = 0):
    """(init, step, position) of the lattice RW MH kernel (bug > 0: the mutant step of verify.mutants)."""

    def init(x):
        theta, grad, lp = MH.mh_init(t, x, PR.RW_LATTICE, 0.0)
        return theta, grad, lp, np.empty_like(theta), np.zeros_like(theta)

    def step(st, rng):
        theta, grad, lp, tp, gp = st
        if bug:
            MU._mh_step_mutant(t, theta, grad, lp, PR.RW_LATTICE, 0.0, H, K, rng, tp, gp, bug, 0.0)
        else:
            MH.mh_step(t, theta, grad, lp, PR.RW_LATTICE, 0.0, H, K, rng, tp, gp, 0.0)
        return st

    return init, step, lambda st: st[0]


def test_the_real_step_passes_and_the_shifted_acceptance_mutant_fails(grid):
    t, states, P = grid
    init, step, pos = _kernel(t)
    good = EM.step_vs_matrix(step, states, P, REPS, 11, init=init, position=pos)
    assert good.passed and good.threshold == pytest.approx(1e-4 / 25), good.row("c", "-", "rwm", "-")
    init, step, pos = _kernel(t, bug=2)
    bad = EM.step_vs_matrix(step, states, P, REPS, 12, init=init, position=pos)
    assert not bad.passed and bad.min_p < bad.threshold


def test_a_stale_cached_state_is_caught_only_over_two_steps(grid):
    t, states, P = grid
    init, step, pos = _kernel(t)
    assert EM.step_vs_matrix(step, states, P, REPS, 13, init=init, position=pos, n_steps=2).passed
    init, step, pos = _kernel(t, bug=3)
    assert EM.step_vs_matrix(step, states, P, REPS, 14, init=init, position=pos).passed  # invisible
    assert not EM.step_vs_matrix(step, states, P, REPS, 15, init=init, position=pos, n_steps=2).passed


def test_a_compiled_repeat_loop_can_be_driven_in_batches(grid):
    t, states, P = grid

    def batch(rep):
        return lambda X, rng: rep(t, X[0].copy(), PR.RW_LATTICE, 0.0, H, K, rng, X.shape[0])

    assert EM.step_vs_matrix(batch(EM.repeat_mh_step), states, P, REPS, 16, batched=True).passed
    res = EM.step_vs_matrix(batch(MU.repeat_mh_accept_shift), states, P, REPS, 17, batched=True)
    assert not res.passed


def test_same_seed_same_p_values(grid):
    t, states, P = grid
    init, step, pos = _kernel(t)
    a = EM.step_vs_matrix(step, states, P, 200, 5, init=init, position=pos, rows=[0, 7])
    b = EM.step_vs_matrix(step, states, P, 200, 5, init=init, position=pos, rows=[0, 7])
    assert np.array_equal(a.pvalues, b.pvalues) and list(a.rows) == [0, 7]


def test_state_counts_rounds_and_counts_non_states_in_the_last_cell():
    states = np.array([[0.0, 0.25], [0.5, -0.25]])
    X = np.array([[0.5, -0.25 + 1e-13], [-0.0, 0.25], [0.1, 0.1], [0.5, -0.25]])
    assert EM.state_counts(states, X).tolist() == [1, 2, 1]
    with pytest.raises(ValueError, match="duplicate rows"):
        EM.state_counts(np.array([[0.0], [0.0]]), X[:, :1])


def test_bad_arguments_are_one_line_errors(grid):
    t, states, P = grid
    with pytest.raises(ValueError, match="expected \\(25, 25\\)"):
        EM.step_vs_matrix(lambda x, rng: x, states, P[:3, :3], 10, 0)
    with pytest.raises(ValueError, match="n_steps must be an integer >= 1"):
        EM.step_vs_matrix(lambda x, rng: x, states, P, 10, 0, n_steps=0)
    with pytest.raises(ValueError, match="shape \\(3,\\), expected \\(2,\\)"):
        EM.step_vs_matrix(lambda x, rng: np.zeros(3), states, P, 10, 0)
    with pytest.raises(ValueError, match="batched=True takes no init"):
        EM.step_vs_matrix(lambda X, rng: X, states, P, 10, 0, batched=True, init=np.copy)
