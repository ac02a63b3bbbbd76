"""Hot-loop helpers of the exact minibatch MH kernels (samplers/hotloop.py) and the fast paths of
poisson_mh / tuna_mh / poisson_mala|barker against straightforward reference implementations.

All checks are deterministic equalities (same random stream, rounding-level tolerances), so their
false-alarm probability is 0; each test also shows that a deliberately broken variant is caught.
"""

from __future__ import annotations

import math
import mmap
import re

import numpy as np
import pytest
from numba import njit, uint64

import samplers  # noqa: F401  (sets the Numba cache dir)
from samplers import hotloop as H
from samplers.alias import alias_slot
from samplers.kernels.poisson_grad import counts_and_grad, ratio_and_grad_at
from samplers.kernels.poisson_mh import poisson_counts_ratio
from samplers.kernels.tuna_mh import tuna_log_ratio
from samplers.methods.exact_mh import candidate_rows
from samplers.poisson_minibatch import (
    ALIAS_PREFETCH_MIN,
    RESOLVE_AHEAD,
    ROW_A,
    ROW_ALIAS,
    ROW_PROB,
    ROW_SHIFT,
    ROW_Y,
    SLOT_AHEAD,
    alias_for,
    draw_candidates,
    draw_from_rows,
    keep,
    keep_at,
    open_candidates,
    pipeline_counters,
    resolve_slot,
    stage_at,
    table_rows,
)
from samplers.streams import new_stream, uniform, uniform_at
from samplers.targets import tall

RTOL = 1e-12


def _targets(rng: np.random.Generator, N: int = 200) -> dict[str, tuple[tall.TallData, np.ndarray]]:
    """One small instance per kind with a theta inside its support."""
    Y, s2 = tall.make_truncated_gaussian_data(rng, N, 7)
    X, y = tall.make_regression_data(rng, N, 5)
    lab = (rng.random(N) < 0.5).astype(float)
    out = {
        "tg": (tall.truncated_gaussian(Y, s2, beta=0.3, K=3.0), 0.5 * rng.standard_normal(7)),
        "gauss": (tall.gaussian_location(Y, beta=0.7, box=4.0), 0.5 * rng.standard_normal(7)),
        "rlr": (tall.robust_regression(X, y, beta=0.2, nu=4.0, R=15.0), rng.standard_normal(5)),
        "logistic": (tall.logistic_regression(X, lab, R=5.0), 0.3 * rng.standard_normal(5)),
        "linreg": (tall.linear_regression_l1(X, y, 1.3, 0.0), rng.standard_normal(5)),
        "ica": (tall.ica(rng.standard_normal((N, 3))), np.eye(3).ravel() + 0.1 * rng.standard_normal(9)),
        "mixture": (tall.gaussian_mixture(tall.make_mixture_data(rng, N), box=3.0), np.array([0.2, 0.9])),
    }
    return out


@njit(cache=True)
def _ref_pairs(t, theta, theta_p):
    n = t.X.shape[0]
    out = np.empty((n, 2))
    for i in range(n):
        out[i, 0] = tall.loglik_i(t, i, theta)
        out[i, 1] = tall.loglik_i(t, i, theta_p)
    return out


@njit(cache=True)
def _fast_pairs(t, theta, theta_p):
    n = t.X.shape[0]
    out = np.empty((n, 2))
    for i in range(n):
        out[i, 0], out[i, 1] = H.ll_pair(t.kind, t.X, t.y, t.w, t.beta, t.nu, i, theta, theta_p)
    return out


@njit(cache=True)
def _ref_grads(t, theta, scale):
    n, d = t.X.shape[0], theta.shape[0]
    vals = np.empty(n)
    g = np.zeros((n, d))
    for i in range(n):
        vals[i] = tall.loglik_grad_i(t, i, theta, scale, g[i])
    return vals, g


@njit(cache=True)
def _fast_grads(t, theta, scale):
    n, d = t.X.shape[0], theta.shape[0]
    vals = np.empty(n)
    g = np.zeros((n, d))
    vals1 = np.empty(n)
    g2 = np.zeros((n, d))
    for i in range(n):
        vals[i] = H.ll_grad_one(t.kind, t.X, t.y, t.w, t.beta, t.nu, i, theta, scale, g[i])
        vals1[i] = H.ll_one(t.kind, t.X, t.y, t.w, t.beta, t.nu, i, theta)
        if t.kind == tall.RLR:
            r = H.one_dot(t.X, t.y[i], i, theta)
            H.add_row(t.X, i, scale * t.beta * (t.nu + 1.0) * r / (t.nu + r * r), g2[i])
    return vals, g, vals1, g2


@pytest.mark.parametrize("name", ["tg", "gauss", "rlr", "logistic", "linreg", "ica", "mixture"])
def test_fused_pair_equals_two_separate_evaluations(name):
    rng = np.random.default_rng(11)
    t, theta = _targets(rng)[name]
    theta_p = theta + 0.05 * rng.standard_normal(theta.shape[0])
    ref = _ref_pairs(t, theta, theta_p)
    fast = _fast_pairs(t, theta, theta_p)
    np.testing.assert_allclose(fast, ref, rtol=RTOL, atol=1e-300)
    # mutant: swapping the two points must be caught
    assert not np.allclose(fast[:, ::-1], ref, rtol=1e-6)


