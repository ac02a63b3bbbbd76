"""The one result schema for a chain run (DESIGN.md "Result record")."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


def config_hash(config: dict[str, Any]) -> str:
    """Stable 12-hex-digit hash of a JSON-serialisable config (sorted keys)."""
    blob = json.dumps(config, sort_keys=True, default=_jsonable).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def _jsonable(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON-serialisable: {type(o).__name__}")


# Sampling and compile seconds of every ChainResult made in this process (chains, count), read by the cell
# runner (bench.cells.run_one) to record a cell's sampling and compile time beside its wall time.
_TOTALS = [0.0, 0.0, 0]


def chain_totals() -> tuple[float, float, int]:
    """``(sample_seconds, compile_seconds, chains)`` summed over every :class:`ChainResult` made so far in
    this process (take differences around a piece of work)."""
    return _TOTALS[0], _TOTALS[1], _TOTALS[2]


@dataclass
class ChainResult:
    """Samples and costs of one chain. ``n_evals[t]`` = per-datum (or per-factor) evaluations at
    iteration t, the "batch size" reported in every table; ``sample_seconds`` excludes compilation."""

    method: str
    target: str
    seed: str
    n_iter: int
    thin: int
    samples: np.ndarray
    accepted: np.ndarray
    n_evals: np.ndarray
    sample_seconds: float
    compile_seconds: float
    hyper: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    config_hash: str = ""

    def __post_init__(self) -> None:
        _TOTALS[0] += float(self.sample_seconds)
        _TOTALS[1] += float(self.compile_seconds)
        _TOTALS[2] += 1

    @property
    def accept_rate(self) -> float:
        return float(np.mean(self.accepted)) if self.accepted.size else float("nan")

    @property
    def mean_batch(self) -> float:
        return float(np.mean(self.n_evals)) if self.n_evals.size else float("nan")

    def summary(self) -> dict[str, Any]:
        """Flat row for tables (no arrays)."""
        row = {
            "method": self.method,
            "target": self.target,
            "seed": self.seed,
            "config_hash": self.config_hash,
            "n_iter": self.n_iter,
            "thin": self.thin,
            "accept_rate": self.accept_rate,
            "mean_batch": self.mean_batch,
            "sample_seconds": self.sample_seconds,
            "compile_seconds": self.compile_seconds,
            "sec_per_iter": self.sample_seconds / max(self.n_iter, 1),
        }
        for k, v in self.hyper.items():
            row[f"hp_{k}"] = v
        for k, v in self.extra.items():
            if np.isscalar(v):
                row[k] = v
        return row

    def save(self, path: str | os.PathLike) -> Path:
        """Write ``.npz`` (arrays) with the metadata as JSON inside, atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            k: getattr(self, k)
            for k in (
                "method",
                "target",
                "seed",
                "n_iter",
                "thin",
                "sample_seconds",
                "compile_seconds",
                "config_hash",
            )
        }
        meta["hyper"] = self.hyper
        arrays = {k: np.asarray(v) for k, v in self.extra.items() if isinstance(v, np.ndarray)}
        meta["extra"] = {k: v for k, v in self.extra.items() if not isinstance(v, np.ndarray)}
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp.npz")
        os.close(fd)
        os.chmod(tmp, _umask_mode())
        try:
            np.savez_compressed(
                tmp,
                samples=self.samples,
                accepted=self.accepted,
                n_evals=self.n_evals,
                meta=np.array(json.dumps(meta, default=_jsonable)),
                **{f"extra_{k}": v for k, v in arrays.items()},
            )
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> ChainResult:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            extra = dict(meta.pop("extra"))
            extra.update({k[6:]: z[k] for k in z.files if k.startswith("extra_")})
            return cls(
                samples=z["samples"], accepted=z["accepted"], n_evals=z["n_evals"], extra=extra, **meta
            )


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write text atomically (temp file in the same directory + os.replace; umask permissions)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.chmod(tmp, _umask_mode())
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
