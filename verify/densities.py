"""Independent NumPy re-implementation of the tall-data densities (a second code path).

The kernels use the ``@njit`` functions of :mod:`samplers.targets.tall`; ``verify`` recomputes the same
quantities from the target's *data fields* with vectorised NumPy written from the formulas in the
constructors' docstrings (Yuan & Wang 2024 App. F; Welling & Teh 2011; Korattikara et al. 2014 §6.2 ICA and
§6.4 L1-regularised linear regression), so that a bug in one path shows up as a disagreement. Nothing here
imports the njit target code, except for a ``CUSTOM`` (user-defined) target, whose registered per-datum
functions are its only definition (:mod:`samplers.targets.custom`).

ICA: theta = vec(W) row-major, ll_i = beta sum_j log p(w_j^T x_i) with p(y) = 1 / (4 cosh^2(y / 2)); the
global beta N log|det W| term belongs to the prior path (as in the kernels), see :func:`log_prior`.

All functions take ``theta`` of shape ``(d,)`` or ``(n, d)``; per-datum arrays are ``(n, N)``.
"""

from __future__ import annotations

import numpy as np

from samplers.targets.tall import (
    CUSTOM,
    GAUSS,
    ICA,
    LINREG,
    LOGISTIC,
    MIXTURE,
    RLR,
    SUPPORT_BALL,
    SUPPORT_BOX,
    TG,
    TallData,
)


def _theta2(theta: np.ndarray) -> np.ndarray:
    th = np.asarray(theta, dtype=np.float64)
    return th[None, :] if th.ndim == 1 else th


def loglik_terms(t: TallData, theta: np.ndarray) -> np.ndarray:
    """``ll_i(theta)`` for every datum: shape ``(n, N)``."""
    th = _theta2(theta)
    if t.kind in (TG, GAUSS):
        r = th[:, None, :] - t.X[None, :, :]
        return -0.5 * t.beta * np.einsum("nij,j->ni", r * r, t.w)
    if t.kind == RLR:
        r = t.y[None, :] - th @ t.X.T
        return -t.beta * 0.5 * (t.nu + 1.0) * np.log1p(r * r / t.nu)
    if t.kind == LOGISTIC:
        z = th @ t.X.T
        sgn = np.where(t.y > 0.5, 1.0, -1.0)[None, :]
        return -t.beta * np.logaddexp(0.0, -sgn * z)
    if t.kind == MIXTURE:
        yv = t.X[:, 0][None, :]
        s2 = t.nu
        a = yv - th[:, 0:1]
        b = yv - th[:, 0:1] - th[:, 1:2]
        val = np.logaddexp(-0.5 * a * a / s2, -0.5 * b * b / s2) + np.log(0.5)
        return t.beta * (val - 0.5 * np.log(2.0 * np.pi * s2))
    if t.kind == LINREG:
        r = t.y[None, :] - th @ t.X.T
        return -0.5 * t.beta * r * r / t.nu
    if t.kind == ICA:
        Y = _ica_sources(t, th)
        a = np.abs(Y)
        return t.beta * (-a - 2.0 * np.log1p(np.exp(-a))).sum(axis=-1)
    if t.kind == CUSTOM:  # a user model: its registered per-datum functions are its only definition
        from samplers.targets.custom import loglik_terms as custom_terms

        return custom_terms(t, th)
    raise ValueError(f"unknown target kind {t.kind}")


def _ica_W(t: TallData, th: np.ndarray) -> np.ndarray:
    D = t.X.shape[1]
    if th.shape[1] != D * D:
        raise ValueError(f"ICA theta must have D^2 = {D * D} entries, got {th.shape[1]}")
    return th.reshape(th.shape[0], D, D)


def _ica_sources(t: TallData, th: np.ndarray) -> np.ndarray:
    """y = W x_i for every theta and datum: ``(n, N, D)``."""
    return np.einsum("njq,iq->nij", _ica_W(t, th), t.X)


def loglik_grad_terms(t: TallData, theta: np.ndarray) -> np.ndarray:
    """``grad ll_i(theta)``: shape ``(n, N, d)``."""
    th = _theta2(theta)
    if t.kind in (TG, GAUSS):
        return -t.beta * (th[:, None, :] - t.X[None, :, :]) * t.w[None, None, :]
    if t.kind == RLR:
        r = t.y[None, :] - th @ t.X.T
        g = t.beta * (t.nu + 1.0) * r / (t.nu + r * r)
        return g[:, :, None] * t.X[None, :, :]
    if t.kind == LOGISTIC:
        z = th @ t.X.T
        h = 0.5 * (1.0 + np.tanh(0.5 * z))  # logistic sigmoid, overflow-free
        g = t.beta * (t.y[None, :] - h)
        return g[:, :, None] * t.X[None, :, :]
    if t.kind == MIXTURE:
        yv = t.X[:, 0][None, :]
        s2 = t.nu
        a = yv - th[:, 0:1]
        b = yv - th[:, 0:1] - th[:, 1:2]
        la, lb = -0.5 * a * a / s2, -0.5 * b * b / s2
        wa = 1.0 / (1.0 + np.exp(np.clip(lb - la, -700, 700)))
        wb = 1.0 - wa
        return t.beta * np.stack([(wa * a + wb * b) / s2, wb * b / s2], axis=-1)
    if t.kind == LINREG:
        r = t.y[None, :] - th @ t.X.T
        return (t.beta * r / t.nu)[:, :, None] * t.X[None, :, :]
    if t.kind == ICA:
        # d/dy log p(y) = -tanh(y / 2); d y_j / d W_jq = x_q
        g = -np.tanh(0.5 * _ica_sources(t, th))
        n, N, D = g.shape
        return t.beta * (g[:, :, :, None] * t.X[None, :, None, :]).reshape(n, N, D * D)
    if t.kind == CUSTOM:
        from samplers.targets.custom import loglik_grad_terms as custom_grad_terms

        return custom_grad_terms(t, th)
    raise ValueError(f"unknown target kind {t.kind}")


