"""``approx_mnist79``: logistic regression on MNIST 7v9 of Korattikara et al. 2014, §6.1 (Fig. 2).

50 PCA features, prior precision 10, RW sd 0.01: risk of the predictive mean on the test set vs wall
time for eps in {0 (exact RWM), .01, .05, .1, .2}, m = 500; truth = a long exact RWM run (the paper uses
a long HMC run).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bench.experiment import Experiment
from bench.experiments.approx.common import _child
from bench.experiments.approx.paper_values_korattikara2014 import MNIST79_SAMPLES

MNIST79_SETTINGS = {
    "paper": {
        "eps": [0.0, 0.01, 0.05, 0.1, 0.2],
        "m": 500,
        "step": 0.01,
        "chains": 4,
        "seconds": 400.0,
        "truth_iters": 200_000,
        "checkpoints": 20,
        "max_iter": 2_000_000,
    },
    "smoke": {
        "eps": [0.0, 0.1],
        "m": 500,
        "step": 0.01,
        "chains": 1,
        "seconds": 2.0,
        "truth_iters": 2_000,
        "checkpoints": 4,
        "max_iter": 20_000,
    },
}


def m79_cells(s: dict) -> list[dict]:
    out = [{"cell": "truth", "kind": "truth"}]
    out += [
        {"cell": f"eps{e}__c{c}", "kind": "run", "eps": e, "chain": c}
        for e in s["eps"]
        for c in range(int(s["chains"]))
    ]
    return out


def _pred_mean(samples: np.ndarray, X: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return expit(samples @ X.T).mean(axis=0)


def m79_run_cell(params: dict, seed, ctx) -> list[dict]:
    from samplers import registry as R

    s = ctx.settings
    data = ctx.data("mnist_7v9")
    pr = R.build_problem("logistic_mnist_7v9", 0, data=data)
    x0 = np.zeros(pr.dim)
    Xt = np.asarray(data["X_test"])
    if params["kind"] == "truth":
        res = R.run("rwm", pr, int(s["truth_iters"]), _child(seed, 0), x0=x0, step=float(s["step"]), thin=10)
        burn = res.samples.shape[0] // 5
        return [
            {
                "kind": "truth",
                "pred": _pred_mean(res.samples[burn:], Xt).tolist(),
                "accept_rate": res.accept_rate,
            }
        ]
    e = float(params["eps"])
    rng_seed = _child(seed, 0)
    # run in growing chunks until the wall-time budget is used (state carried via x0 + seeds)
    samples, secs, used = [], [], []
    t_tot, theta, k = 0.0, x0, 0
    n_chunk = 200
    while t_tot < float(s["seconds"]) and sum(len(a) for a in samples) < int(s["max_iter"]):
        sd = np.random.SeedSequence(rng_seed.entropy, spawn_key=tuple(rng_seed.spawn_key) + (k,))
        if e == 0.0:
            res = R.run("rwm", pr, n_chunk, sd, x0=theta, step=float(s["step"]))
        else:
            res = R.run(
                "austere_mh_c", pr, n_chunk, sd, x0=theta, step=float(s["step"]), m=int(s["m"]), eps=e
            )
        samples.append(res.samples)
        t_tot += res.sample_seconds
        secs.append(t_tot)
        used.append(int(res.n_evals.sum()))
        theta = res.samples[-1].copy()
        k += 1
        n_chunk = min(n_chunk * 2, 20_000)
    allS = np.concatenate(samples)
    ncp = int(s["checkpoints"])
    ends = np.cumsum([len(a) for a in samples])
    cps = np.unique(np.linspace(1, len(ends), min(ncp, len(ends))).astype(int)) - 1
    preds = [_pred_mean(allS[: ends[i]], Xt).tolist() for i in cps]
    return [
        {
            "kind": "run",
            "eps": e,
            "chain": params["chain"],
            "times": [secs[i] for i in cps],
            "preds": preds,
            "n_samples": int(len(allS)),
            "data_used": int(sum(used)),
        }
    ]


def m79_summarize(df: pd.DataFrame, s: dict, out) -> None:
    import matplotlib.pyplot as plt

    ok = df[df["status"] == "ok"] if "status" in df else df
    tr = ok[ok["kind"] == "truth"]
    if tr.empty:
        out.table(
            "approx_mnist79_risk",
            df.reindex(columns=["cell", "status", "message"]),
            caption="Korattikara et al. 2014, §6.1: no truth cell finished.",
        )
        return
    truth = np.asarray(tr.iloc[0]["pred"])
    rows = []
    fig, ax = plt.subplots(figsize=(5, 3.8))
    for e, g in ok[ok["kind"] == "run"].groupby("eps"):
        # risk = mean over test points of mean over chains of (pred - truth)^2 at common checkpoints
        ncp = min(len(r) for r in g["preds"])
        risk = [float(np.mean([(np.asarray(r[i]) - truth) ** 2 for r in g["preds"]])) for i in range(ncp)]
        tm = [float(np.mean([r[i] for r in g["times"]])) for i in range(ncp)]
        ax.plot(tm, risk, marker="o", label=f"eps={e}" if e else "exact")
        rows.append(
            {
                "eps": e,
                "chains": len(g),
                "final_risk": risk[-1],
                "seconds": tm[-1],
                "mean_samples": g["n_samples"].mean(),
                "paper_value_T": MNIST79_SAMPLES.get(e, float("nan")),
            }
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("wall seconds (sampling)")
    ax.set_ylabel("risk of predictive mean")
    ax.legend()
    out.figure(
        "approx_fig_mnist79_risk", fig, caption="Korattikara et al. 2014, Fig. 2 counterpart (MNIST 7v9)."
    )
    out.table(
        "approx_mnist79_risk",
        pd.DataFrame(rows),
        caption="Korattikara et al. 2014, §6.1: final risk and samples drawn within the time budget; "
        "paper_value_T = samples drawn by ~400 s in Korattikara et al. 2014.",
    )


EXPERIMENTS = [
    Experiment(
        "approx_mnist79",
        "approx",
        "Korattikara et al. 2014, §6.1",
        "risk of predictive mean vs time",
        MNIST79_SETTINGS,
        m79_cells,
        m79_run_cell,
        m79_summarize,
        notes="truth = long exact RWM (Korattikara et al.: HMC); smoke: 2 s budget",
        datasets=("mnist_7v9",),
        grid_keys=("chains",),
    ),
]
