"""``approx_mnist79``: logistic regression on MNIST 7v9 of Korattikara et al. 2014, §6.1 (Fig. 2).

50 PCA features, prior precision 10, RW sd 0.01: risk of the predictive mean on the test set vs wall
time (and against data touched) for eps in {0 (exact RWM), .01, .05, .1, .2}, m = 500; truth = a long
HMC run, as the paper's (50,000 iterations of 10 leapfrog steps of 0.016, acceptance ~0.93; the posterior
sd is ~0.075 per coordinate). Every iteration counts towards the samples drawn; every 10th is kept for the
predictive mean.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bench.experiment import Experiment
from bench.experiments.approx.common import (
    _child,
    log_t_interval,
    next_chunk,
    risk_columns,
    risk_comparisons,
    t_interval,
)
from bench.experiments.approx.paper_values_korattikara2014 import MNIST79_SAMPLES

MNIST79_SETTINGS = {
    "paper": {
        "eps": [0.0, 0.01, 0.05, 0.1, 0.2],
        "m": 500,
        "step": 0.01,
        "chains": 4,
        "seconds": 400.0,
        "truth_iters": 50_000,
        "truth_step": 0.016,
        "truth_leapfrog": 10,
        "checkpoints": 20,
        "max_iter": 4_000_000,
        "thin": 10,
    },
    "smoke": {
        "eps": [0.0, 0.1],
        "m": 500,
        "step": 0.01,
        "chains": 1,
        "seconds": 2.0,
        "truth_iters": 300,
        "truth_step": 0.016,
        "truth_leapfrog": 10,
        "checkpoints": 4,
        "max_iter": 20_000,
        "thin": 1,
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


def _pred_sum(samples: np.ndarray, X: np.ndarray, block: int = 2000) -> np.ndarray:
    """Sum over samples of the predictive probabilities on the test points (blocks bound the memory)."""
    from scipy.special import expit

    out = np.zeros(X.shape[0])
    for a in range(0, samples.shape[0], block):
        out += expit(samples[a : a + block] @ X.T).sum(axis=0)
    return out


def _pred_mean(samples: np.ndarray, X: np.ndarray) -> np.ndarray:
    return _pred_sum(samples, X) / samples.shape[0]


def m79_run_cell(params: dict, seed, ctx) -> list[dict]:
    from samplers import registry as R

    s = ctx.settings
    data = ctx.data("mnist_7v9")
    pr = R.build_problem("logistic_mnist_7v9", 0, data=data)
    x0 = np.zeros(pr.dim)
    Xt = np.asarray(data["X_test"])
    if params["kind"] == "truth":
        # K14: a long HMC run (full-batch gradients, exact); first 20 % dropped
        res = R.run(
            "hmc",
            pr,
            int(s["truth_iters"]),
            _child(seed, 0),
            x0=x0,
            step=float(s["truth_step"]),
            n_leapfrog=int(s["truth_leapfrog"]),
        )
        burn = res.samples.shape[0] // 5
        return [
            {
                "kind": "truth",
                "pred": _pred_mean(res.samples[burn:], Xt).tolist(),
                "accept_rate": res.accept_rate,
                "truth_iters": int(s["truth_iters"]),
                "truth_seconds": res.sample_seconds,
            }
        ]
    e = float(params["eps"])
    thin = int(s.get("thin", 1))
    rng_seed = _child(seed, 0)
    # run in growing chunks until the wall-time budget is used (state carried via x0 + seeds); every
    # iteration counts, every thin-th sample is kept for the predictive mean
    psum, n_kept, secs, used, iters = np.zeros(Xt.shape[0]), 0, [], [], []
    pred_at = []
    t_tot, theta, k, n_it = 0.0, x0, 0, 0
    n_chunk = 200 * thin
    while t_tot < float(s["seconds"]) and n_it < int(s["max_iter"]):
        sd = np.random.SeedSequence(rng_seed.entropy, spawn_key=tuple(rng_seed.spawn_key) + (k,))
        if e == 0.0:
            res = R.run("rwm", pr, n_chunk, sd, x0=theta, step=float(s["step"]), thin=thin)
        else:
            res = R.run(
                "austere_mh_c",
                pr,
                n_chunk,
                sd,
                x0=theta,
                step=float(s["step"]),
                m=int(s["m"]),
                eps=e,
                thin=thin,
            )
        psum += _pred_sum(res.samples, Xt)
        n_kept += res.samples.shape[0]
        pred_at.append((psum / n_kept).tolist())
        t_tot += res.sample_seconds
        n_it += n_chunk
        secs.append(t_tot)
        used.append(int(res.n_evals.sum()))
        iters.append(n_it)
        theta = res.samples[-1].copy()
        k += 1
        n_chunk = thin * next_chunk(n_chunk // thin, 20_000, float(s["seconds"]), t_tot, res.sample_seconds)
    ncp = int(s["checkpoints"])
    cum_used = np.cumsum(used)
    cps = np.unique(np.linspace(1, len(secs), min(ncp, len(secs))).astype(int)) - 1
    preds = [pred_at[i] for i in cps]
    return [
        {
            "kind": "run",
            "eps": e,
            "chain": params["chain"],
            "times": [secs[i] for i in cps],
            "data": [float(cum_used[i]) for i in cps],
            "iters": [int(iters[i]) for i in cps],
            "preds": preds,
            "n_samples": int(n_it),
            "data_used": int(cum_used[-1]),
            "data_per_iter": float(cum_used[-1]) / n_it,
            "sec_per_iter": t_tot / n_it,
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
    # K14 Fig. 2 plots risk against wall time; the data-touched panel is the paper's accounting of the gain
    fig, (axd, axt) = plt.subplots(1, 2, figsize=(9, 3.8), sharey=True)
    runs = ok[ok["kind"] == "run"]
    ex = runs[runs["eps"] == 0.0]
    ex_rate = float((ex["n_samples"] / ex["times"].map(lambda v: v[-1])).mean()) if len(ex) else float("nan")
    ex_rates = dict(zip(ex["chain"], ex["n_samples"] / ex["times"].map(lambda v: v[-1]), strict=True))
    p_ex = MNIST79_SAMPLES.get(0.0, float("nan"))
    t_early = 0.1 * float(s["seconds"])
    curves = {
        e: {
            int(r["chain"]): (r["times"], [float(np.mean((np.asarray(p) - truth) ** 2)) for p in r["preds"]])
            for _, r in g.iterrows()
        }
        for e, g in runs.groupby("eps")
    }
    t_late, cmp = risk_comparisons(curves, t_early)
    for e, g in runs.groupby("eps"):
        # risk = mean over chains of each chain's risk curve at common checkpoints
        ncp = min(len(r) for r in g["preds"])
        chain_risks = [rk for _, rk in curves[e].values()]
        risk = [float(np.mean([rk[i] for rk in chain_risks])) for i in range(ncp)]
        tm = [float(np.mean([r[i] for r in g["times"]])) for i in range(ncp)]
        lab = f"eps={e}" if e else "exact"
        axt.plot(tm, risk, marker="o", ms=3, label=lab)
        if "data" in g:
            dt = [float(np.mean([r[i] for r in g["data"]])) for i in range(ncp)]
            axd.plot(dt, risk, marker="o", ms=3, label=lab)
        rate = float((g["n_samples"] / g["times"].map(lambda v: v[-1])).mean())
        rates = dict(zip(g["chain"], g["n_samples"] / g["times"].map(lambda v: v[-1]), strict=True))
        rr = log_t_interval([rates[c] / ex_rates[c] for c in rates if c in ex_rates])
        fr = t_interval([rk[ncp - 1] for rk in chain_risks])
        rows.append(
            {
                "eps": e,
                "chains": len(g),
                "final_risk": risk[-1],
                "final_risk_lo": fr[1],
                "final_risk_hi": fr[2],
                "seconds": tm[-1],
                "mean_samples": g["n_samples"].mean(),
                "data_per_iter": g["data_per_iter"].mean() if "data_per_iter" in g else float("nan"),
                "ms_per_iter": 1e3 / rate,
                "samples_per_s_vs_exact": rate / ex_rate,
                "ratio_paired": rr[0],
                "ratio_lo": rr[1],
                "ratio_hi": rr[2],
                "paper_value_T": MNIST79_SAMPLES.get(e, float("nan")),
                "paper_ratio_vs_exact": MNIST79_SAMPLES.get(e, float("nan")) / p_ex,
                **risk_columns(cmp[e], t_early, t_late),
            }
        )
    for ax in (axd, axt):
        ax.set_xscale("log")
        ax.set_yscale("log")
    axd.set_xlabel("data touched (per-datum log-likelihood terms)")
    axt.set_xlabel("wall seconds (sampling)")
    axd.set_ylabel("risk of predictive mean")
    axt.legend(fontsize=7)
    out.figure(
        "approx_fig_mnist79_risk",
        fig,
        caption="Korattikara et al. 2014, Fig. 2 counterpart (MNIST 7v9): risk against data touched (left) "
        "and against sampling seconds (right).",
    )
    out.table(
        "approx_mnist79_risk",
        pd.DataFrame(rows),
        caption="Korattikara et al. 2014, §6.1: final risk and samples drawn within the time budget; "
        "paper_value_T = samples drawn by ~400 s in Korattikara et al. 2014, paper_ratio_vs_exact = "
        "paper_value_T over the exact chain's; ratio_paired [ratio_lo, ratio_hi] = geometric mean over "
        "chains of chain k's samples per second over exact chain k's, 95 % t-interval on the log scale; "
        "final_risk_lo / _hi: 95 % t-interval over chains of each chain's final risk; early_gain / "
        "late_gain = exact chain k's risk minus chain k's at t_early (a tenth of the budget) / t_late "
        "(the last time every chain reached), floor_excess = its risk minus the smallest eps's at t_late "
        "(> 0: a higher bias floor), each with a 95 % t-interval over chains.",
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
        notes="truth = long HMC, as Korattikara et al.; smoke: 2 s budget",
        datasets=("mnist_7v9",),
        grid_keys=("chains",),
    ),
]
