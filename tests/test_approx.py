"""Approximate minibatch tests (seeds 002, 004; B14): pieces with known answers, exactness with all
data, kernel-vs-matrix (with mutants), determinism, bad input. Tests that compile several kernels
(Numba compile dominates their cold cost) are marked slow. False-alarm probability of each
statistical test <= 1e-4 (kernel-vs-matrix: FWER 1e-4 by Bonferroni; KS: alpha 1e-5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from samplers import registry as R
from samplers.approx import correction as corr
from samplers.approx import design as dsg
from samplers.approx.seqtest import seq_ttest, tcrit_table
from samplers.targets import tall
from verify import approx_checks as C
from verify import approx_matrix as AM


# ----------------------------------------------------------------------------- DP (K14 App. A)
@pytest.mark.parametrize(
    "eps,m,E,Ej",
    [
        (0.001, 50, 0.031258, 251.35),
        (0.001, 500, 0.012836, 25.648),
        (0.01, 450, 0.099666, 25.784),
        (0.05, 50, 0.432968, 94.59),
        (0.2, 50, 0.499991, 6.159),
    ],
)
def test_dp_golden_values(eps, m, E, Ej):
    """Chen's seq_test_dynprog.m values at N = 13000, mu_std = 0, L = 100."""
    err, ej, _ = dsg.test_error(0.0, 13000, m, eps)
    assert err == pytest.approx(E, abs=2e-6)
    assert ej == pytest.approx(Ej, abs=0.01)


def test_dp_properties():
    e0, _, p0 = dsg.test_error(0.0, 5000, 100, 0.05)
    e1, _, p1 = dsg.test_error(2.0, 5000, 100, 0.05)
    assert e1 < e0 < 0.5 and p1 < p0 <= 1.0
    # Wang-Tsiatis with alpha = 0.5 is Pocock
    pis = dsg.stage_fractions(5000, 100)
    assert np.allclose(dsg.boundaries(pis, 0.05, "wang_tsiatis", 0.5), dsg.boundaries(pis, 0.05))
    # O'Brien-Fleming (alpha = 1) bounds shrink with pi
    ob = dsg.boundaries(pis, 0.05, "wang_tsiatis", 1.0)
    assert np.all(np.diff(ob) < 0)
    # worst-case design reproduces S17's MNIST-13k choice (bound 0.1 -> eps 0.01, m 450)
    des = dsg.worst_case_design(13000, 0.1, (400, 450, 500), (0.005, 0.01, 0.05))
    assert (des["m"], des["eps"]) == (450, 0.01)


def _dense_dp(mu: float, pis: np.ndarray, Gs: np.ndarray, L: int) -> tuple[float, float]:
    """K14 App. A's recurrence with every bin-to-bin kernel term (the O(L^2 J) form): (error, pi_bar)."""
    from scipy.stats import norm

    cen_p, mass, prev, err, pibar = np.zeros(1), np.ones(1), 0.0, 0.0, 0.0
    for pj, G in zip(pis, Gs, strict=True):
        if pj >= 1.0:
            return err, pibar + mass.sum()
        a = (pj - prev) / ((1 - prev) * np.sqrt(pj * (1 - pj)))
        b = np.sqrt(prev * (1 - pj) / (pj * (1 - prev)))
        sd = np.sqrt((pj - prev) / (pj * (1 - prev)))
        mean = a * abs(mu) + b * cen_p
        lo, hi = norm.cdf((-G - mean) / sd), norm.sf((G - mean) / sd)
        cen = -G + 2 * G / L * (np.arange(L) + 0.5)
        new = (mass[:, None] * np.exp(-0.5 * ((cen[None, :] - mean[:, None]) / sd) ** 2)).sum(0)
        inner = (mass * (1 - lo - hi)).sum()
        err += (mass * lo).sum()
        pibar += pj * (mass * (lo + hi)).sum()
        if new.sum() == 0.0:  # every path has exited
            return err, pibar
        cen_p, mass, prev = cen, new * inner / new.sum(), pj
    return err, pibar


@pytest.mark.parametrize(
    "mu,boundary,alpha", [(0.0, "pocock", 0.5), (2.0, "pocock", 0.5), (0.5, "wang_tsiatis", 1.0)]
)
def test_windowed_dp_equals_the_dense_recurrence(mu, boundary, alpha):
    """seq_dp skips kernel terms beyond 12 sd of their mean; at 400 stages (late kernels narrower than a bin)
    it matches the dense recurrence to rounding."""
    pis = dsg.stage_fractions(20_000, 50)
    Gs = dsg.boundaries(pis, 0.05, boundary, alpha)
    err, _, pibar, _ = dsg.seq_dp(mu, pis, Gs, 100)
    ref = _dense_dp(mu, pis, Gs, 100)
    assert err == pytest.approx(ref[0], rel=1e-9) and pibar == pytest.approx(ref[1], rel=1e-9)


