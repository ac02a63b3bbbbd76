"""MiniBooNE particle identification (UCI 199) for the RJMCMC experiment of Korattikara et al. 2014 §6.3.

File format (``MiniBooNE_PID.txt``, see the mirror's PROVENANCE.md): line 1 holds the counts
``n_signal n_background``; then one row per event of 50 floats in Fortran ``E14.6`` fields
(e.g. ``  0.289624E+01``); the first ``n_signal`` rows are signal (label 1, electron neutrinos),
the rest background (label 0). Missing values are written ``-0.999000E+03``.

Recipe (K14 §6.3): 50 features plus a constant feature of 1s, random 80/20 train/test
split. K14 says nothing about the -999 entries; it reports 130,065 data points (the line
count of the file including the count line), so **no rows were dropped** and we keep them all.
Our documented choice (``missing="mean"``, default): every -999 entry is replaced by the
training-split mean of that feature over its non-missing entries, which becomes exactly 0 after
standardisation (i.e. the entry carries no information for a linear model). ``missing="keep"``
leaves the raw -999 values (then standardised like the rest); ``missing="drop"`` removes rows
with any missing entry before splitting. Standardisation uses training-split mean and sd.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from ._cache import cache_path, load_cached, save_cached
from .fetch import DataUnavailable, fetch, file_hashes

__all__ = [
    "MISSING_VALUE",
    "N_FEATURES",
    "SPLIT_SEED",
    "format_miniboone",
    "load_miniboone",
    "parse_miniboone",
]

MISSING_VALUE = -999.0
N_FEATURES = 50
SPLIT_SEED = 20140621
_CACHE_VERSION = 1


def _e14_6(v: float) -> str:
    """Fortran ``E14.6``: mantissa in [0.1, 1), 6 digits, 2-digit signed exponent."""
    if v == 0.0:
        return f"{'0.000000E+00':>14}"
    if not np.isfinite(v):
        raise ValueError(f"cannot write non-finite value {v}")
    exp = int(np.floor(np.log10(abs(v)))) + 1
    mant = round(abs(v) / 10.0**exp, 6)
    if mant >= 1.0:
        mant, exp = round(mant / 10.0, 6), exp + 1
    if abs(exp) > 99:
        raise ValueError(f"exponent of {v} does not fit E14.6")
    sign = "-" if v < 0 else ""
    return f"{sign}{mant:.6f}E{exp:+03d}".rjust(14)


def format_miniboone(X: np.ndarray, n_signal: int) -> str:
    """Text in the MiniBooNE_PID.txt layout: count line, then rows of E14.6 fields."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or not 0 <= n_signal <= len(X):
        raise ValueError(f"need a 2-D array and 0 <= n_signal <= rows, got {X.shape}, {n_signal}")
    lines = [f"    {n_signal}    {len(X) - n_signal}"]
    lines += ["".join(_e14_6(v) for v in row) for row in X]
    return "\n".join(lines) + "\n"


def parse_miniboone(path: str | os.PathLike, n_features: int = N_FEATURES) -> tuple[np.ndarray, np.ndarray]:
    """Parse the MiniBooNE_PID.txt layout into (X float64 (n, n_features), y int64 1=signal).

    Validates the count line, the number of rows (= sum of the counts) and the fields per row.
    """
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.readline().split()
        body = fh.read()
    if len(head) != 2 or not all(h.isdigit() for h in head):
        raise ValueError(f"{path}: first line must hold two counts, got {head!r}")
    n_sig, n_bkg = int(head[0]), int(head[1])
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if len(lines) != n_sig + n_bkg:
        raise ValueError(
            f"{path}: {len(lines)} data rows but the count line says {n_sig} + {n_bkg} = {n_sig + n_bkg}"
        )
    for i, ln in enumerate(lines):
        if len(ln.split()) != n_features:
            raise ValueError(
                f"{path}: data row {i + 1} (line {i + 2}) has {len(ln.split())} fields, expected {n_features}"
            )
    try:
        X = np.loadtxt(io.BytesIO(b"\n".join(lines)), dtype=np.float64, ndmin=2)
    except ValueError as exc:
        raise ValueError(f"{path}: unparsable number ({exc})") from exc
    if X.shape != (n_sig + n_bkg, n_features):
        raise ValueError(f"{path}: parsed shape {X.shape} != ({n_sig + n_bkg}, {n_features})")
    if not np.isfinite(X).all():
        raise ValueError(f"{path}: non-finite values")
    y = np.zeros(len(X), dtype=np.int64)
    y[:n_sig] = 1
    return X, y


