"""The per-datum log-likelihoods of the tall-data kinds and the ONE dispatch every kernel calls.

A tall target (:class:`samplers.targets.tall.TallData`) names its model by the integer ``kind`` below;
the per-datum formulas of every kind, and the functions that select them, live here:

* :func:`ll_one`       ``ll_i(theta)``
* :func:`ll_pair`      ``(ll_i(theta), ll_i(theta'))``, row i read once (two accumulators)
* :func:`ll_grad_one`  ``ll_i(theta)`` and ``out += scale * grad ll_i(theta)``
* :func:`full_loglik`  ``sum_i ll_i(theta)`` (and its gradient) over all N: the full-batch pass

all on the target's arrays (unpacked from the NamedTuple once per iteration by the hot loops: passing the
NamedTuple per call costs a reference count per array field). :func:`samplers.targets.tall.loglik_i` /
``loglik_grad_i`` / ``loglik_sum`` / ``log_post_grad`` are these on the NamedTuple. ``CUSTOM`` is a
user-defined model: its functions are selected at compile time from the type of the target's ``ops``
field (:mod:`samplers.targets.model_ops`, public API :mod:`samplers.targets.custom`). Every chain ends
in an explicit branch per kind; an unknown kind gives NaN (never another kind's likelihood), and the
constructors refuse it before any kernel runs (:func:`check_kind`).

Kernels specialise a few kinds in their hot loops (the same arithmetic, written out so that LLVM
inlines it or reads the packed candidate row): the list is in docs/architecture.md "Defining a
tall-data target". Every other kind reaches them through the dispatch here.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from samplers.targets.model_ops import (
    NoOps,
    custom_loglik,
    custom_loglik_grad,
    custom_loglik_grad_full,
    registered,
)

TG, RLR, LOGISTIC, MIXTURE, GAUSS, LINREG, ICA, CUSTOM = 0, 1, 2, 3, 4, 5, 6, 7
KIND_NAMES = {
    TG: "truncated_gaussian",
    RLR: "robust_regression",
    LOGISTIC: "logistic",
    MIXTURE: "gaussian_mixture",
    GAUSS: "gaussian_location",
    LINREG: "linear_regression",
    ICA: "ica",
    CUSTOM: "custom",
}


def check_kind(kind: int) -> None:
    """ValueError naming the known kinds if ``kind`` has no per-datum functions here."""
    if int(kind) not in KIND_NAMES:
        known = ", ".join(f"{k} ({v})" for k, v in KIND_NAMES.items())
        raise ValueError(
            f"unknown tall-data kind {kind}: no per-datum log-likelihood is defined for it "
            f"(known kinds: {known}; a new model is a CUSTOM target, samplers.targets.custom)"
        )


def check_ops(kind: int, ops) -> None:
    """ValueError naming what is missing: a ``CUSTOM`` target needs a registered model (``ops``) with every
    per-datum function; the shipped kinds take ``NoOps``."""
    if kind != CUSTOM:
        if not isinstance(ops, NoOps):
            got = type(ops).__name__
            raise ValueError(f"kind {KIND_NAMES[kind]} takes no model (ops must be NoOps), got {got}")
        return
    name = type(ops).__name__
    if isinstance(ops, NoOps) or not (isinstance(ops, tuple) and hasattr(ops, "_fields")):
        raise ValueError(
            f"a CUSTOM target needs its model's parameters (a NamedTuple) as ops, got {name} "
            "(samplers.targets.custom.custom_target)"
        )
    fns = registered(type(ops))
    if fns is None:
        raise ValueError(
            f"model {name} is not registered: samplers.targets.custom.define_model({name}) and its "
            "loglik / loglik_grad decorators"
        )
    missing = fns.missing()
    if missing:
        raise ValueError(
            f"model {name} is missing {', '.join(missing)}: register each with its decorator, "
            f"m = define_model({name}); @m.{missing[0]} (samplers.targets.custom)"
        )


# Full-data loops get the same fastmath flags as the minibatch dot-product helpers
# (samplers.hotloop.DOT_FASTMATH): reassociation + FMA contraction only, never nnan/ninf, so the
# full-batch twins are vectorised exactly like the minibatch kernels they are compared with (a fair
# speed-up; 12.5 -> 5.8-7.5 ns per datum on the d=20 truncated Gaussian, docs/performance.md §7.8).
# Rounding-level change.
FULL_DATA_FASTMATH = {"reassoc", "contract"}
DOT_FASTMATH = FULL_DATA_FASTMATH


# ----------------------------------------------------------------------------- scalar pieces
@njit(cache=True)
def _log1pexp(z: float) -> float:
    if z > 0.0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


@njit(cache=True, inline="always")
def _sigmoid(z: float) -> float:
    """``1 / (1 + e^-z)`` without overflow for either sign (scalars only: inlined at the Numba IR level)."""
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


# ----------------------------------------------------------------------------- per-kind pieces on arrays
@njit(cache=True)
def _mixture_ll(yi: float, s2: float, t0: float, t1: float, beta: float) -> float:
    a = yi - t0
    b = yi - t0 - t1
    la = -0.5 * a * a / s2
    lb = -0.5 * b * b / s2
    # log(e^la / 2 + e^lb / 2) = max + log1p(e^-|la - lb|) - log 2: one exp and one log1p a datum
    e = math.exp(-abs(la - lb))
    return beta * (max(la, lb) + math.log1p(e) - math.log(2.0) - 0.5 * math.log(2.0 * math.pi * s2))


@njit(cache=True, inline="always")
def _ica_source(yj: float, a: float, p: float) -> tuple[float, float]:
    """One source's share of :func:`_ica_ll`: ``(a + |y_j|, p * (1 + e^{-|y_j|}))``."""
    yj = abs(yj)
    return a + yj, p * (1.0 + math.exp(-yj))


