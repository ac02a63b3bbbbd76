"""Exact check of the RJMCMC kernel (K14 §6.3, App. E; :mod:`samplers.kernels.rjmcmc`) on an
enumerable version: D = 3 features (the last a constant), N = 8 data, coefficients on the lattice
{(i + 1/2) h : i = -M..M-1} (h = 0.5, M = 2), so the state space is every non-empty subset gamma with
lattice values on it (sum_k C(3, k) 4^k = 124 states).

The exact matrix is built here independently of the kernel: the target from
:mod:`verify.densities` (logistic per-datum terms) plus the prior written from its formula with
``scipy.special.betaln``; the proposal matrix Q by enumerating every move (type, coordinate, value)
with its probability; the acceptance min(1, pi(y) Q(y, x) / (pi(x) Q(x, y))) from Q itself (the
reverse probability is read off the enumeration, not from a hand-written ratio). The compiled
``rjmcmc_step`` is then G-tested row by row against it (FWER 1e-4), and a mutant that leaves the
birth density q_b out of the birth/death ratio (a wrong dimension-jump proposal ratio) must be
rejected by the same test.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations, product

import numpy as np
from numba import njit
from scipy import special

from samplers.approx.seqtest import full_pass_stats, mu0_of, tcrit_table
from samplers.kernels.rjmcmc import (
    BIRTH,
    DEATH,
    birth_log_density,
    rj_log_prior,
    rj_propose,
    rjmcmc_init,
    rjmcmc_step,
)
from samplers.targets import tall
from verify import approx_matrix as AM
from verify import densities as DN
from verify.empirical import KvMResult, kernel_vs_matrix
from verify.markov import stationary

PAPER = "Korattikara, Chen & Welling 2014 (K14) §6.3, App. E"
D_TINY, N_TINY, H, M = 3, 8, 0.5, 2
LAM, SIG_B, P_BD = 0.3, 0.5, 1.0 / 3.0
TARGET = f"tiny RJ logistic D={D_TINY} N={N_TINY} lattice h={H} M={M} lambda'={LAM} sigma_b={SIG_B}"


class RJLattice:
    """The enumerable RJMCMC problem: states, exact target, proposal and transition matrices."""

    def __init__(self, seed: int = 7, N: int = N_TINY) -> None:
        rng = np.random.default_rng(seed)
        X = np.hstack([rng.standard_normal((N, D_TINY - 1)), np.ones((N, 1))])
        y = (rng.random(N) < 0.5).astype(np.float64)
        self.N = N
        self.model = tall.logistic_regression(X, y)
        self.grid = (np.arange(2 * M) - M + 0.5) * H
        states = []
        for k in range(1, D_TINY + 1):
            for sub in combinations(range(D_TINY), k):
                for vals in product(self.grid, repeat=k):
                    th = np.zeros(D_TINY)
                    th[list(sub)] = vals
                    states.append(th)
        self.states = np.array(states)
        self.S = len(states)
        self.index = {self.key(s): i for i, s in enumerate(self.states)}
        self._lookup = np.full(9**D_TINY, len(states), dtype=np.int64)  # base-9 code -> row
        self._lookup[self._code(self.states)] = np.arange(len(states))
        self.log_pi = self._log_target()
        self.Q = self._proposal()
        self.P = self._transition()

    @staticmethod
    def key(theta: np.ndarray) -> tuple:
        return tuple(np.round(np.asarray(theta) / H * 2).astype(int))  # 2 theta / h: odd ints or 0

    @staticmethod
    def _code(X: np.ndarray) -> np.ndarray:
        r = np.clip(np.round(np.asarray(X) / H * 2).astype(np.int64) + 4, 0, 8)  # 2 theta / h in -4..4
        return r @ (9 ** np.arange(D_TINY))

    def codes(self, X: np.ndarray) -> np.ndarray:
        """Row index of every row of X (S = not a state)."""
        off = np.abs(np.round(np.asarray(X) / H * 2) - np.asarray(X) / H * 2).max(axis=1) > 1e-9
        off |= np.abs(X).max(axis=1) > (M - 0.5) * H + 1e-12
        out = self._lookup[self._code(X)]
        out[off] = self.S
        return out

    def _log_target(self) -> np.ndarray:
        """sum_i ll_i - k log||beta||_1 + k log lambda' + log B(k, D - k + 1) (K14 §6.3, nu integrated)."""
        self.LL = DN.loglik_terms(self.model, self.states)  # (S, N) per-datum terms
        k = (self.states != 0).sum(axis=1)
        l1 = np.abs(self.states).sum(axis=1)
        self.log_prior = -k * np.log(l1) + k * math.log(LAM) + special.betaln(k, D_TINY - k + 1)
        return self.LL.sum(axis=1) + self.log_prior

    def _birth_q(self) -> np.ndarray:
        w = np.exp(-0.5 * self.grid**2 / SIG_B**2)
        return w / w.sum()

    def _proposal(self) -> np.ndarray:
        """Q[x, y] = probability that the move proposes y from x (proposals off the lattice range
        are counted on the diagonal: the kernel rejects them)."""
        S, D = self.S, D_TINY
        Q = np.zeros((S, S))
        qb = self._birth_q()
        for x, th in enumerate(self.states):
            act = np.flatnonzero(th != 0)
            ina = np.flatnonzero(th == 0)
            k = act.size
            pb = P_BD if k < D else 0.0
            pd = P_BD if k > 1 else 0.0
            pu = 1.0 - pb - pd
            for j in ina:
                for v, q in zip(self.grid, qb, strict=True):
                    y = th.copy()
                    y[j] = v
                    Q[x, self.index[self.key(y)]] += pb / ina.size * q
            for j in act:
                y = th.copy()
                y[j] = 0.0
                if k > 1:
                    Q[x, self.index[self.key(y)]] += pd / k
                for s in (-H, H):
                    y = th.copy()
                    y[j] += s
                    Q[x, self.index.get(self.key(y), x)] += pu / k * 0.5
        return Q

    def approx_matrix(self, accept) -> np.ndarray:
        """P with acceptance ``accept(l, c)`` of every proposed move x -> y, l = per-datum log-likelihood
        differences, c = log prior ratio + log Q(y, x) / Q(x, y) (the test's mu0 = (log u - c) / N)."""
        Q = self.Q
        P = np.zeros_like(Q)
        for x in range(self.S):
            for y in np.flatnonzero(Q[x] > 0):
                if y == x:
                    continue
                c = self.log_prior[y] - self.log_prior[x] + math.log(Q[y, x]) - math.log(Q[x, y])
                P[x, y] = Q[x, y] * accept(self.LL[y] - self.LL[x], c)
        P[np.arange(self.S), np.arange(self.S)] = 1.0 - P.sum(axis=1)
        return P

    def _transition(self) -> np.ndarray:
        Q, lp = self.Q, self.log_pi
        P = np.zeros_like(Q)
        nz = (Q > 0) & ~np.eye(self.S, dtype=bool)
        xi, yi = np.nonzero(nz)
        with np.errstate(divide="ignore"):
            logr = lp[yi] - lp[xi] + np.log(Q[yi, xi]) - np.log(Q[xi, yi])
        P[xi, yi] = Q[xi, yi] * np.minimum(1.0, np.exp(np.minimum(logr, 0.0)))
        P[np.arange(self.S), np.arange(self.S)] = 1.0 - P.sum(axis=1)
        return P

    def target(self) -> np.ndarray:
        p = np.exp(self.log_pi - self.log_pi.max())
        return p / p.sum()


