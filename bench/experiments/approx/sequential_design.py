"""``approx_design``: average- vs worst-case sequential designs, Korattikara et al. 2014, §5.2, §6.5, App. D
(Fig. 6), on the ICA model of §6.2.

K14 draw the (theta, theta') pairs from the ICA chain of §6.2; so do we: an exact chain (``rwm_stiefel``,
the Cayley random walk of :mod:`bench.experiments.approx.ica` at its N, D and step) after ``burn``
iterations, every ``thin``-th state W with one Cayley proposal W' and one pass over the data for
(mean l_i, sd l_i) (k = 0: uniform prior, symmetric proposal). ``replicates`` disjoint stretches of the
chain give ``pairs`` training and ``pairs`` test pairs each (K14: one set of 100 each), so every comparison
carries an interval over replicates. Average case (K14 eq. 7): grid search over ``m_grid`` x the eps grid
of Seita et al. 2017 (Pocock); worst case (eq. 8): the same grid x Wang-Tsiatis alpha. Error = mean |Delta|
over the test pairs (u by quadrature, App. B), data = mean expected data, both from the DP
(:mod:`samplers.approx.design`). The fixed-m heuristic of §5.2 (m = ``fixed_m``, eps varied) is the
reference line. ASSUMPTIONS: K14 state neither their grid over pi_1 = m / N nor the chain's thinning; our
m grid spans pi_1 = 1.3e-4 to 0.033 at N = 1.95M (S17's 50-500 would mean up to 39,000 stages a test).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from bench.experiment import Experiment
from bench.experiments.approx.common import _child, t_interval

DESIGN_SETTINGS = {
    "paper": {
        "N": 1_950_000,
        "D": 4,
        "step_scale": 0.5,
        "pairs": 100,
        "replicates": 4,
        "burn": 500,
        "thin": 1,
        "targets": [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2],
        "alphas": [0.5, 0.75, 1.0],
        "m_grid": [250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000],
        "fixed_m": 600,
        "L": 100,
        "mu_points": 101,
    },
    "smoke": {
        "N": 5_000,
        "D": 3,
        "step_scale": 0.5,
        "pairs": 10,
        "replicates": 2,
        "burn": 20,
        "thin": 1,
        "targets": [0.01, 0.05],
        "alphas": [0.5, 1.0],
        "m_grid": [50, 100, 200, 400],
        "fixed_m": 600,
        "L": 30,
        "mu_points": 21,
    },
}


def design_cells(s: dict) -> list[dict]:
    return [{"cell": "design"}]


def _ica_pairs(s: dict, seed) -> np.ndarray:
    """(mean l_i, sd l_i, k = 0) of one Cayley proposal from each kept state of an exact ICA chain."""
    from samplers import registry as R
    from samplers.approx.seqtest import full_pass_stats
    from samplers.kernels.austere_stiefel import cayley_propose

    N, D = int(s["N"]), int(s["D"])
    pr = R.build_problem("ica_stiefel", 0, N=N, D=D)
    step = float(s["step_scale"]) / math.sqrt(N)
    n_keep = 2 * int(s["pairs"]) * int(s["replicates"])
    n = int(s["burn"]) + n_keep * int(s["thin"])
    res = R.run("rwm_stiefel", pr, n, _child(seed, 0), x0=pr.meta["W_true"].reshape(-1).copy(), step=step)
    rng = np.random.default_rng(_child(seed, 1))
    A, B, thp = np.empty((D, D)), np.empty((D, D)), np.empty(D * D)
    out = np.zeros((n_keep, 3))
    for r, th in enumerate(res.samples[int(s["burn"]) :: int(s["thin"])][:n_keep]):
        th = np.ascontiguousarray(th)
        cayley_propose(th, D, step, rng, A, B, thp)
        out[r, 0], out[r, 1], _ = full_pass_stats(pr.model, th, thp)
    return out


def design_run_cell(params: dict, seed, ctx) -> list[dict]:
    from samplers.approx import design as dsg

    s = ctx.settings
    N, L, P = int(s["N"]), int(s["L"]), int(s["pairs"])
    m_grid = tuple(int(m) for m in s["m_grid"])
    pairs = _ica_pairs(s, seed)
    grid = np.linspace(0, 10, int(s["mu_points"]))
    tab = dsg.design_table(N, m_grid=m_grid, mu_grid=grid, L=L)
    tables = {(m, e, 0.5): (grid, tab["E"][d], tab["pibar"][d]) for d, (m, e) in enumerate(tab["designs"])}

    def evaluate(test: np.ndarray, m: int, e: float, al: float) -> tuple[float, float]:
        """(mean |Delta|, mean expected data) of design (m, eps, Wang-Tsiatis alpha) over the test pairs."""
        key = (int(m), float(e), float(al))
        if key not in tables:  # a worst-case or fixed-m design: its DP on the grid, once for all replicates
            tables[key] = (grid, *dsg.dp_curve(N, key[0], key[1], grid, L, "wang_tsiatis", key[2]))
        out = np.array([dsg.acceptance_error(mu, sl, k, N, m, e, table=tables[key]) for mu, sl, k in test])
        return float(np.mean(np.abs(out[:, 0]))), float(np.mean(out[:, 1]) * N)

    wc_kw = {"m_grid": m_grid, "L": L, "boundary": "wang_tsiatis", "alphas": tuple(s["alphas"])}
    wc_grid = dsg.worst_case_grid(N, **wc_kw)  # the mu_std = 0 DPs, once for every target
    worst: dict = {}
    for tgt in s["targets"]:
        try:
            worst[tgt] = dsg.worst_case_design(N, tgt, **wc_kw, grid=wc_grid)
        except ValueError as exc:
            worst[tgt] = str(exc)
    rows = []
    for rep in range(int(s["replicates"])):
        block = pairs[2 * P * rep : 2 * P * (rep + 1)]
        train, test = block[::2], block[1::2]
        for tgt in s["targets"]:
            for kind in ("average", "worst"):
                row = {"replicate": rep, "target_error": tgt, "design": kind}
                try:
                    if kind == "average":
                        d = dsg.average_design(N, tgt, train, table=tab)
                        m, e, al = d["m"], d["eps"], 0.5
                    elif isinstance(worst[tgt], str):
                        raise ValueError(worst[tgt])
                    else:
                        m, e, al = worst[tgt]["m"], worst[tgt]["eps"], worst[tgt]["alpha"]
                except ValueError as exc:
                    rows.append({**row, "no_design": str(exc)})
                    continue
                err, data = evaluate(test, m, e, al)
                rows.append({**row, "m": m, "eps": e, "alpha": al, "test_error": err, "test_data": data})
        m = min(int(s["fixed_m"]), N)  # K14 §5.2, first paragraph: m fixed, eps varied
        for e in dsg.DEFAULT_EPS_GRID:
            err, data = evaluate(test, m, e, 0.5)
            rows.append(
                {
                    "replicate": rep,
                    "target_error": float("nan"),
                    "design": f"fixed m={m}",
                    "m": m,
                    "eps": e,
                    "alpha": 0.5,
                    "test_error": err,
                    "test_data": data,
                }
            )
    return rows


def _vs_fixed(g: pd.DataFrame, fx: pd.DataFrame) -> float:
    """Data of one average design over the fixed-m heuristic's at equal test error (log-log interpolation
    of the heuristic's curve of the same replicate; nan outside its range of errors)."""
    f = fx[fx["replicate"] == g["replicate"]].sort_values("test_error")
    if len(f) < 2 or not g["test_error"] > 0:
        return float("nan")
    lx, ly = np.log(f["test_error"].to_numpy()), np.log(f["test_data"].to_numpy())
    x = math.log(g["test_error"])
    if not lx[0] <= x <= lx[-1]:  # outside the heuristic's range: no extrapolation
        return float("nan")
    return float(g["test_data"] / np.exp(np.interp(x, lx, ly)))