@njit(cache=True)
def _ica_ll(X, i: int, theta, beta: float) -> float:
    """``beta sum_j log[1 / (4 cosh^2(y_j / 2))]`` with y = W x_i, as ``-sum_j |y_j| - 2 log prod_j (1 +
    e^{-|y_j|})``: one log a datum instead of D log1p (the product lies in [1, 2^D]; 2.1x faster at D = 4,
    equal to the per-source sum to rounding)."""
    D = X.shape[1]
    a = 0.0
    p = 1.0
    for j in range(D):
        yj = 0.0
        for q in range(D):
            yj += theta[j * D + q] * X[i, q]
        a, p = _ica_source(yj, a, p)
    return beta * (-a - 2.0 * math.log(p))


@njit(cache=True, fastmath=DOT_FASTMATH)
def pair_quadratic(X, w, beta: float, i: int, theta, theta_p):
    """TG / GAUSS: ``(ll_i(theta), ll_i(theta'))``, row i read once (two accumulators)."""
    s0 = 0.0
    s1 = 0.0
    for j in range(theta.shape[0]):
        x = X[i, j]
        wj = w[j]
        r0 = theta[j] - x
        r1 = theta_p[j] - x
        s0 += wj * r0 * r0
        s1 += wj * r1 * r1
    return -0.5 * beta * s0, -0.5 * beta * s1


@njit(cache=True, fastmath=DOT_FASTMATH)
def pair_dot(X, yi: float, i: int, theta, theta_p):
    """``(y_i - x_i^T theta, y_i - x_i^T theta')`` (RLR / LINREG residuals), row i read once."""
    r0 = yi
    r1 = yi
    for j in range(theta.shape[0]):
        x = X[i, j]
        r0 -= theta[j] * x
        r1 -= theta_p[j] * x
    return r0, r1


@njit(cache=True, fastmath=DOT_FASTMATH)
def pair_z(X, i: int, theta, theta_p):
    """``(x_i^T theta, x_i^T theta')`` (logistic), row i read once; any two vectors (TunaMH passes theta'
    and ``theta - theta'``: x^T theta' and the difference x^T theta - x^T theta' without subtracting two
    sums, for its logistic and RLR differences)."""
    z0 = 0.0
    z1 = 0.0
    for j in range(theta.shape[0]):
        x = X[i, j]
        z0 += theta[j] * x
        z1 += theta_p[j] * x
    return z0, z1