@lru_cache(maxsize=2)
def tiny_rj(N: int = N_TINY) -> RJLattice:
    return RJLattice(N=N)


# ============================================================================ kernel drivers
@njit(cache=True)
def repeat_rj(t, theta0, log_lam, p_bd, sig_b, h, Mh, bmax, rng, reps):
    """``reps`` one-step transitions of the real kernel (exact test, m = N) from ``theta0``."""
    d = theta0.shape[0]
    N = t.X.shape[0]
    _, perm = rjmcmc_init(t, theta0)
    tc = np.full(N + 1, np.inf)
    out = np.empty((reps, d))
    theta = np.empty(d)
    theta_p = np.empty(d)
    for r in range(reps):
        theta[:] = theta0
        rjmcmc_step(t, theta, perm, log_lam, p_bd, 0.1, sig_b, h, Mh, bmax, N, tc, rng, theta_p)
        out[r] = theta
    return out


@njit(cache=True)
def repeat_rj_mutant(t, theta0, log_lam, p_bd, sig_b, h, Mh, bmax, rng, reps):
    """Mutant: the birth density q_b(beta_j) is left out of the birth / death ratio."""
    d = theta0.shape[0]
    N = t.X.shape[0]
    out = np.empty((reps, d))
    theta_p = np.empty(d)
    for r in range(reps):
        move, lqr = rj_propose(theta0, theta_p, p_bd, 0.1, sig_b, h, Mh, rng)
        out[r] = theta0
        if move < 0:
            continue
        if move == BIRTH or move == DEATH:
            j = 0
            for q in range(d):
                if theta_p[q] != theta0[q]:
                    j = q
            v = theta_p[j] if move == BIRTH else theta0[j]
            qb = birth_log_density(v, sig_b, h, Mh)
            lqr = lqr + qb if move == BIRTH else lqr - qb
        lp_p = rj_log_prior(theta_p, log_lam, bmax)
        if lp_p == -np.inf:
            continue
        u = rng.random()
        mu0 = mu0_of(N, math.log(u), lp_p - rj_log_prior(theta0, log_lam, bmax), lqr)
        mean_l, _, _ = full_pass_stats(t, theta0, theta_p)
        if mean_l > mu0:
            out[r] = theta_p
    return out


