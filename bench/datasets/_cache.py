"""Atomic .npz cache of preprocessed arrays, keyed by a hash of the preprocessing recipe."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from .fetch import _make_readable, resolve_cache_dir

__all__ = ["cache_path", "load_cached", "recipe_key", "save_cached"]


def recipe_key(recipe: dict) -> str:
    """First 16 hex digits of sha256 of the canonical JSON of ``recipe``."""
    blob = json.dumps(recipe, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def cache_path(stem: str, recipe: dict, cache_dir: str | os.PathLike | None = None) -> Path:
    """``<cache_dir>/<stem>-<recipe_key>.npz``."""
    return resolve_cache_dir(cache_dir) / f"{stem}-{recipe_key(recipe)}.npz"


def save_cached(path: Path, arrays: dict, recipe: dict, compressed: bool = False) -> None:
    """Write ``arrays`` plus the recipe JSON to ``path`` atomically (temp file + os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = dict(arrays)
    payload["__recipe__"] = np.array(json.dumps(recipe, sort_keys=True))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            (np.savez_compressed if compressed else np.savez)(fh, **payload)
        _make_readable(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_cached(path: Path, recipe: dict) -> dict | None:
    """Arrays stored at ``path`` if it exists, is readable and holds the same recipe; else None."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["__recipe__"]) != json.dumps(recipe, sort_keys=True):
                return None
            return {k: z[k] for k in z.files if k != "__recipe__"}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
