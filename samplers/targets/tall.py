"""Tall-data posteriors as data + @njit per-datum functions.

A target is a :class:`TallData` NamedTuple (cacheable by Numba) whose ``kind`` selects the model; the
per-datum formulas of every kind and the one dispatch the kernels call live in
:mod:`samplers.targets.likelihoods` (this module's ``loglik_i`` / ``loglik_grad_i`` / ``loglik_sum`` are
that dispatch on the NamedTuple):

* ``TG``       heterogeneous truncated Gaussian (Yuan & Wang 2024 §5.1, App. F.1)
* ``RLR``      robust (Student-t) linear regression on a ball (Yuan & Wang 2024 §5.2, App. F.2)
* ``LOGISTIC`` Bayesian logistic regression (Yuan & Wang 2024 §5.3, App. F.3; optional Gaussian prior,
  Korattikara et al. 2014)
* ``MIXTURE``  two-component Gaussian mixture with tied means (Welling & Teh 2011; Seita et al. 2017 §6.1;
  Zhang & De Sa 2019 App. D.2), y_i ~ 1/2 N(t1, s2) + 1/2 N(t1 + t2, s2), tempered by ``beta`` (= 1/K)
* ``GAUSS``    Gaussian location model y_i ~ N(theta, I/beta...) used by tests (closed-form posterior)
* ``LINREG``   Gaussian linear regression ll_i = -beta (y_i - x_i^T theta)^2 / (2 noise_var) (noise_var in
  ``nu``); with the Laplace (L1) prior ``prior_l1`` it is the L1-regularised regression of Korattikara et
  al. 2014 §6.4
* ``ICA``      square ICA (Korattikara et al. 2014 §6.2): theta = vec(W) row-major (d = D^2, X = (N, D)
  whitened mixtures), ll_i = beta sum_j log p(w_j^T x_i), p(y) = 1 / (4 cosh^2(y / 2)) (logistic density). The
  global term beta N log|det W| of p(x|W) is NOT per-datum: it is part of :func:`log_prior` (evaluated exactly
  in every MH ratio, as all priors are), with its gradient beta N W^{-T} in :func:`log_prior_grad`.
* ``CUSTOM``   a user-defined model: its per-datum functions are registered for the class of the ``ops``
  field (:mod:`samplers.targets.custom`, docs/targets.md).

Conventions (Yuan & Wang 2024 App. A): log pi(theta) = log prior(theta) + sum_i ll_i(theta) where ``ll_i``
is the (tempered) log-likelihood of datum i. PoissonMH bounds: phi_i = ll_i + shift_i in [0, M_i] on the
support. TunaMH bounds: U_i = -ll_i satisfies |U_i(t') - U_i(t)| <= c_i * M(t, t') with
M(t, t') = ||t' - t||_2 (Lipschitz constants over the convex support; App. F.3 for logistic, the same
mean-value argument for the others). The log prior is evaluated exactly in every kernel (it is O(d)).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from samplers.run import check_positive
from samplers.targets.likelihoods import (  # noqa: F401 - the kinds and helpers, re-exported
    CUSTOM,
    FULL_DATA_FASTMATH,
    GAUSS,
    ICA,
    KIND_NAMES,
    LINREG,
    LOGISTIC,
    MIXTURE,
    RLR,
    RLR_BLOCK,
    RLR_PREFETCH,
    TG,
    _log1pexp,
    _sigmoid,
    check_kind,
    check_ops,
    full_loglik,
    ll_grad_one,
    ll_one,
)
from samplers.targets.model_ops import NO_OPS, NoOps  # noqa: F401 - re-exported

SUPPORT_ALL, SUPPORT_BOX, SUPPORT_BALL = 0, 1, 2


class TallData(NamedTuple):
    """Plain-data description of a tall-data posterior (all fields Numba-typable)."""

    kind: int
    X: np.ndarray  # (N, p) features / observations (TG: y_i; RLR, logistic: x_i; mixture: y_i in col 0)
    y: np.ndarray  # (N,) responses (RLR y_i; logistic label in {0, 1}; unused otherwise)
    w: np.ndarray  # (d,) TG: diagonal of Sigma^{-1}; GAUSS: per-dim precision; else ones
    beta: float  # tempering of the likelihood
    nu: float  # Student-t degrees of freedom (RLR); component variance s2 (MIXTURE)
    prior_mean: np.ndarray  # (d,)
    prior_prec: np.ndarray  # (d,) Gaussian prior precision (all zeros = flat prior)
    support: int  # SUPPORT_ALL / SUPPORT_BOX / SUPPORT_BALL
    lo: float  # box [lo, hi]^d (SUPPORT_BOX)
    hi: float
    R: float  # ball radius (SUPPORT_BALL)
    shift: np.ndarray  # (N,) phi_i = ll_i + shift_i >= 0 on the support
    M: np.ndarray  # (N,) phi_i <= M_i on the support
    c: np.ndarray  # (N,) TunaMH constants, M(t, t') = ||t' - t||_2
    prior_l1: float = 0.0  # Laplace prior: log prior += -prior_l1 * sum_j |theta_j - prior_mean_j|
    ops: tuple = NO_OPS  # CUSTOM kind: the model's parameter NamedTuple (samplers.targets.custom); NoOps else


# ----------------------------------------------------------------------------- per-datum terms
@njit(cache=True)
def loglik_i(t: TallData, i: int, theta: np.ndarray) -> float:
    """Tempered log-likelihood of datum ``i`` (``ll_i``): :func:`samplers.targets.likelihoods.ll_one`."""
    return ll_one(t.kind, t.X, t.y, t.w, t.beta, t.nu, i, theta, t.ops)


@njit(cache=True)
def loglik_grad_i(t: TallData, i: int, theta: np.ndarray, scale: float, out: np.ndarray) -> float:
    """Return ``ll_i(theta)`` and add ``scale * grad ll_i(theta)`` into ``out``
    (:func:`samplers.targets.likelihoods.ll_grad_one`)."""
    return ll_grad_one(t.kind, t.X, t.y, t.w, t.beta, t.nu, i, theta, scale, out, t.ops)


@njit(cache=True)
def phi_i(t: TallData, i: int, theta: np.ndarray) -> float:
    """PoissonMH factor ``phi_i = ll_i + shift_i`` (in ``[0, M_i]`` on the support)."""
    return loglik_i(t, i, theta) + t.shift[i]


# ----------------------------------------------------------------------------- prior and support
@njit(cache=True)
def in_support(t: TallData, theta: np.ndarray) -> bool:
    """Domain check; kernels reject proposals outside the support (as the papers do).

    One pass and one ``return``, no early exit: Numba then pairs and drops the reference counts of
    ``t``'s eight arrays; with a ``return`` inside a loop it kept them, 18 atomic operations costing
    ~190 ns a call, a fifth of a TunaMH iteration at a small batch (docs/performance.md §7.5)."""
    support = t.support
    lo = t.lo
    hi = t.hi
    R = t.R
    ok = True
    s = 0.0
    for j in range(theta.shape[0]):
        x = theta[j]
        ok &= math.isfinite(x)
        if support == SUPPORT_BOX:
            ok &= (x >= lo) & (x <= hi)
        s += x * x
    if support == SUPPORT_BALL:
        ok &= s <= R * R
    return ok


@njit(cache=True)
def log_prior(t: TallData, theta: np.ndarray) -> float:
    """Log prior density (unnormalised) on the support; -inf outside. Gaussian part
    ``-1/2 sum_j prec_j (theta_j - mean_j)^2`` plus, if ``prior_l1 != 0``, the Laplace part
    ``-prior_l1 sum_j |theta_j - mean_j|`` (Korattikara et al. 2014 §6.4). Every field of ``t`` is read up
    front and there is one ``return`` (see :func:`in_support`)."""
    ok = in_support(t, theta)
    pm = t.prior_mean
    pp = t.prior_prec
    l1 = t.prior_l1
    ica = t.kind == ICA
    D = t.X.shape[1]
    scale = t.beta * t.X.shape[0]
    lp = -np.inf
    if ok:
        s = 0.0
        for j in range(theta.shape[0]):
            r = theta[j] - pm[j]
            s += pp[j] * r * r
        if l1 != 0.0:
            a = 0.0
            for j in range(theta.shape[0]):
                a += abs(theta[j] - pm[j])
            s = s + 2.0 * l1 * a
        lp = -0.5 * s
        if ica:
            lp += _ica_logdet_term(theta, D, scale)
    return lp


@njit(cache=True)
def _ica_matrix(t: TallData, theta: np.ndarray) -> np.ndarray:
    """W (D x D, a fresh C-contiguous copy; works for any layout of theta)."""
    return _ica_w(theta, t.X.shape[1])


@njit(cache=True)
def _ica_w(theta: np.ndarray, D: int) -> np.ndarray:
    W = np.empty((D, D))
    for j in range(D):
        for q in range(D):
            W[j, q] = theta[j * D + q]
    return W


@njit(cache=True)
def _ica_logdet_term(theta: np.ndarray, D: int, scale: float) -> float:
    """``scale log|det W|`` (scale = beta N) of the ICA likelihood (global, kept in the prior path);
    -inf if singular. O(D^3) with one D x D temporary."""
    W = _ica_w(theta, D)
    sign, ld = np.linalg.slogdet(W)
    if sign == 0.0 or not np.isfinite(ld):
        return -np.inf
    return scale * ld


@njit(cache=True)
def log_prior_grad(t: TallData, theta: np.ndarray, out: np.ndarray) -> None:
    """Add grad log prior into ``out`` (Laplace part: subgradient ``-prior_l1 sign(r)``, 0 at the kink)."""
    for j in range(theta.shape[0]):
        out[j] -= t.prior_prec[j] * (theta[j] - t.prior_mean[j])
    if t.prior_l1 != 0.0:
        for j in range(theta.shape[0]):
            r = theta[j] - t.prior_mean[j]
            if r > 0.0:
                out[j] -= t.prior_l1
            elif r < 0.0:
                out[j] += t.prior_l1
    if t.kind == ICA:  # grad of beta N log|det W| = beta N W^{-T}
        D = t.X.shape[1]
        Wi = np.linalg.inv(_ica_matrix(t, theta))
        c = t.beta * t.X.shape[0]
        for j in range(D):
            for q in range(D):
                out[j * D + q] += c * Wi[q, j]


@njit(cache=True)
def loglik_sum(t: TallData, theta: np.ndarray) -> float:
    """Full-data log-likelihood (N evaluations): :func:`samplers.targets.likelihoods.full_loglik` (each kind's
    vectorised loop, ``FULL_DATA_FASTMATH``: equal to the sum of :func:`loglik_i` up to rounding)."""
    return full_loglik(t.kind, t.X, t.y, t.w, t.beta, t.nu, theta, theta, False, t.ops)


@njit(cache=True)
def log_post(t: TallData, theta: np.ndarray) -> float:
    """Full-data unnormalised log posterior (N evaluations); -inf outside the support."""
    lp = log_prior(t, theta)
    if lp == -np.inf:
        return lp
    return lp + loglik_sum(t, theta)


@njit(cache=True)
def log_post_grad(t: TallData, theta: np.ndarray, out: np.ndarray) -> float:
    """Full-data log posterior and its gradient (written into ``out``); N evaluations."""
    out[:] = 0.0
    lp = log_prior(t, theta)
    if lp == -np.inf:
        return lp
    log_prior_grad(t, theta, out)
    return lp + full_loglik(t.kind, t.X, t.y, t.w, t.beta, t.nu, theta, out, True, t.ops)


@njit(cache=True)
def grad_estimate(t: TallData, theta: np.ndarray, idx: np.ndarray, nb: int, out: np.ndarray) -> None:
    """SGLD-style unbiased gradient of log posterior from ``idx[:nb]``: prior + (N/nb) sum_B grad ll_i."""
    out[:] = 0.0
    log_prior_grad(t, theta, out)
    scale = t.X.shape[0] / nb
    for k in range(nb):
        loglik_grad_i(t, idx[k], theta, scale, out)


# ----------------------------------------------------------------------------- constructors
def _check_finite(name: str, a: np.ndarray) -> None:
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")


def _make(
    kind, X, y, w, beta, nu, prior_mean, prior_prec, support, lo, hi, R, shift, M, c, prior_l1=0.0, ops=NO_OPS
):
    check_kind(kind)
    check_ops(int(kind), ops)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    for name, a in (("X", X), ("y", y), ("shift", shift), ("M", M), ("c", c)):
        _check_finite(name, np.asarray(a))
    if np.any(np.asarray(M) < 0) or np.any(np.asarray(c) < 0):
        raise ValueError("bounds M_i and c_i must be non-negative")
    return TallData(
        int(kind),
        X,
        y,
        np.ascontiguousarray(w, dtype=np.float64),
        float(beta),
        float(nu),
        np.ascontiguousarray(prior_mean, dtype=np.float64),
        np.ascontiguousarray(prior_prec, dtype=np.float64),
        int(support),
        float(lo),
        float(hi),
        float(R),
        np.ascontiguousarray(shift, dtype=np.float64),
        np.ascontiguousarray(M, dtype=np.float64),
        np.ascontiguousarray(c, dtype=np.float64),
        float(prior_l1),
        ops,
    )


def check_target(t: TallData) -> None:
    """ValueError (one line, naming what is missing) unless ``t``'s kind has per-datum functions: a known
    kind, and for ``CUSTOM`` a registered model with every function (kernel setups call this, so a target
    built by ``_replace`` is checked as well as one from a constructor)."""
    check_kind(t.kind)
    check_ops(int(t.kind), t.ops)


def truncated_gaussian(Y: np.ndarray, sigma2: np.ndarray, beta: float = 1e-5, K: float = 3.0) -> TallData:
    """Heterogeneous truncated Gaussian (Yuan & Wang 2024 App. F.1).

    ``ll_i = -beta/2 (theta - y_i)^T Sigma^{-1} (theta - y_i)``, flat prior on ``[-K, K]^d``;
    ``M_i = beta/2 lambda_max(Sigma^{-1}) sum_j (|y_ij| + K)^2`` and ``shift_i = M_i``;
    TunaMH ``c_i = beta lambda_max(Sigma^{-1}) sqrt(sum_j (|y_ij| + K)^2)`` (sup of ||grad U_i|| on the box).
    """
    Y = np.asarray(Y, dtype=np.float64)
    sigma2 = np.asarray(sigma2, dtype=np.float64)
    if Y.ndim != 2 or sigma2.shape != (Y.shape[1],):
        raise ValueError("Y must be (N, d) and sigma2 (d,)")
    if not np.all(sigma2 > 0):  # NaN fails too
        raise ValueError("sigma2 must be positive")
    check_positive("beta", beta)
    check_positive("K", K)
    prec = 1.0 / sigma2
    lmax = prec.max()
    sq = ((np.abs(Y) + K) ** 2).sum(axis=1)
    M = 0.5 * beta * lmax * sq
    c = beta * lmax * np.sqrt(sq)
    d = Y.shape[1]
    return _make(
        TG,
        Y,
        np.zeros(Y.shape[0]),
        prec,
        beta,
        0.0,
        np.zeros(d),
        np.zeros(d),
        SUPPORT_BOX,
        -K,
        K,
        0.0,
        M.copy(),
        M,
        c,
    )


def make_truncated_gaussian_data(
    rng: np.random.Generator, N: int = 100_000, d: int = 20
) -> tuple[np.ndarray, np.ndarray]:
    """Data recipe of Yuan & Wang 2024 App. F.1: Sigma = diag(linspace(1, 0.05, d)), y_i ~ N(0, Sigma)."""
    sigma2 = np.linspace(1.0, 0.05, d)
    Y = rng.standard_normal((N, d)) * np.sqrt(sigma2)
    return Y, sigma2


def robust_regression(
    X: np.ndarray, y: np.ndarray, beta: float = 1e-4, nu: float = 4.0, R: float = 15.0
) -> TallData:
    """Robust linear regression (Yuan & Wang 2024 App. F.2): Student-t(nu) residuals, flat prior on
    ||theta|| <= R.

    ``M_i = beta (nu+1)/2 log(1 + (|y_i| + R ||x_i||)^2 / nu)``, ``shift_i = M_i``;
    TunaMH ``c_i = beta (nu+1)/(2 sqrt(nu)) ||x_i||`` since ``|r/(nu + r^2)| <= 1/(2 sqrt(nu))``.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError("X must be (N, d) and y (N,)")
    for name, v in (("beta", beta), ("nu", nu), ("R", R)):
        check_positive(name, v)
    xn = np.linalg.norm(X, axis=1)
    M = beta * (nu + 1) / 2 * np.log1p((np.abs(y) + R * xn) ** 2 / nu)
    c = beta * (nu + 1) / (2 * np.sqrt(nu)) * xn
    d = X.shape[1]
    return _make(
        RLR, X, y, np.ones(d), beta, nu, np.zeros(d), np.zeros(d), SUPPORT_BALL, 0.0, 0.0, R, M.copy(), M, c
    )


