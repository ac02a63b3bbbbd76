"""Define a tall-data target in one file: the public API (docs/architecture.md "Defining a tall-data target").

A model is a NamedTuple class of its parameters (floats, ints, arrays: anything Numba types) plus two
per-datum functions registered for that class::

    class PoissonRegression(NamedTuple):
        offset: float

    model = define_model(PoissonRegression)

    @model.loglik                       # ll_i(theta), untempered
    def loglik(m, x, y, theta):         # x = X[i] (a row), y = y[i]
        z = m.offset + x @ theta ...

    @model.loglik_grad                  # ll_i(theta); adds scale * grad ll_i(theta) into out
    def loglik_grad(m, x, y, theta, scale, out): ...

    t = custom_target(PoissonRegression(0.0), X, y, support="ball", R=2.0, M=..., shift=..., c=...)

``t`` is a :class:`samplers.targets.tall.TallData` of kind ``CUSTOM`` and runs with every tall-data method
(full-batch MH / MALA / Barker / HMC, SGLD, PoissonMH, TunaMH, Poisson-MALA / Barker, Tuna-SGLD, and the
approximate tests AustereMH, SGLD + the sequential test, MHSubLhd, MHminibatch) and with ``verify``'s bound
checker. The functions are compiled with
``numba.njit(cache=True, fastmath=FULL_DATA_FASTMATH)`` and selected at compile time by the TYPE of the
parameters (:mod:`samplers.targets.model_ops`), so the kernels stay cached across processes; editing a
registered function (or the class) recompiles the kernels for that model. The functions must not allocate
arrays (the minibatch kernels' hot loops are compiled without reference counting) and must be defined at
module level; helpers they call are compiled in, but only the registered functions' and the class's
source enter the fingerprint that invalidates cached kernels.

The prior is Gaussian (``prior_mean``, ``prior_prec``) plus an optional Laplace term (``prior_l1``) on a
support ``"all"``, ``"box"`` ``[lo, hi]^d`` or ``"ball"`` ``||theta|| <= R`` (the support must be convex
for the TunaMH bound). The likelihood is tempered by ``beta``: ``ll_i = beta * loglik``; the bounds are
given for the untempered ``loglik`` and scaled by ``beta`` here:

* PoissonMH family: ``shift_i`` and ``M_i`` with ``0 <= loglik_i(theta) + shift_i <= M_i`` on the support;
* TunaMH family: ``c_i`` with ``|loglik_i(t') - loglik_i(t)| <= c_i ||t' - t||_2`` on the support.

A bound not given is zero, and the methods needing it refuse the target. ``verify.bounds`` checks the
bounds of a custom target like a shipped one; :func:`small_version` builds the enumerable version
(a few data, a lattice on the support) that verify's exact kernel-vs-matrix checks take.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from numba import njit
from numba.core.registry import CPUDispatcher

from samplers.targets import tall
from samplers.targets.likelihoods import CUSTOM, FULL_DATA_FASTMATH
from samplers.targets.model_ops import REQUIRED_FUNCTIONS, register_class, registered

SUPPORTS = {"all": tall.SUPPORT_ALL, "box": tall.SUPPORT_BOX, "ball": tall.SUPPORT_BALL}


class ModelDefinition:
    """Decorators registering a model class's per-datum functions (from :func:`define_model`)."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self._fns = register_class(cls)

    def _register(self, name: str, fn: Any) -> Any:
        py = fn.py_func if isinstance(fn, CPUDispatcher) else fn
        if not callable(py):
            raise ValueError(f"{self.cls.__name__}.{name}: expected a function, got {fn!r:.80}")
        try:
            self._fns.sources[name] = inspect.getsource(py)
        except (OSError, TypeError):
            self._fns.sources[name] = py.__code__.co_code.hex()
        jitted = njit(cache=True, fastmath=FULL_DATA_FASTMATH)(py)
        setattr(self._fns, name, jitted)
        if name == "loglik_grad":  # the full-data pass inlines it (samplers.targets.model_ops)
            self._fns.loglik_grad_inline = njit(cache=True, fastmath=FULL_DATA_FASTMATH, inline="always")(py)
        return jitted

    def loglik(self, fn: Any) -> Any:
        """``loglik(m, x, y, theta) -> float``: the untempered log-likelihood of one datum."""
        return self._register("loglik", fn)

    def loglik_grad(self, fn: Any) -> Any:
        """``loglik_grad(m, x, y, theta, scale, out) -> float``: returns ``loglik(m, x, y, theta)`` and adds
        ``scale * d loglik / d theta`` into ``out`` (a length-d array; never overwrite it)."""
        return self._register("loglik_grad", fn)


