"""MNIST part of the exact_mh experiment (Yuan & Wang 2024 §5.3, App. G.4/G.5, Figs. 2, 10-13): time to
accuracy levels, claim rows, figures, and the run-cell bookkeeping (CPU-corrected time axis).

Deterministic (synthetic accuracy curves, a fake chain result): false-alarm probability 0. Mutants:
a delayed Tuna-SGLD curve and a claim computed on iterations instead of time must flip a held claim.
"""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest

import samplers  # noqa: F401  (sets the Numba cache dir)
from bench.experiments.exact_mh import mnist as X

S = dict(X.MNIST_SETTINGS["paper"])


class _Out:
    def __init__(self) -> None:
        self.tables: dict[str, pd.DataFrame] = {}
        self.figures: list[str] = []

    def table(self, name: str, t: pd.DataFrame, caption: str = "") -> None:
        self.tables[name] = t

    def figure(self, name: str, fig, caption: str = "") -> None:
        import matplotlib.pyplot as plt

        self.figures.append(name)
        plt.close(fig)


def _row(method: str, step: float, hit_iter: int, sec_per_iter: float, n_iter: int, *, final=0.95, cpu=1.0):
    """Accuracy 0.5 until ``hit_iter`` then a linear rise to ``final`` over 1000 iterations."""
    ck = np.arange(100, n_iter + 1, 100)
    acc = np.where(ck < hit_iter, 0.5, np.minimum(final, 0.5 + (final - 0.5) * (ck - hit_iter + 100) / 1000))
    t = ck * sec_per_iter
    base = method.split("_K")[0]
    return {
        "status": "ok",
        "data": "mnist_3v5",
        "method": method,
        "base_method": base,
        "K": int(method.rsplit("K", 1)[1]) if "_K" in method else 0,
        "step": step,
        "accept": 0.5,
        "mean_batch": 1000.0,
        "sec_per_iter": sec_per_iter,
        "cpu_frac": cpu,
        "iters": ck.tolist(),
        "t": t.tolist(),
        "t_cpu": (t * cpu).tolist(),
        "acc": acc.tolist(),
        "final_acc": float(acc[-1]),
        "time_to_acc": float(t[np.flatnonzero(acc >= 0.9)[0]]) if (acc >= 0.9).any() else np.inf,
    }


def _frame(sgld_hit: int = 1000, sgld_cost: float = 2e-4, cpu_sgld: float = 1.0) -> pd.DataFrame:
    rows = [
        _row("tuna_mh", 2e-3, 3000, 1.5e-4, 20_000),
        _row("tuna_sgld_K20", 2e-3, sgld_hit, sgld_cost, 20_000, cpu=cpu_sgld),
        _row("tuna_sgld_K64", 2e-3, 8000, 3e-4, 20_000),
        _row("mala", 2e-3, 500, 5e-3, 5_000),
        _row("rwm", 2e-3, 4000, 3e-3, 5_000),
    ]
    return pd.DataFrame(rows)


def _claims(df: pd.DataFrame) -> pd.DataFrame:
    return X.mnist_claims_table(X.mnist_levels_table(df, S), S).set_index("claim")


def test_first_hit_and_levels():
    r = _row("tuna_mh", 2e-3, 3000, 1e-3, 20_000)
    h = X.mnist_first_hit(r, 0.9)
    # acc at checkpoint c >= 3000: 0.5 + 0.45 (c - 2900) / 1000 >= 0.9  <=>  c >= 3789 -> 3800
    assert (
        h["iters_to"] == 3800 and h["wall_s_to"] == pytest.approx(3.8) and h["cpu_s_to"] == pytest.approx(3.8)
    )
    assert X.mnist_first_hit(r, 0.99)["iters_to"] == np.inf
    lv = X.mnist_levels_table(_frame(), S)
    assert set(lv["level_frac"]) == set(S["acc_levels"])
    assert np.allclose(lv["level_acc"], lv["level_frac"] * 0.95)  # best final accuracy of the data set


def test_claims_held_and_data_mutant_flips_it():
    c = _claims(_frame())
    # Tuna-SGLD K20 reaches 0.9025 at 1800 it x 2e-4 = 0.36 s, TunaMH at 3800 it x 1.5e-4 = 0.57 s
    assert bool(c.loc["tuna_sgld_sooner", "held"]) and bool(c.loc["tuna_sgld_sooner", "held_K20"])
    assert c.loc["tuna_sgld_sooner", "fastest"] == "tuna_sgld_K20"
    # minibatch (TunaMH 0.57 s) vs the fastest full batch (MALA 1300 it x 5e-3 = 6.5 s)
    assert bool(c.loc["minibatch_beats_full", "held"])
    # mutant data: Tuna-SGLD's rise delayed to iteration 6000 -> not sooner
    m = _claims(_frame(sgld_hit=6000))
    assert not bool(m.loc["tuna_sgld_sooner", "held"])
    assert bool(m.loc["minibatch_beats_full", "held"])  # still 6800 it x 2e-4 = 1.36 s < MALA 6.5 s


