"""Per-iteration time of each exact-minibatch kernel vs its full-batch twin on the Yuan & Wang 2024
truncated Gaussian (d = 20, N = 1e5, beta = 1e-5, lambda = 5e-4 L^2). Target (docs/performance.md §4):
speed-up over the twin >= 0.6 N / E[B]. Run with
``pytest tests/benchmarks --benchmark-enable --benchmark-only``."""

from __future__ import annotations

import numpy as np
import pytest

from samplers import registry

PAIRS = [
    ("poisson_mh", "rwm", 0.2),
    ("poisson_mala", "mala", 0.315 * np.sqrt(2)),
    ("poisson_barker", "barker", 0.5),
    ("tuna_mh", "rwm", 0.05),
    ("tuna_sgld", "mala", 0.05),
]


@pytest.fixture(scope="module")
def tg():
    return registry.build_problem("truncated_gaussian", 0)


def _hyper(m):
    if m.startswith("poisson"):
        return {"lam_mult": 5e-4}
    if m.startswith("tuna"):
        return {"chi": 1e-2}
    return {}


@pytest.mark.parametrize("method,twin,step", PAIRS)
def test_minibatch_iteration(benchmark, tg, method, twin, step):
    x0 = tg.meta["untruncated_mean"].copy()
    res = benchmark.pedantic(
        lambda: registry.run(method, tg, 500, 1, step=step, x0=x0, **_hyper(method)), rounds=3, iterations=1
    )
    benchmark.extra_info["mean_batch"] = res.mean_batch
    benchmark.extra_info["sec_per_iter"] = res.sample_seconds / res.n_iter


@pytest.mark.parametrize("twin", ["rwm", "mala", "barker"])
def test_full_batch_iteration(benchmark, tg, twin):
    x0 = tg.meta["untruncated_mean"].copy()
    res = benchmark.pedantic(lambda: registry.run(twin, tg, 10, 1, step=0.2, x0=x0), rounds=3, iterations=1)
    benchmark.extra_info["sec_per_iter"] = res.sample_seconds / res.n_iter