def test_average_design_is_cheaper_than_worst_case():
    """K14 §6.5: with pairs far from the decision boundary the average design uses less data."""
    N = 2000
    pairs = np.array([[1e-3, 0.05, 0.0], [-2e-3, 0.05, 0.0], [5e-4, 0.03, 0.0]])
    avg = dsg.average_design(N, 0.05, pairs, (50, 100, 200), dsg.DEFAULT_EPS_GRID, L=50)
    wc = dsg.worst_case_design(N, 0.05, (50, 100, 200), dsg.DEFAULT_EPS_GRID, L=50)
    assert avg["mean_abs_delta"] <= 0.05
    assert avg["data"] < wc["data"]


# ----------------------------------------------------------------------------- t-test
def test_tcrit_table_matches_scipy():
    tc = tcrit_table(50, 0.05)
    assert np.isinf(tc[0]) and np.isinf(tc[1])
    assert tc[10] == pytest.approx(stats.t.ppf(0.95, 9))
    wt = tcrit_table(50, 0.05, "wang_tsiatis", 1.0)
    assert wt[25] == pytest.approx(stats.t.ppf(0.95, 24) * (25 / 50) ** -0.5)


def test_sequential_test_with_all_data_is_exact_mh():
    """m = N: accept iff mean l > mu0, for any data and threshold (mu0 off the mean itself, where the
    decision is a rounding tie)."""
    rng = np.random.default_rng(1)
    Y = rng.standard_normal((40, 1))
    t = tall.gaussian_location(Y)
    th, thp = np.array([0.1]), np.array([-0.2])
    l = -0.5 * ((thp[0] - Y[:, 0]) ** 2 - (th[0] - Y[:, 0]) ** 2)
    perm = np.arange(40)
    tc = tcrit_table(40, 0.01)
    for mu0 in np.linspace(l.mean() - 0.3, l.mean() + 0.3, 12):
        acc, n = seq_ttest(t, th, thp, float(mu0), perm, 40, tc, rng)
        assert n == 40 and acc == (l.mean() > mu0)


def _ttest_reference(t, th, thp, mu0, perm, m, tc, rng):
    """The K14 test written plainly (numpy, the generic ``loglik_i``, a two-pass variance), drawing its
    data with the stream uniforms the kernel reads: the kernel's decision, data count and permutation."""
    from samplers.streams import new_stream, uniforms

    N = t.X.shape[0]
    seed, gamma = new_stream(rng)
    u = uniforms((seed, gamma), N)
    perm = perm.copy()
    lv = []
    n = 0
    while True:
        for q in range(n, n + min(m, N - n)):
            j = min(q + int(u[q] * (N - q)), N - 1)
            perm[q], perm[j] = perm[j], perm[q]
            i = int(perm[q])
            lv.append(tall.loglik_i(t, i, thp) - tall.loglik_i(t, i, th))
        n = len(lv)
        a = np.asarray(lv)
        diff = a.mean() - mu0
        if n >= N:
            return diff > 0.0, n, perm
        sd = a.std(ddof=1) / math.sqrt(n) * math.sqrt(1.0 - (n - 1.0) / (N - 1.0))
        if sd > 0.0 and abs(diff) > tc[n] * sd:
            return diff > 0.0, n, perm


def _ttest_targets():
    rng = np.random.default_rng(11)
    X = rng.standard_normal((900, 5))
    y = (rng.random(900) < special.expit(X @ np.array([1.0, -0.5, 0.3, 0.0, 2.0]))).astype(float)
    th = np.array([0.9, -0.4, 0.3, 0.1, 1.8])
    yield "logistic", tall.logistic_regression(X, y, prior_prec=1.0), th
    yield "gauss", tall.gaussian_location(X[:, :2]), th[:2]
    yield "mixture", tall.gaussian_mixture(X[:, 0] + 0.5, temperature=3.0), np.array([0.2, 0.7])
    yield "ica", tall.ica(X[:, :2]), np.array([1.0, 0.2, -0.1, 0.9])


