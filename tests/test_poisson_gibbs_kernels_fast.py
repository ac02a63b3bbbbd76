"""The optimised discrete kernels (inlined factor helpers, ``factor_slice``, no slices in the hot loop,
fused steps) against plain reference implementations written from the definitions (Zhang & De Sa 2019
Alg. 2/4; De Sa et al. 2018 as reconstructed in samplers/kernels). The optimisations must not
change a single draw: chains are compared bit for bit with the same random stream. Exact
(deterministic) comparisons -- no false alarms; each is shown to fail on a deliberately broken
reference (mutant)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from samplers import registry as R
from samplers.kernels import gibbs as G
from samplers.kernels import mgpmh as MG
from samplers.kernels import poisson_gibbs as PG
from samplers.methods.poisson_gibbs import global_tables
from samplers.poisson_minibatch import draw_candidates
from samplers.streams import uniform
from samplers.targets import factor_graph as fgm
from samplers.targets.factor_graph import factor_value, factor_value_at, sample_logits


# ----------------------------------------------------------------------------- reference kernels
@njit(cache=True)
def _ref_pg_chain(fg, x, prob, alias, Lam, arate, n_iter, rng, no_mult):
    """Alg. 2 + Alg. 4 by direct composition of the shared pieces (``draw_candidates`` on slices,
    phi evaluated for every candidate, the ``keep`` coin, ``factor_value_at`` per value,
    ``sample_logits``). ``no_mult`` = a broken variant (drops the multiplicity s_f)."""
    deg = np.max(fg.var_ptr[1:] - fg.var_ptr[:-1])
    cnt = np.zeros(deg, dtype=np.int64)
    order = np.zeros(deg, dtype=np.int64)
    buf = np.empty(16, dtype=np.int64)
    logits = np.zeros(fg.card.max())
    out = np.empty((n_iter, fg.n), dtype=np.int64)
    nev = np.empty(n_iter, dtype=np.int64)
    for it in range(n_iter):
        i = rng.integers(0, fg.n)
        p0, p1 = fg.var_ptr[i], fg.var_ptr[i + 1]
        B, buf, st = draw_candidates(prob[p0:p1], alias[p0:p1], Lam[i], rng, buf)
        nt = 0
        nphi = 0
        for b in range(B):
            f = fg.var_fac[p0 + buf[b]]
            phi = factor_value(fg, f, x)
            u = uniform(st, B + b)  # the coin of samplers.poisson_minibatch.keep, written out
            a, M = arate[f], fg.M[f]
            if u * (a + M) >= a:  # the kernel needs phi only when u alone does not decide
                nphi += 1
            if u * (a + M) < a + phi:
                if cnt[buf[b]] == 0:  # first-touch order = the kernel's summation order
                    order[nt] = buf[b]
                    nt += 1
                cnt[buf[b]] += 1
        D = fg.card[i]
        logits[:] = 0.0
        for t in range(nt):
            k = order[t]
            f = fg.var_fac[p0 + k]
            c = 1 if no_mult else cnt[k]
            for v in range(D):
                logits[v] += c * math.log1p(factor_value_at(fg, f, x, i, v) / arate[f])
            cnt[k] = 0
        x[i] = sample_logits(logits, D, rng.random())
        out[it] = x
        nev[it] = nphi + D * nt
    return out, nev


@njit(cache=True)
def _ref_mgpmh_chain(fg, x, prob, alias, Lam, arate, n_iter, rng, broken):
    """MGPMH (reconstruction in samplers/kernels/mgpmh.py) written factor by factor in the order the
    kernel visits them; ``broken`` drops the current value's term from the exact Delta."""
    deg = np.max(fg.var_ptr[1:] - fg.var_ptr[:-1])
    cnt = np.zeros(deg, dtype=np.int64)
    order = np.zeros(deg, dtype=np.int64)
    buf = np.empty(16, dtype=np.int64)
    logits = np.zeros(fg.card.max())
    out = np.empty((n_iter, fg.n), dtype=np.int64)
    for it in range(n_iter):
        i = rng.integers(0, fg.n)
        p0, p1 = fg.var_ptr[i], fg.var_ptr[i + 1]
        B, buf, _ = draw_candidates(prob[p0:p1], alias[p0:p1], Lam[i], rng, buf)
        nt = 0
        for b in range(B):  # first-touch order = the kernel's summation order
            if cnt[buf[b]] == 0:
                order[nt] = buf[b]
                nt += 1
            cnt[buf[b]] += 1
        D = fg.card[i]
        logits[:] = 0.0
        for t in range(nt):
            k = order[t]
            f = fg.var_fac[p0 + k]
            for v in range(D):
                logits[v] += cnt[k] / arate[f] * factor_value_at(fg, f, x, i, v)
            cnt[k] = 0
        xi = x[i]
        v = sample_logits(logits, D, rng.random())
        if v != xi:
            dU = 0.0
            for k in range(p0, p1):
                f = fg.var_fac[k]
                dU += factor_value_at(fg, f, x, i, v) - (0.0 if broken else factor_value_at(fg, f, x, i, xi))
            logr = dU + logits[xi] - logits[v]
            if logr >= 0.0 or rng.random() < np.exp(logr):
                x[i] = v
        out[it] = x
    return out


