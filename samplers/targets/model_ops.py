"""Compile-time selection of a user model's per-datum functions (the ``CUSTOM`` kind of
:mod:`samplers.targets.likelihoods`).

A tall target carries an ``ops`` field: :class:`NoOps` (an empty NamedTuple) for the shipped kinds, or an
instance of a user's NamedTuple class registered by :func:`samplers.targets.custom.define_model`. The
kernels call the stubs :func:`custom_loglik` / :func:`custom_loglik_grad`; ``numba.extending.overload``
resolves them at TYPING time from the Numba type of ``ops``, so no function object is passed at run time
and every kernel keeps ``cache=True`` across processes (a jitted function passed as an argument, a
closure or a jitclass would not: Numba keys such dispatchers by address).

The Numba type of a registered class is :class:`UserOpsType`, a NamedTuple type whose identity (its
``key``, hence the kernels' cache-index keys) is ``(module, class name, fingerprint, field types)``:

* the fingerprint hashes the class and the registered functions' source, so editing a model function
  recompiles the kernels for that model instead of loading machine code of the old one (Numba's cache
  checks only the kernel's own source);
* it pickles by name, not by class reference: a kernel's cache index that holds a user model's entry
  still loads in a process where that model's module cannot be imported (the entry then simply never
  matches), so a user model never breaks the shipped targets' caches.
"""

from __future__ import annotations

import collections
import hashlib
import importlib
import inspect
import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from numba import types
from numba.core.datamodel.models import TupleModel
from numba.extending import overload, register_model, typeof_impl


class NoOps(NamedTuple):
    """The ``ops`` field of every shipped target: no user functions (an empty struct, free to pass)."""


NO_OPS = NoOps()


@typeof_impl.register(NoOps)
def _typeof_no_ops(val, c):
    return types.NamedTuple((), NoOps)


def _rebuild_user_ops(module: str, qualname: str, fields, tys, fingerprint: str):
    """Unpickle a :class:`UserOpsType`: the live class if importable, else a stand-in with its fields (the
    type's key, which is all a cache index compares, does not depend on the class object)."""
    try:
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
    except Exception:  # noqa: BLE001 - any import failure: a stand-in class
        cls = collections.namedtuple(qualname.split(".")[-1], fields)
    return UserOpsType(tys, cls, module, qualname, fingerprint)


class UserOpsType(types.NamedTuple):
    """Numba type of a registered model's parameter NamedTuple (see the module docstring)."""

    def __init__(self, tys, cls, module: str, qualname: str, fingerprint: str):
        self.module = module
        self.qualname = qualname
        self.fingerprint = fingerprint
        super().__init__(tys, cls)
        self.name = f"{qualname}[{fingerprint[:12]}]({', '.join(str(t) for t in self.types)})"

    @property
    def key(self):
        return ("user_model", self.module, self.qualname, self.fingerprint, self.types)

    def __reduce__(self):
        return (_rebuild_user_ops, (self.module, self.qualname, self.fields, self.types, self.fingerprint))


register_model(UserOpsType)(TupleModel)


@dataclass
class ModelFunctions:
    """The jitted per-datum functions registered for one model class."""

    cls: type
    loglik: Any = None
    loglik_grad: Any = None
    loglik_grad_inline: Any = None  # the same function compiled inline="always" (the full-data pass)
    sources: dict = field(default_factory=dict)

    def missing(self) -> list[str]:
        return [name for name in REQUIRED_FUNCTIONS if getattr(self, name) is None]

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        try:
            h.update(inspect.getsource(self.cls).encode())
        except (OSError, TypeError):
            h.update(repr(self.cls._fields).encode())
        for name in sorted(self.sources):
            h.update(name.encode())
            h.update(self.sources[name].encode())
        return h.hexdigest()


REQUIRED_FUNCTIONS = ("loglik", "loglik_grad")
_MODELS: dict[tuple[str, str], ModelFunctions] = {}


def model_key(cls: type) -> tuple[str, str]:
    return (cls.__module__, cls.__qualname__)


def registered(cls: type) -> ModelFunctions | None:
    return _MODELS.get(model_key(cls))


def register_class(cls: type) -> ModelFunctions:
    """Register ``cls`` (a NamedTuple class) and its Numba typing; idempotent per class."""
    key = model_key(cls)
    fns = _MODELS.get(key)
    if fns is not None and fns.cls is cls:
        return fns
    fns = ModelFunctions(cls)
    _MODELS[key] = fns

    @typeof_impl.register(cls)
    def _typeof_model(val, c):
        tys = [typeof_impl(v, c) for v in val]
        if any(ty is None for ty in tys):
            return None
        return UserOpsType(tuple(types.unliteral(t) for t in tys), cls, key[0], key[1], fns.fingerprint())

    return fns


def _functions_of(ops) -> ModelFunctions:
    fns = _MODELS.get((ops.module, ops.qualname))
    if fns is None:
        raise TypeError(f"model {ops.qualname} has no registered functions (samplers.targets.custom)")
    return fns


# ----------------------------------------------------------------------------- stubs the kernels call
def custom_loglik(ops, x, yi, theta):
    """``ll_i(theta)`` of the model ``ops`` (untempered) at datum row ``x = X[i]``, response ``yi``."""
    raise NotImplementedError("called outside Numba")


def custom_loglik_grad(ops, x, yi, theta, scale, out):
    """``ll_i(theta)`` (untempered); adds ``scale * grad ll_i(theta)`` into ``out``."""
    raise NotImplementedError("called outside Numba")


def custom_loglik_grad_full(ops, x, yi, theta, scale, out):
    """:func:`custom_loglik_grad` inlined into the caller (the full-data gradient pass)."""
    raise NotImplementedError("called outside Numba")


@overload(custom_loglik)
def _ov_custom_loglik(ops, x, yi, theta):
    if isinstance(ops, UserOpsType):
        fn = _functions_of(ops).loglik

        def impl(ops, x, yi, theta):
            return fn(ops, x, yi, theta)

        return impl

    def no_model(ops, x, yi, theta):  # shipped targets (NoOps): never reached, kind != CUSTOM
        return math.nan

    return no_model


def _grad_overload(which: str):
    def ov(ops, x, yi, theta, scale, out):
        if isinstance(ops, UserOpsType):
            fn = getattr(_functions_of(ops), which)

            def impl(ops, x, yi, theta, scale, out):
                return fn(ops, x, yi, theta, scale, out)

            return impl

        def no_model(ops, x, yi, theta, scale, out):
            return math.nan

        return no_model

    return ov


overload(custom_loglik_grad)(_grad_overload("loglik_grad"))
# A full-data gradient pass calling the model per datum out of line cannot keep ``out`` in registers: 128 ns a
# datum against the shipped logistic loop's 44. Inlined (Numba IR inlining of the stub and the function) it
# costs 49 (bench.user_target_cost). Only that pass inlines: the minibatch hot loops call the model out of
# line at the shipped kind's cost (PoissonMH 1.02x); inlining there made Numba emit NumbaIRAssumptionWarning.
overload(custom_loglik_grad_full, inline="always")(_grad_overload("loglik_grad_inline"))