@pytest.mark.parametrize("name", ["logistic", "gauss", "mixture", "ica"])
def test_sequential_test_matches_plain_reference(name):
    """Decision, data used and permutation of ``seq_ttest`` equal those of the plainly written test on
    the same stream, for 60 proposals per target kind (the kernel's per-kind ``l_i`` on arrays, its
    shifted sums, its stage loop; unit test, no false alarms: a decision differs only at a rounding tie)."""
    t, th = next((tt, v) for k, tt, v in _ttest_targets() if k == name)
    N = t.X.shape[0]
    rng = np.random.default_rng(5)
    perm = np.arange(N)
    for eps in (0.01, 0.1, 0.3):
        tc = tcrit_table(N, eps)
        for _ in range(20):
            thp = th + 0.05 * rng.standard_normal(th.size)
            l = np.array([tall.loglik_i(t, i, thp) - tall.loglik_i(t, i, th) for i in range(N)])
            mu0 = float(l.mean() + 0.02 * l.std() * rng.standard_normal())
            r1 = np.random.default_rng(int(rng.integers(1 << 30)))
            r2 = np.random.default_rng()
            r2.bit_generator.state = r1.bit_generator.state
            ref = _ttest_reference(t, th, thp, mu0, perm, 50, tc, r2)
            acc, n = seq_ttest(t, th, thp, mu0, perm, 50, tc, r1)
            assert (acc, n) == ref[:2]
            assert np.array_equal(perm, ref[2])


def test_full_pass_stats_and_array_l_i_match_loglik_i():
    """``full_pass_stats`` (the per-kind ``l_i`` on arrays that the AustereMH(nc), MHminibatch and MHSubLhd
    loops share) equals mean / population sd / max |l_i| of the generic ``loglik_i`` differences, for every
    target kind the tests use (unit test, rounding-level tolerance)."""
    from samplers.approx.seqtest import full_pass_stats

    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 3))
    targets = [(k, tt, v) for k, tt, v in _ttest_targets()]
    targets.append(
        (
            "rlr",
            tall.robust_regression(X, X @ np.array([1.0, -1.0, 0.5]) + rng.standard_t(4, 300)),
            np.array([0.9, -1.1, 0.4]),
        )
    )
    for name, t, th in targets:
        thp = th + 0.1 * rng.standard_normal(th.size)
        l = np.array([tall.loglik_i(t, i, thp) - tall.loglik_i(t, i, th) for i in range(t.X.shape[0])])
        mu, sd, mx = full_pass_stats(t, th, thp)
        assert mu == pytest.approx(l.mean(), rel=1e-9, abs=1e-12), name
        assert sd == pytest.approx(l.std(), rel=1e-9), name
        assert mx == pytest.approx(np.abs(l).max(), rel=1e-9), name


# ----------------------------------------------------------------------------- correction (S17 §4)
def test_correction_known_answer_and_sampler():
    """Table 3, n = 2000, sigma = 1, lambda = 10: L_inf 1.3e-3; N(0,1) * C_1 ~ logistic."""
    y, u, linf = corr.solve_correction(2000, 20.0, 10.0, 1.0)
    assert linf == pytest.approx(1.3e-3, rel=0.05)
    c = corr._make(y, u, linf, 1.0, 20.0 / 2000)  # same as build_correction(2000, 20, 10, 1)
    x = np.linspace(-6, 6, 25)
    # CDF of N(0,1) + X_corr from the histogram density (closed form) vs the logistic
    cdf = np.array([1 - AM.barker_corr_prob(-v, 0.0, c.y, c.h, c.p) for v in x])
    assert np.max(np.abs(cdf - special.expit(x))) < linf + 5e-4
    # the O(log n) sampler draws from the tabulated histogram (KS, alpha 1e-5)
    rng = np.random.default_rng(3)
    draws = np.array([corr.sample_xcorr(c.y, c.h, c.cdf, rng.random()) for _ in range(5000)])
    edges = np.concatenate([c.y - c.h / 2, [c.y[-1] + c.h / 2]])
    cdf_e = np.concatenate([[0.0], c.cdf])
    res = stats.kstest(draws, lambda v: np.interp(v, edges, cdf_e))
    assert res.pvalue > 1e-5


def test_correction_bad_input():
    with pytest.raises(ValueError, match="sigma"):
        corr.solve_correction(100, 20.0, 10.0, 2.0)
    with pytest.raises(ValueError, match="lambda"):
        corr.solve_correction(100, 20.0, 0.0, 1.0)


