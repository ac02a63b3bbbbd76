"""Experiment-side code of the poisson_gibbs family (bench/experiments/poisson_gibbs/, Zhang & De Sa 2019 §4).

Running counts kept in Numba equal naive counts; the MIN-Gibbs Potts cell (added for Fig. 1a) runs
the real kernel with its documented cost; the TGM log-posterior grid cache round-trips.
False-alarm probability of the statistical test: |Z| > 5 -> 5.7e-7.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import samplers  # noqa: F401  (Numba cache dir before numba)
from bench.experiments.poisson_gibbs import common as PGC
from bench.experiments.poisson_gibbs import potts as X
from bench.experiments.poisson_gibbs import truncated_gaussian_mixture as TGM


def test_running_counts_equal_naive_counts():
    """_move / flush_counts (time-in-state accumulation) = counting every visited state."""
    rng = np.random.default_rng(4)
    n, D, T = 5, 4, 300
    x = rng.integers(0, D, n)
    counts = np.zeros((n, D))
    last = np.ones(n, dtype=np.int64)
    naive = np.zeros((n, D))
    out = np.zeros((n, D))
    for t in range(1, T + 1):
        j = int(rng.integers(0, n))
        new = int(rng.integers(0, D)) if rng.random() < 0.5 else int(x[j])
        PGC._move(counts, last, j, int(x[j]), new, t)
        x[j] = new
        naive[np.arange(n), x] += 1
        if t % 37 == 0 or t == T:
            PGC.flush_counts(counts, last, x, t, out)
            np.testing.assert_array_equal(out, naive)
    assert out.sum() == n * T


def _ctx(settings):
    return SimpleNamespace(settings=settings, out_dir=None)


def test_potts_cells_include_min_gibbs():
    s = X.EXPERIMENTS[0].settings["smoke"]
    labels = {c["label"] for c in X.potts_cells(s)}
    assert {"gibbs", "pg_1", "min_1", "mgpmh_1", "dmin_1_1", "dmin_1_1e4"} <= labels


def test_min_gibbs_cell_cost_matches_kernel():
    """min_1 cell: global draws per iteration = (D - 1) Poisson(lambda) estimates (+ one initial);
    Z-test at 5 SE. The refresh-current variant (D estimates) is rejected by the same test."""
    s = X._potts_settings(4, 3000, 10, 1, 5)
    s["methods"] = ["min_1"]
    rows = X.run_potts_cell({"label": "min_1", "rep": 0}, np.random.SeedSequence(3), _ctx(s))
    r = rows[-1]
    assert r["iteration"] == 3000 and np.isfinite(r["error"]) and 0 <= r["error"] <= 1
    D, lam, n = 10, r["lam"], 3000
    total = r["mean_B"] * n
    se = np.sqrt(D * lam * n)  # Var of a sum of Poisson counts (upper bound incl. the first draw)
    z_ok = (total - ((D - 1) * n + 1) * lam) / se
    z_mut = (total - D * n * lam) / se
    assert abs(z_ok) < 5
    assert abs(z_mut) > 5


def test_pg_cell_factors_near_statement1():
    """pg_1 cell on a tiny lattice: mean candidates B within 5 SE of the site average of Lambda_i."""
    from samplers import registry as R
    from samplers.kernels import poisson_gibbs as PG

    s = X._potts_settings(4, 20_000, 10, 1, 5)
    r = X.run_potts_cell({"label": "pg_1", "rep": 0}, np.random.SeedSequence(5), _ctx(s))[-1]
    prob = R.build_problem("potts_20x20", rows=4, cols=4)
    _, _, Lam, _, _ = PG.poisson_gibbs_tables(prob.model, r["lam"], r["L"])
    se = np.sqrt((Lam.mean() + Lam.var()) / 20_000)
    assert abs(r["mean_B"] - Lam.mean()) < 5 * se
    assert abs(r["mean_B"] - (r["lam"] + r["L"])) > 5 * se  # the bound lambda + L is not E[B]


def test_tgm_grid_cache_roundtrip(tmp_path):
    a = TGM.tgm_log_post_grid(300, 50.0, 6.0, 8, 11, tmp_path)
    files = list(tmp_path.glob("_tgm_logpost_*.npy"))
    assert len(files) == 1
    TGM._LP_CACHE.clear()
    b = TGM.tgm_log_post_grid(300, 50.0, 6.0, 8, 11, tmp_path)
    np.testing.assert_array_equal(a, b)
    p = TGM.tgm_true_density(300, 50.0, 6.0, 8, 11, tmp_path)
    assert p.shape == (8, 8) and p.sum() == pytest.approx(1.0)