@pytest.mark.parametrize("name", ["tg", "gauss", "rlr", "logistic", "linreg", "ica", "mixture"])
def test_array_value_and_gradient_equal_loglik_grad_i(name):
    rng = np.random.default_rng(12)
    t, theta = _targets(rng)[name]
    vals, g = _ref_grads(t, theta, 0.37)
    fv, fg, fv1, fg2 = _fast_grads(t, theta, 0.37)
    np.testing.assert_array_equal(fv, vals)  # same arithmetic, no fastmath: bit-identical
    np.testing.assert_array_equal(fv1, vals)
    np.testing.assert_array_equal(fg, g)
    if name == "rlr":
        np.testing.assert_allclose(fg2, g, rtol=1e-10, atol=1e-14 * np.abs(g).max())
        assert not np.allclose(-fg2, g, rtol=1e-6)  # mutant: wrong sign is caught
    if name == "tg":
        one = np.array([H.one_quadratic(t.X, t.w, t.beta, i, theta) for i in range(t.X.shape[0])])
        np.testing.assert_allclose(one, vals, rtol=RTOL)


@njit(cache=True)
def _running(ratios, flush):
    s, p, n = 0.0, 1.0, 0
    for k in range(ratios.shape[0]):
        s, p, n = H.log_accumulate(s, p, n, ratios[k])
    if flush:
        return H.log_flush(s, p)
    return s


def test_running_product_log_equals_sum_of_logs():
    rng = np.random.default_rng(3)
    for lo, hi, n in [(0.56, 1.78, 10_000), (1e-3, 1e3, 5000), (0.999, 1.001, 777), (0.5, 2.0, 1)]:
        r = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
        ref = math.fsum(np.log(r))
        got = _running(r, True)
        assert abs(got - ref) <= RTOL * max(1.0, np.abs(np.log(r)).sum()), (lo, hi, got, ref)
    # extreme single ratios take the direct-log path (no overflow / underflow of the product)
    r = np.array([1e150, 3.0, 1e-160, 1e120, 1e120, 0.25, 1e-300])
    assert abs(_running(r, True) - math.fsum(np.log(r))) <= 1e-12 * np.abs(np.log(r)).sum()
    # mutant: forgetting the final flush is caught
    r = np.exp(rng.uniform(-0.5, 0.5, 45))
    assert abs(_running(r, False) - math.fsum(np.log(r))) > 1e-6


@njit(cache=True)
def _rowsum(X, idx, pf):
    s = 0.0
    for k in range(idx.shape[0]):
        if pf and k + 4 < idx.shape[0]:
            for j in range(0, X.shape[1], 8):
                H.prefetch2(X, idx[k + 4], j)
            H.prefetch2(X, idx[k + 4], X.shape[1] - 1)
            H.prefetch1(X[:, 0].copy(), 0)
        for j in range(X.shape[1]):
            s += X[idx[k], j]
    return s


def test_prefetch_is_semantically_a_no_op():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((5000, 20))
    idx = rng.integers(0, 5000, 3000)
    assert _rowsum(X, idx, True) == _rowsum(X, idx, False)


def _prefetch_localities(fn, *args) -> list[int]:
    """The locality argument of every ``llvm.prefetch`` call in ``fn``'s LLVM IR (fresh, uncached)."""
    f = njit(fn)
    f(*args)
    ir_text = f.inspect_llvm(f.signatures[0])
    pat = r"call void @llvm\.prefetch\.p0\(ptr [^,]+, i32 0, i32 (\d), i32 1\)"
    return [int(m) for m in re.findall(pat, ir_text)]


def test_prefetch_localities():
    """Candidate rows go to L2 (locality 2: x86 ``prefetcht1``, docs/performance.md §7.2), the other hints
    and the rows re-read at short distance (``prefetch_row(..., False)``) to L1 (3); a swapped constant or
    an ignored flag is caught."""
    X = np.zeros((40, 20))
    v = np.zeros(40)

    def rows_only(X, v):
        H.prefetch_row(X, 3)
        H.prefetch2_l2(X, 4, 0)

    def l1_only(X, v):
        H.prefetch2(X, 3, 0)
        H.prefetch1(v, 5)
        H.prefetch_row(X, 6, False)

    got_rows = _prefetch_localities(rows_only, X, v)
    got_l1 = _prefetch_localities(l1_only, X, v)
    assert len(got_rows) >= 4 and set(got_rows) == {H.L2_LOCALITY} and H.L2_LOCALITY == 2
    assert len(got_l1) >= 4 and set(got_l1) == {H.L1_LOCALITY} and H.L1_LOCALITY == 3


