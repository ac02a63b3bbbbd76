"""The results store: one compact table per experiment holding every finished paper-scale cell.

``results/store/<experiment>.csv.xz`` (xz-compressed CSV, one line per result row of a cell; a cell that is
not "ok" has one line with its status and message). The columns, documented in ``results/store/README.md``:

* provenance (:data:`PROVENANCE`): experiment, cell, row, status, message, params, scale, config_hash, seed,
  wall_seconds, cell_sample_seconds, cell_compile_seconds, cpu_seconds, code_commit, cpu, numba, python,
  finished_utc;
* then the experiment's metric columns, one per key of its cells' result rows. Each value is the row's value
  as JSON (a string that is not itself valid JSON is written as is, so ``barker`` reads ``barker``); an empty
  field means the row has no such key. Numbers are exact; a float inside a list (per-coordinate ESS, MSE
  curves ...) is kept to :data:`LIST_DIGITS` significant digits, which is what keeps the store small.

Both ways into the tables go through :func:`analysis_frame`: the live workflow turns the cell records of a run
into this table in memory (:func:`frame_of_records`) and the rebuild reads it from the committed file
(:func:`read`, then :func:`select` the cells a config enumerates), so a table rebuilt from the store is the
table a fresh run of the same cells gives.

``mcmc-bench store add`` puts finished cell records into the store (a cell already there is replaced),
``mcmc-bench store check`` validates every file against a config. Every write is atomic.
"""

from __future__ import annotations

import json
import lzma
import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from bench.cells import (
    RECORD_FIELDS,
    REPO,
    STATUS_OK,
    STATUSES,
    _differing,
    _flat,
    cell_config_hash,
    enumerate_cells,
)
from bench.experiment import Experiment
from bench.outputs import _umask_mode

STORE = REPO / "results" / "store"
SUFFIX = ".csv.xz"
LIST_DIGITS = 7
# name -> meaning (results/store/README.md repeats these; a test keeps the two equal)
PROVENANCE: dict[str, str] = {
    "experiment": "experiment id (bench.experiments)",
    "cell": "cell id (unique within the experiment)",
    "row": "index of this row among the cell's result rows (0 for a cell that is not ok)",
    "status": "ok | data unavailable | error",
    "message": "why a cell is not ok (empty if ok)",
    "params": "the cell's params as JSON (method, rate, run ...: what the experiment's enumeration gives it)",
    "scale": "paper | smoke",
    "config_hash": "bench.cells.cell_config_hash of experiment, scale, params, settings without grid keys",
    "seed": "the cell's numpy SeedSequence as entropy:[spawn key] (root seed and a hash of the cell id)",
    "wall_seconds": "wall time of the cell's run_cell (data loading, tuning, every chain, metrics), s",
    "cell_sample_seconds": "sampling time summed over the cell's chains, compile excluded, s (nan: unknown)",
    "cell_compile_seconds": "JIT compile time summed over the cell's chains, s (nan: unknown)",
    "cpu_seconds": "CPU time of the process that ran the cell (start-up included), s (nan: unknown)",
    "code_commit": "git commit of the code that ran the cell (+dirty: uncommitted changes in the code)",
    "cpu": "the CPU LLVM compiled the kernels for (chains are bit-identical on one CPU kind)",
    "numba": "Numba version",
    "python": "Python version",
    "finished_utc": "when the cell finished (UTC, ISO 8601)",
}
FLOAT_COLUMNS = ("wall_seconds", "cell_sample_seconds", "cell_compile_seconds", "cpu_seconds")
# the keys run_one stamps on every result row: kept once, as provenance
STAMP = tuple(k for k in RECORD_FIELDS)


def path_of(exp_id: str, store: str | os.PathLike = STORE) -> Path:
    return Path(store) / f"{exp_id}{SUFFIX}"


# ------------------------------------------------------------------------------ values
def _rounded(v: Any) -> Any:
    if isinstance(v, float):
        return float(f"{v:.{LIST_DIGITS}g}") if math.isfinite(v) else v
    if isinstance(v, list):
        return [_rounded(x) for x in v]
    if isinstance(v, dict):
        return {k: _rounded(x) for k, x in v.items()}
    return v


def encode_value(v: Any) -> str:
    """One metric value as stored (see the module docstring)."""
    if isinstance(v, str):
        try:
            json.loads(v)
        except ValueError:
            return v if v else json.dumps(v)
        return json.dumps(v)
    if isinstance(v, (list, dict)):
        return json.dumps(_rounded(v), separators=(",", ":"))
    return json.dumps(v)


_ABSENT = object()