def _random_graph(seed: int) -> fgm.FactorGraph:
    """Mixed cardinalities, unary/pairwise/ternary table factors, some entries exactly at 0 and M."""
    rng = np.random.default_rng(seed)
    card = [2, 3, 4, 3, 2]
    factors = []
    for vs in [(0,), (1, 2), (2, 0), (3, 1, 4), (4, 2), (0, 3), (2, 3, 0), (1,)]:
        tab = rng.exponential(1.0, size=tuple(card[v] for v in vs))
        tab[rng.random(tab.shape) < 0.3] = 0.0
        factors.append((vs, tab))
    return fgm.from_tables(card, factors)


GRAPHS = {
    "random": lambda: _random_graph(3),
    "potts_tiny": lambda: R.build_problem("potts_tiny", 0).model,
    "potts_6x6": lambda: R.build_problem("potts_20x20", 0, rows=6, cols=6, start="random").model,
    # >= PG.PREFETCH_MIN_FACTORS factors: the prefetching branch of the kernel
    "potts_14x14": lambda: R.build_problem("potts_20x20", 0, rows=14, cols=14).model,
}


# ----------------------------------------------------------------------------- factor_slice
def test_factor_slice_matches_factor_value_at():
    fg = _random_graph(1)
    rng = np.random.default_rng(0)
    for _ in range(50):
        x = np.array([rng.integers(0, c) for c in fg.card], dtype=np.int64)
        for f in range(fg.M.shape[0]):
            vs = fg.fac_vars[fg.fac_ptr[f] : fg.fac_ptr[f + 1]]
            for i in range(fg.n):
                base, stride = fgm.factor_slice(fg, f, x, i)
                if i not in vs:
                    assert stride == 0 and fg.tables[base] == factor_value(fg, f, x)
                    continue
                for v in range(fg.card[i]):
                    assert fg.tables[base + v * stride] == factor_value_at(fg, f, x, i, v)


def test_conditional_logits_is_the_factor_sum():
    fg = _random_graph(2)
    x = np.array([1, 2, 3, 0, 1], dtype=np.int64)
    for i in range(fg.n):
        out = np.zeros(4)
        ne = fgm.conditional_logits(fg, x, i, out)
        A = fg.var_fac[fg.var_ptr[i] : fg.var_ptr[i + 1]]
        ref = [sum(factor_value_at(fg, f, x, i, v) for f in A) for v in range(fg.card[i])]
        np.testing.assert_allclose(out[: fg.card[i]], ref, rtol=1e-14, atol=0)
        assert ne == fg.card[i] * len(A)


def test_sample_softmax_inplace_equals_sample_logits():
    rng = np.random.default_rng(5)
    for _ in range(2000):
        D = int(rng.integers(1, 12))
        lg = rng.normal(0, 3, 12)
        u = rng.random()
        ref = sample_logits(lg.copy(), D, u)
        assert PG.sample_softmax_inplace(lg.copy(), D, u) == ref
    # broken variant: the draw at the complementary uniform differs somewhere
    lg = np.array([0.0, 1.0, 2.0])
    assert PG.sample_softmax_inplace(lg.copy(), 3, 0.1) != sample_logits(lg.copy(), 3, 0.9)


# ----------------------------------------------------------------------------- chains bit for bit
def _pg_chains(fg, lam_L2: float, no_mult: bool, n: int = 3000, seed: int = 11):
    L = PG.local_max_energy(fg)
    prob, alias, Lam, arate, bufsize = PG.poisson_gibbs_tables(fg, lam_L2 * L * L, L)
    x0 = np.zeros(fg.n, dtype=np.int64)
    st = PG.poisson_gibbs_init(fg, x0, prob, alias, Lam, arate, bufsize)
    fast = PG.poisson_gibbs_sample(fg, *st, n, 0, np.random.default_rng(seed), 1)
    ref = _ref_pg_chain(fg, x0.copy(), prob, alias, Lam, arate, n, np.random.default_rng(seed), no_mult)
    return fast, ref


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("lam_L2", [0.1, 1.0, 20.0])
def test_poisson_gibbs_fast_equals_reference(graph, lam_L2):
    fg = GRAPHS[graph]()
    assert (fg.M.shape[0] >= PG.PREFETCH_MIN_FACTORS) == (graph == "potts_14x14")
    fast, (ref_x, ref_nev) = _pg_chains(fg, lam_L2, False)
    np.testing.assert_array_equal(fast[0], ref_x)
    np.testing.assert_array_equal(fast[2], ref_nev)


@pytest.mark.parametrize("graph", ["random", "potts_6x6"])
def test_poisson_gibbs_reference_mutant_detected(graph):
    fast, (ref_x, _) = _pg_chains(GRAPHS[graph](), 1.0, True)
    assert not np.array_equal(fast[0], ref_x)


