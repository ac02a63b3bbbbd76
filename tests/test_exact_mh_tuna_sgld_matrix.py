"""Tuna-SGLD exact matrix (seed 001 Alg. 3) on the tiny lattice: the independently built matrix is
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
