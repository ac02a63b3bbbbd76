"""Claim rows of the exact minibatch MH family (Yuan & Wang 2024), the ``exact_mh.claims`` check of
verify/families/exact_mh.py: read the tables bench/experiments/exact_mh/ wrote (results dir; "not run" if
absent); the ESS/s and KS ratio claims carry ``value``, a bootstrap interval over runs (``ci_low``,
``ci_high``), ``runs_held`` and a ``verdict`` text from the experiments' ``exact_mh_<table>_claims_ci``
tables.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from verify.checks import results_dir

S001 = "Yuan & Wang 2024"


# ============================================================================ claims
# Claim rows carry, beside the verdict (``holds``), its uncertainty: ``value`` (the ratio the verdict
# compares with its threshold, from the table the verdict reads), ``ci_low`` / ``ci_high`` (95 % bootstrap
# percentile interval over runs) and ``runs_held`` ("k/n": runs in which the claim holds on that run alone),
# both from the experiment's per-run interval table ``exact_mh_<table>_claims_ci``
# (:func:`bench.experiments.exact_mh.verdicts.ratio_intervals`, written by the experiment's summarize from
# its cells), and ``verdict`` (text, :func:`bench.experiments.exact_mh.verdicts.verdict_text`).
CI_FIELDS = ("value", "ci_low", "ci_high", "runs_held", "verdict")
CI_RTOL = 1e-9  # the interval table's value must be the verdict's (else it is from other cells)


def _read(name: str) -> pd.DataFrame | None:
    p = results_dir() / f"{name}.csv"
    return pd.read_csv(p) if p.is_file() else None


def _read_ci(table: str) -> pd.DataFrame | None:
    """The per-run interval table of ``table`` (``exact_mh_<table>_claims_ci``), None if absent."""
    p = results_dir() / f"exact_mh_{table}_claims_ci.csv"
    return pd.read_csv(p, dtype={"rate": str, "runs_held": str}) if p.is_file() else None


def _not_run(cid, statement, evidence):
    return {
        "claim_id": cid,
        "paper": S001,
        "statement": statement,
        "evidence": evidence,
        "measured": "not run",
        "holds": None,
        "verdict": f"not run (no {evidence})",
    }


def _with_ci(row: dict, ci: pd.DataFrame | None, table: str, claim: str, rate: str, value: float) -> dict:
    """``row`` with the uncertainty columns of claim ``claim`` at ``rate`` (an interval-table ``rate``:
    "0.4", "every", "-"): ``value`` = the verdict's ratio, the interval and ``runs_held`` from ``ci`` if
    its value is this one (to CI_RTOL), and the verdict text; "not run" rows get only the text."""
    from bench.experiments.exact_mh import verdicts as R

    if row.get("holds") is None:
        row.setdefault("verdict", "not run")
        return row
    value = float(value)
    row["value"] = value if np.isfinite(value) else None
    lo = hi = None
    runs_held, note, thr = "", "", 1.0
    name = f"exact_mh_{table}_claims_ci"
    hit = None if ci is None else ci[(ci["claim"] == claim) & (ci["rate"].astype(str) == rate)]
    if hit is None:
        note = f"no interval: {name}.csv not written"
    elif hit.empty:
        note = f"no interval: {name}.csv has no row for it"
    else:
        h = hit.iloc[0]
        thr = float(h["threshold"])
        if not (np.isfinite(value) and abs(float(h["value"]) / value - 1.0) <= CI_RTOL):
            note = f"no interval: {name}.csv is from other cells (value {float(h['value']):.6g})"
        else:
            runs_held = str(h["runs_held"])
            if int(h["n_boot"]) > 0 and int(h["boot_valid"]) > 0:
                lo, hi = float(h["ci_low"]), float(h["ci_high"])
            else:
                note = f"no interval: {int(h['runs'])} run(s), fewer than {R.MIN_BOOT_RUNS}"
    row.update(
        ci_low=lo,
        ci_high=hi,
        runs_held=runs_held or None,
        verdict=R.verdict_text(bool(row["holds"]), value, lo, hi, runs_held, thr, note=note),
    )
    return row


RLR_CLAIMS = {
    "top_two": (
        "Poisson-MALA and Poisson-Barker rank top two in median ESS/s",
        "Poisson-MALA and Poisson-Barker the two largest cached medians",
    ),
    "minibatch_beats_full": (
        "every exact minibatch method beats every full-batch method (HMC included) in median ESS/s",
        "worst minibatch / best cached full batch > 1",
    ),
    "minibatch_beats_full_authors": (
        "every exact minibatch method beats every full-batch method in median ESS/s, full batch timed as "
        "the authors' code runs it (log pi at theta and theta' every step, energy=recompute)",
        "worst minibatch / best full batch (authors' recompute) > 1",
    ),
    "minibatch_beats_full_authors_both": (
        "every exact minibatch method beats every full-batch method in median ESS/s, both sides timed as "
        "the authors' code runs them (full batch energy=recompute, minibatch counts=dense: the authors' "
        "operations on both sides)",
        "worst minibatch (authors' counts) / best full batch (authors' recompute) > 1",
    ),
}


def _rate_claims(
    table: str, label: str, paper: str, t: pd.DataFrame, paper_vals: dict, ev: str, name: str | None = None
) -> list[dict]:
    """The RLR_CLAIMS rows of one ESS table (``results/exact_mh_<table>_ess.csv``) per acceptance rate,
    ids ``exact_mh.<label>.<claim>.r<rate>`` (statement "<name, else label> at acceptance <rate>: ..."):
    decided on the table's median ESS/s by ``exact_mh.verdicts.top_two_and_beat`` (the report's per-run
    verdict), with the threshold, the paper's counterpart at that rate (``paper_value``: its top two, its
    worst minibatch / best full batch ratio) and the uncertainty columns (:func:`_with_ci`). "not run" at
    a rate whose table lacks a compared method (a verdict without it would be a verdict on another
    claim)."""
    from bench.experiments.exact_mh import common as X
    from bench.experiments.exact_mh import verdicts as R

    rows = []
    ci = _read_ci(table)
    t = t[np.isfinite(t["ess_s_med"].astype(float))]
    for rate, g in t.groupby("target_rate"):
        meds = dict(zip(g["method"], g["ess_s_med"].astype(float), strict=True))
        cached = {m for m in meds if not X.is_authors_timing(m)}
        lack_mini = [X.label_of(m) for m in R.MINI if m not in meds]
        lack_dense = [X.label_of(m + X.DENSE) for m in R.MINI if m + X.DENSE not in meds]
        _, top_ok, beat_txt, beat_ok = R.top_two_and_beat(meds)
        _, _, a_txt, a_ok = R.top_two_and_beat(meds, "authors")
        _, _, b_txt, b_ok = R.top_two_and_beat(meds, "authors_both")
        ptop, pbeat = R.paper_texts(R.paper_meds(paper_vals, rate))
        lack_top = [X.label_of(m) for m in sorted(R.TOP_TWO - cached)]
        verdicts = {
            "top_two": (
                R.top_text(meds),
                ptop,
                top_ok,
                lack_top or (["a third method"] if len(cached) < 3 else []),
            ),
            "minibatch_beats_full": (
                beat_txt,
                pbeat,
                beat_ok,
                lack_mini or (["cached full-batch rows"] if beat_txt == "-" else []),
            ),
            "minibatch_beats_full_authors": (
                a_txt,
                pbeat,
                a_ok,
                lack_mini or (["+recompute rows"] if a_txt == "-" else []),
            ),
            "minibatch_beats_full_authors_both": (
                b_txt,
                pbeat,
                b_ok,
                lack_dense or (["+recompute rows"] if b_txt == "-" else []),
            ),
        }
        for k, (measured, pv, held, lack) in verdicts.items():
            st, thr = RLR_CLAIMS[k]
            row = {
                "claim_id": f"exact_mh.{label}.{k}.r{rate:g}",
                "paper": paper,
                "statement": f"{name or label} at acceptance {rate:g}: {st}",
                "evidence": ev,
                "measured": measured,
                "holds": bool(held),
                "threshold": thr,
                "paper_value": pv,
            }
            if lack:
                row.update(
                    evidence=f"{ev} (no {', '.join(lack)} at {rate:g})",
                    measured="not run",
                    holds=None,
                    verdict=f"not run (no {', '.join(lack)} at {rate:g})",
                )
            rows.append(_with_ci(row, ci, table, k, f"{rate:g}", R.claim_ratio(meds, k)))
    return rows


def _rlr_claims() -> list[dict]:
    """Per robust-regression variant (Yuan & Wang 2024, Tables 2/5, 6, 7) and acceptance rate of its ESS table
    (results/exact_mh_<variant>_ess.csv): the RLR_CLAIMS rows of :func:`_rate_claims`. "not run" for a
    variant without a table."""
    from bench.experiments.exact_mh import robust_regression as RLRE

    rows = []
    for v in RLRE.RLR_VARIANTS:
        ev = f"results/exact_mh_{v}_ess.csv"
        paper = f"{S001} {RLRE.RLR_TABLES[v]}"
        t = _read(f"exact_mh_{v}_ess")
        if t is None:
            for k, (st, _) in RLR_CLAIMS.items():
                rows.append({**_not_run(f"exact_mh.{v}.{k}", f"{v}: {st}", ev), "paper": paper})
            continue
        rows += _rate_claims(v, v, paper, t, RLRE.rlr_paper(v), ev)
    return rows


MNIST_CLAIMS = {
    "tuna_sgld_sooner": (
        "exact_mh.tuna_sgld_faster",
        "Tuna-SGLD reaches the accuracy level sooner (CPU-corrected time) than TunaMH",
    ),
    "minibatch_beats_full": (
        "exact_mh.mnist.minibatch_beats_full",
        "TunaMH and Tuna-SGLD both reach the accuracy level before every full-batch method (exact gradients)",
    ),
    "minibatch_beats_full_authors": (
        "exact_mh.mnist.minibatch_beats_full_authors",
        "TunaMH and Tuna-SGLD both reach the accuracy level before every full-batch method as the authors' "
        "code runs it (gradient -> 2 g / |g|)",
    ),
}


def _mnist_claims() -> list[dict]:
    """Yuan & Wang 2024, §5.3 / App. G.5 claims, one row each, from the experiment's per-(data set, step)
    verdicts
    (``results/exact_mh_mnist_claims.csv``, :func:`bench.experiments.exact_mh.mnist.mnist_claims_table`:
    the one implementation): held iff held at every (data set, step) setting run, as the paper states them
    ("for all step sizes"); "not run" without that table or without any row of the claim. One chain per
    setting: ``runs_held`` counts settings ("k/8 settings"), no value and no bootstrap interval."""
    from bench.experiments.exact_mh import verdicts as R

    ev = "results/exact_mh_mnist_claims.csv"
    t = _read("exact_mh_mnist_claims")
    rows = []
    for claim, (cid, st) in MNIST_CLAIMS.items():
        g = None if t is None else t[t["claim"] == claim]
        if g is None or g.empty:
            rows.append(_not_run(cid, st, ev))
            continue
        held = g["held"].astype(str).str.lower().eq("true")
        level = float(g["level_frac"].iloc[0])
        miss = [f"{d} eps={e:g}" for d, e, h in zip(g["data"], g["step"], held, strict=True) if not h]
        k = f"{int(held.sum())}/{len(g)}"
        rows.append(
            {
                "claim_id": cid,
                "paper": S001 + " §5.3, Figs. 2, 13",
                "statement": st,
                "evidence": ev,
                "measured": f"{k} (data set, step) settings at {level:g} x the best "
                "final accuracy" + (f"; not at {', '.join(miss)}" if miss else ""),
                "holds": bool(held.all()),
                "threshold": "every (data set, step) setting",
                "paper_value": "held (every step size)",
                "runs_held": f"{k} settings",
                "verdict": R.verdict_text(
                    bool(held.all()),
                    runs_held=k,
                    unit="settings",
                    note="one chain per setting, no bootstrap interval",
                ),
            }
        )
    return rows


TG_EV = "results/exact_mh_tg_ess.csv"
TG_AGG = {  # claim key -> claim id of the every-rate row (ids other code reads)
    "top_two": "exact_mh.tg_top_two",
    "minibatch_beats_full": "exact_mh.minibatch_beats_full",
    "minibatch_beats_full_authors": "exact_mh.minibatch_beats_full_authors",
    "minibatch_beats_full_authors_both": "exact_mh.minibatch_beats_full_authors_both",
}


def _tg_claims(ess: pd.DataFrame | None) -> list[dict]:
    """Truncated Gaussian (Tables 1/4): per claim one row over every acceptance rate (held iff held at each
    rate the claim's rows exist; ``value`` = the smallest ratio over those rates, its interval resampling
    runs at all rates together) and, per rate, the rows of :func:`_rate_claims` (``exact_mh.tg.*``)."""
    from bench.experiments.exact_mh import paper_values as PV
    from bench.experiments.exact_mh import verdicts as R

    st1 = "Poisson-MALA and Poisson-Barker rank top two in median ESS/s at every acceptance rate"
    st2 = "every exact minibatch method beats every full-batch method in median ESS/s"
    statements = {
        "top_two": st1,
        "minibatch_beats_full": st2,
        "minibatch_beats_full_authors": RLR_CLAIMS["minibatch_beats_full_authors"][0],
        "minibatch_beats_full_authors_both": RLR_CLAIMS["minibatch_beats_full_authors_both"][0],
    }
    if ess is None:
        return [_not_run(TG_AGG[k], statements[k], TG_EV) for k in R.CLAIM_KEYS]
    ci = _read_ci("tg")
    held = {k: [] for k in R.CLAIM_KEYS}
    ratios = {k: [] for k in R.CLAIM_KEYS}
    paper_ratios = {k: [] for k in R.CLAIM_KEYS}
    for rate, g in ess.groupby("target_rate"):  # the verdicts of exact_mh.verdicts, one implementation
        meds = dict(zip(g["method"], g["ess_s_med"].astype(float), strict=True))
        pm = R.paper_meds(PV.P_TG, rate)
        _, top_ok, _, beat_ok = R.top_two_and_beat(meds)
        held["top_two"].append(top_ok)
        held["minibatch_beats_full"].append(beat_ok)
        for k in ("minibatch_beats_full_authors", "minibatch_beats_full_authors_both"):
            if all(R.sides(meds, R.TIMING_OF[k])):
                held[k].append(R.top_two_and_beat(meds, R.TIMING_OF[k])[3])
        for k in R.CLAIM_KEYS:
            if k == "top_two" or all(R.sides(meds, R.TIMING_OF[k])):
                ratios[k].append(float(R.claim_ratio(meds, k)))
            # the paper prints one timing (its own): its ratio is the counterpart of every timing's
            paper_ratios[k].append(
                float(R.claim_ratio(pm, "top_two" if k == "top_two" else "minibatch_beats_full"))
            )
    rows = []
    for k in R.CLAIM_KEYS:
        if not held[k]:
            rows.append(_not_run(TG_AGG[k], statements[k], TG_EV))
            continue
        pr = [x for x in paper_ratios[k] if np.isfinite(x)]
        row = {
            "claim_id": TG_AGG[k],
            "paper": S001 + " Table 1/4",
            "statement": statements[k],
            "evidence": TG_EV,
            "measured": f"{sum(held[k])}/{len(held[k])} rates",
            "holds": all(held[k]),
            "threshold": "the ratio of each rate > 1 (value: the smallest over the rates)",
            "paper_value": f"{R.fmt_ratio(min(pr))} (smallest over the rates)" if pr else "-",
        }
        fin = [x for x in ratios[k] if np.isfinite(x)]
        rows.append(_with_ci(row, ci, "tg", k, R.EVERY, min(fin) if fin else math.nan))
    rows += _rate_claims("tg", "tg", S001 + " Table 4", ess, PV.P_TG, TG_EV, "truncated Gaussian")
    return rows


def _claims(quick: bool) -> list[dict]:
    from bench.experiments.exact_mh import verdicts as R

    rows = _tg_claims(_read("exact_mh_tg_ess"))
    rows += _rlr_claims()
    ks = _read("exact_mh_tg_ks")
    st3 = "SGLD's max KS is several (>= 2) times the Poisson methods' max KS"
    if ks is None:
        rows.append(_not_run("exact_mh.sgld_ks", st3, "results/exact_mh_tg_ks.csv"))
    else:
        sg = ks[ks["method"] == "sgld"]["ks_max"].mean()
        # the Poisson rows as published, as exact_mh.verdicts.ks_claim (not their +dense timing rows)
        po = ks[ks["method"].isin(R.MINI)]["ks_max"].max()
        row = {
            "claim_id": "exact_mh.sgld_ks",
            "paper": S001 + " Table 3",
            "statement": st3,
            "evidence": "results/exact_mh_tg_ks.csv",
            "measured": f"SGLD {sg:.3f} vs Poisson max {po:.3f} (x{sg / po:.2f})",
            "holds": bool(sg >= 2 * po),
        }
        rows.append(_with_ci(row, _read_ci("tg"), "tg", "sgld_ks", "-", sg / po))
    rows += _mnist_claims()
    return rows
