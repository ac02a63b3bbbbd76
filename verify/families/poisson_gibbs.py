"""Checks of the poisson_gibbs family (Zhang & De Sa 2019; De Sa et al. 2018 baselines reconstructed).

exact  : kernel-vs-matrix G-tests (Bonferroni over rows, FWER 1e-4) of gibbs, poisson_gibbs, mgpmh on
         tiny Potts/Ising models against exact matrices (verify/poisson_gibbs_exact.py), each with
         mutants that must be caught; detailed balance of the exact matrices; stationarity from exact
         augmented-stationary starts for min_gibbs / doublemin_gibbs (+ mutants); exact stationary TV
         of a biased variant (MGPMH without its MH correction).
theory : Thm. 1 gap ratio vs exp(-4L^2/lambda) over a lambda sweep (exact gaps); Thm. 2 (Poisson-MH,
         exact matrices on a 1-D lattice); Statement 1 (mean candidates vs lambda + L); Thm. 3
         (Chebyshev interpolation vs Bernstein-ellipse bound); Thms. 4/5 see verify/poisson_gibbs_cont.py.
claim  : see verify/poisson_gibbs_claims.py.
"""

from __future__ import annotations

import numpy as np

from samplers import registry as R
from samplers.kernels import mgpmh as MG
from samplers.kernels import poisson_gibbs as PG
from samplers.kernels.gibbs import RANDOM_SCAN
from samplers.methods.poisson_gibbs import global_tables
from verify import markov as MK
from verify import poisson_gibbs_exact as E
from verify.checks import Check
from verify.empirical import g_test, gibbs_row_sampler, graph_counts, kernel_vs_matrix
from verify.enumerate import factor_graph_states, gibbs_random_scan_matrix

ALPHA = 1e-4
PAPER = "Zhang & De Sa 2019"
FAMILY = "poisson_gibbs"


def _pi(U: np.ndarray) -> np.ndarray:
    p = np.exp(U - U.max())
    return p / p.sum()


def _problems():
    return {
        "potts_tiny": R.build_problem("potts_tiny", seed=0),
        "ising_tiny": R.build_problem("ising_tiny", seed=1),
    }


def _exact_row(check, method, target, res, mutant_name=None):
    row = res.row(check, PAPER, method, target)
    if mutant_name is not None:  # a mutant must be REJECTED
        row["check"] = f"{check}[mutant={mutant_name}]"
        row["statistic"] = "min row p-value of a MUTANT (must be < threshold)"
        row["passed"] = not res.passed
    return row


# ============================================================================ kernel vs matrix
def _row_sampler(repeat, fg, X, tables, reps: int, mutant: int):
    """``sample_row(s, rng)`` for a repeat loop ``repeat(fg, x0, *tables, rng, reps, mutant)``."""

    def sample_row(s: int, rng: np.random.Generator) -> np.ndarray:
        Y = repeat(fg, X[s].copy(), *tables, rng, reps, mutant)
        return graph_counts(fg.card, Y)

    return sample_row