def decode_value(text: str) -> Any:
    """Inverse of :func:`encode_value`; the empty string (no such key) gives ``_ABSENT``."""
    if text == "":
        return _ABSENT
    try:
        return json.loads(text)
    except ValueError:
        return text


# ------------------------------------------------------------------------------ records -> table
def rows_of_record(rec: dict) -> list[dict[str, str]]:
    """The store lines of one cell record (all values as stored text)."""
    prov = {
        "experiment": rec["experiment"],
        "cell": rec["cell"],
        "status": rec["status"],
        "message": rec.get("message", ""),
        "params": json.dumps(rec["params"], sort_keys=True, separators=(",", ":")),
        "scale": rec.get("scale", ""),
        "config_hash": rec["config_hash"],
        "seed": rec["seed"],
        "wall_seconds": repr(float(rec["wall_seconds"])),
        "cell_sample_seconds": repr(float(rec.get("sample_seconds", math.nan))),
        "cell_compile_seconds": repr(float(rec.get("compile_seconds", math.nan))),
        "cpu_seconds": repr(float(rec.get("cpu_seconds", math.nan))),
        "code_commit": rec.get("code_commit", "unknown"),
        "cpu": rec.get("cpu", ""),
        "numba": rec.get("numba", ""),
        "python": rec.get("python", ""),
        "finished_utc": rec.get("finished_utc", ""),
    }
    where = f"{rec['experiment']}/{rec['cell']}"
    if rec["status"] != STATUS_OK:
        return [{**prov, "row": "0"}]
    out = []
    for i, r in enumerate(rec["rows"]):
        line = {**prov, "row": str(i)}
        for k, v in r.items():
            if k in STAMP:
                if v != rec[k]:
                    raise ValueError(f"{where}: row {i} has {k}={v!r}, its cell {rec[k]!r}")
                continue
            if k in PROVENANCE:
                raise ValueError(f"{where}: result key {k!r} is a store provenance column; rename it")
            line[k] = encode_value(v)
        out.append(line)
    return out


def frame_of_records(records: Iterable[dict]) -> pd.DataFrame:
    """The store table of ``records`` (cell records as :func:`bench.cells.run_one` writes them), in their
    order: provenance columns first, then the metric columns in order of first appearance."""
    lines = [line for rec in records for line in rows_of_record(rec)]
    cols = list(PROVENANCE) + [k for k in dict.fromkeys(k for ln in lines for k in ln) if k not in PROVENANCE]
    return pd.DataFrame(lines, columns=cols, dtype=object).fillna("")


# ------------------------------------------------------------------------------ table -> analysis
def analysis_frame(table: pd.DataFrame) -> pd.DataFrame:
    """What ``Experiment.summarize`` gets: every result row of the ok cells (metrics, then the cell's
    experiment, cell, config_hash, seed, wall_seconds, status), and one row per cell that is not ok (its
    params, those fields and its message), in the table's order."""
    metrics = [c for c in table.columns if c not in PROVENANCE]
    rows: list[dict] = []
    for line in table.to_dict("records"):
        stamp = {
            "experiment": line["experiment"],
            "cell": line["cell"],
            "config_hash": line["config_hash"],
            "seed": line["seed"],
            "wall_seconds": float(line["wall_seconds"]),
            "status": line["status"],
        }
        if line["status"] == STATUS_OK:
            r = {k: v for k in metrics if (v := decode_value(line[k])) is not _ABSENT}
            rows.append({**r, **stamp})
        else:
            base = {k: _flat(v) for k, v in json.loads(line["params"]).items()}
            rows.append({**base, **stamp, "message": line["message"]})
    df = pd.DataFrame(rows)
    for k in RECORD_FIELDS:
        if k not in df.columns:
            df[k] = pd.Series(dtype=object)
    return df


def status_frame(table: pd.DataFrame) -> pd.DataFrame:
    """One row per cell of ``table``: the generic ``<experiment>_cells`` status table."""
    cols = ["experiment", "cell", "status", "config_hash", "seed", "wall_seconds", "n_rows", "message",
            "finished_utc"]  # fmt: skip
    rows = []
    for cell, g in table.groupby("cell", sort=False):
        first = g.iloc[0]
        rows.append(
            {
                "experiment": first["experiment"],
                "cell": cell,
                "status": first["status"],
                "config_hash": first["config_hash"],
                "seed": first["seed"],
                "wall_seconds": float(first["wall_seconds"]),
                "n_rows": len(g) if first["status"] == STATUS_OK else 0,
                "message": first["message"],
                "finished_utc": first["finished_utc"],
            }
        )
    return pd.DataFrame(rows, columns=cols)


