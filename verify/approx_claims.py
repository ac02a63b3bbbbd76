"""Claim rows of the approx family (results/claims.csv): read experiment tables when they exist
(results/approx_*.csv written by bench/experiments/approx/), else run a reduced version."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from bench.experiments.approx.common import fmt_interval
from verify import approx_checks as C
from verify import approx_matrix as AM
from verify.checks import results_dir

ORDER = ["mh_minibatch", "austere_mh_nc", "austere_mh_c", "mh_sublhd"]
T1_ORDER = ["mh_minibatch", "austere_mh_c", "mh_sublhd"]


def _order_row(
    cid, paper, statement, means: dict, evidence: str, ci: dict | None = None, order=tuple(ORDER)
) -> dict:
    """Ordering of the mean batches; with ``ci`` ({method: (lo, hi)}, 95 % over trials) each step of the
    order is resolved when the intervals are apart."""
    present = [m for m in order if m in means]
    vals = [means[m] for m in present]
    holds = len(present) >= 3 and all(a < b for a, b in zip(vals, vals[1:], strict=False))
    row = {
        "claim_id": cid,
        "paper": paper,
        "statement": statement,
        "evidence": evidence,
        "measured": "; ".join(f"{m}={means[m]:.1f}" for m in present),
        "holds": bool(holds),
    }
    if ci:
        parts, open_steps = [], []
        for m in present:
            lo, hi = ci.get(m, (np.nan, np.nan))
            parts.append(
                f"{m}={means[m]:.1f} [{lo:.1f}, {hi:.1f}]" if np.isfinite(lo) else f"{m}={means[m]:.1f}"
            )
        for a, b in zip(present, present[1:], strict=False):
            if not (ci.get(a, (np.nan,) * 2)[1] < ci.get(b, (np.nan,) * 2)[0]):
                open_steps.append(f"{a} < {b}")
        row["measured"] = "; ".join(parts)
        word = "holds" if holds else "does not hold"
        row["verdict"] = (
            f"{word}, every step resolved"
            if not open_steps
            else (f"{word} in the means; not resolved by the intervals: {', '.join(open_steps)}")
        )
    return row


def claim_batch_order(quick: bool) -> list[dict]:
    """Mean minibatch size ordering (S17 Tables 1, 2) from the experiment tables; if absent, a
    reduced Gaussian-mixture run (N = 1e5, K = 1e3, 300 iterations)."""
    rows = []
    for name, stmt in (
        ("approx_table1", "Table 1 (GMM) ordering of mean minibatch size"),
        ("approx_table2", "Table 2 (MNIST 1v7) ordering of mean minibatch size"),
    ):
        f = results_dir() / f"{name}.csv"
        if f.exists():
            df = pd.read_csv(f)
            for key, g in df.groupby(df.columns[0]) if "dataset" in df.columns else [("", df)]:
                means = dict(zip(g["method"], g["mean_batch"], strict=False))
                ci = None
                if "mean_batch_lo" in g:
                    ci = {
                        m: (lo, hi)
                        for m, lo, hi in zip(
                            g["method"], g["mean_batch_lo"], g["mean_batch_hi"], strict=False
                        )
                    }
                # Table 1 has no AustereMH(nc) (S17 ran it on MNIST only): its claim is S17's three methods,
                # and the four-method order (ours) is a row of its own
                orders = [("", ORDER)] if name != "approx_table1" else [("", T1_ORDER), ("-with-nc", ORDER)]
                for suffix, order in orders:
                    rows.append(
                        _order_row(
                            f"S17-{name}-{key}".rstrip("-") + suffix,
                            C.PAPER_S,
                            stmt if not suffix else stmt + ", AustereMH(nc) added (not in S17's Table 1)",
                            means,
                            f"results/{name}.csv",
                            ci,
                            tuple(order),
                        )
                    )
    if rows:
        return rows
    if quick:
        return [
            {
                "claim_id": "S17-table1",
                "paper": C.PAPER_S,
                "statement": "Table 1/2 ordering of mean minibatch size",
                "evidence": "no results/approx_table1.csv yet (run the approx experiments)",
                "measured": "",
                "holds": "n/a (quick)",
            }
        ]
    from samplers import registry as R

    pr = R.build_problem("gaussian_mixture", 0, N=100_000, temperature=1e3)
    x0 = np.array([0.0, 1.0])
    n = 150 if quick else 600
    means = {}
    hyper = {
        "mh_minibatch": {"m": 50, "corr_n": 400},
        "austere_mh_c": {"m": 50, "eps": 0.005},
        "austere_mh_nc": {"bound": 0.05, "m_grid": (50, 100, 200), "mu_points": 41},
        "mh_sublhd": {"m": 50, "gamma": 1.5},
    }
    for m, hp in hyper.items():
        r = R.run(m, pr, n, 1, x0=x0, step=0.05, **hp)
        means[m] = r.mean_batch
    return [
        _order_row(
            "S17-table1-reduced",
            C.PAPER_S,
            "Table 1 ordering (reduced GMM N=1e5, K=1e3, RW sd 0.05)",
            means,
            f"reduced run, {n} iterations each",
        )
    ]


def claim_correction(quick: bool) -> list[dict]:
    """L_inf of C_1 at n = 4000, sigma = 1, lambda = 10 <= 1e-3 (S17 §4: 8.9e-4), from the approx_table3
    table when the results dir has it; else solved (quick: n = 2000 proxy, printed 1.3e-3, not evaluated)."""
    from samplers.approx.correction import solve_correction

    linf = C._table3_solved().get((4000, 1.0, 10.0))  # the approx_table3 experiment's value, if present
    stored = linf is not None
    n = 4000 if stored or not quick else 2000
    if not stored:
        _, _, linf = solve_correction(n, 20.0, 10.0, 1.0)
    holds = linf <= 1e-3 if n == 4000 else None
    return [
        {
            "claim_id": "S17-correction-4000",
            "paper": C.PAPER_S,
            "statement": "L_inf(N(0,1) * C_1 - logistic) <= 1e-3 at N=4000, sigma=1, lambda=10",
            "evidence": "results/approx_table3.csv" if stored else f"solve_correction(n={n})",
            "measured": f"{linf:.3g}",
            "holds": bool(holds) if holds is not None else "n/a (quick: n=2000 proxy)",
            "paper_value": "8.9e-4",
            "verdict": (
                f"{'holds' if holds else 'does not hold'} (exact computation, no sampling: {linf:.3g})"
                if holds is not None
                else "not evaluated (quick: n = 2000 proxy)"
            ),
        }
    ]


def claim_bias_floor(quick: bool) -> list[dict]:
    """Exact stationary TV of AustereMH increases with eps (the bias floor ordering of K14 Figs 2-4,
    15), on the enumerable problem."""
    L = C.tiny()
    eps = (0.05, 0.1, 0.2, 0.3)
    tvs = [AM.stationary_tv(L.matrix(lambda l, k, e=e: AM.austere_accept(l, k, 2, e)), L.target) for e in eps]
    holds = all(a <= b + 1e-12 for a, b in zip(tvs, tvs[1:], strict=False))
    return [
        {
            "claim_id": "K14-bias-floor",
            "paper": C.PAPER_K,
            "statement": "bias floor grows with eps (risk-vs-time plateaus ordered by eps)",
            "evidence": "exact stationary TV, tiny_grid N=5, m=2",
            "measured": "; ".join(f"eps={e}: {t:.4g}" for e, t in zip(eps, tvs, strict=True)),
            "holds": bool(holds and not math.isnan(tvs[0])),
            "verdict": f"{'holds' if holds else 'does not hold'} (exact stationary TVs, no sampling)",
        }
    ]


def _table(name: str) -> pd.DataFrame | None:
    f = results_dir() / f"{name}.csv"
    return pd.read_csv(f) if f.exists() else None


def _not_run(cid: str, paper: str, statement: str, table: str) -> dict:
    return {
        "claim_id": cid,
        "paper": paper,
        "statement": statement,
        "evidence": f"results/{table}.csv absent (the experiment has no stored or finished cell)",
        "measured": "not run",
        "holds": "",
        "verdict": "not run",
    }


def _ratio_verdict(value: float, lo: float, hi: float, n: int, reps: str | None = None) -> tuple[object, str]:
    """holds / does not hold at the point value, with the interval when there is one (> 1 claims);
    ``reps`` names the replicates behind the interval (default: n paired chains)."""
    iv = f"x{value:.2f} [{lo:.2f}, {hi:.2f}]" if np.isfinite(lo) and np.isfinite(hi) else f"x{value:.2f}"
    reps = reps or f"{n} paired chain{'s' if n != 1 else ''}"
    if np.isfinite(lo) and lo > 1:
        return True, f"holds ({iv}, {reps})"
    if np.isfinite(hi) and hi < 1:
        return False, f"does not hold ({iv}, {reps})"
    if np.isfinite(lo):
        return bool(value > 1), f"a tie within the interval ({iv}, {reps})"
    return bool(
        value > 1
    ), f"{'holds' if value > 1 else 'does not hold'} at the point value ({iv}, no interval)"


def claim_speedups(quick: bool) -> list[dict]:
    """K14 §6.1 (Fig. 2) and §6.2 (Fig. 3): the approximate test draws more samples per second than exact
    MH, per eps, from the experiments' tables (chain k against exact chain k, geometric mean, 95 % t-interval
    over chains on the log scale)."""
    rows = []
    for table, sec, paper_col in (
        ("approx_mnist79_risk", "6.1", "paper_ratio_vs_exact"),
        ("approx_ica", "6.2", "paper_ratio_vs_exact"),
    ):
        stmt = f"§{sec}: more samples per second than exact MH at each eps"
        t = _table(table)
        if t is None:
            rows.append(_not_run(f"K14-{sec}-speedup", C.PAPER_K, stmt, table))
            continue
        val_col = "ratio_paired" if "ratio_paired" in t else "samples_per_s_vs_exact"
        for _, r in t[t["eps"] > 0].iterrows():
            n = int(r.get("chains", 1))
            value = float(r[val_col]) if np.isfinite(r[val_col]) else float(r["samples_per_s_vs_exact"])
            lo, hi = float(r.get("ratio_lo", np.nan)), float(r.get("ratio_hi", np.nan))
            holds, verdict = _ratio_verdict(value, lo, hi, n)
            rows.append(
                {
                    "claim_id": f"K14-{sec}-speedup-eps{r['eps']}",
                    "paper": C.PAPER_K,
                    "statement": f"§{sec}: eps = {r['eps']} draws more samples per second than exact MH",
                    "evidence": f"results/{table}.csv",
                    "measured": f"x{value:.2f} samples per second over exact MH",
                    "holds": holds,
                    "paper_value": f"x{float(r[paper_col]):.2f}",
                    "value": value,
                    "ci_low": lo,
                    "ci_high": hi,
                    "verdict": verdict,
                }
            )
    return rows


def claim_gibbs_calibration(quick: bool) -> list[dict]:
    """K14 App. F, Fig. 14: austere Gibbs underestimates large conditional probabilities and overestimates
    small ones (mean p_hat - p over pairs with p > 0.8 below 0 and with p < 0.2 above 0, 95 % intervals)."""
    stmt = "App. F: large conditionals underestimated, small ones overestimated (Fig. 14)"
    t = _table("approx_mrf_calibration")
    if t is None:
        return [_not_run("K14-F-calibration", C.PAPER_K, stmt, "approx_mrf_calibration")]
    rows = []
    for _, r in t.iterrows():
        hi_ok = r["bias_high_hi"] < 0
        lo_ok = r["bias_low_lo"] > 0
        iv = (
            f"p > 0.8: {r['bias_high']:+.4f} [{r['bias_high_lo']:+.4f}, {r['bias_high_hi']:+.4f}]; "
            f"p < 0.2: {r['bias_low']:+.4f} [{r['bias_low_lo']:+.4f}, {r['bias_low_hi']:+.4f}]"
        )
        rows.append(
            {
                "claim_id": f"K14-F-calibration-eps{r['eps']}",
                "paper": C.PAPER_K,
                "statement": stmt,
                "evidence": "results/approx_mrf_calibration.csv",
                "measured": f"{iv}; largest binned error {r['max_bin_error']:.4f}",
                "holds": bool(hi_ok and lo_ok),
                "verdict": ("holds" if hi_ok and lo_ok else "does not hold") + f" ({iv})",
            }
        )
    return rows


def claim_step_sweep(quick: bool) -> list[dict]:
    """S17 Fig. 6: MHminibatch's mean minibatch on MNIST-100k grows with the RW sd (S17: 116.1 / 216.5 /
    2215.6)."""
    stmt = "Fig. 6: a smaller step gives smaller MHminibatch minibatches (MNIST-100k)"
    t = _table("approx_fig6_steps")
    if t is None:
        return [_not_run("S17-fig6-steps", C.PAPER_S, stmt, "approx_fig6_steps")]
    t = t.sort_values("step")
    means = t["mean_batch"].to_numpy()
    holds = len(means) >= 2 and bool(np.all(np.diff(means) > 0))
    meas = "; ".join(
        f"sd {a}: {b:.1f} (S17 {c})" for a, b, c in zip(t["step"], means, t["paper_value"], strict=True)
    )
    return [
        {
            "claim_id": "S17-fig6-steps",
            "paper": C.PAPER_S,
            "statement": stmt,
            "evidence": "results/approx_fig6_steps.csv",
            "measured": meas,
            "holds": holds,
            "verdict": ("holds" if holds else "does not hold") + f" ({meas})",
        }
    ]


def _between(v: float, a: float, b: float) -> bool:
    return min(a, b) < v < max(a, b)


def claim_table4_between(quick: bool) -> list[dict]:
    """S17 Table 4: MHminibatch's binned log-likelihood (eq. 39) and chi^2 lie between AustereMH(c)'s and
    MHSubLhd's (S17: -1307 between -1387 and -1295; 4502 between 5217 and 3462), means over trials; the
    verdict says whether the 95 % intervals separate MHminibatch from both."""
    stmt = "Table 4: MHminibatch's eq. 39 log-likelihood and chi^2 lie between AustereMH(c)'s and MHSubLhd's"
    t = _table("approx_table4")
    if t is None:
        return [_not_run("S17-table4", C.PAPER_S, stmt, "approx_table4")]
    t = t.set_index("method")
    need = ("MHminibatch", "AustereMH(c)", "MHSubLhd")
    if not all(k in t.index for k in need):
        return [_not_run("S17-table4", C.PAPER_S, stmt, "approx_table4")]
    rows = []
    for col, lo, hi, pv in (
        ("loglik_eq39", "loglik_lo", "loglik_hi", "paper_value"),
        ("chi2", "chi2_lo", "chi2_hi", "paper_value_chi2"),
    ):
        mb, c, sl = (t.loc[k] for k in need)
        holds = _between(mb[col], c[col], sl[col])
        apart = all(
            np.isfinite(x[lo]) and (mb[hi] < x[lo] or mb[lo] > x[hi]) for x in (c, sl)
        ) and np.isfinite(mb[lo])
        meas = "; ".join(
            f"{k} {fmt_interval(t.loc[k, col], t.loc[k, lo], t.loc[k, hi], spec='.0f')}" for k in need
        )
        rows.append(
            {
                "claim_id": f"S17-table4-{col}",
                "paper": C.PAPER_S,
                "statement": stmt.replace(
                    "log-likelihood and chi^2", "log-likelihood" if col != "chi2" else "chi^2"
                ),
                "evidence": "results/approx_table4.csv",
                "measured": meas,
                "holds": bool(holds),
                "paper_value": "; ".join(f"{k} {t.loc[k][pv]:.0f}" for k in need),
                "verdict": ("holds" if holds else "does not hold")
                + (" (intervals apart)" if apart else " in the means; intervals overlap")
                + f": {meas}",
            }
        )
    return rows


# S17 §6.2: "convergence more than an order of magnitude faster than AustereMH(nc) and several orders of
# magnitude compared to AustereMH(c) and MHSubLhd" (cumulative data, Fig. 3): read as factors 10 and 100.
FIG3_FACTORS = {"austere_mh_nc": 10.0, "austere_mh_c": 100.0, "mh_sublhd": 100.0}
FIG3_LEVEL = 0.97


def claim_fig3_convergence(quick: bool) -> list[dict]:
    """S17 Fig. 3: MHminibatch reaches a test accuracy with >= 10x less cumulative data than AustereMH(nc)
    and >= 100x less than AustereMH(c) / MHSubLhd (level 0.97; interval from the trials)."""
    t = _table("approx_fig3_data_to_accuracy")
    if t is None:
        return [
            _not_run(
                "S17-fig3", C.PAPER_S, "Fig. 3: faster convergence in data", "approx_fig3_data_to_accuracy"
            )
        ]
    rows = []
    for _, r in t[(t["level"] == FIG3_LEVEL) & t["method"].isin(list(FIG3_FACTORS))].iterrows():
        f = FIG3_FACTORS[r["method"]]
        v, lo, hi = float(r["ratio_vs_mhminibatch"]), float(r["ratio_lo"]), float(r["ratio_hi"])
        iv = f"x{v:.1f} [{lo:.1f}, {hi:.1f}]" if np.isfinite(lo) and np.isfinite(hi) else f"x{v:.1f}"
        if np.isfinite(lo) and lo > f:
            holds, word = True, "holds"
        elif np.isfinite(hi) and hi < f:
            holds, word = False, "does not hold"
        elif np.isfinite(lo):
            holds, word = bool(v > f), "undecided within the interval"
        else:
            holds, word = bool(v > f), ("holds" if v > f else "does not hold") + " at the point value"
        rows.append(
            {
                "claim_id": f"S17-fig3-{r['dataset']}-{r['method']}",
                "paper": C.PAPER_S,
                "statement": f"Fig. 3 ({r['dataset']}): MHminibatch reaches test accuracy {FIG3_LEVEL} with "
                f">= {f:.0f}x less cumulative data than {r['method']}",
                "evidence": "results/approx_fig3_data_to_accuracy.csv",
                "measured": f"{iv} the data of MHminibatch ({int(r['trials'])} trials)",
                "holds": holds,
                "threshold": f,
                "paper_value": f">= x{f:.0f}",
                "value": v,
                "ci_low": lo,
                "ci_high": hi,
                "verdict": f"{word} ({iv} against >= x{f:.0f}, {int(r['trials'])} trials)",
            }
        )
    return rows


def claim_sgld_corrected(quick: bool) -> list[dict]:
    """K14 §6.4 / Fig. 5: SGLD alone is thrown off by its large steps; corrected by the approximate MH test
    it is close to the posterior: TV(SGLD + test, eps) < TV(SGLD), 95 % t-intervals over chains."""
    stmt = "§6.4: SGLD corrected by the approximate MH test is closer to the posterior than SGLD"
    t = _table("approx_sgld_l1")
    if t is None or not (t["method"] == "sgld").any():
        return [_not_run("K14-6.4-sgld", C.PAPER_K, stmt, "approx_sgld_l1")]
    base = t[t["method"] == "sgld"].iloc[0]
    rows = []
    for _, r in t[t["method"] == "sgld_austere"].iterrows():
        holds = bool(r["tv"] < base["tv"])
        apart = np.isfinite(r["tv_hi"]) and np.isfinite(base["tv_lo"]) and r["tv_hi"] < base["tv_lo"]
        meas = (
            f"TV {r['tv']:.3f} [{r['tv_lo']:.3f}, {r['tv_hi']:.3f}] vs SGLD {base['tv']:.3f} "
            f"[{base['tv_lo']:.3f}, {base['tv_hi']:.3f}] ({int(r['chains'])} chains)"
        )
        rows.append(
            {
                "claim_id": f"K14-6.4-sgld-eps{r['eps']}",
                "paper": C.PAPER_K,
                "statement": stmt + f" (eps = {r['eps']})",
                "evidence": "results/approx_sgld_l1.csv",
                "measured": meas,
                "holds": holds,
                "paper_value": "figure (SGLD + test 'almost indistinguishable' from the posterior)",
                "value": float(r["tv"]),
                "ci_low": float(r["tv_lo"]),
                "ci_high": float(r["tv_hi"]),
                "verdict": ("holds" if holds else "does not hold")
                + (", intervals apart" if apart else ", intervals overlap")
                + f": {meas}",
            }
        )
    return rows


def claim_design(quick: bool) -> list[dict]:
    """K14 §6.5 / Fig. 6: the average-case design meets each target error with less data than the
    worst-case design, and at the largest errors uses about half the data of the fixed-m heuristic at equal
    test error. Ratios are geometric means over replicates (disjoint training / test pair sets) with their
    95% intervals: holds when every interval lies below 1 (fixed m: below 0.75 for "about half")."""
    stmt = "§6.5: the average-case design needs less data than the worst-case design"
    t = _table("approx_design")
    if t is None or "data_vs_worst" not in t:
        return [_not_run("K14-6.5-design", C.PAPER_K, stmt, "approx_design")]
    av = t[t["design"] == "average"].dropna(subset=["data_vs_worst"]).sort_values("target_error")

    def meas(col: str, tab: pd.DataFrame) -> str:
        return "; ".join(
            f"target {r['target_error']:g}: x"
            + fmt_interval(r[col], r.get(col + "_lo", np.nan), r.get(col + "_hi", np.nan), spec=".2f")
            for _, r in tab.iterrows()
        )

    def upper(col: str, tab: pd.DataFrame) -> np.ndarray:
        hi = tab[col + "_hi"].to_numpy(float)
        return np.where(np.isfinite(hi), hi, np.inf)  # a single replicate decides nothing

    n = int(t["replicates"].max()) if "replicates" in t else 1
    m_w = meas("data_vs_worst", av)
    holds = bool(len(av) and (upper("data_vs_worst", av) < 1).all())
    rows = [
        {
            "claim_id": "K14-6.5-design-worst",
            "paper": C.PAPER_K,
            "statement": stmt + " (data average / worst at each target error with a worst-case design)",
            "evidence": "results/approx_design.csv",
            "measured": m_w,
            "holds": holds,
            "verdict": ("holds" if holds else "undecided or does not hold")
            + f" ({m_w}; geometric mean [95% interval] over {n} replicates)",
        }
    ]
    top = t[t["design"] == "average"].dropna(subset=["data_vs_fixed"]).sort_values("target_error").iloc[-2:]
    if len(top):
        m_f = meas("data_vs_fixed", top)
        up = upper("data_vs_fixed", top)
        rows.append(
            {
                "claim_id": "K14-6.5-design-fixed-m",
                "paper": C.PAPER_K,
                "statement": "§6.5: at large errors the average-case design uses about half the data of the "
                "fixed-m heuristic (m = 600) at equal test error",
                "evidence": "results/approx_design.csv",
                "measured": m_f,
                "holds": bool((up < 0.75).all()),
                "paper_value": "x0.5",
                "verdict": (
                    "holds"
                    if (up < 0.75).all()
                    else "less data, not half"
                    if (up < 1).all()
                    else "undecided or does not hold"
                )
                + f" ({m_f}; K14 x0.5; over {n} replicates)",
            }
        )
    return rows


def claim_rjmcmc(quick: bool) -> list[dict]:
    """K14 §6.3 / Fig. 4 (MiniBooNE): after the time budget the lowest risk of the predictive mean is at a
    moderate eps (0.01 or 0.05), below exact RJMCMC's. Where MiniBooNE cannot be downloaded the experiment's
    table holds the cells' status, and the row says "data unavailable"; so does a rebuild without the table
    when the file is neither in the data dir nor in the mirror."""
    stmt = "§6.3: the lowest risk after the time budget is at a moderate eps, below exact RJMCMC's"
    t = _table("approx_rjmcmc")
    if t is None and _miniboone_present():
        return [_not_run("K14-6.3-rjmcmc", C.PAPER_K, stmt, "approx_rjmcmc")]
    if t is None or "final_risk" not in t:
        cells_say = t is not None and "status" in t and (t["status"] == "data unavailable").any()
        msg = "data unavailable" if cells_say or t is None else "not run"
        return [
            {
                "claim_id": "K14-6.3-rjmcmc",
                "paper": C.PAPER_K,
                "statement": stmt,
                "evidence": "results/approx_rjmcmc.csv (MiniBooNE)",
                "measured": msg,
                "holds": "",
                "verdict": msg,
            }
        ]
    best = t.loc[t["final_risk"].idxmin()]
    exact = t[t["eps"] == 0.0]
    holds = bool(0.0 < best["eps"] < 0.1 and len(exact) and best["final_risk"] < exact["final_risk"].iloc[0])
    meas = "; ".join(f"eps {e}: {r:.3g}" for e, r in zip(t["eps"], t["final_risk"], strict=True))
    n = int(t["chains"].min())
    return [
        {
            "claim_id": "K14-6.3-rjmcmc",
            "paper": C.PAPER_K,
            "statement": stmt,
            "evidence": "results/approx_rjmcmc.csv",
            "measured": f"final risk {meas}",
            "holds": holds,
            "verdict": ("holds" if holds else "does not hold")
            + f" (final risk {meas}; {n} chain(s) a setting, "
            "no interval)",
        }
    ]


def _miniboone_present() -> bool:
    """Whether the MiniBooNE file is in the data dir or the mirror (no download is tried)."""
    from bench.datasets.fetch import DataUnavailable, fetch

    try:
        fetch("miniboone", offline=True)
    except DataUnavailable:
        return False
    return True


def claim_mrf_sweeps(quick: bool) -> list[dict]:
    """K14 App. F / Fig. 15: austere Gibbs draws more sweeps than exact Gibbs in the same time (K14: 2,897
    exact against 3,429-5,959 in 1000 s), per eps; one chain each, the interval from the runs' chunk rates
    (conservative: lowest over highest, highest over lowest)."""
    stmt = "App. F: austere Gibbs draws more sweeps than exact Gibbs in the time budget"
    t = _table("approx_mrf")
    if t is None or "sweeps" not in t or not (t["eps"] == 0.0).any():
        return [_not_run("K14-F-sweeps", C.PAPER_K, stmt, "approx_mrf")]
    ex = t[t["eps"] == 0.0].iloc[0]
    base = ex["sweeps"] / ex["seconds"]
    rows = []
    for _, r in t[t["eps"] > 0].iterrows():
        v = float(r["sweeps"] / r["seconds"] / base)
        lo = float(r.get("chunk_rate_lo", np.nan) / ex.get("chunk_rate_hi", np.nan))
        hi = float(r.get("chunk_rate_hi", np.nan) / ex.get("chunk_rate_lo", np.nan))
        holds, verdict = _ratio_verdict(v, lo, hi, 1, "one chain each, interval over its chunks")
        pv = r["paper_value_samples_1000s"] / ex["paper_value_samples_1000s"]
        rows.append(
            {
                "claim_id": f"K14-F-sweeps-eps{r['eps']}",
                "paper": C.PAPER_K,
                "statement": stmt + f" (eps = {r['eps']})",
                "evidence": "results/approx_mrf.csv",
                "measured": f"x{v:.2f} exact Gibbs's sweeps per second",
                "holds": holds,
                "paper_value": f"x{pv:.2f}",
                "value": v,
                "ci_low": lo,
                "ci_high": hi,
                "verdict": verdict,
            }
        )
    return rows


def claim_mrf_final_error(quick: bool) -> list[dict]:
    """K14 App. F / Fig. 15: at the end of the time budget exact Gibbs has the smallest error (the
    approximate samplers sit on their bias floor); the difference of final errors, paired by subset, with a
    95 % t-interval over the subsets."""
    stmt = "App. F: exact Gibbs out-performs every approximate sampler at the end of the budget (Fig. 15)"
    t = _table("approx_mrf")
    if t is None or "final_l1_minus_exact" not in t:
        return [_not_run("K14-F-final-error", C.PAPER_K, stmt, "approx_mrf")]
    rows = []
    for _, r in t[t["eps"] > 0].iterrows():
        d, lo, hi = float(r["final_l1_minus_exact"]), float(r["diff_lo"]), float(r["diff_hi"])
        row = _diff_claim(
            f"K14-F-final-error-eps{r['eps']}",
            stmt + f" (eps = {r['eps']})",
            "results/approx_mrf.csv",
            f"final L1 {r['final_l1']:.4f}, minus exact Gibbs's: {d:+.4f} [{lo:+.4f}, {hi:+.4f}]",
            d,
            lo,
            hi,
            "interval over the subsets",
        )
        rows.append(row)
    return rows


def _diff_verdict(d: float, lo: float, hi: float, reps: str) -> tuple[bool, str]:
    """holds / does not hold for a > 0 claim on a difference, with its interval (``reps`` names the
    replicates behind it)."""
    iv = f"{d:+.3g} [{lo:+.3g}, {hi:+.3g}]" if np.isfinite(lo) and np.isfinite(hi) else f"{d:+.3g}"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return bool(d > 0), f"{'holds' if d > 0 else 'does not hold'} at the point value ({iv}, no interval)"
    word = "holds" if lo > 0 else ("does not hold" if hi < 0 else "undecided within the interval")
    return bool(d > 0), f"{word} ({iv}, {reps})"


def _diff_claim(cid: str, stmt: str, evidence: str, measured: str, d: float, lo: float, hi: float, reps: str):
    """A claims row for a > 0 claim on a difference with its interval."""
    holds, verdict = _diff_verdict(d, lo, hi, reps)
    return {
        "claim_id": cid,
        "paper": C.PAPER_K,
        "statement": stmt,
        "evidence": evidence,
        "measured": measured,
        "holds": holds,
        "paper_value": "figure",
        "value": d,
        "ci_low": lo,
        "ci_high": hi,
        "verdict": verdict,
    }


def claim_risk_over_time(quick: bool) -> list[dict]:
    """K14 §6.1 (Fig. 2) and §6.2 (Fig. 3): early in the time budget the approximate test's risk is below
    exact MH's (more samples, less variance), and its bias floor grows with eps (the largest eps ends above
    the smallest). Differences of risks at common times, chain k against chain k, 95 % t-interval over
    chains."""
    rows = []
    for table, sec in (("approx_mnist79_risk", "6.1"), ("approx_ica", "6.2")):
        t = _table(table)
        if t is None or "early_gain" not in t or not np.isfinite(t["early_gain"]).any():
            rows.append(_not_run(f"K14-{sec}-risk", C.PAPER_K, f"§{sec}: risk against time", table))
            continue
        fig = "Fig. 2" if sec == "6.1" else "Fig. 3"
        ap = t[t["eps"] > 0].sort_values("eps")

        def _cols(r, k):
            n = int(r["chains"])
            return (
                float(r[k]),
                float(r[f"{k}_lo"]),
                float(r[f"{k}_hi"]),
                f"{n} paired chain{'s' * (n != 1)}",
            )

        for _, r in ap.iterrows():
            d, lo, hi, reps = _cols(r, "early_gain")
            rows.append(
                _diff_claim(
                    f"K14-{sec}-early-risk-eps{r['eps']}",
                    f"§{sec} ({fig}): eps = {r['eps']} has less risk than exact MH early in the budget",
                    f"results/{table}.csv",
                    f"exact MH's risk minus eps's at {r['t_early']:.0f} s: {d:+.3g}",
                    d,
                    lo,
                    hi,
                    reps,
                )
            )
        r = ap.iloc[-1]
        d, lo, hi, reps = _cols(r, "floor_excess")
        rows.append(
            _diff_claim(
                f"K14-{sec}-bias-floor",
                f"§{sec} ({fig}): the bias floor grows with eps: at the end of the budget the largest eps "
                f"({r['eps']}) has more risk than the smallest ({ap.iloc[0]['eps']})",
                f"results/{table}.csv",
                f"risk difference at {r['t_late']:.0f} s: {d:+.3g}",
                d,
                lo,
                hi,
                reps,
            )
        )
    return rows
