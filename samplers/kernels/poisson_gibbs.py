"""Poisson-minibatching Gibbs on a discrete factor graph (Zhang & De Sa 2019 Alg. 2 with the Alg. 4 sampler).

One iteration: pick i ~ Unif{0..n-1}; draw the auxiliary counts s_f ~ Poisson(lambda M_f / L + phi_f(x))
for f in A[i] by Poisson thinning (App. A, Alg. 4): B ~ Poisson(Lambda_i), Lambda_i = sum_{A[i]}
(lambda/L + 1) M_f, B candidates from the per-variable alias table p_i(f) ∝ M_f, candidate f kept with
probability (lambda M_f/L + phi_f(x)) / (lambda M_f/L + M_f). Then x_i ~ p(v) ∝ exp(U_v),
U_v = sum_{f: s_f > 0} s_f log(1 + L phi_f(x_{i<-v}) / (lambda M_f)). No MH step (Thm. 1).

The per-variable alias tables (over A[i], CSR-aligned with ``fg.var_fac``) are built once by
:func:`build_local_tables`; the candidate draw and the thinning coin are those of
:mod:`samplers.poisson_minibatch` (``draw_candidates``/``keep``), written out in the step so the hot
loop makes no array slices (same uniforms, same results). Cost per iteration: B + D * |distinct kept| factor
evaluations (E[B] = Lambda_i <= lambda + L, Statement 1) — independent of |A[i]|. The step evaluates
phi_f(x) only for candidates whose coin u (a + M) < a + phi is not already decided by u (a + M) < a
(expected B L / (lambda + L) of them; identical decisions), so it makes fewer evaluations than that.

Reported per iteration (``*_sample``): ``n_evals`` = (phi_f(x) evaluations made while thinning)
+ D * |S| (the factor evaluations actually made),
``trace_0`` = B (candidates drawn = minibatch size, the paper's "factors evaluated" reading closest
to 7/28/132), ``trace_1`` = sum_f s_f (kept draws, with multiplicity).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.alias import alias_slot, build_alias
from samplers.hotloop import prefetch1
from samplers.poisson_minibatch import coin
from samplers.streams import new_stream, uniform
from samplers.targets.factor_graph import FactorGraph, factor_slice, factor_value

# software prefetch only for graphs whose per-factor arrays outgrow the L2 cache (measured: -7% per
# iteration on the 8x8 Potts model with 2016 factors, +3..10% on the 20x20 one with 79348)
PREFETCH_MIN_FACTORS = 1 << 14

# verification mutants (deliberately broken variants, used only by verify/ and tests/)
MUT_NONE, MUT_RATE_PLUS_ONE, MUT_THIN_WRONG, MUT_NO_MULTIPLICITY = 0, 1, 2, 3


def local_max_energy(fg: FactorGraph) -> float:
    """L = max_i sum_{f in A[i]} M_f (Zhang & De Sa 2019 §1.1)."""
    return float(max(fg.M[fg.var_fac[fg.var_ptr[i] : fg.var_ptr[i + 1]]].sum() for i in range(fg.n)))


def build_local_tables(fg: FactorGraph, weight_scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-variable alias tables over A[i] with p_i(f) ∝ M_f (Alg. 4 pre-computation).

    Returns ``(prob, alias, Msum)``: ``prob``/``alias`` are aligned with ``fg.var_fac`` (alias entries
    are local indices into A[i]); ``Msum[i] = sum_{A[i]} M_f``. Variables whose factors all have
    M_f = 0 get a dummy table (their Lambda_i is 0, so no draw is ever made)."""
    if not (weight_scale > 0 and np.isfinite(weight_scale)):
        raise ValueError("weight_scale must be finite and > 0")
    K = fg.var_fac.shape[0]
    prob = np.ones(K, dtype=np.float64)
    alias = np.zeros(K, dtype=np.int64)
    Msum = np.zeros(fg.n, dtype=np.float64)
    for i in range(fg.n):
        p0, p1 = int(fg.var_ptr[i]), int(fg.var_ptr[i + 1])
        w = fg.M[fg.var_fac[p0:p1]] * weight_scale
        Msum[i] = float(fg.M[fg.var_fac[p0:p1]].sum())
        if p1 > p0 and w.sum() > 0:
            pr, al = build_alias(np.ascontiguousarray(w))
            prob[p0:p1] = pr
            alias[p0:p1] = al
        else:
            alias[p0:p1] = np.arange(p1 - p0)
    return prob, alias, Msum