@njit(cache=True)
def repeat_rj_austere(t, theta0, log_lam, p_bd, sig_b, h, Mh, bmax, m, tcrit, rng, reps):
    """``reps`` one-step transitions of the real kernel with the K14 sequential test (m, tcrit)."""
    d = theta0.shape[0]
    _, perm = rjmcmc_init(t, theta0)
    out = np.empty((reps, d))
    theta = np.empty(d)
    theta_p = np.empty(d)
    for r in range(reps):
        theta[:] = theta0
        rjmcmc_step(t, theta, perm, log_lam, p_bd, 0.1, sig_b, h, Mh, bmax, m, tcrit, rng, theta_p)
        out[r] = theta
    return out


def _sampler(L: RJLattice, mutant: bool, reps: int, m: int = 0, eps: float = 0.0):
    bmax = (M - 0.5) * H
    tc = tcrit_table(L.N, eps) if m else None

    def f(s: int, rng: np.random.Generator) -> np.ndarray:
        args = (L.model, L.states[s].copy(), math.log(LAM), P_BD, SIG_B, H, M, bmax)
        if m:
            X = repeat_rj_austere(*args, m, tc, rng, reps)
        else:
            X = (repeat_rj_mutant if mutant else repeat_rj)(*args, rng, reps)
        return np.bincount(L.codes(X), minlength=L.S + 1)

    return f


def _row(check: str, res: KvMResult, mutant: str | None = None) -> dict:
    r = res.row(check, PAPER, "rjmcmc_exact", TARGET)
    if mutant is not None:
        r["statistic"] = f"mutant '{mutant}' min row p-value (must be rejected)"
        r["passed"] = not res.passed
    return r


def check_rjmcmc_kvm(quick: bool) -> list[dict]:
    """RJMCMC (exact test) kernel vs the exact matrix over (subset, lattice theta), + mutant; and the
    matrix's invariance (pi P = pi) as a sanity row."""
    L = tiny_rj()
    reps = 4_000 if quick else 20_000
    pi = L.target()
    inv = float(np.abs(pi @ L.P - pi).max())
    st = float(np.abs(stationary(L.P) - pi).sum() / 2)
    rows = [
        {
            "check": "rjmcmc exact matrix leaves the RJ posterior invariant",
            "paper": PAPER,
            "method": "rjmcmc_exact",
            "target": TARGET,
            "statistic": "max |pi P - pi|, TV(stationary(P), pi)",
            "value": max(inv, st),
            "threshold": 1e-10,
            "passed": bool(max(inv, st) < 1e-10),
            "detail": f"{L.S} states (subset x lattice theta), detailed balance by construction",
        }
    ]
    res = kernel_vs_matrix(L.P, _sampler(L, False, reps), reps, 31, name="rjmcmc")
    rows.append(_row("rjmcmc_exact kernel vs exact matrix", res))
    mres = kernel_vs_matrix(L.P, _sampler(L, True, reps), reps, 32, name="rjmcmc mutant")
    rows.append(_row("rjmcmc_exact mutant rejected", mres, mutant="birth density left out of the ratio"))
    return rows


N_APPROX, M_APPROX = 5, 2  # the approximate-test matrix enumerates all N! orders of the data


def check_rjmcmc_austere_kvm(quick: bool) -> list[dict]:
    """rjmcmc_austere (K14 test, m = 2, eps = 0.2) kernel vs its exact matrix on the N = 5 lattice problem
    (every data order enumerated, u integrated exactly: verify.approx_matrix.austere_accept); the exact-test
    matrix as the mutant (must be rejected: the test's decision differs from MH's)."""
    L = tiny_rj(N_APPROX)
    reps = 4_000 if quick else 20_000
    eps = 0.2
    Pe = L.approx_matrix(lambda l, c: AM.austere_accept(l, c, M_APPROX, eps))
    f = _sampler(L, False, reps, M_APPROX, eps)
    res = kernel_vs_matrix(Pe, f, reps, 41, name="rjmcmc_austere")
    r1 = res.row("rjmcmc_austere kernel vs exact matrix", PAPER, "rjmcmc_austere", TARGET + f" N={L.N}")
    mres = kernel_vs_matrix(L.P, f, reps, 41, name="rjmcmc_austere vs MH")
    r2 = mres.row("rjmcmc_austere vs the exact-MH matrix (mutant) rejected", PAPER, "rjmcmc_austere", TARGET)
    r2["statistic"] = "mutant 'exact-MH matrix' min row p-value (must be rejected)"
    r2["passed"] = not mres.passed
    return [r1, r2]


def theory_tv_rjmcmc(quick: bool) -> list[dict]:
    """Exact TV(stationary law, RJ posterior) of rjmcmc_austere vs eps with the K14 Thm 1 bound (N = 5)."""
    from verify.approx_checks import _thm1_row

    L = tiny_rj(N_APPROX)
    pi = L.target()
    rows = []
    for eps in (0.2,) if quick else (0.01, 0.05, 0.1, 0.2, 0.3):
        Pe = L.approx_matrix(lambda l, c, eps=eps: AM.austere_accept(l, c, M_APPROX, eps))
        rows.append(
            _thm1_row(
                "TV(stationary, RJ posterior) of rjmcmc_austere vs eps",
                PAPER,
                "Thm 1",
                f"eps={eps} m={M_APPROX} N={L.N}",
                L.P,
                Pe,
                pi,
            )
        )
    return rows
