"""Benchmark-suite setup: the opt-in ``benchmark_large`` marker and the session store the regression
gate (tests/benchmarks/test_bench_registry.py::test_regression_gate) reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Paper-scale benchmarks run only when selected explicitly (``-m benchmark_large``)."""
    if "benchmark_large" in (config.getoption("markexpr", "") or ""):
        return
    skip = pytest.mark.skip(reason="paper-scale benchmark: opt in with -m benchmark_large")
    for item in items:
        if "benchmark_large" in item.keywords:
            item.add_marker(skip)


@dataclass
class PerfStore:
    """Entries measured in this session (key -> bench.perf_compare.Entry) and how to re-measure them."""

    entries: dict[str, Any] = field(default_factory=dict)
    remeasure: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


@pytest.fixture(scope="session")
def perf_store() -> PerfStore:
    return PerfStore()
