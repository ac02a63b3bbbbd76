"""Markdown report of replicated exact-minibatch-MH runs (Yuan & Wang 2024, §5.1-5.2: Tables 1-7).

Reads the cell records ``<results>/cells/exact_mh_tg/*.json`` and ``<results>/cells/exact_mh_rlr/*.json``
(written by ``mcmc-bench cell`` / the workflow's ``run_cell``) and writes one markdown file:

* per method x acceptance rate: runs, acceptance, E[B], ms/iter, ESS/s (min, med, max) over coordinates
  as mean over runs +- standard error over runs (runs >= 2), the paper's convention (per-coordinate ESS/s
  averaged over runs, then min/med/max; :func:`bench.experiments.exact_mh.common._ess_table`), the paper's
  printed numbers (``P_TG`` / ``P_RLR`` / ``P_KS`` of :mod:`bench.experiments.exact_mh.paper_values`) and
  ours/paper;
* for both ESS conventions the records carry: ``authors`` (``ess_s``: MCMCDiagnosticTools bulk ESS, chain
  split in two, Geyer, lags capped at 250, the estimator behind the paper's printed numbers) and
  ``geyer`` (``ess_s_identity``: the paper's text, single chain, raw draws, Geyer initial monotone);
  with ``--cpu`` also ``authors x wall/CPU`` (ESS/s times the cell's wall/CPU ratio, a load correction);
* Table 3 (KS vs exact draws) and Table 1 (best rate per method) counterparts;
* the claims of issue #5 (:mod:`bench.experiments.exact_mh.verdicts`) with the measured value, held / not
  held, and the same per run.

Usage: ``python -m bench.experiments.exact_mh.report --results <dir> --out <md> [--cpu cells_cpu.csv]``.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from bench.cells import STATUS_OK, load_record
from bench.experiments.exact_mh import common as X
from bench.experiments.exact_mh.paper_values import P_KS, P_RLR_HMC_STEPS, P_TG
from bench.experiments.exact_mh.robust_regression import RLR_BEST, RLR_TABLES, rlr_paper
from bench.experiments.exact_mh.verdicts import (
    CAP_MARK,
    _fmt,
    _key,
    _label,
    _rate,
    capped_coords,
    ess_claims,
    ks_claim,
    mean_se,
    parse_paper,
    per_run_stats,
    speedup_claims,
    speedup_rows,
)
from bench.outputs import atomic_write_text

METRICS = {
    "authors": (
        "ess_s",
        "authors' ESS (MCMCDiagnosticTools bulk: rank-normalised, chain split in two, Geyer, lags "
        "capped at 250; the estimator behind the paper's printed numbers), per wall second of sampling",
    ),
    "geyer": (
        "ess_s_identity",
        "paper's text ESS (single chain, raw draws, Geyer initial monotone; ArviZ 'identity'), per "
        "wall second of sampling",
    ),
    "authors_cpu": (
        "ess_s_cpu",
        "authors' ESS per wall second x the cell's wall/CPU ratio (approximate ESS per CPU second)",
    ),
}


def load_cells(results: str | os.PathLike, exp: str) -> tuple[pd.DataFrame, list[str]]:
    """Rows of the ok cell records of ``exp`` (one row per cell) and the ids of cells not ok."""
    d = Path(results) / "cells" / exp
    files = sorted(d.glob("*.json"))
    if not files:
        raise ValueError(f"no cell records in {d}")
    rows, bad = [], []
    for f in files:
        rec = load_record(f)
        if rec["status"] != STATUS_OK:
            bad.append(rec["cell"])
            continue
        for r in rec["rows"]:
            rows.append({**r, "scale": rec.get("scale", "paper")})
    return pd.DataFrame(rows), bad


def load_cpu(path: str | os.PathLike | None) -> pd.DataFrame | None:
    """Per-cell CPU seconds (csv: experiment, cell, cpu_s, wall_s[, load1])."""
    if path is None:
        return None
    t = pd.read_csv(path)
    need = {"experiment", "cell", "cpu_s", "wall_s"}
    if not need <= set(t.columns):
        raise ValueError(f"{path}: needs columns {sorted(need)}, has {list(t.columns)}")
    return t


def attach_cpu(df: pd.DataFrame, cpu: pd.DataFrame | None) -> pd.DataFrame:
    """Add ``wall_cpu`` (wall/CPU of the cell process) and ``ess_s_cpu`` = ess_s x wall_cpu."""
    df = df.copy()
    if cpu is None or df.empty:
        df["wall_cpu"] = np.nan
        return df
    m = cpu.set_index(["experiment", "cell"])
    ratio = (m["wall_s"] / m["cpu_s"]).to_dict()
    df["wall_cpu"] = [ratio.get((e, c), np.nan) for e, c in zip(df["experiment"], df["cell"], strict=True)]
    df["ess_s_cpu"] = [
        (np.asarray(v, float) * w).tolist() for v, w in zip(df["ess_s"], df["wall_cpu"], strict=True)
    ]
    return df


def _pm(m: float, se: float) -> str:
    return _fmt(m) if not np.isfinite(se) else f"{_fmt(m)} ± {_fmt(se, 2)}"


def _nanmean(x) -> float:
    a = np.asarray(x, float)
    return float(a[np.isfinite(a)].mean()) if np.isfinite(a).any() else float("nan")


def with_metric(df: pd.DataFrame, col: str) -> tuple[pd.DataFrame, list[str]]:
    """The cells whose ``col`` vector is finite, and the ids of those left out (e.g. ``ess_s_cpu`` of a cell
    with no CPU record): a missing value must leave the cell out of that convention's tables and claims,
    never turn a mean or a verdict into NaN / "not held"."""
    ok = np.array([np.isfinite(np.asarray(v, float)).all() for v in df[col]], bool)
    return df[ok], sorted(df.loc[~ok, "cell"]) if "cell" in df else []


def _missing_note(k: str, missing: list[str]) -> str:
    if not missing:
        return ""
    return (
        f"\n{len(missing)} cell(s) have no {k} value and are left out of this convention's table and claims "
        f"(their runs count as incomplete there): {', '.join(missing)}.\n"
    )


def ess_summary(df: pd.DataFrame, col: str, paper: dict) -> pd.DataFrame:
    """Per (method, rate): mean +- SE over runs of the per-run (min, med, max) ESS/s, the paper's
    convention (common._ess_table: per-coordinate mean over runs, then min/med/max), paper value."""
    pc = X._ess_table(df.assign(ess_s=df[col]), paper)
    pr = per_run_stats(df, col)
    df = df.assign(_capped=capped_coords(df, col))
    rows = []
    for _, r in pc.iterrows():
        sel = (pr["method"] == r["method"]) & (pr["target_rate"].map(_key) == _key(r["target_rate"]))
        g = pr[sel]
        cells = df[(df["method"] == r["method"]) & (df["target_rate"].map(_key) == _key(r["target_rate"]))]
        pv = parse_paper(r["paper_value"])
        row = {
            "method": r["method"],
            "target_rate": r["target_rate"],
            "runs": len(g),
            "accept": r["accept"],
            "step": r["step"],
            "mean_batch": r["mean_batch"],
            "ms_iter": mean_se(cells["sec_per_iter"] * 1e3),
            "wall_cpu": _nanmean(cells["wall_cpu"]) if "wall_cpu" in cells else np.nan,
            "pc": (r["ess_s_min"], r["ess_s_med"], r["ess_s_max"]),
            "paper_value": r["paper_value"],
            "paper_med": pv[1] if pv else np.nan,
            "capped_runs": int((cells["_capped"] > 0).sum()),
            "capped_max": float(np.nanmax(cells["_capped"])) if cells["_capped"].notna().any() else np.nan,
            "dims": len(np.asarray(cells[col].iloc[0])),
        }
        for s in ("min", "med", "max"):
            row[s] = mean_se(g[s])
        row["ratio"] = row["pc"][1] / row["paper_med"] if pv else np.nan
        rows.append(row)
    t = pd.DataFrame(rows)
    return t.sort_values(
        ["target_rate", "method"], key=lambda c: c.map(_key) if c.name == "target_rate" else c
    )


def ess_markdown(t: pd.DataFrame) -> str:
    head = (
        "| method | target acc. | runs | accept | E[B] | ms/iter (wall) | ESS/s min | ESS/s med | ESS/s max "
        "| paper convention (min, med, max) | paper (min, med, max) | ours/paper (med) |"
    )
    lines = [head, "|" + "---|" * 12]
    capped = []
    for _, r in t.iterrows():
        pc = "(" + ", ".join(_fmt(v) for v in r["pc"]) + ")"
        mark = ""
        if r.get("capped_runs", 0) > 0:
            mark = " " + CAP_MARK
            capped.append(
                f"{_label(r['method'])} at {_rate(r['target_rate'])}: "
                f"{r['capped_runs']} of {r['runs']} runs, up to {r['capped_max']:.0f} of {r['dims']} "
                "coordinates"
            )
        lines.append(
            f"| {_label(r['method'])}{mark} | {_rate(r['target_rate'])} | {r['runs']} | {r['accept']:.3f} "
            f"| {r['mean_batch']:.0f} | {_pm(*r['ms_iter'])} | {_pm(*r['min'])} | {_pm(*r['med'])} "
            f"| {_pm(*r['max'])} | {pc} | {r['paper_value']} | {_fmt(r['ratio'])} |"
        )
    text = "\n".join(lines) + "\n"
    if capped:
        text += (
            f"\n{CAP_MARK} ESS at the estimator's cap n log10 n (an antithetic chain: the value is a lower "
            "bound on the uncapped estimate, not a measurement; the paper's estimator caps the same way): "
            + "; ".join(capped)
            + ".\n"
        )
    return text


def best_rate_markdown(t: pd.DataFrame, paper: dict) -> str:
    """Table 1 / 2 counterpart: each method's Best over the rates by the paper's rule (per-column max of
    (min, med, max) over the rates, paper convention; :func:`.common.best_rate_rows`),
    with the rate of its largest median, beside the paper's Best by the same rule
    (:func:`.common.paper_best`)."""
    lines = [
        "| method | our rate of the largest median | Best ESS/s (min, med, max): per-column max over the "
        "rates, paper convention | paper's rate of the largest median | paper Best (min, med, max) |",
        "|---|---|---|---|---|",
    ]
    for _, b in X.best_rate_rows(t, "pc").iterrows():
        pb = X.paper_best(paper, b["method"])
        prate, pval = (f"{pb[0]:g}", pb[1]) if pb else ("-", "-")
        pc = "(" + ", ".join(_fmt(b[c]) for c in ("best_min", "best_med", "best_max")) + ")"
        lines.append(f"| {_label(b['method'])} | {_rate(b['best_rate'])} | {pc} | {prate} | {pval} |")
    return "\n".join(lines) + "\n"


def ks_markdown(df: pd.DataFrame) -> str:
    """Table 3 counterpart: KS (min, med, max) per coordinate, mean +- SE over runs."""
    lines = [
        "| method | target acc. | runs | KS min | KS med | KS max | paper (min, med, max) |",
        "|---|---|---|---|---|---|---|",
    ]
    keyed = df.assign(_k=df["target_rate"].map(_key))
    for (m, _k), g in keyed.sort_values(["method", "_k"]).groupby(["method", "_k"], sort=False):
        rate = g["target_rate"].iloc[0]
        cells = [_pm(*mean_se(g[c])) for c in ("ks_min", "ks_med", "ks_max")]
        lines.append(
            f"| {_label(m)} | {_rate(rate)} | {len(g)} | {' | '.join(cells)} | {X._paper(P_KS, m, rate)} |"
        )
    return "\n".join(lines) + "\n"


def speedup_markdown(rows: list[dict]) -> str:
    lines = [
        "| pair | target acc. | E[B]/N | N/E[B] | ms/iter full | ms/iter minibatch | speedup "
        "| speedup / (N/E[B]) | per run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        pr = "; ".join(t for _, (t, _) in r["runs"])
        lines.append(
            f"| {r['pair']} | {_rate(r['rate'])} | {r['eb_n']:.4f} | {r['ideal']:.1f} | {r['ms_full']:.3f} "
            f"| {r['ms_mini']:.3f} | {r['speedup']:.2f} | {r['eff']:.3f} | {pr} |"
        )
    return "\n".join(lines) + "\n"


def claims_markdown(claims: list[dict]) -> str:
    lines = [
        "| table | claim | acc. | metric | measured (mean over runs) | paper | held? | per run | runs held |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in claims:
        held = "**held**" if c["held"] else "**not held**"
        lines.append(
            f"| {c['table']} | {c['claim']} | {c['rate']} | {c['metric']} | {c['measured']} | {c['paper']} "
            f"| {held} | {c['per_run']} | {c['runs_held']} |"
        )
    return "\n".join(lines) + "\n"


def _settings_of(results: Path, exp: str, scale: str) -> dict:
    """The resolved settings the workflow wrote (results/config/<exp>.json), else the experiment's."""
    p = results / "config" / f"{exp}.json"
    if p.is_file():
        return json.loads(p.read_text())["resolved_settings"]
    from bench.cells import experiment_settings
    from bench.experiments import get_experiment

    return experiment_settings(get_experiment(exp), scale, None)