def make_regression_data(
    rng: np.random.Generator, N: int = 100_000, d: int = 10
) -> tuple[np.ndarray, np.ndarray]:
    """Yuan & Wang 2024 §5.2 recipe: x_i ~ N(0, I_d), y_i = sum_j x_ij + N(0, 1) (theta* = 1)."""
    X = rng.standard_normal((N, d))
    y = X.sum(axis=1) + rng.standard_normal(N)
    return X, y


def logistic_regression(
    X: np.ndarray,
    y: np.ndarray,
    prior_prec: float = 0.0,
    beta: float = 1.0,
    R: float | None = None,
) -> TallData:
    """Bayesian logistic regression (Yuan & Wang 2024 App. F.3); labels in {0, 1}.

    TunaMH: ``c_i = beta ||x_i||``, ``M = ||t' - t||``. PoissonMH bounds exist only on a ball of
    radius ``R`` (``|x_i^T theta| <= R ||x_i||``): ``shift_i = M_i = beta log(1 + e^{R ||x_i||})``;
    without ``R`` they are +inf-free placeholders equal to 0 and PoissonMH refuses the target.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError("X must be (N, d) and y (N,)")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("logistic labels must be 0 or 1")
    check_positive("prior_prec", prior_prec, allow_zero=True)
    check_positive("beta", beta)
    xn = np.linalg.norm(X, axis=1)
    d = X.shape[1]
    if R is None:
        support, Rv = SUPPORT_ALL, 0.0
        M = np.zeros(X.shape[0])
    else:
        support, Rv = SUPPORT_BALL, float(R)
        M = beta * np.logaddexp(0.0, R * xn)
    return _make(
        LOGISTIC,
        X,
        y,
        np.ones(d),
        beta,
        0.0,
        np.zeros(d),
        np.full(d, float(prior_prec)),
        support,
        0.0,
        0.0,
        Rv,
        M.copy(),
        M,
        beta * xn,
    )


def gaussian_mixture(
    y: np.ndarray,
    temperature: float = 1.0,
    s2: float = 2.0,
    prior_var: tuple[float, float] = (10.0, 1.0),
    box: float | None = None,
) -> TallData:
    """Two-component mixture with tied means (Welling & Teh 2011; Seita et al. 2017 §6.1; Zhang & De Sa 2019
    App. D.2).

    ``y_i ~ 1/2 N(t1, s2) + 1/2 N(t1 + t2, s2)``, prior t1 ~ N(0, 10), t2 ~ N(0, 1), likelihood tempered by
    ``beta = 1/temperature``. With ``box`` the support is ``[-box, box]^2`` and exact PoissonMH bounds are
    computed: ``ll_i`` is maximised at a component mean equal to ``y_i`` (clipped) and minimised at a box
    corner; ``shift_i = -min ll_i``, ``M_i = max - min``. TunaMH: ``c_i = beta * sup ||grad ll_i||`` with
    ``||grad|| <= sqrt(2) * (|y_i| + 2 box) / s2`` on the box.
    """
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    check_positive("temperature", temperature)
    check_positive("s2", s2)
    if not (min(prior_var) > 0):  # NaN fails too
        raise ValueError("prior variances must be positive")
    beta = 1.0 / temperature
    X = y[:, None].copy()
    prior_prec = 1.0 / np.asarray(prior_var, dtype=np.float64)
    norm = -0.5 * np.log(2 * np.pi * s2)
    if box is None:
        support, lo, hi = SUPPORT_ALL, 0.0, 0.0
        shift = np.zeros_like(y)
        M = np.zeros_like(y)
        c = np.zeros_like(y)
    else:
        support, lo, hi = SUPPORT_BOX, -float(box), float(box)
        # max over the box: some component mean equals y_i (if reachable) -> log(1/2 + 1/2 e^{..}) <= 0
        # upper bound: ll_i <= beta * norm (both components centred, density <= peak)
        upper = beta * norm * np.ones_like(y)
        # lower bound: each residual at most |y_i| + 2 box (t1 + t2 in [-2box, 2box])
        r = np.abs(y) + 2 * box
        lower = beta * (norm - 0.5 * r * r / s2)
        shift = -lower
        M = upper - lower
        c = beta * np.sqrt(2.0) * r / s2
    return _make(
        MIXTURE,
        X,
        np.zeros_like(y),
        np.ones(2),
        beta,
        s2,
        np.zeros(2),
        prior_prec,
        support,
        lo,
        hi,
        0.0,
        shift,
        M,
        c,
    )


def make_mixture_data(
    rng: np.random.Generator,
    N: int = 1_000_000,
    theta: tuple[float, float] = (0.0, 1.0),
    s2: float = 2.0,
) -> np.ndarray:
    """Welling & Teh data: y_i ~ 1/2 N(t1, s2) + 1/2 N(t1 + t2, s2) at theta = (0, 1)."""
    comp = rng.random(N) < 0.5
    mu = np.where(comp, theta[0], theta[0] + theta[1])
    return mu + np.sqrt(s2) * rng.standard_normal(N)


def gaussian_location(
    Y: np.ndarray, prec: np.ndarray | None = None, beta: float = 1.0, box: float | None = None
) -> TallData:
    """Gaussian location model (tests): ``ll_i = -beta/2 sum_j prec_j (theta_j - y_ij)^2``, flat prior.

    Posterior N(ybar, diag(1/(N beta prec))) (truncated to the box if given). Bounds as for TG.
    """
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 2:
        raise ValueError("Y must be (N, d)")
    d = Y.shape[1]
    prec = np.ones(d) if prec is None else np.asarray(prec, dtype=np.float64)
    if prec.shape != (d,) or not np.all(prec > 0) or not (beta > 0):  # NaN fails too
        raise ValueError("prec must be (d,) positive and beta > 0")
    if box is None:
        support, lo, hi = SUPPORT_ALL, 0.0, 0.0
        M = np.zeros(Y.shape[0])
        c = np.zeros(Y.shape[0])
    else:
        support, lo, hi = SUPPORT_BOX, -float(box), float(box)
        sq = ((np.abs(Y) + box) ** 2).sum(axis=1)
        M = 0.5 * beta * prec.max() * sq
        c = beta * prec.max() * np.sqrt(sq)
    return _make(
        GAUSS,
        Y,
        np.zeros(Y.shape[0]),
        prec,
        beta,
        0.0,
        np.zeros(d),
        np.zeros(d),
        support,
        lo,
        hi,
        0.0,
        M.copy(),
        M,
        c,
    )


def linear_regression_l1(
    X: np.ndarray, y: np.ndarray, noise_var: float, prior_l1: float, beta: float = 1.0
) -> TallData:
    """L1-regularised (Bayesian lasso) linear regression (Korattikara, Chen & Welling 2014 §6.4).

    ``ll_i = -beta (y_i - x_i^T theta)^2 / (2 noise_var)`` (kind ``LINREG``, ``noise_var`` stored in
    ``nu``), Laplace prior ``log p(theta) = -prior_l1 sum_j |theta_j|`` (``prior_l1 = 0``: flat prior),
    support R^d. The residual is unbounded on R^d, so no PoissonMH bounds or TunaMH Lipschitz
    constants exist: ``shift = M = c = 0`` and PoissonMH / TunaMH refuse this target (their setups
    require ``sum M_i > 0`` / ``sum c_i > 0``).
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError("X must be (N, d) (or (N,)) and y (N,)")
    if not (np.isfinite(noise_var) and noise_var > 0) or not (np.isfinite(beta) and beta > 0):
        raise ValueError("noise_var and beta must be positive and finite")
    if not (np.isfinite(prior_l1) and prior_l1 >= 0):
        raise ValueError("prior_l1 must be finite and >= 0")
    d = X.shape[1]
    z = np.zeros(X.shape[0])
    return _make(
        LINREG,
        X,
        y,
        np.ones(d),
        beta,
        noise_var,
        np.zeros(d),
        np.zeros(d),
        SUPPORT_ALL,
        0.0,
        0.0,
        0.0,
        z,
        z.copy(),
        z.copy(),
        prior_l1,
    )