@njit(cache=True)
def _ref_draws(prob, alias, Lam, rng, out):
    B = rng.poisson(Lam)
    st = new_stream(rng)
    for b in range(B):
        out[b] = alias_slot(prob, alias, 0, prob.shape[0], uniform(st, b))
    return B


@pytest.mark.parametrize("n", [50, 3000, ALIAS_PREFETCH_MIN + 123])
def test_draw_candidates_same_stream_as_alias_slots(n):
    """draw_candidates (both paths) and draw_from_rows (the kernels' candidate pipeline without the
    evaluation; small and large tables) against a direct alias_slot loop."""
    rng = np.random.default_rng(5)
    w = rng.gamma(0.5, size=n) + 1e-3
    prob, alias = alias_for(w)
    r1, r2 = np.random.default_rng(9), np.random.default_rng(9)
    buf = np.empty(16, dtype=np.int64)  # too small: regrown
    ref = np.empty(100_000, dtype=np.int64)
    p = 3
    rows = table_rows(rng.standard_normal((n, p)), None, w, np.zeros(n))
    r3 = np.random.default_rng(9)
    buf3 = np.empty(16, dtype=np.int64)
    for Lam in (3000.0, 17.5, 0.0, 5000.0):
        B, buf, _ = draw_candidates(prob, alias, Lam, r1, buf)
        Br = _ref_draws(prob, alias, Lam, r2, ref)
        B3, buf3, _ = draw_from_rows(rows, p, Lam, r3, buf3)
        assert B == Br == B3
        np.testing.assert_array_equal(buf[:B], ref[:B])
        np.testing.assert_array_equal(buf3[:B], ref[:B])  # the table inside the rows: same draws
    assert r1.random() == r2.random() == r3.random()  # streams still aligned
    # mutant: a table of other weights in the rows gives other draws
    rows[:, p + ROW_PROB] = alias_for(w[::-1])[0]
    B3, buf3, _ = draw_from_rows(rows, p, 3000.0, np.random.default_rng(1), buf3)
    B, buf, _ = draw_candidates(prob, alias, 3000.0, np.random.default_rng(1), buf)
    assert not np.array_equal(buf3[:B3], buf[:B])


@njit(cache=True)
def _pipeline_draws(rows, X, pk, Lam, rng, buf, out, ahead, stage=SLOT_AHEAD):
    """The candidates of :func:`open_candidates` and the loop its docstring prescribes, in the order a
    kernel reads them; ``ahead`` = RESOLVE_AHEAD (a mutant resolves too late: ``ahead`` = 0 reads
    ``buf[b]`` before it is written; ``stage`` = SLOT_AHEAD + 1 stages each v one candidate late, so one
    entry is resolved from a v that was never stored)."""
    cp = X.shape[1] + ROW_PROB
    B, buf, fb, st = open_candidates(rows, cp, X, pk, Lam, rng, buf)
    zs, _, gam = pipeline_counters(st, B)
    n = rows.shape[0]
    for b in range(B):
        if b + stage < B:
            H.prefetch_row(rows, stage_at(fb, zs, b + stage, n))
        zs += gam
        if b + RESOLVE_AHEAD < B:
            ia = resolve_slot(rows, cp, fb, b + ahead)
            buf[b + ahead] = ia
            if not pk:
                H.prefetch_row(X, ia)
        out[b] = uint64(buf[b])  # the kernels read their datum unsigned
    return B, buf


@njit(cache=True)
def _carried_uniforms(st, B, n, shift):
    """The slot and coin uniforms a hot loop reads through carried counters (``pipeline_counters``,
    ``zs / zc += gamma`` per candidate), and the direct ones (``uniform(st, c)``); ``shift`` != 0 is a
    mutant that starts the slot counter at candidate SLOT_AHEAD + shift."""
    zs, zc, gam = pipeline_counters(st, B)
    zs += uint64(shift) * gam
    carried = np.empty((n, 3))
    direct = np.empty((n, 3))
    for b in range(n):
        carried[b, 0] = uniform_at(zs)
        carried[b, 1] = uniform_at(zc)
        carried[b, 2] = keep_at(zc, 0.3, 0.2, 0.5)
        direct[b, 0] = uniform(st, b + SLOT_AHEAD)
        direct[b, 1] = uniform(st, B + b)
        direct[b, 2] = keep(st, B, b, 0.3, 0.2, 0.5)
        zs += gam
        zc += gam
    return carried, direct


def test_carried_counters_give_the_stream_uniforms():
    """The counters the hot loops carry (one add per uniform) give exactly the stream's uniforms
    ``uniform(st, c)``: slot uniforms from candidate SLOT_AHEAD on, coins from uniform B on (counters wrap
    modulo 2^64 in both); ``keep_at`` at the carried counter is ``keep``. A counter started one
    candidate off is caught."""
    rng = np.random.default_rng(11)
    for _ in range(5):
        st = tuple(np.uint64(v) for v in new_stream(rng))  # as the kernels hold it: two uint64
        B = int(rng.integers(0, 10_000))
        carried, direct = _carried_uniforms(st, B, 3000, 0)
        np.testing.assert_array_equal(carried, direct)
        bad, _ = _carried_uniforms(st, B, 3000, 1)
        assert not np.array_equal(bad[:, 0], direct[:, 0])


