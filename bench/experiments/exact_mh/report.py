"""Markdown report of replicated exact-minibatch-MH runs (seed 001 §5.1-5.2: Tables 1, 3, 4 and 2, 5, 6, 7).

Reads the cell records ``<results>/cells/exact_mh_tg/*.json`` and ``<results>/cells/exact_mh_rlr/*.json``
(written by ``mcmc-bench cell`` / the workflow's ``run_cell``) and writes one markdown file:

* per method x acceptance rate: runs, acceptance, E[B], ms/iter, ESS/s (min, med, max) over coordinates
  as mean over runs +- standard error over runs (runs >= 2), the paper's convention (per-coordinate ESS/s
  averaged over runs, then min/med/max; :func:`bench.experiments.exact_mh._ess_table`), the paper's
  printed numbers (``P_TG`` / ``P_RLR`` / ``P_KS`` of :mod:`bench.experiments.exact_mh`) and ours/paper;
* for both ESS conventions the records carry: ``authors`` (``ess_s``: MCMCDiagnosticTools bulk ESS, chain
  split in two, Geyer, lags capped at 250, the estimator behind the paper's printed numbers) and
  ``geyer`` (``ess_s_identity``: the paper's text, single chain, raw draws, Geyer initial monotone);
  with ``--cpu`` also ``authors x wall/CPU`` (ESS/s times the cell's wall/CPU ratio, a load correction);
* Table 3 (KS vs exact draws) and Table 1 (best rate per method) counterparts;
* the claims of issue #5 with the measured value, held / not held, and the same per run:
  Poisson-MALA/Poisson-Barker top two in median ESS/s; every exact minibatch method beats every full-batch
  method; SGLD's max KS >= 2x the Poisson methods' (Table 3); per-iteration speedup over the full-batch twin
  >= 0.6 N/E[B] (truncated Gaussian).

Usage: ``python -m bench.experiments.exact_mh_report --results <dir> --out <md> [--cpu cells_cpu.csv]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from bench.cells import STATUS_OK, load_record
from bench.experiments import exact_mh as X
from bench.outputs import atomic_write_text

MINI = ("poisson_mh", "poisson_barker", "poisson_mala")
TOP_TWO = {"poisson_mala", "poisson_barker"}
TWINS = (("poisson_mh", "rwm"), ("poisson_mala", "mala"), ("poisson_barker", "barker"))
KS_FACTOR = 2.0  # "several times": the registered claim exact_mh.sgld_ks uses >= 2
SPEEDUP_FRACTION = 0.6  # issue #5: per-iteration speedup >= 0.6 N/E[B]
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


# which estimator each ESS/s column holds, and the column with that estimator's ESS/s per wall second
ESS_KIND = {
    "ess_s": ("authors", "ess_s"),
    "ess_s_cpu": ("authors", "ess_s"),
    "ess_s_identity": ("identity", "ess_s_identity"),
}
CAP_MARK = "‡"


# ----------------------------------------------------------------------------- reading
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


def capped_coords(df: pd.DataFrame, col: str) -> list[float]:
    """Per cell: how many coordinates' ESS of the convention of ``col`` sit at the estimator's cap
    (:func:`bench.experiments.exact_mh.capped_count`); NaN where unknown."""
    kind, ess_col = ESS_KIND[col]
    return [X.capped_count(r, ess_col, kind) for _, r in df.iterrows()]


# ----------------------------------------------------------------------------- statistics
def mean_se(x: Iterable[float]) -> tuple[float, float]:
    """Mean and standard error over runs (sd with ddof=1 / sqrt(n)); SE is nan for n < 2."""
    a = np.asarray(list(x), float)
    if a.size == 0:
        return float("nan"), float("nan")
    se = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size >= 2 else float("nan")
    return float(a.mean()), se


def parse_paper(s: str) -> tuple[float, float, float] | None:
    """'(.05,.08,.47)' -> (0.05, 0.08, 0.47); '-' -> None."""
    if not isinstance(s, str) or not s.startswith("("):
        return None
    v = [float(x) for x in s.strip("()").split(",")]
    if len(v) != 3:
        raise ValueError(f"paper value {s!r} is not a (min, med, max) triple")
    return v[0], v[1], v[2]


def _fmt(v: float, nd: int = 3) -> str:
    if v is None or not np.isfinite(v):
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 100:
        return f"{v:.1f}"
    return f"{v:.{nd}g}"


def _pm(m: float, se: float) -> str:
    return _fmt(m) if not np.isfinite(se) else f"{_fmt(m)} ± {_fmt(se, 2)}"


def _rate(r) -> str:
    return "-" if r is None or (isinstance(r, float) and not np.isfinite(r)) else f"{float(r):g}"


def _label(m: str) -> str:
    b = X.base_method(m)
    sfx = X.label_of(m)[len(X.label_of(b)) :]
    return (f"HMC-{b[3:]}" if b.startswith("hmc") and b[3:].isdigit() else X.LABEL.get(b, b)) + sfx


def _is_full(m: str) -> bool:
    """A cached full-batch row (the ``+recompute`` rows are compared separately)."""
    return not X.is_authors_timing(m) and (m in ("rwm", "mala", "barker") or m.startswith("hmc"))


# Timings of the minibatch-beats-full-batch claim: (minibatch side, full-batch side) of each
#   "ours"         both as published: cached full batch, O(B) minibatch kernels;
#   "authors"      full batch as the authors' code runs it (energy="recompute"), our minibatch kernels;
#   "authors_both" both as the authors' code runs them: + the minibatch side's counts="dense" (the
#                  authors' operations on both sides; their runtime's constant factors are not
#                  reproduced, docs/results/exact_mh.md section 39).
TIMINGS = ("ours", "authors", "authors_both")


def sides(methods: Iterable[str], timing: str = "ours") -> tuple[list[str], list[str]]:
    """The (minibatch, full-batch) table rows that ``timing`` (:data:`TIMINGS`) compares."""
    if timing not in TIMINGS:
        raise ValueError(f"timing must be one of {TIMINGS}, got {timing!r}")
    ms = list(methods)
    if timing == "authors_both":
        mini = [m for m in ms if m.endswith(X.DENSE) and X.base_method(m) in MINI]
    else:
        mini = [m for m in ms if m in MINI]
    full = [m for m in ms if m.endswith(X.RECOMPUTE)] if timing != "ours" else [m for m in ms if _is_full(m)]
    return mini, full


def _key(r) -> float:
    return -1.0 if r is None or not np.isfinite(r) else float(r)


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


def per_run_stats(df: pd.DataFrame, col: str) -> pd.DataFrame:
    """One row per cell: (min, med, max) over coordinates of the vector column ``col``."""
    out = df[["method", "target_rate", "run"]].copy()
    v = [np.asarray(x, float) for x in df[col]]
    out["min"] = [float(x.min()) for x in v]
    out["med"] = [float(np.median(x)) for x in v]
    out["max"] = [float(x.max()) for x in v]
    return out


def ess_summary(df: pd.DataFrame, col: str, paper: dict) -> pd.DataFrame:
    """Per (method, rate): mean +- SE over runs of the per-run (min, med, max) ESS/s, the paper's
    convention (exact_mh._ess_table: per-coordinate mean over runs, then min/med/max), paper value."""
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
    (min, med, max) over the rates, paper convention; :func:`bench.experiments.exact_mh.best_rate_rows`),
    with the rate of its largest median, beside the paper's Best by the same rule
    (:func:`bench.experiments.exact_mh.paper_best`)."""
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
            f"| {_label(m)} | {_rate(rate)} | {len(g)} | {' | '.join(cells)} | {X._paper(X.P_KS, m, rate)} |"
        )
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- claims
def _claim(
    table: str, claim: str, rate, metric: str, measured: str, paper: str, held: bool, runs: list
) -> dict:
    # ``runs``: per run ``(run id, (text, held))``, labelled by the run's id (not its position, so runs
    # 40-99 read run40..run99); held None = undecided
    n_ok = sum(h is not None and bool(h) for _, (_, h) in runs)
    n_dec = sum(h is not None for _, (_, h) in runs)
    per_run = "; ".join(f"run{k}: {txt}" for k, (txt, _) in runs) if runs else "-"
    return {
        "table": table,
        "claim": claim,
        "rate": _rate(rate),
        "metric": metric,
        "measured": measured,
        "paper": paper,
        "held": held,
        "per_run": per_run,
        "runs_held": f"{n_ok}/{n_dec}" + (f" ({len(runs) - n_dec} incomplete)" if n_dec < len(runs) else ""),
    }


