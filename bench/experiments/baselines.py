"""Experiments of the full-batch baselines: ``baselines_smoke`` exercises the workflow end to end.

Every baseline method (registry ids ``rwm mala barker hmc sgld`` on the tall-data targets
``gaussian_location`` and ``truncated_gaussian`` at their smoke sizes, ``gibbs`` on ``potts_grid``)
runs as one cell per (method, target, replicate). Step sizes of the MH-type methods are tuned to
an acceptance rate by pilot runs (:func:`samplers.tuning.tune_step`; the papers hand-tune to
0.25/0.4/0.55, Yuan & Wang 2024, §5.1); SGLD has no acceptance test and uses a fixed step per target.
Another registered method runs when a config adds it to ``tall_methods`` (a selection: no other cell's
hash changes), with its ``method_settings`` if the config gives any (``accept_target``, ``hyper``) and
otherwise its step tuned to 0.4 (:func:`bench.cells.method_hyper`).
Table: ESS/s (min / median / max over dimensions) with both ESS estimators named (``identity`` =
the paper's, Yuan & Wang 2024, §5.1; ``authors`` = MCMCDiagnosticTools 0.3.x bulk, split, lag cap 250),
averaged over replicates; figure: median ESS/s per method and target.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from bench.experiment import Experiment

TALL_METHODS = ("rwm", "mala", "barker", "hmc", "sgld")
TALL_TARGETS = ("gaussian_location", "truncated_gaussian")


def _settings(n_iter: int, reps: int, pilot_iters: int, N: int) -> dict[str, Any]:
    return {
        "n_iter": n_iter,
        "burn_in_fraction": 0.2,
        "replicates": reps,
        "target_scale": "smoke",
        "target_params": {t: {"N": N} for t in TALL_TARGETS},
        "tall_methods": list(TALL_METHODS),
        "tall_targets": list(TALL_TARGETS),
        "accept_target": {"rwm": 0.25, "mala": 0.55, "barker": 0.4, "hmc": 0.65},
        "pilot_iters": pilot_iters,
        # SGLD has no acceptance rate to tune to. Its step is the noise sd sigma (drift sigma^2/2 *
        # gradient, samplers/kernels/sgld.py): about half the smallest posterior sd of each target
        # at N = 500, so sigma^2/2 * (max posterior precision) <= ~0.25 (stable, mixes in ~10 steps).
        "sgld": {
            "gaussian_location": {"step": 0.02, "batch": 100},
            "truncated_gaussian": {"step": 0.3, "batch": 200},
        },
        "gibbs": {"target": "potts_grid", "scans": ["random", "systematic"]},
    }


SETTINGS = {
    "smoke": _settings(n_iter=1_000, reps=1, pilot_iters=200, N=500),
    "paper": _settings(n_iter=20_000, reps=3, pilot_iters=500, N=2_000),
}


def cells(settings: dict) -> list[dict]:
    """One cell per method x target x replicate (+ gibbs x scan x replicate)."""
    out = []
    for rep in range(int(settings["replicates"])):
        for target in settings["tall_targets"]:
            for method in settings["tall_methods"]:
                out.append(
                    {
                        "cell": f"{method}__{target}__r{rep}",
                        "method": method,
                        "target": target,
                        "rep": rep,
                    }
                )
        for scan in settings["gibbs"]["scans"]:
            out.append(
                {
                    "cell": f"gibbs-{scan}__{settings['gibbs']['target']}__r{rep}",
                    "method": "gibbs",
                    "target": settings["gibbs"]["target"],
                    "scan": scan,
                    "rep": rep,
                }
            )
    return out


def run_cell(params: dict, seed: np.random.SeedSequence, ctx: Any) -> list[dict]:
    """Build the target, tune the step (MH types), run one chain, report ESS/s both ways."""
    from bench.cells import child_seed, method_hyper
    from bench.metrics import ess_report, ks_2samp_per_dim
    from samplers import registry

    s = ctx.settings
    method, target = params["method"], params["target"]
    problem = registry.build_problem(
        target, child_seed(seed, 0), scale=s["target_scale"], **s["target_params"].get(target, {})
    )
    hyper: dict[str, Any] = {}
    tuned_acc = float("nan")
    if method == "gibbs":
        hyper["scan"] = params["scan"]
    elif method == "sgld":
        hyper.update(s["sgld"][target])
    else:  # any other registered method: its settings from the config, its step tuned if none is given
        hyper, tuned_acc = method_hyper(params, s, problem, child_seed(seed, 1), int(s["pilot_iters"]))
    n_iter = int(s["n_iter"])
    res = registry.run(method, problem, n_iter, child_seed(seed, 2), **hyper)
    burn = int(s["burn_in_fraction"] * res.samples.shape[0])
    rep = ess_report(res.samples.astype(float), res.sample_seconds, burn_in=burn)
    row = {
        "method": method,
        "target": target,
        "rep": params["rep"],
        "scan": params.get("scan", ""),
        "dim": problem.dim,
        "n_iter": n_iter,
        "step": hyper.get("step", float("nan")),
        "pilot_accept": tuned_acc,
        "accept_rate": res.accept_rate,
        "mean_batch": res.mean_batch,
        "sample_seconds": res.sample_seconds,
        "compile_seconds": res.compile_seconds,
        "constant": rep["constant"],
        "unreliable": rep["unreliable"],
    }
    for est in ("identity", "authors"):
        for stat in ("min", "median", "max"):
            row[f"ess_{est}_{stat}"] = rep[f"ess_{est}_{stat}"]
            row[f"ess_{est}_per_s_{stat}"] = rep[f"ess_{est}_per_s_{stat}"]
    if problem.reference is not None:
        ref = problem.reference(np.random.default_rng(child_seed(seed, 3)), 2_000)
        row["ks_median"] = float(np.median(ks_2samp_per_dim(res.samples[burn:], ref)))
    return [row]


def summarize(df: pd.DataFrame, settings: dict, out: Any) -> None:
    """Table ``baselines_ess`` (ESS/s min/median/max, both estimators) + figure."""
    import matplotlib.pyplot as plt

    ok = df[df["status"] == "ok"].copy()
    keys = ["target", "method", "scan"]
    if ok.empty:
        table = df[["cell", "status", "message"]]
        out.table("baselines_ess", table, caption="No baseline cell finished.")
        return
    num = [
        c
        for c in ok.columns
        if c.startswith("ess_") or c in ("accept_rate", "step", "sample_seconds", "mean_batch", "ks_median")
    ]
    agg = ok.groupby(keys, dropna=False)[num].mean().reset_index()
    agg.insert(3, "replicates", ok.groupby(keys, dropna=False).size().values)
    cols = keys + ["replicates", "accept_rate", "step", "mean_batch"]
    cols += [f"ess_{e}_per_s_{s}" for e in ("identity", "authors") for s in ("min", "median", "max")]
    cols += [c for c in ("ks_median", "sample_seconds") if c in agg.columns]
    bad = df[df["status"] != "ok"]
    table = pd.concat(
        [agg[cols].assign(status="ok", message=""), bad.reindex(columns=keys + ["status", "message"])],
        ignore_index=True,
    )
    out.table(
        "baselines_ess",
        table,
        caption="Full-batch baselines, smoke targets: ESS per second of sampling time "
        "(min/median/max over dimensions; 'identity' = the paper's ESS estimator, "
        "'authors' = MCMCDiagnosticTools 0.3.x bulk split with lag cap 250), mean "
        "over replicates.",
    )
    targets = sorted(agg["target"].unique())
    fig, axes = plt.subplots(1, len(targets), figsize=(4.5 * len(targets), 3.5), squeeze=False)
    for ax, t in zip(axes[0], targets, strict=True):
        sub = agg[agg["target"] == t]
        labels = [m if not sc else f"{m}-{sc}" for m, sc in zip(sub["method"], sub["scan"], strict=True)]
        x = np.arange(len(sub))
        for k, (est, mk) in enumerate((("identity", "o"), ("authors", "s"))):
            med = sub[f"ess_{est}_per_s_median"].to_numpy()
            lo = med - sub[f"ess_{est}_per_s_min"].to_numpy()
            hi = sub[f"ess_{est}_per_s_max"].to_numpy() - med
            ax.errorbar(x + 0.15 * (k - 0.5), med, yerr=[lo, hi], fmt=mk, capsize=3, label=f"ESS {est}")
        ax.set_xticks(x, labels, rotation=30)
        ax.set_yscale("log")
        ax.set_title(t)
        ax.set_ylabel("ESS/s (median, min-max over dims)")
    axes[0][0].legend()
    fig.tight_layout()
    out.figure("baselines_ess", fig, caption="ESS/s of the full-batch baselines (smoke targets).")


EXPERIMENTS = [
    Experiment(
        id="baselines_smoke",
        family="baseline",
        paper="Yuan & Wang 2024, §5.1 (ESS/s protocol)",
        description="every full-batch baseline on small targets: ESS/s (both estimators)",
        settings=SETTINGS,
        cells=cells,
        run_cell=run_cell,
        summarize=summarize,
        notes="Not a paper table: a workflow exercise on smoke-size targets at both scales; "
        "'paper' only runs longer chains and 3 replicates. The paper-scale baselines live "
        "in the exact_mh experiments.",
        grid_keys=("replicates", "tall_methods"),
    )
]