@njit(cache=True, fastmath=DOT_FASTMATH)
def one_quadratic(X, w, beta: float, i: int, theta) -> float:
    """TG / GAUSS ``ll_i(theta) = -beta/2 sum_j w_j (theta_j - x_ij)^2``."""
    s = 0.0
    for j in range(theta.shape[0]):
        r = theta[j] - X[i, j]
        s += w[j] * r * r
    return -0.5 * beta * s


@njit(cache=True, fastmath=DOT_FASTMATH)
def one_dot(X, yi: float, i: int, theta) -> float:
    """``y_i - x_i^T theta``."""
    r = yi
    for j in range(theta.shape[0]):
        r -= theta[j] * X[i, j]
    return r


@njit(cache=True)
def rlr_pair(X, yi: float, beta: float, nu: float, i: int, theta, theta_p):
    """RLR ``(ll_i(theta), ll_i(theta'))`` (``yi = y_i``)."""
    r0, r1 = pair_dot(X, yi, i, theta, theta_p)
    c = -beta * 0.5 * (nu + 1.0)
    return c * math.log1p(r0 * r0 / nu), c * math.log1p(r1 * r1 / nu)


@njit(cache=True)
def logistic_pair(X, y, beta: float, i: int, theta, theta_p):
    """Logistic ``(ll_i(theta), ll_i(theta'))``."""
    z0, z1 = pair_z(X, i, theta, theta_p)
    sg = -1.0 if y[i] > 0.5 else 1.0  # one return: no reference counts of the arrays per call
    return -beta * _log1pexp(sg * z0), -beta * _log1pexp(sg * z1)


# ----------------------------------------------------------------------------- the dispatch
@njit(cache=True)
def ll_one(kind: int, X, y, w, beta: float, nu: float, i: int, theta, ops=None) -> float:
    """``ll_i(theta)`` (tempered by ``beta``) of datum ``i``; ``ops`` selects a CUSTOM model's functions."""
    d = theta.shape[0]
    if kind == TG or kind == GAUSS:
        s = 0.0
        for j in range(d):
            r = theta[j] - X[i, j]
            s += w[j] * r * r
        return -0.5 * beta * s
    elif kind == RLR:
        r = y[i]
        for j in range(d):
            r -= theta[j] * X[i, j]
        return -beta * 0.5 * (nu + 1.0) * math.log1p(r * r / nu)
    elif kind == LOGISTIC:
        z = 0.0
        for j in range(d):
            z += theta[j] * X[i, j]
        # log h(z) if y=1, log h(-z) if y=0 ; log h(z) = -log(1+e^{-z})
        if y[i] > 0.5:
            return -beta * _log1pexp(-z)
        return -beta * _log1pexp(z)
    elif kind == LINREG:
        r = y[i]
        for j in range(d):
            r -= theta[j] * X[i, j]
        return -0.5 * beta * r * r / nu
    elif kind == ICA:
        return _ica_ll(X, i, theta, beta)
    elif kind == MIXTURE:
        return _mixture_ll(X[i, 0], nu, theta[0], theta[1], beta)
    elif kind == CUSTOM:
        return beta * custom_loglik(ops, X[i], y[i], theta)
    return np.nan


@njit(cache=True)
def ll_pair(kind: int, X, y, w, beta: float, nu: float, i: int, theta, theta_p, ops=None):
    """``(ll_i(theta), ll_i(theta'))`` of :func:`ll_one` (bit-identical), row i read once. Hot loops
    inline the common kinds' small helpers (LLVM inlines them; no NamedTuple and no array refcounting
    per call)."""
    if kind == TG or kind == GAUSS:
        return pair_quadratic(X, w, beta, i, theta, theta_p)
    elif kind == RLR:
        return rlr_pair(X, y[i], beta, nu, i, theta, theta_p)
    elif kind == LOGISTIC:
        return logistic_pair(X, y, beta, i, theta, theta_p)
    elif kind == LINREG:
        r0, r1 = pair_dot(X, y[i], i, theta, theta_p)
        return -0.5 * beta * r0 * r0 / nu, -0.5 * beta * r1 * r1 / nu
    elif kind == ICA:
        return _ica_ll(X, i, theta, beta), _ica_ll(X, i, theta_p, beta)
    elif kind == MIXTURE:
        yi = X[i, 0]
        l0 = _mixture_ll(yi, nu, theta[0], theta[1], beta)
        return l0, _mixture_ll(yi, nu, theta_p[0], theta_p[1], beta)
    elif kind == CUSTOM:
        x = X[i]
        return beta * custom_loglik(ops, x, y[i], theta), beta * custom_loglik(ops, x, y[i], theta_p)
    return np.nan, np.nan


