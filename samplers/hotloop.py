"""Hot-loop helpers of the exact minibatch MH kernels (docs/performance.md §7.4).

The per-candidate work of PoissonMH / TunaMH / Poisson-MALA/Barker (Yuan & Wang 2024 Alg. 5, 6, 2 with the
thinning of Alg. 8/9) is a handful of flops on one random data row. Calling the generic per-datum
functions of :mod:`samplers.targets.tall` with the whole ``TallData`` NamedTuple costs an NRT
incref/decref (atomic) per array field per call (~100 ns per call, measured), i.e. far more than the
arithmetic. The helpers here take the *arrays* the loop needs (unpacked from the NamedTuple once per
iteration), so the per-candidate cost is the arithmetic plus the row access:

* the per-datum dispatch on arrays, :func:`ll_pair` (``(ll_i(theta), ll_i(theta'))`` in ONE pass over
  row i), :func:`ll_one` and :func:`ll_grad_one`, lives in :mod:`samplers.targets.likelihoods` (re-exported
  here), with every kind's formulas.
* the candidate row ``rows[i]`` (:func:`samplers.poisson_minibatch.table_rows`: x_i, the bound, shift_i,
  the alias entry, y_i on whole cache lines): for TG /
  GAUSS / RLR (:func:`packed`) a candidate touches one random row instead of five arrays.
* :func:`prefetch_row` / :func:`prefetch1`   software prefetch (``llvm.prefetch``, a hint: no
  semantic effect) of a data row (into L2) / a vector entry (into L1) a few candidates ahead, to hide the
  memory latency of the random row access at N = 1e6 (160 MB of rows for the d = 20 truncated Gaussian).
* :func:`log_accumulate` / :func:`log_flush`   a running product of ratios with a log every
  ``LOG_EVERY`` factors (or when the product leaves [1e-100, 1e100]) instead of one ``log`` per kept
  candidate; equal to the sum of logs up to rounding.
"""

from __future__ import annotations

import math

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from samplers.targets.likelihoods import (  # noqa: F401 - the per-datum dispatch, re-exported
    DOT_FASTMATH,
    _log1pexp,
    _sigmoid,
    ll_grad_one,
    ll_one,
    ll_pair,
    logistic_pair,
    one_dot,
    one_quadratic,
    pair_dot,
    pair_quadratic,
    pair_z,
    rlr_pair,
)
from samplers.targets.tall import GAUSS, RLR, TG

LOG_EVERY = 32
# Compile a per-iteration core without Numba's reference counting (``njit(**NO_REFCOUNT)``). A call of a
# jitted function that LLVM does not inline increfs and decrefs each array it binds, each an out-of-line
# call with an atomic add: ~15 ns per array argument a call (measured: 3 / 6 / 12 arrays 46 / 90 / 175 ns,
# 0.7 ns without), ~0.2 us of a 3.5 us TunaMH iteration (docs/performance.md §7.5). Such a core must
# allocate nothing (Numba refuses to compile an allocation there) and must return no array and receive none
# from a callee compiled with reference counting (the caller would decref a reference it was never given,
# or the core would leak one): scalars in, scalars out, the arrays borrowed from the caller. Helpers it
# calls inherit the setting unless they set ``_nrt=True`` (e.g.
# :func:`samplers.poisson_minibatch.draw_count`). ``tests/test_hotloop_exact_mh.py::test_no_refcount_cores``
# checks that no such core returns an array and that a chain leaks or double-frees nothing.
NO_REFCOUNT = {"_nrt": False}
PREFETCH_AHEAD = 8


# ----------------------------------------------------------------------------- software prefetch
# ``llvm.prefetch`` locality: 3 keeps the line in every level (x86 ``prefetcht0``: into L1), 2 fetches it
# into L2 (``prefetcht1``). The candidate rows of the minibatch kernels are fetched into L2 (measured on a
# Zen 5 VM, docs/performance.md §7.2: TG PoissonMH growth 1e4 -> 1e6 1.60 -> 1.44, the N = 1e6 candidate
# 19.0 -> 17.6 ns, iterations at N <= 1e5 2-4 % slower; likely because L1 prefetches held the core's few L1
# miss buffers for the whole DRAM latency, an inference without hardware counters).
L1_LOCALITY = 3
L2_LOCALITY = 2


def _prefetch_codegen(context, builder, aryty, ary, inds, locality: int):
    ptr = cgutils.get_item_pointer2(
        context,
        builder,
        data=ary.data,
        shape=cgutils.unpack_tuple(builder, ary.shape),
        strides=cgutils.unpack_tuple(builder, ary.strides),
        layout=aryty.layout,
        inds=inds,
        wraparound=False,
        boundscheck=False,
    )
    i8p = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
    # (address, rw = read, locality, cache type = data)
    builder.call(
        fn,
        [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, locality), ir.Constant(i32, 1)],
    )


def _prefetch_intrinsic(ndim: int, locality: int):
    """A prefetch hint for the address of ``arr[i]`` (``ndim`` = 1) or ``arr[i, j]`` (2): no bounds check,
    never faults."""

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        pairs = zip(args[1:], signature.args[1:], strict=True)
        inds = [context.cast(builder, a, ty, types.intp) for a, ty in pairs]
        _prefetch_codegen(context, builder, aryty, ary, inds, locality)
        return context.get_dummy_value()

    def array_ok(arr) -> bool:
        return isinstance(arr, types.Array) and arr.ndim == ndim

    def typer1(typingctx, arr, i):
        return (types.void(arr, i), codegen) if array_ok(arr) else None

    def typer2(typingctx, arr, i, j):
        return (types.void(arr, i, j), codegen) if array_ok(arr) else None

    typer = typer1 if ndim == 1 else typer2
    typer.__name__ = typer.__qualname__ = f"prefetch{ndim}_locality{locality}"
    return intrinsic(typer)