def paper_meds(paper: dict, rate: float) -> dict[str, float]:
    """The paper's median ESS/s per table row at acceptance ``rate`` (rows it prints a value for)."""
    out = {}
    for m in paper:
        pv = parse_paper(X._paper(paper, m, rate))
        if pv:
            out[m] = pv[1]
    return out


def top_two_and_beat(meds: dict[str, float], timing: str = "ours") -> tuple[list[str], bool, str, bool]:
    """The two claims at one rate from one median ESS/s per method (``meds``: a run's, the paper's, or a
    results table's; verify/families/exact_mh.py reads them from the ESS tables): ``(top two methods as
    published, they are Poisson-MALA and Poisson-Barker, text of the worst minibatch vs the best full
    batch, every minibatch method beats every full-batch one)``; text ``"-"`` and False if a side is
    missing. ``timing`` (:data:`TIMINGS`, :func:`sides`) picks the rows of the beat claim: "authors" =
    the full-batch side is the ``+recompute`` rows (the seed-001 authors' uncached full-batch code),
    "authors_both" = and the minibatch side the ``+dense`` rows (their O(N) count bookkeeping)."""
    order = sorted((m for m in meds if not X.is_authors_timing(m)), key=meds.get, reverse=True)
    top = order[:2]
    mini_rows, full_rows = sides(meds, timing)
    mini = {m: meds[m] for m in mini_rows}
    full = {m: meds[m] for m in full_rows}
    if not mini or not full:
        return top, set(top) == TOP_TWO, "-", False
    wm, bf = min(mini, key=mini.get), max(full, key=full.get)
    ratio = mini[wm] / full[bf]
    txt = (
        f"worst minibatch {_label(wm)} {_fmt(mini[wm])} vs best full batch {_label(bf)} {_fmt(full[bf])} "
        f"(x{ratio:.2f})"
    )
    return top, set(top) == TOP_TWO, txt, ratio > 1.0


