"""``approx_mnist``: logistic regression on MNIST 1v7 of Seita et al. 2017, §6.2 (Table 2, Figs. 3-5).

Settings of their Table 5: MNIST 1v7 13k / 100k (an augmented substitute for the 100k set), raw pixels,
no bias, flat prior, K = 100, RW sd 0.05 / 0.01, T = 5000 / 3000, trials 10 / 5, m = 100 (MHminibatch
adds 100; MHSubLhd starts at 100, x gamma = 2); AustereMH(c) worst-case design with bound 0.1 / 0.2;
AustereMH(nc) bound 0.05 / 0.1. theta_0 = 0 (unstated). Table 2 (mean minibatch size), Fig. 3 left / middle
(test accuracy of theta_t vs cumulative data, with and without the full-data passes), Figs. 4, 5 (minibatch
sizes); Fig. 3 right (MHminibatch with the temperature K = 100 for the first ``anneal["burn"]`` = 400 samples,
then K = 1 with a smaller step, ``anneal_trials`` trials per dataset; S17 do not state the step after the
switch, their driver script uses 5e-4); Fig. 6 (MHminibatch on MNIST-100k at RW sd 0.005 / 0.01 / 0.05, one
trial; sd 0.01 is Table 2's MHminibatch cell).

Grid keys: ``trials_13k``, ``trials_100k`` (Table 2), ``anneal_trials``, ``step_trials`` and ``methods``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from bench.experiment import Experiment
from bench.experiments.approx.common import APPROX_METHODS, LABEL, _child, _run_rows, t_interval
from bench.experiments.approx.paper_values_seita2017 import FIG6_MEAN_BATCH, TABLE2

BIG = "mnist_1v7_100k"


def _mnist_settings(datasets, T, trials, smoke=False):
    d = {}
    for ds, t in zip(datasets, T, strict=True):
        big = ds.endswith("100k")
        d[ds] = {
            "n_iter": t,
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
        "trials_13k": trials[0],
        "trials_100k": trials[1] if len(trials) > 1 else 0,
        "anneal": {"burn": 20 if smoke else 400, "temperature_after": 1.0, "step_after": 5e-4},
        "anneal_trials": 1 if smoke else 10,
        "steps": [0.005, 0.05],
        "step_trials": 1,
    }


MNIST_SETTINGS = {
    "paper": _mnist_settings(("mnist_1v7", BIG), (5000, 3000), (10, 5)),
    "smoke": _mnist_settings(("mnist_1v7",), (60,), (1,), smoke=True),
}


def mnist_cells(s: dict) -> list[dict]:
    n_tr = {"mnist_1v7": int(s["trials_13k"]), BIG: int(s["trials_100k"])}
    out = [
        {"cell": f"{ds}__{m}__t{t}", "kind": "table2", "dataset": ds, "method": m, "trial": t}
        for ds in s["datasets"]
        for t in range(n_tr[ds])
        for m in s["methods"]
    ]
    out += [
        {"cell": f"anneal__{ds}__t{t}", "kind": "anneal", "dataset": ds, "method": "mh_minibatch", "trial": t}
        for ds in s["datasets"]
        for t in range(int(s["anneal_trials"]))
    ]
    if BIG in s["datasets"]:
        out += [
            {
                "cell": f"steps__{BIG}__sd{st}_t{t}",
                "kind": "steps",
                "dataset": BIG,
                "method": "mh_minibatch",
                "step": st,
                "trial": t,
            }
            for st in s["steps"]
            for t in range(int(s["step_trials"]))
        ]
    return out


def _accuracy(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(((X @ theta) > 0).astype(int) == y))


def _problem(ds: str, data: dict, temperature: float):
    from samplers import registry as R

    tid = "logistic_mnist_1v7_100k" if ds.endswith("100k") else "logistic_mnist_1v7"
    return R.build_problem(tid, 0, data=data, temperature=float(temperature))


def anneal_run(params: dict, seed, ctx) -> list[dict]:
    """Fig. 3 right: MHminibatch at K = ``temperature`` for ``burn`` samples, then at K = temperature_after
    with RW sd step_after for the rest of the dataset's T; test accuracy of theta_t and cumulative data."""
    from samplers import registry as R

    s = ctx.settings
    ds = params["dataset"]
    c, a = s["datasets"][ds], s["anneal"]
    data = ctx.data(ds)
    burn, T = int(a["burn"]), int(c["n_iter"])
    if not 0 < burn < T:
        raise ValueError(f"anneal burn must lie in (0, {T}), got {burn}")
    hyp = c["hyper"]["mh_minibatch"]
    pr = _problem(ds, data, s["temperature"])
    r1 = R.run("mh_minibatch", pr, burn, _child(seed, 0), x0=np.zeros(pr.dim), step=float(c["step"]), **hyp)
    pr2 = _problem(ds, data, a["temperature_after"])
    x = r1.samples[-1].copy()
    r2 = R.run("mh_minibatch", pr2, T - burn, _child(seed, 1), x0=x, step=float(a["step_after"]), **hyp)
    samples = np.concatenate([r1.samples, r2.samples])
    ne = np.concatenate([r1.n_evals, r2.n_evals])
    ev = int(s["eval_every"])
    idx = np.arange(ev - 1, samples.shape[0], ev)
    return [
        {
            "kind": "anneal",
            "dataset": ds,
            "method": "mh_minibatch",
            "trial": params["trial"],
            "burn": burn,
            "iters": (idx + 1).tolist(),
            "acc": [_accuracy(samples[i], data["X_test"], data["y_test"]) for i in idx],
            "cum_data": np.cumsum(ne)[idx].tolist(),
            "mean_batch_burn": float(r1.n_evals.mean()),
            "mean_batch_after": float(r2.n_evals.mean()),
            "accept_burn": r1.accept_rate,
            "accept_after": r2.accept_rate,
            "sample_seconds": r1.sample_seconds + r2.sample_seconds,
        }
    ]