def kernel_vs_matrix_rows(quick: bool) -> list[dict]:
    reps = 20_000 if quick else 100_000
    rows: list[dict] = []
    for tname, prob in _problems().items():
        fg = prob.model
        L = PG.local_max_energy(fg)
        X = factor_graph_states(fg.card)
        # ---- plain Gibbs
        G, U = gibbs_random_scan_matrix(fg)
        res = kernel_vs_matrix(G, gibbs_row_sampler(fg, X, RANDOM_SCAN, 0, 1, reps), reps, 11, ALPHA)
        rows.append(_exact_row("kvm_gibbs", "gibbs", tname, res))
        # ---- Poisson-Gibbs at lambda = 2L (small batch -> mutants visible)
        lam = 2.0 * L
        P, _, neg = E.poisson_gibbs_matrix(fg, lam)
        prob_, alias, Lam, arate, bufsize = PG.poisson_gibbs_tables(fg, lam)
        for mut, name in (
            (PG.MUT_NONE, None),
            (PG.MUT_RATE_PLUS_ONE, "rate+1"),
            (PG.MUT_THIN_WRONG, "thinning"),
            (PG.MUT_NO_MULTIPLICITY, "no-mult"),
        ):
            sampler = _row_sampler(
                E.repeat_poisson_gibbs_step, fg, X, (prob_, alias, Lam, arate, bufsize), reps, mut
            )
            res = kernel_vs_matrix(P, sampler, reps, 12, ALPHA)
            r = _exact_row("kvm_poisson_gibbs", "poisson_gibbs", tname, res, name)
            r["detail"] += f", lambda=2L={lam:.3f}, truncation mass <= {neg:.1e}"
            rows.append(r)
        # ---- MGPMH at lambda = L
        lam = L
        P, _, neg = E.mgpmh_matrix(fg, lam)
        prob_, alias, Msum = PG.build_local_tables(fg, 1.0)
        Lam = lam * Msum / L
        arate = lam * fg.M / L
        bufsize = PG.candidate_buffer_for(float(Lam.max())).shape[0]
        for mut, name in ((MG.MUT_NONE, None), (MG.MUT_NO_CORRECTION, "no-MH-correction")):
            sampler = _row_sampler(E.repeat_mgpmh_step, fg, X, (prob_, alias, Lam, arate, bufsize), reps, mut)
            res = kernel_vs_matrix(P, sampler, reps, 13, ALPHA)
            r = _exact_row("kvm_mgpmh", "mgpmh", tname, res, name)
            r["detail"] += f", lambda=L={lam:.3f}, truncation mass <= {neg:.1e}"
            rows.append(r)
    return rows


def detailed_balance_rows(quick: bool) -> list[dict]:
    """Exact matrices are pi-reversible (Thm. 1 first part; MGPMH by construction); biased variant
    (MGPMH without correction = E_s[softmax(eps)]) gets its exact stationary TV reported."""
    rows = []
    for tname, prob in _problems().items():
        fg = prob.model
        L = PG.local_max_energy(fg)
        G, U = gibbs_random_scan_matrix(fg)
        pi = _pi(U)
        for method, (P, _, neg) in (
            ("poisson_gibbs", E.poisson_gibbs_matrix(fg, 2 * L)),
            ("mgpmh", E.mgpmh_matrix(fg, L)),
        ):
            db = MK.detailed_balance_residual(P, pi)
            rows.append(
                {
                    "check": "detailed_balance",
                    "paper": PAPER,
                    "method": method,
                    "target": tname,
                    "statistic": "max |pi_x P_xy - pi_y P_yx|",
                    "value": db,
                    "threshold": 1e-10 + neg,
                    "passed": bool(db <= 1e-10 + neg),
                    "detail": f"exact matrix, Poisson truncation mass <= {neg:.1e}",
                }
            )
        P = E.mgpmh_proposal_matrix(fg, L)
        tv = MK.tv(MK.stationary(P), pi)
        rows.append(
            {
                "check": "stationary_tv_biased_variant",
                "paper": PAPER,
                "method": "mgpmh[no correction]",
                "target": tname,
                "statistic": "TV(stationary, pi) of the uncorrected minibatch-Gibbs chain",
                "value": tv,
                "threshold": 1e-3,
                "passed": bool(tv > 1e-3),
                "detail": "the MH correction is needed: without it the chain is biased",
            }
        )
    return rows


