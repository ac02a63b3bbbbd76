"""bench/experiments/exact_mh/report.py on synthetic cell records: mean / SE over runs, the paper column,
and claim verdicts that flip when the numbers are perturbed (the mutant). Deterministic (no sampling)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import samplers  # noqa: F401  (sets the Numba cache dir)
from bench import metrics as MT
from bench.experiments.exact_mh import common as EC
from bench.experiments.exact_mh import paper_values as PV
from bench.experiments.exact_mh import report as R
from bench.experiments.exact_mh import verdicts as V

# median ESS/s per (method) at every rate in run 0; run 1 = run 0 + 2 (so the SE of the median is 1)
BASE = {
    "poisson_mala": 80.0,
    "poisson_barker": 70.0,
    "poisson_mh": 40.0,
    "mala": 30.0,
    "barker": 25.0,
    "rwm": 5.0,
}


def _write(d: Path, exp: str, cell: str, row: dict) -> None:
    rec = {
        "experiment": exp,
        "cell": cell,
        "config_hash": "0" * 12,
        "seed": "s",
        "wall_seconds": 1.0,
        "status": "ok",
        "message": "",
        "scale": "paper",
        "params": {"cell": cell},
        "rows": [{**row, "experiment": exp, "cell": cell, "status": "ok"}],
    }
    (d / f"{cell}.json").write_text(json.dumps(rec))


def _ess_row(
    m: str, rate: float, run: int, med: float, mean_batch: float, sec: float, identity: float
) -> dict:
    """A cell row with min / median / max ESS/s med -1 / +0 / +1 (+2 per run) and the identity-ESS
    row scaled by ``identity``."""
    v = [med - 1.0 + 2 * run, med + 2 * run, med + 1.0 + 2 * run]
    return {
        "method": m,
        "target_rate": rate,
        "run": run,
        "step": 0.1,
        "accept": rate,
        "mean_batch": mean_batch,
        "sec_per_iter": sec,
        "ess_s": v,
        "ess_s_identity": [x * identity for x in v],
    }


def _tg_records(root: Path, meds: dict[str, float], sgld_ks: float = 0.2, runs=(0, 1)) -> Path:
    d = root / "cells" / "exact_mh_tg"
    d.mkdir(parents=True)
    for run in runs:
        for m, med in meds.items():
            for rate in EC.RATES:
                full = not m.startswith("poisson")
                _write(
                    d,
                    "exact_mh_tg",
                    f"{m}_r{rate:g}_run{run}",
                    {
                        **_ess_row(
                            m, rate, run, med, 100_000.0 if full else 6_000.0, 1e-3 if full else 2e-4, 0.5
                        ),
                        "ks_min": 0.01,
                        "ks_med": 0.02,
                        "ks_max": 0.05 + 0.01 * run,
                    },
                )
        _write(
            d,
            "exact_mh_tg",
            f"sgld_rna_run{run}",
            {
                "method": "sgld",
                "target_rate": float("nan"),
                "run": run,
                "step": 0.01,
                "accept": 1.0,
                "mean_batch": 512.0,
                "sec_per_iter": 1e-5,
                "ess_s": [1.0, 1.0, 1.0],
                "ess_s_identity": [1.0, 1.0, 1.0],
                "ks_min": 0.05,
                "ks_med": 0.1,
                "ks_max": sgld_ks,
            },
        )
    return root


def _held(claims: list[dict], text: str, metric: str = "authors") -> list[bool]:
    return [c["held"] for c in claims if text in c["claim"] and c["metric"] == metric]


def test_mean_se_and_paper_column(tmp_path: Path) -> None:
    root = _tg_records(tmp_path, BASE)
    df, bad = R.load_cells(root, "exact_mh_tg")
    assert bad == [] and len(df) == 2 * (6 * 3 + 1)
    t = R.ess_summary(df[df["method"] != "sgld"], "ess_s", PV.P_TG)
    r = t[(t["method"] == "poisson_mala") & (t["target_rate"] == 0.4)].iloc[0]
    assert r["runs"] == 2
    assert r["med"] == pytest.approx((81.0, 1.0))  # medians 80 and 82: mean 81, SE sd/sqrt(2) = 1
    assert r["min"] == pytest.approx((80.0, 1.0))
    assert r["pc"] == pytest.approx((80.0, 81.0, 82.0))  # paper convention: mean vector, then min/med/max
    assert r["paper_value"] == PV.P_TG["poisson_mala"][1]
    assert r["ratio"] == pytest.approx(81.0 / 1.54)
    assert V.mean_se([3.0])[0] == 3.0 and math.isnan(V.mean_se([3.0])[1])
    assert V.mean_se([1.0, 2.0, 6.0]) == pytest.approx((3.0, np.std([1, 2, 6], ddof=1) / math.sqrt(3)))
    text, claims = R.build_report(root)
    assert "81 ± 1" in text and PV.P_TG["poisson_mala"][1] in text and PV.P_KS["sgld"][0] in text


def test_per_run_entries_are_labelled_by_run_id(tmp_path: Path) -> None:
    """Records of runs 40-41 only (a later sitting's slice): every claim's per-run column, the ESS
    claims as the KS and speed-up ones, names runs 40 and 41, not positions 0 and 1."""
    text, claims = R.build_report(_tg_records(tmp_path, BASE, runs=(40, 41)))
    tables = {c["table"] for c in claims}
    assert {"TG Table 3", "TG Table 4", "TG"} <= tables
    for c in claims:
        assert re.findall(r"run(\d+):", c["per_run"]) == ["40", "41"], c
    assert "run0:" not in text and "run1:" not in text


def test_claims_hold_then_flip_under_perturbation(tmp_path: Path) -> None:
    _, claims = R.build_report(_tg_records(tmp_path / "a", BASE, sgld_ks=0.2))
    assert _held(claims, "top two") == [True] * 3
    assert _held(claims, "beats every") == [True] * 3
    assert _held(claims, "top two", "geyer") == [True] * 3
    assert _held(claims, "SGLD", "KS") == [True]  # 0.2 vs Poisson max 0.055 (mean over runs)
    sp = [c for c in claims if "speedup" in c["claim"]]
    # speedup 5 of N/E[B] = 1e5/6000 = 16.7 -> 0.30 < 0.6
    assert len(sp) == 9 and not any(c["held"] for c in sp) and "0.300" in sp[0]["measured"]
    assert all(c["runs_held"] == "2/2" for c in claims if "top two" in c["claim"])
    # mutant: full-batch MALA faster than every Poisson method, SGLD KS close to the Poisson methods'
    bad = {**BASE, "mala": 90.0}
    _, claims = R.build_report(_tg_records(tmp_path / "b", bad, sgld_ks=0.08))
    assert _held(claims, "top two") == [False] * 3
    assert _held(claims, "beats every") == [False] * 3
    assert _held(claims, "SGLD", "KS") == [False]
    assert all(c["runs_held"] == "0/2" for c in claims if "top two" in c["claim"])


def test_speedup_claim_holds_when_fast_enough(tmp_path: Path) -> None:
    root = _tg_records(tmp_path, BASE)
    for f in (root / "cells" / "exact_mh_tg").glob("poisson_*.json"):
        rec = json.loads(f.read_text())
        rec["rows"][0]["sec_per_iter"] = 1e-4  # speedup 10 of 16.7 = 0.6 -> held
        f.write_text(json.dumps(rec))
    _, claims = R.build_report(root)
    assert all(c["held"] for c in claims if "speedup" in c["claim"])


def test_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        R.build_report(tmp_path)
    with pytest.raises(ValueError):
        V.parse_paper("(1,2)")


def test_authors_recompute_claim_separate_from_cached(tmp_path: Path) -> None:
    """+recompute rows (the authors' uncached full batch) get their own claim, are not counted as cached
    full-batch rows, never enter the top two; a faster recompute row flips the claim (mutant)."""
    meds = {**BASE, "mala": 50.0, "mala+recompute": 25.0, "rwm+recompute": 2.5, "barker+recompute": 12.0}
    _, claims = R.build_report(_tg_records(tmp_path / "a", meds))
    assert _held(claims, "every exact minibatch method beats every full-batch") == [False] * 3  # MALA 51
    assert _held(claims, "timed as the authors'") == [True] * 3  # PoissonMH 41 > MALA recompute 26
    assert _held(claims, "top two") == [True] * 3
    assert all(c["runs_held"] == "2/2" for c in claims if "timed as the authors'" in c["claim"])
    _, claims = R.build_report(_tg_records(tmp_path / "b", {**meds, "mala+recompute": 45.0}))
    assert _held(claims, "timed as the authors'") == [False] * 3
    assert V._label("hmc10+recompute") == "HMC-10 (authors' recompute)"
    assert not V._is_full("hmc10+recompute") and V._is_full("hmc10")


# RLR: median ESS/s per method (cached rows, hmc5 = the paper's HMC column of Tables 6 / 7, hmc10 none)
RLR_BASE = {**BASE, "hmc5": 3.0, "hmc10": 10.0, "mala+recompute": 15.0, "hmc5+recompute": 2.0}


def _rlr_records(root: Path, meds: dict[str, float], variants=("rlr_10d_n2e5", "rlr_50d")) -> Path:
    d = root / "cells" / "exact_mh_rlr"
    d.mkdir(parents=True)
    for v in variants:
        for run in (0, 1):
            for m, med in meds.items():
                for rate in EC.RATES:
                    full = not m.startswith("poisson")
                    row = _ess_row(
                        m, rate, run, med, 200_000.0 if full else 1_300.0, 5e-3 if full else 5e-4, 1.0
                    )
                    _write(
                        d,
                        "exact_mh_rlr",
                        f"{v}_{m.replace('+', '_')}_r{rate:g}_run{run}",
                        {"variant": v, **row},
                    )
    return root


def test_rlr_tables_6_and_7(tmp_path: Path) -> None:
    """Tables 6 / 7 variants: one section each, the paper's HMC value only on the HMC-5 row, no 'Table 2'
    label outside d = 10 N = 1e5, claims per variant; a full-batch row faster than PoissonMH flips the
    minibatch-beats-full claims of that variant only (mutant)."""
    text, claims = R.build_report(_rlr_records(tmp_path / "a", RLR_BASE))
    for v, tab in (("rlr_10d_n2e5", "Table 6"), ("rlr_50d", "Table 7")):
        assert (
            f"## Robust regression {v} (Yuan & Wang 2024, §5.2, {tab}): 60 cells ok" in text
        )  # 10 rows x 3 rates x 2 runs
        sec = text.split(f"## Robust regression {v}")[1].split("\n## ")[0]
        hmc5 = next(ln for ln in sec.splitlines() if ln.startswith("| HMC-5 | 0.4 |"))
        hmc10 = next(ln for ln in sec.splitlines() if ln.startswith("| HMC-10 | 0.4 |"))
        assert PV.P_RLR[v]["hmc"][1] in hmc5 and PV.P_RLR[v]["hmc"][1] not in hmc10
        mine = [c for c in claims if c["table"] == f"RLR {v} ({tab})" and c["metric"] == "authors"]
        assert [c["held"] for c in mine] == [True] * 9  # 3 claims x 3 rates
    assert "Table 2 counterpart" not in text
    root = _rlr_records(tmp_path / "b", {**RLR_BASE, "hmc10": 45.0, "mala+recompute": 45.0}, ("rlr_50d",))
    text, claims = R.build_report(root)
    assert "rlr_10d_n2e5" not in text
    assert _held(claims, "every exact minibatch method beats every full-batch") == [False] * 3
    assert _held(claims, "timed as the authors'") == [False] * 3
    assert _held(claims, "top two") == [True] * 3


def _cells(spec: dict[str, dict[int, float]]) -> pd.DataFrame:
    """One rate; ``spec[method][run]`` = the run's ESS/s on all 3 coordinates."""

    rows = [
        {
            "method": m,
            "target_rate": 0.4,
            "run": k,
            "accept": 0.4,
            "step": 0.1,
            "mean_batch": 1.0,
            "sec_per_iter": 1e-3,
            "ess_s": [v, v, v],
        }
        for m, runs in spec.items()
        for k, v in runs.items()
    ]
    return pd.DataFrame(rows)


def test_paired_claims_compare_common_runs_only() -> None:
    """Records merged from several runs of the workflow: PoissonMH has runs 0-7, HMC-10 (and the recompute
    row) only runs 0-1. Over all runs PoissonMH's mean (77.5) beats HMC-10 (20); on the two runs both have
    it loses (10 vs 20), so the claim must not hold (an unpaired mean would let it hold). The mirror case
    (PoissonMH strong in runs 0-1 only) must hold."""
    weak_first = {k: (10.0 if k < 2 else 100.0) for k in range(8)}
    strong_first = {k: (100.0 if k < 2 else 10.0) for k in range(8)}
    common = {
        "poisson_mala": dict.fromkeys(range(8), 500.0),
        "poisson_barker": dict.fromkeys(range(8), 400.0),
    }
    for pm, held in ((weak_first, False), (strong_first, True)):
        df = _cells(
            {**common, "poisson_mh": pm, "hmc10": {0: 20.0, 1: 20.0}, "rwm+recompute": {0: 20.0, 1: 20.0}}
        )
        top, txt, ok = V.paired_claims(df, "ess_s")
        assert top is True and ok is held
        assert "on their common runs 0-1" in txt and "HMC-10" in txt
        _, txt_a, ok_a = V.paired_claims(df, "ess_s", "authors")
        assert ok_a is held and "recompute" in txt_a
    # top two is pairwise too: Poisson-MALA below HMC-10 on the runs they share flips it
    df = _cells(
        {
            **common,
            "poisson_mala": {0: 5.0, 1: 5.0, **dict.fromkeys(range(2, 8), 900.0)},
            "poisson_mh": weak_first,
            "hmc10": {0: 20.0, 1: 20.0},
        }
    )
    assert V.paired_claims(df, "ess_s")[0] is False


def test_missing_metric_leaves_cell_out_not_verdict_nan() -> None:
    """A cell with no value for a convention (e.g. no CPU record for ``authors_cpu``) is left out of that
    convention's table and claims, and its run counts as incomplete: the method's mean is not NaN and the
    claims do not read "not held (xnan)" when every complete run held."""
    spec = {
        "poisson_mala": dict.fromkeys(range(4), 500.0),
        "poisson_barker": dict.fromkeys(range(4), 400.0),
        "poisson_mh": dict.fromkeys(range(4), 50.0),
        "mala": dict.fromkeys(range(4), 20.0),
    }
    df = _cells(spec).assign(
        cell=lambda d: [f"{m}_run{r}" for m, r in zip(d["method"], d["run"], strict=True)]
    )
    df.loc[(df["method"] == "poisson_barker") & (df["run"] == 1), "ess_s"] = pd.Series(
        [[math.nan] * 3], index=df.index[(df["method"] == "poisson_barker") & (df["run"] == 1)]
    )
    ok, missing = R.with_metric(df, "ess_s")
    assert missing == ["poisson_barker_run1"] and len(ok) == len(df) - 1
    t = R.ess_summary(ok, "ess_s", {})
    assert np.isfinite(t["pc"].map(lambda x: x[1])).all()
    assert t.set_index("method").loc["poisson_barker", "runs"] == 3
    claims = V.ess_claims(ok, "ess_s", "authors", {}, "T")
    top, beat = claims[0], claims[1]
    assert top["held"] and beat["held"]
    assert (
        top["runs_held"] == "3/3 (1 incomplete)" and "run1: incomplete (no Poisson-Barker)" in top["per_run"]
    )
    # the same cell with a real (finite) value that breaks the claim in its run still counts
    df2 = df.copy()
    df2.loc[(df2["method"] == "poisson_barker") & (df2["run"] == 1), "ess_s"] = pd.Series(
        [[1.0] * 3], index=df2.index[(df2["method"] == "poisson_barker") & (df2["run"] == 1)]
    )
    claims = V.ess_claims(R.with_metric(df2, "ess_s")[0], "ess_s", "authors", {}, "T")
    assert claims[0]["runs_held"] == "3/4" and claims[1]["runs_held"] == "3/4"


def test_report_with_cpu_csv_covering_no_or_some_cells(tmp_path: Path) -> None:
    """``--cpu`` that covers none of the cells: the authors_cpu convention is reported as having no value
    (not a crash); covering some: the rest are listed as left out."""
    root = _tg_records(
        tmp_path, {"poisson_mala": 50.0, "poisson_barker": 40.0, "poisson_mh": 30.0, "mala": 10.0}
    )
    none = pd.DataFrame(
        {"experiment": ["exact_mh_tg"], "cell": ["no_such_cell"], "cpu_s": [1.0], "wall_s": [1.0]}
    )
    text, claims = R.build_report(root, cpu=none)
    assert "No cell has a authors_cpu value." in text
    assert not [c for c in claims if c["metric"] == "authors_cpu"]
    some = pd.DataFrame(
        {
            "experiment": "exact_mh_tg",
            "cell": ["mala_r0.4_run0", "mala_r0.4_run1"],
            "cpu_s": 1.0,
            "wall_s": 1.0,
        }
    )
    text, claims = R.build_report(root, cpu=some)
    assert "have no authors_cpu value and are left out" in text and "poisson_mh_r0.4_run0" in text


def _set_hmc10(root: Path, ess_s: float, extra: dict | None = None) -> None:
    """Give every HMC-10 cell 2000 draws in 2 s and ESS/s ``ess_s`` on all coordinates."""
    for f in (root / "cells" / "exact_mh_rlr").glob("*_hmc10_*.json"):
        rec = json.loads(f.read_text())
        rec["rows"][0].update(seconds=2.0, sec_per_iter=1e-3, ess_s=[ess_s] * 3, ess_s_identity=[ess_s] * 3)
        rec["rows"][0].update(extra or {})
        f.write_text(json.dumps(rec))


def test_ess_at_the_estimator_cap_is_marked(tmp_path: Path) -> None:
    """HMC-10 with ESS = n log10 n (2000 draws) in every coordinate: its rows carry the mark with a footnote
    (n recomputed from seconds / sec_per_iter for records without n_draws), and a claim quoting it says
    its value is a lower bound. Mutants: 1 % below the cap, or a recorded n_draws of 4000 -> no mark."""
    cap = MT.ess_cap(2000, "authors") / 2.0
    root = _rlr_records(tmp_path / "a", RLR_BASE, ("rlr_50d",))
    _set_hmc10(root, cap)
    text, claims = R.build_report(root)
    rows = [ln for ln in text.splitlines() if ln.startswith(f"| HMC-10 {V.CAP_MARK} |")]
    assert len(rows) == 6  # 3 rates x the 2 ESS conventions' tables
    assert "HMC-10 at 0.4: 2 of 2 runs, up to 3 of 3 coordinates" in text
    assert not any(ln.startswith(f"| HMC-5 {V.CAP_MARK}") for ln in text.splitlines())
    beat = [c for c in claims if c["claim"].startswith("every exact minibatch") and c["metric"] == "authors"]
    assert all("ESS of HMC-10 at the estimator's cap" in c["measured"] for c in beat)  # the best full batch
    root = _rlr_records(tmp_path / "b", RLR_BASE, ("rlr_50d",))
    _set_hmc10(root, 0.99 * cap)
    text, claims = R.build_report(root)
    assert V.CAP_MARK not in text and not any(V.CAP_MARK in c["measured"] for c in claims)
    root = _rlr_records(tmp_path / "c", RLR_BASE, ("rlr_50d",))
    _set_hmc10(root, cap, {"n_draws": 4000})  # the recorded draw count wins: the cap of 4000 draws is higher
    assert V.CAP_MARK not in R.build_report(root)[0]
    root = _rlr_records(tmp_path / "d", RLR_BASE, ("rlr_50d",))
    _set_hmc10(root, cap, {"n_draws": 2000})
    t = EC._ess_table(R.load_cells(root, "exact_mh_rlr")[0], {})  # the workflow's table counts them too
    row = t[(t["method"] == "hmc10") & (t["target_rate"] == 0.4)]
    # rows without seconds are unknown (NaN), not "not capped"
    assert row["capped_runs"].tolist() == [2] and t.loc[t["method"] != "hmc10", "capped_runs"].isna().all()
