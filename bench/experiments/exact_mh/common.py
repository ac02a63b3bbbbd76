"""What the exact_mh experiments share (Yuan & Wang 2024, §5): method labels and the row labels of the
authors'-code timings, the conversion of the authors' step sizes, the Best-over-rates rule of the paper's
Tables 1 / 2 and of the Best columns of Tables 4-7, the per-chain metrics, the ESS/s table and figure.

Step sizes: setting ``step_mode`` = ``"authors"`` (the authors' hand-tuned h,
:data:`~bench.experiments.exact_mh.paper_values.AUTHORS_H`, converted to our proposal scale: sigma =
sqrt(2) h for Langevin-type, sigma = h for RW/Barker, HMC eps = h) or ``"tuned"``
(:func:`samplers.tuning.tune_step` pilot runs to the target acceptance). Every table carries the paper's
number (``paper_value``, :mod:`bench.experiments.exact_mh.paper_values`); ratios between methods are the
comparison to make.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from bench import metrics as MT
from bench.experiments.exact_mh.paper_values import AUTHORS_H

FAM = "exact_mh"
RATES = (0.25, 0.4, 0.55)
# Full-batch methods that take ``energy`` (samplers.methods.baselines.energy_flag): "cached" = the
# algorithm as published (default), "recompute" = the authors' code (log pi at theta and theta' every
# step, nothing cached), whose timings are behind the paper's numbers.
FULL_BATCH = ("rwm", "mala", "barker", "hmc")
RECOMPUTE = "+recompute"
# Poisson minibatch methods that take ``counts`` (samplers.kernels.poisson_mh.counts_flag): "sparse" = the
# algorithm as published (O(B) an iteration, default), "dense" = the authors' code (a length-N count vector
# allocated and scanned, phi recomputed on S, every iteration): the same chain,
# timed as the authors' code runs it. Their "+dense" rows are the minibatch side of the authors' timing.
COUNTS_METHODS = ("poisson_mh", "poisson_mala", "poisson_barker")
DENSE = "+dense"
AUTHORS_TIMING = (RECOMPUTE, DENSE)  # row-label suffixes of the authors'-code timings
LANGEVIN = {"mala", "poisson_mala", "tuna_sgld"}
LABEL = {
    "rwm": "MH",
    "mala": "MALA",
    "barker": "Barker",
    "hmc": "HMC",
    "sgld": "SGLD",
    "poisson_mh": "PoissonMH",
    "poisson_barker": "Poisson-Barker",
    "poisson_mala": "Poisson-MALA",
    "tuna_mh": "TunaMH",
    "tuna_sgld": "Tuna-SGLD",
}


def is_authors_timing(label: str) -> bool:
    """A table row timed as the authors' code runs it (``+recompute`` full batch, ``+dense`` minibatch)."""
    return label.endswith(AUTHORS_TIMING)


def base_method(label: str) -> str:
    """Registry id of a table row's method (``"mala+recompute"`` -> ``"mala"``, ``"poisson_mh+dense"`` ->
    ``"poisson_mh"``)."""
    for sfx in AUTHORS_TIMING:
        if label.endswith(sfx):
            return label[: -len(sfx)]
    return label


def label_of(method: str) -> str:
    """Display name of a table row's method (the authors' recompute / dense-count variants marked)."""
    b = base_method(method)
    sfx = {RECOMPUTE: " (authors' recompute)", DENSE: " (authors' counts)"}
    return LABEL.get(b, b) + next((v for k, v in sfx.items() if method.endswith(k)), "")