@pytest.mark.parametrize("pk", [True, False])
@pytest.mark.parametrize("n", [50, 3000, ALIAS_PREFETCH_MIN + 123])
def test_candidate_pipeline_same_draws_as_alias_slots(n, pk):
    """The kernels' one-pass candidate pipeline gives the B, candidates (in order) and stream of a direct
    alias_slot loop on the same table,
    for B below, at and above the pipeline depths (Lam = 0, 3, 17.5, 3000) and rows with and without the
    data inside (``pk``); a mutant that resolves each candidate when it is read, not RESOLVE_AHEAD ahead,
    is caught (it reads stale entries of ``buf``), and so is one that stages a slot's v one candidate late."""
    rng = np.random.default_rng(5)
    w = rng.gamma(0.5, size=n) + 1e-3
    p = 3
    X = rng.standard_normal((n, p))
    rows = table_rows(X, None, w, np.zeros(n))
    prob, alias = alias_for(w)
    r1, r2 = np.random.default_rng(9), np.random.default_rng(9)
    ref = np.empty(100_000, dtype=np.int64)
    b2 = np.empty(4, dtype=np.int64)  # too small: regrown
    out = np.empty(100_000, dtype=np.int64)
    for Lam in (3000.0, 17.5, 0.0, 3.0, float(SLOT_AHEAD), 5000.0):
        B1 = _ref_draws(prob, alias, Lam, r1, ref)
        B2, b2 = _pipeline_draws(rows, X, pk, Lam, r2, b2, out, RESOLVE_AHEAD)
        assert B1 == B2
        np.testing.assert_array_equal(out[:B2], ref[:B1])
    assert r1.random() == r2.random()  # streams still aligned
    B1 = _ref_draws(prob, alias, 3000.0, np.random.default_rng(4), ref)
    B2, _ = _pipeline_draws(rows, X, pk, 3000.0, np.random.default_rng(4), b2.copy(), out, 0)
    assert B1 == B2 and not np.array_equal(out[:B2], ref[:B1])
    B2, _ = _pipeline_draws(
        rows, X, pk, 3000.0, np.random.default_rng(4), b2.copy(), out, RESOLVE_AHEAD, SLOT_AHEAD + 1
    )
    assert B1 == B2 and not np.array_equal(out[:B2], ref[:B1])
    # prob / alias columns outside the rows (e.g. the rows' width passed as p): a clear error, no garbage
    with pytest.raises(ValueError, match="outside the candidate rows"):
        open_candidates(rows, rows.shape[1] + ROW_PROB, X, pk, 10.0, np.random.default_rng(0), b2)


def test_table_rows_layout():
    """Whole 64-byte lines, 64-byte aligned; x, bound, shift, the alias table (alias exact as float64)
    and y (RLR only) in the ROW_* columns; TG d = 20 fits 3 lines, RLR d = 10 fits 2."""
    rng = np.random.default_rng(2)
    Y, s2 = tall.make_truncated_gaussian_data(rng, 500, 20)
    t = tall.truncated_gaussian(Y, s2, beta=1e-3)
    X, y = tall.make_regression_data(rng, 500, 10)
    r = tall.robust_regression(X, y, beta=0.2, nu=4.0, R=15.0)
    for m, a, width in ((t, t.M, 24), (t, t.c, 24), (r, r.M, 16)):
        rows = candidate_rows(m, a)
        p = m.X.shape[1]
        assert rows.shape == (500, width) and rows.ctypes.data % 64 == 0 and rows.flags.c_contiguous
        prob, alias = alias_for(a)
        np.testing.assert_array_equal(rows[:, :p], m.X)
        np.testing.assert_array_equal(rows[:, p + ROW_A], a)
        np.testing.assert_array_equal(rows[:, p + ROW_SHIFT], m.shift)
        np.testing.assert_array_equal(rows[:, p + ROW_PROB], prob)
        np.testing.assert_array_equal(rows[:, p + ROW_ALIAS].astype(np.int64), alias)
        if m.kind == tall.RLR:
            np.testing.assert_array_equal(rows[:, p + ROW_Y], m.y)
    with pytest.raises(ValueError, match="non-negative"):
        table_rows(X, None, -np.ones(500), np.zeros(500))
    # >= 2 MB: the huge-page path (2 MB-aligned on Linux), same layout, writable, zeros in the padding
    Yb, s2b = tall.make_truncated_gaussian_data(rng, 20_000, 20)
    tb = tall.truncated_gaussian(Yb, s2b, beta=1e-3)
    big = candidate_rows(tb, tb.M)
    assert big.shape == (20_000, 24) and big.flags.c_contiguous and big.flags.writeable
    assert big.ctypes.data % 64 == 0
    if hasattr(mmap, "MADV_HUGEPAGE"):
        assert big.ctypes.data % (2 << 20) == 0
    np.testing.assert_array_equal(big[:, :20], tb.X)
    np.testing.assert_array_equal(big[:, 20 + ROW_PROB], alias_for(tb.M)[0])