def mnist_run_cell(params: dict, seed, ctx) -> list[dict]:
    from samplers import registry as R

    if params.get("kind") == "anneal":
        return anneal_run(params, seed, ctx)
    s = ctx.settings
    ds = params["dataset"]
    c = s["datasets"][ds]
    data = ctx.data(ds)
    pr = _problem(ds, data, s["temperature"])
    m = params["method"]
    step = float(params.get("step", c["step"]))
    res = R.run(m, pr, int(c["n_iter"]), _child(seed, 0), x0=np.zeros(pr.dim), step=step, **c["hyper"][m])
    ev = int(s["eval_every"])
    idx = np.arange(ev - 1, res.samples.shape[0], ev)
    acc = [_accuracy(res.samples[i], data["X_test"], data["y_test"]) for i in idx]
    cum = np.cumsum(res.n_evals)[idx]
    cum_full = np.cumsum(res.n_evals + res.extra["trace_0"])[idx]
    row = _run_rows(res, m, pr.model.X.shape[0])
    row.update(
        kind=params.get("kind", "table2"),
        step=step,
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
    if "kind" not in ok:
        ok = ok.assign(kind="table2")
    anneal_summary(ok[ok["kind"] == "anneal"], out)
    step_summary(ok[ok["kind"].isin(["steps", "table2"])], out)
    ok = ok[ok["kind"] == "table2"]
    rows = []
    for (ds, m), g in ok.groupby(["dataset", "method"], sort=False):
        mb = t_interval(g["mean_batch"])
        rows.append(
            {
                "dataset": ds,
                "method": m,
                "label": LABEL.get(m, m),
                "trials": len(g),
                "mean_batch": mb[0],
                "mean_batch_lo": mb[1],
                "mean_batch_hi": mb[2],
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
    data_to_accuracy(ok, out)
    dss = list(t["dataset"].unique())
    fig, ax = plt.subplots(1, len(dss), figsize=(5 * len(dss), 3.8), squeeze=False)
    for j, ds in enumerate(dss):
        for m, g in ok[ok["dataset"] == ds].groupby("method", sort=False):
            # S17's Fig. 3: mean over trials at each evaluation point, +- one sd shaded
            n = min(len(a) for a in g["acc"])
            acc = np.array([a[:n] for a in g["acc"]])
            cum = np.array([c[:n] for c in g["cum_data"]]).mean(0)
            cum_full = np.array([c[:n] for c in g["cum_data_with_full"]]).mean(0)
            col = f"C{list(APPROX_METHODS).index(m)}"
            mu, sd = acc.mean(0), acc.std(0)
            ax[0][j].plot(cum, mu, color=col, label=f"{LABEL.get(m, m)} ({len(g)} trials)")
            ax[0][j].fill_between(cum, mu - sd, mu + sd, color=col, alpha=0.2)
            if np.any(cum_full != cum):
                ax[0][j].plot(cum_full, mu, ls=":", color=col)
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


# Fig. 3 has no printed numbers; its claim ("convergence more than an order of magnitude faster than
# AustereMH(nc) and several orders of magnitude compared to AustereMH(c) and MHSubLhd") is read as the
# cumulative test data until theta_t's test accuracy first reaches these levels (every method ends at
# 0.976-0.986 on both sets).
ACCURACY_LEVELS = (0.95, 0.97)


def _data_to(acc, cum, level: float) -> float:
    a = np.asarray(acc)
    return float(np.asarray(cum)[np.argmax(a >= level)]) if np.any(a >= level) else float("nan")


def _log_ratio(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Ratio of the geometric means of two samples and its Welch t-interval (on the log scale)."""
    from scipy import stats

    if a.size == 0 or b.size == 0:
        return (np.nan,) * 3
    r = float(np.exp(a.mean() - b.mean()))
    if a.size < 2 or b.size < 2:
        return r, np.nan, np.nan
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    if se == 0.0:
        return r, r, r
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    h = float(stats.t.ppf(0.5 + level / 2, df)) * se
    return r, r * math.exp(-h), r * math.exp(h)


def data_to_accuracy(ok: pd.DataFrame, out) -> None:
    """Fig. 3 (left, middle) in numbers: per dataset, method and accuracy level, the cumulative data
    (test data, and with the full-data passes) until the level is first reached, mean with a 95 %
    t-interval over trials, and the ratio of its geometric mean to MHminibatch's (Welch interval on logs)."""
    rows, logs = [], {}
    for (ds, m), g in ok.groupby(["dataset", "method"], sort=False):
        for lev in ACCURACY_LEVELS:
            d = [_data_to(a, c, lev) for a, c in zip(g["acc"], g["cum_data"], strict=True)]
            df = [_data_to(a, c, lev) for a, c in zip(g["acc"], g["cum_data_with_full"], strict=True)]
            mu, lo, hi = t_interval(d)
            logs[(ds, m, lev)] = np.log(np.asarray(d)[np.isfinite(d)])
            rows.append(
                {
                    "dataset": ds,
                    "method": m,
                    "level": lev,
                    "trials": len(g),
                    "reached": int(np.isfinite(d).sum()),
                    "data": mu,
                    "data_lo": lo,
                    "data_hi": hi,
                    "data_with_full": t_interval(df)[0],
                }
            )
    t = pd.DataFrame(rows)
    ratios = [
        _log_ratio(logs[(ds, m, lev)], logs[(ds, "mh_minibatch", lev)])
        if (ds, "mh_minibatch", lev) in logs
        else (np.nan,) * 3
        for ds, m, lev in zip(t["dataset"], t["method"], t["level"], strict=True)
    ]
    t["ratio_vs_mhminibatch"], t["ratio_lo"], t["ratio_hi"] = (np.array(c) for c in zip(*ratios, strict=True))
    out.table(
        "approx_fig3_data_to_accuracy",
        t,
        caption="Seita et al. 2017, Fig. 3 in numbers: cumulative test data until theta_t's test accuracy "
        "first reaches `level` (mean over the trials that reach it, 95 % t-interval), with the full-data "
        "passes (data_with_full), and the ratio of its geometric mean to MHminibatch's (Welch 95 % "
        "interval on the log scale).",
    )


def anneal_summary(an: pd.DataFrame, out) -> None:
    """Fig. 3 right: MHminibatch test accuracy against cumulative data, mean +- sd over trials, the switch
    K = 100 -> 1 marked; table of the mean batch and acceptance before / after and the final accuracy."""
    import matplotlib.pyplot as plt

    if an.empty:
        return
    fig, ax = plt.subplots(figsize=(5, 3.8))
    rows = []
    for k, (ds, g) in enumerate(an.groupby("dataset", sort=False)):
        n = min(len(a) for a in g["acc"])
        acc = np.array([a[:n] for a in g["acc"]])
        it = np.asarray(g.iloc[0]["iters"][:n])
        mu, sd = acc.mean(0), acc.std(0)
        ax.plot(it, mu, color=f"C{k}", label=ds)
        ax.fill_between(it, mu - sd, mu + sd, color=f"C{k}", alpha=0.25)
        fa = t_interval([a[-1] for a in g["acc"]])
        rows.append(
            {
                "dataset": ds,
                "trials": len(g),
                "burn": int(g.iloc[0]["burn"]),
                "mean_batch_burn": g["mean_batch_burn"].mean(),
                "mean_batch_after": g["mean_batch_after"].mean(),
                "accept_burn": g["accept_burn"].mean(),
                "accept_after": g["accept_after"].mean(),
                "final_accuracy": fa[0],
                "final_accuracy_lo": fa[1],
                "final_accuracy_hi": fa[2],
            }
        )
    ax.axvline(int(an.iloc[0]["burn"]), ls="--", color="0.5")
    ax.set_xlabel("samples of theta")
    ax.set_ylabel("test accuracy of theta_t")
    ax.legend(fontsize=7)
    fig.tight_layout()
    out.figure(
        "approx_fig3right_mnist_anneal",
        fig,
        caption="Seita et al. 2017, Fig. 3 right counterpart: MHminibatch, temperature 100 -> 1 after the "
        "dashed line, mean +- sd over trials.",
    )
    out.table(
        "approx_fig3right_anneal",
        pd.DataFrame(rows),
        caption="Seita et al. 2017, Fig. 3 right: MHminibatch with K = 100 for the burn-in, then K = 1 with "
        "a smaller step; final accuracy with a 95 % t-interval over trials.",
    )


def step_summary(st: pd.DataFrame, out) -> None:
    """Fig. 6: MHminibatch minibatch-size histograms on MNIST-100k per RW sd (the Table 2 cell at sd 0.01)."""
    import matplotlib.pyplot as plt

    st = st[(st["dataset"] == BIG) & (st["method"] == "mh_minibatch")]
    if st.empty or "step" not in st:
        return
    st = st[st["kind"].eq("steps") | st["trial"].eq(0)]
    groups = list(st.groupby("step"))
    fig, ax = plt.subplots(1, len(groups), figsize=(3.5 * len(groups), 3), squeeze=False)
    rows = []
    for j, (sd, g) in enumerate(groups):
        r = g.iloc[0]
        e, c = np.asarray(r["hist_edges"]), np.asarray(r["hist_counts"])
        if e.size:
            ax[0][j].bar(e, c, width=np.diff(np.append(e, e[-1] * 1.3)), align="edge")
            ax[0][j].set_xscale("log")
            ax[0][j].set_yscale("log")
        ax[0][j].set_title(f"sd {sd} (mean {r['mean_batch']:.1f})")
        ax[0][j].set_xlabel("minibatch size")
        mb = t_interval(g["mean_batch"])
        rows.append(
            {
                "step": sd,
                "trials": len(g),
                "mean_batch": mb[0],
                "mean_batch_lo": mb[1],
                "mean_batch_hi": mb[2],
                "accept_rate": g["accept_rate"].mean(),
                "final_accuracy": g["final_accuracy"].mean(),
                "paper_value": FIG6_MEAN_BATCH.get(float(sd), float("nan")),
            }
        )
    fig.tight_layout()
    out.figure(
        "approx_fig6_mnist_steps",
        fig,
        caption="Seita et al. 2017, Fig. 6 counterpart: MHminibatch minibatch sizes on MNIST-100k per RW sd.",
    )
    out.table(
        "approx_fig6_steps",
        pd.DataFrame(rows),
        caption="Seita et al. 2017, Fig. 6 / App. C.3: MHminibatch mean minibatch size on MNIST-100k against "
        "the RW sd; paper_value = S17's printed means (sd 0.01: Table 2).",
    )


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
        grid_keys=("trials_13k", "trials_100k", "anneal_trials", "step_trials", "methods"),
        optional_grid_keys=("trials_100k",),
    ),
]
