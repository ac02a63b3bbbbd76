"""The one registry of methods and targets. CLI, workflow, verify and tests all read it.

Each family registers itself in ``samplers/methods/<family>.py`` by listing :class:`MethodSpec` and
:class:`TargetSpec` objects in module-level ``METHODS`` / ``TARGETS``; adding a method is one entry there.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from samplers.problem import Problem
from samplers.result import ChainResult
from samplers.specs import MethodSpec, TargetSpec

FAMILY_MODULES = (
    "samplers.methods.baselines",
    "samplers.methods.exact_mh",
    "samplers.methods.approx",
    "samplers.methods.poisson_gibbs",
    "samplers.methods.herded",
)


METHODS: dict[str, MethodSpec] = {}
TARGETS: dict[str, TargetSpec] = {}


def _load() -> None:
    for modname in FAMILY_MODULES:
        mod = importlib.import_module(modname)
        for spec in getattr(mod, "METHODS", []):
            if spec.id in METHODS:
                raise RuntimeError(f"method id {spec.id!r} registered twice")
            METHODS[spec.id] = spec
        for spec in getattr(mod, "TARGETS", []):
            if spec.id in TARGETS:
                raise RuntimeError(f"target id {spec.id!r} registered twice")
            TARGETS[spec.id] = spec


_load()


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