prefetch1 = _prefetch_intrinsic(1, L1_LOCALITY)  # arr[i] into L1
prefetch2 = _prefetch_intrinsic(2, L1_LOCALITY)  # arr[i, j] into L1
prefetch2_l2 = _prefetch_intrinsic(2, L2_LOCALITY)  # arr[i, j] into L2


@njit(cache=True)
def _prefetch_line(X, i: int, j: int, l2: bool) -> None:
    if l2:
        prefetch2_l2(X, i, j)
    else:
        prefetch2(X, i, j)


@njit(cache=True)
def prefetch_row(X, i: int, l2: bool = True) -> None:
    """Hint every cache line of row ``X[i]`` (one per 8 doubles, plus the last entry) into L2, or into L1 if
    not ``l2``: L2 for the rows fetched from memory far ahead (the candidate pipeline, docs/performance.md
    §7.2), L1 for short-distance re-reads of rows already near the core (Poisson-MALA / Barker's pass at
    theta'). The first three are written out (rows of <= 24 doubles, every tall target here, take no loop):
    ~3 % off a TG PoissonMH candidate against the plain loop (docs/performance.md §7.2)."""
    ncol = X.shape[1]
    _prefetch_line(X, i, 0, l2)
    if ncol > 8:
        _prefetch_line(X, i, 8, l2)
        if ncol > 16:
            _prefetch_line(X, i, 16, l2)
            if ncol > 24:
                for j in range(24, ncol, 8):
                    _prefetch_line(X, i, j, l2)
    _prefetch_line(X, i, ncol - 1, l2)


# ---------------------------------------------------------------------- kernel-specific per-datum forms
@njit(cache=True, fastmath=DOT_FASTMATH)
def quadratic_diff(X, v, sp, i: int) -> float:
    """TG / GAUSS: ``sum_j v_j (sp_j - 2 x_ij)`` with ``v = w (theta - theta')``, ``sp = theta + theta'``,
    i.e. ``sum_j w_j [(theta_j - x_ij)^2 - (theta'_j - x_ij)^2]`` factorised as a difference of squares:
    ``ll_i(theta) - ll_i(theta') = -beta/2`` times this. Two flops a coordinate instead of the pair's six,
    and no cancellation between two large sums (TunaMH needs only the difference)."""
    q = 0.0
    for j in range(v.shape[0]):
        q += v[j] * (sp[j] - 2.0 * X[i, j])
    return q


@njit(cache=True, inline="always")
def log1pexp_diff(b: float, dl: float) -> float:
    """``f(b + dl) - f(b)`` for ``f(z) = log(1 + e^z)``, as ``log1p(sigmoid(lo) expm1(|dl|))`` signed,
    ``lo = min(b, b + dl)`` (one log instead of two, accurate for small ``dl``; the increment is taken
    upwards so the log1p argument is >= 0); the direct difference when ``|dl| > 30``. Inlined at the
    Numba IR level (scalars only, so no reference counts; LLVM left it a call): MNIST TunaMH -2.5-3 %."""
    if abs(dl) > 30.0:
        return _log1pexp(b + dl) - _log1pexp(b)
    lo = b
    sgn = 1.0
    if dl < 0.0:
        lo = b + dl
        sgn = -1.0
    return sgn * math.log1p(_sigmoid(lo) * math.expm1(abs(dl)))


@njit(cache=True, fastmath=DOT_FASTMATH)
def add_row(X, i: int, coef: float, g) -> None:
    """``g += coef * x_i``."""
    for j in range(g.shape[0]):
        g[j] += coef * X[i, j]


# ----------------------------------------------------------------------------- packed rows
@njit(cache=True)
def packed(kind: int) -> bool:
    """Kinds whose whole datum is in the candidate rows (x_i in the first d columns): TG, GAUSS, RLR.
    The hot loops read those from the candidate row (one random row per candidate: x_i, the bound,
    shift_i, the alias entry, y_i) and the other kinds' x_i from X. Loop bodies call
    :func:`prefetch_row` and the pair helpers directly: a helper taking the arrays per candidate
    measured +15-40 ns (calls that LLVM does not inline cost array reference counting)."""
    return kind == TG or kind == GAUSS or kind == RLR


@njit(cache=True)
def prefetch_first_candidates(rows, X, pk: bool, idx, n: int) -> None:
    """Prologue of a hot loop that prefetches ``PREFETCH_AHEAD`` candidates ahead: rows (and X rows
    unless ``pk = packed(kind)``) of ``idx[:min(n, PREFETCH_AHEAD)]``, into L1 (rows the loop re-reads)."""
    for k in range(min(n, PREFETCH_AHEAD)):
        prefetch_row(rows, idx[k], False)
        if not pk:
            prefetch_row(X, idx[k], False)


# ----------------------------------------------------------------------------- running-product log
@njit(cache=True, inline="always")
def log_accumulate(s: float, p: float, n: int, ratio: float):
    """Fold ``log(ratio)`` into the accumulator ``(s, p, n)`` (value ``s + log p``): multiply into p and
    take one log every ``LOG_EVERY`` factors or when p leaves [1e-100, 1e100] (ratio > 0 finite)."""
    if ratio > 1e100 or ratio < 1e-100:
        return s + math.log(ratio), p, n
    p *= ratio
    n += 1
    if n >= LOG_EVERY or p > 1e100 or p < 1e-100:
        return s + math.log(p), 1.0, 0
    return s, p, n


@njit(cache=True, inline="always")
def log_flush(s: float, p: float) -> float:
    """Value of the accumulator: ``s + log p``."""
    if p == 1.0:
        return s
    return s + math.log(p)
