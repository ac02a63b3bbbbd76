"""Input checks shared by the metrics (one-line ValueError naming the argument)."""

from __future__ import annotations

import numpy as np


# ----------------------------------------------------------------------------------------------
# input validation
# ----------------------------------------------------------------------------------------------
def _finite_array(x, name: str, dtype=float) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric array-like: {exc}") from None
    if arr.size and not np.all(np.isfinite(arr)):
        n_bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} contains {n_bad} non-finite value(s) (NaN or inf)")
    return arr


def _draws_2d(x, name: str, min_draws: int) -> tuple[np.ndarray, bool]:
    """Return ``x`` as a C-contiguous float array of shape (n, d) and whether it was 1-D."""
    arr = _finite_array(x, name)
    if arr.ndim == 1:
        arr, was_1d = arr[:, None], True
    elif arr.ndim == 2:
        was_1d = False
    else:
        raise ValueError(f"{name} must have shape (n,) or (n, d); got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has zero dimensions (shape {arr.shape})")
    if arr.shape[0] < min_draws:
        raise ValueError(f"{name} needs at least {min_draws} draws; got {arr.shape[0]}")
    return np.ascontiguousarray(arr), was_1d


def _prob_array(p, name: str, atol: float = 1e-6) -> np.ndarray:
    arr = _finite_array(p, name)
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ValueError(f"{name} must be a non-empty probability vector (last axis)")
    if np.any(arr < 0):
        raise ValueError(f"{name} has negative entries")
    s = arr.sum(axis=-1)
    if not np.all(np.abs(s - 1.0) <= atol):
        raise ValueError(f"{name} must sum to 1 along its last axis (sums: {np.ravel(s)[:5]})")
    return arr


def _checkpoints(checkpoints, n: int, start: int = 1) -> np.ndarray:
    if checkpoints is None:
        return np.arange(start, n + 1, dtype=np.int64)
    cp = np.asarray(checkpoints)
    if cp.ndim != 1 or cp.size == 0:
        raise ValueError("checkpoints must be a non-empty 1-D array of draw counts")
    if not np.issubdtype(cp.dtype, np.integer):
        if not np.all(np.isfinite(cp)) or np.any(cp != np.round(cp)):
            raise ValueError("checkpoints must be integers (numbers of draws used)")
    cp = cp.astype(np.int64)
    if np.any(np.diff(cp) <= 0):
        raise ValueError("checkpoints must be strictly increasing")
    if cp[0] < start or cp[-1] > n:
        raise ValueError(f"checkpoints must lie in [{start}, {n}]; got [{cp[0]}, {cp[-1]}]")
    return cp
