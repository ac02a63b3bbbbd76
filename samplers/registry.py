"""The one registry of methods and targets. CLI, workflow, verify and tests all read it.

Each family registers itself in ``samplers/methods/<family>.py`` by listing :class:`MethodSpec` and
:class:`TargetSpec` objects in module-level ``METHODS`` / ``TARGETS``; adding a method is one entry there.

A method or target may also live in another package and register itself without editing ``samplers/``:

* **entry points** (an installed distribution): the groups ``minibatch_mcmc_bench.methods`` and
  ``minibatch_mcmc_bench.targets`` (:data:`METHOD_GROUP`, :data:`TARGET_GROUP`); each entry point names a
  module or object with ``METHODS`` (or ``TARGETS``), a list of specs, or one spec, e.g. in the
  distribution's ``pyproject.toml``::

      [project.entry-points."minibatch_mcmc_bench.methods"]
      my_methods = "my_package.methods"

  They are loaded with the shipped families, when this module is first imported, so every process (CLI,
  workflow jobs, tests) sees them. The plugin module imports :mod:`samplers.specs` and
  :mod:`samplers.run`, not this module.
* **a call** (a script or notebook): :func:`register` ``(spec, ...)``.

An id registered twice, or an entry point that gives anything but specs, is a one-line ``ValueError``
naming both sources; ``MCMC_BENCH_PLUGINS=0`` skips every entry point (a broken plugin cannot lock the
shipped methods away).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from samplers.problem import Problem
from samplers.result import ChainResult
from samplers.specs import MethodSpec, TargetSpec

FAMILY_MODULES = (
    "samplers.methods.baselines",
    "samplers.methods.exact_mh",
    "samplers.methods.approx",
    "samplers.methods.approx_targets",
    "samplers.methods.poisson_gibbs",
    "samplers.methods.herded",
)
METHOD_GROUP = "minibatch_mcmc_bench.methods"
TARGET_GROUP = "minibatch_mcmc_bench.targets"
PLUGINS_ENV = "MCMC_BENCH_PLUGINS"


METHODS: dict[str, MethodSpec] = {}
TARGETS: dict[str, TargetSpec] = {}
SOURCES: dict[tuple[str, str], str] = {}  # ("method" | "target", id) -> where it was registered


def specs_of(obj: Any, attr: str, kind: type, where: str) -> list[Any]:
    """The ``kind`` specs ``obj`` exposes: ``obj.<attr>`` (a module or object), a list / tuple of specs, or
    one spec; anything else is a ValueError naming ``where``."""
    if isinstance(obj, kind):
        return [obj]
    items = getattr(obj, attr, obj)
    if isinstance(items, (list, tuple)):
        bad = [x for x in items if not isinstance(x, kind)]
        if not bad:
            return list(items)
        raise ValueError(f"{where}: {attr} holds {bad[0]!r:.80}, not a {kind.__name__}")
    raise ValueError(
        f"{where} gives {obj!r:.80}: expected a module or object with {attr}, a list of "
        f"{kind.__name__}, or one {kind.__name__}"
    )


def entry_point_objects(group: str) -> list[tuple[str, Any]]:
    """``(description, loaded object)`` of every installed entry point of ``group``, sorted by name; an entry
    point that fails to import is a one-line ValueError naming it. ``MCMC_BENCH_PLUGINS=0`` in the
    environment loads none (the shipped families only)."""
    out = []
    if os.environ.get(PLUGINS_ENV, "1") == "0":
        return out
    for ep in sorted(importlib.metadata.entry_points(group=group), key=lambda e: (e.name, e.value)):
        dist = getattr(ep, "dist", None)
        where = f"entry point {ep.name} = {ep.value!r} (group {group}" + (
            f", distribution {dist.name})" if dist is not None else ")"
        )
        try:
            obj = ep.load()
        except Exception as e:  # noqa: BLE001 -- reported in one line, with its cause chained
            why = f"{type(e).__name__}: {e}".splitlines()[0]
            raise ValueError(f"{where}: cannot load it ({why}; {PLUGINS_ENV}=0 skips plugins)") from e
        out.append((where, obj))
    return out


def _add(kind: str, spec: MethodSpec | TargetSpec, where: str, replace: bool = False) -> None:
    table: dict[str, Any] = METHODS if kind == "method" else TARGETS
    if not isinstance(spec.id, str) or not spec.id:
        raise ValueError(f"{where}: {kind} id must be a non-empty string, got {spec.id!r}")
    if spec.id in table and not replace:
        raise ValueError(
            f"{kind} id {spec.id!r} from {where} is registered twice (already by {SOURCES[(kind, spec.id)]})"
        )
    table[spec.id] = spec
    SOURCES[(kind, spec.id)] = where


def _load() -> None:
    for modname in FAMILY_MODULES:
        mod = importlib.import_module(modname)
        for spec in getattr(mod, "METHODS", []):
            _add("method", spec, modname)
        for spec in getattr(mod, "TARGETS", []):
            _add("target", spec, modname)
    for kind, group, attr, cls in (
        ("method", METHOD_GROUP, "METHODS", MethodSpec),
        ("target", TARGET_GROUP, "TARGETS", TargetSpec),
    ):
        for where, obj in entry_point_objects(group):
            for spec in specs_of(obj, attr, cls, where):
                _add(kind, spec, where)


_load()


def register(
    *specs: MethodSpec | TargetSpec | Iterable[MethodSpec | TargetSpec], replace: bool = False
) -> None:
    """Register method / target specs from a script (a package uses entry points, module docstring).

    Each argument is a :class:`MethodSpec`, a :class:`TargetSpec` or an iterable of them. An id already
    registered is a ValueError unless ``replace`` (re-running a notebook cell)."""
    flat: list[Any] = []
    for s in specs:
        flat.extend([s] if isinstance(s, (MethodSpec, TargetSpec)) else list(s))
    for s in flat:
        if not isinstance(s, (MethodSpec, TargetSpec)):
            raise ValueError(f"register() takes MethodSpec / TargetSpec objects, got {s!r:.80}")
    kinds = ["method" if isinstance(s, MethodSpec) else "target" for s in flat]
    if not replace:  # all or nothing: check every id before adding any
        seen: set[tuple[str, str]] = set()
        for kind, s in zip(kinds, flat, strict=True):
            if (kind, s.id) in seen:
                raise ValueError(f"{kind} id {s.id!r} given twice to register()")
            seen.add((kind, s.id))
            if s.id in (METHODS if kind == "method" else TARGETS):
                _add(kind, s, "register()")  # raises, naming the first registration
    for kind, s in zip(kinds, flat, strict=True):
        _add(kind, s, "register()", replace)


def get_method(method_id: str) -> MethodSpec:
    try:
        return METHODS[method_id]
    except KeyError:
        raise ValueError(f"unknown method {method_id!r}; known: {', '.join(sorted(METHODS))}") from None


def get_target(target_id: str) -> TargetSpec:
    try:
        return TARGETS[target_id]
    except KeyError:
        raise ValueError(f"unknown target {target_id!r}; known: {', '.join(sorted(TARGETS))}") from None


def build_problem(
    target_id: str,
    seed: int | np.random.SeedSequence = 0,
    scale: str = "paper",
    data: Any = None,
    **params: Any,
) -> Problem:
    """Build a target at ``scale`` ("paper" = defaults, "smoke" = defaults + smoke overrides)."""
    spec = get_target(target_id)
    if scale not in ("paper", "smoke"):
        raise ValueError(f"scale must be 'paper' or 'smoke', got {scale!r}")
    kw = dict(spec.defaults)
    if scale == "smoke":
        kw.update(spec.smoke)
    unknown = set(params) - set(spec.defaults)
    if unknown:
        raise ValueError(
            f"target {target_id!r}: unknown parameters {sorted(unknown)}; accepted: {sorted(spec.defaults)}"
        )
    kw.update(params)
    if spec.data is not None:
        if data is None:
            raise ValueError(f"target {target_id!r} needs dataset {spec.data!r} (pass data=...)")
        kw["data"] = data
    return spec.build(seed, **kw)


def run(
    method_id: str,
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    thin: int = 1,
    x0: np.ndarray | None = None,
    progress: Callable[[int], None] | None = None,
    **hyper: Any,
) -> ChainResult:
    """Run a registered method with its defaults overridden by ``hyper`` (unknown keys rejected)."""
    spec = get_method(method_id)
    if problem.space not in spec.spaces:
        raise ValueError(
            f"method {method_id!r} applies to {spec.spaces} problems, not {problem.space!r} ({problem.name})"
        )
    unknown = set(hyper) - set(spec.defaults)
    if unknown:
        raise ValueError(
            f"method {method_id!r}: unknown hyperparameters {sorted(unknown)}; "
            f"accepted: {sorted(spec.defaults)}"
        )
    kw = {**spec.defaults, **hyper}
    return spec.run(problem, n_iter, seed, thin=thin, x0=x0, progress=progress, **kw)
