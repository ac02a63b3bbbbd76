"""Exact transition matrices of the approximate minibatch MH kernels on enumerable problems.

Built independently of the kernel code (nothing here calls ``samplers.approx.seqtest`` or the
kernels): per-datum log-likelihoods from :mod:`verify.densities` (NumPy), Student-t quantiles from
SciPy, the decision rules re-derived from the papers. For a pair (theta, theta') with log-likelihood
differences l (N,) and k = log p0(t')/p0(t) + log q(t|t')/q(t'|t):

* every ordering of the N data (sampling without replacement: all N! orderings equally likely) is
  enumerated; for one ordering the sequential decision is a function of the threshold mu0 only, and
  the set of mu0 leading to "accept" is a finite union of intervals, so the uniform u (mu0 = (log u -
  k)/N for MH, mu0 = logit(u)/N_i for Gibbs) is integrated exactly;
* MHminibatch: the batch size is a deterministic function of the ordering; given it,
  P(accept) = E[Phi((Delta* + X_corr)/tau)] with X_corr the histogram density of the correction
  table, integrated in closed form per cell (int Phi = z Phi(z) + phi(z)); error = float rounding
  (about 1e-12), the only numerical integration being none;
* AustereMH(nc): the design is piecewise constant in u (nearest |mu_std| grid point), so u is
  integrated exactly piece by piece.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable

import numpy as np
from scipy import special, stats

from verify import densities as D
from verify.enumerate import Lattice, lattice_rw_proposal, make_lattice, mh_matrix_from_acceptance
from verify.markov import normalize_log, stationary, tv

Interval = tuple[float, float]


# ============================================================================ helpers
def _perms(N: int):
    if N > 7:
        raise ValueError(f"enumerating {N}! orderings is too many (N <= 7)")
    return list(itertools.permutations(range(N)))


@functools.lru_cache(maxsize=4096)
def _tcrit(n: int, eps: float) -> float:
    """F^{-1}_{t, n-1}(1 - eps) (eps = 0.5 -> 0)."""
    if n < 2:
        return math.inf
    return float(stats.t.ppf(1.0 - eps, n - 1))


def _mean_sd(x) -> tuple[float, float]:
    """Mean and sample sd (ddof 1) of a short sequence (pure Python: faster than NumPy here)."""
    n = len(x)
    mean = math.fsum(x) / n
    var = math.fsum((v - mean) ** 2 for v in x) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(var)


def ttest_accept_set(
    lp: np.ndarray, N: int, stages: list[int], crit: Callable[[int], float], fpc: bool = True
) -> list[Interval]:
    """mu0-intervals on which the K14 test (data in the order ``lp``) accepts."""
    lo, hi = -math.inf, math.inf  # undecided set
    out: list[Interval] = []
    for n in stages:
        x = lp[:n]
        if n >= N:
            out.append((lo, min(hi, math.fsum(x) / n)))
            return out
        if n < 2:
            continue
        mean, sd = _mean_sd(x)
        s = sd / math.sqrt(n) * (math.sqrt(1.0 - (n - 1) / (N - 1)) if fpc else 1.0)
        if s > 0:
            c = crit(n) * s
            out.append((lo, min(hi, mean - c)))
            lo, hi = max(lo, mean - c), min(hi, mean + c)
        else:
            out.append((lo, min(hi, mean)))
            return out
        if lo >= hi:
            return out
    return out


def _stages_const(N: int, m: int) -> list[int]:
    return [min(j * m, N) for j in range(1, -(-N // m) + 1)]


def _u_measure_mh(iv: Interval, N: int, k: float) -> float:
    a, b = iv
    if not b > a:
        return 0.0
    ua = 0.0 if a == -math.inf else math.exp(min(0.0, N * a + k))
    ub = 1.0 if b == math.inf else math.exp(min(0.0, N * b + k))
    return max(0.0, ub - ua)


def _u_measure_logit(iv: Interval, Ni: int) -> float:
    a, b = iv
    if not b > a:
        return 0.0
    ua = 0.0 if a == -math.inf else float(special.expit(Ni * a))
    ub = 1.0 if b == math.inf else float(special.expit(Ni * b))
    return max(0.0, ub - ua)


# ============================================================================ acceptance probs
def austere_accept(l: np.ndarray, k: float, m: int, eps: float, fpc: bool = True) -> float:
    """P(accept) of the K14 test (Pocock, constant m) for one pair, exact."""
    N = l.size
    st = _stages_const(N, m)
    tot = 0.0
    perms = _perms(N)
    for p in perms:
        for iv in ttest_accept_set([l[i] for i in p], N, st, lambda n: _tcrit(n, eps), fpc):
            tot += _u_measure_mh(iv, N, k)
    return tot / len(perms)


def austere_gibbs_prob1(lf: np.ndarray, m: int, eps: float) -> float:
    """P(x_i <- 1) of austere Gibbs (K14 App. F) for factor differences lf, exact."""
    Ni = lf.size
    if Ni == 0:
        return 0.5
    st = _stages_const(Ni, m)
    tot = 0.0
    perms = _perms(Ni)
    for p in perms:
        for iv in ttest_accept_set([lf[i] for i in p], Ni, st, lambda n: _tcrit(n, eps)):
            tot += _u_measure_logit(iv, Ni)
    return tot / len(perms)


def sublhd_accept(l: np.ndarray, k: float, m: int, gamma: float, p: float, delta: float) -> float:
    """P(accept) of MHSubLhd (B14, empirical Bernstein, C = max |l_i|), exact."""
    N = l.size
    C = float(np.max(np.abs(l)))
    stages = []
    b = min(m, N)
    while True:
        stages.append(b)
        if b >= N:
            break
        b = min(N, max(b + 1, math.ceil(gamma * b)))
    tot = 0.0
    perms = _perms(N)
    for perm in perms:
        lp = l[list(perm)]
        lo, hi = -math.inf, math.inf
        for look, n in enumerate(stages, start=1):
            mean = float(lp[:n].mean())
            if n >= N:
                tot += _u_measure_mh((lo, min(hi, mean)), N, k)
                break
            dk = (p - 1.0) * delta / (p * look**p)
            lg = math.log(3.0 / dk)
            c = float(np.std(lp[:n])) * math.sqrt(2 * lg / n) + 6 * C * lg / n
            tot += _u_measure_mh((lo, min(hi, mean - c)), N, k)
            lo, hi = max(lo, mean - c), min(hi, mean + c)
            if lo >= hi:
                break
    return tot / len(perms)


def _intPhi(z: np.ndarray) -> np.ndarray:
    return z * special.ndtr(z) + np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def barker_corr_prob(
    dstar: float, s2: float, corr_y: np.ndarray, corr_h: float, corr_p: np.ndarray, csig: float = 1.0
) -> float:
    """P(Delta* + X_nc + X_corr > 0), X_nc ~ N(0, csig^2 - s2), X_corr uniform on each cell
    [y_j - h/2, y_j + h/2] with mass p_j: closed form per cell."""
    tau = math.sqrt(csig * csig - s2)
    za = (dstar + corr_y - 0.5 * corr_h) / tau
    zb = (dstar + corr_y + 0.5 * corr_h) / tau
    return float(np.sum(corr_p * tau / corr_h * (_intPhi(zb) - _intPhi(za))))


def minibatch_accept(l: np.ndarray, k: float, m: int, delta: float, corr, xnc_full: bool = False) -> float:
    """P(accept) of MHminibatch (S17 Alg. 1; exact Barker once all N are used), exact up to
    rounding. ``corr`` has fields y, h, p, sigma. ``xnc_full`` = mutant X_nc ~ N(0, sigma^2)."""
    N = l.size
    lam = N * l
    csig = corr.sigma
    tot = 0.0
    perms = _perms(N)
    for perm in perms:
        lp = lam[list(perm)]
        b = 0
        while True:
            b = min(b + m, N)
            if b >= N:
                tot += float(special.expit(lam.mean() + k))
                break
            if b < 2:
                continue
            x = lp[:b]
            var = float(np.var(x, ddof=1))
            s2 = var / b
            if s2 >= csig * csig:
                continue
            if delta < math.inf:
                z = np.abs(x - x.mean()) / math.sqrt(var) if var > 0 else np.zeros(b)
                if (6.4 * np.mean(z**3) + 2 * np.mean(z)) / math.sqrt(b) > delta:
                    continue
            tot += barker_corr_prob(
                float(x.mean()) + k, 0.0 if xnc_full else s2, corr.y, corr.h, corr.p, csig
            )
            break
    return tot / len(perms)


def nc_accept(l: np.ndarray, k: float, bound: float, table: dict, fpc: bool = True) -> float:
    """P(accept) of AustereMH(nc): design (m, eps) from the exact |mu_std| snapped to the table grid
    (least expected data with E < bound, else least E); u integrated piecewise exactly."""
    N = l.size
    mu = float(l.mean())
    sl = float(l.std())
    grid = table["mu_grid"]
    step = grid[1] - grid[0]
    Kg = grid.size

    def design(kidx: int) -> int:
        E, Pb = table["E"][:, kidx], table["pibar"][:, kidx]
        ok = np.flatnonzero(E < bound)
        if ok.size:
            return int(ok[np.argmin(Pb[ok])])
        return int(np.argmin(E))

    # mu0 breakpoints where the snapped index changes: |mu_std| = (j + 1/2) step
    if sl > 0:
        r = step * sl / math.sqrt(N - 1)
        pieces = []  # (a, b, kidx) in mu0
        edges = [(j + 0.5) * r for j in range(Kg - 1)]
        pieces.append((mu - edges[0], mu + edges[0], 0))
        for j in range(1, Kg - 1):
            pieces.append((mu + edges[j - 1], mu + edges[j], j))
            pieces.append((mu - edges[j], mu - edges[j - 1], j))
        pieces.append((mu + edges[-1], math.inf, Kg - 1))
        pieces.append((-math.inf, mu - edges[-1], Kg - 1))
    else:
        pieces = [(-math.inf, math.inf, Kg - 1)]
    cache: dict[int, list[tuple[Interval, float]]] = {}
    perms = _perms(N)
    tot = 0.0
    for a, b, kidx in pieces:
        d = design(kidx)
        if d not in cache:
            m, e = int(table["m"][d]), float(table["eps"][d])
            st = _stages_const(N, m)
            acc = []
            for p in perms:
                acc += [
                    (iv, 1.0 / len(perms))
                    for iv in ttest_accept_set([l[i] for i in p], N, st, lambda n, e=e: _tcrit(n, e), fpc)
                ]
            cache[d] = acc
        for (x, y), w in cache[d]:
            tot += w * _u_measure_mh((max(a, x), min(b, y)), N, k)
    return tot


# ============================================================================ matrices
class LatticeProblem:
    """Lattice, proposal, log-likelihood table and exact target of a ``tiny_grid`` problem."""

    def __init__(self, problem) -> None:
        meta = problem.meta
        self.model = problem.model
        self.lat: Lattice = make_lattice(meta["grid"], meta["lo"], meta["h"])
        self.Q = lattice_rw_proposal(self.lat)
        self.LL = D.loglik_terms(self.model, self.lat.points)
        self.lprior = D.log_prior(self.model, self.lat.points)
        self.logpi = D.log_post(self.model, self.lat.points)
        self.target = normalize_log(self.logpi)
        self.N = self.LL.shape[1]

    def matrix(self, accept: Callable[[np.ndarray, float], float]) -> np.ndarray:
        """P with A[s, s'] = accept(l, k) for every proposed move s -> s'."""
        S = self.Q.shape[0]
        A = np.zeros((S, S))
        for s in range(S):
            for s2 in np.flatnonzero(self.Q[s] > 0):
                if s2 == s:
                    continue
                A[s, s2] = accept(self.LL[s2] - self.LL[s], float(self.lprior[s2] - self.lprior[s]))
        return mh_matrix_from_acceptance(self.Q, A)

    def exact_mh(self) -> np.ndarray:
        return self.matrix(lambda l, k: min(1.0, math.exp(min(0.0, l.sum() + k))))

    def exact_barker(self) -> np.ndarray:
        return self.matrix(lambda l, k: float(special.expit(l.sum() + k)))


def stationary_tv(P: np.ndarray, target: np.ndarray) -> float:
    """TV distance between the stationary distribution of P and the target."""
    return tv(stationary(P), target)


def dobrushin(P: np.ndarray) -> float:
    """Dobrushin coefficient eta(P) = max_{x, y} TV(P[x], P[y])."""
    diff = np.abs(P[:, None, :] - P[None, :, :]).sum(-1) * 0.5
    return float(diff.max())


def contraction_bound(P0: np.ndarray, Pe: np.ndarray, kmax: int = 200) -> tuple[float, int, float]:
    """K14 Thm 1 / S17 Lemma 5 applied to the k-step kernels (both S0, S_eps stay stationary):
    d_TV(S0, S_eps) <= Delta_k/(1 - eta_k), Delta_k = max_x TV(Pe^k[x], P0^k[x]), eta_k the
    Dobrushin coefficient of P0^k; the best k <= kmax. Returns (bound, k, eta_k)."""
    best = (math.inf, 0, 1.0)
    A, B = np.eye(P0.shape[0]), np.eye(P0.shape[0])
    for kk in range(1, kmax + 1):
        A = A @ P0
        B = B @ Pe
        eta = dobrushin(A)
        if eta < 1.0:
            dk = float(0.5 * np.abs(A - B).sum(1).max())
            b = dk / (1.0 - eta)
            if b < best[0]:
                best = (b, kk, eta)
    return best
