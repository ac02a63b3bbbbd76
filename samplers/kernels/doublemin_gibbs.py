"""DoubleMIN-Gibbs (De Sa, Chen & Wong 2018), RECONSTRUCTED (no public code).

Proposal = the MGPMH local minibatch proposal (first batch, s_f ~ Poisson(lambda1 M_f / L) over A[i],
v ∝ exp(eps_v)); the exact energy difference of MGPMH is replaced by a pseudo-marginal ratio of global
MIN-style estimates (second batch, expected size lambda2): a fresh eps'_y of U(y) against the cached
eps_x. Accept with min(1, exp(eps'_y - eps_x + eps_{x_i} - eps_v)); on acceptance cache eps'_y.
Exact (pseudo-marginal MH with an unbiased estimate of exp(U) up to a constant); its efficiency
degrades when the second batch is small (variance of eps; Zhang & De Sa 2019 §4.1).

n_evals = D * |distinct S1| + B2; ``trace_0`` = B1, ``trace_1`` = B2.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.alias import alias_slot
from samplers.kernels.min_gibbs import global_estimate
from samplers.streams import new_stream, uniform
from samplers.targets.factor_graph import FactorGraph, factor_slice, sample_logits

MUT_NONE, MUT_REFRESH_CURRENT = 0, 1


@njit(cache=True)
def doublemin_gibbs_init(
    fg: FactorGraph, x0: np.ndarray, prob, alias, Lam, arate, bufsize: int, gprob, galias, grate
):
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
    eps = np.full(1, np.nan)  # drawn by the first step at the current x (chain RNG)
    return x, eps, prob, alias, Lam, arate, buf, cnt, touched, logits, gprob, galias, grate


@njit(cache=True, inline="always")
def _doublemin_update(
    fg: FactorGraph,
    x,
    eps,
    prob,
    alias,
    Lam,
    arate,
    buf,
    cnt,
    touched,
    logits,
    gprob,
    galias,
    grate,
    glam: float,
    i: int,
    rng,
    mutant: int,
):
    """Body of :func:`doublemin_gibbs_step`, inlined into the chain loop; same random stream and
    results as ``draw_candidates`` + factor-by-factor evaluation (no slices, :func:`factor_slice`)."""
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
    if np.isnan(eps[0]):
        e0, b0 = global_estimate(fg, x, i, xi, gprob, galias, glam, grate, rng)
        eps[0] = e0
        ne += b0
    v = sample_logits(logits, D, rng.random())
    if mutant == MUT_REFRESH_CURRENT:  # broken: re-estimates the current state instead of caching
        ex, B2x = global_estimate(fg, x, i, xi, gprob, galias, glam, grate, rng)
        eps[0] = ex
        ne += B2x
    ey, B2 = global_estimate(fg, x, i, v, gprob, galias, glam, grate, rng)
    ne += B2
    logr = ey - eps[0] + logits[xi] - logits[v]
    if logr >= 0.0 or rng.random() < np.exp(logr):
        x[i] = v
        eps[0] = ey
        return True, ne, B, B2, buf
    return False, ne, B, B2, buf


@njit(cache=True)
def doublemin_gibbs_step(
    fg: FactorGraph,
    x,
    eps,
    prob,
    alias,
    Lam,
    arate,
    buf,
    cnt,
    touched,
    logits,
    gprob,
    galias,
    grate,
    glam: float,
    i: int,
    rng,
    mutant: int,
):
    """Returns ``(accepted, n_evals, B1, B2, buf)``."""
    return _doublemin_update(
        fg,
        x,
        eps,
        prob,
        alias,
        Lam,
        arate,
        buf,
        cnt,
        touched,
        logits,
        gprob,
        galias,
        grate,
        glam,
        i,
        rng,
        mutant,
    )


@njit(cache=True)
def doublemin_gibbs_sample(
    fg: FactorGraph,
    x,
    eps,
    prob,
    alias,
    Lam,
    arate,
    buf,
    cnt,
    touched,
    logits,
    gprob,
    galias,
    grate,
    n_iter: int,
    glam: float,
    mutant: int,
    rng,
    thin: int,
):
    samples = np.empty((n_iter // thin, fg.n), dtype=np.int64)
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    b1 = np.zeros(n_iter, dtype=np.int64)
    b2 = np.zeros(n_iter, dtype=np.int64)
    for it in range(n_iter):
        i = rng.integers(0, fg.n)
        a, ne, B, B2, buf = _doublemin_update(
            fg,
            x,
            eps,
            prob,
            alias,
            Lam,
            arate,
            buf,
            cnt,
            touched,
            logits,
            gprob,
            galias,
            grate,
            glam,
            i,
            rng,
            mutant,
        )
        acc[it] = a
        nev[it] = ne
        b1[it] = B
        b2[it] = B2
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = x
    return samples, acc, nev, b1, b2
