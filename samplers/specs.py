"""Registry entry types (kept apart from :mod:`samplers.registry` so family modules can import them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from samplers.problem import Problem
from samplers.result import ChainResult


@dataclass(frozen=True)
class MethodSpec:
    """``run(problem, n_iter, seed, *, thin, x0, progress, **hyper) -> ChainResult``.

    ``defaults`` lists every accepted hyperparameter with its default (unknown keys are rejected);
    ``step_param`` names the hyperparameter tuned to a target acceptance rate (None: not tunable);
    ``twin`` is the full-batch counterpart used for speed-up ratios; ``spaces`` the problem spaces it
    accepts; ``exact`` whether the method leaves the target invariant exactly."""

    id: str
    family: str
    run: Callable[..., ChainResult]
    spaces: tuple[str, ...]
    defaults: dict[str, Any]
    exact: bool
    paper: str
    description: str
    step_param: str | None = "step"
    twin: str | None = None


@dataclass(frozen=True)
class TargetSpec:
    """``build(seed, **params) -> Problem``; ``defaults`` = paper scale, ``smoke`` = tiny overrides;
    ``data`` names a dataset the bench layer must load and pass as ``data=`` (None: synthetic)."""

    id: str
    space: str
    build: Callable[..., Problem]
    defaults: dict[str, Any]
    paper: str
    description: str
    smoke: dict[str, Any] = field(default_factory=dict)
    data: str | None = None
