"""``approx_mrf``: approximate Gibbs on a dense binary MRF, Korattikara et al. 2014, App. F (Fig. 15).

D = 100, all 161,700 triple factors, log-potential sd 0.02 (the paper's N(0, 0.02) read as an sd: as a
variance the conditionals would be near deterministic), batches of 500 factors, eps in
{.01, .05, .1, .15, .2, .25} vs exact Gibbs: mean L1 error of 5-variable joint marginals (1600 random
subsets) vs a long exact Gibbs run, as a function of wall time (Fig. 15); and the calibration of the
conditional probabilities (Fig. 14): at (state, variable) pairs from an exact Gibbs run, the fraction of
``calib_reps`` austere tests that set x_i = 1 against the exact conditional P(x_i = 1 | x_-i). The states
(``calib_states`` after ``calib_burn`` sweeps, every variable of each) are the same for every eps. Grid key:
``eps`` (a selection of the paper's grid; each cell carries its own eps).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bench.experiment import Experiment
from bench.experiments.approx.common import _child, t_interval
from bench.experiments.approx.paper_values_korattikara2014 import MRF_SAMPLES_1000S

MRF_SETTINGS = {
    "paper": {
        "D": 100,
        "sd": 0.02,
        "m": 500,
        "eps": [0.01, 0.05, 0.1, 0.15, 0.2, 0.25],
        "seconds": 1000.0,
        "truth_sweeps": 20_000,
        "subsets": 1600,
        "k": 5,
        "checkpoints": 12,
        "calib_burn": 200,
        "calib_states": 100,
        "calib_reps": 100,
    },
    "smoke": {
        "D": 12,
        "sd": 0.5,
        "m": 10,
        "eps": [0.1],
        "seconds": 1.0,
        "truth_sweeps": 2_000,
        "subsets": 50,
        "k": 3,
        "checkpoints": 3,
        "calib_burn": 20,
        "calib_states": 10,
        "calib_reps": 20,
    },
}


def mrf_cells(s: dict) -> list[dict]:
    return (
        [{"cell": "truth", "kind": "truth"}, {"cell": "gibbs", "kind": "run", "eps": 0.0}]
        + [{"cell": f"eps{e}", "kind": "run", "eps": e} for e in s["eps"]]
        + [{"cell": f"calib_eps{e}", "kind": "calib", "eps": e} for e in s["eps"]]
    )


CALIB_SEED = 14  # the states of the calibration cells (one exact Gibbs run shared by every eps)


def mrf_calib_cell(pr, s: dict, e: float, seed) -> list[dict]:
    """K14 Fig. 14: exact against austere conditional probabilities at every variable of the states."""
    from samplers import registry as R
    from samplers.approx.gibbs_calibration import calibration_curve, conditional_calibration

    D = int(s["D"])
    burn, ns = int(s["calib_burn"]), int(s["calib_states"])
    res = R.run("gibbs", pr, (burn + ns) * D, CALIB_SEED, x0=np.zeros(D, dtype=np.int64), thin=D)
    states = np.repeat(res.samples[burn:], D, axis=0)
    var_idx = np.tile(np.arange(D), ns)
    p, p_hat, frac = conditional_calibration(
        pr.model, states, var_idx, int(s["m"]), e, int(s["calib_reps"]), _child(seed, 0)
    )
    cur = calibration_curve(p, p_hat)
    hi, lo = p > 0.8, p < 0.2
    return [
        {
            "kind": "calib",
            "eps": e,
            "pairs": int(p.size),
            "reps": int(s["calib_reps"]),
            "curve_p": cur["p"],
            "curve_p_hat": cur["p_hat"],
            "curve_count": cur["count"],
            "max_bin_error": cur["max_bin_error"],
            "max_pair_error": float(np.max(np.abs(p_hat - p))),
            "mean_abs_error": float(np.mean(np.abs(p_hat - p))),
            "bias_high": _mean_sd(p_hat[hi] - p[hi]),
            "bias_low": _mean_sd(p_hat[lo] - p[lo]),
            "factor_fraction": float(np.mean(frac)),
        }
    ]


def _mean_sd(v: np.ndarray) -> list[float]:
    """[mean, sd, count] of per-pair differences (nan without pairs)."""
    if v.size == 0:
        return [float("nan"), float("nan"), 0.0]
    return [float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else float("nan"), float(v.size)]


def _subset_marginals(samples: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    k = subsets.shape[1]
    w = 2 ** np.arange(k)[::-1]
    out = np.zeros((subsets.shape[0], 2**k))
    for j, sub in enumerate(subsets):
        code = samples[:, sub] @ w
        out[j] = np.bincount(code, minlength=2**k) / samples.shape[0]
    return out


def mrf_run_cell(params: dict, seed, ctx) -> list[dict]:
    from samplers import registry as R

    s = ctx.settings
    pr = R.build_problem("dense_mrf", 0, D=int(s["D"]), sd=float(s["sd"]))
    D = int(s["D"])
    subsets = np.array(
        [
            np.sort(np.random.default_rng(1000 + j).choice(D, int(s["k"]), False))
            for j in range(int(s["subsets"]))
        ]
    )
    x0 = np.zeros(D, dtype=np.int64)
    if params["kind"] == "calib":
        return mrf_calib_cell(pr, s, float(params["eps"]), seed)
    truth = mrf_truth(pr, s, subsets)
    if params["kind"] == "truth":
        return [
            {
                "kind": "truth",
                "sweeps": int(s["truth_sweeps"]),
                "marg": truth["marg"].tolist(),
                "half_split_l1": float(truth["half_split_l1"]),
            }
        ]
    e = float(params["eps"])
    chunks, secs, n_chunk, t_tot, x, k = [], [], 20 * D, 0.0, x0, 0
    sd0 = _child(seed, 0)
    while t_tot < float(s["seconds"]):
        sd = np.random.SeedSequence(sd0.entropy, spawn_key=tuple(sd0.spawn_key) + (k,))
        if e == 0.0:
            res = R.run("gibbs", pr, n_chunk, sd, x0=x, thin=D)
        else:
            res = R.run("austere_gibbs", pr, n_chunk, sd, x0=x, thin=D, m=int(s["m"]), eps=e)
        chunks.append(res.samples)
        t_tot += res.sample_seconds
        secs.append(t_tot)
        x = res.samples[-1].copy()
        k += 1
        n_chunk = min(2 * n_chunk, 2000 * D)
    allS = np.concatenate(chunks)
    ends = np.cumsum([len(c) for c in chunks])
    cps = np.unique(np.linspace(1, len(ends), min(int(s["checkpoints"]), len(ends))).astype(int)) - 1
    l1 = [_subset_l1(allS[: ends[i]], subsets, truth["marg"]) for i in cps]
    return [
        {
            "kind": "run",
            "eps": e,
            "times": [secs[i] for i in cps],
            "l1": [float(v.mean()) for v in l1],
            "final_l1_subsets": l1[-1].tolist(),
            "chunk_sweeps": [int(len(c)) for c in chunks],
            "chunk_seconds": np.diff(np.concatenate([[0.0], secs])).tolist(),
            "sweeps": int(len(allS)),
        }
    ]


def _subset_l1(samples: np.ndarray, subsets: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per-subset L1 distance between the empirical joint of ``samples`` and ``truth`` (K14 App. F)."""
    return np.abs(_subset_marginals(samples, subsets) - truth).sum(1)