def stationarity_rows(quick: bool) -> list[dict]:
    """MIN-Gibbs / DoubleMIN-Gibbs live on an augmented space (x, eps); from exact draws of the
    augmented stationary law (x ~ pi, eps ~ exp(eps)-tilted Poisson estimator) the x after k steps
    must be exactly pi-distributed: one G-test per kernel (FWER 1e-4 over the rows of this check)."""
    reps = 20_000 if quick else 100_000
    k_steps = 6
    rows = []
    prob = _problems()["ising_tiny"]
    fg = prob.model
    L = PG.local_max_energy(fg)
    X, U = E.factor_graph_log_joint(fg)
    pi = _pi(U)
    rng = np.random.default_rng(21)
    tests = []
    glam = 1.0 * L  # small global batch: noisy estimators, so mutants show
    gprob, galias, grate, _ = global_tables(fg, glam)
    from samplers.kernels import min_gibbs as MI

    for mut, name in ((MI.MUT_NONE, None), (MI.MUT_REFRESH_CURRENT, "refresh-current")):
        X0 = X[rng.choice(len(pi), size=reps, p=pi)]
        Y = E.stationary_start_min_gibbs(
            fg, X0, gprob, galias, grate, glam, k_steps, np.random.default_rng(rng.integers(2**63)), mut
        )
        tests.append(("stationary_start", "min_gibbs", name, g_test(graph_counts(fg.card, Y), pi)))
    lam1 = L
    prob_, alias, Msum = PG.build_local_tables(fg, 1.0)
    Lam = lam1 * Msum / L
    arate = lam1 * fg.M / L
    bufsize = PG.candidate_buffer_for(float(Lam.max())).shape[0]
    from samplers.kernels import doublemin_gibbs as DM

    for mut, name in ((DM.MUT_NONE, None), (DM.MUT_REFRESH_CURRENT, "refresh-current")):
        X0 = X[rng.choice(len(pi), size=reps, p=pi)]
        Y = E.stationary_start_doublemin(
            fg,
            X0,
            prob_,
            alias,
            Lam,
            arate,
            bufsize,
            gprob,
            galias,
            grate,
            glam,
            k_steps,
            np.random.default_rng(rng.integers(2**63)),
            mut,
        )
        tests.append(("stationary_start", "doublemin_gibbs", name, g_test(graph_counts(fg.card, Y), pi)))
    thr = ALPHA / len(tests)
    for check, method, name, (stat, p, dof) in tests:
        ok = p > thr
        rows.append(
            {
                "check": check if name is None else f"{check}[mutant={name}]",
                "paper": PAPER,
                "method": method,
                "target": "ising_tiny",
                "statistic": "G-test p-value of x after 6 steps from exact stationarity"
                + ("" if name is None else " (MUTANT: must be < threshold)"),
                "value": p,
                "threshold": thr,
                "passed": bool(ok if name is None else not ok),
                "detail": f"{reps} independent chains, G={stat:.1f}, dof={dof}, "
                f"global batch lambda={glam:.3f}",
            }
        )
    return rows


# ============================================================================ theory
def thm1_rows(quick: bool) -> list[dict]:
    """Thm. 1: gap(PG) / gap(Gibbs) >= exp(-4 L^2 / lambda) for lambda >= 2L (exact gaps)."""
    rows = []
    mults = (2, 4, 8) if quick else (2, 3, 4, 6, 8, 16, 32)
    for tname, prob in _problems().items():
        fg = prob.model
        L = PG.local_max_energy(fg)
        G, U = gibbs_random_scan_matrix(fg)
        pi = _pi(U)
        g0 = MK.spectral_gap(G, pi)
        for m in mults:
            lam = m * L
            P, _, neg = E.poisson_gibbs_matrix(fg, lam)
            ratio = MK.spectral_gap(P, pi) / g0
            bound = float(np.exp(-4 * L * L / lam))
            rows.append(
                {
                    "check": "thm1_gap_ratio",
                    "paper": PAPER,
                    "theorem": "Thm 1",
                    "params": f"{tname}, L={L:.4f}, lambda={m}L={lam:.3f}",
                    "bound": bound,
                    "measured": ratio,
                    "holds": bool(ratio >= bound - 1e-9),
                    "slack": ratio - bound,
                }
            )
    return rows


def thm2_rows(quick: bool) -> list[dict]:
    """Thm. 2: gap(Poisson-MH) >= 1/2 exp(-L^2/(lambda + L)) gap(MH), exact matrices on a 1-D
    lattice (6 states, 3 factors, +-1 proposal); an independent NumPy computation of the theorem
    (the registered poisson_mh kernel is verified by its own family)."""
    rng = np.random.default_rng(5)
    S, N = 6, 3
    M = np.array([0.6, 0.9, 0.4])
    phi = rng.random((N, S)) * M[:, None]
    L = float(M.sum())
    rows = []
    for m in (1, 4, 16) if quick else (0.5, 1, 2, 4, 8, 16, 64):
        lam = m * L
        P, Q, U = E.poisson_mh_lattice_matrix(phi, M, lam)
        pi = _pi(U)
        ratio = MK.spectral_gap(P, pi) / MK.spectral_gap(Q, pi)
        bound = 0.5 * float(np.exp(-L * L / (lam + L)))
        db = MK.detailed_balance_residual(P, pi)
        rows.append(
            {
                "check": "thm2_gap_ratio",
                "paper": PAPER,
                "theorem": "Thm 2",
                "params": f"1-D lattice S={S}, N={N}, L={L:.2f}, lambda={m}L, DB residual {db:.1e}",
                "bound": bound,
                "measured": ratio,
                "holds": bool(ratio >= bound - 1e-9 and db < 1e-10),
                "slack": ratio - bound,
            }
        )
    return rows