def in_support(t: TallData, theta: np.ndarray) -> np.ndarray:
    """Boolean ``(n,)``: inside the box / ball (closed), finite."""
    th = _theta2(theta)
    ok = np.all(np.isfinite(th), axis=1)
    if t.support == SUPPORT_BOX:
        ok &= np.all((th >= t.lo) & (th <= t.hi), axis=1)
    elif t.support == SUPPORT_BALL:
        ok &= (th * th).sum(axis=1) <= t.R * t.R
    return ok


def _ica_logdet(t: TallData, th: np.ndarray) -> np.ndarray:
    """beta N log|det W| (-inf where W is singular): ``(n,)``."""
    sign, ld = np.linalg.slogdet(_ica_W(t, th))
    return np.where(sign != 0, t.beta * t.X.shape[0] * ld, -np.inf)


def log_prior(t: TallData, theta: np.ndarray) -> np.ndarray:
    """Unnormalised log prior, -inf outside the support: ``(n,)``. Gaussian part
    -1/2 sum_j prec_j (theta_j - mean_j)^2, Laplace part -prior_l1 sum_j |theta_j - mean_j|
    (Korattikara et al. 2014 §6.4), and for ICA the global likelihood term beta N log|det W| (§6.2)."""
    th = _theta2(theta)
    r = th - t.prior_mean[None, :]
    lp = -0.5 * (t.prior_prec[None, :] * r * r).sum(axis=1)
    if t.prior_l1 != 0.0:
        lp = lp - t.prior_l1 * np.abs(r).sum(axis=1)
    if t.kind == ICA:
        lp = lp + _ica_logdet(t, th)
    return np.where(in_support(t, th), lp, -np.inf)


def log_post(t: TallData, theta: np.ndarray) -> np.ndarray:
    """Unnormalised log posterior ``(n,)`` (-inf outside the support)."""
    th = _theta2(theta)
    lp = log_prior(t, th)
    ok = np.isfinite(lp)
    out = np.full(th.shape[0], -np.inf)
    if ok.any():
        out[ok] = lp[ok] + loglik_terms(t, th[ok]).sum(axis=1)
    return out


def log_post_grad(t: TallData, theta: np.ndarray) -> np.ndarray:
    """Gradient of the log posterior ``(n, d)`` (prior + all data; support ignored). Laplace part: the
    subgradient -prior_l1 sign(theta - mean) (0 at the kink); ICA: + beta N W^{-T}."""
    th = _theta2(theta)
    r = th - t.prior_mean[None, :]
    g = -t.prior_prec[None, :] * r
    if t.prior_l1 != 0.0:
        g = g - t.prior_l1 * np.sign(r)
    if t.kind == ICA:
        Winv = np.linalg.inv(_ica_W(t, th))
        g = g + t.beta * t.X.shape[0] * np.transpose(Winv, (0, 2, 1)).reshape(th.shape[0], -1)
    return g + loglik_grad_terms(t, th).sum(axis=1)


def phi_terms(t: TallData, theta: np.ndarray) -> np.ndarray:
    """PoissonMH factors ``phi_i = ll_i + shift_i``: ``(n, N)``."""
    return loglik_terms(t, theta) + t.shift[None, :]


# ----------------------------------------------------------------------------- proposal densities
def log_normal_pdf(x: np.ndarray, mean: np.ndarray, sigma: float) -> np.ndarray:
    """Sum over the last axis of ``log N(x_j; mean_j, sigma^2)``."""
    z = (np.asarray(x) - np.asarray(mean)) / sigma
    d = z.shape[-1]
    return -0.5 * (z * z).sum(axis=-1) - d * (np.log(sigma) + 0.5 * np.log(2.0 * np.pi))


def log_q_mala(x: np.ndarray, xp: np.ndarray, g: np.ndarray, sigma: float) -> np.ndarray:
    """``log q(x, x')`` of the Langevin proposal ``N(x + sigma^2/2 g(x), sigma^2 I)``."""
    return log_normal_pdf(xp, x + 0.5 * sigma * sigma * g, sigma)


def log_q_barker(x: np.ndarray, xp: np.ndarray, g: np.ndarray, sigma: float) -> np.ndarray:
    """``log q(x, x')`` of the Gaussian Barker proposal (Livingstone & Zanella 2022, eq. 3):
    ``prod_j 2 N(d_j; 0, sigma^2) / (1 + exp(-g_j d_j))`` with ``d = x' - x``."""
    d = np.asarray(xp) - np.asarray(x)
    return (
        log_normal_pdf(d, 0.0 * d, sigma) + d.shape[-1] * np.log(2.0) - np.logaddexp(0.0, -g * d).sum(axis=-1)
    )
