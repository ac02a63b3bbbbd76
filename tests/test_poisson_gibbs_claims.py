"""Claim-side helpers of the poisson_gibbs family (verify/poisson_gibbs_claims.py, Zhang & De Sa 2019 §4.2).

The ``rejection_steps`` claim computes expected rejection steps in closed form; these tests check the
closed form against (a) the spin model's conditional energy in the kernel and (b) the registered
rejection kernel's measured steps, each statistical check with a mutant that must be rejected.
False-alarm probability per test: |Z| > 5 under N(0, 1) -> 5.7e-7.
"""

from __future__ import annotations

import numpy as np
import pytest

import samplers  # noqa: F401  (Numba cache dir before numba)
from samplers import registry as R
from samplers.kernels import continuous_gibbs as CG
from verify.poisson_gibbs_claims import expected_rejection_steps, spin_energy_terms

Z_MAX = 5.0


@pytest.fixture(scope="module")
def spin():
    return R.build_problem("continuous_spin", rows=5, cols=5)


def test_energy_terms_match_kernel_conditional(spin):
    """U_i(v) = S_i + v T_i(x) equals the kernel's full conditional energy (deterministic)."""
    m = spin.model
    rng = np.random.default_rng(0)
    x = rng.random(m.n)
    S, T = spin_energy_terms(m, x)
    dummy_i = np.zeros(1, dtype=np.int64)
    dummy_f = np.zeros(1)
    for i in range(m.n):
        for v in (0.0, 0.3, 1.0):
            e = CG.cond_energy(m, x.copy(), i, v, False, dummy_i, dummy_i, 0, dummy_f)
            assert e == pytest.approx(S[i] + v * T[0, i], rel=1e-12, abs=1e-12)
    # a wrong reading (energy without the +1 per factor) does not match
    e0 = CG.cond_energy(m, x.copy(), 0, 0.5, False, dummy_i, dummy_i, 0, dummy_f)
    assert e0 != pytest.approx(0.5 * T[0, 0], rel=1e-6)


def _simulated_steps(S: float, T: float, E: float, n: int, rng) -> np.ndarray:
    """n independent uniform-proposal rejection samplers on [0, 1] for density exp(S + v T)."""
    out = np.empty(n)
    for r in range(n):
        k = 0
        while True:
            k += 1
            v = rng.random()
            if np.log(rng.random()) < S + v * T - E:
                break
        out[r] = k
    return out


@pytest.mark.parametrize("S,T,E", [(2.0, 1.5, 4.0), (3.0, 0.2, 6.0), (1.0, 3.0, 4.0)])
def test_expected_steps_closed_form_vs_simulation(S, T, E):
    rng = np.random.default_rng(int(10 * S + T))
    steps = _simulated_steps(S, T, E, 4000, rng)
    acc = np.exp(S - E) * np.expm1(T) / T
    se = np.sqrt((1 - acc) / acc**2 / steps.size)
    mu = expected_rejection_steps(np.array([S]), np.array([[T]]), E)
    assert abs(steps.mean() - mu) / se < Z_MAX
    # mutant: ignoring the v-dependence (acc = e^(S - E)) is rejected
    assert abs(steps.mean() - np.exp(E - S)) / se > Z_MAX


def _mixture_moments(S: np.ndarray, T: np.ndarray, E: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per update (rows of T): mean and variance of the steps, i uniform then Geometric(acc_i)."""
    acc = np.exp(S - E) * np.expm1(T) / T
    m1 = np.mean(1 / acc, axis=1)
    m2 = np.mean((2 - acc) / acc**2, axis=1)
    return m1, m2 - m1 * m1


def test_kernel_steps_match_closed_form_per_site_envelope(spin):
    """gibbs_rejection's measured proposals per update agree with E[1/acc_i(x_{t-1})] for its
    per-site envelope sum_{A[i]} M (martingale CLT over the chain); the constant envelope e^L (the
    ``rejection_steps`` claim's setting) is rejected as a description of this kernel (mutant)."""
    m = spin.model
    n = 6000
    x0 = np.full(m.n, 0.7)
    res = R.run("gibbs_rejection", spin, n, 3, x0=x0)
    steps = np.asarray(res.extra["trace_1"], dtype=float)
    prev = np.vstack([x0[None, :], res.samples[:-1]])
    S, T = spin_energy_terms(m, prev)
    M_site = np.array([m.M[m.ptr[i] : m.ptr[i + 1]].sum() for i in range(m.n)])
    L = float(spin.meta["L"])

    def z(envelope):
        mus, vs = _mixture_moments(S, T, envelope)
        return (steps.sum() - mus.sum()) / np.sqrt(vs.sum())

    assert abs(z(M_site)) < Z_MAX
    assert abs(z(np.full(m.n, L))) > Z_MAX
    mean_closed = expected_rejection_steps(S, T, M_site)
    assert mean_closed == pytest.approx(steps.mean(), rel=0.1)
