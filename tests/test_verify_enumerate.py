"""verify.enumerate: exact matrices and auxiliary-randomness enumerations (deterministic)."""

import itertools

import numpy as np
import pytest
from scipy import stats

from samplers import registry
from samplers.targets.factor_graph import exact_joint
from verify import enumerate as E
from verify import markov as MK


@pytest.fixture(scope="module")
def grid():
    pb = registry.build_problem("tiny_grid", 0, d=2, half_width=1.0)
    return pb, E.make_lattice(pb.meta["grid"], pb.meta["lo"], pb.meta["h"])


def test_lattice_proposals_rows(grid):
    pb, lat = grid
    interior = np.where(np.all(np.abs(lat.points) < 1.0 - 1e-9, axis=1))[0]
    g = np.random.default_rng(0).standard_normal(lat.points.shape)
    for Q in (E.lattice_rw_proposal(lat), E.lattice_barker_proposal(lat, g)):
        assert np.all(Q.sum(axis=1) <= 1 + 1e-14)
        np.testing.assert_allclose(Q[interior].sum(axis=1), 1.0, atol=1e-14)
    # Langevin: every coordinate's offset distribution normalised; the centre state keeps all mass
    # when K h stays inside the grid
    Q = E.lattice_langevin_proposal(lat, 0 * g, 0.3, 1)
    centre = lat.index[(4, 4)]
    assert Q[centre].sum() == pytest.approx(1.0, abs=1e-14)
    # RW is symmetric
    Q = E.lattice_rw_proposal(lat)
    np.testing.assert_allclose(Q, Q.T, atol=0)


def test_barker_lattice_matches_formula(grid):
    _, lat = grid
    g = np.array([[0.7, -1.3]] * lat.points.shape[0])
    Q = E.lattice_barker_proposal(lat, g)
    s = lat.index[(4, 4)]
    up = 1 / (1 + np.exp(-g[0] * lat.h))
    for sgn in itertools.product((1, -1), repeat=2):
        j = lat.index[(4 + sgn[0], 4 + sgn[1])]
        want = np.prod([up[k] if sgn[k] > 0 else 1 - up[k] for k in range(2)])
        assert Q[s, j] == pytest.approx(want, rel=1e-14)


@pytest.mark.parametrize("proposal,sigma", [("rw", 0.0), ("barker", 0.0), ("langevin", 0.4)])
def test_lattice_mh_reversible(grid, proposal, sigma):
    pb, lat = grid
    P, lp = E.lattice_mh_matrix(pb.model, lat, proposal, sigma=sigma)
    pi = MK.normalize_log(lp)
    assert MK.stochasticity_residual(P) < 1e-13
    assert MK.detailed_balance_residual(P, pi) < 1e-15
    # without the Hastings term the asymmetric proposals are NOT reversible w.r.t. pi
    if proposal != "rw":
        Q = (
            E.lattice_barker_proposal(lat, np.random.default_rng(1).standard_normal((81, 2)))
            if proposal == "barker"
            else E.lattice_langevin_proposal(lat, np.ones((81, 2)) * 3.0, sigma, 3)
        )
        A = np.where(Q > 0, np.minimum(1, np.exp(lp[None, :] - lp[:, None])), 0)
        assert MK.detailed_balance_residual(E.mh_matrix_from_acceptance(Q, A), pi) > 1e-4


@pytest.mark.parametrize("tid", ["potts_grid", "random_ising"])
def test_gibbs_matrices(tid):
    fg = registry.build_problem(tid, 0).model
    X, U, mats = E.gibbs_site_matrices(fg)
    Xr, pr = exact_joint(fg)
    np.testing.assert_array_equal(X, Xr)
    np.testing.assert_allclose(MK.normalize_log(U), pr, atol=1e-14)
    pi = MK.normalize_log(U)
    for P in mats:
        assert MK.detailed_balance_residual(P, pi) < 1e-15
        np.testing.assert_allclose(P @ P, P, atol=1e-14)  # resampling a site twice = once
    Pr, _ = E.gibbs_random_scan_matrix(fg)
    assert MK.detailed_balance_residual(Pr, pi) < 1e-15
    Ps, _ = E.gibbs_systematic_sweep_matrix(fg)
    assert MK.stationarity_residual(Ps, pi) < 1e-14
    with pytest.raises(ValueError):
        E.gibbs_random_scan_matrix(fg, site_probs=np.ones(fg.n))


def test_poisson_enumeration_certified():
    rates = np.array([0.3, 1.7, 0.0, 2.5])
    en = E.enumerate_poisson_counts(rates, tail=1e-10)
    assert en.neglected <= 1e-10
    assert abs(en.probs.sum() + en.neglected - 1.0) < 1e-13
    assert np.all(en.counts[:, 2] == 0)
    # means are within the neglected-mass effect of the rates
    mean = en.probs @ en.counts
    assert np.all(mean <= rates + 1e-12)
    assert np.all(rates - mean < 1e-8)
    # the truncation is minimal-ish: one less would exceed tail/N
    for i, lam in enumerate(rates):
        if lam > 0:
            assert stats.poisson.sf(en.nmax[i] - 1, lam) > 1e-10 / 4
    with pytest.raises(ValueError):
        E.enumerate_poisson_counts(np.array([-1.0]))
    with pytest.raises(ValueError):
        E.enumerate_poisson_counts(np.full(6, 50.0), tail=1e-12, max_configs=1000)


def test_subsets_orderings_and_uniform_integral():
    idx, p = E.minibatch_subsets(5, 2)
    assert idx.shape == (10, 2) and p == pytest.approx(0.1)
    idx, p = E.minibatch_orderings(4, 2)
    assert idx.shape == (12, 2) and p == pytest.approx(1 / 12)
    idx, p = E.minibatch_orderings(4)
    assert idx.shape == (24, 4)
    for log_r in (-2.0, -0.1, 0.5):
        acc = E.integrate_uniform(lambda u, lr=log_r: float(np.log(u) < lr), [np.exp(log_r)])
        assert acc == pytest.approx(min(1.0, np.exp(log_r)), abs=1e-15)
    with pytest.raises(ValueError):
        E.minibatch_subsets(3, 4)
    with pytest.raises(ValueError):
        E.integrate_uniform(lambda u: 1.0, [], 1.0, 0.0)