def test_claim_is_on_time_not_iterations(monkeypatch):
    # Tuna-SGLD reaches the level in fewer iterations (2800 vs 3800) but at 4x the cost per iteration
    df = _frame(sgld_hit=2000, sgld_cost=6e-4)
    c = _claims(df)
    assert not bool(c.loc["tuna_sgld_sooner", "held"])
    # mutant: a first-hit that reports iterations as time -> the claim (wrongly) holds
    real = X.mnist_first_hit

    def by_iters(r, level):
        h = real(r, level)
        return {**h, "cpu_s_to": h["iters_to"], "wall_s_to": h["iters_to"]}

    monkeypatch.setattr(X, "mnist_first_hit", by_iters)
    assert bool(_claims(df).loc["tuna_sgld_sooner", "held"])


def test_claim_uses_cpu_corrected_time():
    # the Tuna-SGLD cell ran at half a core: wall 0.36/0.5 = 0.72 s > TunaMH 0.57 s, CPU-corrected 0.36 s
    df = _frame(sgld_cost=4e-4, cpu_sgld=0.5)
    c = _claims(df)
    assert bool(c.loc["tuna_sgld_sooner", "held"]) and not bool(c.loc["tuna_sgld_sooner", "held_wall"])


def test_summarize_tables_and_figures():
    df = _frame()
    df.loc[len(df)] = {**_row("tuna_mh", 4e-3, 2000, 2e-4, 20_000)}
    out = _Out()
    X.mnist_summarize(df, S, out)
    tt = out.tables["exact_mh_mnist_time_to_acc"]
    # verify/families/exact_mh.py reads these columns (method = base method)
    assert {"data", "step", "method", "time_to_acc"} <= set(tt.columns)
    assert set(tt["method"]) <= set(X.MNIST_METHODS)
    assert {"exact_mh_mnist_time_to_levels", "exact_mh_mnist_claims"} <= set(out.tables)
    assert out.figures == [
        "exact_mh_mnist_3v5_accuracy",
        "exact_mh_mnist_3v5_by_method",
        "exact_mh_mnist_3v5_best_step",
        "exact_mh_mnist_3v5_tuna_sgld_K",
    ]
    # a (data, step) without full-batch methods gets no minibatch_beats_full row
    cl = out.tables["exact_mh_mnist_claims"]
    assert len(cl[(cl["step"] == 4e-3)]) == 0  # no Tuna-SGLD at 4e-3 either -> no row at all
    assert len(cl[(cl["step"] == 2e-3)]) == 2


def test_variant_order():
    v = ["tuna_sgld_K128", "hmc", "tuna_sgld_K20", "tuna_mh", "tuna_sgld_K64", "rwm"]
    assert sorted(v, key=X._mnist_variant_order) == [
        "tuna_mh",
        "tuna_sgld_K20",
        "tuna_sgld_K64",
        "tuna_sgld_K128",
        "rwm",
        "hmc",
    ]


def test_summarize_no_ok_cells():
    out = _Out()
    X.mnist_summarize(pd.DataFrame([{"cell": "c", "status": "error", "message": "boom"}]), S, out)
    assert list(out.tables) == ["exact_mh_mnist_time_to_acc"] and out.figures == []


def test_run_cell_time_axes(monkeypatch):
    n, d = 40, 3
    rng = np.random.default_rng(0)
    data = {
        "X_train": rng.standard_normal((n, d)),
        "y_train": (rng.random(n) < 0.5).astype(float),
        "X_test": np.eye(d),
        "y_test": np.ones(d),
    }
    samples = np.tile(np.array([1.0, 1.0, -1.0]), (500, 1))

    def fake_run(method, problem, n_iter, seed, **hp):
        assert method == "tuna_sgld" and hp["batch"] == 64 and hp["drift"] == "normalized"
        return types.SimpleNamespace(
            samples=samples[:n_iter], accept_rate=0.5, mean_batch=7.0, sample_seconds=2.0, n_iter=n_iter
        )

    monkeypatch.setattr(X.registry, "run", fake_run)
    s = {**X.MNIST_SETTINGS["smoke"], "iters_tuna": 500}
    ctx = types.SimpleNamespace(settings=s, data=lambda name: data)
    params = {"cell": "c", "data": "mnist_3v5", "method": "tuna_sgld", "step": 2e-3, "K": 64}
    (r,) = X.mnist_run_cell(params, np.random.SeedSequence(1), ctx)
    assert r["method"] == "tuna_sgld_K64" and r["K"] == 64
    assert r["iters"] == [100, 200, 300, 400, 500]
    assert np.allclose(r["t"], [0.4, 0.8, 1.2, 1.6, 2.0])
    assert 0 < r["cpu_frac"] <= 1 and np.allclose(r["t_cpu"], np.asarray(r["t"]) * r["cpu_frac"])
    assert r["acc"] == [pytest.approx(2 / 3)] * 5 and r["time_to_acc"] == np.inf