def statement1_rows(quick: bool) -> list[dict]:
    """Statement 1: E[B] = Lambda_i <= lambda + L; measured mean B on the Potts model vs the bound
    and vs the exact site average of Lambda_i (4-sigma band)."""
    prob = R.build_problem("potts_20x20", scale="smoke" if quick else "paper")
    rows = []
    n_iter = 20_000 if quick else 200_000
    for m in (0.1, 1.0, 5.0):
        res = R.run("poisson_gibbs", prob, n_iter, 3, lam_L2=m)
        L = res.extra["L"]
        lam = res.hyper["lam"]
        B = res.extra["trace_0"]
        _, _, Lam, _, _ = PG.poisson_gibbs_tables(prob.model, lam, L)
        exp_B = float(Lam.mean())
        se = float(np.sqrt((Lam.mean() + Lam.var()) / n_iter))  # Var B = E Lam + Var Lam
        ok = B.mean() <= lam + L and abs(B.mean() - exp_B) <= 4 * se
        rows.append(
            {
                "check": "statement1_cost",
                "paper": PAPER,
                "theorem": "Statement 1",
                "params": f"{prob.name}, lambda={m}L^2, {n_iter} iters; E[B]=mean Lambda_i={exp_B:.2f}",
                "bound": lam + L,
                "measured": float(B.mean()),
                "holds": bool(ok),
                "slack": lam + L - float(B.mean()),
            }
        )
    return rows


def continuous_stationarity_rows(quick: bool) -> list[dict]:
    from verify.poisson_gibbs_cont import stationarity_rows as sr

    return sr(quick)


def thm3_rows(quick: bool) -> list[dict]:
    from verify.poisson_gibbs_cont import thm3_rows as t3

    return t3(quick)


def thm45_rows(quick: bool) -> list[dict]:
    from verify.poisson_gibbs_cont import thm45_rows as t45

    return t45(quick)


def claim_rows(quick: bool) -> list[dict]:
    from verify.poisson_gibbs_claims import claim_rows as cr

    return cr(quick)


CHECKS = [
    Check(
        "pg_kernel_vs_matrix",
        "exact",
        PAPER,
        "gibbs / poisson_gibbs / mgpmh one-step G-tests vs exact matrices + mutants",
        kernel_vs_matrix_rows,
        FAMILY,
    ),
    Check(
        "pg_detailed_balance",
        "exact",
        PAPER,
        "exact matrices reversible; TV of the uncorrected MGPMH variant",
        detailed_balance_rows,
        FAMILY,
    ),
    Check(
        "pg_min_stationarity",
        "exact",
        "De Sa et al. 2018 (reconstructed)",
        "min_gibbs / doublemin_gibbs preserve pi from exact augmented-stationary starts",
        stationarity_rows,
        FAMILY,
    ),
    Check(
        "pg_continuous_stationarity",
        "exact",
        PAPER,
        "gibbs_its/gibbs_da/pgits/pgda/rejection keep pi from exact starts (+ mutant)",
        continuous_stationarity_rows,
        FAMILY,
    ),
    Check("pg_thm1", "theory", PAPER, "Thm 1 gap ratio over a lambda sweep", thm1_rows, FAMILY),
    Check("pg_thm2", "theory", PAPER, "Thm 2 Poisson-MH gap ratio", thm2_rows, FAMILY),
    Check("pg_statement1", "theory", PAPER, "Statement 1 cost lambda + L", statement1_rows, FAMILY),
    Check("pg_thm3", "theory", PAPER, "Thm 3 Chebyshev interpolation error", thm3_rows, FAMILY),
    Check(
        "pg_thm45", "theory", PAPER, "Thms 4/5 PGDA/PGITS gap ratios (quadrature kernel)", thm45_rows, FAMILY
    ),
    Check("pg_claims", "claim", PAPER, "Zhang & De Sa 2019 §4 claims", claim_rows, FAMILY),
]