TRUTH_SEED = 15  # the long exact Gibbs run behind every cell's error (one run, cached)


def mrf_truth(pr, s: dict, subsets: np.ndarray) -> dict:
    """The reference joints of the subsets from ``truth_sweeps`` exact Gibbs sweeps (the first tenth
    discarded) and the L1 distance between the joints of the run's two halves (the reference's own
    noise). Computed once per setting and cached in the data cache (other cells wait on a lock)."""
    import fcntl

    from bench.datasets._cache import cache_path, load_cached, save_cached
    from samplers import registry as R

    D = int(s["D"])
    recipe = {
        "model": "dense_mrf",
        "D": D,
        "sd": float(s["sd"]),
        "sweeps": int(s["truth_sweeps"]),
        "subsets": int(s["subsets"]),
        "k": int(s["k"]),
        "seed": TRUTH_SEED,
    }
    path = cache_path("approx_mrf_truth", recipe)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        got = load_cached(path, recipe)
        if got is None:
            res = R.run("gibbs", pr, int(s["truth_sweeps"]) * D, TRUTH_SEED, x0=np.zeros(D, np.int64), thin=D)
            S = res.samples[len(res.samples) // 10 :]
            h = len(S) // 2
            half = _subset_l1(S[:h], subsets, _subset_marginals(S[h:], subsets)).mean()
            got = {"marg": _subset_marginals(S, subsets), "half_split_l1": np.array(half)}
            save_cached(path, got, recipe)
    return got


def mrf_calibration_summary(cal: pd.DataFrame, out) -> None:
    """K14 Fig. 14 (empirical against exact conditional probability per eps) and its table: largest binned and
    per-pair error, and the mean signed error above p = 0.8 / below 0.2 with a 95 % normal interval over pairs
    (K14: large probabilities underestimated, small ones overestimated)."""
    import matplotlib.pyplot as plt

    if cal.empty:
        return
    fig, ax = plt.subplots(figsize=(4.2, 4))
    ax.plot([0, 1], [0, 1], color="0.6", lw=0.8)
    rows = []
    for _, r in cal.sort_values("eps").iterrows():
        ax.plot(r["curve_p"], r["curve_p_hat"], marker=".", ms=4, lw=1, label=f"eps={r['eps']}")
        row = {"eps": r["eps"], "pairs": r["pairs"], "reps": r["reps"]}
        for key in ("max_bin_error", "max_pair_error", "mean_abs_error", "factor_fraction"):
            row[key] = r[key]
        for key in ("bias_high", "bias_low"):
            mu, sd, n = r[key]
            h = 1.96 * sd / np.sqrt(n) if n > 1 else float("nan")
            row[key], row[key + "_lo"], row[key + "_hi"] = mu, mu - h, mu + h
        rows.append(row)
    ax.set_xlabel("exact P(x_i = 1 | x_-i)")
    ax.set_ylabel("austere Gibbs: fraction of tests setting x_i = 1")
    ax.legend(fontsize=7)
    fig.tight_layout()
    out.figure(
        "approx_fig14_mrf_calibration",
        fig,
        caption="Korattikara et al. 2014, Fig. 14 counterpart (dense MRF): empirical conditional probability "
        "of austere Gibbs against the exact one, binned (bins of width 0.05 with >= 10 pairs).",
    )
    out.table(
        "approx_mrf_calibration",
        pd.DataFrame(rows),
        caption="Korattikara et al. 2014, App. F, Fig. 14: conditional-probability calibration of austere "
        "Gibbs; bias_high / bias_low = mean (p_hat - p) over pairs with p > 0.8 / p < 0.2 (95 % interval).",
    )


def mrf_summarize(df: pd.DataFrame, s: dict, out) -> None:
    import matplotlib.pyplot as plt

    ok = df[df["status"] == "ok"] if "status" in df else df
    mrf_calibration_summary(ok[ok["kind"] == "calib"], out)
    tr = ok[ok["kind"] == "truth"]
    if tr.empty:
        out.table(
            "approx_mrf",
            df.reindex(columns=["cell", "status", "message"]),
            caption="Korattikara et al. 2014, App. F: no truth cell.",
        )
        return
    floor = float(tr.iloc[0]["half_split_l1"])
    rows = []
    fig, ax = plt.subplots(figsize=(5, 3.8))
    runs = ok[ok["kind"] == "run"].sort_values("eps")
    ex = runs[runs["eps"] == 0.0]
    ex_final = np.asarray(ex.iloc[0]["final_l1_subsets"]) if len(ex) else None
    for _, r in runs.iterrows():
        ax.plot(r["times"], r["l1"], marker="o", label=f"eps={r['eps']}" if r["eps"] else "exact Gibbs")
        rate = np.asarray(r["chunk_sweeps"]) / np.asarray(r["chunk_seconds"])
        mu, lo, hi = t_interval(rate)
        row = {
            "eps": r["eps"],
            "final_l1": r["l1"][-1],
            "first_l1": r["l1"][0],
            "first_seconds": r["times"][0],
            "seconds": r["times"][-1],
            "sweeps": r["sweeps"],
            "sweeps_per_s": r["sweeps"] / r["times"][-1],
            "chunk_rate_lo": lo,
            "chunk_rate_hi": hi,
            "chunks": len(rate),
            "reference_half_split_l1": floor,
            "paper_value_samples_1000s": MRF_SAMPLES_1000S.get(r["eps"], float("nan")),
        }
        if ex_final is not None and r["eps"] > 0:
            # final error minus exact Gibbs's, paired by subset (95 % t-interval over the subsets)
            d = np.asarray(r["final_l1_subsets"]) - ex_final
            row["final_l1_minus_exact"], row["diff_lo"], row["diff_hi"] = t_interval(d)
        rows.append(row)
    ax.axhline(floor, color="0.6", ls=":", lw=0.8, label="reference noise (half split)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sampling seconds (compile excluded)")
    ax.set_ylabel("mean L1 error of subset joints")
    ax.legend(fontsize=7)
    out.figure("approx_fig15_mrf", fig, caption="Korattikara et al. 2014, Fig. 15 counterpart (dense MRF).")
    out.table(
        "approx_mrf",
        pd.DataFrame(rows),
        caption="Korattikara et al. 2014, App. F: mean L1 error of 5-variable "
        "joints against a long exact Gibbs run (first and last checkpoint); sweeps per second with a 95 % "
        "interval over the run's chunks; final_l1_minus_exact with a 95 % interval over the subsets, paired; "
        "paper_value = samples (sweeps) in 1000 s.",
    )


EXPERIMENTS = [
    Experiment(
        "approx_mrf",
        "approx",
        "Korattikara et al. 2014, App. F",
        "dense MRF: Gibbs vs austere Gibbs",
        MRF_SETTINGS,
        mrf_cells,
        mrf_run_cell,
        mrf_summarize,
        notes="smoke: D=12, sd 0.5, 1 s",
        grid_keys=("eps",),
    ),
]
