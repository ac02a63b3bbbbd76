"""Exact transition matrices of the exact-minibatch-MH family on finite state spaces (NumPy only).

Written from the formulas of Yuan & Wang 2024 (Alg. 2-6; App. D), independently of the kernels:
densities come from :mod:`verify.densities` (a second implementation of the targets), proposal
probabilities are re-derived here, and expectations over the Poisson counts are computed by enumerating
the counts ``s in {0..K_1} x ... x {0..K_N}``. Truncation is certified: ``min(1, r)``, proposal
probabilities and all entries lie in [0, 1], so every entry built from a truncated expectation is off by
at most ``P(exists i: s_i > K_i) <= sum_i P(Poi(rate_i) > K_i) <= tail`` (``tail`` = 1e-12 by default,
K_i chosen per rate with SciPy's exact Poisson survival function); the bound is returned with each matrix.

State spaces: the lattice of a ``tiny_grid`` problem (``meta["grid"]``, spacing ``h``); proposals that
leave the support/lattice are rejected (the kernels do the same). Kernels (rows = from, cols = to):

* PoissonMH, RW lattice: ``P(t, t') = q(t, t') E_{s ~ P_t}[min(1, r_s)]``.
* TunaMH, RW lattice: ``s ~ prod Poi(lam c_i/C + phi_i(t, t'))``, ``lam = chi C^2 h^2``.
* Poisson-MALA / Poisson-Barker with lattice Langevin / lattice Barker proposals (Alg. 2 is valid for
  any proposal family): ``P(t, t') = E_s[q_s(t, t') min(1, r_s)]`` with the gradient linear in s.
* Exchange on an Ising-parameter grid: ``E_{S(omega) ~ p_{t'}^{(x)m}}`` by enumeration of all spin states.
* Tuna-SGLD with the lattice Langevin proposal: the uniform K-batch omega_1 enumerated over all K-subsets,
  the TunaMH counts omega_2 (independent of omega_1) enumerated as above, proposal ratio with g_B(t').
* For Lemma 1 / the gap bounds: the idealised chain ``p_ideal`` (exact MH with ``q_ideal = E_s q_s``) and
  ``p_MwG``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from samplers.targets.tall import TallData
from verify import densities as D
from verify import enumerate as E


# ----------------------------------------------------------------------------- Poisson enumeration
@dataclass
class CountGrid:
    """Enumerated count vectors ``S`` (n, N) with probabilities ``w`` (n,), truncation mass ``tail``."""

    S: np.ndarray
    w: np.ndarray
    tail: float


def poisson_grid(rates: np.ndarray, tail: float = 1e-12, max_size: int = 4_000_000) -> CountGrid:
    """Product of Poisson(rate_i) truncated with certified neglected mass <= ``tail``
    (:func:`verify.enumerate.enumerate_poisson_counts`)."""
    en = E.enumerate_poisson_counts(np.asarray(rates, dtype=np.float64), tail, max_size)
    return CountGrid(en.counts.astype(np.float64), en.probs, en.neglected)


# ----------------------------------------------------------------------------- state space helpers
class Lattice:
    """Index of lattice points ``lo + k h`` (per coordinate) inside the support."""

    def __init__(self, grid: np.ndarray, lo: float, h: float):
        self.grid = np.asarray(grid, dtype=np.float64)
        self.lo = float(lo)
        self.h = float(h)
        self.index = {self.key(p): a for a, p in enumerate(self.grid)}

    def key(self, p: np.ndarray) -> tuple[int, ...]:
        return tuple(int(v) for v in np.round((np.asarray(p) - self.lo) / self.h))

    def find(self, p: np.ndarray) -> int:
        return self.index.get(self.key(p), -1)

    def __len__(self) -> int:
        return self.grid.shape[0]


def stationary_on(t: TallData, lat: Lattice) -> np.ndarray:
    """Exact target restricted to the lattice: ``pi ∝ exp(log prior + sum ll_i)``."""
    lp = D.log_post(t, lat.grid)
    w = np.exp(lp - lp.max())
    return w / w.sum()


def _fill_diag(P: np.ndarray) -> np.ndarray:
    np.fill_diagonal(P, 0.0)
    np.fill_diagonal(P, 1.0 - P.sum(axis=1))
    return P


def _rw_moves(d: int, h: float) -> list[tuple[np.ndarray, float]]:
    """Lattice random walk: one uniform coordinate, +-h with probability 1/2 each."""
    out = []
    for j in range(d):
        for s in (1.0, -1.0):
            e = np.zeros(d)
            e[j] = s * h
            out.append((e, 1.0 / (2 * d)))
    return out


# ----------------------------------------------------------------------------- PoissonMH / TunaMH
def poisson_mh_matrix(
    t: TallData, lat: Lattice, lam: float, *, variant: str = "aux", tail: float = 1e-12
) -> tuple[np.ndarray, float]:
    """PoissonMH (``variant="aux"``) or the exact MH chain with the same proposal (``"ideal"``,
    = p_MwG = p_ideal since PoissonMH has no omega_1). Returns ``(P, truncation bound)``."""
    L = float(t.M.sum())
    a = lam * t.M / L
    S = len(lat)
    P = np.zeros((S, S))
    phi = D.phi_terms(t, lat.grid)  # (S, N)
    lpost = D.log_post(t, lat.grid)
    lprior = D.log_prior(t, lat.grid)  # the prior ratio is exact in the kernel's acceptance
    err = 0.0
    for x in range(S):
        th = lat.grid[x]
        cg = poisson_grid(a + phi[x], tail) if variant == "aux" else None
        if cg is not None:
            err = max(err, cg.tail)
        for e, q in _rw_moves(lat.grid.shape[1], lat.h):
            y = lat.find(th + e)
            if y < 0:
                continue
            if variant == "ideal":
                P[x, y] += q * min(1.0, np.exp(lpost[y] - lpost[x]))
                continue
            logrho = np.log((a + phi[y]) / (a + phi[x]))
            lr = cg.S @ logrho + (lprior[y] - lprior[x])
            P[x, y] += q * float(cg.w @ np.minimum(1.0, np.exp(np.minimum(lr, 0.0))))
    return _fill_diag(P), err


def tuna_mh_matrix(
    t: TallData, lat: Lattice, chi: float, *, variant: str = "aux", tail: float = 1e-12
) -> tuple[np.ndarray, float]:
    """TunaMH with the lattice random walk (M(t, t') = h for every move)."""
    C = float(t.c.sum())
    S = len(lat)
    P = np.zeros((S, S))
    ll = D.loglik_terms(t, lat.grid)
    lpost = D.log_post(t, lat.grid)
    lprior = D.log_prior(t, lat.grid)
    err = 0.0
    Md = lat.h
    lam = chi * C * C * Md * Md
    a = lam * t.c / C
    for x in range(S):
        th = lat.grid[x]
        for e, q in _rw_moves(lat.grid.shape[1], lat.h):
            y = lat.find(th + e)
            if y < 0:
                continue
            if variant == "ideal":
                P[x, y] += q * min(1.0, np.exp(lpost[y] - lpost[x]))
                continue
            du = ll[x] - ll[y]  # U(t') - U(t)
            ph = 0.5 * du + 0.5 * t.c * Md
            cg = poisson_grid(a + ph, tail)
            err = max(err, cg.tail)
            logrho = np.log((a + t.c * Md - ph) / (a + ph))
            lr = cg.S @ logrho + (lprior[y] - lprior[x])
            P[x, y] += q * float(cg.w @ np.minimum(1.0, np.exp(np.minimum(lr, 0.0))))
    return _fill_diag(P), err


# ----------------------------------------------------------------------------- gradient proposals
def _lattice_langevin_logp(k: np.ndarray, h: float, sigma: float, g: np.ndarray, K: int) -> np.ndarray:
    """log P(offset k h | g) per coordinate, vectorised over g (…,) and k (…,)."""
    ks = np.arange(-K, K + 1) * h
    mu = 0.5 * sigma * sigma * g
    logits = -((ks[None, :] - mu.reshape(-1, 1)) ** 2) / (2 * sigma * sigma)
    lz = np.logaddexp.reduce(logits, axis=1)
    val = -((k.reshape(-1) * h - mu.reshape(-1)) ** 2) / (2 * sigma * sigma)
    return (val - lz).reshape(np.shape(g))


def _log_q(kind: str, delta: np.ndarray, g: np.ndarray, sigma: float, h: float, K: int) -> np.ndarray:
    """log q_s(t, t + delta) for gradients g (n, d) and one displacement delta (d,): (n,)."""
    if kind == "barker":
        # lattice Barker: +-h with P(+h) = 1 / (1 + exp(-g h)); q = prod 1/(1 + exp(-g_j delta_j))
        return -np.logaddexp(0.0, -g * delta[None, :]).sum(axis=1)
    k = np.round(delta / h).astype(int)
    out = np.zeros(g.shape[0])
    for j in range(g.shape[1]):
        out += _lattice_langevin_logp(np.full(g.shape[0], k[j]), h, sigma, g[:, j], K)
    return out


def _displacements(kind: str, d: int, h: float, K: int) -> list[np.ndarray]:
    if kind == "barker":
        return [np.array(c) * h for c in itertools.product((-1.0, 1.0), repeat=d)]
    return [np.array(c, dtype=float) * h for c in itertools.product(range(-K, K + 1), repeat=d)]


def poisson_grad_matrices(
    t: TallData, lat: Lattice, lam: float, kind: str, sigma: float, K: int, tail: float = 1e-12
) -> dict[str, np.ndarray | float]:
    """Poisson-MALA (``kind="mala"``, lattice Langevin) / Poisson-Barker (``"barker"``, lattice Barker).

    Returns ``{"aux": P_aux (= P_MwG), "ideal": P_ideal, "tail": bound}``; the surrogate gradient at
    ``t`` for counts s is ``G(t) s`` with ``G_ji = d_j ll_i(t) / (lam M_i/L + phi_i(t))`` (flat/Gaussian
    prior gradient added)."""
    L = float(t.M.sum())
    a = lam * t.M / L
    S = len(lat)
    d = lat.grid.shape[1]
    phi = D.phi_terms(t, lat.grid)
    grad = D.loglik_grad_terms(t, lat.grid)  # (S, N, d)
    pgrad = -t.prior_prec[None, :] * (lat.grid - t.prior_mean[None, :])
    lpost = D.log_post(t, lat.grid)
    Paux = np.zeros((S, S))
    Qid = np.zeros((S, S))  # q_ideal(x, y) for y on the lattice (off-lattice mass = rejection)
    err = 0.0
    disp = _displacements(kind, d, lat.h, K)
    grids = [poisson_grid(a + phi[x], tail) for x in range(S)]
    for x in range(S):
        th = lat.grid[x]
        cg = grids[x]
        err = max(err, cg.tail)
        rate_x = a + phi[x]
        gx = pgrad[x][None, :] + cg.S @ (grad[x] / rate_x[:, None])  # (n, d)
        for e in disp:
            if not np.any(e):
                continue
            y = lat.find(th + e)
            if y < 0:  # off the lattice / support: rejected, no entry (the row's rest goes to the diagonal)
                continue
            lqf = _log_q(kind, e, gx, sigma, lat.h, K)
            Qid[x, y] += float(cg.w @ np.exp(lqf))
            rate_y = a + phi[y]
            gy = pgrad[y][None, :] + cg.S @ (grad[y] / rate_y[:, None])
            lqr = _log_q(kind, -e, gy, sigma, lat.h, K)
            # full log[pi(t') P_t'(s)] - log[pi(t) P_t(s)] (no use of the exp(sum phi) cancellation)
            lr = lpost[y] - lpost[x] + cg.S @ np.log(rate_y / rate_x) - (rate_y - rate_x).sum() + lqr - lqf
            Paux[x, y] += float(cg.w @ (np.exp(lqf) * np.minimum(1.0, np.exp(np.minimum(lr, 0.0)))))
    Pid = np.zeros((S, S))
    for x in range(S):
        for y in range(S):
            if x != y and Qid[x, y] > 0:
                Pid[x, y] = Qid[x, y] * min(1.0, np.exp(lpost[y] - lpost[x]) * Qid[y, x] / Qid[x, y])
    return {"aux": _fill_diag(Paux), "ideal": _fill_diag(Pid), "tail": err}


def k_subsets(N: int, K: int) -> list[np.ndarray]:
    """All size-K subsets of {0..N-1} (the law of the uniform minibatch omega_1 of Alg. 3)."""
    if not 1 <= K <= N:
        raise ValueError(f"need 1 <= K <= N, got K={K}, N={N}")
    return [np.array(c, dtype=np.int64) for c in itertools.combinations(range(N), K)]


def _tuna_counts_logrho(t: TallData, ll_x: np.ndarray, ll_y: np.ndarray, Md: float, chi: float, tail: float):
    """TunaMH auxiliary law for the move x -> y (Alg. 6): s_i ~ Poi(lam c_i/C + phi_i) with
    ``phi_i = (U_i(y) - U_i(x))/2 + c_i Md/2`` clipped to [0, c_i Md], ``lam = chi C^2 Md^2``; returns the
    count grid and ``log((lam c_i/C + c_i Md - phi_i) / (lam c_i/C + phi_i))``."""
    C = float(t.c.sum())
    lam = chi * C * C * Md * Md
    a = lam * t.c / C
    cm = t.c * Md
    ph = np.clip(0.5 * (ll_x - ll_y) + 0.5 * cm, 0.0, cm)
    cg = poisson_grid(a + ph, tail)
    return cg, np.log((a + cm - ph) / (a + ph))


def tuna_sgld_matrix(
    t: TallData,
    lat: Lattice,
    chi: float,
    batch: int,
    sigma: float,
    K: int,
    *,
    drift: str = "paper",
    reverse_grad: str = "proposal",
    tail: float = 1e-12,
) -> tuple[np.ndarray, float]:
    """Tuna-SGLD (Yuan & Wang 2024 Alg. 3) with the lattice Langevin proposal (offsets k h, |k| <= K, per
    coordinate).

    ``P(x, y) = C(N, batch)^-1 sum_B q_B(x, y) E_{s ~ Tuna(x, y)}[min(1, r_{B, s})]`` with
    ``g_B(t) = grad log prior + (N/batch) sum_{i in B} grad ll_i(t)`` (``drift="normalized"``:
    (N/batch) 2 g/||g||, the authors' code),
    ``log r = log prior(y)/prior(x) + sum_i s_i log rho_i + log q_B(y, x) - log q_B(x, y)`` and ``q_B(y, x)``
    uses ``g_B(y)`` (the same batch B). ``reverse_grad="current"`` builds the matrix of the broken variant
    that uses ``g_B(x)`` in the reverse density (to measure the mutant's distance). Returns ``(P, bound)``."""
    if drift not in ("paper", "normalized") or reverse_grad not in ("proposal", "current"):
        raise ValueError("drift must be paper|normalized, reverse_grad proposal|current")
    N = t.X.shape[0]
    S = len(lat)
    d = lat.grid.shape[1]
    subsets = k_subsets(N, batch)
    ll = D.loglik_terms(t, lat.grid)  # (S, N)
    lgrad = D.loglik_grad_terms(t, lat.grid)  # (S, N, d)
    pgrad = -t.prior_prec[None, :] * (lat.grid - t.prior_mean[None, :])
    lprior = D.log_prior(t, lat.grid)
    G = np.array([pgrad + (N / batch) * lgrad[:, B, :].sum(axis=1) for B in subsets])  # (nB, S, d)
    if drift == "normalized":
        nrm = np.linalg.norm(G, axis=2, keepdims=True)
        G = np.where(nrm > 0, (N / batch) * 2.0 * G / np.where(nrm > 0, nrm, 1.0), G)
    P = np.zeros((S, S))
    err = 0.0
    for x in range(S):
        th = lat.grid[x]
        for e in _displacements("mala", d, lat.h, K):
            if not np.any(e):
                continue
            y = lat.find(th + e)
            if y < 0:
                continue
            cg, logrho = _tuna_counts_logrho(t, ll[x], ll[y], float(np.linalg.norm(e)), chi, tail)
            err = max(err, cg.tail)
            lqf = _log_q("mala", e, G[:, x, :], sigma, lat.h, K)  # (nB,)
            grev = G[:, y, :] if reverse_grad == "proposal" else G[:, x, :]
            lqr = _log_q("mala", -e, grev, sigma, lat.h, K)
            lr = lprior[y] - lprior[x] + (cg.S @ logrho)[None, :] + (lqr - lqf)[:, None]  # (nB, n)
            acc = np.minimum(1.0, np.exp(np.minimum(lr, 0.0))) @ cg.w
            P[x, y] += float(np.mean(np.exp(lqf) * acc))
    return _fill_diag(P), err


# ----------------------------------------------------------------------------- exchange
def ising_stat_distribution(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Brute force over all 2^(rows cols) spin states: values of S and their counts."""
    n = rows * cols
    if n > 20:
        raise ValueError("brute-force enumeration limited to 20 spins")
    edges = [(r * cols + c, r * cols + c + 1) for r in range(rows) for c in range(cols - 1)]
    edges += [(r * cols + c, (r + 1) * cols + c) for r in range(rows - 1) for c in range(cols)]
    E = np.array(edges)
    states = np.array(list(itertools.product((-1, 1), repeat=n)))
    Svals = (states[:, E[:, 0]] * states[:, E[:, 1]]).sum(axis=1)
    v, c = np.unique(Svals, return_counts=True)
    return v.astype(float), c.astype(float)


def _stat_pmf(levels: np.ndarray, counts: np.ndarray, theta: float, m: int):
    """Distribution of sum of m i.i.d. S(omega), omega ~ p_theta (levels are integers)."""
    lw = np.log(counts) + theta * levels
    p = np.exp(lw - lw.max())
    p /= p.sum()
    off = int(levels.min())
    base = np.zeros(int(levels.max()) - off + 1)
    base[(levels - off).astype(int)] = p
    dist = np.array([1.0])
    for _ in range(m):
        dist = np.convolve(dist, base)
    vals = m * off + np.arange(dist.shape[0])
    return vals.astype(float), dist


def exchange_matrices(rows: int, cols: int, s_data: float, m: int, grid: np.ndarray) -> dict[str, np.ndarray]:
    """Exchange with the lattice random walk on ``grid`` (uniform prior on it): P_aux, P_ideal, pi,
    and ``dtv[x, y] = d_TV(p_{grid x}, p_{grid y})`` of the m-fold auxiliary laws (Prop. 3)."""
    levels, counts = ising_stat_distribution(rows, cols)
    G = grid.shape[0]
    lZ = np.array([np.logaddexp.reduce(np.log(counts) + th * levels) for th in grid])
    lpost = grid * s_data - m * lZ
    pi = np.exp(lpost - lpost.max())
    pi /= pi.sum()
    pmfs = [_stat_pmf(levels, counts, th, m) for th in grid]
    Paux = np.zeros((G, G))
    Pid = np.zeros((G, G))
    for x in range(G):
        for y in (x - 1, x + 1):
            if 0 <= y < G:
                vals, p = pmfs[y]
                lr = (grid[y] - grid[x]) * (s_data - vals)
                Paux[x, y] = 0.5 * float(p @ np.minimum(1.0, np.exp(np.minimum(lr, 0.0))))
                Pid[x, y] = 0.5 * min(1.0, np.exp(lpost[y] - lpost[x]))
    dtv = np.zeros((G, G))
    for x in range(G):
        for y in range(G):
            dtv[x, y] = 0.5 * np.abs(pmfs[x][1] - pmfs[y][1]).sum()
    return {"aux": _fill_diag(Paux), "ideal": _fill_diag(Pid), "pi": pi, "dtv": dtv}