def _timings(s: dict, m: str, run: int) -> list[tuple[str, dict]]:
    """``(cell-id suffix, params)`` of each timing of method ``m`` in run ``run`` for setting
    ``energies``: "cached" = the algorithm as published; "recompute" = as the authors' code runs it, i.e.
    ``energy="recompute"`` for a full-batch method and ``counts="dense"`` for a Poisson minibatch one
    (:data:`COUNTS_METHODS`; cell suffix ``_dense``) in the runs below the optional grid key
    ``dense_runs`` (absent: every run; 0: none). The cached cells' params carry no ``counts``, so a cell
    as published has the same params, and config hash, whether or not dense cells exist."""
    ens = list(s.get("energies", ["cached"]))
    if m in FULL_BATCH:
        return [("" if en == "cached" else f"_{en}", {"energy": en}) for en in ens]
    dense = m in COUNTS_METHODS and "recompute" in ens and run < s.get("dense_runs", run + 1)
    return [("", {"energy": "cached"})] + (
        [("_dense", {"energy": "cached", "counts": "dense"})] if dense else []
    )


def row_label(m: str, params: dict) -> str:
    """Table-row method of a cell of method ``m`` (HMC already as ``hmc<L>``): ``+recompute`` /
    ``+dense`` for the authors'-code timings (:func:`_timings`)."""
    if params.get("energy", "cached") != "cached":
        return m + RECOMPUTE
    return m + (DENSE if params.get("counts", "sparse") == "dense" else "")


def _paper(table: dict, method: str, rate: float | None) -> str:
    vals = table.get(base_method(method))
    if vals is None:
        return "-"
    if rate is None or not np.isfinite(rate):
        return vals[0]
    return vals[RATES.index(float(rate))] if float(rate) in RATES else "-"


def _best_of(triples: list[tuple[float, float, float]], rates: list[float]) -> tuple[float, tuple, int]:
    """Yuan & Wang 2024's "Best" of one method over its acceptance rates: (the rate of the largest median,
    ties the lowest rate; the per-column max of the (min, med, max) triples over the rates; the index of
    that rate). Every Best triple the paper prints is the per-column max (27 of 27 rows of Tables 4-7, and
    Tables 1, 2 equal to them), not one rate's triple (which differs for TG MALA, Barker and
    Poisson-Barker)."""
    j = min(range(len(rates)), key=lambda i: (-triples[i][1], rates[i]))
    return rates[j], tuple(max(t[k] for t in triples) for k in range(3)), j


def paper_best(paper: dict, method: str) -> tuple[float, str] | None:
    """The paper's Best of ``method`` (:func:`_best_of` over its printed rates): the rate of the largest
    printed median and the per-column max of its printed (min, med, max), in the paper's own digits
    (TG MALA: 0.4, "(.10,.19,2.77)"); None where the paper prints no row for it. A ``+recompute`` row
    gets its cached row's value, as in :func:`_paper`."""
    vals = paper.get(base_method(method))
    if not vals:
        return None
    printed = [
        (r, str(v).strip("()").split(",")) for r, v in zip(RATES, vals, strict=True) if str(v).startswith("(")
    ]
    if not printed:
        return None
    rate, best, _ = _best_of([tuple(float(x) for x in tok) for _, tok in printed], [r for r, _ in printed])
    # each column's printed digits at the rate that gives its max
    cols = [next(tok[k] for _, tok in printed if float(tok[k]) == best[k]) for k in range(3)]
    return rate, "(" + ",".join(cols) + ")"


BEST_COLS = ("ess_s_min", "ess_s_med", "ess_s_max")


