"""Independent computations for the herded-Gibbs checks (Chen et al. 2016 §3, App. A-B).

* :func:`alg1_transcription` — a direct pure-Python transcription of Alg. 1 (weights in a dict keyed
  by (i, x_N(i)), conditionals summed factor by factor from the tables), for the bit-for-bit
  comparison with the compiled kernel.
* Thm 3 / Cor 4 constants: :func:`dobrushin_eta` of the exact sweep kernel, :func:`pi_min`,
  :func:`theorem3_constants` (l, B of eq. 15, lambda, T*, tau*(T)).
* :func:`empirical_joint`, :func:`joint_tv_path` (d_v(P_T^(tau) - pi) on a T grid, Def. 1),
  :func:`loglog_slope`, :func:`envelope`.
* :func:`herd_weight_trace` — njit driver recording the single weight of a one-variable model at every
  update (Lemma 1).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.kernels.herded import HerdIndex, herded_gibbs_step
from samplers.targets.factor_graph import FactorGraph
from verify.enumerate import gibbs_systematic_sweep_matrix, state_index


# ============================================================================ Alg. 1 transcription
def _tables(fg: FactorGraph) -> list[tuple[list[int], np.ndarray]]:
    out = []
    for f in range(fg.M.shape[0]):
        vs = [int(v) for v in fg.fac_vars[fg.fac_ptr[f] : fg.fac_ptr[f + 1]]]
        tab = fg.tables[fg.tab_ptr[f] : fg.tab_ptr[f + 1]].reshape([int(fg.card[v]) for v in vs])
        out.append((vs, tab))
    return out


def alg1_transcription(fg: FactorGraph, x0: np.ndarray, n_sweeps: int):
    """Alg. 1 with the fixed scan 0..n-1 and w^(0) = pi - 1/2 (binary) / p (vector rule, K > 2).

    Returns (states after each sweep (n_sweeps, n), weights dict {(i, x_N(i)): w})."""
    facs = _tables(fg)
    n = fg.n
    A = [[f for f, (vs, _) in enumerate(facs) if i in vs] for i in range(n)]  # factor order = CSR
    # CSR order of the kernel's FactorGraph: factors touching i in increasing factor id
    nbrs = [sorted({v for f in A[i] for v in facs[f][0]} - {i}) for i in range(n)]
    x = [int(v) for v in x0]
    W: dict[tuple[int, tuple[int, ...]], list[float]] = {}
    out = np.empty((n_sweeps, n), dtype=np.int64)
    for t in range(n_sweeps):
        for i in range(n):
            K = int(fg.card[i])
            logits = [0.0] * K
            for f in A[i]:
                vs, tab = facs[f]
                for v in range(K):
                    logits[v] += float(tab[tuple(v if u == i else x[u] for u in vs)])
            m = logits[0]
            for v in range(1, K):
                if logits[v] > m:
                    m = logits[v]
            p = [math.exp(lv - m) for lv in logits]
            z = 0.0
            for pv in p:
                z += pv
            p = [pv / z for pv in p]
            key = (i, tuple(x[j] for j in nbrs[i]))
            if K == 2:
                if key not in W:
                    W[key] = [p[1] - 0.5]
                w = W[key][0]
                xi = 1 if w > 0 else 0  # Step 3
                W[key][0] = w + p[1] - xi  # Step 4
            else:
                if key not in W:
                    W[key] = list(p)
                w = W[key]
                xi = max(range(K), key=lambda k: (w[k], -k))
                for v in range(K):
                    w[v] += p[v]
                w[xi] -= 1.0
            x[i] = xi
        out[t] = x
    return out, W


# ============================================================================ Thm 3 constants
def pi_min(fg: FactorGraph) -> float:
    """Smallest full conditional pi(x_i | x_-i) over all sites, states and values."""
    from verify.enumerate import factor_graph_log_joint

    X, U = factor_graph_log_joint(fg)
    best = 1.0
    for i in range(fg.n):
        K = int(fg.card[i])
        for s in range(X.shape[0]):
            Y = np.repeat(X[s][None, :], K, axis=0)
            Y[:, i] = np.arange(K)
            u = U[state_index(fg.card, Y)]
            p = np.exp(u - u.max())
            best = min(best, float((p / p.sum()).min()))
    return best


def dobrushin_eta(fg: FactorGraph) -> float:
    """eta = max_{x,y} d_v(K(x,.) - K(y,.)) of the systematic sweep kernel K = T_1 ... T_N."""
    P, _ = gibbs_systematic_sweep_matrix(fg)
    S = P.shape[0]
    eta = 0.0
    for a in range(S):
        eta = max(eta, float(0.5 * np.abs(P[a][None, :] - P).sum(axis=1).max()))
    return eta


def theorem3_constants(fg: FactorGraph) -> dict[str, float]:
    """eta, pi_min, l = pi_min^N, B = l + (1 - (2 pi_min)^N) / (1 - 2 pi_min) (eq. 15),
    lambda = 2N(1+eta) / (l (1-eta)), T* = 2B/l."""
    N = fg.n
    eta = dobrushin_eta(fg)
    pm = pi_min(fg)
    l = pm**N
    B = l + (N if abs(1 - 2 * pm) < 1e-15 else (1 - (2 * pm) ** N) / (1 - 2 * pm))
    lam = 2 * N * (1 + eta) / (l * (1 - eta))
    return {"N": N, "eta": eta, "pi_min": pm, "l": l, "B": B, "lambda": lam, "T_star": 2 * B / l}


def tau_star(c: dict[str, float], T: float) -> float:
    """tau*(T) = log_{2/(1+eta)}((1-eta) l T / (4N)) (may be negative: then any tau >= 0 works)."""
    eta, l, N = c["eta"], c["l"], c["N"]
    return math.log((1 - eta) * l * T / (4 * N)) / math.log(2 / (1 + eta))


# ============================================================================ empirical errors
def empirical_joint(states: np.ndarray, card: np.ndarray) -> np.ndarray:
    S = int(np.prod(card))
    return np.bincount(state_index(card, states), minlength=S) / states.shape[0]


def joint_tv_path(seq: np.ndarray, card: np.ndarray, p: np.ndarray, Ts, tau: int = 0) -> np.ndarray:
    """d_v(P_T^(tau) - pi) for each T (seq[k] = X^(kN), k = 0, 1, ...)."""
    idx = state_index(card, seq[tau:])
    S = p.shape[0]
    out = []
    for T in Ts:
        c = np.bincount(idx[: int(T)], minlength=S) / int(T)
        out.append(0.5 * np.abs(c - p).sum())
    return np.asarray(out)


def running_joint_l1(seq: np.ndarray, card: np.ndarray, p: np.ndarray, Ts) -> np.ndarray:
    """||P_T - pi||_1 at the checkpoints Ts (cumulative counts; O(len(seq) + |Ts| S))."""
    idx = state_index(card, seq)
    S = p.shape[0]
    onehot_cum = np.zeros(S)
    out = []
    prev = 0
    for T in Ts:
        onehot_cum += np.bincount(idx[prev : int(T)], minlength=S)
        prev = int(T)
        out.append(np.abs(onehot_cum / T - p).sum())
    return np.asarray(out)


def loglog_slope(Ts, err) -> float:
    """Least-squares slope of log(err) against log(T) (zeros floored at 1e-300)."""
    Ts = np.asarray(Ts, float)
    e = np.maximum(np.asarray(err, float), 1e-300)
    return float(np.polyfit(np.log(Ts), np.log(e), 1)[0])


def envelope(err: np.ndarray) -> np.ndarray:
    """e~_t = max_{tau >= t} e_tau (Fig. 5 caption)."""
    return np.maximum.accumulate(np.asarray(err)[::-1])[::-1]


def log_grid(lo: float, hi: float, per_decade: int = 4) -> np.ndarray:
    k = np.arange(math.floor(math.log10(lo) * per_decade), math.floor(math.log10(hi) * per_decade) + 1)
    g = np.unique(np.round(10.0 ** (k / per_decade)).astype(np.int64))
    return g[(g >= lo) & (g <= hi)]


# ============================================================================ Lemma 1 driver
@njit(cache=True)
def herd_weight_trace(fg: FactorGraph, idx: HerdIndex, x, W, seen, hkeys, fill, n_updates: int, rng):
    """Single-variable model: (x^(t), w^(t) after each update) for t = 1..n_updates."""
    xs = np.empty(n_updates, dtype=np.int64)
    ws = np.empty(n_updates)
    K = fg.card.max()
    logits = np.empty(K)
    p = np.empty(K)
    for t in range(n_updates):
        herded_gibbs_step(fg, idx, x, W, seen, hkeys, fill, 0, 0, rng, logits, p)
        xs[t] = x[0]
        ws[t] = W[0, 0]
    return xs, ws
