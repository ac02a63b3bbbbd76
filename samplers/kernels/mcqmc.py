"""MCQMC Gibbs: systematic-scan Gibbs driven by a completely uniformly distributed (CUD) sequence
(Chen et al. 2016 §4.1 baseline; Chen, Dick & Owen 2011; Chen, Matsumoto, Nishimura & Owen 2012).

CUD sequence (Chen, Matsumoto, Nishimura & Owen 2012 LFSR construction):

* bits a_n of a maximal-length LFSR with primitive polynomial p(t) = t^m + sum_k c_k t^k:
  a_{n+m} = XOR_{c_k = 1} a_{n+k}, started from the window a_0 = 1, a_1..a_{m-1} = 0; period
  P = 2^m - 1 (checked at construction: all P nonzero m-bit windows are visited);
* u_i = sum_{j=1..m} a_{(s i + j - 1) mod P} 2^{-j}: an m-bit window advanced by the offset s
  (gcd(s, P) = 1), i = 0..P-1.

Mapping to sweeps (Owen-Tribble variate matrix): a sweep of the n sites consumes d consecutive u's,
d = the smallest integer >= n with gcd(d, P) = 1 (d > n: the extra values are skipped = padding).
Sweep 0 of every period is the all-zero row (the origin); sweep k = 1..P uses u_{(k-1)d + j mod P},
j < n. One full period is 2^m sweeps, whose rows are the origin plus all P cyclic overlapping
d-tuples. A run longer than 2^m sweeps reuses the sequence (only for the short-period mutant).
Randomisation ("seeds"): a Cranley-Patterson rotation, u_ij <- (u_ij + U_j) mod 1 with U ~ U[0,1)^n
drawn from the run's ``rng`` (Tribble & Owen 2008). Site update: inverse CDF of the full conditional
over the labels 0..K-1 (x_i = 1 iff u >= pi(X_i=0|.) for binary sites).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.targets.factor_graph import FactorGraph, conditional_logits, sample_logits

# Chen, Matsumoto, Nishimura & Owen (2012) table: m -> (tap exponents k < m with c_k = 1, s)
LFSR_TABLE: dict[int, tuple[tuple[int, ...], int]] = {
    16: ((0, 2, 3, 5), 283),
    17: ((0, 3), 514),
    18: ((0, 7), 698),
    19: ((0, 1, 2, 5), 706),
    20: ((0, 3), 1304),
}


@njit(cache=True)
def lfsr_bits(m: int, taps: np.ndarray) -> np.ndarray:
    """One period (2^m - 1 bits) of the LFSR a_{n+m} = XOR_k a_{n+k} (k in taps), a_0 = 1."""
    P = (1 << m) - 1
    a = np.zeros(P + m, dtype=np.uint8)
    a[0] = 1
    for n in range(P):
        b = 0
        for k in taps:
            b ^= a[n + k]
        a[n + m] = b
    return a


@njit(cache=True)
def _full_period(a: np.ndarray, m: int) -> bool:
    P = (1 << m) - 1
    seen = np.zeros(1 << m, dtype=np.bool_)
    w = 0
    for j in range(m):
        w = (w << 1) | a[j]
    for n in range(P):
        if w == 0 or seen[w]:
            return False
        seen[w] = True
        w = ((w << 1) & ((1 << m) - 1)) | a[n + m]
    return True


@njit(cache=True)
def lfsr_uniforms(a: np.ndarray, m: int, s: int) -> np.ndarray:
    """u_i = sum_{j<m} a_{(s i + j) mod P} 2^{-(j+1)}, i = 0..P-1."""
    P = (1 << m) - 1
    u = np.empty(P)
    for i in range(P):
        start = (s * i) % P
        v = 0.0
        scale = 0.5
        for j in range(m):
            v += a[(start + j) % P] * scale
            scale *= 0.5
        u[i] = v
    return u


def _search_taps(m: int) -> tuple[int, ...]:
    """Smallest k with t^m + t^k + 1 primitive (full period checked), else a pentanomial."""
    for k in range(1, m):
        taps = (0, k)
        if _full_period(lfsr_bits(m, np.array(taps, dtype=np.int64)), m):
            return taps
    for k1 in range(1, m):
        for k2 in range(k1 + 1, m):
            for k3 in range(k2 + 1, m):
                taps = (0, k1, k2, k3)
                if _full_period(lfsr_bits(m, np.array(taps, dtype=np.int64)), m):
                    return taps
    raise ValueError(f"no primitive polynomial found for m={m}")


def cud_sequence(m: int) -> tuple[np.ndarray, dict]:
    """(u[0..2^m-2], info) for an m-bit LFSR. m = 16..20: Chen et al. (2012) polynomial + offset;
    m = 2..15 (tests / short-period mutants only): the first primitive trinomial (or pentanomial)
    found by a full-period search, offset s = smallest s >= m coprime to 2^m - 1."""
    if not isinstance(m, (int, np.integer)) or not 2 <= m <= 24:
        raise ValueError(f"LFSR size m must be an integer in [2, 24], got {m!r}")
    P = (1 << m) - 1
    if m in LFSR_TABLE:
        taps, s = LFSR_TABLE[m]
        source = "Chen, Matsumoto, Nishimura & Owen 2012"
    else:
        taps = _search_taps(m)
        s = m
        while math.gcd(s, P) != 1:
            s += 1
        source = "searched (test-size generator)"
    a = lfsr_bits(m, np.array(taps, dtype=np.int64))
    if not _full_period(a, m):
        raise ValueError(f"LFSR m={m} taps={taps} is not maximal-length")
    return lfsr_uniforms(a, m, s), {"m": m, "taps": taps, "s": s, "period": P, "source": source}


def sweep_stride(n: int, P: int) -> int:
    """Values consumed per sweep: smallest d >= n with gcd(d, P) = 1."""
    d = n
    while math.gcd(d, P) != 1:
        d += 1
    return d


@njit(cache=True)
def mcqmc_gibbs_init(fg: FactorGraph, x0: np.ndarray):
    x = x0.copy()
    counter = np.zeros(1, dtype=np.int64)  # sweeps done
    return x, counter


@njit(cache=True)
def mcqmc_uniform(u: np.ndarray, shift: np.ndarray, d: int, k: int, j: int) -> float:
    """The variate of site j in sweep k (origin row at k = 0 mod 2^m), rotated by shift[j]."""
    P = u.shape[0]
    r = k % (P + 1)
    v = 0.0 if r == 0 else u[((r - 1) * d + j) % P]
    v += shift[j]
    if v >= 1.0:
        v -= 1.0
    return v


@njit(cache=True)
def mcqmc_gibbs_step(fg: FactorGraph, x, counter, u, shift, d: int, logits) -> int:
    """One sweep 0..n-1 using the CUD row of sweep ``counter[0]``; returns factor evaluations."""
    k = counter[0]
    ne = 0
    for i in range(fg.n):
        ne += conditional_logits(fg, x, i, logits)
        x[i] = sample_logits(logits, fg.card[i], mcqmc_uniform(u, shift, d, k, i))
    counter[0] = k + 1
    return ne


@njit(cache=True)
def mcqmc_gibbs_sample(fg: FactorGraph, x, counter, n_iter: int, u, shift, d: int, rng, thin: int):
    """``n_iter`` sweeps; ``rng`` is unused (the randomisation is in ``shift``)."""
    samples = np.empty((n_iter // thin, fg.n), dtype=np.int64)
    acc = np.ones(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    logits = np.empty(fg.card.max())
    for it in range(n_iter):
        nev[it] = mcqmc_gibbs_step(fg, x, counter, u, shift, d, logits)
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = x
    return samples, acc, nev
