"""``exact_mh_rlr``: robust linear regression of Yuan & Wang 2024, §5.2 and App. G.2-3.

Variants: d = 10, N = 1e5 (Table 5; Table 2 = its Best; Figs. 1, 4, 5), N = 2e5 (Table 6, Fig. 6),
d = 50 (Table 7, Figs. 7-9) at the authors' code constants (``rlr_50d``) and at the paper's
(``rlr_50d_paper``). HMC runs with 2 / 5 / 10 leapfrog steps; the paper's HMC column has 10 in
Tables 2 / 5 and 5 in Tables 6 / 7.
"""

from __future__ import annotations

import pandas as pd

from bench.cells import child_seed
from bench.experiment import Experiment
from bench.experiments.exact_mh import verdicts as V
from bench.experiments.exact_mh.common import (
    BEST_CAPTION,
    CAPPED_CAPTION,
    FAM,
    RATES,
    _chain_metrics,
    _ess_table,
    _hyper,
    _step,
    _timings,
    base_method,
    best_rate_table,
    ess_figure,
    finish_panels,
    label_of,
    mean_mse_curves,
    row_label,
)
from bench.experiments.exact_mh.paper_values import AUTHORS_H, P_RLR, P_RLR_HMC_STEPS, RLR_ITERS
from samplers import registry

RLR_VARIANTS = {
    "rlr_10d_n1e5": {"N": 100_000, "d": 10, "beta": 1e-4, "R": 15.0, "lam_mult": 0.01},
    "rlr_10d_n2e5": {"N": 200_000, "d": 10, "beta": 1e-4, "R": 15.0, "lam_mult": 0.01},
    # d = 50 at the constants of the authors' code (beta = 1e-3, R = 30, lambda = 1e-4 L^2, not the
    # paper's; E[B] ~ 2,900, 2.9 % of N): a named setting, the one the authors' d = 50 step sizes are for
    "rlr_50d": {"N": 100_000, "d": 50, "beta": 1e-3, "R": 30.0, "lam_mult": 1e-4},
    # d = 50 at the paper's constants (App. G.3: "All setups are the same as in Section 5.2, except for
    # d = 50": beta = 1e-4, R = 15, lambda = 0.01 L^2; E[B] ~ 600); paper column = Table 7
    "rlr_50d_paper": {"N": 100_000, "d": 50, "beta": 1e-4, "R": 15.0, "lam_mult": 0.01},
}
# runs of a variant: setting "runs_50d" for d = 50 (the paper's 10 runs), else "runs"
RLR_RUNS_KEY = {"rlr_50d": "runs_50d", "rlr_50d_paper": "runs_50d"}
RLR_METHODS = ["rwm", "mala", "barker", "hmc", "poisson_mh", "poisson_barker", "poisson_mala"]
RLR_SETTINGS = {
    "paper": {
        "variants": list(RLR_VARIANTS),
        "methods": RLR_METHODS,
        "rates": list(RATES),
        "runs": 100,
        "runs_50d": 10,
        "iters": RLR_ITERS,
        "n_leapfrog_list": [2, 5, 10],
        "step_mode": "authors",
        "energies": ["cached", "recompute"],
    },
    "smoke": {
        "variants": ["rlr_10d_n1e5"],
        "methods": RLR_METHODS,
        "rates": [0.4],
        "runs": 1,
        "runs_50d": 1,
        "iters": {m: 800 for m in RLR_METHODS},
        "n_leapfrog_list": [5],
        "step_mode": "authors",
        "energies": ["cached"],
        "target_override": {"N": 2_000, "beta": 5e-3},
    },
}


# HMC leapfrog counts each variant's paper artifacts use: (cached rows, +recompute rows). Tables 2 / 5 and
# Fig. 5 compare HMC-2/5/10 (both timings); Table 6 prints HMC-5 only; at d = 50, Fig. 9 compares HMC-2/5/10
# and Table 7 prints HMC-5, the only row timed the authors' way. Setting n_leapfrog_list selects among them.
RLR_HMC_LEAPFROG = {
    "rlr_10d_n1e5": ((2, 5, 10), (2, 5, 10)),
    "rlr_10d_n2e5": ((5,), (5,)),
    "rlr_50d": ((2, 5, 10), (5,)),
    "rlr_50d_paper": ((2, 5, 10), (5,)),
}


