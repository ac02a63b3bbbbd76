"""The claims of Yuan & Wang 2024, §5.1-5.2 checked on replicated runs, one implementation for the
experiments' interval tables and verify (``verify/exact_mh_claims.py``).

* Poisson-MALA and Poisson-Barker are the top two in median ESS/s (:func:`top_two_and_beat`);
* every exact minibatch method beats every full-batch method, with the rows each timing compares
  (:data:`TIMINGS`, :func:`sides`): as published, full batch as the authors' code runs it, or both sides
  as the authors' code runs them;
* SGLD's max KS is at least :data:`KS_FACTOR` times the Poisson methods' (Table 3, :func:`ks_ratio`).

Each claim is decided on the aggregate (the paper's convention: per-coordinate ESS/s averaged over runs,
then min/med/max). The uncertainty of the ratio verdicts (:func:`claim_ratio`, :func:`ks_ratio`): a
bootstrap interval over runs and the runs in which the claim holds alone (:func:`ratio_intervals`,
:func:`ks_interval`, written by the experiments' summarize as ``exact_mh_<table>_claims_ci``), said in
words by :func:`verdict_text`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from bench.experiments.exact_mh import common as X

MINI = ("poisson_mh", "poisson_barker", "poisson_mala")
TOP_TWO = {"poisson_mala", "poisson_barker"}
KS_FACTOR = 2.0  # "several times": the registered claim exact_mh.sgld_ks uses >= 2


def _fmt(v: float, nd: int = 3) -> str:
    if v is None or not np.isfinite(v):
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 100:
        return f"{v:.1f}"
    return f"{v:.{nd}g}"


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
#                  reproduced).
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


def parse_paper(s: str) -> tuple[float, float, float] | None:
    """'(.05,.08,.47)' -> (0.05, 0.08, 0.47); '-' -> None."""
    if not isinstance(s, str) or not s.startswith("("):
        return None
    v = [float(x) for x in s.strip("()").split(",")]
    if len(v) != 3:
        raise ValueError(f"paper value {s!r} is not a (min, med, max) triple")
    return v[0], v[1], v[2]


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
    the full-batch side is the ``+recompute`` rows (the authors' uncached full-batch code),
    "authors_both" = and the minibatch side the ``+dense`` rows (their O(N) count bookkeeping)."""
    order = sorted((m for m in meds if not X.is_authors_timing(m)), key=meds.get, reverse=True)
    top = order[:2]
    mini_rows, full_rows = sides(meds, timing)
    mini = {m: meds[m] for m in mini_rows}
    full = {m: meds[m] for m in full_rows}
    if not mini or not full:
        return top, set(top) == TOP_TWO, "-", False
    wm, bf = min(mini, key=mini.get), max(full, key=full.get)
    ratio = float(beat_ratio(meds, timing))
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


AUTHORS_CLAIM = {
    "authors": "... beats every full-batch method timed as the authors' code runs it (energy=recompute)",
    "authors_both": "... beats every full-batch method, both sides as the authors' code runs them "
    "(full batch energy=recompute, minibatch counts=dense)",
}


# ------------------------------------------------------------------ uncertainty of the ratio verdicts
# Each ESS/s claim above is decided on one ratio of median ESS/s (the paper's convention: per-coordinate
# ESS/s averaged over runs, then the median over coordinates; X._ess_table): :func:`claim_ratio`. The
# same function gives the point value (from the ESS table, verify/families/exact_mh.py), the value of
# every bootstrap resample of runs and the value of every single run (:func:`ratio_intervals`).
CLAIM_KEYS = (
    "top_two",
    "minibatch_beats_full",
    "minibatch_beats_full_authors",
    "minibatch_beats_full_authors_both",
)
TIMING_OF = dict(zip(CLAIM_KEYS[1:], TIMINGS, strict=True))
BOOT_N = 10_000  # resamples: the 2.5 / 97.5 % ends move < 0.4 % of the value between seeds (paper tables)
BOOT_SEED = 20240521  # fixed: the interval is a deterministic function of the table
CI_LEVEL = 0.95
MIN_BOOT_RUNS = 5  # fewer runs: no interval (a percentile bootstrap of 1-4 runs says nothing)
EVERY = "every"  # the ``rate`` of a claim decided at every acceptance rate (the minimum over the rates)
CI_COLUMNS = [
    "claim",
    "rate",
    "value",
    "ci_low",
    "ci_high",
    "threshold",
    "held",
    "runs_held",
    "runs_decided",
    "runs",
    "n_boot",
    "boot_valid",
    "seed",
    "level",
]


