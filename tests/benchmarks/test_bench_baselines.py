"""pytest-benchmark: per-iteration time of the compiled full-batch loops (compile excluded).

Target: seed 001 §5.1 truncated Gaussian at paper scale (d=20, N=1e5)."""

from __future__ import annotations

import numpy as np
import pytest

from samplers import registry

ITERS = 50


@pytest.fixture(scope="module")
def tg():
    return registry.build_problem("truncated_gaussian", 0)


@pytest.mark.parametrize("method", ["rwm", "mala", "barker"])
def test_full_batch_iteration(benchmark, tg, method):
    benchmark.group = "baseline-full-batch"
    registry.run(method, tg, 2, 0, step=0.01)  # compile / load cache outside the timing
    res = benchmark.pedantic(lambda: registry.run(method, tg, ITERS, 1, step=0.01), rounds=3,
                             iterations=1, warmup_rounds=1)
    benchmark.extra_info["sec_per_iter"] = res.sample_seconds / ITERS
    assert np.all(res.n_evals <= tg.model.X.shape[0])