def best_rate_rows(t: pd.DataFrame, vals: str | pd.Series | None = None) -> pd.DataFrame:
    """Each method's Best over its acceptance rates in a per-rate ESS/s table, by the paper's rule
    (:func:`_best_of`: Yuan & Wang 2024, Tables 1, 2 and the Best columns of Tables 4-7): ``best_min`` /
    ``best_med`` / ``best_max`` = the per-column max of (min, med, max) over the method's rates,
    ``best_rate`` = the rate of its largest median (ties: the lowest rate), ``rates`` = how many rates it
    has, ``row`` = the index in ``t`` of its row at ``best_rate``. ``vals`` = the (min, med, max) per row of
    ``t`` (a column name or values aligned with its index; default the columns :data:`BEST_COLS`). Methods
    in the table's order; rates whose median is NaN are left out, a method with none has no row. The one
    Best of ``truncated_gaussian.tg_summarize``, ``robust_regression.rlr_summarize`` and
    ``report.best_rate_markdown``."""
    if vals is None:
        trip = pd.Series(list(zip(*(t[c].astype(float) for c in BEST_COLS), strict=True)), index=t.index)
    else:
        trip = t[vals] if isinstance(vals, str) else pd.Series(vals, index=t.index)
    rows = []
    for m in dict.fromkeys(t["method"]):
        idx = [i for i in t.index[t["method"] == m] if np.isfinite(float(trip[i][1]))]
        if not idx:
            continue
        rate, best, j = _best_of(
            [tuple(float(x) for x in trip[i]) for i in idx], [float(t.at[i, "target_rate"]) for i in idx]
        )
        rows.append(
            {
                "method": m,
                "best_rate": rate,
                "best_min": best[0],
                "best_med": best[1],
                "best_max": best[2],
                "rates": len(idx),
                "row": idx[j],
            }
        )
    cols = ["method", "best_rate", "best_min", "best_med", "best_max", "rates", "row"]
    return pd.DataFrame(rows, columns=cols)


BEST_CAPTION = (
    "each method's Best over the acceptance rates, the paper's rule: (min, med, max) ESS/s = the per-column "
    "max over the rates; best_rate = the rate of the largest median; paper_value / paper_rate = the paper's "
    "Best by the same rule and the rate of its largest median"
)


def best_rate_table(t: pd.DataFrame, paper: dict) -> pd.DataFrame:
    """The Best table of a per-rate ESS/s table (Yuan & Wang 2024, Tables 1 / 2; :func:`best_rate_rows`): ours
    (``ess_s_min`` / ``ess_s_med`` / ``ess_s_max`` = per-column max over our rates, ``best_rate`` = the
    rate of our largest median, ``capped_runs`` = the most at any of the rates), beside the paper's Best
    by the same rule (``paper_value``, '-' where the paper prints no row; ``paper_rate`` = the rate of its
    largest printed median)."""
    b = best_rate_rows(t)
    pb = [paper_best(paper, m) for m in b["method"]]
    out = pd.DataFrame(
        {
            "method": b["method"],
            "label": [label_of(m) for m in b["method"]],
            "best_rate": b["best_rate"],
            "rates": b["rates"],
            "runs": [t.at[i, "runs"] for i in b["row"]] if "runs" in t else np.nan,
            "ess_s_min": b["best_min"],
            "ess_s_med": b["best_med"],
            "ess_s_max": b["best_max"],
            "capped_runs": [t.loc[t["method"] == m, "capped_runs"].max() for m in b["method"]]
            if "capped_runs" in t
            else np.nan,
            "paper_rate": [p[0] if p else np.nan for p in pb],
            "paper_value": [p[1] if p else "-" for p in pb],
        }
    )
    return out.reset_index(drop=True)


def _sigma(method: str, h: float) -> float:
    """Authors' h -> our proposal scale (the authors' MALA-type proposal is theta + h^2 g + sqrt(2) h xi)."""
    return math.sqrt(2.0) * h if method in LANGEVIN else h


def _hyper(method: str, s: dict, step: float, energy: str = "cached", counts: str = "sparse") -> dict:
    hp: dict[str, Any] = {"step": step}
    if energy != "cached":
        hp["energy"] = energy
    if counts != "sparse":
        hp["counts"] = counts
    if method.startswith("poisson"):
        hp["lam_mult"] = s["lam_mult"]
    if method == "sgld":
        hp["batch"] = s.get("sgld_batch", 512)
    if method == "hmc":
        hp["n_leapfrog"] = s.get("n_leapfrog", 10)
    return hp


