"""Per-iteration counter-based uniform streams for the minibatch hot loops.

The candidate loops of the Poisson-minibatch kernels (Yuan & Wang 2024 Alg. 8/9; Zhang & De Sa 2019 Alg. 2/4)
need two uniforms per candidate (alias slot + thinning coin). ``numpy.random.Generator.random()`` costs ~7 ns
per call inside Numba (an indirect call into the bit generator through a function pointer), a third of a whole
PoissonMH candidate. Instead each iteration opens a fresh *stream* from the chain's Generator (one 63-bit
draw) and reads its uniforms by counter:

    u(st, c) = mix64(seed + (c + 1) * gamma) >> 11 / 2^53,

i.e. the SplitMix64 generator (Steele, Lea & Flood, OOPSLA 2014; the ``split()`` of Java's
``SplittableRandom``): ``seed = mix64(a)``, ``gamma = mix_gamma(a + golden)`` (odd, >= 24 bit
transitions), ``a`` the Generator draw. SplitMix64 passes BigCrush; streams with distinct gammas share
at most isolated values, never runs. A uniform costs ~1.5 ns, inlined, with no state to thread
through the kernels: ``(seed, gamma)`` is a pair of uint64 in registers. The chain stays a
deterministic function of its ``SeedSequence`` child (the Generator drives every stream).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

try:  # Numba's own bounded draw (Lemire), which its scalar ``Generator.integers`` runs on a 1-element array
    from numba.np.random.random_methods import bounded_lemire_uint64
except ImportError:  # pragma: no cover - a Numba that moved it: the array-allocating scalar draw, same values
    bounded_lemire_uint64 = None

GOLDEN = uint64(0x9E3779B97F4A7C15)
_M1 = uint64(0xBF58476D1CE4E5B9)
_M2 = uint64(0x94D049BB133111EB)
_G1 = uint64(0xFF51AFD7ED558CCD)
_G2 = uint64(0xC4CEB9FE1A85EC53)
_WEAK = uint64(0xAAAAAAAAAAAAAAAA)
_TWO53 = 1.0 / 9007199254740992.0
# rng.integers(0, 2**63 - 1) draws low + Lemire(high - 1 - low): the range 2**63 - 2
_RANGE63 = uint64(9223372036854775806)


@njit(cache=True, inline="always")
def mix64(z):
    """SplitMix64 output function (Stafford's variant 13)."""
    z = uint64(z)
    z = (z ^ (z >> uint64(30))) * _M1
    z = (z ^ (z >> uint64(27))) * _M2
    return z ^ (z >> uint64(31))


@njit(cache=True, inline="always")
def popcount64(z) -> int:
    """Number of set bits (SWAR)."""
    z = uint64(z)
    z = z - ((z >> uint64(1)) & uint64(0x5555555555555555))
    z = (z & uint64(0x3333333333333333)) + ((z >> uint64(2)) & uint64(0x3333333333333333))
    z = (z + (z >> uint64(4))) & uint64(0x0F0F0F0F0F0F0F0F)
    return int((z * uint64(0x0101010101010101)) >> uint64(56))


@njit(cache=True, inline="always")
def mix_gamma(z):
    """SplittableRandom.mixGamma: an odd increment with at least 24 bit transitions."""
    z = uint64(z)
    z = (z ^ (z >> uint64(33))) * _G1
    z = (z ^ (z >> uint64(33))) * _G2
    z = (z ^ (z >> uint64(33))) | uint64(1)
    if popcount64(z ^ (z >> uint64(1))) < 24:
        z = z ^ _WEAK
    return z


if bounded_lemire_uint64 is not None:

    @njit(cache=True, inline="always")
    def _draw63(rng):
        """``rng.integers(0, 2**63 - 1)`` as a uint64, computed as Numba computes it, without its array."""
        return bounded_lemire_uint64(rng.bit_generator, _RANGE63)

else:  # pragma: no cover

    @njit(cache=True, inline="always")
    def _draw63(rng):
        """``rng.integers(0, 2**63 - 1)`` as a uint64."""
        return uint64(rng.integers(0, 9223372036854775807))


@njit(cache=True)
def new_stream(rng):
    """A fresh stream ``(seed, gamma)`` from one 63-bit draw of the Generator ``rng``:
    ``a = rng.integers(0, 2**63 - 1)``, computed as Numba computes it (Lemire's bounded draw on the
    range ``2**63 - 2``) without the one-element array Numba's scalar ``integers`` allocates and frees
    (41 -> 3 ns a draw: docs/performance.md §7.3; ``tests/test_streams.py`` checks the values equal)."""
    a = _draw63(rng)
    return mix64(a), mix_gamma(a + GOLDEN)


@njit(cache=True, inline="always")
def counter(st, c: int):
    """The counter of uniform c of stream ``st``: ``seed + (c + 1) gamma`` (uint64, modulo 2^64). Uniforms
    c, c + 1, ... have counters z, z + gamma, ...: a hot loop reading consecutive uniforms keeps z and adds
    ``gamma = st[1]`` (one add instead of a multiply and two adds: docs/performance.md §7.3)."""
    return st[0] + uint64(c + 1) * st[1]


@njit(cache=True, inline="always")
def uniform_at(z) -> float:
    """The uniform on [0, 1) (53 bits) at counter ``z``: ``mix64(z) >> 11 / 2^53``."""
    return float(mix64(z) >> uint64(11)) * _TWO53


@njit(cache=True, inline="always")
def uniform(st, c: int) -> float:
    """The c-th uniform on [0, 1) of stream ``st`` (53 bits)."""
    return uniform_at(counter(st, c))


def uniforms(st: tuple, n: int, start: int = 0) -> np.ndarray:
    """``uniform(st, start + k)`` for k < n as an array (tests, verify)."""
    return _uniforms((np.uint64(st[0]), np.uint64(st[1])), n, start)


@njit(cache=True)
def _uniforms(st, n: int, start: int) -> np.ndarray:
    out = np.empty(n)
    for k in range(n):
        out[k] = uniform(st, start + k)
    return out
