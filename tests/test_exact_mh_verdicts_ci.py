"""Bootstrap intervals of the exact-minibatch claim verdicts (bench/experiments/exact_mh/verdicts.py
``ratio_intervals`` / ``ks_interval``) and the claims rows that carry them (verify/families/exact_mh.py).

Deterministic: fixed data seeds and the fixed bootstrap seed, so no false alarms. Known answers: (1) a
per-run machine factor shared by every method of a run cancels in every ratio, so resampling runs gives
the point value exactly (a zero-width interval) while resampling cells independently per method does not
(mutant); (2) with one coordinate and constant full-batch rows the ratio is the mean of the minibatch
row's runs, whose bootstrap percentile interval is mean +- 1.96 SE within 0.1 SE; swapping the ratio
(best full batch / worst minibatch: mutant) misses both.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bench.experiments.exact_mh import common as X
from bench.experiments.exact_mh import verdicts as V

BASE = {  # median ESS/s of each method in a run with machine factor 1 (every claim holds)
    "rwm": 1.0,
    "mala": 2.0,
    "barker": 1.5,
    "mala+recompute": 1.0,
    "poisson_mh": 2.6,
    "poisson_barker": 6.0,
    "poisson_mala": 8.0,
}
RATIO = {  # the ratios of BASE
    "top_two": 6.0 / 2.6,
    "minibatch_beats_full": 2.6 / 2.0,
    "minibatch_beats_full_authors": 2.6 / 1.0,
}


def _cells(meds_by_run: dict[str, np.ndarray], d: int = 3, rate: float = 0.4) -> pd.DataFrame:
    """One cell per (method, run) whose per-coordinate ESS/s are (0.5, 1, 2) x the run's median."""
    shape = np.array([0.5, 1.0, 2.0])[:d]
    return pd.DataFrame(
        [
            {"method": m, "target_rate": rate, "run": r, "ess_s": list(v * shape), "ks_max": np.nan}
            for m, vals in meds_by_run.items()
            for r, v in enumerate(vals)
        ]
    )


def _shared_factor_cells(n_runs: int = 40) -> pd.DataFrame:
    c = np.random.default_rng(7).lognormal(0.0, 0.6, n_runs)  # machine speed of each run
    return _cells({m: b * c for m, b in BASE.items()})


def _known_answer_failures(intervals) -> list[str]:
    """What the interval implementation ``intervals(df) -> table`` gets wrong on the two known answers."""
    bad = []
    t = intervals(_shared_factor_cells()).set_index(["claim", "rate"])
    for claim, want in RATIO.items():
        for rate in ("0.4", V.EVERY):
            r = t.loc[(claim, rate)]
            if abs(r["value"] / want - 1) > 1e-12:
                bad.append(f"{claim} {rate}: value {r['value']} != {want}")
            if max(abs(r["ci_low"] / want - 1), abs(r["ci_high"] / want - 1)) > 1e-9:
                bad.append(
                    f"{claim} {rate}: interval [{r['ci_low']}, {r['ci_high']}] is not the point {want}"
                )
            if r["runs_held"] != "40/40":
                bad.append(f"{claim} {rate}: runs_held {r['runs_held']}")
    # one coordinate, full batch constant at 1, PoissonMH varies around 1.1: ratio = the run mean
    n = 200
    a = 1.1 + 0.2 * np.random.default_rng(11).standard_normal(n)
    meds = {"rwm": np.full(n, 0.5), "mala": np.full(n, 1.0), "poisson_mh": a}
    meds |= {"poisson_barker": np.full(n, 5.0), "poisson_mala": np.full(n, 6.0)}
    t = intervals(_cells(meds, d=1)).set_index(["claim", "rate"])
    r = t.loc[("minibatch_beats_full", "0.4")]
    se = a.std(ddof=0) / np.sqrt(n)  # the bootstrap SE of a mean
    if abs(r["value"] - a.mean()) > 1e-12:
        bad.append(f"mean: value {r['value']} != {a.mean()}")
    for end, want in (("ci_low", a.mean() - 1.96 * se), ("ci_high", a.mean() + 1.96 * se)):
        if abs(r[end] - want) > 0.1 * se:
            bad.append(f"mean: {end} {r[end]:.5f} != {want:.5f} +- {0.1 * se:.5f}")
    if r["runs_held"] != f"{int((a > 1).sum())}/{n}":
        bad.append(f"mean: runs_held {r['runs_held']} != {(a > 1).sum()}/{n}")
    return bad


def test_interval_known_answers():
    """Shared run factors cancel exactly (zero-width interval at the ratio, every run holds); the run
    mean's percentile interval is mean +- 1.96 SE; single-run verdicts count the runs above 1."""
    assert _known_answer_failures(V.ratio_intervals) == []
    t = V.ratio_intervals(_shared_factor_cells())
    assert (t["n_boot"] == V.BOOT_N).all() and (t["boot_valid"] == V.BOOT_N).all()
    assert (t["seed"] == V.BOOT_SEED).all() and (t["level"] == V.CI_LEVEL).all()
    # the authors_both claim has no +dense rows here: no row, not a verdict on other rows
    assert "minibatch_beats_full_authors_both" not in set(t["claim"])