# ----------------------------------------------------------------------------- kernel fast paths
@njit(cache=True)
def _ref_poisson_mh(t, theta, theta_p, a_scale, prob, alias, Lam, rng, buf):
    """The original (pre-optimisation) fused PoissonMH pass: generic phi_i, keep coin, one log each."""
    B = rng.poisson(Lam)
    st = new_stream(rng)
    for b in range(B):
        buf[b] = alias_slot(prob, alias, 0, prob.shape[0], uniform(st, b))
    s = 0.0
    nk = 0
    for b in range(B):
        i = buf[b]
        ph = min(max(tall.phi_i(t, i, theta), 0.0), t.M[i])
        php = min(max(tall.phi_i(t, i, theta_p), 0.0), t.M[i])
        a = a_scale * t.M[i]
        if uniform(st, B + b) * (a + t.M[i]) < a + ph:
            s += np.log((a + php) / (a + ph))
            nk += 1
    return s, B, nk


def _target_for(rng, name: str, N: int):
    """``_targets(rng, N)[name]``; above 1000 data the TG with paper-style tempering N beta = 1 (keeps L,
    hence B, moderate) so that the alias table is large enough for draw_candidates' two-pass prefetching
    draw."""
    if N <= 1000:
        return _targets(rng, N)[name]
    Y, s2 = tall.make_truncated_gaussian_data(rng, N, 20)
    return tall.truncated_gaussian(Y, s2, beta=1.0 / N, K=3.0), 0.1 * rng.standard_normal(20)


@pytest.mark.parametrize(
    "name,N",
    [("tg", 300), ("rlr", 300), ("logistic", 300), ("mixture", 300), ("tg", ALIAS_PREFETCH_MIN + 10)],
)
def test_poisson_counts_ratio_matches_reference(name, N):
    rng = np.random.default_rng(6)
    t, theta = _target_for(rng, name, N)
    L = float(t.M.sum())
    lam = max(3000.0 - L, 0.2 * L)
    assert lam + L < 1e5, L
    prob, alias = alias_for(t.M)
    rows = candidate_rows(t, t.M)
    err = np.zeros(2, dtype=np.int64)
    for rep in range(5):
        theta_p = theta + 0.02 * rng.standard_normal(theta.shape[0])
        r1, r2 = np.random.default_rng(rep), np.random.default_rng(rep)
        s, B, nk, _ = poisson_counts_ratio(
            t, theta, theta_p, lam / L, rows, lam + L, r1, np.empty(8, dtype=np.int64), err
        )
        sr, Br, nkr = _ref_poisson_mh(
            t, theta, theta_p, lam / L, prob, alias, lam + L, r2, np.empty(200_000, dtype=np.int64)
        )
        assert err[0] == 0 and (B, nk) == (Br, nkr) and B > 0
        assert abs(s - sr) <= 1e-10 * max(1.0, abs(sr)), (s, sr)
        assert not abs(-s - sr) <= 1e-10 * max(1.0, abs(sr)) or sr == 0.0  # mutant: sign flip caught


@njit(cache=True)
def _ref_tuna(t, theta, theta_p, chi, C, prob, alias, rng, buf):
    s2 = 0.0
    for j in range(theta.shape[0]):
        s2 += (theta_p[j] - theta[j]) ** 2
    Md = math.sqrt(s2)
    lam = chi * C * C * Md * Md
    B = rng.poisson(lam + C * Md)
    st = new_stream(rng)
    for b in range(B):
        buf[b] = alias_slot(prob, alias, 0, prob.shape[0], uniform(st, b))
    s = 0.0
    nk = 0
    for b in range(B):
        i = buf[b]
        cm = t.c[i] * Md
        du = tall.loglik_i(t, i, theta) - tall.loglik_i(t, i, theta_p)
        ph = min(max(0.5 * du + 0.5 * cm, 0.0), cm)
        a = lam * t.c[i] / C
        if uniform(st, B + b) * (a + cm) < a + ph:
            s += math.log((a + cm - ph) / (a + ph))
            nk += 1
    return s, B, nk


