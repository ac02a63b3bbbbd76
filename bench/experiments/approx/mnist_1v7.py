"""``approx_mnist``: logistic regression on MNIST 1v7 of Seita et al. 2017, §6.2 (Table 2, Figs. 3-5).

Settings of their Table 5: MNIST 1v7 13k / 100k (an augmented substitute for the 100k set), raw pixels,
no bias, flat prior, K = 100, RW sd 0.05 / 0.01, T = 5000 / 3000, trials 10 / 5, m = 100 (MHminibatch
adds 100; MHSubLhd starts at 100, x gamma = 2); AustereMH(c) worst-case design with bound 0.1 / 0.2;
AustereMH(nc) bound 0.05 / 0.1. theta_0 = 0 (unstated). Table 2 (mean minibatch size), Fig. 3 (test
accuracy of theta_t vs cumulative data, with and without the full-data passes), Figs. 4, 5 (minibatch
sizes).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bench.experiment import Experiment
from bench.experiments.approx.common import APPROX_METHODS, LABEL, _child, _run_rows
from bench.experiments.approx.paper_values_seita2017 import TABLE2


def _mnist_settings(datasets, T, trials, smoke=False):
    d = {}
    for ds, t, tr in zip(datasets, T, trials, strict=True):
        big = ds.endswith("100k")
        d[ds] = {
            "n_iter": t,
            "trials": tr,
            "step": 0.01 if big else 0.05,
            "hyper": {
                "mh_minibatch": {"m": 100},
                "austere_mh_c": {"design_bound": 0.2 if big else 0.1},
                "austere_mh_nc": {"bound": 0.1 if big else 0.05, "mu_points": 101},
                "mh_sublhd": {"m": 100, "gamma": 2.0, "p": 2.0, "delta": 0.01},
            },
        }
    return {
        "datasets": d,
        "temperature": 100.0,
        "eval_every": 10 if smoke else 50,
        "methods": ["mh_minibatch", "austere_mh_c"] if smoke else list(APPROX_METHODS),
    }


MNIST_SETTINGS = {
    "paper": _mnist_settings(("mnist_1v7", "mnist_1v7_100k"), (5000, 3000), (10, 5)),
    "smoke": _mnist_settings(("mnist_1v7",), (60,), (1,), smoke=True),
}


def mnist_cells(s: dict) -> list[dict]:
    return [
        {"cell": f"{ds}__{m}__t{t}", "dataset": ds, "method": m, "trial": t}
        for ds, c in s["datasets"].items()
        for t in range(int(c["trials"]))
        for m in s["methods"]
    ]


def _accuracy(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(((X @ theta) > 0).astype(int) == y))


def mnist_run_cell(params: dict, seed, ctx) -> list[dict]:
    from samplers import registry as R

    s = ctx.settings
    ds = params["dataset"]
    c = s["datasets"][ds]
    data = ctx.data(ds)
    tid = "logistic_mnist_1v7_100k" if ds.endswith("100k") else "logistic_mnist_1v7"
    pr = R.build_problem(tid, 0, data=data, temperature=float(s["temperature"]))
    m = params["method"]
    res = R.run(
        m, pr, int(c["n_iter"]), _child(seed, 0), x0=np.zeros(pr.dim), step=float(c["step"]), **c["hyper"][m]
    )
    ev = int(s["eval_every"])
    idx = np.arange(ev - 1, res.samples.shape[0], ev)
    acc = [_accuracy(res.samples[i], data["X_test"], data["y_test"]) for i in idx]
    cum = np.cumsum(res.n_evals)[idx]
    cum_full = np.cumsum(res.n_evals + res.extra["trace_0"])[idx]
    row = _run_rows(res, m, pr.model.X.shape[0])
    row.update(
        dataset=ds,
        trial=params["trial"],
        final_accuracy=acc[-1],
        acc=acc,
        cum_data=cum.tolist(),
        cum_data_with_full=cum_full.tolist(),
        hyper_m=res.hyper.get("m"),
        hyper_eps=res.hyper.get("eps"),
    )
    return [row]


def mnist_summarize(df: pd.DataFrame, s: dict, out) -> None:
    import matplotlib.pyplot as plt

    ok = df[df["status"] == "ok"] if "status" in df else df
    rows = []
    for (ds, m), g in ok.groupby(["dataset", "method"], sort=False):
        rows.append(
            {
                "dataset": ds,
                "method": m,
                "label": LABEL.get(m, m),
                "trials": len(g),
                "mean_batch": g["mean_batch"].mean(),
                "sd_over_trials": g["mean_batch"].std(),
                "full_pass_per_iter": g["full_pass_per_iter"].mean(),
                "final_accuracy": g["final_accuracy"].mean(),
                "paper_value": TABLE2.get(ds, {}).get(m, float("nan")),
            }
        )
    if not rows:
        out.table(
            "approx_table2",
            df.reindex(columns=["cell", "status", "message"]),
            caption="No MNIST cell finished.",
        )
        return
    t = pd.DataFrame(rows)
    out.table(
        "approx_table2",
        t,
        caption="Seita et al. 2017, Table 2 counterpart: mean minibatch size (logistic "
        "regression MNIST 1v7, K=100); full_pass_per_iter = data of the full passes that the "
        "paper does not count.",
    )
    dss = list(t["dataset"].unique())
    fig, ax = plt.subplots(1, len(dss), figsize=(5 * len(dss), 3.8), squeeze=False)
    for j, ds in enumerate(dss):
        for m, g in ok[ok["dataset"] == ds].groupby("method", sort=False):
            for k, (_, r) in enumerate(g.iterrows()):
                ax[0][j].plot(
                    r["cum_data"],
                    r["acc"],
                    color=f"C{list(APPROX_METHODS).index(m)}",
                    alpha=0.6,
                    label=LABEL.get(m, m) if k == 0 else None,
                )
                ax[0][j].plot(
                    r["cum_data_with_full"],
                    r["acc"],
                    ls=":",
                    alpha=0.4,
                    color=f"C{list(APPROX_METHODS).index(m)}",
                )
        ax[0][j].set_xscale("log")
        ax[0][j].set_xlabel("cumulative data points (dotted: incl. full-data passes)")
        ax[0][j].set_ylabel("test accuracy of theta_t")
        ax[0][j].set_title(ds)
        ax[0][j].legend(fontsize=7)
    fig.tight_layout()
    out.figure("approx_fig3_mnist", fig, caption="Seita et al. 2017, Fig. 3 counterpart.")
    for ds in dss:
        sub = ok[(ok["dataset"] == ds) & (ok["trial"] == 0)]
        fig, ax = plt.subplots(1, len(sub), figsize=(3.5 * len(sub), 3), squeeze=False)
        for j, (_, r) in enumerate(sub.iterrows()):
            e, c = np.asarray(r["hist_edges"]), np.asarray(r["hist_counts"])
            if e.size:
                ax[0][j].bar(e, c, width=np.diff(np.append(e, e[-1] * 1.3)), align="edge")
                ax[0][j].set_xscale("log")
                ax[0][j].set_yscale("log")
            ax[0][j].set_title(f"{LABEL.get(r['method'], r['method'])} ({r['mean_batch']:.0f})")
        fig.tight_layout()
        name = "approx_fig4_mnist100k" if ds.endswith("100k") else "approx_fig5_mnist13k"
        out.figure(name, fig, caption=f"Seita et al. 2017, Figs. 4/5 counterpart: minibatch sizes, {ds}.")


EXPERIMENTS = [
    Experiment(
        "approx_mnist",
        "approx",
        "Seita et al. 2017, §6.2, Table 2, Figs 3-5",
        "logistic regression MNIST 1v7: accuracy vs data, minibatch sizes",
        MNIST_SETTINGS,
        mnist_cells,
        mnist_run_cell,
        mnist_summarize,
        notes="smoke: MNIST-13k, 60 samples, 2 methods",
        datasets=("mnist_1v7", "mnist_1v7_100k"),
    ),
]
