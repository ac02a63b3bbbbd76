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


# Tests that re-run, one by one, checks which the smoke-workflow test already runs end to end (its
# `verify` rule runs `mcmc-bench verify --quick` for every family and the workflow fails if any check
# fails), plus the long invariance run on the truncated Gaussian. `make test` deselects them to keep the
# README test command near 15 minutes; `make test-all` runs them.
EXTENDED = {
    "tests/test_verify_runner.py::test_quick_verify_all_families",
    "tests/test_verify_continuous.py::test_invariance_truncated_gaussian_smoke",
    "tests/test_exact_mh_verify.py::test_check_quick_slow",
    "tests/test_approx.py::test_austere_kernel_vs_matrix_and_mutants",
    "tests/test_approx.py::test_minibatch_kernel_vs_matrix_and_mutant",
    "tests/test_approx.py::test_other_kernels_vs_matrix_and_mutants",
    "tests/test_herded_verify.py::test_incomplete_graph_rows",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.split("[")[0] in EXTENDED:
            item.add_marker(pytest.mark.extended)
