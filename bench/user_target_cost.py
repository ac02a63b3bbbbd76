"""What a user-defined target costs beside the shipped kind of the same shape (docs/targets.md).

The user model is Bayesian logistic regression written through the public API
(:mod:`samplers.targets.custom`), the shipped one :func:`samplers.targets.tall.logistic_regression`: the same
data, support, prior, tempering and bounds, so the two differ only in how the kernels reach the per-datum
functions (the ``CUSTOM`` branch of the one dispatch vs the ``LOGISTIC`` branch and its fast paths).

``python -m bench.user_target_cost [--N 100000] [--d 10] [--rounds 5]`` prints, per method:

* the cold compile time of each target (``compile_seconds`` of its first run in a fresh process with an
  empty Numba cache, so neither reuses the other's machine code);
* the per-iteration sampling time, compilation excluded: interleaved rounds (shipped, user, shipped, ...),
  median and range;
* the mean data touched per iteration (equal on both sides: same bounds, same seed).

The model is also the reference of ``tests/test_user_target.py``, with two fields that build the mutants
those tests must catch (a scaled likelihood, a wrong-sign gradient).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from typing import NamedTuple

import numpy as np

from samplers.targets import custom, tall


class UserLogistic(NamedTuple):
    scale: float  # 1.0: logistic regression; another value: a deliberately wrong model (mutant)
    grad_sign: float  # 1.0: the right gradient; -1.0: a wrong-sign gradient (mutant)


logistic = custom.define_model(UserLogistic)


@logistic.loglik
def _logistic_ll(m, x, y, theta):
    z = 0.0
    for j in range(theta.shape[0]):
        z += x[j] * theta[j]
    s = -z if y > 0.5 else z
    v = s + math.log1p(math.exp(-s)) if s > 0.0 else math.log1p(math.exp(s))
    return -m.scale * v


@logistic.loglik_grad
def _logistic_grad(m, x, y, theta, scale, out):
    z = 0.0
    for j in range(theta.shape[0]):
        z += x[j] * theta[j]
    h = 1.0 / (1.0 + math.exp(-z)) if z >= 0.0 else math.exp(z) / (1.0 + math.exp(z))
    g = scale * m.grad_sign * m.scale * (y - h)
    for j in range(theta.shape[0]):
        out[j] += g * x[j]
    s = -z if y > 0.5 else z
    v = s + math.log1p(math.exp(-s)) if s > 0.0 else math.log1p(math.exp(s))
    return -m.scale * v


def logistic_pair(rng, N=400, d=3, R=2.0, beta=0.05, scale=1.0, grad_sign=1.0):
    """``(shipped LOGISTIC target, the same model as a CUSTOM target)`` on synthetic data (labels drawn
    from a logistic model with a small coefficient vector)."""
    X = rng.standard_normal((N, d))
    coef = np.resize(np.array([0.8, -0.5, 0.3]), d) / math.sqrt(max(1, d // 3))
    y = (rng.random(N) < 1.0 / (1.0 + np.exp(-X @ coef))).astype(float)
    shipped = tall.logistic_regression(X, y, prior_prec=1.0, beta=beta, R=R)
    xn = np.linalg.norm(X, axis=1)
    M = np.logaddexp(0.0, R * xn)
    kw = {"support": "ball", "R": R, "prior_prec": 1.0, "beta": beta}
    user = custom.custom_target(UserLogistic(scale, grad_sign), X, y, **kw, shift=M, M=M, c=xn)
    return shipped, user


# method -> (hyperparameters, iterations per round); beta = 1e-3 keeps PoissonMH's E[B] = lam + L ~ 1 % of N
METHODS = {
    "mala": ({"step": 0.05}, 400),
    "poisson_mh": ({"step": 0.05, "lam_mult": 1e-3}, 20_000),
    "tuna_mh": ({"step": 0.05, "chi": 1e-4}, 20_000),
}
BETA, R = 1e-3, 1.0


def _run(method: str, t, seed: int, n_iter: int):
    from samplers import registry
    from samplers.problem import Problem

    d = t.X.shape[1]
    pb = Problem("logistic", "continuous", t, d, lambda rng: np.zeros(d))
    return registry.run(method, pb, n_iter, seed, progress=False, **METHODS[method][0])


def _targets(N: int, d: int):
    return logistic_pair(np.random.default_rng(0), N=N, d=d, R=R, beta=BETA)


def _cold(which: str, method: str, N: int, d: int) -> float:
    """compile_seconds of the first run of one target in a fresh process with an empty Numba cache."""
    code = (
        "import sys, json; from bench import user_target_cost as U; "
        f"s, u = U._targets({N}, {d}); t = s if {which!r} == 'shipped' else u; "
        f"r = U._run({method!r}, t, 1, 10); print(json.dumps(r.compile_seconds))"
    )
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        cmd = [sys.executable, "-c", code]
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--N", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    a = ap.parse_args(argv)
    shipped, user = _targets(a.N, a.d)
    load = os.getloadavg()[0]
    print(f"logistic regression N = {a.N}, d = {a.d}, beta = {BETA}, ball R = {R}; load {load:.2f}")
    for m in a.methods:
        cold = {w: _cold(w, m, a.N, a.d) for w in ("shipped", "user")}
        n_iter = METHODS[m][1]
        per = {"shipped": [], "user": []}
        evals = {}
        for k in range(a.rounds + 1):  # round 0 warms the in-process dispatchers (cache loads)
            for w, t in (("shipped", shipped), ("user", user)):
                r = _run(m, t, 7 + k, n_iter)
                if k:
                    per[w].append(1e6 * r.sample_seconds / n_iter)
                    evals[w] = float(np.mean(r.n_evals))
        med = {w: statistics.median(v) for w, v in per.items()}
        for w in ("shipped", "user"):
            print(
                f"{m:11s} {w:7s} compile {cold[w]:6.1f} s   {med[w]:9.2f} us/it "
                f"({min(per[w]):.2f}-{max(per[w]):.2f})   {evals[w]:9.1f} data/it"
            )
        print(f"{m:11s} user / shipped per iteration {med['user'] / med['shipped']:.3f}")
    print(f"load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