@njit(cache=True)
def ll_grad_one(kind: int, X, y, w, beta: float, nu: float, i: int, theta, scale: float, out, ops=None):
    """``ll_i(theta)`` and ``out += scale * grad ll_i(theta)`` (the value bit-identical to :func:`ll_one`)."""
    d = theta.shape[0]
    if kind == TG or kind == GAUSS:
        s = 0.0
        for j in range(d):
            r = theta[j] - X[i, j]
            s += w[j] * r * r
            out[j] -= scale * beta * w[j] * r
        return -0.5 * beta * s
    elif kind == RLR:
        r = y[i]
        for j in range(d):
            r -= theta[j] * X[i, j]
        g = beta * (nu + 1.0) * r / (nu + r * r)
        for j in range(d):
            out[j] += scale * g * X[i, j]
        return -beta * 0.5 * (nu + 1.0) * math.log1p(r * r / nu)
    elif kind == LOGISTIC:
        z = 0.0
        for j in range(d):
            z += theta[j] * X[i, j]
        h = _sigmoid(z)
        g = beta * (y[i] - h)
        for j in range(d):
            out[j] += scale * g * X[i, j]
        if y[i] > 0.5:
            return -beta * _log1pexp(-z)
        return -beta * _log1pexp(z)
    elif kind == LINREG:
        r = y[i]
        for j in range(d):
            r -= theta[j] * X[i, j]
        g = beta * r / nu
        for j in range(d):
            out[j] += scale * g * X[i, j]
        return -0.5 * beta * r * r / nu
    elif kind == ICA:
        D = X.shape[1]
        a = 0.0
        p = 1.0
        for j in range(D):
            yj = 0.0
            for q in range(D):
                yj += theta[j * D + q] * X[i, q]
            gj = -scale * beta * math.tanh(0.5 * yj)
            for q in range(D):
                out[j * D + q] += gj * X[i, q]
            a, p = _ica_source(yj, a, p)  # the value of _ica_ll from the same y_j (W x_i once)
        return beta * (-a - 2.0 * math.log(p))
    elif kind == MIXTURE:
        yi = X[i, 0]
        s2 = nu
        a = yi - theta[0]
        b = yi - theta[0] - theta[1]
        la = -0.5 * a * a / s2
        lb = -0.5 * b * b / s2
        e = math.exp(-abs(la - lb))
        wa = 1.0 / (1.0 + e) if la >= lb else e / (1.0 + e)
        wb = 1.0 - wa
        out[0] += scale * beta * (wa * a + wb * b) / s2
        out[1] += scale * beta * (wb * b) / s2
        return beta * (max(la, lb) + math.log1p(e) - math.log(2.0) - 0.5 * math.log(2.0 * math.pi * s2))
    elif kind == CUSTOM:
        return beta * custom_loglik_grad(ops, X[i], y[i], theta, scale * beta, out)
    return np.nan


# ----------------------------------------------------------------------------- full-data passes
@njit(cache=True, fastmath=FULL_DATA_FASTMATH)
def _sum_quadratic(X, w, theta, beta):
    s = 0.0
    for i in range(X.shape[0]):
        a = 0.0
        for j in range(X.shape[1]):
            r = theta[j] - X[i, j]
            a += w[j] * r * r
        s += a
    return -0.5 * beta * s


@njit(cache=True, fastmath=FULL_DATA_FASTMATH)
def _grad_quadratic(X, w, theta, beta, out):
    s = 0.0
    d = X.shape[1]
    acc = np.zeros(d)
    for i in range(X.shape[0]):
        a = 0.0
        for j in range(d):
            r = theta[j] - X[i, j]
            a += w[j] * r * r
            acc[j] += r
        s += a
    for j in range(d):
        out[j] -= beta * w[j] * acc[j]
    return -0.5 * beta * s


