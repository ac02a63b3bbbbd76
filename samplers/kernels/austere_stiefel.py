"""Random walks on the orthogonal group for square ICA (Korattikara et al. 2014 §6.2), exact and with the
K14 sequential test, in Numba.

The state theta = vec(W) (row-major, d = D^2) with W orthonormal: K14 whiten the mixtures and sample the
unmixing matrix on the Stiefel manifold V_{D,D} = O(D) under a uniform (Haar) prior, so |det W| = 1 and the
log-likelihood is sum_i sum_j log p(w_j^T x_i), p(y) = 1 / (4 cosh^2(y / 2)) (the ``ICA`` kind of
:mod:`samplers.targets.tall` at an orthonormal W).

Proposal (K14 cite Ouyang 2008's manifold random walk without its details; this is our choice): W' = Q W
with Q = (I - S/2)^{-1} (I + S/2), the Cayley transform of a skew-symmetric S whose D(D-1)/2 upper entries are
iid N(0, sigma^2). Q is orthogonal, so W' stays on the component of W; S and -S have the same law and
Cayley(-S) = Cayley(S)^{-1}, so the proposal density with respect to Haar measure is symmetric,
q(W'|W) = q(W|W'), and with the uniform prior mu0 = log(u) / N.

* ``stiefel_rwm``      exact MH, log pi(W) cached (one ll_i a datum per iteration: n_evals = N);
* ``austere_stiefel``  the K14 test (:func:`samplers.approx.seqtest.seq_ttest`) on l_i = ll_i(W') - ll_i(W).

The Cayley solve (D x D Gauss-Jordan with partial pivoting) works in preallocated buffers; nothing is
allocated per iteration.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from samplers.approx.seqtest import seq_ttest
from samplers.hotloop import ll_one
from samplers.targets.tall import TallData


@njit(cache=True)
def cayley_propose(theta, D: int, sigma: float, rng, A, B, theta_p) -> None:
    """theta_p = vec(Q W), Q = Cayley(S), S skew with N(0, sigma^2) upper entries (A, B: (D, D) work)."""
    for j in range(D):
        for k in range(D):
            A[j, k] = 1.0 if j == k else 0.0
            B[j, k] = A[j, k]
    for j in range(D):
        for k in range(j + 1, D):
            v = 0.5 * sigma * rng.standard_normal()
            # A = I - S/2, B = I + S/2 with S[j, k] = 2v, S[k, j] = -2v
            A[j, k] = -v
            A[k, j] = v
            B[j, k] = v
            B[k, j] = -v
    # solve A Q = B in place (Gauss-Jordan, partial pivoting): B <- A^{-1} B
    for c in range(D):
        p = c
        for r in range(c + 1, D):
            if abs(A[r, c]) > abs(A[p, c]):
                p = r
        if p != c:
            for k in range(D):
                tmp = A[c, k]
                A[c, k] = A[p, k]
                A[p, k] = tmp
                tmp = B[c, k]
                B[c, k] = B[p, k]
                B[p, k] = tmp
        piv = A[c, c]
        for k in range(D):
            A[c, k] /= piv
            B[c, k] /= piv
        for r in range(D):
            if r != c:
                f = A[r, c]
                if f != 0.0:
                    for k in range(D):
                        A[r, k] -= f * A[c, k]
                        B[r, k] -= f * B[c, k]
    for j in range(D):
        for k in range(D):
            s = 0.0
            for q in range(D):
                s += B[j, q] * theta[q * D + k]
            theta_p[j * D + k] = s


@njit(cache=True)
def full_loglik(t: TallData, theta) -> float:
    """sum_i ll_i(theta) over all N data (one pass)."""
    kind, X, y, w, beta, nu = t.kind, t.X, t.y, t.w, t.beta, t.nu
    s = 0.0
    for i in range(X.shape[0]):
        s += ll_one(kind, X, y, w, beta, nu, i, theta)
    return s


@njit(cache=True)
def stiefel_rwm_init(t: TallData, theta0: np.ndarray):
    return theta0.copy(), np.array([full_loglik(t, theta0)])


@njit(cache=True)
def stiefel_rwm_sample(t: TallData, theta, cur, n_iter: int, sigma: float, rng, thin: int):
    d = theta.shape[0]
    D = t.X.shape[1]
    N = t.X.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.full(n_iter, N, dtype=np.int64)
    full = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    A = np.empty((D, D))
    B = np.empty((D, D))
    for it in range(n_iter):
        cayley_propose(theta, D, sigma, rng, A, B, theta_p)
        u = rng.random()
        lp = full_loglik(t, theta_p)
        if math.log(u) < lp - cur[0]:
            theta[:] = theta_p
            cur[0] = lp
            acc[it] = True
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, full


@njit(cache=True)
def austere_stiefel_init(t: TallData, theta0: np.ndarray):
    return theta0.copy(), np.arange(t.X.shape[0])


@njit(cache=True)
def austere_stiefel_sample(
    t: TallData, theta, perm, n_iter: int, sigma: float, m: int, tcrit, rng, thin: int
):
    d = theta.shape[0]
    D = t.X.shape[1]
    N = t.X.shape[0]
    samples = np.empty((n_iter // thin, d))
    acc = np.zeros(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    full = np.zeros(n_iter, dtype=np.int64)
    theta_p = np.empty(d)
    A = np.empty((D, D))
    B = np.empty((D, D))
    for it in range(n_iter):
        cayley_propose(theta, D, sigma, rng, A, B, theta_p)
        mu0 = math.log(rng.random()) / N
        a, n = seq_ttest(t, theta, theta_p, mu0, perm, m, tcrit, rng)
        if a:
            theta[:] = theta_p
        acc[it] = a
        nev[it] = n
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = theta
    return samples, acc, nev, full