def test_authors_gradient_variants_cells_and_claim():
    """grads = ["exact", "authors"]: the full-batch gradient methods get a "+authors_grad" variant cell
    (the exact cells keep their ids and parameters); the like-for-like claim row
    minibatch_beats_full_authors compares the minibatch methods with RWM and those variants only."""
    cells = X.mnist_cells({**S, "datasets": ["mnist_3v5"], "steps": [2e-3], "sgld_batches": [20]})
    names = {c["cell"] for c in cells}
    assert {
        "mnist_3v5_mala_e0.002",
        "mnist_3v5_mala_authors_grad_e0.002",
        "mnist_3v5_hmc_authors_grad_e0.002",
    } <= names
    assert "mnist_3v5_rwm_authors_grad_e0.002" not in names and "grad" not in next(
        c for c in cells if c["cell"] == "mnist_3v5_mala_e0.002"
    )
    with pytest.raises(ValueError, match="grads"):
        X.mnist_cells({**S, "grads": ["clipped"]})
    df = _frame()
    # exact MALA reaches the level at 1300 it x 5e-3 = 6.5 s; the authors' MALA (drift of length eps^2)
    # only at 4800 it -> the like-for-like claim holds, the exact one too (TunaMH 0.57 s)
    slow = _row("mala", 2e-3, 4000, 5e-3, 5_000)
    df.loc[len(df)] = {**slow, "method": "mala+authors_grad", "grad": "authors"}
    c = _claims(df)
    assert bool(c.loc["minibatch_beats_full_authors", "held"])
    assert (
        "mala+authors_grad" in c.loc["minibatch_beats_full_authors", "measured"]
        or "rwm" in (c.loc["minibatch_beats_full_authors", "measured"])
    )
    # mutant: a fast authors' variant (hit at 100 it x 1e-4 s) -> the like-for-like claim fails,
    # while the exact-gradient claim is unaffected
    fast = _row("mala", 2e-3, 100, 1e-4, 5_000)
    df.loc[len(df) - 1] = {**fast, "method": "mala+authors_grad", "grad": "authors"}
    c = _claims(df)
    assert not bool(c.loc["minibatch_beats_full_authors", "held"])
    assert bool(c.loc["minibatch_beats_full", "held"])
    assert sorted(["hmc+authors_grad", "hmc", "tuna_mh"], key=X._mnist_variant_order) == [
        "tuna_mh",
        "hmc",
        "hmc+authors_grad",
    ]


def test_verify_mnist_claim_rows_read_the_experiments_verdicts(tmp_path, monkeypatch):
    """verify's MNIST claim rows are the experiment's per-(data set, step) verdicts (one implementation):
    held iff held at every setting; a setting where Tuna-SGLD is not sooner makes the Tuna-SGLD claim
    fail and names it, leaving the minibatch-beats-full claim held; no table (or no row of a claim) gives
    'not run', never a verdict."""
    from verify.checks import RESULTS_ENV
    from verify.families import exact_mh as V

    monkeypatch.setenv(RESULTS_ENV, "")  # recorded, so whatever a test sets is undone
    monkeypatch.delenv(RESULTS_ENV)
    monkeypatch.chdir(tmp_path)  # verify reads results/ of the working directory (the workflow's)
    (tmp_path / "results").mkdir()

    def rows(df: pd.DataFrame | None) -> dict:
        p = tmp_path / "results" / "exact_mh_mnist_claims.csv"
        p.unlink(missing_ok=True)
        if df is not None:  # as the workflow writes it (the verdicts as CSV text)
            X.mnist_claims_table(X.mnist_levels_table(df, S), S).to_csv(p, index=False)
        return {r["claim_id"]: r for r in V._mnist_claims()}

    two = pd.concat([_frame(), _frame(sgld_hit=6000).assign(step=4e-3)], ignore_index=True)
    r = rows(two)
    assert r["exact_mh.tuna_sgld_faster"]["holds"] is False
    assert r["exact_mh.tuna_sgld_faster"]["measured"].startswith("1/2 ")
    assert "not at mnist_3v5 eps=0.004" in r["exact_mh.tuna_sgld_faster"]["measured"]
    assert r["exact_mh.mnist.minibatch_beats_full"]["holds"] is True
    assert r["exact_mh.mnist.minibatch_beats_full"]["measured"].startswith("2/2 ")
    assert r["exact_mh.mnist.minibatch_beats_full_authors"]["holds"] is None  # no authors' variants run
    assert rows(_frame())["exact_mh.tuna_sgld_faster"]["holds"] is True
    assert all(x["holds"] is None and x["measured"] == "not run" for x in rows(None).values())
