"""The exchange experiment (``exact_mh_exchange``, Yuan & Wang 2024 Alg. 4) end to end at its smoke
settings: cells (``ex_cells``) -> records (``ex_run_cell`` through ``bench.cells.run_one``) -> table and
histogram figure (``ex_summarize`` through ``bench.cells.aggregate`` and the real ``Outputs`` writer), and
the table's numbers against the exact posterior computed here by brute-force enumeration (independent of
the target's code).

Thresholds (false alarm <= 1e-4 per test, Bonferroni over the 8 statistical checks: two-sided normal
quantile at 1.25e-5, z = 4.37). Smoke chains: 3,000 iterations, 10 % burn-in, so n = 2,700 draws, against
200,000 i.i.d. exact draws (``m``). Integrated autocorrelation times of the exchange chain on this 4x4
posterior at the smoke step 0.15, measured on 2 chains x 360k draws per auxiliary sampler
(identity ESS / 50 batch means): theta 9.6-10.0 / 10.5-11.8, (theta - mu)^2 6.2-8.0, indicators
1[theta < q] at the 5-95 % quantiles <= 10.4; the checks use TAU = 20 for all three (1.7x the largest
estimate). Then, with sigma, mu4 the exact posterior sd and 4th central moment:

* mean: |mean - exact_mean| <= z sigma sqrt(TAU / n + 1 / m)  (= 0.034 here);
* sd (delta method, Var(s) ~ (mu4 - sigma^4) / (4 sigma^2) x TAU / n):
  |sd - exact_sd| <= z sqrt((mu4 - sigma^4) / (4 sigma^2)) sqrt(TAU / n + 1 / m)  (= 0.023 here);
* KS (sup of the empirical-CDF difference; the chain's n replaced by its effective n / TAU, the usual
  approximation for a geometrically ergodic chain):
  D <= sqrt(-log(alpha / 2) / 2) sqrt(TAU / n + 1 / m)  (= 0.21 here);
* the table's ``exact_mean`` (mean of the 200k reference draws) vs the enumerated one: z sigma / sqrt(m).

Negative controls in this file: the exchange kernel with its auxiliary draws at the current theta instead
of the proposed one (the classic exchange-algorithm bug; its stationary sd is ~1.5x the posterior's) and a
reference posterior built with m - 1 observed configurations (mean 0.356 instead of 0.281) each make the
checks fail. The whole file takes ~10 s (three smoke aggregates of 2 cells each)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import samplers  # noqa: F401  (sets the Numba cache dir)
from bench import cells as C
from bench.experiments import get_experiment
from bench.outputs import Outputs
from samplers import registry
from samplers.kernels import exchange as EX
from samplers.targets import ising_param as IP
from verify.exact_mh_drive import MUT_AUX_AT_CURRENT, repeat_exchange

EXP = "exact_mh_exchange"
ROOT_SEED = 20261122  # config/smoke.yaml
N_CHECKS = 8  # 2 cells x (mean, sd, KS) + 2 reference means
ALPHA = 1e-4 / N_CHECKS
Z = float(stats.norm.isf(ALPHA / 2))
TAU = 20.0
N_REF = 200_000  # ex_run_cell's reference draws


def _run_smoke(root) -> tuple[pd.DataFrame, list[dict], object]:
    """ex_cells -> run_one (ex_run_cell) -> aggregate (ex_summarize) into ``root``; returns the table,
    the records and the Outputs writer."""
    exp = get_experiment(EXP)
    settings = C.experiment_settings(exp, "smoke")
    recs = [
        C.run_one(
            exp,
            p,
            scale="smoke",
            settings=settings,
            root_seed=ROOT_SEED,
            out=root / "cells" / f"{p['cell']}.json",
        )
        for p in C.enumerate_cells(exp, settings)
    ]
    out = Outputs(root / "results", root / "figs", experiment=EXP)
    C.aggregate(exp, settings, recs, out)
    return pd.read_csv(root / "results" / f"{EXP}.csv"), recs, out


@pytest.fixture(scope="module")
def exact() -> dict:
    """Exact posterior moments of the smoke target (4x4, m = 4 configurations at theta 0.25, prior
    U[0, 0.6]) by enumerating all 2^16 spin configurations here: log Z(theta) = logsumexp_x theta S(x),
    posterior density exp(theta S_data - m log Z(theta)) on a 20,001-point grid (Simpson)."""
    pb = registry.build_problem("ising_param", 0, scale="smoke")
    rows, cols, X = pb.model.rows, pb.model.cols, pb.meta["X"]
    n = rows * cols
    idx = np.arange(1 << n)
    spins = 1 - 2 * ((idx[:, None] >> np.arange(n)[None, :]) & 1)
    grid2 = spins.reshape(-1, rows, cols)
    S = (grid2[:, :, 1:] * grid2[:, :, :-1]).sum((1, 2)) + (grid2[:, 1:, :] * grid2[:, :-1, :]).sum((1, 2))
    Xg = np.asarray(X).reshape(-1, rows, cols)
    s_data = float((Xg[:, :, 1:] * Xg[:, :, :-1]).sum() + (Xg[:, 1:, :] * Xg[:, :-1, :]).sum())
    levels, counts = np.unique(S, return_counts=True)
    th = np.linspace(0.0, 0.6, 20_001)
    a = np.log(counts)[None, :] + th[:, None] * levels[None, :]
    logz = a.max(1) + np.log(np.exp(a - a.max(1)[:, None]).sum(1))
    lp = th * s_data - len(Xg) * logz
    w = np.exp(lp - lp.max())
    from scipy.integrate import simpson

    z = simpson(w, x=th)
    mu = simpson(th * w, x=th) / z
    var = simpson((th - mu) ** 2 * w, x=th) / z
    mu4 = simpson((th - mu) ** 4 * w, x=th) / z
    return {"mean": mu, "sd": math.sqrt(var), "mu4": mu4}


def _failures(t: pd.DataFrame, recs: list[dict], ex: dict) -> list[str]:
    """The checks of the module docstring on the smoke table; returns the ones that fail."""
    n = 3_000 - 3_000 // 10
    s, mu4 = ex["sd"], ex["mu4"]
    shrink = math.sqrt(TAU / n + 1 / N_REF)
    tol_mean = Z * s * shrink
    tol_sd = Z * math.sqrt((mu4 - s**4) / (4 * s**2)) * shrink
    ks_crit = math.sqrt(-math.log(ALPHA / 2) / 2) * shrink
    bad = []
    for r in t.itertuples():
        cell = f"{r.target} {r.aux}"
        if abs(r.mean - r.exact_mean) > tol_mean:
            bad.append(f"{cell}: mean {r.mean:.4f} vs exact {r.exact_mean:.4f} (tol {tol_mean:.4f})")
        if abs(r.sd - r.exact_sd) > tol_sd:
            bad.append(f"{cell}: sd {r.sd:.4f} vs exact {r.exact_sd:.4f} (tol {tol_sd:.4f})")
        if r.ks > ks_crit:
            bad.append(f"{cell}: KS {r.ks:.4f} > {ks_crit:.4f}")
        if abs(r.exact_mean - ex["mean"]) > Z * s / math.sqrt(N_REF):
            bad.append(f"{cell}: reference mean {r.exact_mean:.5f} vs enumerated {ex['mean']:.5f}")
    return bad


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    return _run_smoke(tmp_path_factory.mktemp("exchange"))


def test_smoke_exchange_experiment_table_and_figure(smoke, exact) -> None:
    """One table row per (lattice, aux) of the smoke settings with its run counted, acceptance in (0, 1),
    posterior mean / sd / KS within the module docstring's tolerances of the exact posterior, positive ESS/s
    and auxiliary cost (CFTP's above enumeration's), and the histogram figure written as PNG and PDF."""
    t, recs, out = smoke
    assert [r["status"] for r in recs] == ["ok", "ok"], [r["message"] for r in recs]
    assert sorted(zip(t["target"], t["aux"], strict=True)) == [("4x4", "cftp"), ("4x4", "enum")]
    assert list(t["runs"]) == [1, 1]
    assert ((t["accept"] > 0) & (t["accept"] < 1)).all()
    assert (t["ess_s"] > 0).all() and (t["aux_cost_per_iter"] > 0).all()
    cost = t.set_index("aux")["aux_cost_per_iter"]
    assert cost["cftp"] > cost["enum"]
    assert _failures(t, recs, exact) == []
    png = out.figs_dir / "exact_mh_exchange_hist.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert (out.figs_dir / "exact_mh_exchange_hist.pdf").stat().st_size > 0
    assert {m["name"] for m in out.manifest} == {f"{EXP}_cells", EXP, "exact_mh_exchange_hist"}
    # the histogram stored with each row is a density over [lo, hi]
    for rec in recs:
        row = rec["rows"][0]
        assert np.sum(np.asarray(row["hist"]) * np.diff(row["edges"])) == pytest.approx(1.0)


def _exchange_sample_aux_at_current(model, theta, us, top, bot, n_iter, prop, sigma, h, K, rng, thin):
    """Mutant of ``exchange_sample``: the auxiliary configurations drawn at the current theta, not at the
    proposal (not the exchange algorithm: its stationary law is wider than the posterior). Each step is
    verify's mutant step (``repeat_exchange`` with ``MUT_AUX_AT_CURRENT``, one repetition from the current
    state, the chain's Generator advancing across calls); the auxiliary cost is not counted."""
    samples = np.empty((n_iter // thin, 1))
    acc = np.zeros(n_iter, dtype=np.bool_)
    for it in range(n_iter):
        nxt = repeat_exchange(model, theta, prop, sigma, h, K, rng, 1, MUT_AUX_AT_CURRENT)[0]
        acc[it] = nxt[0] != theta[0]
        theta[:] = nxt
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, np.ones(n_iter, dtype=np.int64)


def test_mutant_exchange_kernel_is_caught(tmp_path, monkeypatch, exact) -> None:
    """Negative control: with the auxiliary draws at the current theta the sd check fails in both cells."""
    monkeypatch.setattr(EX, "exchange_sample", _exchange_sample_aux_at_current)
    t, recs, _ = _run_smoke(tmp_path)
    bad = _failures(t, recs, exact)
    assert sum(": sd " in b for b in bad) == 2, bad


def test_mutant_reference_is_caught(tmp_path, monkeypatch, exact) -> None:
    """Negative control: a reference posterior with m - 1 configurations (the chain unchanged) fails the
    chain-vs-reference mean check and the reference-vs-enumeration check in both cells."""
    orig = IP.log_posterior_grid
    monkeypatch.setattr(
        IP, "log_posterior_grid", lambda model, grid: orig(model._replace(m=model.m - 1), grid)
    )
    t, recs, _ = _run_smoke(tmp_path)
    bad = _failures(t, recs, exact)
    assert sum(": mean " in b for b in bad) == 2 and sum("reference mean" in b for b in bad) == 2, bad