def tg_n(results: Path, scale: str) -> int:
    """N of the truncated-Gaussian target the cells used (registry defaults + settings' target)."""
    from samplers import registry

    spec = registry.get_target("truncated_gaussian")
    base = {**spec.defaults, **(spec.smoke if scale == "smoke" else {})}
    base.update(_settings_of(results, "exact_mh_tg", scale).get("target", {}))
    return int(base["N"])


def _metrics(df: pd.DataFrame) -> list[str]:
    return [k for k, (col, _) in METRICS.items() if col in df.columns]


def build_report(
    results: str | os.PathLike, cpu: pd.DataFrame | None = None, commit: str = ""
) -> tuple[str, list[dict]]:
    """Markdown text and the list of claim rows for the records under ``results``."""
    results = Path(results)
    parts = [
        "<!-- generated by bench/experiments/exact_mh/report.py; do not edit by hand -->\n",
        f"Records: `{results}`" + (f"; code at commit `{commit}`" if commit else "") + ".\n",
        "ESS conventions: " + "; ".join(f"**{k}** = {d}" for k, (_, d) in METRICS.items()) + ".\n",
        "ESS/s (min, med, max) over coordinates: per run, then mean ± standard error over runs "
        "(SE only for runs >= 2); 'paper convention' = per-coordinate ESS/s averaged over runs, then "
        "min/med/max (the authors' aggregation, used for the claims' aggregate verdicts). The paper "
        "averages 100 runs (10 for d = 50).\n",
    ]
    claims: list[dict] = []
    have = {e: (results / "cells" / e).is_dir() for e in ("exact_mh_tg", "exact_mh_rlr")}
    if not any(have.values()):
        raise ValueError(f"no exact_mh_tg / exact_mh_rlr cell records under {results}/cells")
    if have["exact_mh_tg"]:
        df, bad = load_cells(results, "exact_mh_tg")
        df = attach_cpu(df, cpu)
        scale = str(df["scale"].iloc[0])
        ess = df[df["method"] != "sgld"]
        parts.append(
            f"\n## Truncated Gaussian (Yuan & Wang 2024, §5.1; Tables 1, 3, 4): {len(df)} cells ok, "
            f"{len(bad)} not ok {bad}\n"
        )
        for k in _metrics(ess):
            col = METRICS[k][0]
            ok, missing = with_metric(ess, col)
            if ok.empty:
                parts.append(f"\n### Table 4 counterpart, ESS convention: {k}\n\nNo cell has a {k} value.\n")
                continue
            t = ess_summary(ok, col, P_TG)
            parts.append(
                f"\n### Table 4 counterpart, ESS convention: {k}\n\n"
                + ess_markdown(t)
                + _missing_note(k, missing)
            )
            if k == "authors":
                parts.append(
                    "\n### Table 1 counterpart (best rate per method), authors' ESS\n\n"
                    + best_rate_markdown(t, P_TG)
                )
            claims += ess_claims(ok, col, k, P_TG, "TG Table 4")
        parts.append(
            "\n### Table 3 counterpart: KS vs exact draws after the authors' burn-in\n\n" + ks_markdown(df)
        )
        kc = ks_claim(df)
        if kc is None:
            parts.append("\nKS claim not evaluated: no SGLD or no Poisson cell.\n")
        else:
            claims.append(kc)
        n_data = tg_n(results, scale)
        rows = speedup_rows(ess, n_data, "sec_per_iter")
        parts.append(
            f"\n### Per-iteration cost vs the full-batch twin (N = {n_data}, wall ms/iter)\n\n"
            + speedup_markdown(rows)
        )
        claims += speedup_claims(rows, "wall", "TG")
        if ess["wall_cpu"].notna().any():
            cpu_df = ess.assign(sec_per_iter_cpu=ess["sec_per_iter"] / ess["wall_cpu"])
            rows = speedup_rows(cpu_df, n_data, "sec_per_iter_cpu")
            parts.append(
                "\n### Same, ms/iter x CPU/wall of the cell (approximate CPU ms/iter)\n\n"
                + speedup_markdown(rows)
            )
            claims += speedup_claims(rows, "wall x CPU/wall", "TG")
    if have["exact_mh_rlr"]:
        df, bad = load_cells(results, "exact_mh_rlr")
        df = attach_cpu(df, cpu)
        for v, sub in df.groupby("variant", sort=False):
            paper = rlr_paper(v)  # only the paper's leapfrog count gets the HMC value
            tables = RLR_TABLES.get(v, "no paper table")
            parts.append(
                f"\n## Robust regression {v} (Yuan & Wang 2024, §5.2, {tables}): {len(sub)} cells ok, "
                f"{len(bad)} not ok {bad}; paper HMC column = {P_RLR_HMC_STEPS[v]} leapfrog steps\n"
            )
            for k in _metrics(sub):
                col = METRICS[k][0]
                ok, missing = with_metric(sub, col)
                if ok.empty:
                    parts.append(f"\n### ESS convention: {k}\n\nNo cell has a {k} value.\n")
                    continue
                t = ess_summary(ok, col, paper)
                parts.append(f"\n### ESS convention: {k}\n\n" + ess_markdown(t) + _missing_note(k, missing))
                if k == "authors":
                    parts.append(
                        f"\n### Best rate per method ({RLR_BEST.get(v, 'no paper table')}), "
                        "authors' ESS\n\n" + best_rate_markdown(t, paper)
                    )
                claims += ess_claims(ok, col, k, paper, f"RLR {v} ({tables})")
    parts.append("\n## Claims (issue #5)\n\n" + claims_markdown(claims))
    return "".join(parts), claims


def main(argv: list[str] | None = None) -> int:
    """CLI: ``--results <dir> --out <md> [--cpu csv] [--commit hash]``."""
    p = argparse.ArgumentParser(
        prog="python -m bench.experiments.exact_mh.report", description=__doc__.split("\n")[0]
    )
    p.add_argument(
        "--results", required=True, help="directory holding cells/exact_mh_tg and/or cells/exact_mh_rlr"
    )
    p.add_argument("--out", required=True, help="markdown file to write")
    p.add_argument(
        "--cpu", default=None, help="csv of per-cell CPU seconds (experiment, cell, cpu_s, wall_s)"
    )
    p.add_argument("--commit", default="", help="commit hash of the code that produced the records")
    a = p.parse_args(argv)
    text, _ = build_report(a.results, load_cpu(a.cpu), a.commit)
    atomic_write_text(a.out, text)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
