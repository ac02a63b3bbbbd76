"""What the poisson_gibbs experiments share: running state counts kept inside Numba with O(1) work per
iteration (time-in-state accumulation of the one site that changed), log-spaced checkpoints, and an atomic
.npy write for the per-experiment caches.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
from numba import njit

FAMILY = "poisson_gibbs"


@njit(cache=True)
def _move(counts, last, j: int, old: int, new: int, t: int) -> None:
    """Site j changed from ``old`` to ``new`` at iteration t (1-based)."""
    if old != new:
        counts[j, old] += t - last[j]
        last[j] = t


@njit(cache=True)
def flush_counts(counts, last, cur, t: int, out) -> None:
    """out = running counts over iterations 1..t (pending time of the current values added)."""
    out[:] = counts
    for j in range(cur.shape[0]):
        out[j, cur[j]] += t + 1 - last[j]


def checkpoints(n_iter: int, n_points: int) -> np.ndarray:
    """Log-spaced iteration counts in [10, n_iter] (unique, increasing, ending at n_iter)."""
    cp = np.unique(np.geomspace(10, n_iter, n_points).astype(np.int64))
    return cp[cp <= n_iter]


def _save_npy(path: Path, arr: np.ndarray) -> None:
    """Atomic .npy write (temp file + os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npy")
    with os.fdopen(fd, "wb") as fh:
        np.save(fh, arr)
    os.replace(tmp, path)