def ratio_text(beat_txt: str) -> str:
    """The ratio ("x43.57") of a :func:`top_two_and_beat` beat text; "-" for none."""
    return beat_txt.split("(")[-1].rstrip(")")


def top_text(meds: dict[str, float]) -> str:
    """The measured side of the top-two claim: the two largest medians of the rows as published (not
    the authors'-code timings), and the third largest."""
    order = sorted((m for m in meds if not X.is_authors_timing(m)), key=meds.get, reverse=True)
    top, nxt = order[:2], order[2:3]
    txt = ", ".join(f"{_label(m)} {_fmt(meds[m])}" for m in top)
    return txt + (f"; next {_label(nxt[0])} {_fmt(meds[nxt[0]])}" if nxt else "")


def paper_texts(pm: dict[str, float]) -> tuple[str, str]:
    """The paper's side of the top-two and beat claims at one rate (``pm``: :func:`paper_meds`): its
    top two with their medians, and its worst minibatch / best full batch ratio ("-" if none)."""
    if not pm:
        return "-", "-"
    ptop, _, pbeat, _ = top_two_and_beat(pm)
    return ", ".join(f"{_label(m)} {pm[m]:g}" for m in ptop), ratio_text(pbeat)


def _paired_meds(g: pd.DataFrame, col: str, a: str, b: str) -> tuple[float, float, list[int]]:
    """Median ESS/s (paper convention) of methods ``a`` and ``b`` over the runs both have (one rate)."""
    runs = sorted(set(g.loc[g["method"] == a, "run"]) & set(g.loc[g["method"] == b, "run"]))
    if not runs:
        return math.nan, math.nan, runs
    sub = g[g["method"].isin((a, b)) & g["run"].isin(runs)]
    t = X._ess_table(sub.assign(ess_s=sub[col]), {})
    med = dict(zip(t["method"], t["ess_s_med"], strict=True))
    return med[a], med[b], runs