# Rows per block of the full-batch robust-regression pass, and how many rows ahead it prefetches
# (docs/performance.md §7.8).
RLR_BLOCK = 256
RLR_PREFETCH = 48


@intrinsic
def _prefetch_flat(typingctx, X, k):
    """``llvm.prefetch`` (read, into L1) of the address of flat entry ``k`` of a C-contiguous array. A hint:
    no bounds check, never faults (addresses past the end are harmless)."""
    if not isinstance(X, types.Array):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0"
        )
        ptr = builder.bitcast(builder.gep(ary.data, [idx]), i8p)
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(X, k), codegen


@njit(cache=True, fastmath=FULL_DATA_FASTMATH)
def _sum_rlr(X, y, theta, beta, nu, out, want_grad):
    """sum_i ll_i(theta) (and its gradient into ``out``) for RLR, in blocks of ``RLR_BLOCK`` rows
    (docs/performance.md §7.8). The block's residuals r_k = y_k - x_k^T theta are built eight rows at a time
    (each theta_j loaded once for eight rows; the per-datum loop's operations in its order) into a buffer,
    rows prefetched ``RLR_PREFETCH`` ahead (without it the pass streams X from memory at a fraction of the
    bandwidth the truncated Gaussian's pass reaches). The block's sum of log1p(r_k^2 / nu) is one ``log`` of
    the product of its factors (1 + r_k^2 / nu), a loop LLVM vectorises: one scalar ``log`` per block instead
    of a ``log1p`` per datum, as the minibatch kernels fold their ratios
    (:func:`samplers.hotloop.log_accumulate`). The factors are >= 1, so the product can only overflow: a
    block whose product exceeds 1e300 takes ``log1p`` per datum. The gradient weights c r_k / (nu + r_k^2)
    are a vectorised loop over the buffer and ``out += sum_k w_k x_k`` adds four rows at a time (a quarter
    of the dependent updates of ``out``). Equal to the sum of ``loglik_i`` / ``loglik_grad_i`` to rounding
    (absolute error ~2e-16 per datum)."""
    N = X.shape[0]
    d = X.shape[1]
    c = beta * (nu + 1.0)
    inv_nu = 1.0 / nu
    r = np.empty(RLR_BLOCK)
    s = 0.0
    for b0 in range(0, N, RLR_BLOCK):
        n = min(RLR_BLOCK, N - b0)
        k = 0
        while k + 8 <= n:  # eight rows at a time: each theta_j loaded once for eight rows
            i = b0 + k
            base = (i + RLR_PREFETCH) * d
            for m in range(d):  # the eight rows ahead are 8 d doubles: d cache lines
                _prefetch_flat(X, base + 8 * m)
            a0 = y[i]
            a1 = y[i + 1]
            a2 = y[i + 2]
            a3 = y[i + 3]
            a4 = y[i + 4]
            a5 = y[i + 5]
            a6 = y[i + 6]
            a7 = y[i + 7]
            for j in range(d):
                tj = theta[j]
                a0 -= tj * X[i, j]
                a1 -= tj * X[i + 1, j]
                a2 -= tj * X[i + 2, j]
                a3 -= tj * X[i + 3, j]
                a4 -= tj * X[i + 4, j]
                a5 -= tj * X[i + 5, j]
                a6 -= tj * X[i + 6, j]
                a7 -= tj * X[i + 7, j]
            r[k] = a0
            r[k + 1] = a1
            r[k + 2] = a2
            r[k + 3] = a3
            r[k + 4] = a4
            r[k + 5] = a5
            r[k + 6] = a6
            r[k + 7] = a7
            k += 8
        while k < n:
            i = b0 + k
            a = y[i]
            for j in range(d):
                a -= theta[j] * X[i, j]
            r[k] = a
            k += 1
        p = 1.0
        for k in range(n):
            p *= 1.0 + r[k] * r[k] * inv_nu
        if p <= 1e300:
            s += math.log(p)
        else:
            for k in range(n):
                s += math.log1p(r[k] * r[k] / nu)
        if want_grad:
            for k in range(n):
                r[k] = c * r[k] / (nu + r[k] * r[k])
            k = 0
            while k + 4 <= n:
                i = b0 + k
                g0 = r[k]
                g1 = r[k + 1]
                g2 = r[k + 2]
                g3 = r[k + 3]
                for j in range(d):
                    out[j] += (g0 * X[i, j] + g1 * X[i + 1, j]) + (g2 * X[i + 2, j] + g3 * X[i + 3, j])
                k += 4
            while k < n:
                g0 = r[k]
                for j in range(d):
                    out[j] += g0 * X[b0 + k, j]
                k += 1
    return -0.5 * c * s