# Variants with no authors' step sizes (the authors' d = 50 h were hand-tuned at their code constants):
# their cells tune each step to the target acceptance (samplers.tuning.tune_step, as the paper describes:
# "the step size of each algorithm is tuned"), the pilots starting at the named variant's authors' h.
RLR_TUNED = {"rlr_50d_paper": "rlr_50d"}


def _step(method: str, s: dict, key: str, rate: float, problem, seed) -> float:
    """The step of ``method`` at acceptance ``rate``: the authors' h of row ``s["h_row"]`` (default the
    method's own row) of ``AUTHORS_H[key]``, converted, or tuned to the rate (``step_mode`` "tuned", or a
    variant with no authors' step sizes, :data:`RLR_TUNED`; the pilots start at that authors' h)."""
    if method == "sgld":
        return _sigma("mala", s.get("sgld_h", 0.01))
    row = s.get("h_row", method)
    key_h = RLR_TUNED.get(key, key)
    if s["step_mode"] == "authors" and key not in RLR_TUNED:
        return _sigma(method, AUTHORS_H[key][row][RATES.index(rate)])
    from samplers.tuning import tune_step

    hp = _hyper(method, s, 0.1)
    hp.pop("step")
    step, _ = tune_step(
        method,
        problem,
        rate,
        seed,
        pilot_iters=s.get("pilot_iters", 500),
        step0=_sigma(method, AUTHORS_H[key_h].get(row, AUTHORS_H[key_h].get(method, (0.1,) * 3))[1]),
        **hp,
    )
    return step


def finish_panels(out, fig, ax, name: str, caption: str, ylabels=(), legend_fs: int = 7) -> None:
    """The common ending of a panel figure: y labels on the first column (one per row), the legend of
    the first panel, tight layout, saved through ``out.figure``."""
    for i, yl in enumerate(ylabels):
        ax[i][0].set_ylabel(yl)
    ax[0][0].legend(fontsize=legend_fs)
    fig.tight_layout()
    out.figure(name, fig, caption=caption)


def _chain_metrics(res, ref_mean, ref_var, n_ckpt: int = 60) -> dict:
    rep = MT.ess_report(res.samples, res.sample_seconds)
    ck = np.unique(np.geomspace(10, res.samples.shape[0], n_ckpt).astype(int))
    mr = MT.mse_running(res.samples, ref_mean, ref_var, checkpoints=ck)
    return {
        "accept": res.accept_rate,
        "mean_batch": res.mean_batch,
        "sec_per_iter": res.sample_seconds / res.n_iter,
        "seconds": res.sample_seconds,
        "ess_s": (np.asarray(rep["ess_authors"]) / res.sample_seconds).tolist(),
        "ess_s_identity": (np.asarray(rep["ess_identity"]) / res.sample_seconds).tolist(),
        "n_draws": int(rep["n_draws"]),
        "mse_t": (ck / res.n_iter * res.sample_seconds).tolist(),
        "mse_mean": np.asarray(mr.mse_mean).tolist(),
        "mse_var": (np.asarray(mr.mse_var).tolist() if getattr(mr, "mse_var", None) is not None else []),
    }


CAPPED_CAPTION = (
    "capped_runs = runs in which some coordinate's ESS sits at the estimator's cap n log10 n "
    "(an antithetic chain: the value is a lower bound, not a measurement)."
)


def _finite(v) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and bool(np.isfinite(v))


def capped_count(row, ess_col: str = "ess_s", kind: str = "authors") -> float:
    """Coordinates of one cell row whose ESS (= ESS/s x seconds) sits at the estimator's cap
    (:func:`bench.metrics.ess_cap`; antithetic: the value is a lower bound), with n = the row's
    ``n_draws`` or, for records without it, seconds / sec_per_iter (these cells keep every
    draw); NaN if neither is known."""
    sec, spi, n = row.get("seconds"), row.get("sec_per_iter"), row.get("n_draws")
    if not (_finite(sec) and _finite(spi) and spi > 0):
        return np.nan
    n = int(n) if _finite(n) else int(round(sec / spi))
    return float(len(MT.capped_dims(np.asarray(row[ess_col], float) * sec, n, kind)))