def max_degree(fg: FactorGraph) -> int:
    return int(np.max(np.diff(fg.var_ptr))) if fg.n else 0


def candidate_buffer_for(Lam_max: float) -> np.ndarray:
    return np.empty(int(Lam_max + 12.0 * np.sqrt(Lam_max + 1.0) + 64), dtype=np.int64)


@njit(cache=True)
def poisson_gibbs_init(fg: FactorGraph, x0: np.ndarray, prob, alias, Lam, arate, bufsize: int):
    """State: x (mutated), the per-variable alias tables and rates (read-only), scratch arrays."""
    x = x0.copy()
    deg = 1
    for i in range(fg.n):
        d = fg.var_ptr[i + 1] - fg.var_ptr[i]
        if d > deg:
            deg = d
    buf = np.empty(bufsize, dtype=np.int64)
    cnt = np.zeros(deg, dtype=np.int64)
    touched = np.zeros(deg + 1, dtype=np.int64)  # + 1: the step writes one slot past the last
    logits = np.zeros(fg.card.max(), dtype=np.float64)
    return x, prob, alias, Lam, arate, buf, cnt, touched, logits


@njit(cache=True, inline="always")
def sample_softmax_inplace(logits: np.ndarray, D: int, u: float) -> int:
    """The draw of :func:`samplers.targets.factor_graph.sample_logits` (same arithmetic, same
    result) with D instead of 2D exponentials; overwrites ``logits[:D]`` with the weights."""
    m = logits[0]
    for v in range(1, D):
        if logits[v] > m:
            m = logits[v]
    z = 0.0
    for v in range(D):
        w = np.exp(logits[v] - m)
        logits[v] = w
        z += w
    acc = 0.0
    target = u * z
    for v in range(D):
        acc += logits[v]
        if target < acc:
            return v
    return D - 1