def define_model(cls: type) -> ModelDefinition:
    """Register the NamedTuple class ``cls`` as a tall-data model; returns its decorators
    (:class:`ModelDefinition`). The class must be importable (module level)."""
    if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
        raise ValueError(f"define_model takes a NamedTuple class, got {cls!r:.80}")
    if "<locals>" in cls.__qualname__:
        raise ValueError(f"model class {cls.__qualname__} must be defined at module level (importable)")
    return ModelDefinition(cls)


def missing_functions(cls: type) -> list[str]:
    """The per-datum functions ``cls`` still needs (all of them if it is not registered)."""
    fns = registered(cls)
    return list(REQUIRED_FUNCTIONS) if fns is None else fns.missing()


def _per_datum(name: str, v: Any, N: int, beta: float, signed: bool = False) -> np.ndarray:
    if v is None:
        return np.zeros(N)
    a = np.broadcast_to(np.asarray(v, dtype=np.float64), (N,)).copy()
    if not np.all(np.isfinite(a)) or (not signed and np.any(a < 0)):
        raise ValueError(f"{name} must be finite{'' if signed else ' and >= 0'} for every datum")
    return beta * a


def custom_target(
    params: tuple,
    X: np.ndarray,
    y: np.ndarray | None = None,
    *,
    support: str = "all",
    lo: float = 0.0,
    hi: float = 0.0,
    R: float = 0.0,
    prior_mean: np.ndarray | float = 0.0,
    prior_prec: np.ndarray | float = 0.0,
    prior_l1: float = 0.0,
    beta: float = 1.0,
    dim: int | None = None,
    shift: np.ndarray | float | None = None,
    M: np.ndarray | float | None = None,
    c: np.ndarray | float | None = None,
) -> tall.TallData:
    """A ``CUSTOM`` :class:`~samplers.targets.tall.TallData` for the model instance ``params`` (its class
    registered by :func:`define_model` with every function) on data ``X`` (N, p) and ``y`` (N,) (zeros if
    None). ``dim`` (default p) is the dimension of theta. Bounds are for the untempered per-datum
    log-likelihood (scaled by ``beta`` here); see the module docstring. ValueError naming what is missing."""
    fns = registered(type(params))
    if fns is None or fns.missing():
        name = type(params).__name__
        raise ValueError(
            f"model {name} is missing {', '.join(missing_functions(type(params)))}: "
            f"m = define_model({name}), then decorate each function with @m.<name>"
        )
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"X must be (N, p), got shape {X.shape}")
    N = X.shape[0]
    y = np.zeros(N) if y is None else np.asarray(y, dtype=np.float64).reshape(-1)
    if y.shape != (N,):
        raise ValueError(f"y must have N = {N} entries, got {y.shape[0]}")
    if support not in SUPPORTS:
        raise ValueError(f"support must be one of {sorted(SUPPORTS)}, got {support!r}")
    if support == "box" and not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"a box support needs finite lo < hi, got [{lo}, {hi}]")
    if support == "ball" and not (np.isfinite(R) and R > 0):
        raise ValueError(f"a ball support needs a finite radius R > 0, got {R!r}")
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be positive and finite, got {beta!r}")
    d = X.shape[1] if dim is None else int(dim)
    if d < 1:
        raise ValueError(f"dim must be >= 1, got {dim!r}")
    pm = np.broadcast_to(np.asarray(prior_mean, dtype=np.float64), (d,)).copy()
    pp = np.broadcast_to(np.asarray(prior_prec, dtype=np.float64), (d,)).copy()
    if not (np.all(np.isfinite(pm)) and np.all(np.isfinite(pp)) and np.all(pp >= 0)):
        raise ValueError("prior_mean must be finite and prior_prec finite and >= 0")
    if (M is None) != (shift is None):
        raise ValueError("give the PoissonMH bounds M and shift together (0 <= loglik_i + shift_i <= M_i)")
    M_a = _per_datum("M", M, N, beta)
    return tall._make(
        CUSTOM,
        X,
        y,
        np.ones(d),
        beta,
        0.0,
        pm,
        pp,
        SUPPORTS[support],
        lo,
        hi,
        R,
        _per_datum("shift", shift, N, beta, signed=True),
        M_a,
        _per_datum("c", c, N, beta),
        prior_l1,
        params,
    )