# ------------------------------------------------------------------------------ files
def read(path: str | os.PathLike, experiment: str | None = None) -> pd.DataFrame:
    """A store file, every value as text, checked: readable, the provenance columns, one experiment (the
    file's name), known statuses, rows 0..n-1 of each cell once. ValueError naming the file otherwise."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such store file")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, compression="xz")
    except (lzma.LZMAError, EOFError, pd.errors.ParserError, UnicodeDecodeError, OSError) as e:
        raise ValueError(f"{path}: not a readable store file ({type(e).__name__}: {e})") from None
    missing = [c for c in PROVENANCE if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: not a store file: missing columns {missing}")
    exp = experiment or path.name.removesuffix(SUFFIX)
    bad = df[df["experiment"] != exp]
    if len(bad):
        raise ValueError(
            f"{path}: line {bad.index[0] + 2} is of experiment {bad['experiment'].iloc[0]!r}, not {exp!r}"
        )
    bad = df[~df["status"].isin(STATUSES)]
    if len(bad):
        raise ValueError(
            f"{path}: line {bad.index[0] + 2} has status {bad['status'].iloc[0]!r}; known: {STATUSES}"
        )
    for c in FLOAT_COLUMNS:
        try:
            df[c].map(float)
        except ValueError:
            raise ValueError(f"{path}: column {c} holds a value that is not a number") from None
    try:
        rown = df["row"].map(int)
    except ValueError:
        raise ValueError(f"{path}: column row holds a value that is not an integer") from None
    for cell, g in rown.groupby(df["cell"], sort=False):
        if list(g) != list(range(len(g))):
            raise ValueError(
                f"{path}: cell {cell!r} has rows {list(g)[:6]}, expected 0..{len(g) - 1} once each"
            )
    return df


def write(path: str | os.PathLike, table: pd.DataFrame) -> Path:
    """Write a store table atomically (temporary file beside it, then ``os.replace``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    try:
        with lzma.open(tmp, "wt", preset=9, encoding="utf-8", newline="") as fh:
            table.to_csv(fh, index=False)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def merge(old: pd.DataFrame | None, new: pd.DataFrame) -> pd.DataFrame:
    """``old`` with every cell of ``new`` replaced by (or added as) ``new``'s lines; sorted by cell id, then
    row (the store's order; tables are built in the enumeration order of the config, see :func:`select`)."""
    if old is not None and len(old):
        old = old[~old["cell"].isin(set(new["cell"]))]
        new = pd.concat([old, new], ignore_index=True).fillna("")
    cols = list(PROVENANCE) + [c for c in new.columns if c not in PROVENANCE]
    key = new["row"].map(int)
    return (
        new[cols]
        .assign(_r=key)
        .sort_values(["cell", "_r"], kind="stable")
        .drop(columns="_r")
        .reset_index(drop=True)
    )


def add(exp: Experiment, records: list[dict], store: str | os.PathLike = STORE) -> tuple[Path, int]:
    """Put ``records`` (cells of ``exp``, already checked current by the caller) into the store; a cell
    already stored is replaced. Returns the file and the number of cells it holds."""
    p = path_of(exp.id, store)
    old = read(p, exp.id) if p.exists() else None
    table = merge(old, frame_of_records(records))
    write(p, table)
    return p, table["cell"].nunique()


def select(
    exp: Experiment, settings: dict, scale: str, table: pd.DataFrame, where: str = "store"
) -> tuple[pd.DataFrame, list[str]]:
    """The lines of the cells ``settings`` enumerates that the store holds, in enumeration order, and the
    ids of the enumerated cells it does not hold. A stored cell whose params or config hash are not what the
    config gives it is an error (it was computed with other settings: rerun it and ``store add``)."""
    cells = enumerate_cells(exp, settings)
    held = {c: g for c, g in table.groupby("cell", sort=False)}
    parts, missing, stale = [], [], []
    for p in cells:
        g = held.get(p["cell"])
        if g is None:
            missing.append(p["cell"])
            continue
        first = g.iloc[0]
        if first["scale"] != scale or _differing(json.loads(first["params"]), p):
            stale.append(f"{p['cell']} (params or scale differ from the config's)")
        elif first["config_hash"] != (h := cell_config_hash(exp, scale, settings, p)):
            stale.append(f"{p['cell']} (stored hash {first['config_hash']}, the config gives {h})")
        parts.append(g)
    if stale:
        raise ValueError(
            f"{where}: {len(stale)} stored cell(s) of {exp.id} were computed with other settings than the "
            f"config's, e.g. {stale[0]}; rerun them and `mcmc-bench store add`"
        )
    sel = pd.concat(parts, ignore_index=True) if parts else table.iloc[0:0]
    return sel, missing