@pytest.mark.parametrize(
    "name,N", [("tg", 400), ("rlr", 400), ("logistic", 400), ("tg", ALIAS_PREFETCH_MIN + 10)]
)
def test_tuna_log_ratio_matches_reference(name, N):
    rng = np.random.default_rng(7)
    t, theta = _target_for(rng, name, N)
    C = float(t.c.sum())
    prob, alias = alias_for(t.c)
    rows = candidate_rows(t, t.c)
    err = np.zeros(2, dtype=np.int64)
    chi = 50.0 / C**2
    for rep in range(5):
        theta_p = theta + 0.05 * rng.standard_normal(theta.shape[0])
        r1, r2 = np.random.default_rng(rep), np.random.default_rng(rep)
        s, B, nk, _, kept = tuna_log_ratio(
            t,
            theta,
            theta_p,
            chi,
            C,
            rows,
            r1,
            np.empty(4, dtype=np.int64),
            np.empty(4, dtype=np.int64),
            err,
        )
        sr, Br, nkr = _ref_tuna(t, theta, theta_p, chi, C, prob, alias, r2, np.empty(100_000, dtype=np.int64))
        assert err[0] == 0 and (B, nk) == (Br, nkr) and B > 0
        assert abs(s - sr) <= 1e-10 * max(1.0, abs(sr))


@njit(cache=True)
def _ref_counts_grad(t, theta, theta_p, a_scale, prob, alias, Lam, rng, buf):
    d = theta.shape[0]
    B = rng.poisson(Lam)
    st = new_stream(rng)
    for b in range(B):
        buf[b] = alias_slot(prob, alias, 0, prob.shape[0], uniform(st, b))
    g = np.zeros(d)
    tall.log_prior_grad(t, theta, g)
    g_p = np.zeros(d)
    tall.log_prior_grad(t, theta_p, g_p)
    tmp = np.zeros(d)
    s = 0.0
    nk = 0
    for b in range(B):
        i = buf[b]
        tmp[:] = 0.0
        ph = min(max(tall.loglik_grad_i(t, i, theta, 1.0, tmp) + t.shift[i], 0.0), t.M[i])
        a = a_scale * t.M[i]
        if uniform(st, B + b) * (a + t.M[i]) < a + ph:
            nk += 1
            g += tmp / (a + ph)
            tmp[:] = 0.0
            php = min(max(tall.loglik_grad_i(t, i, theta_p, 1.0, tmp) + t.shift[i], 0.0), t.M[i])
            g_p += tmp / (a + php)
            s += math.log((a + php) / (a + ph))
    return s, B, nk, g, g_p


@pytest.mark.parametrize(
    "name,N",
    [("tg", 300), ("rlr", 300), ("logistic", 300), ("mixture", 300), ("tg", ALIAS_PREFETCH_MIN + 10)],
)
def test_poisson_grad_passes_match_reference(name, N):
    rng = np.random.default_rng(8)
    t, theta = _target_for(rng, name, N)
    d = theta.shape[0]
    L = float(t.M.sum())
    lam = max(3000.0 - L, 0.2 * L)
    assert lam + L < 1e5, L
    prob, alias = alias_for(t.M)
    rows = candidate_rows(t, t.M)
    err = np.zeros(2, dtype=np.int64)
    for rep in range(4):
        theta_p = theta + 0.02 * rng.standard_normal(d)
        r1, r2 = np.random.default_rng(rep), np.random.default_rng(rep)
        g, g_p, tmp = np.zeros(d), np.zeros(d), np.zeros(d)
        B, nk, _, ki, kr = counts_and_grad(
            t,
            theta,
            lam / L,
            rows,
            lam + L,
            r1,
            np.empty(4, dtype=np.int64),
            np.empty(4, dtype=np.int64),
            np.empty(4),
            g,
            tmp,
            err,
        )
        s = ratio_and_grad_at(t, rows, theta_p, lam / L, ki, kr, nk, g_p, tmp, err)
        sr, Br, nkr, gr, gpr = _ref_counts_grad(
            t, theta, theta_p, lam / L, prob, alias, lam + L, r2, np.empty(100_000, dtype=np.int64)
        )
        assert err[0] == 0 and (B, nk) == (Br, nkr) and B > 0
        assert abs(s - sr) <= 1e-10 * max(1.0, abs(sr))
        scale = max(np.abs(gr).max(), 1e-300)
        np.testing.assert_allclose(g, gr, rtol=1e-9, atol=1e-12 * scale)
        np.testing.assert_allclose(g_p, gpr, rtol=1e-9, atol=1e-12 * scale)
        assert not np.allclose(g_p, gr, rtol=1e-6)  # mutant: gradient at the wrong point is caught