def design_summarize(df: pd.DataFrame, s: dict, out) -> None:
    import matplotlib.pyplot as plt

    from bench.experiments.approx.common import log_t_interval

    ok = df[df["status"] == "ok"] if "status" in df else df
    ok = ok.dropna(subset=["design"])
    fx = ok[ok["design"].str.startswith("fixed")]
    worst = ok[ok["design"] == "worst"].set_index(["replicate", "target_error"])["test_data"]
    rows = []
    groups = [
        (k, g) for k, g in ok[~ok["design"].str.startswith("fixed")].groupby(["design", "target_error"])
    ]
    groups += [((k, e), g) for (k, e), g in fx.groupby(["design", "eps"])]
    for (kind, key), g in groups:
        done = g.dropna(subset=["test_data"])
        row = {
            "design": kind,
            "target_error": float("nan") if kind.startswith("fixed") else key,
            "replicates": len(g),
            "designed": len(done),
            "m": "/".join(str(int(v)) for v in sorted(done["m"].unique())) if len(done) else "",
            "eps": "/".join(f"{v:g}" for v in sorted(done["eps"].unique())) if len(done) else "",
            "alpha": "/".join(f"{v:g}" for v in sorted(done["alpha"].unique())) if len(done) else "",
        }
        for c in ("test_error", "test_data"):
            row[c], row[c + "_lo"], row[c + "_hi"] = t_interval(done[c]) if len(done) else (np.nan,) * 3
        if kind == "average" and len(done):
            vw = [r["test_data"] / worst.get((r["replicate"], key), np.nan) for _, r in done.iterrows()]
            row["data_vs_worst"], row["data_vs_worst_lo"], row["data_vs_worst_hi"] = log_t_interval(vw)
            vf = [_vs_fixed(r, fx) for _, r in done.iterrows()]
            row["data_vs_fixed"], row["data_vs_fixed_lo"], row["data_vs_fixed_hi"] = log_t_interval(vf)
        if len(done) < len(g):
            row["no_design"] = g["no_design"].dropna().iloc[0] if "no_design" in g else ""
        rows.append(row)
    t = pd.DataFrame(rows)
    out.table(
        "approx_design",
        t,
        caption="Korattikara et al. 2014, §6.5 / Fig. 6 on the §6.2 ICA chain: test error (mean |Delta|) and "
        "expected data per test of the average-case, worst-case and fixed-m designs, mean [95% t-interval] "
        "over replicates (disjoint training / test pair sets); data_vs_worst / data_vs_fixed = the average "
        "design's data over the worst-case design's (same target) and over the fixed-m heuristic's at equal "
        "test error, geometric mean [interval] over replicates.",
    )
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.6))
    for kind, g in t.groupby("design"):
        g = g.dropna(subset=["test_error"]).sort_values("test_error")
        yerr = [g["test_data"] - g["test_data_lo"], g["test_data_hi"] - g["test_data"]]
        if kind.startswith("fixed"):
            ax[1].errorbar(g["test_error"], g["test_data"], yerr=yerr, fmt="k:s", ms=4, label=kind)
            continue
        g = g.sort_values("target_error")
        ax[0].errorbar(
            g["target_error"],
            g["test_error"],
            yerr=[g["test_error"] - g["test_error_lo"], g["test_error_hi"] - g["test_error"]],
            marker="o",
            label=kind,
        )
        ax[1].errorbar(g["test_error"], g["test_data"], yerr=yerr, marker="o", label=kind)
    lim = [min(s["targets"]), max(s["targets"])]
    ax[0].plot(lim, lim, "k--", lw=0.8)
    for a in ax:
        a.set_xscale("log")
        a.legend(fontsize=7)
    ax[0].set_yscale("log")
    ax[0].set_xlabel("target error (training pairs)")
    ax[0].set_ylabel("error on the test pairs")
    ax[1].set_xlabel("error on the test pairs")
    ax[1].set_ylabel("expected data per test")
    fig.tight_layout()
    out.figure(
        "approx_fig6_design",
        fig,
        caption="Korattikara et al. 2014, Fig. 6 on the ICA chain: (a) test against target error, (b) data "
        "against test error; bars: 95% t-intervals over replicates.",
    )


EXPERIMENTS = [
    Experiment(
        "approx_design",
        "approx",
        "Korattikara et al. 2014, §5.2, §6.5, App. D",
        "average- vs worst-case sequential designs on the ICA chain",
        DESIGN_SETTINGS,
        design_cells,
        design_run_cell,
        design_summarize,
    ),
]