def test_poisson_gibbs_step_equals_sample_loop():
    """The exported step (used by verify and the experiments) = the fused chain loop."""
    fg = GRAPHS["random"]()
    prob, alias, Lam, arate, bufsize = PG.poisson_gibbs_tables(fg, 3.0)
    x0 = np.zeros(fg.n, dtype=np.int64)
    st = PG.poisson_gibbs_init(fg, x0, prob, alias, Lam, arate, bufsize)
    fast = PG.poisson_gibbs_sample(fg, *st, 500, 0, np.random.default_rng(4), 1)
    x, prob, alias, Lam, arate, buf, cnt, touched, logits = PG.poisson_gibbs_init(
        fg, x0, prob, alias, Lam, arate, bufsize
    )
    rng = np.random.default_rng(4)
    for t in range(500):
        ne, B, kept, buf = PG.poisson_gibbs_step(
            fg, x, prob, alias, Lam, arate, buf, cnt, touched, logits, rng.integers(0, fg.n), rng, 0
        )
        assert np.array_equal(x, fast[0][t]) and ne == fast[2][t] and B == fast[3][t]
        assert kept == fast[4][t]


def test_poisson_gibbs_many_repeats_of_few_factors():
    """Huge lambda on a variable with a single factor: B >> deg, the candidate buffer regrows and the
    touched list stays in bounds (deg + 1 slots); still equal to the reference."""
    fg = fgm.from_tables([3, 3], [((0, 1), np.arange(9.0).reshape(3, 3))])
    fast, (ref_x, ref_nev) = _pg_chains(fg, 400.0, False, n=300)
    np.testing.assert_array_equal(fast[0], ref_x)
    np.testing.assert_array_equal(fast[2], ref_nev)
    assert fast[3].max() > 100


@pytest.mark.parametrize("broken", [False, True])
@pytest.mark.parametrize("graph", ["random", "potts_6x6"])
def test_mgpmh_fast_equals_reference(graph, broken):
    fg = GRAPHS[graph]()
    L = PG.local_max_energy(fg)
    prob, alias, Msum = PG.build_local_tables(fg, 1.0)
    lam = 2.0 * L * L
    Lam, arate = lam * Msum / L, lam * fg.M / L
    x0 = np.zeros(fg.n, dtype=np.int64)
    st = MG.mgpmh_init(fg, x0, prob, alias, Lam, arate, 64)
    fast = MG.mgpmh_sample(fg, *st, 3000, 0, np.random.default_rng(8), 1)
    ref = _ref_mgpmh_chain(fg, x0.copy(), prob, alias, Lam, arate, 3000, np.random.default_rng(8), broken)
    assert np.array_equal(fast[0], ref) != broken


def test_min_gibbs_estimate_equals_direct_sum():
    """global_estimate (log1p skipped at phi = 0) = the direct sum over the same global draws."""
    from samplers.alias import alias_draw
    from samplers.kernels.min_gibbs import global_estimate

    @njit
    def direct(fg, x, i, u, gprob, galias, glam, grate, rng):
        B = rng.poisson(glam)
        e = 0.0
        for _ in range(B):
            f = alias_draw(gprob, galias, rng)
            e += math.log1p(factor_value_at(fg, f, x, i, u) / grate[f])
        return e, B

    fg = GRAPHS["potts_6x6"]()
    gprob, galias, grate, _ = global_tables(fg, 200.0)
    x = np.random.default_rng(0).integers(0, 10, fg.n).astype(np.int64)
    for s in range(20):
        a = global_estimate(fg, x, s, s % 10, gprob, galias, 200.0, grate, np.random.default_rng(s))
        b = direct(fg, x, s, s % 10, gprob, galias, 200.0, grate, np.random.default_rng(s))
        assert a == b
    c = direct(fg, x, 0, 1, gprob, galias, 200.0, grate * 1.01, np.random.default_rng(0))
    assert c != global_estimate(fg, x, 0, 1, gprob, galias, 200.0, grate, np.random.default_rng(0))


def test_gibbs_unchanged_by_factor_slice():
    """gibbs_sample (conditional_logits via factor_slice) = logits summed factor_value_at by
    factor_value_at, on the same stream."""
    fg = GRAPHS["random"]()

    @njit
    def ref(fg, x, n, rng):
        out = np.empty((n, fg.n), dtype=np.int64)
        lg = np.zeros(fg.card.max())
        for t in range(n):
            i = rng.integers(0, fg.n)
            lg[:] = 0.0
            for k in range(fg.var_ptr[i], fg.var_ptr[i + 1]):
                for v in range(fg.card[i]):
                    lg[v] += factor_value_at(fg, fg.var_fac[k], x, i, v)
            x[i] = sample_logits(lg, fg.card[i], rng.random())
            out[t] = x
        return out

    x0 = np.zeros(fg.n, dtype=np.int64)
    x, c = G.gibbs_init(fg, x0)
    fast = G.gibbs_sample(fg, x, c, 2000, G.RANDOM_SCAN, np.random.default_rng(3), 1)[0]
    np.testing.assert_array_equal(fast, ref(fg, x0.copy(), 2000, np.random.default_rng(3)))