def test_tuna_differences_are_accurate_for_close_points():
    """TunaMH's U_i(theta') - U_i(theta) (docs/performance.md §7.6): the factorised forms against exact
    rational arithmetic, theta' = theta + 1e-9 xi. TG: sum_j w_j [(theta - x)^2 - (theta' - x)^2]; RLR:
    r(theta)^2 - r(theta')^2 = e (e - 2 r1). Both within 1e-12 relative (measured 2e-14 / 7e-16); the
    naive difference of the two sums (the mutant, as the pair helpers compute it) is off by 3e-5 here."""
    from fractions import Fraction as F

    rng = np.random.default_rng(5)
    d = 20
    X = rng.normal(2.0, 1.0, (50, d))
    yv = rng.normal(0.0, 3.0, 50)
    w = rng.uniform(0.5, 2.0, d)
    theta = rng.normal(2.0, 0.5, d)
    theta_p = theta + 1e-9 * rng.standard_normal(d)
    v = w * (theta - theta_p)
    sp = theta + theta_p
    u = theta - theta_p
    worst_tg = worst_rlr = worst_naive = 0.0
    for i in range(X.shape[0]):
        xs, ts, tps = ([F(float(a)) for a in z] for z in (X[i], theta, theta_p))
        exact = sum(F(float(w[j])) * ((ts[j] - xs[j]) ** 2 - (tps[j] - xs[j]) ** 2) for j in range(d))
        got = H.quadratic_diff(X, v, sp, i)
        worst_tg = max(worst_tg, abs(float((F(got) - exact) / exact)))
        s0, s1 = H.pair_quadratic(X, w, 1.0, i, theta, theta_p)  # = -1/2 the two sums
        worst_naive = max(worst_naive, abs(float((F(-2.0 * s0) - F(-2.0 * s1) - exact) / exact)))
        r0 = F(float(yv[i])) - sum(ts[j] * xs[j] for j in range(d))
        r1x = F(float(yv[i])) - sum(tps[j] * xs[j] for j in range(d))
        exact_r = r0 * r0 - r1x * r1x
        z1, e = H.pair_z(X, i, theta_p, u)  # as TunaMH's RLR branch
        r1 = float(yv[i]) - z1
        worst_rlr = max(worst_rlr, abs(float((F(e * (e - 2.0 * r1)) - exact_r) / exact_r)))
    assert worst_tg < 1e-12 and worst_rlr < 1e-12, (worst_tg, worst_rlr)
    assert worst_naive > 1e-9, worst_naive  # the cancellation the factorisation avoids


def test_log1pexp_difference_is_accurate():
    """TunaMH's logistic difference f(b + dl) - f(b), f(z) = log(1 + e^z), with one log (docs/performance.md
    §7.6) against 60-digit decimal arithmetic over b in [-40, 40] and dl from 1e-9 to 35 (the last past the
    direct fallback at |dl| > 30): relative error < 1e-12. The direct difference of the two logs (mutant) is
    off by far more for small dl; ``pair_z(X, i, theta', theta - theta')`` gives TunaMH (z', z - z')."""
    from decimal import Decimal, getcontext

    getcontext().prec = 60

    def exact(b: float, dl: float) -> float:
        one = Decimal(1)
        return float((one + (Decimal(b) + Decimal(dl)).exp()).ln() - (one + Decimal(b).exp()).ln())

    worst = worst_naive = 0.0
    for b in np.linspace(-40.0, 40.0, 41):
        for dl in (1e-9, -1e-9, 1e-4, -3e-3, 0.7, -1.3, 25.0, -28.0, 35.0, -35.0):
            want = exact(float(b), dl)
            worst = max(worst, abs(H.log1pexp_diff(float(b), dl) - want) / abs(want))
            naive = tall._log1pexp(float(b) + dl) - tall._log1pexp(float(b))
            worst_naive = max(worst_naive, abs(naive - want) / abs(want))
    assert worst < 1e-12, worst
    assert worst_naive > 1e-6, worst_naive
    rng = np.random.default_rng(2)
    X = rng.standard_normal((3, 7))
    th, tp = rng.standard_normal(7), rng.standard_normal(7)
    z1, e = H.pair_z(X, 1, tp, th - tp)
    assert z1 == pytest.approx(X[1] @ tp, rel=1e-12) and e == pytest.approx(X[1] @ (th - tp), rel=1e-12)