def top_two_ratio(meds: dict):
    """min(Poisson-MALA, Poisson-Barker) / the largest other row as published (> 1 iff they are the top
    two, :func:`top_two_and_beat`); NaN without both of them or without a third row. Values may be
    arrays (one per resample)."""
    cached = [m for m in meds if not X.is_authors_timing(m)]
    others = [m for m in cached if m not in TOP_TWO]
    if not TOP_TWO <= set(cached) or not others:
        return math.nan
    top = np.min([meds[m] for m in sorted(TOP_TWO)], axis=0)
    return top / np.max([meds[m] for m in others], axis=0)


def beat_ratio(meds: dict, timing: str = "ours"):
    """Worst minibatch / best full-batch median of the rows ``timing`` compares (:func:`sides`; > 1 iff
    every minibatch method beats every full-batch one); NaN if a side is missing. Values may be arrays."""
    mini, full = sides(meds, timing)
    if not mini or not full:
        return math.nan
    return np.min([meds[m] for m in mini], axis=0) / np.max([meds[m] for m in full], axis=0)


def claim_ratio(meds: dict, claim: str):
    """The ratio the verdict of ``claim`` (:data:`CLAIM_KEYS`) compares with 1."""
    if claim == "top_two":
        return top_two_ratio(meds)
    return beat_ratio(meds, TIMING_OF[claim])


def _run_blocks(g: pd.DataFrame, col: str, runs: list) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per method of one rate: (positions of its rows' runs in ``runs``, its per-coordinate values, one
    row per cell)."""
    pos = {r: k for k, r in enumerate(runs)}
    out = {}
    for m, gm in g.groupby("method", sort=False):
        out[m] = (
            np.array([pos[r] for r in gm["run"]], int),
            np.stack([np.asarray(v, float) for v in gm[col]]),
        )
    return out


def weighted_medians(blocks: dict, w: np.ndarray) -> dict[str, np.ndarray]:
    """Median over coordinates of each method's per-coordinate mean over runs weighted by ``w`` (one row
    per resample, one column per run; a run drawn k times counts k times): with weights 1 it is the ESS
    table's ``ess_s_med`` (X._ess_table). NaN where a resample holds none of the method's runs."""
    out = {}
    for m, (pos, e) in blocks.items():
        wm = w[:, pos]
        tot = wm.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = (wm @ e) / tot[:, None]
        out[m] = np.median(mean, axis=1)
    return out


def resample_weights(n_runs: int, n_boot: int = BOOT_N, seed: int = BOOT_SEED) -> np.ndarray:
    """``n_boot`` resamples of ``n_runs`` runs with replacement, as counts (one row per resample)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_runs, np.full(n_runs, 1.0 / n_runs), size=n_boot).astype(float)


def percentile_interval(stats: np.ndarray, level: float = CI_LEVEL) -> tuple[float, float, int]:
    """(low, high, resamples with a value) of the percentile interval of the finite ``stats``."""
    s = np.asarray(stats, float)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return math.nan, math.nan, 0
    a = (1.0 - level) / 2.0
    lo, hi = np.quantile(s, [a, 1.0 - a])
    return float(lo), float(hi), int(s.size)


def _held(v: float, threshold: float, strict: bool) -> bool | None:
    if not np.isfinite(v):
        return None
    return bool(v > threshold) if strict else bool(v >= threshold)


