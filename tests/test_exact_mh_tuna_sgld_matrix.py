"""Tuna-SGLD exact matrix (Yuan & Wang 2024 Alg. 3) on the tiny lattice: the independently built matrix is
stochastic and leaves the lattice posterior invariant (deterministic, no false alarms), the
forward-gradient variant's matrix does not (the mutant is a real defect), and the registered
kernel-vs-matrix check (G-test, family-wise alpha 1e-4) passes for the kernel and catches the mutant."""

from __future__ import annotations

import numpy as np
import pytest

from verify import exact_mh_matrices as XMAT
from verify import markov as MK
from verify.families import exact_mh as F


@pytest.fixture(scope="module")
def tiny():
    pb, lat, _ = F._tiny()
    return pb.model, lat, XMAT.stationary_on(pb.model, lat)


def test_k_subsets():
    S = XMAT.k_subsets(4, 2)
    assert len(S) == 6 and len({tuple(s) for s in S}) == 6
    with pytest.raises(ValueError):
        XMAT.k_subsets(3, 4)


@pytest.mark.parametrize("drift", ["paper", "normalized"])
def test_matrix_invariant_and_mutant_not(tiny, drift):
    t, lat, pi = tiny
    hp = F.TUNA_SGLD_LATTICE
    P, tail = XMAT.tuna_sgld_matrix(t, lat, hp["chi"], hp["batch"], hp["sigma"], F.K_LATTICE, drift=drift)
    assert tail <= 1e-11
    assert MK.stochasticity_residual(P) < 1e-12
    assert MK.stationarity_residual(P, pi) < 1e-10
    assert (1 - np.diag(P)).min() > 0.2  # the chain moves
    Pm, _ = XMAT.tuna_sgld_matrix(
        t, lat, hp["chi"], hp["batch"], hp["sigma"], F.K_LATTICE, drift=drift, reverse_grad="current"
    )
    assert MK.stationarity_residual(Pm, pi) > 1e-3
    # a batch of the whole data set makes the gradient exact: same matrix for every batch order
    P4, _ = XMAT.tuna_sgld_matrix(t, lat, hp["chi"], 4, hp["sigma"], F.K_LATTICE, drift=drift)
    assert MK.stationarity_residual(P4, pi) < 1e-10


def test_kvm_tuna_sgld_check():
    rows = F.CHECKS[[c.id for c in F.CHECKS].index("exact_mh.kvm.tuna_sgld")].run(True)
    muts = [r for r in rows if "[mutant:" in r["method"]]
    assert len(muts) == 2
    for r in rows:
        assert r["passed"], r


def test_authors_drift_has_length_eps2_n_over_k():
    """drift='normalized' = the authors' tuna_sgld_proposal!: mean theta + eps^2 (N/K) g/||g||. The
    mapped gradient has norm exactly 2 N/K and the proposal sits at the drifted mean up to the Gaussian
    noise; a map without the N/K factor (norm 2: 1000x too short here) is caught."""
    from samplers import proposals as PR
    from samplers.kernels import tuna_sgld as TS
    from samplers.methods.exact_mh import tuna_setup
    from samplers.targets import tall

    rng = np.random.default_rng(3)
    N, d, batch, sigma = 2000, 5, 2, 0.05
    Y, s2 = tall.make_truncated_gaussian_data(rng, N, d)
    t = tall.truncated_gaussian(Y, s2, beta=1e-3, K=50.0)
    C, rows = tuna_setup(t, 1e-5)
    for _ in range(5):
        theta0 = rng.uniform(-2.0, 2.0, d)
        st = TS.tuna_sgld_init(t, theta0)
        theta_p, g, g_p = np.empty(d), np.empty(d), np.empty(d)
        TS.tuna_sgld_step(
            t,
            *st,
            batch,
            1e-5,
            C,
            rows,
            PR.LANGEVIN_GAUSS,
            TS.DRIFT_NORMALIZED,
            sigma,
            0.0,
            3,
            rng,
            theta_p,
            g,
            g_p,
        )
        np.testing.assert_allclose(np.linalg.norm(g), 2.0 * N / batch, rtol=1e-12)
        drift = theta_p - theta0
        assert np.linalg.norm(drift) > 2.0  # sigma^2 N/K = 2.5 (without N/K: 0.0025)
        assert np.linalg.norm(drift - 0.5 * sigma**2 * g) < 6.0 * sigma * np.sqrt(d)  # noise, P(>) < 1e-6
    g = np.array([3.0, -4.0])
    TS.drift_map(g, TS.DRIFT_PAPER, 1000.0)
    assert np.array_equal(g, [3.0, -4.0])