def _no_refcount_cores() -> list:
    """Every jitted function of ``samplers`` compiled without reference counting (``H.NO_REFCOUNT``)."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    found = {}
    for m in pkgutil.walk_packages(samplers.__path__, "samplers."):
        mod = importlib.import_module(m.name)
        for obj in vars(mod).values():
            if isinstance(obj, CPUDispatcher) and obj.targetoptions.get("_nrt") is False:
                found[obj.py_func.__qualname__ + "@" + obj.py_func.__module__] = obj
    return list(found.values())


def _returns_array(disp) -> bool:
    """Whether a compiled signature of ``disp`` returns an array, alone or inside a tuple."""
    from numba.core import types

    def has(ty) -> bool:
        if isinstance(ty, types.Array):
            return True
        return isinstance(ty, types.BaseTuple) and any(has(t) for t in ty.types)

    return any(has(sig.return_type) for sig in disp.nopython_signatures)


def _nrt_balance(fn) -> tuple[int, int]:
    """(allocations - frees, meminfos created - released) by Numba's runtime while ``fn()`` runs and its
    results are dropped."""
    import gc

    from numba.core.runtime import _nrt_python, rtsys

    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        gc.collect()
        a = rtsys.get_allocation_stats()
        fn()
        gc.collect()
        b = rtsys.get_allocation_stats()
    finally:
        if not was:
            _nrt_python.memsys_disable_stats()
    return (b.alloc - a.alloc) - (b.free - a.free), (b.mi_alloc - a.mi_alloc) - (b.mi_free - a.mi_free)


@njit(cache=True, _nrt=True)
def _fresh_array(n):
    return np.zeros(n)


def test_no_refcount_cores():
    """The cores compiled without reference counting (docs/performance.md §7.5) return no array, and a TunaMH
    ratio that regrows its buffers, then a whole chain, leak and double-free nothing in Numba's runtime.
    Both checks are shown to catch a broken core: one returning its (borrowed) argument, one keeping a fresh
    array it was handed by a reference-counted helper."""
    from samplers.kernels.tuna_mh import tuna_mh_sample, tuna_ratio_core

    rng = np.random.default_rng(3)
    t, theta = _target_for(rng, "tg", 400)
    C = float(t.c.sum())
    rows = candidate_rows(t, t.c)
    err = np.zeros(2, dtype=np.int64)

    def ratios():
        for _ in range(20):
            theta_p = theta + 0.05 * rng.standard_normal(theta.shape[0])
            small = np.empty(1, dtype=np.int64), np.empty(1, dtype=np.int64)
            out = tuna_log_ratio(t, theta, theta_p, 50.0 / C**2, C, rows, rng, *small, err)
            assert out[1] > 1 and out[3].shape[0] > 1  # B drawn, buffers regrown
            assert err[0] == 0

    def chain():
        lp = np.array([tall.log_prior(t, theta)])
        small = np.empty(1, dtype=np.int64), np.empty(1, dtype=np.int64)
        out = tuna_mh_sample(
            t, theta.copy(), lp, err, *small, 300, rows, 50.0 / C**2, C, 0, 0.05, 0.0, 0, rng, 1
        )
        assert out[2].max() > 1 and err[0] == 0

    assert _nrt_balance(ratios) == (0, 0)
    assert _nrt_balance(chain) == (0, 0)
    # the regrow protocol called directly (each core needs such a call here: a core loaded as part of a
    # caller's cache has no signature of its own to check): too small -> (0, B, -1); again with B -> the draw
    theta_p = theta + 0.05 * rng.standard_normal(theta.shape[0])
    args = (t.kind, t.X, t.y, t.w, t.beta, t.nu, theta, theta_p, 50.0 / C**2, C, rows)
    r1, r2 = np.random.default_rng(5), np.random.default_rng(5)
    tiny = np.empty(1, dtype=np.int64)
    s0, B0, nk0 = tuna_ratio_core(*args, r1, tiny, tiny, err, -1)
    assert (s0, nk0) == (0.0, -1) and B0 > 1
    big = [np.empty(4 * B0 + 100, dtype=np.int64) for _ in range(4)]
    continued = tuna_ratio_core(*args, r1, big[0], big[1], err, B0)
    assert continued == tuna_ratio_core(*args, r2, big[2], big[3], err, -1)
    # the sequential t-test core of the approximate tests (samplers.approx.seqtest), through its caller and
    # directly: balanced, and the same answer from the same stream
    from samplers.approx.seqtest import _ttest_core, seq_ttest, tcrit_table
    from samplers.streams import new_stream

    N = t.X.shape[0]
    tc = tcrit_table(N, 0.05)
    theta_p = theta + 0.01 * rng.standard_normal(theta.shape[0])
    perms = [np.arange(N) for _ in range(2)]
    r1, r2 = np.random.default_rng(7), np.random.default_rng(7)
    assert _nrt_balance(lambda: seq_ttest(t, theta, theta_p, 0.0, perms[0], 40, tc, r1)) == (0, 0)
    r1 = np.random.default_rng(7)
    via = seq_ttest(t, theta, theta_p, 0.0, np.arange(N), 40, tc, r1)
    seed, gamma = new_stream(r2)
    arrays = (t.kind, t.X, t.y, t.w, t.beta, t.nu, t.ops)
    direct = _ttest_core(*arrays, theta, theta_p, 0.0, perms[1], 40, tc, seed, gamma)
    assert via == direct
    # the full-data pass of AustereMH(nc) / MHSubLhd / exact RJMCMC: balanced, and the caller's answer
    from samplers.approx.seqtest import _full_pass_core, full_pass_stats

    assert _nrt_balance(lambda: full_pass_stats(t, theta, theta_p)) == (0, 0)
    assert full_pass_stats(t, theta, theta_p) == _full_pass_core(*arrays, theta, theta_p)
    cores = _no_refcount_cores()
    assert tuna_ratio_core in cores
    for core in cores:
        assert core.nopython_signatures, f"{core}: call it in this test so that its signature is checked"
        assert not _returns_array(core), core

    @njit(**H.NO_REFCOUNT)
    def returns_its_argument(a):
        return a

    returns_its_argument.compile("float64[:](float64[:])")  # compiled only: calling it would corrupt
    assert _returns_array(returns_its_argument)

    @njit(**H.NO_REFCOUNT)
    def keeps_a_fresh_array(n):
        return _fresh_array(n)[0]

    assert _nrt_balance(lambda: keeps_a_fresh_array(5)) != (0, 0)
