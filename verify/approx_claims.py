"""Claim rows of the approx family (results/claims.csv): read experiment tables when they exist
(results/approx_*.csv written by bench/experiments/approx/), else run a reduced version."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from verify import approx_checks as C
from verify import approx_matrix as AM
from verify.checks import results_dir

ORDER = ["mh_minibatch", "austere_mh_nc", "austere_mh_c", "mh_sublhd"]


def _order_row(cid, paper, statement, means: dict, evidence: str) -> dict:
    present = [m for m in ORDER if m in means]
    vals = [means[m] for m in present]
    holds = len(present) >= 3 and all(a < b for a, b in zip(vals, vals[1:], strict=False))
    return {
        "claim_id": cid,
        "paper": paper,
        "statement": statement,
        "evidence": evidence,
        "measured": "; ".join(f"{m}={means[m]:.1f}" for m in present),
        "holds": bool(holds),
    }


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
                rows.append(
                    _order_row(
                        f"S17-{name}-{key}".rstrip("-"),
                        C.PAPER_S,
                        stmt,
                        means,
                        f"results/{name}.csv",
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
    """L_inf of C_1 at n = 4000, sigma = 1, lambda = 10 <= 1e-3 (S17 §4: 8.9e-4). Quick: n = 2000
    proxy (printed 1.3e-3, so the claim is only evaluated at full scale)."""
    from samplers.approx.correction import solve_correction

    n = 2000 if quick else 4000
    _, _, linf = solve_correction(n, 20.0, 10.0, 1.0)
    holds = linf <= 1e-3 if n == 4000 else None
    return [
        {
            "claim_id": "S17-correction-4000",
            "paper": C.PAPER_S,
            "statement": "L_inf(N(0,1) * C_1 - logistic) <= 1e-3 at N=4000, sigma=1, lambda=10",
            "evidence": f"solve_correction(n={n})",
            "measured": f"{linf:.3g}",
            "holds": bool(holds) if holds is not None else "n/a (quick: n=2000 proxy)",
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
        }
    ]