@njit(cache=True, fastmath=FULL_DATA_FASTMATH)
def _sum_logistic(X, y, theta, beta, out, want_grad):
    s = 0.0
    d = X.shape[1]
    for i in range(X.shape[0]):
        z = 0.0
        for j in range(d):
            z += theta[j] * X[i, j]
        if y[i] > 0.5:
            s -= _log1pexp(-z)
        else:
            s -= _log1pexp(z)
        if want_grad:
            h = _sigmoid(z)
            g = beta * (y[i] - h)
            for j in range(d):
                out[j] += g * X[i, j]
    return beta * s


@njit(cache=True, fastmath=FULL_DATA_FASTMATH)
def _sum_linreg(X, y, theta, beta, noise_var, out, want_grad):
    s = 0.0
    d = X.shape[1]
    c = beta / noise_var
    for i in range(X.shape[0]):
        r = y[i]
        for j in range(d):
            r -= theta[j] * X[i, j]
        s += r * r
        if want_grad:
            for j in range(d):
                out[j] += c * r * X[i, j]
    return -0.5 * c * s


@njit(cache=True, fastmath=FULL_DATA_FASTMATH)
def _sum_custom(X, y, theta, beta, out, want_grad, ops):
    """CUSTOM: ``sum_i ll_i`` (and the gradient into ``out``) by the model's per-datum functions, compiled
    into this loop with the ``FULL_DATA_FASTMATH`` flags (the model's functions are compiled with them,
    :func:`samplers.targets.custom.define_model`)."""
    s = 0.0
    for i in range(X.shape[0]):
        if want_grad:
            s += custom_loglik_grad_full(ops, X[i], y[i], theta, beta, out)
        else:
            s += custom_loglik(ops, X[i], y[i], theta)
    return beta * s


@njit(cache=True)
def _sum_generic(kind, X, y, w, beta, nu, theta, out, want_grad, ops):
    """Kinds without a loop of their own (ICA, MIXTURE): :func:`ll_one` / :func:`ll_grad_one` per datum."""
    s = 0.0
    for i in range(X.shape[0]):
        if want_grad:
            s += ll_grad_one(kind, X, y, w, beta, nu, i, theta, 1.0, out, ops)
        else:
            s += ll_one(kind, X, y, w, beta, nu, i, theta, ops)
    return s


@njit(cache=True)
def full_loglik(kind: int, X, y, w, beta: float, nu: float, theta, out, want_grad: bool, ops=None) -> float:
    """``sum_i ll_i(theta)`` over all N (full-batch methods); with ``want_grad`` also adds its gradient into
    ``out``. Each kind's vectorised loop (``FULL_DATA_FASTMATH``: equal to the sum of :func:`ll_one` up to
    rounding) so the full-batch twins run at memory speed; NaN for an unknown kind."""
    if kind == TG or kind == GAUSS:
        if want_grad:
            return _grad_quadratic(X, w, theta, beta, out)
        return _sum_quadratic(X, w, theta, beta)
    elif kind == RLR:
        return _sum_rlr(X, y, theta, beta, nu, out, want_grad)
    elif kind == LOGISTIC:
        return _sum_logistic(X, y, theta, beta, out, want_grad)
    elif kind == LINREG:
        return _sum_linreg(X, y, theta, beta, nu, out, want_grad)
    elif kind == CUSTOM:
        return _sum_custom(X, y, theta, beta, out, want_grad, ops)
    elif kind == ICA or kind == MIXTURE:
        return _sum_generic(kind, X, y, w, beta, nu, theta, out, want_grad, ops)
    return np.nan