def test_interval_mutants_are_caught(monkeypatch):
    """Resampling cells (each method's runs on their own) instead of runs, and the swapped ratio (best
    full batch / worst minibatch), both fail the known answers."""
    real = V.weighted_medians

    def per_cell(blocks, w):  # every method gets its own resample: the runs' pairing is lost
        rng = np.random.default_rng(3)
        out = {}
        for m, blk in blocks.items():
            cols = rng.integers(0, w.shape[1], w.shape[1])
            out |= real({m: blk}, np.vstack([w[:1], w[1:][:, cols]]))
        return out

    with monkeypatch.context() as mp:
        mp.setattr(V, "weighted_medians", per_cell)
        bad = _known_answer_failures(V.ratio_intervals)
    assert any("is not the point" in b for b in bad), bad

    def swapped(meds, timing="ours"):
        mini, full = V.sides(meds, timing)
        if not mini or not full:
            return float("nan")
        return np.max([meds[m] for m in full], axis=0) / np.min([meds[m] for m in mini], axis=0)

    with monkeypatch.context() as mp:
        mp.setattr(V, "beat_ratio", swapped)
        bad = _known_answer_failures(V.ratio_intervals)
    assert any("value" in b for b in bad), bad


def test_point_value_is_the_verdicts_ratio_from_the_ess_table():
    """With weights 1 the statistic is the ESS table's (X._ess_table: per-coordinate mean over each method's
    own runs, median over coordinates), also when a method lacks runs; runs without a compared method are
    undecided, not counted."""
    rng = np.random.default_rng(5)
    meds = {m: b * rng.lognormal(0, 0.3, 12) for m, b in BASE.items()}
    df = _cells(meds)
    df = df[~((df["method"] == "mala") & (df["run"] >= 9))]  # MALA has runs 0-8 only
    t = V.ratio_intervals(df).set_index(["claim", "rate"])
    e = X._ess_table(df.assign(accept=0.4, step=0.1, mean_batch=1.0, sec_per_iter=1e-3), {})
    table_meds = dict(zip(e["method"], e["ess_s_med"], strict=True))
    for claim in RATIO:
        assert t.loc[(claim, "0.4"), "value"] == pytest.approx(V.claim_ratio(table_meds, claim), rel=1e-12)
    assert t.loc[("top_two", "0.4"), "runs_decided"] == 9 and t.loc[("top_two", "0.4"), "runs"] == 12
    assert t.loc[("minibatch_beats_full_authors", "0.4"), "runs_decided"] == 12  # MALA not compared
    top, top_ok, txt, ok = V.top_two_and_beat(table_meds)
    assert V.ratio_text(txt) == f"x{t.loc[('minibatch_beats_full', '0.4'), 'value']:.2f}"


def test_every_rate_row_is_the_minimum_over_rates_and_few_runs_give_no_interval():
    a = _shared_factor_cells(6)
    b = a.assign(
        target_rate=0.55,
        ess_s=[
            list(np.asarray(v) * (1.0 if m != "poisson_mh" else 0.5))
            for m, v in zip(a["method"], a["ess_s"], strict=True)
        ],
    )
    t = V.ratio_intervals(pd.concat([a, b])).set_index(["claim", "rate"])
    want = RATIO["minibatch_beats_full"] * 0.5
    assert t.loc[("minibatch_beats_full", "0.55"), "value"] == pytest.approx(want)
    assert t.loc[("minibatch_beats_full", V.EVERY), "value"] == pytest.approx(want)
    assert not bool(t.loc[("minibatch_beats_full", V.EVERY), "held"])  # x0.65 at 0.55
    few = V.ratio_intervals(_shared_factor_cells(V.MIN_BOOT_RUNS - 1))
    assert (few["n_boot"] == 0).all() and few["ci_low"].isna().all() and few["runs_held"].eq("4/4").all()


def test_ks_interval_known_answer():
    """SGLD's max KS 2.5x the Poisson methods' in every run (shared factor): the interval is the point."""
    c = np.random.default_rng(9).uniform(0.5, 1.5, 30)
    rows = [{"method": "sgld", "target_rate": np.nan, "run": r, "ks_max": 0.25 * c[r]} for r in range(30)]
    rows += [
        {"method": m, "target_rate": rate, "run": r, "ks_max": k * c[r]}
        for m, k in (("poisson_mh", 0.1), ("poisson_mala", 0.08), ("poisson_mh+dense", 0.5))
        for rate in (0.25, 0.4)
        for r in range(30)
    ]
    t = V.ks_interval(pd.DataFrame(rows)).iloc[0]
    assert (
        t["value"] == pytest.approx(2.5)
        and t["ci_low"] == pytest.approx(2.5)
        and t["ci_high"] == pytest.approx(2.5)
    )
    assert t["threshold"] == V.KS_FACTOR and t["runs_held"] == "30/30" and t["held"]


