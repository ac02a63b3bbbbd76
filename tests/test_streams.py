"""Counter-based uniform streams of the minibatch hot loops (samplers/streams.py).

Statistical checks use fixed seeds; each threshold is a chi-square / KS quantile at alpha = 1e-5, and
each is shown to reject a deliberately broken generator (the un-mixed Weyl sequence, or reused keys).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64
from scipy import stats

import samplers  # noqa: F401  (sets the Numba cache dir)
from samplers.streams import GOLDEN, mix64, mix_gamma, new_stream, popcount64, uniform, uniforms

ALPHA = 1e-5


def _pairs_chi2_p(u: np.ndarray, bins: int = 16) -> float:
    """p-value of the chi-square test that consecutive pairs (u_k, u_k+1) are uniform on a grid."""
    a = np.minimum((u[:-1:2] * bins).astype(int), bins - 1)
    b = np.minimum((u[1::2] * bins).astype(int), bins - 1)
    obs = np.bincount(a * bins + b, minlength=bins * bins)
    return float(stats.chisquare(obs).pvalue)


@njit(cache=True)
def _weyl(st, n):
    """Broken generator: the SplitMix64 state sequence without the output mix."""
    out = np.empty(n)
    for k in range(n):
        z = st[0] + uint64(k + 1) * st[1]
        out[k] = float(z >> uint64(11)) * (1.0 / 9007199254740992.0)
    return out


def test_one_stream_is_uniform_and_serially_independent():
    st = new_stream(np.random.default_rng(20261123))
    u = uniforms(st, 200_000)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > ALPHA
    assert _pairs_chi2_p(u) > ALPHA
    # the same test rejects the un-mixed state sequence (points on a few lines in the unit square)
    w = _weyl((np.uint64(st[0]), np.uint64(st[1])), 200_000)
    assert _pairs_chi2_p(w) < ALPHA


def test_successive_streams_are_independent():
    """First two uniforms of 50k successive streams of one Generator: uniform, and no correlation
    between neighbouring streams; reusing the Generator state (the same stream twice) is caught."""
    rng = np.random.default_rng(7)
    first = np.array([uniforms(new_stream(rng), 2) for _ in range(50_000)])
    assert stats.kstest(first[:, 0], "uniform").pvalue > ALPHA
    assert _pairs_chi2_p(first[:, 0]) > ALPHA  # stream k vs stream k+1, same counter
    assert _pairs_chi2_p(first.ravel()) > ALPHA  # counters 0 and 1 of one stream
    same = np.array([uniforms(new_stream(np.random.default_rng(k // 2)), 1)[0] for k in range(20_000)])
    assert _pairs_chi2_p(same) < ALPHA  # mutant: every key used twice


def test_mix_gamma_and_popcount():
    rng = np.random.default_rng(3)
    for a in rng.integers(0, 2**63 - 1, 2000, dtype=np.int64):
        z = np.uint64(a)
        assert popcount64(z) == bin(int(z)).count("1")
        g = int(mix_gamma(z))
        assert g % 2 == 1
        assert bin(g ^ (g >> 1)).count("1") >= 24
    assert int(mix_gamma(np.uint64(0))) % 2 == 1
    assert int(GOLDEN) == 0x9E3779B97F4A7C15


def test_streams_are_reproducible_and_counter_addressed():
    a = uniforms(new_stream(np.random.default_rng(5)), 100)
    b = uniforms(new_stream(np.random.default_rng(5)), 100)
    assert np.array_equal(a, b)
    st = new_stream(np.random.default_rng(5))
    assert np.array_equal(uniforms(st, 10, start=90), a[90:])

    @njit
    def at(st, c):
        return uniform(st, c)

    s64 = (np.uint64(st[0]), np.uint64(st[1]))
    assert at(s64, 42) == a[42]


@njit(cache=True)
def _stream_from_half_range(rng):
    """Broken ``new_stream``: its 63-bit draw taken on half the range."""
    a = uint64(rng.integers(0, 4611686018427387904))
    return mix64(a), mix_gamma(a + GOLDEN)


def test_new_stream_is_the_generators_63_bit_draw():
    """``new_stream`` computes ``rng.integers(0, 2**63 - 1)`` without Numba's one-element array: the same
    (seed, gamma) as NumPy's own draw mixed in Python, stream after stream; a draw on another range is
    caught."""
    for f, same in ((new_stream, True), (_stream_from_half_range, False)):
        for seed in range(3):
            r_nb, r_np = np.random.default_rng(seed), np.random.default_rng(seed)
            got = [f(r_nb) for _ in range(200)]
            ref = []
            for _ in range(200):
                a = np.uint64(r_np.integers(0, 2**63 - 1))
                ref.append((int(mix64(a)), int(mix_gamma(a + GOLDEN))))
            assert (got == ref) is same