def _runs_txt(runs: list[int]) -> str:
    return f"runs {runs[0]}-{runs[-1]}" if runs == list(range(runs[0], runs[-1] + 1)) else f"runs {runs}"


def paired_claims(g: pd.DataFrame, col: str, timing: str = "ours") -> tuple[bool, str, bool]:
    """Aggregate top-two and minibatch-beats-full verdicts at one rate, every comparison made over the runs
    both compared methods have (records merged from several sessions can hold 8 runs of one method and 2
    of another; comparing their all-run means would compare different replicates). Returns
    ``(top_two_held, beat_text, beat_held)``; the beat text names the worst (minibatch, full batch) pair,
    its values on their common runs and the ratio; ``timing`` as in :func:`top_two_and_beat`."""
    methods = list(dict.fromkeys(g["method"]))
    cached = [m for m in methods if not X.is_authors_timing(m)]
    top_ok = TOP_TWO <= set(cached) and all(
        _paired_meds(g, col, t, o)[0] > _paired_meds(g, col, t, o)[1]
        for t in TOP_TWO
        for o in cached
        if o not in TOP_TWO
    )
    mini, full = sides(methods, timing)
    worst = None
    for m in mini:
        for f in full:
            vm, vf, runs = _paired_meds(g, col, m, f)
            r = vm / vf if vf > 0 else math.inf
            if runs and (worst is None or r < worst[0]):
                worst = (r, m, vm, f, vf, runs)
    if worst is None:
        return top_ok, "-", False
    ratio, m, vm, f, vf, runs = worst
    all_runs = sorted(set(g["run"]))
    on = "" if runs == all_runs else f" on their common {_runs_txt(runs)}"
    txt = (
        f"worst pair: minibatch {_label(m)} {_fmt(vm)} vs full batch {_label(f)} {_fmt(vf)}{on} "
        f"(x{ratio:.2f})"
    )
    return top_ok, txt, ratio > 1.0


def _cap_note(txt: str, capped: set[str]) -> str:
    """``txt`` + a mark naming the methods quoted in it (``<label> <value>``) whose ESS hit the cap."""
    hit = [m for m in sorted(capped) if re.search(re.escape(_label(m)) + r" [0-9]", txt)]
    if not hit:
        return txt
    names = ", ".join(_label(m) for m in hit)
    return f"{txt} {CAP_MARK} ESS of {names} at the estimator's cap in some run (a lower bound)"