def rlr_cells(s: dict) -> list[dict]:
    out = []
    for v in s["variants"]:
        runs = s[RLR_RUNS_KEY.get(v, "runs")]
        cached_nl, recompute_nl = RLR_HMC_LEAPFROG[v]
        for run in range(runs):
            for m in s["methods"]:
                for nl in [n for n in s["n_leapfrog_list"] if n in cached_nl] if m == "hmc" else [0]:
                    for rate in s["rates"]:
                        for sfx, timing in _timings(s, m, run):
                            if m == "hmc" and timing.get("energy") == "recompute" and nl not in recompute_nl:
                                continue
                            name = (m if m != "hmc" else f"hmc{nl}") + sfx
                            p = {
                                "cell": f"{v}_{name}_r{rate:g}_run{run}",
                                "variant": v,
                                "method": m,
                                "n_leapfrog": nl,
                                "rate": rate,
                                "run": run,
                                **timing,
                            }
                            if m == "hmc" and f"hmc{nl}" in AUTHORS_H.get(v, {}):
                                # the step sizes of this leapfrog count (AUTHORS_H), named in the params
                                # of these cells only (the other HMC cells use the method's own row)
                                p["h_row"] = f"hmc{nl}"
                            out.append(p)
    return out


def rlr_run_cell(params: dict, seed, ctx) -> list[dict]:
    s = ctx.settings
    v, m, rate = params["variant"], params["method"], params["rate"]
    tv = dict(RLR_VARIANTS[v])
    lam_mult = tv.pop("lam_mult")
    tv.update(s.get("target_override", {}))
    pb = registry.build_problem("robust_regression", child_seed(seed, 0), **tv)
    ss = {**s, "lam_mult": lam_mult, "n_leapfrog": params["n_leapfrog"]}
    if "h_row" in params:
        ss["h_row"] = params["h_row"]
    step = _step(m, ss, v, rate, pb, child_seed(seed, 1))
    en, counts = params.get("energy", "cached"), params.get("counts", "sparse")
    res = registry.run(m, pb, s["iters"][m], child_seed(seed, 2), **_hyper(m, ss, step, en, counts))
    th = pb.meta["theta_star"]
    row = {
        "variant": v,
        "method": row_label(m if m != "hmc" else f"hmc{params['n_leapfrog']}", params),
        "energy": en,
        "counts": counts,
        "target_rate": rate,
        "run": params["run"],
        "step": step,
    }
    row.update(_chain_metrics(res, th, None))
    return [row]


# Yuan & Wang 2024's tables of each robust-regression variant, and of its best-rate-per-method view (only
# Table 2, for d = 10 N = 1e5, is printed in the paper; for the others the paper's best rate is read off
# the table)
RLR_TABLES = {
    "rlr_10d_n1e5": "Tables 2 / 5",
    "rlr_10d_n2e5": "Table 6",
    "rlr_50d": "Table 7",
    "rlr_50d_paper": "Table 7",
}
RLR_BEST = {
    "rlr_10d_n1e5": "Table 2 counterpart",
    "rlr_10d_n2e5": "no such table in the paper; paper column = Best column of Table 6",
    "rlr_50d": "no such table in the paper; paper column = Best column of Table 7",
    "rlr_50d_paper": "no such table in the paper; paper column = Best column of Table 7",
}


def rlr_paper(v: str) -> dict:
    """The paper's ESS/s values of variant ``v`` by table row: the paper reports one leapfrog count per
    table (:data:`P_RLR_HMC_STEPS`), so only that HMC row (``hmc<L>``) gets the HMC value."""
    paper = {k: val for k, val in P_RLR[v].items() if val is not None}
    if "hmc" in paper:
        paper[f"hmc{P_RLR_HMC_STEPS[v]}"] = paper.pop("hmc")
    return paper


def rlr_summarize(df: pd.DataFrame, s: dict, out) -> None:
    """Per variant: the ESS/s table per method x rate (``exact_mh_<v>_ess``: Tables 5, 6, 7), the best
    rate per method (``exact_mh_<v>_ess_best``: Table 2 for d = 10 N = 1e5), one ESS/s figure for both
    (as for the truncated Gaussian's Tables 1/4) and the MSE figures."""
    ok = df[df["status"] == "ok"] if "status" in df else df
    names = {**RLR_TABLES, "rlr_10d_n1e5": "Table 5 (Table 2 = best)"}
    for v in s["variants"]:
        sub = ok[ok["variant"] == v] if "variant" in ok else ok.iloc[0:0]
        if sub.empty:
            continue
        paper = rlr_paper(v)
        t = _ess_table(sub, paper)
        out.table(
            f"exact_mh_{v}_ess",
            t,
            caption=f"Yuan & Wang 2024, {names[v]} counterpart: ESS/s (min, med, max); paper HMC column = "
            "10 leapfrog (Tables 2/5) or 5 (Tables 6/7); " + CAPPED_CAPTION,
        )
        out.table(
            f"exact_mh_{v}_ess_best",
            best_rate_table(t, paper),
            caption=f"Yuan & Wang 2024, {RLR_BEST[v]}: " + BEST_CAPTION + " "
            f"(HMC: the paper's {P_RLR_HMC_STEPS[v]} leapfrog steps only).",
        )
        out.table(
            f"exact_mh_{v}_claims_ci",
            V.ratio_intervals(sub),
            caption=f"Yuan & Wang 2024, {names[v]} claims: " + V.CI_CAPTION,
        )
        ess_figure(
            t,
            f"exact_mh_{v}_ess",
            f"Yuan & Wang 2024, {names[v]} counterpart (every rate; the best-rate table "
            f"exact_mh_{v}_ess_best reads off it)",
            out,
        )
        _rlr_figures(sub, v, out)