def _interval_row(claim, rate, point, boot, single, threshold, strict, n_runs, n_boot, seed, level) -> dict:
    """One row of a claims-interval table from the statistic at weights 1 (``point``), per resample
    (``boot``; None: too few runs) and per single run (``single``)."""
    held_runs = [_held(float(v), threshold, strict) for v in single]
    dec = [h for h in held_runs if h is not None]
    lo, hi, valid = percentile_interval(boot, level) if boot is not None else (math.nan, math.nan, 0)
    return {
        "claim": claim,
        "rate": rate,
        "value": float(point),
        "ci_low": lo,
        "ci_high": hi,
        "threshold": threshold,
        "held": _held(float(point), threshold, strict),
        "runs_held": f"{sum(dec)}/{len(dec)}",
        "runs_decided": len(dec),
        "runs": n_runs,
        "n_boot": n_boot if boot is not None else 0,
        "boot_valid": valid,
        "seed": seed,
        "level": level,
    }


def ratio_intervals(
    df: pd.DataFrame,
    col: str = "ess_s",
    n_boot: int = BOOT_N,
    seed: int = BOOT_SEED,
    level: float = CI_LEVEL,
    claims: tuple[str, ...] = CLAIM_KEYS,
) -> pd.DataFrame:
    """Bootstrap intervals over runs of the ESS/s claims of one table (cells of one truncated Gaussian or
    robust-regression variant: ``method``, ``target_rate``, ``run``, per-coordinate ``col``): per claim and
    rate, the ratio :func:`claim_ratio` at weights 1 (= the verdict's value from the ESS table), its 95 %
    percentile interval over ``n_boot`` resamples of runs with replacement (the same resamples at every
    rate and for every claim: a run is the unit, its cells at all rates together), and the runs in which
    the claim holds on that run alone; plus per claim a row ``rate`` = :data:`EVERY`, the minimum over the
    rates at which the claim is decided (> 1 iff it holds at every rate), resampled the same way."""
    if not {"method", "target_rate", "run", col} <= set(df.columns):
        return pd.DataFrame(columns=CI_COLUMNS)  # cells without runs (or values): no interval
    g_all = df[df["target_rate"].map(_key) >= 0].copy()
    runs = sorted(set(g_all["run"]))
    n = len(runs)
    if n == 0:
        return pd.DataFrame(columns=CI_COLUMNS)
    boot_on = n >= MIN_BOOT_RUNS
    w_boot = resample_weights(n, n_boot, seed) if boot_on else np.zeros((0, n))
    w = np.vstack([np.ones((1, n)), np.eye(n), w_boot])  # point, single runs, resamples
    rows, per_claim = [], {c: [] for c in claims}
    for rate in sorted(g_all["target_rate"].unique()):
        meds = weighted_medians(_run_blocks(g_all[g_all["target_rate"] == rate], col, runs), w)
        for c in claims:
            stat = np.asarray(claim_ratio(meds, c), float) * np.ones(w.shape[0])
            if not np.isfinite(stat[0]):
                continue  # not decided at this rate (a compared row is missing)
            per_claim[c].append(stat)
            rows.append(
                _interval_row(
                    c,
                    _rate(rate),
                    stat[0],
                    stat[1 + n :] if boot_on else None,
                    stat[1 : 1 + n],
                    1.0,
                    True,
                    n,
                    n_boot,
                    seed,
                    level,
                )
            )
    for c in claims:
        if per_claim[c]:
            stat = np.min(np.vstack(per_claim[c]), axis=0)  # NaN if any rate undecided in a resample
            rows.append(
                _interval_row(
                    c,
                    EVERY,
                    stat[0],
                    stat[1 + n :] if boot_on else None,
                    stat[1 : 1 + n],
                    1.0,
                    True,
                    n,
                    n_boot,
                    seed,
                    level,
                )
            )
    return pd.DataFrame(rows, columns=CI_COLUMNS)


def ks_ratio(means: dict) -> float:
    """SGLD's mean max KS / the largest mean max KS of the Poisson rows as published (``means``: per
    (method, rate key) the mean over runs of ``ks_max``, as the KS table); values may be arrays."""
    sg = [v for (m, _), v in means.items() if m == "sgld"]
    po = [v for (m, _), v in means.items() if m in MINI]
    if not sg or not po:
        return math.nan
    return np.mean(sg, axis=0) / np.max(po, axis=0)


