"""K14 §6.2's ICA model: W on the orthogonal group, the Cayley random walk, exact MH and AustereMH on it.

The chains are checked against the exact posterior of a D = 2 problem, where O(2)'s rotation component is one
angle phi with a uniform (Haar) prior and the posterior is a 1-d quadrature. Every statistical check has a
fixed seed (it cannot flip at random) and a threshold of false-alarm probability <= 1e-4 for independent draws
(the KS critical value sqrt(-log(1e-4 / 2) / 2) / sqrt(n) = 2.23 / sqrt(n), on draws thinned well past the
chain's correlation time); the same threshold rejects a chain of the wrong posterior (the mutant)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import samplers  # noqa: F401  (sets the Numba cache dir before numba is used)
from samplers import registry as R
from samplers.approx import ica_stiefel as IS
from samplers.kernels import austere_stiefel as AS

KS_CRIT = math.sqrt(-math.log(1e-4 / 2) / 2)


def _rotation(phi: float) -> np.ndarray:
    c, s = math.cos(phi), math.sin(phi)
    return np.array([[c, s], [-s, c]])


def _problem(N: int = 30, seed: int = 3):
    return R.build_problem("ica_stiefel", seed, N=N, D=2)


def _posterior_cdf(X: np.ndarray, beta: float, grid: np.ndarray) -> np.ndarray:
    """CDF on [0, pi/2) of phi (the likelihood has period pi/2: row permutations and sign flips)."""
    lp = np.empty(grid.size)
    for k, phi in enumerate(grid):
        Y = X @ _rotation(phi).T
        lp[k] = beta * np.sum(-2.0 * np.log(2.0 * np.cosh(0.5 * Y)))
    p = np.exp(lp - lp.max())
    c = np.concatenate([[0.0], np.cumsum(0.5 * (p[1:] + p[:-1]) * np.diff(grid))])
    return c / c[-1]


def _angles(samples: np.ndarray) -> np.ndarray:
    """phi mod pi/2 of each W = rotation(phi) (the chain stays on det W = +1)."""
    return np.mod(np.arctan2(samples[:, 1], samples[:, 0]), math.pi / 2)


def _ks(phi: np.ndarray, grid: np.ndarray, cdf: np.ndarray) -> float:
    x = np.sort(phi)
    F = np.interp(x, grid, cdf)
    n = x.size
    return float(max(np.max(np.arange(1, n + 1) / n - F), np.max(F - np.arange(n) / n)))


def test_cayley_step_stays_orthogonal_and_is_a_rotation_in_2d():
    rng = np.random.default_rng(0)
    D = 4
    W = IS.nearest_orthogonal(rng.standard_normal((D, D))).reshape(-1)
    A, B, Wp = np.empty((D, D)), np.empty((D, D)), np.empty(D * D)
    g = np.random.default_rng(1)
    for _ in range(3000):
        AS.cayley_propose(W, D, 0.3, g, A, B, Wp)
        W = Wp.copy()
    assert IS.orthogonality_error(W, D) < 1e-12
    # D = 2: Cayley(S) with S = [[0, s], [-s, 0]] is the rotation by 2 atan(s / 2), so W' = Q W
    g1, g2 = np.random.default_rng(7), np.random.default_rng(7)
    W2 = _rotation(0.3).reshape(-1)
    A2, B2, out = np.empty((2, 2)), np.empty((2, 2)), np.empty(4)
    AS.cayley_propose(W2, 2, 0.5, g1, A2, B2, out)
    s = 0.5 * g2.standard_normal()
    np.testing.assert_allclose(
        out.reshape(2, 2), _rotation(2 * math.atan(s / 2)) @ _rotation(0.3), atol=1e-14
    )


def test_manifold_chains_sample_the_exact_angle_posterior():
    pr = _problem()
    X = np.asarray(pr.model.X)
    grid = np.linspace(0.0, math.pi / 2, 4001)
    cdf = _posterior_cdf(X, 1.0, grid)
    n_iter, thin = 60_000, 30
    n = n_iter // thin
    crit = KS_CRIT / math.sqrt(n)
    x0 = _rotation(0.2).reshape(-1)
    exact = R.run("rwm_stiefel", pr, n_iter, 11, x0=x0, step=1.0, thin=thin)
    assert 0.2 < exact.accept_rate < 0.9
    assert np.all(exact.n_evals == 30)
    assert _ks(_angles(exact.samples), grid, cdf) < crit
    # the sequential test with m = N decides on all data at once: exact MH
    full = R.run("austere_mh_stiefel", pr, n_iter, 12, x0=x0, step=1.0, thin=thin, m=30, eps=0.05)
    assert np.all(full.n_evals == 30)
    assert _ks(_angles(full.samples), grid, cdf) < crit
    # mutant: the posterior at three times the likelihood weight is rejected by the same threshold
    cdf_wrong = _posterior_cdf(X, 3.0, grid)
    assert _ks(_angles(exact.samples), grid, cdf_wrong) > crit
    # a small-batch test uses fewer data and stays on the manifold
    ap = R.run("austere_mh_stiefel", pr, 2000, 13, x0=x0, step=1.0, m=5, eps=0.2)
    assert ap.n_evals.mean() < 30
    assert IS.orthogonality_error(ap.samples[-1], 2) < 1e-12


def test_stiefel_chains_are_reproducible():
    pr = R.build_problem("ica_stiefel", 0, N=500, D=3)
    a = R.run("austere_mh_stiefel", pr, 300, 5, step=0.05, m=50, eps=0.1)
    b = R.run("austere_mh_stiefel", pr, 300, 5, step=0.05, m=50, eps=0.1)
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.n_evals, b.n_evals)


def test_stiefel_bad_input():
    pr = R.build_problem("ica_stiefel", 0, N=200, D=3)
    with pytest.raises(ValueError, match="orthonormal"):
        R.run("rwm_stiefel", pr, 10, 0, x0=2 * np.eye(3).reshape(-1), step=0.1)
    with pytest.raises(ValueError, match="eps"):
        R.run("austere_mh_stiefel", pr, 10, 0, step=0.1, eps=0.7)
    with pytest.raises(ValueError, match="D must be"):
        R.build_problem("ica_stiefel", 0, N=200, D=1)
    flat = R.build_problem("ica", 0, N=200, D=3)
    with pytest.raises(ValueError):
        R.run("rwm_stiefel", flat, 10, 0, step=0.1)