RLR_FIGS = {
    "rlr_10d_n1e5": ("Figs. 1 and 4", "Fig. 5"),
    "rlr_10d_n2e5": ("Fig. 6", None),
    "rlr_50d": ("Figs. 7 and 8", "Fig. 9"),
    "rlr_50d_paper": ("Figs. 7 and 8", "Fig. 9"),
}


def rlr_colors(methods) -> dict[str, str]:
    """Matplotlib colour cycle entry per base method (sorted), shared by cached and `+recompute` rows."""
    bases = sorted({base_method(m) for m in methods})
    return {b: f"C{k % 10}" for k, b in enumerate(bases)}


def _rlr_figures(sub: pd.DataFrame, v: str, out) -> None:
    """MSE of theta* vs time (row 1) and vs iteration (row 2) per acceptance rate, averaged over runs
    (Yuan & Wang 2024, Figs. 1/4, 6, 7/8); HMC with 2/5/10 leapfrog steps vs time (Figs. 5, 9)."""
    import matplotlib.pyplot as plt

    if "mse_mean" not in sub:
        return
    rates = sorted(sub["target_rate"].dropna().unique())
    fig_main, fig_hmc = RLR_FIGS.get(v, ("figure", None))
    # one colour per base method in both rows (a `+recompute` row is its cached row, dashed)
    colors = rlr_colors(sub["method"])
    fig, ax = plt.subplots(2, len(rates), figsize=(4.5 * len(rates), 6.5), squeeze=False)
    for j, rate in enumerate(rates):
        for m, g in sub[sub["target_rate"] == rate].groupby("method", sort=True):
            t, it, mse = mean_mse_curves(g)
            rec = base_method(m) != m
            c = colors[base_method(m)]
            ax[0][j].loglog(t, mse, ls="--" if rec else "-", color=c, label=label_of(m))
            if not rec:  # same chain as the cached row, only slower: iteration axis identical
                ax[1][j].loglog(it, mse, color=c, label=label_of(m))
        ax[0][j].set_title(f"{v}, acceptance {rate:g}")
        ax[0][j].set_xlabel("seconds")
        ax[1][j].set_xlabel("iterations")
    finish_panels(
        out,
        fig,
        ax,
        f"exact_mh_{v}_mse",
        f"Yuan & Wang 2024, {fig_main} counterpart: MSE of theta* vs time and vs iteration, mean over runs.",
        ("MSE of theta*", "MSE of theta*"),
        legend_fs=6,
    )
    hmc = sub[sub["method"].str.match(r"^hmc\d+$")]
    if fig_hmc is None or hmc["method"].nunique() < 2:
        return
    fig, ax = plt.subplots(1, len(rates), figsize=(4.5 * len(rates), 3.4), squeeze=False)
    for j, rate in enumerate(rates):
        for m, g in hmc[hmc["target_rate"] == rate].groupby("method", sort=True):
            t, _, mse = mean_mse_curves(g)
            ax[0][j].loglog(t, mse, label=m)
        ax[0][j].set_title(f"{v}, acceptance {rate:g}")
        ax[0][j].set_xlabel("seconds")
    finish_panels(
        out,
        fig,
        ax,
        f"exact_mh_{v}_hmc_leapfrog",
        f"Yuan & Wang 2024, {fig_hmc} counterpart: HMC with 2/5/10 leapfrog steps, MSE vs time.",
        ("MSE of theta*",),
    )


EXPERIMENTS = [
    Experiment(
        "exact_mh_rlr",
        FAM,
        "Yuan & Wang 2024, §5.2, Tables 2, 5, 6, 7, App. G.2-3",
        "robust linear regression: ESS/s incl. HMC with 2/5/10 leapfrog",
        RLR_SETTINGS,
        rlr_cells,
        rlr_run_cell,
        rlr_summarize,
        notes="rlr_50d = the authors' code constants (R=30, beta=1e-3, lambda=1e-4 L^2); rlr_50d_paper = the "
        "paper's (App. G.3: as §5.2, d = 50), steps tuned to the rates; hmc10 of rlr_10d_n1e5 uses the "
        "authors' 2024 HMC-10 step sizes.",
        grid_keys=(
            "runs",
            "runs_50d",
            "dense_runs",
            "variants",
            "methods",
            "rates",
            "n_leapfrog_list",
            "energies",
        ),
        optional_grid_keys=("dense_runs",),
    ),
]