# ----------------------------------------------------------------------------- exact matrices
def test_matrices_reduce_to_exact_chains():
    L = C.tiny()
    P0 = L.exact_mh()
    assert np.abs(L.matrix(lambda l, k: AM.austere_accept(l, k, L.N, 0.2)) - P0).max() < 1e-12
    assert AM.stationary_tv(P0, L.target) < 1e-10
    c = C.small_corr()
    PB = L.exact_barker()
    Pm = L.matrix(lambda l, k: AM.minibatch_accept(l, k, L.N, math.inf, c))
    assert np.abs(Pm - PB).max() < 1e-12
    # biased for eps > 0 with early decisions
    Pe = L.matrix(lambda l, k: AM.austere_accept(l, k, 2, 0.3))
    assert AM.stationary_tv(Pe, L.target) > 1e-3


def _all_pass(rows):
    for r in rows:
        assert r["passed"], r


@pytest.mark.slow
def test_austere_kernel_vs_matrix_and_mutants():
    _all_pass(C.check_austere_kvm(True))


@pytest.mark.slow
def test_minibatch_kernel_vs_matrix_and_mutant():
    _all_pass(C.check_minibatch_kvm(True))


@pytest.mark.slow
def test_other_kernels_vs_matrix_and_mutants():
    _all_pass(C.check_nc_kvm(True))
    _all_pass(C.check_sublhd_kvm(True))
    _all_pass(C.check_gibbs_kvm(True))


# ----------------------------------------------------------------------------- wrappers
@pytest.fixture(scope="module")
def gl():
    return R.build_problem("gaussian_location", 0, N=300, d=2)


HP = {
    "austere_mh_c": {"m": 50, "eps": 0.05},
    "austere_mh_nc": {"m_grid": (50, 100), "eps_grid": (0.05, 0.1), "mu_points": 21},
    "mh_minibatch": {"m": 50, "corr_n": 400},
    "mh_sublhd": {"m": 20},
    "sgld_austere": {"batch": 30, "m": 50, "eps": 0.1},
}


@pytest.mark.parametrize(
    "mid", [pytest.param(m, marks=() if m == "austere_mh_c" else pytest.mark.slow) for m in HP]
)
def test_determinism_and_accounting(gl, mid):
    x0 = gl.meta["post_mean"].copy()
    a = R.run(mid, gl, 200, 5, x0=x0, step=0.02, **HP[mid])
    b = R.run(mid, gl, 200, 5, x0=x0, step=0.02, **HP[mid])
    assert np.array_equal(a.samples, b.samples) and np.array_equal(a.n_evals, b.n_evals)
    full = a.extra["trace_0"]
    if mid in ("austere_mh_nc", "mh_sublhd"):
        assert set(np.unique(full)) <= {0, 300} and a.extra["full_pass_evals"] == full.sum() > 0
    else:
        assert a.extra["full_pass_evals"] == 0
    assert np.all(a.n_evals <= (300 + 60 if mid == "sgld_austere" else 300))


@pytest.mark.slow
def test_austere_gibbs_runs():
    pr = R.build_problem("dense_mrf", 0, D=8, sd=0.5)
    r = R.run("austere_gibbs", pr, 500, 1, m=5, eps=0.1)
    assert r.samples.shape == (500, 8) and np.all(r.n_evals <= 2 * 21)


@pytest.mark.parametrize(
    "mid,kw,msg",
    [
        ("austere_mh_c", {"eps": 0.5}, "eps"),
        ("austere_mh_c", {"eps": 0.0}, "eps"),
        ("austere_mh_c", {"m": 0}, "m must"),
        ("mh_minibatch", {"delta": 0.0}, "delta"),
        ("mh_minibatch", {"corr_sigma": 2.0, "corr_n": 50}, "sigma"),
        ("mh_sublhd", {"gamma": 1.0}, "gamma"),
        ("mh_sublhd", {"delta": 1.5}, "delta"),
        ("austere_mh_nc", {"bound": -1.0}, "bound"),
        ("sgld_austere", {"eps": 0.6, "batch": 30}, "eps"),
        ("austere_mh_c", {"proposal": "langevin"}, "proposal"),
    ],
)
def test_bad_hyperparameters(gl, mid, kw, msg):
    with pytest.raises(ValueError, match=msg):
        R.run(mid, gl, 10, 0, step=0.02, **kw)


def test_austere_gibbs_bad_input():
    pr = R.build_problem("random_ising", 0)
    with pytest.raises(ValueError, match="eps"):
        R.run("austere_gibbs", pr, 10, 0, eps=0.7)
    with pytest.raises(ValueError, match="applies to"):
        R.run("austere_mh_c", pr, 10, 0)
