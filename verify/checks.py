"""Check registry types. A family registers ``CHECKS = [Check(...), ...]`` in
``verify/families/<family>.py``; ``mcmc-bench verify [--quick]`` runs them all.

A check returns rows for one of three tables:

* kind "exact":  kernel-vs-matrix / detailed balance / invariance checks. Row keys:
  ``check, paper, method, target, statistic, value, threshold, passed, detail``
* kind "theory": ``results/theory_vs_empirics.csv`` rows:
  ``check, paper, theorem, params, bound, measured, holds, slack`` (+ optional ``reason`` when a
  violation is documented and expected, e.g. a bound that needs assumptions the sweep leaves)
* kind "claim":  ``results/claims.csv`` rows: ``claim_id, paper, statement, evidence, measured, holds``
  (claims usually read experiment results; with ``quick`` they may run a reduced version or be skipped)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS_ENV = "MCMC_BENCH_RESULTS"


def results_dir() -> Path:
    """Where claim checks read the experiments' tables: ``$MCMC_BENCH_RESULTS`` (set by ``mcmc-bench
    verify --results-dir``), else ``results/`` of the working directory, i.e. the workflow's
    (``snakemake -d DIR`` runs every job in DIR), never the source checkout's."""
    return Path(os.environ.get(RESULTS_ENV, "results")).resolve()


THEORY_COLUMNS = ["check", "paper", "theorem", "params", "bound", "measured", "holds", "slack"]
CLAIM_COLUMNS = ["claim_id", "paper", "statement", "evidence", "measured", "holds"]
EXACT_COLUMNS = ["check", "paper", "method", "target", "statistic", "value", "threshold", "passed", "detail"]


@dataclass(frozen=True)
class Check:
    """``run(quick: bool) -> list[dict]`` rows of the table named by ``kind``.

    ``quick=True`` must finish in seconds to a minute (it runs inside the test suite);
    ``quick=False`` may use larger sweeps / more replicates."""

    id: str
    kind: str  # "exact" | "theory" | "claim"
    paper: str
    description: str
    run: Callable[[bool], list[dict[str, Any]]]
    family: str = "baseline"
