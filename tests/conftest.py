"""Shared test setup: a persistent Numba cache (set before numba is imported) and common helpers."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".numba_cache"))
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("MCMC_BENCH_MIRROR", str(ROOT.parent / "shared" / "datasets"))

import pytest  # noqa: E402

SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    p = SHARED / "datasets"
    if not p.is_dir():
        pytest.skip("../shared/datasets not present")
    return p
