"""Claims of Zhang & De Sa 2019 §4 checked with reduced runs (quick) or the paper-size targets (full).

Each claim row: claim_id, paper, statement, evidence, measured, holds (verify/checks.py CLAIM_COLUMNS).
Runs use the registry, fixed seeds, and the experiment module's Numba running-count helpers.
"""

from __future__ import annotations

import numpy as np

from samplers import registry as R

PAPER = "Zhang & De Sa 2019"


def _row(cid: str, statement: str, evidence: str, measured: str, holds: bool) -> dict:
    return {
        "claim_id": cid,
        "paper": PAPER,
        "statement": statement,
        "evidence": evidence,
        "measured": measured,
        "holds": bool(holds),
    }


def _marginal_error(samples: np.ndarray, D: int) -> float:
    from bench.metrics import marginal_l2_error

    return float(marginal_l2_error(samples, D))


def spin_energy_terms(model, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Continuous spin model (§4.2): the conditional log density of x_i is U_i(v) = S_i + v T_i(x)
    on [0, 1], S_i = sum_j beta A_ij, T_i = sum_j beta A_ij x_j. Returns (S (n,), T (rows of X, n))."""
    n = model.n
    W = np.zeros((n, n))
    for i in range(n):
        lo, hi = model.ptr[i], model.ptr[i + 1]
        W[i, model.nbr[lo:hi]] = model.w[lo:hi]
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    return W.sum(axis=1), X @ W.T


def expected_rejection_steps(S: np.ndarray, T: np.ndarray, envelope: np.ndarray | float) -> float:
    """E[1 / acc_i(x)] over i uniform and the states behind T: uniform-proposal rejection on [0, 1]
    with log envelope E accepts with acc = int_0^1 exp(S + v T - E) dv = e^(S - E) expm1(T) / T, and
    needs a geometric number of proposals with mean 1 / acc (Zhang & De Sa 2019 §4.2 rejection baseline)."""
    T = np.maximum(T, 1e-300)
    log_acc = (S - envelope) + np.log(np.expm1(T) / T)
    return float(np.mean(np.exp(-log_acc)))


def spin_claim_rows(quick: bool) -> list[dict]:
    """§4.2 claims on the paper-size continuous spin model (20x20, gamma 0.4, L = 13.708) in both
    modes (quick: fewer iterations). All chains start from a state after a PGDA burn-in, so the
    rejection costs are stationary ones (a random start has lower spins and costlier rejection)."""
    rows = []
    spin = R.build_problem("continuous_spin")
    model = spin.model
    L = float(spin.meta["L"])
    n_burn = 8_000 if quick else 40_000
    n_s = 4_000 if quick else 40_000
    n_rej = 1_000 if quick else 10_000
    burn = R.run("pgda", spin, n_burn, 17, m=3, k=10)
    x0 = burn.samples[-1]
    its = R.run("pgits", spin, n_s, 7, m=3, k=10, x0=x0)
    da = R.run("pgda", spin, n_s, 7, m=3, k=10, x0=x0, thin=spin.dim)
    gits = R.run("gibbs_its", spin, n_rej, 7, m=3, x0=x0)
    rej = R.run("pg_rejection", spin, n_rej, 7, x0=x0)
    grej = R.run("gibbs_rejection", spin, n_rej, 7, x0=x0)
    rows.append(
        _row(
            "pgda_beats_pgits",
            "PGDA converges faster than PGITS at the same degree (m = 3; PGDA's second degree k = 10)",
            f"{spin.name}, {n_s} iterations after a {n_burn}-iteration burn-in: MH "
            "acceptance of the Chebyshev proposal (same factor evaluations per "
            "iteration; a rejected Chebyshev draw is a wasted iteration); holds if PGDA's "
            "is higher. The KL-vs-iteration curves are experiment pg_spin (Fig. 1c)",
            f"accept PGDA {da.accept_rate:.4f} vs PGITS {its.accept_rate:.4f}; evals/iter "
            f"{da.mean_batch:.1f} vs {its.mean_batch:.1f}",
            da.accept_rate > its.accept_rate,
        )
    )
    # ---- rejection: steps per accepted sample (paper: > 300 with a constant w tuned for speed)
    S, T = spin_energy_terms(model, da.samples)
    M_site = np.array([model.M[model.ptr[i] : model.ptr[i + 1]].sum() for i in range(model.n)])
    st_site = expected_rejection_steps(S, T, M_site)
    st_const = expected_rejection_steps(S, T, L)
    st_ideal = expected_rejection_steps(S, T, S + T)
    rows.append(
        _row(
            "rejection_steps",
            "Rejection sampling (proposal w * Uniform[0, 1], w a "
            "constant tuned for best performance) needs on average more than 300 steps "
            "per accepted sample",
            f"{spin.name} at stationarity: the smallest VALID constant is w = e^L (L = "
            f"{L:.3f}; a smaller w breaks the envelope at the centre sites, i.e. biases "
            "the sampler); expected steps E[1/acc_i(x)] computed in closed form "
            "(U_i(v) = S_i + v T_i) over PGDA states, i uniform; cross-check: the kernels "
            "use per-site envelopes sum_{A[i]} M (Gibbs) and their measured steps match "
            "the closed form; holds if the constant-w steps exceed 300",
            f"constant w = e^L: {st_const:.0f} steps; per-site envelope: closed form "
            f"{st_site:.1f}, measured Gibbs-rejection {grej.extra['mean_steps']:.1f}, "
            f"PG-rejection {rej.extra['mean_steps']:.1f}; per-state optimum "
            f"max_v U_i(v): {st_ideal:.2f}",
            st_const > 300,
        )
    )
    cheb = da.extra["mean_steps"]
    n_loc = float(np.mean(np.diff(model.ptr)))  # |A[i]| factors per full energy evaluation
    rows.append(
        _row(
            "rejection_costlier",
            "Rejection sampling is far costlier per sample than "
            "PGITS/PGDA (paper: > 300 steps per accepted sample)",
            f"{spin.name} at stationarity, {n_rej} rejection iterations (per-site exact "
            "envelopes, i.e. cheaper than the paper's constant w): factor evaluations "
            "per iteration (every iteration is one accepted sample) vs PGDA, and energy "
            f"evaluations per sample vs PGDA's m + 3 = {cheb:.0f}; holds if both "
            "rejection samplers cost > 2x PGDA in factor evaluations",
            f"factor evals/iter: PG-rejection {rej.mean_batch:.0f}, Gibbs-rejection "
            f"{grej.mean_batch:.0f}, PGDA {da.mean_batch:.0f}, PGITS {its.mean_batch:.0f},"
            f" Gibbs-ITS {gits.mean_batch:.0f} (ratios vs PGDA "
            f"{rej.mean_batch / da.mean_batch:.2f}x, {grej.mean_batch / da.mean_batch:.1f}x"
            f"); energy evals/sample {rej.extra['mean_steps']:.1f} / "
            f"{grej.extra['mean_steps']:.1f} vs {cheb:.0f}; Gibbs-rejection with the "
            f"paper's constant w (closed form): {st_const * n_loc:.0f} evals/sample",
            rej.mean_batch > 2 * da.mean_batch and grej.mean_batch > 2 * da.mean_batch,
        )
    )
    tol_se = 4 * np.sqrt((da.extra["mean_B"] + 1.0) / n_s)
    rows.append(
        _row(
            "pg_factors_spin",
            "Poisson-Gibbs evaluates on average 190 factors per "
            "iteration on the continuous spin model (lambda = L^2)",
            f"{spin.name} (L = {L:.3f}; lattice size not stated, 20x20 inferred); "
            f"candidates B per iteration over {n_s} PGDA iterations (4-SE = {tol_se:.1f});"
            " holds if within 10% of 190",
            f"B = {da.extra['mean_B']:.1f} (kept distinct {da.extra['mean_S']:.1f}; "
            f"lambda + L = {L * L + L:.1f})",
            abs(da.extra["mean_B"] / 190 - 1) <= 0.10,
        )
    )
    return rows


def claim_rows(quick: bool) -> list[dict]:
    """§4 claims from the experiments' rebuilt tables (results directory) where they exist, else from
    reduced runs (Potts, continuous spin). The constant-w rejection-steps claim is computed in closed form
    over PGDA states either way."""
    rows: list[dict] = []
    fac, cur = _table("pg_potts_factors"), _table("pg_potts_curves")
    rows += potts_table_rows(fac, cur) if fac is not None and cur is not None else potts_rerun_rows(quick)
    st, sc = _table("pg_spin_summary"), _table("pg_spin_curves")
    if st is not None:
        rows += spin_table_rows(st, sc)
        rows += [r for r in spin_claim_rows(quick) if r["claim_id"] == "rejection_steps"]
    else:
        rows += spin_claim_rows(quick)
    tg = _table("pg_tgm_summary")
    if tg is not None:
        rows += tgm_table_rows(tg)
    return rows


def potts_rerun_rows(quick: bool) -> list[dict]:
    """§4.1 claims from reduced runs (no pg_potts tables)."""
    rows = []
    # ---------------------------------------------------------------- C1 mean factors, Potts
    potts = R.build_problem("potts_20x20")
    n = 20_000 if quick else 200_000
    meas = {}
    for m, paper in ((0.1, 7.0), (1.0, 28.0), (5.0, 132.0)):
        res = R.run("poisson_gibbs", potts, n, 11, lam_L2=m)
        meas[m] = (res.extra["mean_B"], res.extra["mean_kept"], paper)
    ok = all(abs(b / p - 1) <= 0.10 for b, _, p in meas.values())
    rows.append(
        _row(
            "pg_factors_potts",
            "Poisson-Gibbs evaluates on average 7, 28, 132 factors "
            "per iteration (lambda = 0.1, 1, 5 L^2, Potts §4.1)",
            f"potts_20x20 (L = {potts.meta['L']:.4f}), {n} iterations, count = "
            "candidates B drawn (Alg. 4); holds if within 10% of the paper",
            "; ".join(f"lambda={m}L^2: B={b:.2f} (kept {k:.2f}) vs {p:g}" for m, (b, k, p) in meas.items()),
            ok,
        )
    )
    # ---------------------------------------------------------------- C2 PG ~ Gibbs, faster / s
    small = R.build_problem("potts_20x20", scale="smoke") if quick else potts
    D = int(small.meta["D"])
    n_it = 40_000 if quick else 400_000
    g = R.run("gibbs", small, n_it, 3, thin=small.dim // 8 or 1)
    p = R.run("poisson_gibbs", small, n_it, 3, lam_L2=1.0, thin=small.dim // 8 or 1)
    eg, ep = _marginal_error(g.samples, D), _marginal_error(p.samples, D)
    sg, sp = g.sample_seconds / n_it, p.sample_seconds / n_it
    rows.append(
        _row(
            "pg_vs_gibbs",
            "Poisson-Gibbs (lambda = L^2) performs comparably with plain "
            "Gibbs per iteration and is faster per second",
            f"{small.name}, {n_it} iterations, marginal l2 error of thinned samples; "
            "holds if error ratio <= 1.5 and time per iteration lower",
            f"error gibbs {eg:.4f} vs PG {ep:.4f}; sec/iter gibbs {sg:.2e} vs PG {sp:.2e}; "
            f"factor evals/iter {g.mean_batch:.0f} vs {p.mean_batch:.1f}",
            ep <= 1.5 * eg and sp < sg,
        )
    )
    # ---------------------------------------------------------------- C3 DoubleMIN second batch
    n_d = 3_000 if quick else 20_000
    d1 = R.run("doublemin_gibbs", small, n_d, 5, lam_L2=1.0, lam2_L2=1.0)
    d4 = R.run("doublemin_gibbs", small, n_d // 10, 5, lam_L2=1.0, lam2_L2=1e4)
    rows.append(
        _row(
            "doublemin_second_batch",
            "DoubleMIN-Gibbs needs a large second minibatch "
            "(lambda2 = 1e4 L^2) to converge; with lambda2 = L^2 the MH step has huge "
            "variance",
            f"{small.name}: acceptance rates of doublemin_gibbs with "
            f"lambda2 = L^2 ({n_d} it.) and 1e4 L^2 ({n_d // 10} it.); holds if the "
            "small-batch acceptance is < 5% and < 1/3 of the large-batch one",
            f"accept lambda2=L^2: {d1.accept_rate:.4f}; lambda2=1e4 L^2: "
            f"{d4.accept_rate:.4f}; evals/iter {d1.mean_batch:.0f} vs {d4.mean_batch:.0f}",
            d1.accept_rate < 0.05 and d1.accept_rate < d4.accept_rate / 3,
        )
    )
    return rows


# ============================================================================ claims from the rebuilt tables
def _table(name: str):
    """``<results_dir>/<name>.csv`` as a DataFrame, or None if the experiment's table is not there."""
    import pandas as pd

    from verify.checks import results_dir

    f = results_dir() / f"{name}.csv"
    return pd.read_csv(f) if f.exists() else None


def _time_to(c, level: float) -> float:
    """Sampling seconds at which a mean error curve first reaches ``level`` (inf: never)."""
    hit = c[c["error"] <= level]
    return float(hit["seconds"].iloc[0]) if len(hit) else float("inf")


def potts_table_rows(fac, cur) -> list[dict]:
    """§4.1 claims from ``pg_potts_factors`` / ``pg_potts_curves`` (mean over the runs)."""
    rows = []
    f = fac.set_index("label")
    src = "results/pg_potts_factors.csv, pg_potts_curves.csv"
    meas = {
        lab: (float(f.loc[lab, "mean_B"]), p) for lab, p in (("pg_0.1", 7.0), ("pg_1", 28.0), ("pg_5", 132.0))
    }
    rows.append(
        _row(
            "pg_factors_potts",
            "Poisson-Gibbs evaluates on average 7, 28, 132 factors per iteration (lambda = 0.1, 1, 5 "
            "L^2, §4.1)",
            f"{src}: candidates B drawn per iteration (Alg. 4), mean over {int(f.loc['pg_1', 'runs'])} "
            "runs of "
            f"{int(f.loc['pg_1', 'n_iter'])} iterations; holds if each within 10% of the paper",
            "; ".join(f"{lab}: {b:.2f} vs {p:g}" for lab, (b, p) in meas.items()),
            all(abs(b / p - 1) <= 0.10 for b, p in meas.values()),
        )
    )
    fin = {lab: float(f.loc[lab, "final_error"]) for lab in f.index}
    sd = {
        lab: float(f.loc[lab, "final_error_sd"]) if "final_error_sd" in f else float("nan") for lab in f.index
    }
    spi = {lab: float(f.loc[lab, "sec_per_iter"]) for lab in f.index}
    rows.append(
        _row(
            "pg_vs_gibbs",
            "Poisson-Gibbs (lambda = L^2) performs comparably with plain Gibbs per iteration and is "
            "faster per second",
            f"{src}: final marginal l2 error (mean +- sd over runs) at {int(f.loc['gibbs', 'n_iter'])} "
            "iterations and "
            "seconds per iteration; holds if the error ratio is <= 1.5 and PG's time per iteration lower",
            f"error gibbs {fin['gibbs']:.4f} +- {sd['gibbs']:.4f}, PG {fin['pg_1']:.4f} +- {sd['pg_1']:.4f} "
            f"(ratio {fin['pg_1'] / fin['gibbs']:.2f}); sec/iter gibbs {spi['gibbs']:.2e}, PG "
            f"{spi['pg_1']:.2e} "
            f"({spi['gibbs'] / spi['pg_1']:.1f}x)",
            fin["pg_1"] <= 1.5 * fin["gibbs"] and spi["pg_1"] < spi["gibbs"],
        )
    )
    c = {lab: g.sort_values("iteration") for lab, g in cur.groupby("label")}
    n4 = int(f.loc["dmin_1_1e4", "n_iter"]) if "dmin_1_1e4" in f.index else None
    if n4 is not None and "dmin_1_1" in c:

        def at(lab, it):
            g = c[lab]
            return float(g.loc[(g["iteration"] - it).abs().idxmin(), "error"])

        e_pg, e_d1, e_d4 = at("pg_1", n4), at("dmin_1_1", n4), at("dmin_1_1e4", n4)
        e0 = float(c["dmin_1_1"]["error"].iloc[0])
        acc = {
            lab: float(f.loc[lab, "accept_rate"]) if "accept_rate" in f else float("nan")
            for lab in ("dmin_1_1", "dmin_1_1e4")
        }
        rows.append(
            _row(
                "pg_beats_doublemin",
                "Poisson-Gibbs outperforms DoubleMIN-Gibbs significantly, especially when the second "
                "minibatch is "
                "not large enough (Fig. 1a)",
                f"{src}: marginal error at iteration {n4} (the lambda2 = 1e4 L^2 run's length); holds if "
                "PG's error "
                "is below half of DoubleMIN's with lambda2 = L^2 and not above DoubleMIN's with 1e4 L^2",
                f"PG {e_pg:.4f}; DoubleMIN lambda2 = L^2 {e_d1:.4f} (accept {acc['dmin_1_1']:.2e}, final at "
                f"{int(f.loc['dmin_1_1', 'n_iter'])}: {fin['dmin_1_1']:.4f}); lambda2 = 1e4 L^2 "
                f"{e_d4:.4f} (accept "
                f"{acc['dmin_1_1e4']:.3f}, {spi['dmin_1_1e4']:.2e} s/iter vs PG {spi['pg_1']:.2e})",
                e_pg < 0.5 * e_d1 and e_pg <= e_d4 * 1.05,
            )
        )
        rows.append(
            _row(
                "doublemin_second_batch",
                "DoubleMIN-Gibbs needs a large second minibatch (lambda2 = 1e4 L^2) to converge; with "
                "lambda2 = L^2 the MH step has huge variance",
                f"{src}: acceptance rates; marginal error at the first checkpoint (e0), at the end of the "
                f"lambda2 = L^2 run ({int(f.loc['dmin_1_1', 'n_iter'])} it.) and at iteration {n4}; holds "
                "if the lambda2 = L^2 acceptance is < 5% and < 1/3 of the 1e4 L^2 one, its chain ends "
                f"within 1% of e0, and the 1e4 L^2 chain is below 0.9 e0 by iteration {n4}",
                f"accept {acc['dmin_1_1']:.2e} vs {acc['dmin_1_1e4']:.3f}; e0 {e0:.4f}; lambda2 = L^2 at the "
                f"end {fin['dmin_1_1']:.4f}; 1e4 L^2 at {n4}: {e_d4:.4f} (PG {e_pg:.4f})",
                acc["dmin_1_1"] < 0.05
                and acc["dmin_1_1"] < acc["dmin_1_1e4"] / 3
                and fin["dmin_1_1"] >= 0.99 * e0
                and e_d4 <= 0.9 * e0,
            )
        )
    order = [fin["pg_0.1"], fin["pg_1"], fin["pg_5"]]
    rows.append(
        _row(
            "pg_lambda_approaches_gibbs",
            "When the minibatch size (lambda) increases, the convergence of Poisson-Gibbs approaches "
            "plain Gibbs (Fig. 1b)",
            f"{src}: final marginal error (mean over runs) for lambda = 0.1, 1, 5 L^2 vs Gibbs; holds if "
            "the distance "
            "to Gibbs' error shrinks from lambda = 0.1 L^2 to 5 L^2 and the errors do not increase with "
            "lambda",
            f"gibbs {fin['gibbs']:.4f}; PG 0.1 / 1 / 5 L^2: " + " / ".join(f"{e:.4f}" for e in order),
            abs(order[2] - fin["gibbs"]) < abs(order[0] - fin["gibbs"])
            and order[0] >= order[1] >= order[2] * 0.98,
        )
    )
    level = 1.05 * max(fin["gibbs"], fin["pg_1"])
    t_g, t_p = _time_to(c["gibbs"], level), _time_to(c["pg_1"], level)
    extra = ""
    ok_d = True
    if "dmin_1_1e4" in c:
        lev_d = 1.05 * max(float(c["dmin_1_1e4"]["error"].iloc[-1]), float(c["pg_1"]["error"].min()))
        t_d, t_pd = _time_to(c["dmin_1_1e4"], lev_d), _time_to(c["pg_1"], lev_d)
        extra = f"; to error {lev_d:.4f}: PG {t_pd:.2f} s, DoubleMIN 1e4 L^2 {t_d:.2f} s"
        ok_d = t_pd < t_d
    rows.append(
        _row(
            "pg_faster_in_time",
            "Poisson-Gibbs is significantly faster than plain Gibbs and faster than DoubleMIN-Gibbs in "
            "wall-clock "
            "time (Figs. 2a, 2b)",
            f"{src}: sampling seconds for the mean error curve to reach a level both reach (1.05 x the "
            "larger final "
            "error); holds if PG needs less time than Gibbs and than DoubleMIN (lambda2 = 1e4 L^2)",
            f"to error {level:.4f}: PG {t_p:.2f} s, Gibbs {t_g:.2f} s ({t_g / t_p:.1f}x)" + extra,
            t_p < t_g and ok_d,
        )
    )
    return rows


def spin_table_rows(tab, cur) -> list[dict]:
    """§4.2 claims from ``pg_spin_summary`` / ``pg_spin_curves``."""
    t = tab.set_index("method")
    src = "results/pg_spin_summary.csv, pg_spin_curves.csv"
    kl = {m: float(t.loc[m, "final_sym_kl"]) for m in t.index}
    kls = {m: float(t.loc[m, "final_sym_kl_sd"]) if "final_sym_kl_sd" in t else float("nan") for m in t.index}
    fe = {m: float(t.loc[m, "mean_factor_evals"]) for m in t.index}
    fes = {
        m: float(t.loc[m, "mean_factor_evals_sd"]) if "mean_factor_evals_sd" in t else float("nan")
        for m in t.index
    }
    spi = {m: float(t.loc[m, "sec_per_iter"]) for m in t.index}
    n = int(t.loc["pgda", "n_iter"])
    runs = int(t.loc["pgda", "runs"])
    rows = [
        _row(
            "pgda_beats_pgits",
            "PGDA converges faster than PGITS at the same degree (m = 3; PGDA's second degree k = 10) "
            "(Fig. 1c)",
            f"{src}: symmetric KL after {n} iterations (mean +- sd over {runs} runs); holds if PGDA's is "
            "lower",
            f"PGDA {kl['pgda']:.4f} +- {kls['pgda']:.4f} vs PGITS {kl['pgits']:.4f} +- {kls['pgits']:.4f}",
            kl["pgda"] < kl["pgits"],
        ),
        _row(
            "pg_comparable_to_gibbs_spin",
            "PGITS / PGDA achieve comparable performance to Gibbs sampling (Gibbs-ITS / Gibbs-DA) with "
            "only a "
            "fraction of the factors (Fig. 1c)",
            f"{src}: symmetric KL after {n} iterations and factor evaluations per iteration; holds if "
            "each PG "
            "method's KL is within 1.5x of its full-energy twin's and it evaluates < 50% of the factors",
            f"KL PGITS {kl['pgits']:.4f} vs Gibbs-ITS {kl['gibbs_its']:.4f}, PGDA {kl['pgda']:.4f} vs "
            "Gibbs-DA "
            f"{kl['gibbs_da']:.4f}; factors/iter {fe['pgda']:.0f} vs {fe['gibbs_da']:.0f}",
            kl["pgits"] <= 1.5 * kl["gibbs_its"]
            and kl["pgda"] <= 1.5 * kl["gibbs_da"]
            and fe["pgda"] < 0.5 * fe["gibbs_da"]
            and fe["pgits"] < 0.5 * fe["gibbs_its"],
        ),
        _row(
            "pg_faster_than_gibbs_spin",
            "The two Poisson-Gibbs methods are faster than plain Gibbs sampling in runtime (Fig. 2c)",
            f"{src}: sampling seconds per iteration (mean over runs); holds if PGITS < Gibbs-ITS and "
            "PGDA < Gibbs-DA",
            f"PGITS {spi['pgits']:.2e} vs Gibbs-ITS {spi['gibbs_its']:.2e}; PGDA {spi['pgda']:.2e} vs "
            "Gibbs-DA "
            f"{spi['gibbs_da']:.2e}",
            spi["pgits"] < spi["gibbs_its"] and spi["pgda"] < spi["gibbs_da"],
        ),
    ]
    # cost per sample: every iteration yields one sample; uncertainty over the runs (ratio of means,
    # relative sds combined)
    parts, ok = [], True
    for m in ("pg_rejection", "gibbs_rejection"):
        r = fe[m] / fe["pgda"]
        rel = float(np.hypot(fes[m] / fe[m], fes["pgda"] / fe["pgda"]))
        ts = spi[m] / spi["pgda"]
        parts.append(
            f"{m}: {fe[m]:.0f} +- {fes[m]:.0f} factors/sample = {r:.2f}x PGDA (+- {100 * rel:.1f}%), "
            f"time/sample {ts:.2f}x"
        )
        ok = ok and r * (1 - 3 * rel) > 2.0 and ts > 2.0
    rows.append(
        _row(
            "rejection_costlier",
            "Rejection sampling is far costlier per sample than PGITS / PGDA (§4.2)",
            f"{src}: factor evaluations and seconds per sample of the rejection samplers (per-site exact "
            "envelopes, "
            f"cheaper than the paper's constant w) over PGDA's, {runs} runs each; holds if both ratios "
            "exceed 2 "
            "with 3 sd of the run-to-run spread",
            f"PGDA {fe['pgda']:.0f} +- {fes['pgda']:.0f} factors/sample; " + "; ".join(parts),
            ok,
        )
    )
    B = float(t.loc["pgda", "mean_B"])
    L = float(t.loc["pgda", "L"])
    rows.append(
        _row(
            "pg_factors_spin",
            "Poisson-Gibbs evaluates on average 190 factors per iteration on the continuous spin model "
            "(lambda = L^2)",
            f"{src}: candidates B per iteration (L = {L:.3f}; lattice size not stated, 20x20 inferred); "
            "holds if "
            "within 10% of 190",
            f"B = {B:.1f} (PGITS {float(t.loc['pgits', 'mean_B']):.1f}); lambda + L = {L * L + L:.1f}",
            abs(B / 190 - 1) <= 0.10,
        )
    )
    return rows


def tgm_table_rows(tab) -> list[dict]:
    """§4.3 / App. D.2 claims from ``pg_tgm_summary``."""
    t = tab.set_index("method")
    src = "results/pg_tgm_summary.csv"
    tv = {m: float(t.loc[m, "tv_to_truth"]) for m in t.index}
    L = float(t.loc["pgits", "L"])
    lam = float(t.loc["pgits", "lam"])
    B = {m: float(t.loc[m, "mean_B"]) for m in ("pgits", "pgda")}
    kept = {m: float(t.loc[m, "mean_kept"]) for m in ("pgits", "pgda")}
    rows = [
        _row(
            "pg_factors_tgm",
            "PGITS / PGDA evaluate on average 1802 factors per iteration on the truncated Gaussian mixture "
            "(lambda = 500, L = 1581.14)",
            f"{src}: every datum touches both coordinates, so Lambda_i = (lambda / L + 1) sum_n M_n = "
            "lambda + L "
            "exactly and B ~ Poisson(lambda + L) whatever the model's shift and temperature: E[B] = "
            "2081.1 at the "
            "paper's lambda and L. The kept draws sum_n s_n have mean lambda + E[U(x)], U = sum_n phi_n "
            "<= L; "
            "1802 would mean E[U] = 1302 = 0.82 L (looser per-datum bounds than ours). Holds if B within 10% "
            "of 1802",
            f"B: PGITS {B['pgits']:.1f}, PGDA {B['pgda']:.1f} (lambda + L = {lam + L:.1f}); distinct kept "
            f"{kept['pgits']:.1f} / {kept['pgda']:.1f}",
            abs(B["pgda"] / 1802 - 1) <= 0.10,
        ),
        _row(
            "tgm_pg_density_accurate",
            "The density estimates of PGITS and PGDA are very accurate; rejection sampling completely fails "
            "given the budget (Fig. 3)",
            f"{src}: TV distance of the 2-D histogram (60 x 60 cells on [-6, 6]^2) to the true cell "
            "probabilities; "
            "holds if PGITS and PGDA are within 0.1 and Gibbs-rejection above 0.5",
            f"TV PGITS {tv['pgits']:.3f}, PGDA {tv['pgda']:.3f}, Gibbs-rejection {tv['gibbs_rejection']:.3f} "
            f"({int(t.loc['gibbs_rejection', 'n_iter'])} samples, "
            f"{float(t.loc['gibbs_rejection', 'rejection_steps']):.0f} "
            f"proposals each, {float(t.loc['gibbs_rejection', 'sample_seconds']):.0f} s vs PGITS "
            f"{float(t.loc['pgits', 'sample_seconds']):.0f} s)",
            tv["pgits"] <= 0.1 and tv["pgda"] <= 0.1 and tv["gibbs_rejection"] > 0.5,
        ),
        _row(
            "tgm_poisson_mh_density",
            "Poisson-MH's density estimate is very close to the true density (App. D.2, Fig. 4)",
            f"{src}: TV distance of its histogram to the true cell probabilities; holds if <= 0.1",
            f"TV {tv['poisson_mh']:.3f} (accept {float(t.loc['poisson_mh', 'accept_rate']):.3f}, "
            f"{int(t.loc['poisson_mh', 'n_iter'])} iterations)",
            tv["poisson_mh"] <= 0.1,
        ),
    ]
    return rows
