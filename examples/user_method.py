"""A user-defined method, registered, verified exactly and run: ``python examples/user_method.py [--quick]``.

The method is coordinate-wise random-walk Metropolis (Metropolis et al. 1953, one coordinate per step): a
coordinate ``j`` drawn uniformly moves by ``step * z``, with ``z ~ N(0, 1)`` (``K = 0``) or ``z`` uniform on
``{-K, ..., -1, 1, ..., K}`` (``K >= 1``: a lattice walk of spacing ``step``, the enumerable version). The
proposal is symmetric, so the MH ratio is the posterior ratio. Everything below uses the public API only:

1. the kernel: ``coord_rw_init / coord_rw_step / coord_rw_sample``, ``@njit(cache=True)`` at module level;
2. its registry entry: one ``MethodSpec`` whose wrapper validates and calls ``samplers.run.drive``,
   registered with ``samplers.registry.register`` (a package would use the entry-point group
   ``minibatch_mcmc_bench.methods`` instead, CONTRIBUTING.md);
3. its check: the exact transition matrix of the lattice walk on the 25-state ``tiny_grid`` target, built
   from the formulas with ``verify.enumerate`` / ``verify.densities`` (no kernel code), against the real
   ``coord_rw_step`` by ``verify.empirical.step_vs_matrix`` (G-tests, family-wise false alarm 1e-4), with a
   broken copy of the step (the proposal's sign biased) that the same check must reject; registered as a
   ``verify.checks.Check`` and run by the verify runner;
4. a run through ``samplers.registry.run`` on a Gaussian-location posterior with its step tuned by
   ``samplers.tuning.tune_step``, its mean compared with the exact posterior mean (within 0.5 posterior
   sd, a sanity bound ~10 Monte Carlo standard errors wide).

``--quick`` (the test suite) draws fewer transitions per state. Exit code 1 if a check fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np
from numba import njit

import samplers  # noqa: F401  (sets NUMBA_CACHE_DIR before anything is compiled)
from samplers import registry
from samplers.problem import Problem
from samplers.result import ChainResult
from samplers.run import check_positive, drive
from samplers.specs import MethodSpec
from samplers.targets import tall
from samplers.tuning import tune_step
from verify import densities as D
from verify import empirical as EM
from verify import enumerate as E
from verify.checks import Check
from verify.registry import register_check
from verify.runner import run_checks


# ============================================================================ 1. the kernel
@njit(cache=True)
def coord_rw_init(t, theta0):
    """The explicit state: theta and ``lp = [log pi(theta)]`` (cached)."""
    theta = theta0.copy()
    lp = np.empty(1)
    lp[0] = tall.log_post(t, theta)
    return theta, lp


@njit(cache=True)
def _propose(theta, step, K, rng, theta_p, up_bias):
    """theta' = theta + step z e_j; ``up_bias`` > 0 only in the broken copy (positive moves favoured)."""
    theta_p[:] = theta
    j = rng.integers(0, theta.shape[0])
    if K == 0:
        theta_p[j] += step * rng.standard_normal()
    else:
        k = rng.integers(1, K + 1)
        theta_p[j] += step * k if rng.random() < 0.5 + up_bias else -step * k


@njit(cache=True)
def _step(t, theta, lp, step, K, rng, theta_p, up_bias):
    _propose(theta, step, K, rng, theta_p, up_bias)
    if not tall.in_support(t, theta_p):  # rejected without evaluating the data
        return False, 0
    lp_p = tall.log_post(t, theta_p)
    if np.log(rng.random()) < lp_p - lp[0]:
        theta[:] = theta_p
        lp[0] = lp_p
        return True, t.X.shape[0]
    return False, t.X.shape[0]


@njit(cache=True)
def coord_rw_step(t, theta, lp, step, K, rng, theta_p):
    """One transition in place; returns (accepted, data evaluations)."""
    return _step(t, theta, lp, step, K, rng, theta_p, 0.0)


@njit(cache=True)
def coord_rw_sample(t, theta, lp, n_iter, step, K, rng, thin):
    """The whole chain loop: (samples, accepted, n_evals)."""
    d = theta.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    for it in range(n_iter):
        acc[it], nev[it] = _step(t, theta, lp, step, K, rng, theta_p, 0.0)
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev


