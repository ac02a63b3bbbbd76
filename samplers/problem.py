"""A :class:`Problem` is a ready-to-sample target: the Numba data plus what benchmarks and checks need."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Problem:
    """``model`` is the Numba-typable data (``TallData``, ``FactorGraph``, ...); ``space`` tells which
    kernels apply ("continuous", "discrete", or a family-specific space such as "ising_param").
    ``reference(rng, n)`` returns exact draws when they are available (rejection sampling, enumeration);
    ``meta`` holds bounds (L, C, ...), true values and anything metrics need."""

    name: str
    space: str
    model: Any
    dim: int
    init: Callable[[np.random.Generator], np.ndarray]
    reference: Callable[[np.random.Generator, int], np.ndarray] | None = None
    meta: dict[str, Any] = field(default_factory=dict)