@njit(cache=True, inline="always")
def _pg_update(
    fg: FactorGraph, x, prob, alias, Lam, arate, buf, cnt, touched, logits, i: int, rng, mutant: int
):
    """Body of :func:`poisson_gibbs_step`, inlined into the chain loop (a non-inlined call per
    iteration passes ~20 arrays with NRT reference counting: ~15% of an iteration here).

    ``arate[f] = lambda M_f / L`` (so L phi / (lambda M_f) = phi / arate[f]). Random stream (as the
    plain composition of ``draw_candidates``/``keep``/``sample_logits``): B ~ Poisson, one stream
    (uniforms 0..B-1 = alias slots, B..2B-1 = thinning coins), one Generator uniform for x_i.
    Performance: factor helpers inlined, no slices, phi_f(x) evaluated only when the coin does not
    decide without it, one index computation per kept factor for its D values, log1p skipped for
    phi = 0 (log1p(0) = 0 exactly), D exponentials for the final draw. ``n_evals`` counts the
    evaluations actually made."""
    p0 = fg.var_ptr[i]
    n_loc = fg.var_ptr[i + 1] - p0
    lam_i = Lam[i] + (1.0 if mutant == MUT_RATE_PLUS_ONE else 0.0)
    B = rng.poisson(lam_i)
    st = new_stream(rng)
    if B > buf.shape[0]:
        buf = np.empty(2 * B, dtype=np.int64)
    pf = fg.M.shape[0] >= PREFETCH_MIN_FACTORS
    for b in range(B):
        k = alias_slot(prob, alias, p0, n_loc, uniform(st, b))
        buf[b] = k
        if pf:
            f = fg.var_fac[p0 + k]
            prefetch1(arate, f)  # the coin pass reads arate[f], M[f] of every candidate
            prefetch1(fg.M, f)
            prefetch1(fg.tab_ptr, f)  # and the index arrays of phi_f / factor_slice
            prefetch1(fg.fac_ptr, f)
    nt = 0
    kept = 0
    nphi = 0
    for b in range(B):
        k = buf[b]
        f = fg.var_fac[p0 + k]
        if mutant == MUT_THIN_WRONG:
            nphi += 1
            ok = coin(st, B, b) * fg.M[f] < factor_value(fg, f, x)  # drops the lambda M_f / L part
        else:
            # samplers.poisson_minibatch.keep: u (a + M) < a + phi. Since phi >= 0, u (a + M) < a
            # decides "keep" without phi: the factor is evaluated only otherwise (probability
            # M / (a + M) = L / (lambda + L)); same uniform, same decision as always evaluating.
            a = arate[f]
            t = coin(st, B, b) * (a + fg.M[f])
            if t < a:
                ok = True
            else:
                nphi += 1
                ok = t < a + factor_value(fg, f, x)
        # branch-free count update (the coin is unpredictable; a branch here serialises the
        # independent table loads of successive candidates); touched has deg + 1 slots
        okv = 1 if ok else 0
        c = cnt[k]
        touched[nt] = k
        nt += okv * (c == 0)
        cnt[k] = c + okv
        kept += okv
    D = fg.card[i]
    for v in range(D):
        logits[v] = 0.0
    for t in range(nt if pf else 0):  # prefetch the D table entries of every kept factor
        base, stride = factor_slice(fg, fg.var_fac[p0 + touched[t]], x, i)
        for v in range(D):
            prefetch1(fg.tables, base + v * stride)
    for t in range(nt):
        k = touched[t]
        c = cnt[k]
        cnt[k] = 0
        if mutant == MUT_NO_MULTIPLICITY:
            c = 1
        f = fg.var_fac[p0 + k]
        a = arate[f]
        base, stride = factor_slice(fg, f, x, i)
        for v in range(D):
            phv = fg.tables[base + v * stride]
            if phv > 0.0:
                logits[v] += c * math.log1p(phv / a)
    x[i] = sample_softmax_inplace(logits, D, rng.random())
    return nphi + D * nt, B, kept, buf


@njit(cache=True)
def poisson_gibbs_step(
    fg: FactorGraph, x, prob, alias, Lam, arate, buf, cnt, touched, logits, i: int, rng, mutant: int
):
    """Update variable ``i`` (Alg. 2). Returns ``(n_evals, B, kept, buf)``; ``buf`` may be regrown.
    ``arate[f] = lambda M_f / L`` (so L phi / (lambda M_f) = phi / arate[f])."""
    return _pg_update(fg, x, prob, alias, Lam, arate, buf, cnt, touched, logits, i, rng, mutant)


@njit(cache=True)
def poisson_gibbs_sample(
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
    acc = np.ones(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    bs = np.zeros(n_iter, dtype=np.int64)
    ks = np.zeros(n_iter, dtype=np.int64)
    for it in range(n_iter):
        i = rng.integers(0, fg.n)
        ne, B, kept, buf = _pg_update(
            fg, x, prob, alias, Lam, arate, buf, cnt, touched, logits, i, rng, mutant
        )
        nev[it] = ne
        bs[it] = B
        ks[it] = kept
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = x
    return samples, acc, nev, bs, ks


def poisson_gibbs_tables(fg: FactorGraph, lam: float, L: float | None = None):
    """(prob, alias, Lam, arate, bufsize) for minibatch parameter ``lam`` (Alg. 4 pre-computation)."""
    if not (np.isfinite(lam) and lam > 0):
        raise ValueError(f"lambda must be finite and > 0, got {lam!r}")
    L = local_max_energy(fg) if L is None else float(L)
    if not L > 0:
        raise ValueError("the graph has L = 0 (all factors constant); nothing to minibatch")
    prob, alias, Msum = build_local_tables(fg, 1.0)
    Lam = (lam / L + 1.0) * Msum
    arate = lam * fg.M / L
    return prob, alias, Lam, arate, candidate_buffer_for(float(Lam.max())).shape[0]
