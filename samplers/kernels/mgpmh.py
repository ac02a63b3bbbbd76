"""MGPMH — minibatch-Gibbs-proposal Metropolis-Hastings (De Sa, Chen & Wong 2018), RECONSTRUCTED.

No public code or exact pseudo-code is available; this is the reconstruction:
pick i; draw a local minibatch independent of the state, s_f ~ Poisson(lambda M_f / L) for f in A[i]
(Poisson thinning degenerate: B ~ Poisson(lambda sum_{A[i]} M_f / L) draws from p_i(f) ∝ M_f, all kept);
unbiased linear energy estimate eps_u = sum_f s_f (L / (lambda M_f)) phi_f(x_{i<-u}), shared by all D
candidates; propose v ∝ exp(eps_v); accept with min(1, exp(U(y) - U(x)) exp(eps_{x_i} - eps_v)) where
U(y) - U(x) is computed exactly over A[i] (the Delta term of Zhang & De Sa 2019 Table 1). Exact for any
state-independent minibatch because forward and reverse proposals share the normaliser.

n_evals = D * |distinct S| + 2 |A[i]|; ``trace_0`` = B (minibatch size).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.alias import alias_slot
from samplers.streams import new_stream, uniform
from samplers.targets.factor_graph import FactorGraph, factor_slice, sample_logits

MUT_NONE, MUT_NO_CORRECTION = 0, 1


@njit(cache=True)
def mgpmh_init(fg: FactorGraph, x0: np.ndarray, prob, alias, Lam, arate, bufsize: int):
    x = x0.copy()
    deg = 1
    for i in range(fg.n):
        d = fg.var_ptr[i + 1] - fg.var_ptr[i]
        if d > deg:
            deg = d
    buf = np.empty(bufsize, dtype=np.int64)
    cnt = np.zeros(deg, dtype=np.int64)
    touched = np.zeros(deg, dtype=np.int64)
    logits = np.zeros(fg.card.max(), dtype=np.float64)
    return x, prob, alias, Lam, arate, buf, cnt, touched, logits


@njit(cache=True, inline="always")
def _mgpmh_update(
    fg: FactorGraph, x, prob, alias, Lam, arate, buf, cnt, touched, logits, i: int, rng, mutant: int
):
    """Body of :func:`mgpmh_step`, inlined into the chain loop. Same random stream and results as
    ``draw_candidates`` + factor-by-factor evaluation; no slices, one index computation per factor
    (:func:`factor_slice`) for its D proposal values and for the two values of the exact Delta."""
    p0 = fg.var_ptr[i]
    p1 = fg.var_ptr[i + 1]
    B = rng.poisson(Lam[i])
    st = new_stream(rng)
    if B > buf.shape[0]:
        buf = np.empty(2 * B, dtype=np.int64)
    for b in range(B):
        buf[b] = alias_slot(prob, alias, p0, p1 - p0, uniform(st, b))
    nt = 0
    for b in range(B):
        k = buf[b]
        if cnt[k] == 0:
            touched[nt] = k
            nt += 1
        cnt[k] += 1
    D = fg.card[i]
    for v in range(D):
        logits[v] = 0.0
    for t in range(nt):
        k = touched[t]
        c = cnt[k]
        cnt[k] = 0
        f = fg.var_fac[p0 + k]
        w = c / arate[f]
        base, stride = factor_slice(fg, f, x, i)
        for v in range(D):
            logits[v] += w * fg.tables[base + v * stride]
    ne = D * nt
    xi = x[i]
    v = sample_logits(logits, D, rng.random())
    if v == xi:
        return True, ne, B, buf
    dU = 0.0
    for k in range(p0, p1):
        base, stride = factor_slice(fg, fg.var_fac[k], x, i)
        dU += fg.tables[base + v * stride] - fg.tables[base + xi * stride]
    ne += 2 * (p1 - p0)
    if mutant == MUT_NO_CORRECTION:
        x[i] = v
        return True, ne, B, buf
    logr = dU + logits[xi] - logits[v]
    if logr >= 0.0 or rng.random() < np.exp(logr):
        x[i] = v
        return True, ne, B, buf
    return False, ne, B, buf


@njit(cache=True)
def mgpmh_step(
    fg: FactorGraph, x, prob, alias, Lam, arate, buf, cnt, touched, logits, i: int, rng, mutant: int
):
    """``Lam[i] = lambda sum_{A[i]} M_f / L``, ``arate[f] = lambda M_f / L``.
    Returns ``(accepted, n_evals, B, buf)``."""
    return _mgpmh_update(fg, x, prob, alias, Lam, arate, buf, cnt, touched, logits, i, rng, mutant)


@njit(cache=True)
def mgpmh_sample(
    fg: FactorGraph,
    x,
    prob,
    alias,
    Lam,
    arate,
    buf,
    cnt,
    touched,
    logits,
    n_iter: int,
    mutant: int,
    rng,
    thin: int,
):
    samples = np.empty((n_iter // thin, fg.n), dtype=np.int64)
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    bs = np.zeros(n_iter, dtype=np.int64)
    for it in range(n_iter):
        i = rng.integers(0, fg.n)
        a, ne, B, buf = _mgpmh_update(
            fg, x, prob, alias, Lam, arate, buf, cnt, touched, logits, i, rng, mutant
        )
        acc[it] = a
        nev[it] = ne
        bs[it] = B
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = x
    return samples, acc, nev, bs