# ============================================================================ 2. the registry entry
def run_coord_rw(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    K: int = 0,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """Coordinate-wise random-walk MH (module docstring); ``K = 0`` Gaussian moves, ``K >= 1`` lattice."""
    if not isinstance(problem.model, tall.TallData):
        raise ValueError(f"coord_rw applies to tall-data targets, not {problem.name}")
    check_positive("step", step)
    check_positive("K", K, integer=True, allow_zero=True)
    return drive(
        "coord_rw",
        problem,
        n_iter,
        seed,
        coord_rw_init,
        (),
        coord_rw_sample,
        (float(step), int(K)),
        thin=thin,
        x0=x0,
        progress=progress,
        hyper={"step": step, "K": K},
    )


SPEC = MethodSpec(
    id="coord_rw",
    family="examples",
    run=run_coord_rw,
    spaces=("continuous",),
    defaults={"step": 0.5, "K": 0},
    exact=True,
    paper="Metropolis et al. 1953 (one coordinate per step)",
    description="coordinate-wise random-walk MH (example of a user-defined method)",
    step_param="step",
)


# ============================================================================ 3. the check
H, K_LATTICE = 0.25, 2  # the lattice walk: spacing h, moves of +-1..K_LATTICE spacings


def exact_matrix(t: tall.TallData, lat: E.Lattice, K: int) -> np.ndarray:
    """Exact P of the lattice walk from the formulas: coordinate j and offset +-k each with probability
    1 / (2 d K); a move off the state space (or the support) is rejected; acceptance min(1, pi'/pi)."""
    S, d = lat.ints.shape
    Q = np.zeros((S, S))
    for s in range(S):
        for j in range(d):
            for k in [*range(-K, 0), *range(1, K + 1)]:
                to = lat.ints[s].copy()
                to[j] += k
                y = lat.index.get(tuple(to), -1)
                if y >= 0:
                    Q[s, y] += 1.0 / (2 * d * K)
    return E.mh_matrix(Q, D.log_post(t, lat.points))  # verify.densities: NumPy, independent of the kernel


def kernel_step(t: tall.TallData, up_bias: float = 0.0):
    """``(init, step, position)`` for step_vs_matrix: the real step, or (up_bias > 0) the broken copy."""

    def init(x):
        theta, lp = coord_rw_init(t, x)
        return theta, lp, np.empty_like(theta)

    def step(state, rng):
        theta, lp, theta_p = state
        if up_bias:
            _step(t, theta, lp, H, K_LATTICE, rng, theta_p, up_bias)
        else:
            coord_rw_step(t, theta, lp, H, K_LATTICE, rng, theta_p)
        return state

    return init, step, lambda state: state[0]


def check_rows(quick: bool) -> list[dict]:
    """Rows of the exact table: the real step (must pass) and the broken copy (must be caught), one and two
    steps (two steps test the state carried between steps: the cached log pi)."""
    pb = registry.build_problem("tiny_grid", 0, d=2, half_width=0.5, h=H)
    lat = E.make_lattice(pb.meta["grid"], pb.meta["lo"], pb.meta["h"])
    P = exact_matrix(pb.model, lat, K_LATTICE)
    reps = 2_000 if quick else 20_000
    rows = []
    for n_steps, bias, seed in ((1, 0.0, 1), (2, 0.0, 2), (1, 0.1, 3)):
        init, step, pos = kernel_step(pb.model, bias)
        res = EM.step_vs_matrix(step, lat.points, P, reps, seed, init=init, position=pos, n_steps=n_steps)
        row = res.row("examples.kvm.coord_rw", SPEC.paper, "coord_rw", pb.name)
        row["statistic"] += f", {n_steps} step(s)"
        if bias:  # a mutant row passes when the check rejects the broken kernel
            row["method"] = f"coord_rw[mutant:up_bias={bias}]"
            row["passed"] = not res.passed
        rows.append(row)
    return rows


CHECK = Check(
    "examples.kvm.coord_rw",
    "exact",
    SPEC.paper,
    "coord_rw lattice walk on tiny_grid (25 states): kernel-vs-matrix G-test + a biased-proposal mutant",
    check_rows,
    family="examples",
)


# ============================================================================ 4. register, verify, run
MEAN_BOUND = 0.5  # posterior sd: the chain's mean must be this close to the exact posterior mean


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer draws per state (seconds)")
    args = ap.parse_args(argv)

    registry.register(SPEC)
    register_check(CHECK)
    print(f"registered method {SPEC.id!r} and check {CHECK.id!r}")

    t0 = time.perf_counter()
    rep = run_checks([CHECK], quick=args.quick, out_dir=None)
    for r in rep.rows["exact"]:
        print(
            f"  {r['method']:28s} {r['statistic']}: {r['value']:.3g} (threshold {r['threshold']:.2g}) "
            f"{'ok' if r['passed'] else 'FAILED'}"
        )
    print(f"check: {time.perf_counter() - t0:.1f} s")
    if rep.failures():
        return 1

    pb = registry.build_problem("gaussian_location", 0, scale="smoke")
    step, acc = tune_step("coord_rw", pb, 0.4, 1, pilot_iters=300)
    n_iter = 20_000 if args.quick else 200_000
    res = registry.run("coord_rw", pb, n_iter, 2, step=step)

    mean = res.samples[n_iter // 5 :].mean(axis=0)  # 20 % burn-in
    post, sd = pb.meta["post_mean"], pb.meta["post_sd"]  # the closed-form posterior
    print(
        f"run: step {step:.3g} (pilot acceptance {acc:.2f}), acceptance {res.accept_rate:.2f}, "
        f"{res.sample_seconds:.2f} s sampling + {res.compile_seconds:.2f} s compile"
    )
    print(f"  posterior mean, chain: {np.array2string(mean, precision=3)}")
    print(f"  posterior mean, exact: {np.array2string(post, precision=3)}")
    gap = float(np.max(np.abs(mean - post) / sd))
    # a sanity bound, not a test: the Monte Carlo error of the mean is ~0.05 sd at this length
    print(f"  largest difference: {gap:.3f} posterior sd (bound {MEAN_BOUND} sd)")
    if gap > MEAN_BOUND:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