def _ess_table(ok: pd.DataFrame, paper: dict) -> pd.DataFrame:
    rows = []
    for (m, rate), g in ok.groupby(["method", "target_rate"], dropna=False, sort=False):
        e = np.mean(np.stack([np.asarray(v) for v in g["ess_s"]]), axis=0)
        caps = np.array([capped_count(r) for _, r in g.iterrows()])
        rows.append(
            {
                "method": m,
                "label": label_of(m),
                "target_rate": rate,
                "accept": g["accept"].mean(),
                "step": g["step"].mean(),
                "runs": len(g),
                "mean_batch": g["mean_batch"].mean(),
                "sec_per_iter": g["sec_per_iter"].mean(),
                "ess_s_min": e.min(),
                "ess_s_med": float(np.median(e)),
                "ess_s_max": e.max(),
                # runs with a coordinate at the ESS cap (antithetic: a lower bound; metrics.ess_cap)
                "capped_runs": int((caps > 0).sum()) if np.isfinite(caps).any() else np.nan,
                "paper_value": _paper(paper, m, rate),
            }
        )
    return pd.DataFrame(rows)


def mean_mse_curves(g: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run-averaged MSE curve of one method: (seconds, iterations, MSE) at the cells' checkpoints
    (the same iteration checkpoints in every run of a method; truncated to the shortest)."""
    n = min(len(x) for x in g["mse_mean"])
    mse = np.mean([np.asarray(x[:n], dtype=float) for x in g["mse_mean"]], axis=0)
    ts = [np.asarray(x[:n], dtype=float) for x in g["mse_t"]]
    its = [t / sp for t, sp in zip(ts, g["sec_per_iter"], strict=True)]
    return np.mean(ts, axis=0), np.mean(its, axis=0), mse


def ess_figure(t: pd.DataFrame, name: str, what: str, out) -> None:
    """Median ESS/s per method and acceptance rate (bars: min..max over coordinates), the paper's
    median as a black tick where it printed one: the figure of an ESS/s table."""
    import matplotlib.pyplot as plt

    rates = sorted(t["target_rate"].dropna().unique())
    meths = list(dict.fromkeys(t["method"]))
    # ~0.6 in per method group, capped at 16 in: a 16-row table stays readable at page width
    fig, ax = plt.subplots(figsize=(min(0.6 * len(meths) * max(len(rates), 1) ** 0.5 + 3, 16.0), 4.2))
    w = 0.8 / max(len(rates), 1)
    ticked = False
    for j, rate in enumerate(rates):
        sub = t[t["target_rate"] == rate].set_index("method")
        xs = [k + (j - (len(rates) - 1) / 2) * w for k, m in enumerate(meths) if m in sub.index]
        ms = [m for m in meths if m in sub.index]
        med = sub.loc[ms, "ess_s_med"].to_numpy(float)
        lo = med - sub.loc[ms, "ess_s_min"].to_numpy(float)
        hi = sub.loc[ms, "ess_s_max"].to_numpy(float) - med
        ax.bar(xs, med, width=w, yerr=[lo, hi], capsize=2, label=f"acceptance {rate:g}")
        for x, m in zip(xs, ms, strict=True):
            pv = str(sub.loc[m, "paper_value"])
            if pv.startswith("("):
                label = None if ticked else "paper's median (its machine)"
                ax.scatter(
                    [x],
                    [float(pv.strip("()").split(",")[1])],
                    marker="_",
                    s=120,
                    c="k",
                    zorder=3,
                    label=label,
                )
                ticked = True
    ax.set_yscale("log")
    ax.set_xticks(range(len(meths)), [label_of(m) for m in meths], rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("ESS/s (median; bars min..max)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    out.figure(name, fig, caption=f"{what}: median ESS/s per method; black ticks = paper medians.")
