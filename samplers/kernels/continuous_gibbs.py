"""Gibbs samplers for continuous variables x_i in [a, b] (Zhang & De Sa 2019 §3, Alg. 3, App. C.1 Alg. 5,
§4.2).

One kernel, six methods (``method``):

* ``GIBBS_ITS`` / ``PGITS`` (Alg. 5): degree-m Chebyshev interpolant f~ of exp(U_v - max) from U at the
  m + 1 Chebyshev points, CDF by polynomial integration, bisection inversion, then the MH correction
  min(1, exp(U_v) f~(x_i) / (exp(U_{x_i}) f~(v))) with the exact (minibatch) energy U.
* ``GIBBS_DA`` / ``PGDA`` (Alg. 3): degree-m interpolant U~ of U (m + 1 energy evaluations), then the
  degree-k interpolant f~ of exp(U~ - max) (k + 1 polynomial evaluations, no factor evaluations),
  same CDF / inversion / MH correction.
* ``GIBBS_REJ`` / ``PG_REJ``: rejection sampling with proposal w * Uniform[a, b]: accept v with
  probability exp(U_v - E), E = envelope - ``log_offset``. Envelope: Gibbs sum_{A[i]} M_f; PG
  sum_S s_f log(1 + M_f / a_f) (log prior <= 0). ``log_offset`` > 0 is the paper's "tuned w" (it can
  break the envelope, i.e. bias the draw); at most ``max_steps`` proposals, after which x_i stays.

"Gibbs" variants use the full local energy U_v = sum_{f in A[i]} phi_f(x_{i<-v}) (+ log prior); "PG"
variants the Poisson-minibatch energy U_v = sum_S s_f log(1 + phi_f(x_{i<-v}) / a_f) (+ log prior),
a_f = lambda M_f / L, with s drawn by the shared Poisson-thinning sampler (Alg. 4). The Gibbs-ITS/DA
variants keep the MH correction (the paper does not say; with it they are exact).

The interpolant f~ the proposal is drawn from is first raised until it is provably positive on all of
[a, b] (:func:`certify_positive`), so the bisection samples exactly the density f~ / int f~, and the MH
correction rejects whenever f~(x_i) <= 0 (ratio <= 0).

Per iteration: n_evals = factor evaluations (B thinning evaluations + (#energy evaluations) x |S| or
|A[i]|); ``trace_0`` = B, ``trace_1`` = energy evaluations (rejection: proposals) per step,
``trace_2`` = |S| distinct kept factors (PG) or |A[i]|.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.chebyshev import (
    cheb_coeffs,
    cheb_eval,
    cheb_eval_t,
    cheb_integral,
    cheb_invert_cdf,
    cheb_nodes,
    guard_positive,
)
from samplers.poisson_minibatch import draw_candidates, keep
from samplers.targets import tall
from samplers.targets.continuous_spin import (
    SPIN,
    ContinuousModel,
    local_offset,
    local_phi,
    log_prior_c,
    n_local,
)

GIBBS_ITS, GIBBS_DA, PGITS, PGDA, GIBBS_REJ, PG_REJ = 0, 1, 2, 3, 4, 5
METHOD_IDS = {
    "gibbs_its": GIBBS_ITS,
    "gibbs_da": GIBBS_DA,
    "pgits": PGITS,
    "pgda": PGDA,
    "gibbs_rejection": GIBBS_REJ,
    "pg_rejection": PG_REJ,
}
MUT_NONE, MUT_NO_CORRECTION, MUT_GRID_GUARD = 0, 1, 2
# MUT_GRID_GUARD: the proposal only raised to be positive on a uniform t-grid (it can dip below 0 between
# grid points) and a move accepted whenever f~(x_i) <= 0, the kernel before the certified proposal
POSITIVE_GRID_PER_DEGREE = 8  # theta-grid intervals per polynomial degree in certify_positive
POSITIVE_FLOOR = 1e-6  # the proposal is raised to >= this fraction of its grid maximum


@njit(cache=True)
def certify_positive(c, n: int, per: int, rel: float) -> float:
    """Make the interpolant p(t) = sum_{k<n} c_k T_k(t) provably >= ``rel`` x (its maximum on the grid)
    on all of [-1, 1] by raising c_0; returns the certified lower bound of p after the shift (> 0, or
    not finite if the coefficients are not).

    Not in the paper, whose theory assumes a (1 +- C)-accurate interpolant; a low-degree interpolant of
    a steep exp(U) dips below 0. Certificate: with t = cos(theta), g(theta) = p(cos theta) =
    sum c_k cos(k theta) has |g''| <= S2 = sum k^2 |c_k|, so on each interval of a uniform theta-grid
    with spacing h, g >= min(g at its ends) - h^2 S2 / 8. The grid has ``per`` x deg intervals, so it
    contains the interpolation nodes cos(pi j / deg) (where p equals the node values, max 1 here). The
    proposal density is this shifted polynomial everywhere (forward and reverse), so the MH correction
    stays exact, and the CDF is strictly increasing, so bisection inverts it."""
    deg = n - 1 if n > 1 else 1
    ng = per * deg
    mn = np.inf
    mx = -np.inf
    for j in range(ng + 1):
        f = cheb_eval_t(c, n, math.cos(math.pi * j / ng))
        if f < mn:
            mn = f
        if f > mx:
            mx = f
    s2 = 0.0
    for k in range(1, n):
        s2 += k * k * abs(c[k])
    h = math.pi / ng
    lb = mn - 0.125 * h * h * s2
    floor = rel * mx if mx > 0.0 else rel
    if lb < floor:
        c[0] += floor - lb
        return floor
    return lb


@njit(cache=True)
def _is_pg(method: int) -> bool:
    return method == PGITS or method == PGDA or method == PG_REJ


@njit(cache=True)
def _spin_cond_energy(w, nbr, x, v: float, off: int, nl: int, pg: bool, touched, tcount, nt: int, arate):
    """:func:`cond_energy` of the SPIN model written out on its arrays (phi_k = w_k (v x_nbr(k) + 1), no
    log prior): the same sums in the same order, without a call per factor."""
    e = 0.0
    if pg:
        for t in range(nt):
            k = off + touched[t]
            e += tcount[t] * math.log1p(w[k] * (v * x[nbr[k]] + 1.0) / arate[k])
    else:
        for k in range(off, off + nl):
            e += w[k] * (v * x[nbr[k]] + 1.0)
    return e


@njit(cache=True)
def _mixture_phi(X, shift, s2: float, beta: float, t0: float, t1: float, k: int) -> float:
    """tall.phi_i of the MIXTURE kind at theta = (t0, t1), the same arithmetic, on the arrays."""
    yi = X[k, 0]
    a = yi - t0
    b = yi - t0 - t1
    la = -0.5 * a * a / s2
    lb = -0.5 * b * b / s2
    mm = max(la, lb)
    val = (
        mm + math.log(0.5 * math.exp(la - mm) + 0.5 * math.exp(lb - mm)) - 0.5 * math.log(2.0 * math.pi * s2)
    )
    return beta * val + shift[k]


@njit(cache=True)
def _mixture_energy(X, shift, s2, beta, t0, t1, off, pg, touched, tcount, nt, arate) -> float:
    """The data part of :func:`cond_energy` for the §4.3 mixture (TALL, MIXTURE), same sums, same order."""
    e = 0.0
    if pg:
        for t in range(nt):
            k = off + touched[t]
            e += tcount[t] * math.log1p(_mixture_phi(X, shift, s2, beta, t0, t1, k) / arate[k])
    else:
        for k in range(off, off + X.shape[0]):
            e += _mixture_phi(X, shift, s2, beta, t0, t1, k)
    return e


@njit(cache=True)
def cond_energy(m: ContinuousModel, x, i: int, v: float, pg: bool, touched, tcount, nt: int, arate) -> float:
    """Conditional (minibatch if ``pg``) energy of x_{i<-v}; x is restored."""
    if m.kind == SPIN:
        return _spin_cond_energy(
            m.w, m.nbr, x, v, local_offset(m, i), n_local(m, i), pg, touched, tcount, nt, arate
        )
    old = x[i]
    x[i] = v
    e = log_prior_c(m, x)
    off = local_offset(m, i)
    if m.tall.kind == tall.MIXTURE:
        t_ = m.tall
        e += _mixture_energy(t_.X, t_.shift, t_.nu, t_.beta, x[0], x[1], off, pg, touched, tcount, nt, arate)
        x[i] = old
        return e
    if pg:
        for t in range(nt):
            k = off + touched[t]
            e += tcount[t] * math.log1p(local_phi(m, i, k, x) / arate[k])
    else:
        for kl in range(n_local(m, i)):
            e += local_phi(m, i, off + kl, x)
    x[i] = old
    return e


@njit(cache=True)
def continuous_gibbs_init(
    m: ContinuousModel, x0: np.ndarray, prob, alias, Lam, arate, Msum, bufsize: int, maxdeg: int
):
    x = x0.copy()
    nl = 1
    for i in range(m.n):
        c = n_local(m, i)
        if c > nl:
            nl = c
    buf = np.empty(bufsize, dtype=np.int64)
    cnt = np.zeros(nl, dtype=np.int64)
    touched = np.zeros(nl, dtype=np.int64)
    tcount = np.zeros(nl, dtype=np.int64)
    nodes = np.empty(maxdeg + 1)
    vals = np.empty(maxdeg + 1)
    c1 = np.empty(maxdeg + 2)
    c2 = np.empty(maxdeg + 2)
    G = np.empty(maxdeg + 3)
    return x, prob, alias, Lam, arate, Msum, buf, cnt, touched, tcount, nodes, vals, c1, c2, G


@njit(cache=True)
def continuous_gibbs_step(
    m: ContinuousModel,
    x,
    prob,
    alias,
    Lam,
    arate,
    Msum,
    buf,
    cnt,
    touched,
    tcount,
    nodes,
    vals,
    c1,
    c2,
    G,
    i: int,
    rng,
    method: int,
    deg_m: int,
    deg_k: int,
    log_offset: float,
    max_steps: int,
    mutant: int,
):
    """Update x_i. Returns ``(accepted, n_evals, B, n_energy, n_S, buf)``."""
    a = m.lo
    b = m.hi
    off = local_offset(m, i)
    nl = n_local(m, i)
    pg = _is_pg(method)
    ne = 0
    B = 0
    nt = 0
    if pg:
        B, buf, st = draw_candidates(prob[off : off + nl], alias[off : off + nl], Lam[i], rng, buf)
        spin = m.kind == SPIN
        mix = (not spin) and m.tall.kind == tall.MIXTURE
        w = m.w
        nbr = m.nbr
        tX = m.tall.X
        tsh = m.tall.shift
        ts2 = m.tall.nu
        tbeta = m.tall.beta
        xi0 = x[i]
        for bb in range(B):
            kl = buf[bb]
            k = off + kl
            if spin:
                phi = w[k] * (xi0 * x[nbr[k]] + 1.0)
            elif mix:
                phi = _mixture_phi(tX, tsh, ts2, tbeta, x[0], x[1], k)
            else:
                phi = local_phi(m, i, k, x)
            if keep(st, B, bb, arate[k], phi, m.M[k]):
                if cnt[kl] == 0:
                    touched[nt] = kl
                    nt += 1
                cnt[kl] += 1
        for t in range(nt):
            tcount[t] = cnt[touched[t]]
            cnt[touched[t]] = 0
        ne = B
        per = nt
    else:
        per = nl
    # ------------------------------------------------------------------ rejection sampling
    if method == GIBBS_REJ or method == PG_REJ:
        if pg:
            E = 0.0
            for t in range(nt):
                k = off + touched[t]
                E += tcount[t] * math.log1p(m.M[k] / arate[k])
        else:
            E = Msum[i]
        E -= log_offset
        steps = 0
        while steps < max_steps:
            steps += 1
            v = a + (b - a) * rng.random()
            e = cond_energy(m, x, i, v, pg, touched, tcount, nt, arate)
            ne += per
            if math.log(rng.random()) < e - E:
                x[i] = v
                return True, ne, B, steps, per, buf
        return False, ne, B, steps, per, buf
    # ------------------------------------------------------------------ Chebyshev ITS / DA
    cheb_nodes(deg_m, a, b, nodes)
    for j in range(deg_m + 1):
        vals[j] = cond_energy(m, x, i, nodes[j], pg, touched, tcount, nt, arate)
    ne += (deg_m + 1) * per
    if method == GIBBS_ITS or method == PGITS:
        mx = vals[0]
        for j in range(1, deg_m + 1):
            mx = max(mx, vals[j])
        for j in range(deg_m + 1):
            vals[j] = math.exp(vals[j] - mx)
        cheb_coeffs(vals, deg_m, c2)
        nf = deg_m + 1
    else:
        cheb_coeffs(vals, deg_m, c1)
        cheb_nodes(deg_k, a, b, nodes)
        for j in range(deg_k + 1):
            vals[j] = cheb_eval(c1, deg_m + 1, nodes[j], a, b)
        mx = vals[0]
        for j in range(1, deg_k + 1):
            mx = max(mx, vals[j])
        for j in range(deg_k + 1):
            vals[j] = math.exp(vals[j] - mx)
        cheb_coeffs(vals, deg_k, c2)
        nf = deg_k + 1
    n_en = deg_m + 3
    if mutant == MUT_GRID_GUARD:
        guard_positive(c2, nf, 8 * nf + 1, POSITIVE_FLOOR)
    elif not certify_positive(c2, nf, POSITIVE_GRID_PER_DEGREE, POSITIVE_FLOOR) > 0.0:
        # no certified positive proposal (non-finite energies): stay (a valid, symmetric move)
        return False, ne, B, deg_m + 1, per, buf
    cheb_integral(c2, nf, G)
    v = cheb_invert_cdf(G, nf + 1, rng.random(), a, b, 60)
    xi = x[i]
    ev = cond_energy(m, x, i, v, pg, touched, tcount, nt, arate)
    ex = cond_energy(m, x, i, xi, pg, touched, tcount, nt, arate)
    ne += 2 * per
    if mutant == MUT_NO_CORRECTION:
        x[i] = v
        return True, ne, B, n_en, per, buf
    fv = cheb_eval(c2, nf, v, a, b)
    fx = cheb_eval(c2, nf, xi, a, b)
    if mutant == MUT_GRID_GUARD and fv > 0.0 and fx <= 0.0:
        x[i] = v
        return True, ne, B, n_en, per, buf
    if fv <= 0.0 or fx <= 0.0:
        # q(x_i) <= 0 makes the MH ratio <= 0: reject (certify_positive rules both out; kept as a guard)
        return False, ne, B, n_en, per, buf
    logr = ev - ex + math.log(fx) - math.log(fv)
    if logr >= 0.0 or rng.random() < math.exp(logr):
        x[i] = v
        return True, ne, B, n_en, per, buf
    return False, ne, B, n_en, per, buf


@njit(cache=True)
def continuous_gibbs_sample(
    m: ContinuousModel,
    x,
    prob,
    alias,
    Lam,
    arate,
    Msum,
    buf,
    cnt,
    touched,
    tcount,
    nodes,
    vals,
    c1,
    c2,
    G,
    n_iter: int,
    method: int,
    deg_m: int,
    deg_k: int,
    log_offset: float,
    max_steps: int,
    mutant: int,
    rng,
    thin: int,
):
    samples = np.empty((n_iter // thin, m.n))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    bs = np.zeros(n_iter, dtype=np.int64)
    steps = np.zeros(n_iter, dtype=np.int64)
    ns = np.zeros(n_iter, dtype=np.int64)
    for it in range(n_iter):
        i = rng.integers(0, m.n)
        a_, ne, B, st, per, buf = continuous_gibbs_step(
            m,
            x,
            prob,
            alias,
            Lam,
            arate,
            Msum,
            buf,
            cnt,
            touched,
            tcount,
            nodes,
            vals,
            c1,
            c2,
            G,
            i,
            rng,
            method,
            deg_m,
            deg_k,
            log_offset,
            max_steps,
            mutant,
        )
        acc[it] = a_
        nev[it] = ne
        bs[it] = B
        steps[it] = st
        ns[it] = per
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = x
    return samples, acc, nev, bs, steps, ns


def continuous_tables(m: ContinuousModel, lam: float, L: float):
    """(prob, alias, Lam, arate, Msum, bufsize): Alg. 4 pre-computation for every variable
    (SPIN: per-variable alias tables over the CSR entries; TALL: one table over the N data)."""
    from samplers.alias import build_alias
    from samplers.targets.continuous_spin import SPIN

    if not (np.isfinite(lam) and lam > 0) or not L > 0:
        raise ValueError("lambda and L must be finite and > 0")
    K = m.M.shape[0]
    prob = np.ones(K)
    alias = np.zeros(K, dtype=np.int64)
    Msum = np.zeros(m.n)
    if m.kind == SPIN:
        for i in range(m.n):
            p0, p1 = int(m.ptr[i]), int(m.ptr[i + 1])
            Msum[i] = float(m.M[p0:p1].sum())
            if p1 > p0 and Msum[i] > 0:
                prob[p0:p1], alias[p0:p1] = build_alias(np.ascontiguousarray(m.M[p0:p1]))
            else:
                alias[p0:p1] = np.arange(p1 - p0)
    else:
        prob, alias = build_alias(np.ascontiguousarray(m.M))
        Msum[:] = float(m.M.sum())
    Lam = (lam / L + 1.0) * Msum
    arate = lam * m.M / L
    bufsize = int(Lam.max() + 12.0 * np.sqrt(Lam.max() + 1.0) + 64)
    return prob, alias, Lam, arate, Msum, bufsize