def ess_claims(df: pd.DataFrame, col: str, metric: str, paper: dict, table: str) -> list[dict]:
    """Top-two and minibatch-beats-full-batch claims per rate: aggregate (paper convention; each pair of
    methods compared on the runs both have, :func:`paired_claims`) and per run."""
    out = []
    pc = X._ess_table(df.assign(ess_s=df[col]), paper)
    pr = per_run_stats(df, col)
    for rate in sorted(df["target_rate"].dropna().unique()):
        agg = {r["method"]: r["ess_s_med"] for _, r in pc[pc["target_rate"] == rate].iterrows()}
        g_rate = df[df["target_rate"].map(_key) == _key(rate)]
        top_ok, beat_txt, beat_ok = paired_claims(g_rate, col)
        capped = set(g_rate.loc[np.asarray(capped_coords(g_rate, col)) > 0, "method"])
        ptop_txt, pbeat_txt = paper_texts(paper_meds(paper, rate))
        runs_top, runs_beat = [], []
        every = set(g_rate["method"])
        for run in sorted(pr["run"].unique()):
            g = pr[(pr["target_rate"] == rate) & (pr["run"] == run)]
            meds = dict(zip(g["method"], g["med"], strict=True))
            lack = sorted(m for m in every - set(meds) if not X.is_authors_timing(m))
            if lack:  # a verdict without a method would be a verdict on another claim
                txt = "incomplete (no " + ", ".join(_label(m) for m in lack) + ")"
                runs_top.append((run, (txt, None)))
                runs_beat.append((run, (txt, None)))
                continue
            t2, ok2, bt, okb = top_two_and_beat(meds)
            runs_top.append((run, (", ".join(_label(m) for m in t2) + (" ✓" if ok2 else " ✗"), ok2)))
            runs_beat.append((run, (ratio_text(bt) + (" ✓" if okb else " ✗"), okb)))
        out.append(
            _claim(
                table,
                "Poisson-MALA & Poisson-Barker top two (median ESS/s)",
                rate,
                metric,
                _cap_note(top_text(agg), capped),
                ptop_txt,
                top_ok,
                runs_top,
            )
        )
        out.append(
            _claim(
                table,
                "every exact minibatch method beats every full-batch method (median ESS/s)",
                rate,
                metric,
                _cap_note(beat_txt, capped),
                pbeat_txt,
                beat_ok,
                runs_beat,
            )
        )
        for timing in TIMINGS[1:]:  # like for like with the paper's timings, where the rows exist
            if not all(sides(agg, timing)):
                continue
            _, a_txt, a_ok = paired_claims(g_rate, col, timing)
            runs_a = []
            for run in sorted(pr["run"].unique()):
                g = pr[(pr["target_rate"] == rate) & (pr["run"] == run)]
                meds = dict(zip(g["method"], g["med"], strict=True))
                # runs with the rows this timing adds (runs of older records may lack them: not listed)
                if any(m.endswith(X.RECOMPUTE if timing == "authors" else X.DENSE) for m in meds):
                    lack = sorted(m for m in every - set(meds) if m in set().union(*sides(every, timing)))
                    if lack:
                        txt = "incomplete (no " + ", ".join(_label(m) for m in lack) + ")"
                        runs_a.append((run, (txt, None)))
                        continue
                    _, _, bt, okb = top_two_and_beat(meds, timing)
                    runs_a.append((run, (ratio_text(bt) + (" ✓" if okb else " ✗"), okb)))
            out.append(
                _claim(
                    table,
                    AUTHORS_CLAIM[timing],
                    rate,
                    metric,
                    _cap_note(a_txt, capped),
                    pbeat_txt,
                    a_ok,
                    runs_a,
                )
            )
    return out


AUTHORS_CLAIM = {
    "authors": "... beats every full-batch method timed as the authors' code runs it (energy=recompute)",
    "authors_both": "... beats every full-batch method, both sides as the authors' code runs them "
    "(full batch energy=recompute, minibatch counts=dense)",
}


def ks_claim(df: pd.DataFrame) -> dict | None:
    """SGLD's max KS >= KS_FACTOR x the largest max KS of the Poisson methods (Table 3); None if either
    is missing."""
    sg = df[df["method"] == "sgld"]
    po = df[df["method"].isin(MINI)]
    if sg.empty or po.empty:
        return None
    po_max = po.assign(_k=po["target_rate"].map(_key)).groupby(["method", "_k"])["ks_max"].mean().max()
    ratio = sg["ks_max"].mean() / po_max
    runs = []
    for run in sorted(df["run"].unique()):
        s, p = sg[sg["run"] == run]["ks_max"], po[po["run"] == run]["ks_max"]
        if len(s) and len(p):
            r = float(s.max() / p.max())
            runs.append((int(run), (f"x{r:.2f}" + (" ✓" if r >= KS_FACTOR else " ✗"), r >= KS_FACTOR)))
    p_sg = max(parse_paper(v)[2] for v in X.P_KS["sgld"])
    p_po = max(parse_paper(v)[2] for m in MINI for v in X.P_KS[m])
    return _claim(
        "TG Table 3",
        f"SGLD's max KS >= {KS_FACTOR:g}x the Poisson methods' max KS",
        None,
        "KS",
        f"SGLD {sg['ks_max'].mean():.3f} vs Poisson max {po_max:.3f} (x{ratio:.2f})",
        f"{p_sg:g} vs {p_po:g} (x{p_sg / p_po:.2f})",
        bool(ratio >= KS_FACTOR),
        runs,
    )


