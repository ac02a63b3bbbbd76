"""A user-defined tall-data model, sampled, bound-checked and verified exactly:
``python examples/user_model.py [--quick]``.

The model is Bayesian Poisson regression, ``y_i ~ Poisson(exp(b + x_i^T theta))`` with a known offset ``b``,
a N(0, I) prior restricted to the ball ``||theta|| <= R`` and the likelihood tempered by ``beta`` (the
Poisson-minibatch methods need sum_i M_i well below N, docs/targets.md "Defining a tall-data
target"). Everything uses the public API only (no edit inside ``samplers/``):

1. the model: a NamedTuple of its parameters, its per-datum log-likelihood and gradient registered with
   ``samplers.targets.custom.define_model``, and its bounds on the ball: with ``z = b + x_i^T theta`` in
   ``[b - r_i, b + r_i]``, ``r_i = R ||x_i||``, ``f(z) = y_i z - e^z`` is concave, so its minimum is at an
   end of the interval and its maximum at ``log y_i`` clipped to it (PoissonMH ``shift_i = -min``,
   ``M_i = max - min``); ``|f'(z)| = |y_i - e^z|`` is largest at an end, so the TunaMH constant is
   ``c_i = ||x_i|| max(|y_i - e^{b - r_i}|, |y_i - e^{b + r_i}|)``;
2. PoissonMH, TunaMH and full-batch MALA through ``samplers.registry.run`` (steps tuned by
   ``samplers.tuning.tune_step``), their posterior means compared: every pair agrees within 4 combined
   Monte Carlo standard errors per coordinate (``bench.metrics.ess.mcse_mean``);
3. ``verify.bounds.check_tall_bounds`` on the model's bounds;
4. the exact check: on a small enumerable version (4 data, d = 2, beta = 0.3, the lattice of spacing
   0.25 in the ball, built by ``samplers.targets.custom.small_version``) the exact PoissonMH transition matrix
   (``verify.exact_mh_matrices.poisson_mh_matrix``) against one-step transitions of the real kernel
   (``verify.exact_mh_drive.repeat_poisson_mh``; G-tests over the rows, family-wise false alarm 1e-4 by
   ``verify.empirical.kernel_vs_matrix``), and the same check rejecting a broken kernel (the ratio's rates
   off by one).

``--quick`` (the test suite) runs shorter chains and fewer exact-check transitions. Exit code 1 if a check
fails.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import NamedTuple

import numpy as np

import samplers  # noqa: F401  (sets NUMBA_CACHE_DIR before anything is compiled)
from bench.metrics.ess import mcse_mean
from samplers import proposals as PR
from samplers import registry
from samplers.methods import exact_mh as XM
from samplers.problem import Problem
from samplers.targets.custom import custom_target, define_model, small_version
from samplers.tuning import tune_step
from verify import empirical as EM
from verify import enumerate as E
from verify import exact_mh_drive as DR
from verify import exact_mh_matrices as XMAT
from verify.bounds import check_tall_bounds


# ----------------------------------------------------------------------------- the model
class PoissonRegression(NamedTuple):
    """Parameters of the model: the known log-rate offset."""

    offset: float


model = define_model(PoissonRegression)


@model.loglik
def loglik(m, x, y, theta):
    """``y (b + x^T theta) - exp(b + x^T theta)`` (the constant -log y! left out)."""
    z = m.offset
    for j in range(theta.shape[0]):
        z += x[j] * theta[j]
    return y * z - math.exp(z)


@model.loglik_grad
def loglik_grad(m, x, y, theta, scale, out):
    z = m.offset
    for j in range(theta.shape[0]):
        z += x[j] * theta[j]
    ez = math.exp(z)
    g = scale * (y - ez)
    for j in range(theta.shape[0]):
        out[j] += g * x[j]
    return y * z - ez


def poisson_bounds(X: np.ndarray, y: np.ndarray, offset: float, R: float):
    """``(shift, M, c)`` of the untempered per-datum log-likelihood on the ball ``||theta|| <= R``."""
    xn = np.linalg.norm(X, axis=1)
    lo, hi = offset - R * xn, offset + R * xn

    def f(z):
        return y * z - np.exp(z)

    zmax = np.clip(np.log(np.maximum(y, 1e-300)), lo, hi)  # y = 0: the maximum is at the lower end
    fmin = np.minimum(f(lo), f(hi))
    shift = -fmin
    M = f(zmax) - fmin
    c = xn * np.maximum(np.abs(y - np.exp(lo)), np.abs(y - np.exp(hi)))
    return shift, M, c


def poisson_target(X, y, offset, R, beta):
    shift, M, c = poisson_bounds(X, y, offset, R)
    return custom_target(
        PoissonRegression(offset), X, y, support="ball", R=R, prior_prec=1.0, beta=beta, shift=shift, M=M, c=c
    )


def make_data(rng: np.random.Generator, N: int, d: int, offset: float):
    theta_true = np.array([0.5, -0.3, 0.2, 0.1][:d])
    X = 0.3 * rng.standard_normal((N, d))
    y = rng.poisson(np.exp(offset + X @ theta_true)).astype(np.float64)
    return X, y, theta_true


# ----------------------------------------------------------------------------- the checks
def sample_and_compare(t, n_iter: int) -> bool:
    d = t.prior_mean.shape[0]
    problem = Problem("poisson_regression", "continuous", t, d, lambda rng: np.zeros(d))
    runs = {}
    for k, (method, accept) in enumerate((("poisson_mh", 0.25), ("tuna_mh", 0.25), ("mala", 0.55))):
        step, _ = tune_step(method, problem, accept, seed=10 + k)
        res = registry.run(method, problem, n_iter, 100 + k, step=step, progress=False)
        draws = res.samples[n_iter // 10 :]
        runs[method] = (draws.mean(axis=0), mcse_mean(draws))
        batch = float(np.mean(res.n_evals))
        mean, se = (
            np.array2string(v, formatter={"float": f.format})
            for v, f in zip(runs[method], ("{:.3f}", "{:.1e}"), strict=True)
        )
        print(
            f"{method:10s} step {step:.3g}  accept {res.accepted.mean():.2f}  mean {mean}  mcse {se}"
            f"  data/iter {batch:.0f} of N = {t.X.shape[0]}  compile {res.compile_seconds:.1f} s  "
            f"sample {res.sample_seconds:.2f} s ({1e6 * res.sample_seconds / n_iter:.1f} us/iter)"
        )
    ok = True
    names = list(runs)
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            (ma, sa), (mb, sb) = runs[names[a]], runs[names[b]]
            z = np.abs(ma - mb) / np.sqrt(sa**2 + sb**2)
            agree = bool(np.all(z <= 4.0))
            ok &= agree
            print(f"means {names[a]} vs {names[b]}: max |diff| / combined mcse {z.max():.2f} (<= 4: {agree})")
    return ok


def bound_check(t) -> bool:
    res = check_tall_bounds(t, "poisson_regression", seed=0, max_data=400)
    print(f"bound check: passed {res.passed}; {res.row('bounds', '-')['detail']}")
    return res.passed


def exact_check(X, y, offset: float, R: float, reps: int) -> bool:
    """PoissonMH on the enumerable version: the real kernel against the exact matrix, and a mutant."""
    small, grid, lo = small_version(poisson_target(X[:, :2], y, offset, R, 0.3), 4, 0.25)
    lat = XMAT.Lattice(grid, lo, 0.25)
    elat = E.make_lattice(grid, lo, 0.25)
    lam, L, rows = XM.poisson_setup(small, 0.05)
    P, tail = XMAT.poisson_mh_matrix(small, lat, lam)

    def sampler(mutant):
        def sample_row(s, rng):
            buf, ki, kr = DR._scratch(lam + L)
            x0 = elat.points[s].copy()
            out, err = DR.repeat_poisson_mh(
                small, x0, rows, lam, L, PR.RW_LATTICE, 0.0, 0.25, 2, rng, reps, mutant, buf, ki, kr
            )
            if err[0]:
                raise ValueError("PoissonMH bound violated on the enumerable version")
            return EM.lattice_counts(elat, out)

        return sample_row

    good = EM.kernel_vs_matrix(P, sampler(DR.MUT_NONE), reps, 51)
    bad = EM.kernel_vs_matrix(P, sampler(DR.MUT_RATE_OFF_BY_ONE), reps, 52)
    print(
        f"exact check ({len(lat)} lattice states, {reps} transitions each, Poisson truncation {tail:.1e}): "
        f"kernel passed {good.passed}; broken kernel (ratio rates off by one) rejected {not bad.passed}"
    )
    return good.passed and not bad.passed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="shorter chains and exact check (the test suite)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rng = np.random.default_rng(2026)
    offset, R, beta = math.log(2.0), 1.5, 0.01
    N = 5_000 if args.quick else 20_000
    X, y, theta_true = make_data(rng, N, 3, offset)
    t = poisson_target(X, y, offset, R, beta)
    print(f"Poisson regression: N = {N}, d = 3, beta = {beta}, ball R = {R}, theta* = {theta_true}")
    ok_means = sample_and_compare(t, 4_000 if args.quick else 20_000)
    ok_bounds = bound_check(t)
    ok_exact = exact_check(X, y, offset, R, 2_000 if args.quick else 20_000)
    ok = ok_means and ok_bounds and ok_exact
    print(f"{'all checks passed' if ok else 'A CHECK FAILED'} ({time.perf_counter() - t0:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