def ks_interval(
    df: pd.DataFrame, n_boot: int = BOOT_N, seed: int = BOOT_SEED, level: float = CI_LEVEL
) -> pd.DataFrame:
    """The interval row of the KS claim (Table 3, :func:`ks_claim`): :func:`ks_ratio` on the run means of
    ``ks_max`` per (method, rate), resampled over runs as :func:`ratio_intervals`; held iff >= KS_FACTOR."""
    if not {"method", "target_rate", "run", "ks_max"} <= set(df.columns):
        return pd.DataFrame(columns=CI_COLUMNS)
    g = df[df["method"].isin(("sgld", *MINI))]
    runs = sorted(set(g["run"]))
    n = len(runs)
    if g.empty or n == 0:
        return pd.DataFrame(columns=CI_COLUMNS)
    boot_on = n >= MIN_BOOT_RUNS
    w_boot = resample_weights(n, n_boot, seed) if boot_on else np.zeros((0, n))
    w = np.vstack([np.ones((1, n)), np.eye(n), w_boot])
    pos = {r: k for k, r in enumerate(runs)}
    means = {}
    for (m, k), gm in g.assign(_k=g["target_rate"].map(_key)).groupby(["method", "_k"], sort=False):
        blk = {m: (np.array([pos[r] for r in gm["run"]], int), gm["ks_max"].to_numpy(float)[:, None])}
        means[(m, k)] = weighted_medians(blk, w)[m]  # one coordinate: the weighted run mean
    stat = np.asarray(ks_ratio(means), float) * np.ones(w.shape[0])
    if not np.isfinite(stat[0]):
        return pd.DataFrame(columns=CI_COLUMNS)
    row = _interval_row(
        "sgld_ks",
        "-",
        stat[0],
        stat[1 + n :] if boot_on else None,
        stat[1 : 1 + n],
        KS_FACTOR,
        False,
        n,
        n_boot,
        seed,
        level,
    )
    return pd.DataFrame([row], columns=CI_COLUMNS)


CI_CAPTION = (
    "uncertainty of the claim verdicts: value = the ratio the verdict compares with its threshold "
    "(top_two: min(Poisson-MALA, Poisson-Barker) / the largest other median ESS/s; minibatch_beats_full*: "
    "worst minibatch / best full-batch median ESS/s in the timing the claim names; sgld_ks: SGLD's max KS / "
    "the Poisson methods' largest), computed as the ESS table computes its medians; rate 'every' = the "
    "minimum over the rates (the claim at every rate); ci_low / ci_high = 95 % percentile interval over "
    f"n_boot resamples of runs with replacement (seed {BOOT_SEED}; no interval below {MIN_BOOT_RUNS} runs); "
    "runs_held = runs in which the claim holds on that run alone."
)


def fmt_ratio(v: float) -> str:
    """'x1.30' (two decimals; no decimals from 100 on)."""
    if v is None or not np.isfinite(v):
        return "-"
    return f"x{v:.0f}" if abs(v) >= 100 else f"x{v:.2f}"


def verdict_text(
    held: bool | None,
    value: float | None = None,
    ci_low: float | None = None,
    ci_high: float | None = None,
    runs_held: str = "",
    threshold: float = 1.0,
    unit: str = "runs",
    note: str = "",
) -> str:
    """'holds (x1.30 [1.24, 1.36], 96/100 runs)'; 'does not hold (...)'; 'a tie within the interval:
    holds at the point value (...)' when the interval contains the threshold; 'not run'."""
    if held is None:
        return "not run" + (f" ({note})" if note else "")
    parts = []
    has_ci = ci_low is not None and ci_high is not None and np.isfinite(ci_low) and np.isfinite(ci_high)
    if value is not None and np.isfinite(value):
        txt = fmt_ratio(value)
        if has_ci:
            txt += f" [{fmt_ratio(ci_low)[1:]}, {fmt_ratio(ci_high)[1:]}]"
        if threshold != 1.0:
            txt += f" vs >= x{threshold:g}"
        parts.append(txt)
    if runs_held:
        parts.append(f"{runs_held} {unit}")
    if note:
        parts.append(note)
    inner = f" ({', '.join(parts)})" if parts else ""
    word = "holds" if held else "does not hold"
    if has_ci and ci_low <= threshold <= ci_high:
        return f"a tie within the interval: {word} at the point value{inner}"
    return word + inner