def linreg_l1_posterior_1d(
    x: np.ndarray,
    y: np.ndarray,
    noise_var: float,
    prior_l1: float,
    grid: np.ndarray,
    beta: float = 1.0,
) -> np.ndarray:
    """Exact 1-d posterior density of :func:`linear_regression_l1` on ``grid`` (normalised by the
    trapezoid rule on the grid), from the sufficient statistics sum x^2, sum x y (Korattikara et al. 2014
    Fig. 5a)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    grid = np.asarray(grid, dtype=np.float64)
    if x.shape != y.shape or grid.ndim != 1 or grid.size < 3 or np.any(np.diff(grid) <= 0):
        raise ValueError("x, y must have equal length and grid be increasing with >= 3 points")
    sxx, sxy = float(x @ x), float(x @ y)
    c = beta / noise_var
    lp = -0.5 * c * (sxx * grid**2 - 2.0 * sxy * grid) - prior_l1 * np.abs(grid)
    p = np.exp(lp - lp.max())
    return p / np.trapezoid(p, grid)


def ica(X: np.ndarray, beta: float = 1.0) -> TallData:
    """Square ICA posterior (Korattikara et al. 2014 §6.2): ``p(x|W) = |det W| prod_j 1/(4 cosh^2(w_j^T x /
    2))`` with a flat prior on W in R^{D x D} (theta = vec(W), row-major). ASSUMPTION vs K14: K14 restricts W
    to the orthonormal (Stiefel) manifold with a uniform prior and a manifold random walk, where |det W| = 1;
    here W is unconstrained and the beta N log|det W| term is exact, inside :func:`log_prior`. No
    PoissonMH/TunaMH bounds (unbounded support): zeros, and those methods refuse the target."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < 1:
        raise ValueError("X must be (N, D)")
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError("beta must be positive and finite")
    D = X.shape[1]
    d = D * D
    z = np.zeros(X.shape[0])
    return _make(
        ICA,
        X,
        z,
        np.ones(d),
        beta,
        0.0,
        np.zeros(d),
        np.zeros(d),
        SUPPORT_ALL,
        0.0,
        0.0,
        0.0,
        z.copy(),
        z.copy(),
        z.copy(),
    )