def speedup_rows(df: pd.DataFrame, n_data: int, time_col: str) -> list[dict]:
    """Per (twin pair, rate): speedup = ms/iter full / ms/iter minibatch vs N/E[B] (run mean, per run)."""
    rows = []
    for mini, full in TWINS:
        for rate in sorted(df["target_rate"].dropna().unique()):
            a = df[(df["method"] == mini) & (df["target_rate"] == rate)]
            b = df[(df["method"] == full) & (df["target_rate"] == rate)]
            if a.empty or b.empty:
                continue
            eb = a["mean_batch"].mean()
            sp = b[time_col].mean() / a[time_col].mean()
            ideal = n_data / eb
            runs = []
            for run in sorted(set(a["run"]) & set(b["run"])):
                ar, br = a[a["run"] == run], b[b["run"] == run]
                e = float(br[time_col].mean() / ar[time_col].mean()) / (n_data / ar["mean_batch"].mean())
                ok = e >= SPEEDUP_FRACTION
                runs.append((int(run), (f"{e:.2f}" + (" ✓" if ok else " ✗"), ok)))
            rows.append(
                {
                    "pair": f"{_label(mini)} / {_label(full)}",
                    "rate": rate,
                    "eb_n": eb / n_data,
                    "ideal": ideal,
                    "ms_full": b[time_col].mean() * 1e3,
                    "ms_mini": a[time_col].mean() * 1e3,
                    "speedup": sp,
                    "eff": sp / ideal,
                    "runs": runs,
                }
            )
    return rows


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


def speedup_claims(rows: list[dict], metric: str, table: str) -> list[dict]:
    return [
        _claim(
            table,
            f"per-iteration speedup over the full-batch twin >= {SPEEDUP_FRACTION:g} N/E[B] ({r['pair']})",
            r["rate"],
            metric,
            f"speedup {r['speedup']:.2f} of N/E[B] {r['ideal']:.1f} = {r['eff']:.3f}",
            "issue #5 target (paper: E[B] ~6% of N)",
            bool(r["eff"] >= SPEEDUP_FRACTION),
            r["runs"],
        )
        for r in rows
    ]


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


# ----------------------------------------------------------------------------- assembly
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
        "<!-- generated by bench/experiments/exact_mh_report.py; do not edit by hand -->\n",
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
            f"\n## Truncated Gaussian (seed 001 §5.1; Tables 1, 3, 4): {len(df)} cells ok, "
            f"{len(bad)} not ok {bad}\n"
        )
        for k in _metrics(ess):
            col = METRICS[k][0]
            ok, missing = with_metric(ess, col)
            if ok.empty:
                parts.append(f"\n### Table 4 counterpart, ESS convention: {k}\n\nNo cell has a {k} value.\n")
                continue
            t = ess_summary(ok, col, X.P_TG)
            parts.append(
                f"\n### Table 4 counterpart, ESS convention: {k}\n\n"
                + ess_markdown(t)
                + _missing_note(k, missing)
            )
            if k == "authors":
                parts.append(
                    "\n### Table 1 counterpart (best rate per method), authors' ESS\n\n"
                    + best_rate_markdown(t, X.P_TG)
                )
            claims += ess_claims(ok, col, k, X.P_TG, "TG Table 4")
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
            paper = X.rlr_paper(v)  # only the paper's leapfrog count gets the HMC value
            tables = X.RLR_TABLES.get(v, "no paper table")
            parts.append(
                f"\n## Robust regression {v} (seed 001 §5.2, {tables}): {len(sub)} cells ok, "
                f"{len(bad)} not ok {bad}; paper HMC column = {X.P_RLR_HMC_STEPS[v]} leapfrog steps\n"
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
                        f"\n### Best rate per method ({X.RLR_BEST.get(v, 'no paper table')}), "
                        "authors' ESS\n\n" + best_rate_markdown(t, paper)
                    )
                claims += ess_claims(ok, col, k, paper, f"RLR {v} ({tables})")
    parts.append("\n## Claims (issue #5)\n\n" + claims_markdown(claims))
    return "".join(parts), claims


def main(argv: list[str] | None = None) -> int:
    """CLI: ``--results <dir> --out <md> [--cpu csv] [--commit hash]``."""
    p = argparse.ArgumentParser(
        prog="python -m bench.experiments.exact_mh_report", description=__doc__.split("\n")[0]
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
