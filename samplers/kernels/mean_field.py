"""Naive mean field with damping D on a discrete factor graph (Chen et al. 2016 §4.3 baseline; MLaPP §21.3,
PMTK meanFieldIsingGrid.m).

q_i <- (1 - D) q_i + D softmax_v( sum_{f in A[i]} E_{q_-i}[phi_f(x_{i<-v}, x_-i)] ).
For the Ising denoising model (spins s = +-1, pairwise J s_i s_j, Gaussian unary) this is PMTK's
mu_i <- (1-D) mu_i + D tanh(J sum_j mu_j + y_i / sigma^2) with mu = 2 q(+1) - 1.
Update order ``SEQUENTIAL`` (in place, 0..n-1, Gauss-Seidel) or ``PARALLEL`` (Jacobi: all sites from
the previous sweep). One iteration = one sweep; the recorded "sample" of sweep t is the mean label
sum_v v q_i(v) (= q_i(1) for binary sites); ``n_evals`` = factor-table entries read.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.targets.factor_graph import FactorGraph

SEQUENTIAL, PARALLEL = 0, 1


@njit(cache=True)
def mean_field_init(fg: FactorGraph, q0: np.ndarray):
    """``q0``: (n, Kmax) marginals (rows sum to 1 over the first card[i] entries)."""
    q = q0.copy()
    q_old = q0.copy()
    return q, q_old


@njit(cache=True)
def mf_field(fg: FactorGraph, q: np.ndarray, i: int, acc: np.ndarray) -> int:
    """acc[v] = sum_{f in A[i]} E_q[phi_f | x_i = v]; returns table entries read."""
    K = fg.card[i]
    for v in range(K):
        acc[v] = 0.0
    ne = 0
    for kk in range(fg.var_ptr[i], fg.var_ptr[i + 1]):
        f = fg.var_fac[kk]
        a, b = fg.fac_ptr[f], fg.fac_ptr[f + 1]
        size = fg.tab_ptr[f + 1] - fg.tab_ptr[f]
        for t in range(size):
            wgt = 1.0
            vi = 0
            for k in range(a, b):
                var = fg.fac_vars[k]
                val = (t // fg.fac_stride[k]) % fg.card[var]
                if var == i:
                    vi = val
                else:
                    wgt *= q[var, val]
            acc[vi] += wgt * fg.tables[fg.tab_ptr[f] + t]
        ne += size
    return ne


@njit(cache=True)
def _softmax_damped(q_row: np.ndarray, acc: np.ndarray, K: int, D: float, out: np.ndarray) -> None:
    m = acc[0]
    for v in range(1, K):
        if acc[v] > m:
            m = acc[v]
    z = 0.0
    for v in range(K):
        z += np.exp(acc[v] - m)
    for v in range(K):
        out[v] = (1.0 - D) * q_row[v] + D * np.exp(acc[v] - m) / z


@njit(cache=True)
def mean_field_step(fg: FactorGraph, q, q_old, D: float, order: int, acc, new) -> int:
    """One damped sweep; returns table entries read."""
    ne = 0
    if order == PARALLEL:
        q_old[:] = q
        for i in range(fg.n):
            K = fg.card[i]
            ne += mf_field(fg, q_old, i, acc)
            _softmax_damped(q_old[i], acc, K, D, new)
            for v in range(K):
                q[i, v] = new[v]
    else:
        for i in range(fg.n):
            K = fg.card[i]
            ne += mf_field(fg, q, i, acc)
            _softmax_damped(q[i], acc, K, D, new)
            for v in range(K):
                q[i, v] = new[v]
    return ne


@njit(cache=True)
def mean_field_sample(fg: FactorGraph, q, q_old, n_iter: int, D: float, order: int, rng, thin: int):
    """``n_iter`` sweeps; rows = mean labels sum_v v q_i(v) after every ``thin``-th sweep."""
    samples = np.empty((n_iter // thin, fg.n))
    acc_ok = np.ones(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    K = fg.card.max()
    acc = np.empty(K)
    new = np.empty(K)
    for it in range(n_iter):
        nev[it] = mean_field_step(fg, q, q_old, D, order, acc, new)
        if (it + 1) % thin == 0:
            r = (it + 1) // thin - 1
            for i in range(fg.n):
                s = 0.0
                for v in range(fg.card[i]):
                    s += v * q[i, v]
                samples[r, i] = s
    return samples, acc_ok, nev
