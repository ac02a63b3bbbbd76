"""pytest-benchmark: factor evaluations per second of the discrete minibatch Gibbs kernels vs plain
``gibbs`` (target: poisson_gibbs within 2x of gibbs), Zhang & De Sa 2019 §4.1 Potts model (D = 10, beta =
4.6, Gaussian-kernel couplings, lambda = L^2).

One factor evaluation = one table lookup phi_f(y) at one state y, counted the same way for every
kernel (``n_evals``): gibbs D |A[i]| per iteration; poisson_gibbs B + D |distinct kept|; mgpmh
D |distinct S| (+ 2 |A[i]| when the proposal moves); min_gibbs / doublemin_gibbs one per global
draw. Each round is one fixed-seed chain of the compiled ``*_sample`` loop (compile excluded by a
warm-up round); recorded in ``extra_info``: ``sec_per_iter``, ``mean_evals``,
``factor_evals_per_s``. Standard set: the 8x8 lattice (smoke scale of ``potts_20x20``); the 20x20
paper scale is opt-in (``-m benchmark_large``). Run:
``pytest tests/benchmarks/test_bench_poisson_gibbs.py --benchmark-enable --benchmark-only``.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from samplers import registry
from samplers.kernels import doublemin_gibbs as DM
from samplers.kernels import gibbs as G
from samplers.kernels import mgpmh as MG
from samplers.kernels import min_gibbs as MI
from samplers.kernels import poisson_gibbs as PG
from samplers.methods.poisson_gibbs import global_tables

METHODS = ["gibbs", "poisson_gibbs", "mgpmh", "min_gibbs", "doublemin_gibbs"]
# iterations per round at 8x8 (64 variables, 2016 factors): ~10-50 ms of CPU each
N_SMALL = {
    "gibbs": 20_000,
    "poisson_gibbs": 100_000,
    "mgpmh": 50_000,
    "min_gibbs": 5_000,
    "doublemin_gibbs": 20_000,
}


def _runner(method: str, fg, lam_L2: float = 1.0):
    """A closure running one fixed-seed chain of ``n`` iterations of the compiled loop from the
    all-equal start; returns ``n_evals``."""
    L = PG.local_max_energy(fg)
    lam = lam_L2 * L * L
    x0 = np.zeros(fg.n, dtype=np.int64)
    if method == "gibbs":

        def run(n):
            x, c = G.gibbs_init(fg, x0)
            return G.gibbs_sample(fg, x, c, n, G.RANDOM_SCAN, np.random.default_rng(1), n)[2]
    elif method == "poisson_gibbs":
        tabs = PG.poisson_gibbs_tables(fg, lam, L)

        def run(n):
            st = PG.poisson_gibbs_init(fg, x0, *tabs)
            return PG.poisson_gibbs_sample(fg, *st, n, 0, np.random.default_rng(1), n)[2]
    elif method in ("mgpmh", "doublemin_gibbs"):
        prob, alias, Msum = PG.build_local_tables(fg, 1.0)
        Lam, arate = lam * Msum / L, lam * fg.M / L
        bufsize = PG.candidate_buffer_for(float(Lam.max())).shape[0]
        if method == "mgpmh":

            def run(n):
                st = MG.mgpmh_init(fg, x0, prob, alias, Lam, arate, bufsize)
                return MG.mgpmh_sample(fg, *st, n, 0, np.random.default_rng(1), n)[2]
        else:
            gprob, galias, grate, _ = global_tables(fg, lam)

            def run(n):
                st = DM.doublemin_gibbs_init(fg, x0, prob, alias, Lam, arate, bufsize, gprob, galias, grate)
                return DM.doublemin_gibbs_sample(fg, *st, n, lam, 0, np.random.default_rng(1), n)[2]
    elif method == "min_gibbs":
        gprob, galias, grate, _ = global_tables(fg, lam)

        def run(n):
            st = MI.min_gibbs_init(fg, x0, gprob, galias, grate)
            return MI.min_gibbs_sample(fg, *st, n, lam, 0, np.random.default_rng(1), n)[2]
    else:  # pragma: no cover
        raise ValueError(method)
    return run


def _bench(benchmark, method: str, fg, n: int) -> None:
    run = _runner(method, fg)
    run(2)  # compile / load the cache outside the timing
    cpu, evals = [], []

    def one_round():
        t = time.process_time()
        nev = run(n)
        cpu.append(time.process_time() - t)
        evals.append(float(nev.mean()))

    benchmark.pedantic(one_round, rounds=5, iterations=1, warmup_rounds=1)
    best = min(cpu)
    benchmark.extra_info.update(
        {
            "cpu_per_iter": best / n,
            "mean_evals": evals[-1],
            "factor_evals_per_s": evals[-1] * n / best,
        }
    )
    assert evals[-1] > 0


@pytest.fixture(scope="module")
def potts_small():
    return registry.build_problem("potts_20x20", 0, rows=8, cols=8).model


@pytest.fixture(scope="module")
def potts_large():
    return registry.build_problem("potts_20x20", 0).model


@pytest.mark.benchmark(group="poisson_gibbs-factor-evals")
@pytest.mark.parametrize("method", METHODS)
def test_factor_evals_potts_8x8(benchmark, potts_small, method):
    _bench(benchmark, method, potts_small, N_SMALL[method])


@pytest.mark.benchmark_large
@pytest.mark.benchmark(group="poisson_gibbs-factor-evals-20x20")
@pytest.mark.parametrize("method", METHODS)
def test_factor_evals_potts_20x20(benchmark, potts_large, method):
    _bench(benchmark, method, potts_large, N_SMALL[method] // 10)
