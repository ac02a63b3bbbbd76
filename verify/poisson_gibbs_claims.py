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
    # ---------------------------------------------------------------- C4-C7 continuous spin
    rows += spin_claim_rows(quick)
    return rows