def test_verdict_text():
    assert V.verdict_text(True, 1.3, 1.24, 1.36, "96/100") == "holds (x1.30 [1.24, 1.36], 96/100 runs)"
    assert V.verdict_text(False, 0.8, 0.75, 0.85, "3/100").startswith("does not hold (x0.80 [0.75, 0.85]")
    tie = V.verdict_text(False, 0.99, 0.93, 1.06, "4/10")
    assert (
        tie == "a tie within the interval: does not hold at the point value (x0.99 [0.93, 1.06], 4/10 runs)"
    )
    assert V.verdict_text(True, 2.7, 2.5, 2.9, "80/100", threshold=2.0) == (
        "holds (x2.70 [2.50, 2.90] vs >= x2, 80/100 runs)"
    )
    assert V.verdict_text(None) == "not run"
    assert V.verdict_text(True, runs_held="8/8", unit="settings") == "holds (8/8 settings)"


def test_claims_rows_carry_the_interval(tmp_path, monkeypatch):
    """verify's TG and RLR rows: value = the verdict's ratio, the interval and runs_held from the
    experiment's interval table (written by its summarize from the cells), the verdict text; a stale
    interval table (other cells) gives no interval; MNIST rows count settings; not-run rows say so."""
    from bench.experiments.exact_mh import robust_regression as RLRE
    from bench.experiments.exact_mh import truncated_gaussian as TGE
    from verify.families import exact_mh as VF

    class Out:
        def table(self, name, t, caption=""):
            t.to_csv(tmp_path / f"{name}.csv", index=False)

        def figure(self, name, fig, caption=""):
            import matplotlib.pyplot as plt

            plt.close(fig)

    cells = _shared_factor_cells(10)
    extra = {"status": "ok", "accept": 0.4, "step": 0.1, "mean_batch": 1.0, "sec_per_iter": 1e-3}
    extra |= {"ks_min": 0.1, "ks_med": 0.1, "mse_t": [[1.0]], "mse_mean": [[1.0]], "mse_var": [[1.0]]}
    cells = cells.assign(**{k: [v] * len(cells) if isinstance(v, list) else v for k, v in extra.items()})
    cells["ks_max"] = 0.1
    monkeypatch.setenv("MCMC_BENCH_RESULTS", str(tmp_path))
    RLRE.rlr_summarize(cells.assign(variant="rlr_10d_n1e5"), {"variants": ["rlr_10d_n1e5"]}, Out())
    TGE.tg_summarize(cells, {}, Out())
    rows = {r["claim_id"]: r for r in VF._claims(quick=True)}
    for cid in (
        "exact_mh.rlr_10d_n1e5.minibatch_beats_full.r0.4",
        "exact_mh.tg.minibatch_beats_full.r0.4",
        "exact_mh.minibatch_beats_full",
    ):
        r = rows[cid]
        assert r["holds"] is True and r["value"] == pytest.approx(RATIO["minibatch_beats_full"])
        assert r["ci_low"] == pytest.approx(r["value"]) and r["ci_high"] == pytest.approx(r["value"])
        assert r["runs_held"] == "10/10" and r["verdict"] == "holds (x1.30 [1.30, 1.30], 10/10 runs)", r
    assert rows["exact_mh.tg_top_two"]["value"] == pytest.approx(RATIO["top_two"])
    nr = rows["exact_mh.tg.minibatch_beats_full_authors_both.r0.4"]
    assert nr["holds"] is None and nr["verdict"].startswith("not run (no PoissonMH (authors' counts)")
    r = rows["exact_mh.rlr_50d.top_two"]
    assert r["verdict"] == "not run (no results/exact_mh_rlr_50d_ess.csv)" and r["paper"].endswith("Table 7")
    # a stale interval table: the verdict stands, without an interval
    ci = pd.read_csv(tmp_path / "exact_mh_tg_claims_ci.csv")
    ci.assign(value=ci["value"] * 1.01).to_csv(tmp_path / "exact_mh_tg_claims_ci.csv", index=False)
    r = {r["claim_id"]: r for r in VF._claims(quick=True)}["exact_mh.tg.minibatch_beats_full.r0.4"]
    assert r["ci_low"] is None and r["holds"] is True and "from other cells" in r["verdict"]
    pd.DataFrame(
        {
            "claim": "tuna_sgld_sooner",
            "held": [True] * 7 + [False],
            "level_frac": 0.95,
            "data": "mnist_3v5",
            "step": np.arange(8) * 1e-3,
        }
    ).to_csv(tmp_path / "exact_mh_mnist_claims.csv", index=False)
    r = {r["claim_id"]: r for r in VF._claims(quick=True)}["exact_mh.tuna_sgld_faster"]
    assert r["runs_held"] == "7/8 settings" and "value" not in r and r["holds"] is False
    assert r["verdict"] == "does not hold (7/8 settings, one chain per setting, no bootstrap interval)"