@njit(cache=True)
def _terms(t: tall.TallData, TH: np.ndarray, out: np.ndarray) -> None:
    for k in range(TH.shape[0]):
        for i in range(t.X.shape[0]):
            out[k, i] = tall.loglik_i(t, i, TH[k])


@njit(cache=True)
def _grad_terms(t: tall.TallData, TH: np.ndarray, out: np.ndarray) -> None:
    for k in range(TH.shape[0]):
        for i in range(t.X.shape[0]):
            tall.loglik_grad_i(t, i, TH[k], 1.0, out[k, i])


def loglik_terms(t: tall.TallData, theta: np.ndarray) -> np.ndarray:
    """``ll_i(theta)`` (tempered) for every state and datum, ``(n, N)``, by the model's own functions."""
    TH = np.ascontiguousarray(np.atleast_2d(theta), dtype=np.float64)
    out = np.empty((TH.shape[0], t.X.shape[0]))
    _terms(t, TH, out)
    return out


def loglik_grad_terms(t: tall.TallData, theta: np.ndarray) -> np.ndarray:
    """``grad ll_i(theta)`` for every state and datum, ``(n, N, d)``."""
    TH = np.ascontiguousarray(np.atleast_2d(theta), dtype=np.float64)
    out = np.zeros((TH.shape[0], t.X.shape[0], TH.shape[1]))
    _grad_terms(t, TH, out)
    return out


def small_version(t: tall.TallData, n_data: int, h: float) -> tuple[tall.TallData, np.ndarray, float]:
    """The enumerable version of a tall target for verify's exact kernel-vs-matrix checks: the first
    ``n_data`` data (their bounds kept) and the lattice ``{k h : k integer}^d`` inside the support (a box
    or ball; d and the lattice must be small: at most ``verify.enumerate.MAX_STATES`` points). Returns
    ``(target, points, lo)``: ``verify.enumerate.make_lattice(points, lo, h)`` and
    ``verify.exact_mh_matrices.Lattice(points, lo, h)`` index the points."""
    if not (1 <= n_data <= t.X.shape[0]):
        raise ValueError(f"n_data must be in [1, {t.X.shape[0]}], got {n_data}")
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"h must be positive and finite, got {h!r}")
    if t.support == tall.SUPPORT_ALL:
        raise ValueError("the enumerable version needs a bounded support (box or ball)")
    d = t.prior_mean.shape[0]
    reach = t.R if t.support == tall.SUPPORT_BALL else max(abs(t.lo), abs(t.hi))
    k = int(np.floor(reach / h + 1e-9))
    if (2 * k + 1) ** d > 200_000:
        raise ValueError(f"lattice too large: (2 * {k} + 1)^{d} candidate points; raise h")
    ax = h * np.arange(-k, k + 1)
    grid = np.array(np.meshgrid(*([ax] * d), indexing="ij")).reshape(d, -1).T
    small = t._replace(
        X=np.ascontiguousarray(t.X[:n_data]),
        y=np.ascontiguousarray(t.y[:n_data]),
        shift=np.ascontiguousarray(t.shift[:n_data]),
        M=np.ascontiguousarray(t.M[:n_data]),
        c=np.ascontiguousarray(t.c[:n_data]),
    )
    keep = np.array([tall.in_support(small, g) for g in grid])
    return small, np.ascontiguousarray(grid[keep]), -k * h
