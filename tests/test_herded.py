"""Herded-Gibbs family (Chen et al. 2016): kernels, targets, registrations, determinism, bad input.

All tests are deterministic (fixed seeds); the only statistical statements are in
tests/test_herded_verify.py (G-tests at family-wise alpha = 1e-4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from samplers import registry as R
from samplers.kernels import herded as HG
from samplers.kernels import mcqmc as MQ
from samplers.kernels.viterbi import chain_score, viterbi_decode
from samplers.methods.herded import lfsr_size_for
from samplers.targets import chain_crf as CC
from samplers.targets import herded_models as HM
from samplers.targets.factor_graph import energy, exact_joint


def _joint_tv(samples, prob, T):
    from verify.herded_theory import empirical_joint

    return 0.5 * np.abs(empirical_joint(samples[:T], prob.model.card) - prob.meta["joint"]).sum()


def test_registered():
    for m in (
        "herded_gibbs",
        "herded_gibbs_shared",
        "mcqmc_gibbs",
        "mean_field",
        "annealed_gibbs",
        "viterbi",
    ):
        assert R.get_method(m).family == "herded"
    for t in (
        "hg_two_variable",
        "hg_four_cycle",
        "hg_independent",
        "hg_ising_denoise",
        "hg_ising_denoise_toy",
        "hg_chain_toy",
        "hg_chain_conll2002",
    ):
        assert R.get_target(t).space == "discrete"


def test_two_variable_table1_reconstruction():
    for eps in (0.1, 0.01, 0.001, 1e-4):
        prob = R.build_problem("hg_two_variable", eps=eps)
        P = prob.meta["joint"].reshape(2, 2)
        np.testing.assert_allclose(P, [[0.25 - eps, eps], [eps, 0.75 - eps]], atol=1e-14)
        np.testing.assert_allclose(P[1].sum(), 0.75)


def test_herded_tv_is_exactly_one_over_T_eps01():
    """Two-variable model: from x0 = (1,1), w0 = pi - 1/2, d_v(P_T - pi) = 1/T exactly for eps = 0.1."""
    prob = R.build_problem("hg_two_variable", eps=0.1)
    r = R.run("herded_gibbs", prob, 10_000, 0)
    for T in (100, 1000, 10_000):
        assert abs(_joint_tv(r.samples, prob, T) * T - 1.0) < 1e-9


def test_herded_chunked_equals_one_call_and_deterministic():
    prob = R.build_problem("hg_four_cycle")
    a = R.run("herded_gibbs", prob, 5000, 0)  # drive runs it in 50 chunks
    fg = prob.model
    idx, n_slots, cap = HG.build_index(fg)
    x0 = prob.init(np.random.default_rng(0))
    st = HG.herded_gibbs_init(fg, x0, n_slots, cap)
    S = HG.herded_gibbs_sample(fg, idx, *st, 5000, HG.INIT_MID, False, np.random.default_rng(1), 1)[0]
    b = R.run("herded_gibbs", prob, 5000, 123)  # the seed is irrelevant for init="mid"
    assert np.array_equal(a.samples, S) and np.array_equal(a.samples, b.samples)
    assert a.hyper["storage"] == "dense" and a.samples.shape == (5000, 4)


def test_randomised_herding_reproducible_and_in_interval():
    prob = R.build_problem("hg_independent", p=(0.3, 0.6))
    a = R.run("herded_gibbs", prob, 2000, 5, init="random")
    b = R.run("herded_gibbs", prob, 2000, 5, init="random")
    assert np.array_equal(a.samples, b.samples)
    m = a.samples.mean(0)
    assert np.all(np.abs(m - [0.3, 0.6]) <= 1.0 / 2000 + 1e-12)  # Lemma 1 for any start in the interval


def test_hashed_equals_dense_and_hash_full_raises():
    prob = R.build_problem("hg_chain_toy", n_sent=3, length=5, K=3)
    d = R.run("herded_gibbs", prob, 300, 0, storage="dense")
    h = R.run("herded_gibbs", prob, 300, 0, storage="hashed")
    assert np.array_equal(d.samples, h.samples)
    with pytest.raises(RuntimeError, match="hash table full"):
        R.run("herded_gibbs", prob, 300, 0, storage="hashed", capacity=2)


def test_multivalued_rule_reduces_to_scalar_rule_for_K2():
    """Vector rule with w = p initialisation == scalar Alg. 1 (w_s = (w1 - w0)/2): run a K=2 chain
    whose variables are declared as K=3 with a third label of probability 0 -- same trajectory."""
    fg2 = HM.random_sparse(3, 5, 0.6)
    tabs = []
    for f in range(fg2.M.shape[0]):
        vs = tuple(int(v) for v in fg2.fac_vars[fg2.fac_ptr[f] : fg2.fac_ptr[f + 1]])
        t = fg2.tables[fg2.tab_ptr[f] : fg2.tab_ptr[f + 1]].reshape([2] * len(vs))
        big = np.full([3] * len(vs), -1e4)  # label 2: probability ~ e^-1e4 (exactly 0 in double)
        big[tuple(slice(0, 2) for _ in vs)] = t
        tabs.append((vs, big))
    from samplers.targets.factor_graph import from_tables

    fg3 = from_tables(np.full(5, 3), tabs)
    x0 = np.zeros(5, dtype=np.int64)
    out = []
    for fg in (fg2, fg3):
        idx, n_slots, cap = HG.build_index(fg)
        st = HG.herded_gibbs_init(fg, x0, n_slots, cap)
        out.append(HG.herded_gibbs_sample(fg, idx, *st, 500, 0, False, np.random.default_rng(0), 1)[0])
    assert np.array_equal(out[0], out[1])


def test_shared_variant_runs_and_differs():
    prob = R.build_problem("hg_ising_denoise_toy", rows=10, cols=10, sigma=4.0)
    a = R.run("herded_gibbs", prob, 30, 0)
    b = R.run("herded_gibbs_shared", prob, 30, 0)
    assert a.hyper["n_slots"] == 4 * 4 + 32 * 8 + 64 * 16  # 2^|N(i)| configurations per pixel
    assert b.hyper["n_slots"] == 4 * 3 + 32 * 4 + 64 * 5  # |N(i)| + 1 distinct conditionals
    assert not np.array_equal(a.samples, b.samples)


def test_lfsr_full_period_and_table():
    for m in (16, 18):
        u, info = MQ.cud_sequence(m)
        assert info["period"] == 2**m - 1 and u.shape == (2**m - 1,)
        assert math.gcd(info["s"], info["period"]) == 1
        assert np.all((u >= 0) & (u < 1)) and np.unique(u).size == 2**m - 1  # all nonzero windows
    # overlapping pairs of one period + origin are stratified on the 2^8 x 2^8 grid (m = 16)
    u, _ = MQ.cud_sequence(16)
    pairs = np.stack([u, np.roll(u, -1)], 1)
    cells = np.floor(pairs * 256).astype(int)
    counts = np.bincount(cells[:, 0] * 256 + cells[:, 1], minlength=65536)
    counts[0] += 1  # the origin row
    assert np.all(counts == 1)


def test_mcqmc_full_run_and_short_period_hyper():
    prob = R.build_problem("hg_two_variable", eps=0.1)
    r = R.run("mcqmc_gibbs", prob, 2**16, 3)
    assert r.hyper["m"] == 16 and r.hyper["period_fraction_used"] == 1.0
    assert _joint_tv(r.samples, prob, 2**16) < 0.5 / 256  # ~0.1/sqrt(T) measured
    assert lfsr_size_for(2**18) == 18 and lfsr_size_for(2**18 + 1) == 19
    a = R.run("mcqmc_gibbs", prob, 1000, 3)
    b = R.run("mcqmc_gibbs", prob, 1000, 3)
    assert np.array_equal(a.samples, b.samples)


def test_mean_field_parallel_matches_pmtk_update():
    prob = R.build_problem("hg_ising_denoise_toy", rows=8, cols=9, sigma=2.0)
    y = prob.meta["y"]
    mu = np.tanh(y / 4.0)  # q_init="unary"
    D = 0.5
    for _ in range(3):
        nb = np.zeros_like(mu)
        nb[1:] += mu[:-1]
        nb[:-1] += mu[1:]
        nb[:, 1:] += mu[:, :-1]
        nb[:, :-1] += mu[:, 1:]
        mu = (1 - D) * mu + D * np.tanh(nb + y / 4.0)
    r = R.run("mean_field", prob, 3, 0, damping=D, order="parallel")
    np.testing.assert_allclose(2 * r.samples[-1] - 1, mu.ravel(), atol=1e-12)


def test_annealed_reaches_viterbi_on_small_chain_and_best_is_best():
    prob = R.build_problem("hg_chain_toy", n_sent=3, length=6, K=3, score_sd=1.0)
    ch = prob.meta["chain"]
    v = R.run("viterbi", prob, 1, 0).samples[0]
    r = R.run("annealed_gibbs", prob, 200, 4)
    assert np.array_equal(r.extra["best_x"], v)
    assert energy(prob.model, r.extra["best_x"]) >= energy(prob.model, r.samples[-1]) - 1e-12
    # last sweep at T = 0 is greedy: every site is an argmax given its neighbours at update time
    h = R.run("herded_gibbs", prob, 400, 0, track_best=True)
    assert (
        chain_score(ch.unary, ch.trans, ch.ptr, h.extra["best_x"]).sum()
        <= chain_score(ch.unary, ch.trans, ch.ptr, v).sum() + 1e-12
    )


def test_viterbi_matches_enumeration():
    for s in range(5):
        ch = CC.random_chain(s, 2, 4, 3, 2.0)
        fg = CC.to_factor_graph(ch)
        X, p = exact_joint(fg)
        x, _ = viterbi_decode(ch.unary, ch.trans, ch.ptr)
        assert np.array_equal(x, X[np.argmax(p)])


def test_chunks_and_f1():
    assert CC.chunks(["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-ORG"]) == {
        (0, 2, "PER"),
        (3, 4, "LOC"),
        (4, 5, "LOC"),
        (5, 6, "ORG"),
    }
    labels = ["O", "B-PER", "I-PER"]
    gold = np.array([1, 2, 0, 1])
    assert CC.entity_f1(gold, gold, np.array([0, 4]), labels) == 100.0
    assert CC.entity_f1(gold, np.array([1, 0, 0, 1]), np.array([0, 4]), labels) == pytest.approx(50.0)


def test_perceptron_learns_toy_tagging_and_scale_fit():
    sents = [
        [("John", "N", "B-PER"), ("runs", "V", "O")],
        [("Mary", "N", "B-PER"), ("sleeps", "V", "O")],
        [("the", "D", "O"), ("dog", "N", "O")],
    ] * 5
    chain, info = CC.train_chain_crf(sents, sents[:3], epochs=3, dev_sents=sents[:3])
    x, _ = viterbi_decode(chain.unary, chain.trans, chain.ptr)
    assert np.array_equal(x, info["gold"])
    b = info["beta"]
    raw = CC.make_chain(chain.ptr, chain.unary / b, chain.trans / b)
    ll = [CC.chain_loglik(raw.unary, raw.trans, raw.ptr, info["gold"], f * b) for f in (0.5, 1.0)]
    assert ll[1] >= ll[0] - 1e-9


def test_denoise_conditional_is_sigmoid_formula():
    prob = R.build_problem("hg_ising_denoise_toy", rows=5, cols=5, sigma=3.0)
    from samplers.kernels.herded import conditional_probs

    x = np.random.default_rng(0).integers(0, 2, 25)
    s = (2 * x - 1).reshape(5, 5)
    y = prob.meta["y"]
    lg, p = np.empty(2), np.empty(2)
    for i in range(25):
        r, c = divmod(i, 5)
        nb = sum(
            s[a, b] for a, b in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)) if 0 <= a < 5 and 0 <= b < 5
        )
        conditional_probs(prob.model, x, i, lg, p)
        want = 1 / (1 + np.exp(-(2 * nb + 2 * y[r, c] / 9.0)))
        assert abs(p[1] - want) < 1e-12


@pytest.mark.parametrize(
    "bad",
    [
        lambda: HM.two_variable(0.3),
        lambda: HM.independent([0.0, 0.5]),
        lambda: HM.ising_denoise(np.zeros((3, 3)), 0.0),
        lambda: CC.make_chain([0, 2], np.zeros((3, 2)), np.zeros((2, 2))),
        lambda: MQ.cud_sequence(30),
        lambda: R.run("herded_gibbs", R.build_problem("hg_four_cycle"), 10, 0, init="bogus"),
        lambda: R.run("herded_gibbs", R.build_problem("hg_four_cycle"), 10, 0, storage="bogus"),
        lambda: R.run("herded_gibbs", R.build_problem("hg_four_cycle"), 10, 0, x0=[0, 1, 2, 0]),
        lambda: R.run("herded_gibbs", R.build_problem("hg_four_cycle"), 0, 0),
        lambda: R.run("mean_field", R.build_problem("hg_four_cycle"), 10, 0, damping=1.5),
        lambda: R.run("mean_field", R.build_problem("hg_four_cycle"), 10, 0, order="bogus"),
        lambda: R.run("mcqmc_gibbs", R.build_problem("hg_four_cycle"), 10, 0, m=1),
        lambda: R.run("viterbi", R.build_problem("hg_four_cycle"), 1, 0),
        lambda: R.run("herded_gibbs", R.build_problem("gaussian_location"), 10, 0),
        lambda: HG.build_index(HM.four_cycle(1), shared=True, storage="hashed"),
    ],
)
def test_bad_input_raises_value_error(bad):
    with pytest.raises(ValueError):
        bad()
