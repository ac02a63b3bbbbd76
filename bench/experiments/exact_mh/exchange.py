"""``exact_mh_exchange``: the exchange algorithm (Yuan & Wang 2024, Alg. 4) on the Ising-parameter
posterior, against the exact posterior (enumerated / transfer-matrix normalising constant). The paper
has no experiment for it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bench import metrics as MT
from bench.cells import child_seed
from bench.experiment import Experiment
from bench.experiments.exact_mh.common import FAM, finish_panels
from samplers import registry

EX_SETTINGS = {
    "paper": {
        "targets": [{"rows": 4, "cols": 4, "aux": "enum"}, {"rows": 8, "cols": 8, "aux": "cftp"}],
        "iters": 50_000,
        "runs": 5,
        "step": 0.08,
    },
    "smoke": {
        "targets": [{"rows": 4, "cols": 4, "aux": "enum"}, {"rows": 4, "cols": 4, "aux": "cftp"}],
        "iters": 3_000,
        "runs": 1,
        "step": 0.15,
    },
}


def ex_cells(s: dict) -> list[dict]:
    return [
        {"cell": f"{t['rows']}x{t['cols']}_{t['aux']}_run{r}", **t, "run": r}
        for t in s["targets"]
        for r in range(s["runs"])
    ]


def ex_run_cell(params: dict, seed, ctx) -> list[dict]:
    s = ctx.settings
    pb = registry.build_problem("ising_param", 0, rows=params["rows"], cols=params["cols"], aux=params["aux"])
    res = registry.run("exchange", pb, s["iters"], child_seed(seed, 1), step=s["step"])
    x = res.samples[:, 0]
    burn = len(x) // 10
    ref = pb.reference(np.random.default_rng(child_seed(seed, 2)), 200_000)[:, 0]
    rep = MT.ess_report(res.samples[burn:], res.sample_seconds)
    ks = MT.ks_2samp_per_dim(res.samples[burn:], ref[:, None])
    hist, edges = np.histogram(x[burn:], bins=40, range=(pb.model.lo, pb.model.hi), density=True)
    return [
        {
            "target": f"{params['rows']}x{params['cols']}",
            "aux": params["aux"],
            "run": params["run"],
            "accept": res.accept_rate,
            "mean": float(x[burn:].mean()),
            "sd": float(x[burn:].std()),
            "exact_mean": float(ref.mean()),
            "exact_sd": float(ref.std()),
            "ks": float(np.max(ks)),
            "ess_s": float(rep["ess_authors_per_s_median"]),
            "aux_cost_per_iter": res.mean_batch,
            "hist": hist.tolist(),
            "edges": edges.tolist(),
            "grid": pb.meta["grid"][::50].tolist(),
            "cdf": pb.meta["cdf"][::50].tolist(),
        }
    ]


def ex_summarize(df: pd.DataFrame, s: dict, out) -> None:
    import matplotlib.pyplot as plt

    ok = df[df["status"] == "ok"] if "status" in df else df
    if ok.empty:
        return
    t = (
        ok.groupby(["target", "aux"])
        .agg(
            runs=("run", "size"),
            accept=("accept", "mean"),
            mean=("mean", "mean"),
            exact_mean=("exact_mean", "mean"),
            sd=("sd", "mean"),
            exact_sd=("exact_sd", "mean"),
            ks=("ks", "mean"),
            ks_max=("ks", "max"),
            ess_s=("ess_s", "mean"),
            aux_cost_per_iter=("aux_cost_per_iter", "mean"),
        )
        .reset_index()
    )
    t["paper_value"] = "no experiment in the paper"
    out.table(
        "exact_mh_exchange",
        t,
        caption="Exchange algorithm (Yuan & Wang 2024, Alg. 4) on the Ising-"
        "parameter posterior vs the exact posterior (enumerated / transfer-matrix Z); means over runs; "
        "exact_mean / exact_sd from each run's 200k exact draws; ks / ks_max = mean / max over runs of "
        "the KS distance to those draws.",
    )
    grp = list(ok.groupby(["target", "aux"]))
    fig, ax = plt.subplots(1, len(grp), figsize=(4.5 * len(grp), 3.4), squeeze=False)
    for j, ((tg, aux), g) in enumerate(grp):
        r = g.iloc[0]
        e = np.asarray(r["edges"])
        ax[0][j].bar(e[:-1], r["hist"], width=np.diff(e), align="edge", alpha=0.5, label="exchange")
        grid, cdf = np.asarray(r["grid"]), np.asarray(r["cdf"])
        ax[0][j].plot(0.5 * (grid[1:] + grid[:-1]), np.diff(cdf) / np.diff(grid), "k-", label="exact")
        ax[0][j].set_title(f"{tg} ({aux}), run {r['run']}")
        ax[0][j].set_xlabel("theta")
    finish_panels(
        out, fig, ax, "exact_mh_exchange_hist", "Exchange posterior histogram (first run) vs exact."
    )


EXPERIMENTS = [
    Experiment(
        "exact_mh_exchange",
        FAM,
        "Yuan & Wang 2024, Alg. 4",
        "exchange on the Ising-parameter posterior vs exact",
        EX_SETTINGS,
        ex_cells,
        ex_run_cell,
        ex_summarize,
        grid_keys=("runs", "targets"),
    ),
]
