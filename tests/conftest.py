"""Shared test setup (the Numba cache directory is chosen by ``samplers/__init__.py``, keyed by a hash
of the numerical sources) and common helpers."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("MCMC_BENCH_MIRROR", str(ROOT.parent / "shared" / "datasets"))

import pytest  # noqa: E402

import samplers  # noqa: E402,F401  (sets NUMBA_CACHE_DIR before any test module imports numba)

SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    p = SHARED / "datasets"
    if not p.is_dir():
        pytest.skip("../shared/datasets not present")
    return p
