"""Checks of the approximate minibatch tests (Korattikara et al. 2014; Seita et al. 2017; Bardenet et al.
2014) on enumerable problems.

Exact rows: kernel-vs-matrix G-tests (verify.empirical, FWER 1e-4, Bonferroni over rows) of every
kernel against its exact matrix (:mod:`verify.approx_matrix`), each paired with a mutant the same
check must reject, plus the "all N data => exact MH / Barker" identities. Theory rows: exact TV of
the stationary law from the target vs eps / bound / m with the K14 Thm 1 (S17 Lemma 5, K14 Thm 4)
bound, the DP error / data-usage predictions vs simulation, S17 Lemma 3 / Cor. 1 bound vs the
t-statistic CDF error, S17 Table 3 L_inf errors.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit
from scipy import special, stats

from samplers import proposals as PR
from samplers import registry as R
from samplers.approx import correction as corr
from samplers.approx import design as dsg
from samplers.approx.mrf import dense_triple_mrf
from samplers.approx.seqtest import seq_ttest, tcrit_table
from samplers.targets import tall
from samplers.targets.factor_graph import FactorGraph
from verify import approx_matrix as AM
from verify import approx_mutants as MU
from verify.empirical import graph_counts, kernel_vs_matrix, lattice_counts
from verify.enumerate import factor_graph_states, state_index
from verify.markov import normalize_log, stationary, tv

PAPER_K = "Korattikara, Chen & Welling 2014 (K14)"
PAPER_S = "Seita et al. 2017 (S17)"
PAPER_B = "Bardenet et al. 2014"
TARGET = "tiny_grid truncated_gaussian N=5 d=1 h=0.25 w=1.5"
H = 0.25
RW = PR.RW_LATTICE


@lru_cache(maxsize=2)
def tiny(N: int = 5, seed: int = 3) -> AM.LatticeProblem:
    pr = R.build_problem("tiny_grid", seed, kind="truncated_gaussian", N=N, d=1, h=H, half_width=1.5)
    return AM.LatticeProblem(pr)


@lru_cache(maxsize=2)
def small_corr() -> corr.Correction:
    """C_1 on a coarse grid (n = 400, V = 20, lambda = 10): L_inf about 2e-3, enough for checks."""
    return corr.build_correction(400, 20.0, 10.0, 1.0)


def _tc(N: int, eps: float) -> np.ndarray:
    return tcrit_table(N, eps)


def _row(check, paper, method, res, mutant: str | None = None) -> dict:
    r = res.row(check, paper, method, TARGET)
    if mutant is not None:
        r["statistic"] = f"mutant '{mutant}' min row p-value (must be rejected)"
        r["passed"] = not res.passed
    return r


def _kvm(P, sample, reps, seed, name):
    return kernel_vs_matrix(P, sample, reps, seed, name=name)


# ============================================================================ kernel vs matrix
def check_austere_kvm(quick: bool) -> list[dict]:
    """AustereMH(c) m=2, eps=0.2 vs its exact matrix; mutants: with replacement, no FPC."""
    L = tiny()
    reps = 20_000 if quick else 100_000
    m, eps = 2, 0.2
    tc = _tc(L.N, eps)
    P = L.matrix(lambda l, k: AM.austere_accept(l, k, m, eps))
    model = L.model

    def sampler(mode):
        def f(s, rng):
            th = L.lat.points[s].copy()
            if mode == MU.MUT_NONE:
                X = MU.repeat_austere(model, th, RW, 0.1, H, 3, m, tc, rng, reps)
            else:
                X = MU.repeat_austere_mutant(model, th, RW, 0.1, H, 3, m, tc, rng, reps, mode)
            return lattice_counts(L.lat, X)

        return f

    rows = [
        _row(
            "austere_mh_c kernel vs exact matrix",
            PAPER_K,
            "austere_mh_c",
            _kvm(P, sampler(MU.MUT_NONE), reps, 11, "austere"),
        )
    ]
    for mode, name in ((MU.MUT_REPLACE, "with replacement"), (MU.MUT_NOFPC, "no FPC")):
        rows.append(
            _row(
                "austere_mh_c mutant rejected",
                PAPER_K,
                "austere_mh_c",
                _kvm(P, sampler(mode), reps, 12 + mode, name),
                mutant=name,
            )
        )
    # all data in one stage: the exact MH matrix
    Pn = L.matrix(lambda l, k: AM.austere_accept(l, k, L.N, eps))
    err = float(np.abs(Pn - L.exact_mh()).max())
    rows.append(
        {
            "check": "austere_mh_c with m = N equals exact MH (matrix)",
            "paper": PAPER_K,
            "method": "austere_mh_c",
            "target": TARGET,
            "statistic": "max |P - P_MH|",
            "value": err,
            "threshold": 1e-12,
            "passed": err < 1e-12,
            "detail": "sequential test on all N data decides mean l > mu0",
        }
    )
    tcn = _tc(L.N, eps)
    res = _kvm(
        L.exact_mh(),
        lambda s, rng: lattice_counts(
            L.lat, MU.repeat_austere(model, L.lat.points[s].copy(), RW, 0.1, H, 3, L.N, tcn, rng, reps)
        ),
        reps,
        19,
        "m=N",
    )
    rows.append(_row("austere_mh_c kernel with m = N vs exact MH matrix", PAPER_K, "austere_mh_c", res))
    return rows


def nc_table(N: int) -> dict:
    return dsg.design_table(N, (1, 2, 3), (0.05, 0.1, 0.2, 0.3), np.linspace(0, 10, 101), 100)


def _nc_args(N: int, tab: dict):
    eps_u = sorted(set(tab["eps"].tolist()))
    tct = np.stack([_tc(N, e) for e in eps_u])
    eidx = np.array([eps_u.index(e) for e in tab["eps"]], dtype=np.int64)
    return tab["m"], eidx, tct, tab["E"], tab["pibar"] * N, tab["mu_grid"]


def check_nc_kvm(quick: bool) -> list[dict]:
    """AustereMH(nc) (bound 0.3) vs its exact matrix (u integrated piecewise); mutant: no FPC."""
    L = tiny()
    reps = 20_000 if quick else 100_000
    bound = 0.3
    tab = nc_table(L.N)
    args = _nc_args(L.N, tab)
    P = L.matrix(lambda l, k: AM.nc_accept(l, k, bound, tab))

    def sampler(mut):
        def f(s, rng):
            th = L.lat.points[s].copy()
            if mut:
                X = MU.repeat_austere_nc_mutant(
                    L.model, th, RW, 0.1, H, 3, bound, *args, rng, reps, MU.MUT_NOFPC
                )
            else:
                X = MU.repeat_austere_nc(L.model, th, RW, 0.1, H, 3, bound, *args, rng, reps)
            return lattice_counts(L.lat, X)

        return f

    return [
        _row(
            "austere_mh_nc kernel vs exact matrix",
            PAPER_S,
            "austere_mh_nc",
            _kvm(P, sampler(False), reps, 21, "nc"),
        ),
        _row(
            "austere_mh_nc mutant rejected",
            PAPER_S,
            "austere_mh_nc",
            _kvm(P, sampler(True), reps, 22, "nc-nofpc"),
            mutant="no FPC",
        ),
    ]


def check_minibatch_kvm(quick: bool) -> list[dict]:
    """MHminibatch m=2 vs its exact matrix; mutant: X_nc ~ N(0, 1) (s^2 not subtracted)."""
    L = tiny()
    reps = 20_000 if quick else 100_000
    c = small_corr()
    m = 2
    P = L.matrix(lambda l, k: AM.minibatch_accept(l, k, m, math.inf, c))

    def sampler(mut):
        def f(s, rng):
            th = L.lat.points[s].copy()
            if mut:
                X = MU.repeat_minibatch_mutant(
                    L.model, th, RW, 0.1, H, 3, m, c.sigma, c.y, c.h, c.cdf, rng, reps
                )
            else:
                X = MU.repeat_minibatch(
                    L.model, th, RW, 0.1, H, 3, m, math.inf, c.sigma, c.y, c.h, c.cdf, rng, reps
                )
            return lattice_counts(L.lat, X)

        return f

    rows = [
        _row(
            "mh_minibatch kernel vs exact matrix",
            PAPER_S,
            "mh_minibatch",
            _kvm(P, sampler(False), reps, 31, "mb"),
        ),
        _row(
            "mh_minibatch mutant rejected",
            PAPER_S,
            "mh_minibatch",
            _kvm(P, sampler(True), reps, 32, "mb-xnc"),
            mutant="X_nc ignores s^2",
        ),
    ]
    Pn = L.matrix(lambda l, k: AM.minibatch_accept(l, k, L.N, math.inf, c))
    err = float(np.abs(Pn - L.exact_barker()).max())
    rows.append(
        {
            "check": "mh_minibatch with m = N equals exact Barker (matrix)",
            "paper": PAPER_S,
            "method": "mh_minibatch",
            "target": TARGET,
            "statistic": "max |P - P_Barker|",
            "value": err,
            "threshold": 1e-12,
            "passed": err < 1e-12,
            "detail": "batch = all data -> exact Barker test",
        }
    )
    return rows


def check_sublhd_kvm(quick: bool) -> list[dict]:
    """MHSubLhd (m=2, gamma=1.5, p=2, delta=0.5) vs exact matrix; mutant: with replacement."""
    L = tiny()
    reps = 20_000 if quick else 100_000
    m, gamma, p, delta = 2, 1.5, 2.0, 0.5
    P = L.matrix(lambda l, k: AM.sublhd_accept(l, k, m, gamma, p, delta))

    def sampler(mut):
        def f(s, rng):
            th = L.lat.points[s].copy()
            rep = MU.repeat_sublhd_mutant if mut else MU.repeat_sublhd
            X = rep(L.model, th, RW, 0.1, H, 3, m, gamma, p, delta, rng, reps)
            return lattice_counts(L.lat, X)

        return f

    return [
        _row(
            "mh_sublhd kernel vs exact matrix",
            PAPER_B,
            "mh_sublhd",
            _kvm(P, sampler(False), reps, 41, "sublhd"),
        ),
        _row(
            "mh_sublhd mutant rejected",
            PAPER_B,
            "mh_sublhd",
            _kvm(P, sampler(True), reps, 42, "sublhd-repl"),
            mutant="with replacement",
        ),
    ]


# ----------------------------------------------------------------------------- Gibbs
@lru_cache(maxsize=2)
def tiny_mrf(D: int = 5, sd: float = 1.0, seed: int = 5) -> FactorGraph:
    return dense_triple_mrf(D, sd, np.random.default_rng(seed))


def _factor_diffs(fg: FactorGraph, x: np.ndarray, i: int) -> np.ndarray:
    """l_f = log psi_f(x_i=1) - log psi_f(x_i=0) from the tables (independent of the kernel)."""
    out = []
    for f in fg.var_fac[fg.var_ptr[i] : fg.var_ptr[i + 1]]:
        vs = fg.fac_vars[fg.fac_ptr[f] : fg.fac_ptr[f + 1]]
        st = fg.fac_stride[fg.fac_ptr[f] : fg.fac_ptr[f + 1]]
        vals = []
        for v in (1, 0):
            xx = x.copy()
            xx[i] = v
            vals.append(fg.tables[fg.tab_ptr[f] + int(np.dot(xx[vs], st))])
        out.append(vals[0] - vals[1])
    return np.array(out)


def gibbs_matrix(fg: FactorGraph, prob1) -> tuple[np.ndarray, np.ndarray]:
    """Random-scan single-site matrix with P(x_i <- 1 | x) = prob1(l_f)."""
    X = factor_graph_states(fg.card)
    S = X.shape[0]
    P = np.zeros((S, S))
    for s in range(S):
        for i in range(fg.n):
            p1 = prob1(_factor_diffs(fg, X[s], i))
            for v, pv in ((1, p1), (0, 1.0 - p1)):
                y = X[s].copy()
                y[i] = v
                P[s, state_index(fg.card, y[None, :])[0]] += pv / fg.n
    return P, X


def _log_joint(fg: FactorGraph, X: np.ndarray) -> np.ndarray:
    out = np.zeros(X.shape[0])
    for f in range(fg.M.size):
        vs = fg.fac_vars[fg.fac_ptr[f] : fg.fac_ptr[f + 1]]
        st = fg.fac_stride[fg.fac_ptr[f] : fg.fac_ptr[f + 1]]
        out += fg.tables[fg.tab_ptr[f] + X[:, vs] @ st]
    return out


def check_gibbs_kvm(quick: bool) -> list[dict]:
    """Austere Gibbs (D=5 dense triple MRF, log-potentials sd 1, m=2, eps=0.2) vs exact matrix;
    mutant: no FPC."""
    fg = tiny_mrf()
    reps = 10_000 if quick else 50_000
    m, eps = 2, 0.2
    deg = int(np.max(np.diff(fg.var_ptr)))
    tc = _tc(deg, eps)
    P, X = gibbs_matrix(fg, lambda lf: AM.austere_gibbs_prob1(lf, m, eps))

    def sampler(mut):
        def f(s, rng):
            x0 = X[s].copy()
            if mut:
                Y = MU.repeat_austere_gibbs_mutant(fg, x0, m, tc, rng, reps)
            else:
                Y = MU.repeat_austere_gibbs(fg, x0, 0, m, tc, rng, reps)
            return graph_counts(fg.card, Y)

        return f

    tgt = "dense triple MRF D=5 sd=1"
    r1 = _kvm(P, sampler(False), reps, 51, "gibbs").row(
        "austere_gibbs kernel vs exact matrix", PAPER_K, "austere_gibbs", tgt
    )
    res2 = _kvm(P, sampler(True), reps, 52, "gibbs-nofpc")
    r2 = res2.row("austere_gibbs mutant rejected", PAPER_K, "austere_gibbs", tgt)
    r2["statistic"] = "mutant 'no FPC' min row p-value (must be rejected)"
    r2["passed"] = not res2.passed
    return [r1, r2]


# ============================================================================ theory: TV vs knob
def _thm1_row(check, paper, theorem, params, P0, Pe, target, extra=""):
    meas = tv(stationary(Pe), target)
    d1 = float(0.5 * np.abs(Pe - P0).sum(1).max())  # one-step error Delta_max
    best = (math.inf, 0, 1.0)
    A = np.eye(P0.shape[0])
    for k in range(1, 301):
        A = A @ P0
        eta = AM.dobrushin(A)
        if eta < 1:
            b = k * d1 / (1 - eta)
            if b < best[0]:
                best = (b, k, eta)
    bound = best[0]
    return {
        "check": check,
        "paper": paper,
        "theorem": theorem,
        "params": f"{params}; Delta_max={d1:.3g}; k={best[1]} eta_k={best[2]:.3g}{extra}",
        "bound": bound,
        "measured": meas,
        "holds": bool(meas <= bound + 1e-12),
        "slack": bound - meas,
    }


def theory_tv_austere(quick: bool) -> list[dict]:
    """Exact d_TV(S_0, S_eps) of AustereMH(c) vs eps, and K14 Thm 1 applied to P0^k: the one-step
    error Delta_max inflated to k Delta_max, eta_k = Dobrushin coefficient of P0^k."""
    L = tiny()
    P0 = L.exact_mh()
    rows = []
    for eps in (0.05, 0.1, 0.2, 0.3, 0.4, 0.45):
        Pe = L.matrix(lambda l, k, eps=eps: AM.austere_accept(l, k, 2, eps))
        rows.append(
            _thm1_row(
                "TV(stationary, target) of austere_mh_c vs eps",
                PAPER_K,
                "Thm 1",
                f"eps={eps} m=2 N={L.N}",
                P0,
                Pe,
                L.target,
            )
        )
    return rows


def theory_tv_others(quick: bool) -> list[dict]:
    """Same for MHminibatch vs m (S17 Lemma 5 with the exact Barker chain as T0), MHSubLhd vs delta,
    AustereMH(nc) vs bound (all K14 Thm 1 / B14 form)."""
    L = tiny()
    P0, PB = L.exact_mh(), L.exact_barker()
    c = small_corr()
    rows = []
    for m in (1, 2, 3, 4):
        Pe = L.matrix(lambda l, k, m=m: AM.minibatch_accept(l, k, m, math.inf, c))
        rows.append(
            _thm1_row(
                "TV(stationary, target) of mh_minibatch vs m",
                PAPER_S,
                "Lemma 5",
                f"m={m} N={L.N} C_1 n=400",
                PB,
                Pe,
                L.target,
            )
        )
    for delta in (0.9, 0.5, 0.1):
        Pe = L.matrix(lambda l, k, d=delta: AM.sublhd_accept(l, k, 2, 1.5, 2.0, d))
        rows.append(
            _thm1_row(
                "TV(stationary, target) of mh_sublhd vs delta",
                PAPER_B,
                "Prop. (TV <= A m delta/(1-rho)) via Thm-1 form",
                f"delta={delta} m=2 gamma=1.5 N={L.N}",
                P0,
                Pe,
                L.target,
            )
        )
    if not quick:
        tab = nc_table(L.N)
        for bound in (0.05, 0.2, 0.4):
            Pe = L.matrix(lambda l, k, b=bound: AM.nc_accept(l, k, b, tab))
            rows.append(
                _thm1_row(
                    "TV(stationary, target) of austere_mh_nc vs bound",
                    PAPER_S,
                    "Thm 1 (K14)",
                    f"bound={bound} N={L.N}",
                    P0,
                    Pe,
                    L.target,
                )
            )
    fg = tiny_mrf()
    P0g, X = gibbs_matrix(fg, lambda lf: float(special.expit(lf.sum())))
    tg = normalize_log(_log_joint(fg, X))
    for eps in (0.1, 0.3) if quick else (0.05, 0.1, 0.2, 0.3, 0.4):
        Pe, _ = gibbs_matrix(fg, lambda lf, eps=eps: AM.austere_gibbs_prob1(lf, 2, eps))
        rows.append(
            _thm1_row(
                "TV(stationary, target) of austere_gibbs vs eps",
                PAPER_K,
                "Thm 4 (App. F)",
                f"eps={eps} m=2 D=5",
                P0g,
                Pe,
                tg,
            )
        )
    return rows


# ============================================================================ theory: DP vs simulation
@njit(cache=True)
def _simulate_tests(t, theta, theta_p, mu0: float, m: int, tcrit, n_rep: int, rng):
    """Fraction of early (n < N) rejections and mean data used over n_rep runs of the real test."""
    N = t.X.shape[0]
    perm = np.arange(N)
    early_rej = 0
    used = 0.0
    for _ in range(n_rep):
        a, n = seq_ttest(t, theta, theta_p, mu0, perm, m, tcrit, rng)
        if (not a) and n < N:
            early_rej += 1
        used += n
    return early_rej / n_rep, used / n_rep


def theory_dp_vs_sim(quick: bool) -> list[dict]:
    """K14 Figs 1 / 10 counterpart: DP error E(mu_std) and data fraction pi_bar vs simulation of the
    real test (Gaussian data: l_i linear in y_i ~ N(0, 1), N = 2000, m = 100, eps = 0.05)."""
    N, m, eps = 2000, 100, 0.05
    rng = np.random.default_rng(7)
    Y = rng.standard_normal((N, 1))
    t = tall.gaussian_location(Y)
    th, thp = np.array([0.0]), np.array([0.05])
    l = -0.5 * ((thp[0] - Y[:, 0]) ** 2 - (th[0] - Y[:, 0]) ** 2)
    mu, sl = l.mean(), l.std()
    tc = tcrit_table(N, eps)
    n_rep = 2000 if quick else 20000
    rows = []
    for ms in (0.0, 0.5, 1.0, 2.0) if quick else (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0):
        mu0 = mu - ms * sl / math.sqrt(N - 1)
        # mu >= mu0: accepting is correct and a test on all N data is exact, so the error is the
        # early-rejection probability (at mu_std = 0 the DP counts the tie as "accept" likewise)
        err_sim, used = _simulate_tests(
            t, th, thp, mu0, m, tc, n_rep, np.random.default_rng(100 + int(ms * 100))
        )
        err_dp, _, pibar = dsg.test_error(ms, N, m, eps)
        se = math.sqrt(max(err_dp * (1 - err_dp), 1e-4) / n_rep)
        for what, b, meas, tol in (
            ("error", err_dp, err_sim, 4 * se + 0.01),
            ("data fraction", pibar, used / N, 0.02),
        ):
            rows.append(
                {
                    "check": f"K14 DP {what} vs simulation",
                    "paper": PAPER_K,
                    "theorem": "App. A (Figs 1, 10)",
                    "params": f"mu_std={ms} N={N} m={m} eps={eps} reps={n_rep}; "
                    f"holds if |sim - DP| <= {tol:.3g}",
                    "bound": b,
                    "measured": meas,
                    "holds": bool(abs(meas - b) <= tol),
                    "slack": tol - abs(meas - b),
                }
            )
    return rows


def theory_cor1(quick: bool) -> list[dict]:
    """S17 Lemma 3 / Cor. 1: sup_x |P(t < x) - Phi(x)| (Monte Carlo, batches with replacement from
    skewed Lambda_i: mixture data) vs (6.4 E|X|^3 + 2 E|X|)/sqrt(b) with standardised X."""
    rng = np.random.default_rng(9)
    y = tall.make_mixture_data(rng, 20000)
    th, thp = np.array([0.0, 1.0]), np.array([0.1, 0.9])

    def ll(tt):
        a = y - tt[0]
        b = y - tt[0] - tt[1]
        return np.logaddexp(-a * a / 4, -b * b / 4)

    lam = ll(thp) - ll(th)
    x = (lam - lam.mean()) / lam.std()
    bound_c = 6.4 * np.mean(np.abs(x) ** 3) + 2 * np.mean(np.abs(x))
    rows = []
    reps = 4000 if quick else 40000
    for b in (10, 50, 200):
        idx = rng.integers(0, x.size, (reps, b))
        xb = x[idx]
        tstat = xb.mean(1) / (xb.std(1) / math.sqrt(b))
        tstat.sort()
        F = stats.norm.cdf(tstat)
        ecdf_hi = np.arange(1, reps + 1) / reps
        ecdf_lo = np.arange(0, reps) / reps
        d = float(max(np.max(np.abs(ecdf_hi - F)), np.max(np.abs(ecdf_lo - F))))
        bound = bound_c / math.sqrt(b)
        rows.append(
            {
                "check": "t-statistic CDF error vs Corollary-1 bound",
                "paper": PAPER_S,
                "theorem": "Lemma 3 / Cor. 1",
                "params": f"b={b}, mixture log-ratios, {reps} MC batches (KS error ~"
                f"{1.36 / math.sqrt(reps):.2g})",
                "bound": bound,
                "measured": d,
                "holds": bool(d <= bound),
                "slack": bound - d,
            }
        )
    return rows


TABLE3 = {  # S17 App. C.1 Table 3: (n, sigma) -> L_inf at lambda = 100, 10, 1, 0.1, 0.01
    (2000, 0.8): (2.6e-3, 4.0e-4, 6.7e-5, 1.4e-5, 5.0e-6),
    (2000, 0.9): (3.3e-3, 6.4e-4, 1.6e-4, 1.3e-4, 2.7e-4),
    (2000, 1.0): (4.4e-3, 1.3e-3, 1.1e-3, 2.0e-3, 3.6e-3),
    (2000, 1.1): (6.8e-3, 4.6e-3, 7.5e-3, 1.3e-2, 2.4e-2),
    (4000, 0.8): (8.3e-4, 1.3e-4, 2.5e-5, 6.7e-6, 7.4e-6),
    (4000, 0.9): (1.2e-3, 2.6e-4, 1.0e-4, 2.0e-4, 3.9e-4),
    (4000, 1.0): (1.9e-3, 8.9e-4, 1.6e-3, 2.8e-3, 5.2e-3),
    (4000, 1.1): (4.3e-3, 6.0e-3, 1.0e-2, 1.2e-2, 3.5e-2),
}
LAMBDAS = (100.0, 10.0, 1.0, 0.1, 0.01)


def _table3_solved() -> dict:
    """(n, sigma, lambda) -> L_inf from the ``approx_table3`` experiment's table (the same deterministic
    ``solve_correction`` at V = 20) when the results dir has it: the workflow's verify job then does not
    solve the 40 systems a second time (~330 s)."""
    import pandas as pd

    from verify.checks import results_dir

    f = results_dir() / "approx_table3.csv"
    if not f.exists():
        return {}
    t = pd.read_csv(f)
    if "V" not in t:
        return {}
    t = t[t["V"] == 20.0]
    return {(int(r.n), float(r.sigma), float(r["lambda"])): float(r.linf) for _, r in t.iterrows()}


def theory_table3(quick: bool) -> list[dict]:
    """S17 Table 3: our L_inf of the clipped deconvolution vs the printed value (holds if it rounds
    to the printed 2 digits, i.e. within 5%; the 3 ill-conditioned n=4000, sigma=1.1 cells do
    not reproduce). Values the ``approx_table3`` table holds are read, the others solved (quick: only
    n = 2000, sigma = 1, lambda = 10)."""
    done = _table3_solved()
    rows = []
    for n, s in TABLE3:
        for lam in LAMBDAS:
            ref = TABLE3[(n, s)][LAMBDAS.index(lam)]
            linf = done.get((n, s, lam))
            if linf is None:
                if quick and (n, s, lam) != (2000, 1.0, 10.0):
                    continue
                _, _, linf = corr.solve_correction(n, 20.0, lam, s)
            ok = abs(linf - ref) <= 0.05 * ref + 0.5 * 10 ** (math.floor(math.log10(ref)) - 1)
            rows.append(
                {
                    "check": "correction L_inf error vs S17 Table 3",
                    "paper": PAPER_S,
                    "theorem": "App. C.1 Table 3",
                    "params": f"n={n} sigma={s} lambda={lam} V=20",
                    "bound": ref,
                    "measured": linf,
                    "holds": bool(ok),
                    "slack": ref - linf,
                    "reason": "ill-conditioned cell; independent re-derivations also "
                    "give 6.2e-3 / 1.9e-2 / 3.6e-2"
                    if (n, s) == (4000, 1.1) and lam in (10.0, 0.1, 0.01)
                    else "",
                }
            )
    return rows