def _raw_arrays(
    path: Path | None, data_dir, mirror, cache_dir, use_cache: bool
) -> tuple[np.ndarray, np.ndarray, str]:
    if path is None:
        try:
            path = fetch("miniboone", data_dir, mirror)
        except DataUnavailable as exc:
            raise DataUnavailable(
                "MiniBooNE data unavailable: MiniBooNE_PID.txt is not shipped and could not be "
                f"downloaded ({exc}). See data/README.md."
            ) from exc
    else:
        use_cache = False  # explicit files (fixtures) are parsed afresh, never cached
    path = Path(path)
    side = path.with_name(path.name + ".sha256")  # written by fetch() after verification
    if use_cache and side.is_file():
        sha = side.read_text().split()[0]
    else:
        sha = str(file_hashes(path)["sha256"])
    recipe = {"kind": "miniboone_raw", "version": _CACHE_VERSION, "sha256": sha}
    cpath = cache_path("miniboone_raw", recipe, cache_dir)
    if use_cache and (hit := load_cached(cpath, recipe)) is not None:
        return hit["X"], hit["y"], sha
    X, y = parse_miniboone(path)
    if use_cache:
        save_cached(cpath, {"X": X, "y": y}, recipe)
    return X, y, sha


def load_miniboone(
    *,
    missing: str = "mean",
    test_fraction: float = 0.2,
    seed: int = SPLIT_SEED,
    standardize: bool = True,
    bias: bool = True,
    path: str | os.PathLike | None = None,
    data_dir: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
) -> dict[str, np.ndarray]:
    """Korattikara et al. 2014 §6.3 MiniBooNE design: (X_train, y_train, X_test, y_test, ...).

    ``path`` reads a given file (no checksum; used for fixtures); otherwise the verified
    registry file is fetched and :class:`DataUnavailable` is raised if it cannot be. Rows are
    split by a permutation from ``numpy.random.default_rng(seed)``: the first
    round(test_fraction * n) permuted rows are the test set. With ``bias`` a constant column of
    1s is appended last (51 columns). Also returns idx_train / idx_test (file row indices),
    feature_mean / feature_scale (train statistics used), n_missing_rows, source_sha256.
    """
    if missing not in ("mean", "keep", "drop"):
        raise ValueError(f"missing must be 'mean', 'keep' or 'drop', got {missing!r}")
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    X, y, sha = _raw_arrays(None if path is None else Path(path), data_dir, mirror, cache_dir, use_cache)
    miss = X == MISSING_VALUE
    rows_missing = miss.any(axis=1)
    keep = np.flatnonzero(~rows_missing) if missing == "drop" else np.arange(len(X))
    rng = np.random.default_rng(seed)
    perm = keep[rng.permutation(len(keep))]
    n_test = int(round(test_fraction * len(perm)))
    if n_test == 0 or n_test == len(perm):
        raise ValueError(f"split of {len(perm)} rows with test_fraction={test_fraction} is empty")
    idx_test, idx_train = perm[:n_test], perm[n_test:]
    Xtr, Xte = X[idx_train].copy(), X[idx_test].copy()
    if missing == "mean":
        mtr, mte = miss[idx_train], miss[idx_test]
        cnt = (~mtr).sum(axis=0)
        col_mean = np.where(mtr, 0.0, Xtr).sum(axis=0) / np.maximum(cnt, 1)
        Xtr[mtr] = np.broadcast_to(col_mean, Xtr.shape)[mtr]
        Xte[mte] = np.broadcast_to(col_mean, Xte.shape)[mte]
    if standardize:
        mu = Xtr.mean(axis=0)
        sd = Xtr.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
    else:
        mu, sd = np.zeros(X.shape[1]), np.ones(X.shape[1])
    Xtr = (Xtr - mu) / sd
    Xte = (Xte - mu) / sd
    if bias:
        Xtr = np.hstack([Xtr, np.ones((len(Xtr), 1))])
        Xte = np.hstack([Xte, np.ones((len(Xte), 1))])
    return {
        "X_train": Xtr,
        "y_train": y[idx_train],
        "X_test": Xte,
        "y_test": y[idx_test],
        "idx_train": idx_train,
        "idx_test": idx_test,
        "feature_mean": mu,
        "feature_scale": sd,
        "n_missing_rows": np.int64(rows_missing.sum()),
        "source_sha256": np.str_(sha),
    }
