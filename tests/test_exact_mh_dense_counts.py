"""``counts="dense"``: the Poisson minibatch bookkeeping of the Yuan & Wang 2024 code (a length-N count
vector per iteration, scanned, phi recomputed on S; docs/performance.md §7.9) as a timing variant of the
PoissonMH family. It must leave the chain unchanged draw for draw, do the work (its evaluations counted in
``datum_evals``), and check what it recomputes."""

from __future__ import annotations

import numpy as np
import pytest

from samplers import registry
from samplers.kernels import poisson_mh as PM

METHODS = ("poisson_mh", "poisson_mala", "poisson_barker")


@pytest.fixture(scope="module")
def problems():
    return {
        t: registry.build_problem(t, seed=1, scale="smoke", N=2_000)
        for t in ("truncated_gaussian", "robust_regression")
    }


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("target", ["truncated_gaussian", "robust_regression"])
def test_dense_counts_same_chain_more_evaluations(problems, method, target):
    p = problems[target]
    step = 0.05 if target == "truncated_gaussian" else 0.01
    a = registry.run(method, p, 300, seed=7, step=step)
    b = registry.run(method, p, 300, seed=7, step=step, counts="dense")
    assert np.array_equal(a.samples, b.samples) and np.array_equal(a.accepted, b.accepted)
    assert np.array_equal(a.n_evals, b.n_evals)
    extra = b.extra["datum_evals"] - a.extra["datum_evals"]  # |S| recomputed evaluations per iteration
    B = a.n_evals
    assert np.all(extra >= 1) and np.all(extra <= B)
    # distinct data among B ~ 1e2-1e3 draws from N = 2000: a few repeats, so |S| close to B
    assert 0.5 < extra.sum() / B.sum() <= 1.0
    assert a.hyper["counts"] == "sparse" and b.hyper["counts"] == "dense"


def test_dense_recount_counts_distinct_data_and_checks_bounds(problems):
    t = problems["truncated_gaussian"].model
    theta = np.zeros(t.X.shape[1])
    err = np.zeros(2, dtype=np.int64)
    buf = np.array([3, 3, 5, 9, 9, 9, 0], dtype=np.int64)
    assert PM.dense_recount(t, theta, buf, 6, err) == 3 and err[0] == 0  # S = {3, 5, 9}; buf[6] unused
    bad = t._replace(M=t.M.copy())
    bad.M[5] = 1e-300  # phi_5(theta) > M_5: the recomputation must report datum 5
    assert PM.dense_recount(bad, theta, buf, 6, err) == 3
    assert err[0] == PM.ERR_PHI_BOUND and err[1] == 5


def test_counts_mode_is_validated(problems):
    with pytest.raises(ValueError, match="counts must be one of"):
        registry.run("poisson_mh", problems["truncated_gaussian"], 10, seed=0, counts="authors")
    with pytest.raises(ValueError, match="unknown"):
        registry.run("tuna_mh", problems["truncated_gaussian"], 10, seed=0, counts="dense")
