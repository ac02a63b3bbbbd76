"""Exact transition matrices of the Poisson-minibatching Gibbs family on tiny factor graphs, and the
njit repeat loops that drive the real kernels' ``*_step`` for kernel-vs-matrix G-tests.

Independent of the kernels: the matrices are built with NumPy from the factor TABLES read as C-ordered
arrays (verify.enumerate.factor_graph_log_joint convention) and from the Poisson count distributions
enumerated with a certified truncation (verify.enumerate.enumerate_poisson_counts: the neglected mass
is computed from exact Poisson CDFs and reported; it is put on the diagonal).

* Poisson-Gibbs (Zhang & De Sa 2019 Alg. 2): P_i[x, x_{i<-v}] = E_s[softmax_v(sum_f s_f log(1 +
  phi_f(x_{i<-v}) / a_f))], s_f ~ Poisson(a_f + phi_f(x)) independent over A[i], a_f = lambda M_f / L.
* MGPMH (reconstruction of De Sa, Chen & Wong 2018): s_f ~ Poisson(a_f) (state-independent), eps_v = sum s_f
  phi_f(x_{i<-v}) / a_f, proposal softmax(eps), acceptance min(1, exp(dU + eps_{x_i} - eps_v)).
* Poisson-MH (Zhang & De Sa 2019 App. D, Thm. 2) on a 1-D lattice with a +-1 random-walk proposal.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.special import logsumexp

from samplers.kernels import doublemin_gibbs as DM
from samplers.kernels import mgpmh as MG
from samplers.kernels import min_gibbs as MI
from samplers.kernels import poisson_gibbs as PG
from samplers.targets.factor_graph import FactorGraph, factor_value
from verify.enumerate import enumerate_poisson_counts, factor_graph_log_joint, state_index


# ============================================================================ table helpers (NumPy)
def _factor_tables(fg: FactorGraph) -> list[tuple[np.ndarray, np.ndarray]]:
    """[(vars, table as an ndarray over those vars)] read C-ordered from ``fg.tables``."""
    out = []
    for f in range(fg.M.shape[0]):
        vs = fg.fac_vars[fg.fac_ptr[f] : fg.fac_ptr[f + 1]]
        tab = fg.tables[fg.tab_ptr[f] : fg.tab_ptr[f + 1]].reshape([int(fg.card[v]) for v in vs])
        out.append((vs, tab))
    return out


def _phi(tabs, f: int, x: np.ndarray) -> float:
    vs, tab = tabs[f]
    return float(tab[tuple(int(x[v]) for v in vs)])


def _local_factors(fg: FactorGraph, i: int) -> np.ndarray:
    """A[i] from the factor variable lists (not from the kernels' CSR)."""
    return np.array(
        [f for f in range(fg.M.shape[0]) if i in fg.fac_vars[fg.fac_ptr[f] : fg.fac_ptr[f + 1]]],
        dtype=np.int64,
    )


def local_max_energy_np(fg: FactorGraph) -> float:
    return float(max(fg.M[_local_factors(fg, i)].sum() for i in range(fg.n)))


# ============================================================================ exact matrices
def poisson_gibbs_matrix(
    fg: FactorGraph, lam: float, L: float | None = None, tail: float = 1e-12
) -> tuple[np.ndarray, np.ndarray, float]:
    """(P, log pi, max neglected Poisson mass) of random-scan Poisson-Gibbs."""
    X, U = factor_graph_log_joint(fg)
    S = X.shape[0]
    tabs = _factor_tables(fg)
    L = local_max_energy_np(fg) if L is None else L
    P = np.zeros((S, S))
    worst = 0.0
    for i in range(fg.n):
        Af = _local_factors(fg, i)
        a = lam * fg.M[Af] / L
        D = int(fg.card[i])
        for s in range(S):
            x = X[s]
            Y = np.repeat(x[None, :], D, axis=0)
            Y[:, i] = np.arange(D)
            js = state_index(fg.card, Y)
            rates = a + np.array([_phi(tabs, f, x) for f in Af])
            en = enumerate_poisson_counts(rates, tail=tail)
            W = np.array(
                [[np.log1p(_phi(tabs, f, Y[v]) / a[k]) for v in range(D)] for k, f in enumerate(Af)]
            )  # (|A_i|, D)
            lg = en.counts @ W
            ps = np.exp(lg - logsumexp(lg, axis=1, keepdims=True))
            row = en.probs @ ps
            P[s, js] += row / fg.n
            P[s, s] += en.neglected / fg.n
            worst = max(worst, en.neglected)
    return P, U, worst


def mgpmh_matrix(
    fg: FactorGraph, lam: float, L: float | None = None, tail: float = 1e-12, correct: bool = True
) -> tuple[np.ndarray, np.ndarray, float]:
    """(P, log pi, max neglected mass) of random-scan MGPMH (reconstruction); ``correct=False``:
    the biased chain that accepts every minibatch-Gibbs proposal."""
    X, U = factor_graph_log_joint(fg)
    S = X.shape[0]
    tabs = _factor_tables(fg)
    L = local_max_energy_np(fg) if L is None else L
    P = np.zeros((S, S))
    worst = 0.0
    for i in range(fg.n):
        Af = _local_factors(fg, i)
        a = lam * fg.M[Af] / L
        en = enumerate_poisson_counts(a, tail=tail)
        worst = max(worst, en.neglected)
        D = int(fg.card[i])
        for s in range(S):
            x = X[s]
            Y = np.repeat(x[None, :], D, axis=0)
            Y[:, i] = np.arange(D)
            js = state_index(fg.card, Y)
            W = np.array([[_phi(tabs, f, Y[v]) / a[k] for v in range(D)] for k, f in enumerate(Af)])
            eps = en.counts @ W  # (K, D)
            q = np.exp(eps - logsumexp(eps, axis=1, keepdims=True))
            xi = int(x[i])
            dU = U[js] - U[s]
            logr = dU[None, :] + eps[:, [xi]] - eps
            acc = np.exp(np.minimum(0.0, logr)) if correct else np.ones_like(logr)
            move = en.probs @ (q * acc)
            move[xi] = 0.0
            P[s, js] += move / fg.n
            P[s, s] += (1.0 - move.sum() - en.neglected) / fg.n + en.neglected / fg.n
    return P, U, worst


def mgpmh_proposal_matrix(fg: FactorGraph, lam: float) -> np.ndarray:
    """Exact matrix of MGPMH without its MH correction (a biased variant)."""
    return mgpmh_matrix(fg, lam, correct=False)[0]


def poisson_mh_lattice_matrix(
    phi: np.ndarray, M: np.ndarray, lam: float, tail: float = 1e-12
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Poisson-MH (Zhang & De Sa 2019 App. D) on states 0..S-1 with N factors ``phi`` (N, S) in [0, M],
    proposal +-1 w.p. 1/2 each (moves off the lattice rejected), L = sum M (global).
    Returns (P_poisson_mh, P_mh, log pi)."""
    N, S = phi.shape
    L = float(M.sum())
    a = lam * M / L
    U = phi.sum(axis=0)
    P = np.zeros((S, S))
    Q = np.zeros((S, S))
    for x in range(S):
        en = enumerate_poisson_counts(a + phi[:, x], tail=tail)
        for y in (x - 1, x + 1):
            if 0 <= y < S:
                logr = en.counts @ (np.log1p(phi[:, y] / a) - np.log1p(phi[:, x] / a))
                P[x, y] = 0.5 * float(en.probs @ np.exp(np.minimum(0.0, logr)))
                Q[x, y] = 0.5 * min(1.0, float(np.exp(U[y] - U[x])))
        P[x, x] = 1.0 - P[x].sum()
        Q[x, x] = 1.0 - Q[x].sum()
    return P, Q, U


# ============================================================================ njit repeat loops
@njit(cache=True)
def repeat_poisson_gibbs_step(
    fg: FactorGraph, x0, prob, alias, Lam, arate, bufsize: int, rng, reps: int, mutant: int
):
    """``reps`` independent one-step random-scan transitions of ``poisson_gibbs_step`` from x0."""
    x, prob, alias, Lam, arate, buf, cnt, touched, logits = PG.poisson_gibbs_init(
        fg, x0, prob, alias, Lam, arate, bufsize
    )
    out = np.empty((reps, fg.n), dtype=np.int64)
    for r in range(reps):
        x[:] = x0
        i = rng.integers(0, fg.n)
        _, _, _, buf = PG.poisson_gibbs_step(
            fg, x, prob, alias, Lam, arate, buf, cnt, touched, logits, i, rng, mutant
        )
        out[r] = x
    return out


@njit(cache=True)
def repeat_mgpmh_step(
    fg: FactorGraph, x0, prob, alias, Lam, arate, bufsize: int, rng, reps: int, mutant: int
):
    x, prob, alias, Lam, arate, buf, cnt, touched, logits = MG.mgpmh_init(
        fg, x0, prob, alias, Lam, arate, bufsize
    )
    out = np.empty((reps, fg.n), dtype=np.int64)
    for r in range(reps):
        x[:] = x0
        i = rng.integers(0, fg.n)
        _, _, _, buf = MG.mgpmh_step(
            fg, x, prob, alias, Lam, arate, buf, cnt, touched, logits, i, rng, mutant
        )
        out[r] = x
    return out


@njit(cache=True)
def _tilted_estimate(fg: FactorGraph, x, grate, rng) -> float:
    """eps ~ pi_bar(eps | x): counts s_f ~ Poisson(grate_f + phi_f(x)) over ALL factors (the
    exp(eps)-tilt of the Poisson estimator), eps = sum_f s_f log(1 + phi_f(x) / grate_f). O(F)."""
    e = 0.0
    for f in range(fg.M.shape[0]):
        if grate[f] > 0.0:
            phi = factor_value(fg, f, x)
            s = rng.poisson(grate[f] + phi)
            e += s * np.log1p(phi / grate[f])
    return e


@njit(cache=True)
def stationary_start_min_gibbs(
    fg: FactorGraph, X0, gprob, galias, grate, glam: float, n_steps: int, rng, mutant: int
):
    """From exact augmented-stationary draws (x ~ pi given as rows of X0, eps ~ tilted), run
    ``n_steps`` MIN-Gibbs steps; the final x must again be distributed as pi."""
    reps = X0.shape[0]
    x, eps, gprob, galias, grate, logits = MI.min_gibbs_init(fg, X0[0], gprob, galias, grate)
    out = np.empty((reps, fg.n), dtype=np.int64)
    for r in range(reps):
        x[:] = X0[r]
        eps[0] = _tilted_estimate(fg, x, grate, rng)
        for _ in range(n_steps):
            i = rng.integers(0, fg.n)
            MI.min_gibbs_step(fg, x, eps, gprob, galias, grate, logits, glam, i, rng, mutant)
        out[r] = x
    return out


@njit(cache=True)
def stationary_start_doublemin(
    fg: FactorGraph,
    X0,
    prob,
    alias,
    Lam,
    arate,
    bufsize: int,
    gprob,
    galias,
    grate,
    glam: float,
    n_steps: int,
    rng,
    mutant: int,
):
    reps = X0.shape[0]
    st = DM.doublemin_gibbs_init(fg, X0[0], prob, alias, Lam, arate, bufsize, gprob, galias, grate)
    x, eps, prob, alias, Lam, arate, buf, cnt, touched, logits, gprob, galias, grate = st
    out = np.empty((reps, fg.n), dtype=np.int64)
    for r in range(reps):
        x[:] = X0[r]
        eps[0] = _tilted_estimate(fg, x, grate, rng)
        for _ in range(n_steps):
            i = rng.integers(0, fg.n)
            _, _, _, _, buf = DM.doublemin_gibbs_step(
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
        out[r] = x
    return out
