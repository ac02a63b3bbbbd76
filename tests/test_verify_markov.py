"""verify.markov: exact facts about small chains (deterministic, no statistics)."""

import numpy as np
import pytest

from verify import markov as MK


def two_state(a: float, b: float) -> np.ndarray:
    return np.array([[1 - a, a], [b, 1 - b]])


def test_two_state_chain_closed_forms():
    a, b = 0.3, 0.1
    P = two_state(a, b)
    pi = MK.stationary(P)
    np.testing.assert_allclose(pi, [b / (a + b), a / (a + b)], atol=1e-14)
    assert MK.stationarity_residual(P, pi) < 1e-15
    assert MK.detailed_balance_residual(P, pi) < 1e-15
    # eigenvalues 1 and 1 - a - b
    assert MK.spectral_gap(P, pi) == pytest.approx(a + b, abs=1e-14)
    assert MK.absolute_spectral_gap(P, pi) == pytest.approx(a + b, abs=1e-14)
    # d(t) = max(pi) |1 - a - b|^t for the two-state chain
    ts = [0, 1, 3, 10]
    d = MK.tv_to_stationarity(P, pi, ts)
    np.testing.assert_allclose(d, pi.max() * (1 - a - b) ** np.array(ts), atol=1e-14)
    assert np.all(d <= MK.tv_bound_reversible(P, pi, ts) + 1e-15)


def test_negative_eigenvalue_absolute_gap_and_bound():
    P = two_state(0.9, 0.8)  # lambda_2 = -0.7
    pi = MK.stationary(P)
    assert MK.spectral_gap(P, pi) == pytest.approx(1.7)
    assert MK.absolute_spectral_gap(P, pi) == pytest.approx(0.3)
    ts = np.arange(30)
    assert np.all(MK.tv_to_stationarity(P, pi, ts) <= MK.tv_bound_reversible(P, pi, ts) + 1e-15)


def test_nonreversible_cycle_is_flagged():
    P = np.array([[0.1, 0.9, 0.0], [0.0, 0.1, 0.9], [0.9, 0.0, 0.1]])
    pi = MK.stationary(P)
    np.testing.assert_allclose(pi, np.full(3, 1 / 3), atol=1e-14)
    assert MK.stationarity_residual(P, pi) < 1e-15
    assert MK.detailed_balance_residual(P, pi) > 0.2


def test_tv_stochasticity_irreducibility_and_errors():
    assert MK.tv([0.5, 0.5], [1.0, 0.0]) == pytest.approx(0.5)
    assert MK.stochasticity_residual(two_state(0.2, 0.2)) < 1e-15
    with pytest.raises(ValueError):
        MK.check_stochastic(np.array([[0.5, 0.6], [0.5, 0.5]]))
    with pytest.raises(ValueError):
        MK.stationary(np.ones((2, 3)))
    with pytest.raises(ValueError):
        MK.tv([0.5, 0.5], [1.0])
    assert MK.is_irreducible(two_state(0.2, 0.3))
    assert not MK.is_irreducible(np.eye(3))
    with pytest.raises(ValueError):
        MK.tv_to_stationarity(np.eye(2), [0.5, 0.5], [-1])
