"""Generic cell machinery: settings, enumeration, seeds, running one cell, aggregation.

Every experiment (see :mod:`bench.experiment`) plugs in here; the Snakefile and the CLI only call
these functions, so adding an experiment never edits the workflow.

Settings
    ``experiment_settings(exp, scale, overrides)`` = ``exp.settings[scale]`` deep-merged with the
    workflow config's ``overrides[exp.id]["settings"]`` when ``overrides[exp.id]["scale"]`` is that
    scale (unknown keys are rejected; every override carries a written ``reason``, enforced by the
    config schema); grid keys must be positive integers (replicate counts) or non-empty lists
    (selections).
Config
    ``validate_config(cfg, where)``: a workflow config, its absent keys taken from config/default.yaml
    (but not its overrides), against workflow/schemas/config.schema.yaml (unknown keys, bad values, missing
    reasons), plus what the schema cannot know: experiment ids in ``experiments`` and ``overrides`` are
    registered. The CLI's ``--config`` goes through it.
Seeds
    One :class:`numpy.random.SeedSequence` per cell: entropy = the config's ``root_seed``, spawn key
    = four 32-bit words of ``sha256("<experiment>/<cell>")``. It depends only on the root seed and
    the cell id, so adding, removing or reordering cells never changes another cell's seed. Runs and
    chains inside a cell take :func:`child_seed` ``(cell_seed, run, chain)`` (spawn key extended by
    the indices; independent of call order).
Cell records
    ``results/cells/<experiment>/<cell>.json`` (atomic write): experiment, cell, params, scale,
    config_hash (of experiment, scale, the cell's settings and params), seed, wall_seconds, status, message,
    rows. ``status`` is ``"ok"``, ``"data unavailable"`` (a :class:`DataUnavailable` was raised
    anywhere in the cell: no crash, the tables show it) or ``"error"`` (message + traceback kept;
    the workflow's ``check_cells`` step then fails loudly).
Cell settings
    A cell sees ``cell_settings(exp, settings)``: the settings without the experiment's
    ``grid_keys`` (replicate counts such as ``runs`` and selections such as ``methods``, which only
    enumerate cells; each cell's params carry its index, method, rate ...). Its config hash covers
    exactly what it sees, so raising ``runs`` or selecting fewer methods keeps every finished cell
    valid, and a cell that reads a grid key fails loudly (KeyError) instead of making its result
    depend on which other cells exist.
Methods from config alone
    ``settings["method_settings"]`` (:data:`METHOD_SETTINGS`, usually given by a config override, absent
    by default) maps a method id to its own settings; every cell of that method carries its entry in its
    params (``params["method_settings"]``), no other cell sees it, and the experiment's cell config and
    cell settings leave it out, so adding a method with its settings changes no other cell's hash and
    rewrites no config file. :func:`method_setting` reads a per-method value (the cell's entry, then the
    experiment's per-method table, then a default); :func:`method_hyper` gives a method's hyperparameters
    with a tuned step where none is set (:func:`samplers.tuning.tune_step` to the method's
    ``accept_target``, default :data:`DEFAULT_ACCEPT_TARGET`).
Aggregation
    ``aggregate(exp, settings, records, out)`` builds one DataFrame (all rows of ok cells, plus one
    row per cell that is not ok with its params, ``status`` and ``message``), writes the generic
    ``<experiment>_cells`` status table and calls ``exp.summarize(df, settings, out)``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import platform
import re
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.experiment import Experiment
from bench.outputs import atomic_write_text
from samplers.result import _jsonable, chain_totals, config_hash

STATUS_OK = "ok"
STATUS_UNAVAILABLE = "data unavailable"
STATUS_ERROR = "error"
STATUSES = (STATUS_OK, STATUS_UNAVAILABLE, STATUS_ERROR)
SCALES = ("paper", "smoke")
REPO = Path(__file__).resolve().parents[1]
CONFIG_SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
DEFAULT_CONFIG = REPO / "config" / "default.yaml"
MAX_GROWN_CELLS = 200_000  # find_cell(grow=True) stops doubling the replicate counts beyond this
CELL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.=+-]*$")
DEFAULT_ROOT_SEED = 20261122
METHOD_SETTINGS = "method_settings"
# acceptance rate a method without one of its own is tuned to: the middle of the three rates the papers
# hand-tune to (0.25 / 0.4 / 0.55, Yuan & Wang 2024, §5.1)
DEFAULT_ACCEPT_TARGET = 0.4
RECORD_FIELDS = ("experiment", "cell", "config_hash", "seed", "wall_seconds", "status")
CELLS_COLUMNS = [
    "experiment",
    "cell",
    "status",
    "config_hash",
    "seed",
    "wall_seconds",
    "n_rows",
    "message",
    "finished_utc",
    "path",
]


# ------------------------------------------------------------------------------ settings / cells
def _deep_merge(base: dict, over: dict, where: str | None) -> dict:
    """``over`` deep-merged on a copy of ``base``. With ``where`` a key of ``over`` unknown to ``base`` is a
    ValueError naming ``where`` (settings overrides); without, it is added (Snakemake's merge of
    ``--configfile`` on config/default.yaml)."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if k not in out and where is not None:
            raise ValueError(f"{where}: unknown setting {k!r}; known: {sorted(out)}")
        if isinstance(out.get(k), dict) and isinstance(v, dict):
            out[k] = _deep_merge(out[k], v, None if where is None else f"{where}.{k}")
        else:
            out[k] = copy.deepcopy(v)
    return out


def applicable_override(exp_id: str, scale: str, overrides: dict | None) -> dict:
    """The config's override for ``exp_id`` if it applies at ``scale`` (an override for the other scale
    does not), else ``{}``. The one place this rule lives: the CLI and the workflow both call it."""
    over = (overrides or {}).get(exp_id) or {}
    return over if over.get("scale", scale) == scale else {}


def experiment_settings(exp: Experiment, scale: str, overrides: dict | None = None) -> dict:
    """Settings of ``exp`` at ``scale`` with the config's overrides for it applied."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    if scale not in exp.settings:
        raise ValueError(f"experiment {exp.id!r} has no {scale!r} settings")
    over = applicable_override(exp.id, scale, overrides)
    given = dict(over.get("settings") or {})
    optional = {k: given.pop(k) for k in exp.optional_grid_keys if k in given}  # absent by default
    per_method = given.pop(METHOD_SETTINGS, None)
    out = {**_deep_merge(exp.settings[scale], given, f"overrides.{exp.id}"), **optional}
    if per_method is not None:  # may be absent from the experiment's own settings (module docstring)
        out[METHOD_SETTINGS] = _deep_merge(out.get(METHOD_SETTINGS) or {}, per_method, None)
    if METHOD_SETTINGS in out:
        check_method_settings(exp.id, out[METHOD_SETTINGS])
    for k in exp.grid_keys:  # range(v) of a str or float, or an empty selection, fails late or not at all
        if k not in out:  # an optional grid key left out: the whole subset (Experiment.optional_grid_keys)
            continue
        v, low = out[k], 0 if k in exp.optional_grid_keys else 1
        if isinstance(v, list):
            if not v:
                raise ValueError(f"experiment {exp.id!r}: {k} (a selection of cells) must not be empty")
            continue
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            what = "a non-negative" if low == 0 else "a positive"
            raise ValueError(
                f"experiment {exp.id!r}: {k} (a replicate count) must be {what} integer, got {v!r}"
            )
    return out


def check_method_settings(exp_id: str, per_method: Any) -> None:
    """ValueError unless ``per_method`` maps registered method ids to mappings of settings."""
    if not isinstance(per_method, dict) or not all(isinstance(v, dict) for v in per_method.values()):
        raise ValueError(f"experiment {exp_id!r}: {METHOD_SETTINGS} must map method ids to mappings")
    from samplers.registry import METHODS

    unknown = sorted(set(per_method) - set(METHODS))
    if unknown:
        raise ValueError(f"experiment {exp_id!r}: {METHOD_SETTINGS}: unknown method(s) {unknown}")


_MISSING = object()


def method_setting(params: dict, settings: dict, key: str, default: Any = _MISSING) -> Any:
    """A per-method setting of the cell ``params["method"]``: its own ``params["method_settings"][key]``,
    else the experiment's per-method table ``settings[key][method]``, else ``default`` (none: a KeyError
    naming the method and the key)."""
    method = params.get("method")
    own = params.get(METHOD_SETTINGS) or {}
    if key in own:
        return own[key]
    table = settings.get(key)
    if isinstance(table, dict) and method in table:
        return table[method]
    if default is _MISSING:
        raise KeyError(
            f"no {key!r} for method {method!r}: set {METHOD_SETTINGS}.{method}.{key} in the config"
        )
    return default


def method_hyper(
    params: dict, settings: dict, problem: Any, seed: np.random.SeedSequence, pilot_iters: int
) -> tuple[dict[str, Any], float]:
    """``(hyper, pilot acceptance)`` of the cell's method: its ``hyper`` setting (default: none, the
    registry's defaults), and, if it names no value for the method's tuned step parameter
    (``MethodSpec.step_param``), that step tuned by pilot runs to its ``accept_target``
    (:func:`method_setting`, default :data:`DEFAULT_ACCEPT_TARGET`); pilot acceptance NaN if not tuned."""
    from samplers.registry import get_method
    from samplers.tuning import tune_step

    method = params["method"]
    hyper = dict(method_setting(params, settings, "hyper", {}))
    step_param = get_method(method).step_param
    if step_param is None or step_param in hyper:
        return hyper, float("nan")
    target = method_setting(params, settings, "accept_target", DEFAULT_ACCEPT_TARGET)
    step, acc = tune_step(method, problem, target, seed, pilot_iters=pilot_iters, **hyper)
    return {**hyper, step_param: step}, acc


def _differing(a: dict, b: dict) -> list[str]:
    """Keys whose values differ between ``a`` and ``b`` (compared as JSON, so NaN equals NaN and a tuple
    its list, as after the JSON round trip of a workflow file or argument)."""

    def canon(v: Any) -> str:
        return json.dumps(v, sort_keys=True, default=_jsonable)

    return sorted(k for k in {**a, **b} if k not in a or k not in b or canon(a[k]) != canon(b[k]))


def validate_config(cfg: Any, where: str) -> None:
    """ValueError naming ``where`` and the offending key unless ``cfg`` is a valid workflow config.

    ``cfg``, its absent keys taken from config/default.yaml (not its overrides), must satisfy
    workflow/schemas/config.schema.yaml (no unknown key, scales paper/smoke, every override with scale,
    settings and a written reason), and every id in ``experiments`` and ``overrides`` must be a registered
    experiment. A config the workflow wrote
    for one experiment's cells (results/config/<exp>[.cells].json, which carries ``resolved_settings``)
    has its overrides' reasons left out; it is accepted only if its ``resolved_settings`` are exactly
    what its overrides give (so that key cannot stand in for a reason)."""
    import jsonschema
    import yaml

    if not isinstance(cfg, dict):
        raise ValueError(f"{where}: a config must be a mapping, got {type(cfg).__name__}")
    schema = yaml.safe_load(CONFIG_SCHEMA.read_text())
    written = "resolved_settings" in cfg
    if written:
        schema["properties"]["overrides"]["additionalProperties"]["required"].remove("reason")
    base = {**yaml.safe_load(DEFAULT_CONFIG.read_text()), "overrides": {}}  # defaults of absent keys, no cuts
    body = _deep_merge(base, cfg, None)
    body.pop("resolved_settings", None)
    errors = jsonschema.validators.validator_for(schema)(schema).iter_errors(body)
    msgs = sorted(f"{'.'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}" for e in errors)
    if msgs:
        raise ValueError(f"{where}: invalid config (workflow/schemas/config.schema.yaml): {'; '.join(msgs)}")
    sel = body["experiments"] if isinstance(body["experiments"], list) else []
    if not (sel or body["overrides"] or written):
        return
    from bench.experiments import all_experiments

    known = all_experiments()
    for key, ids in (("experiments", sel), ("overrides", body["overrides"])):
        unknown = sorted(set(ids) - set(known))
        if unknown:
            raise ValueError(f"{where}: {key}: unknown experiment(s) {unknown}; known: {', '.join(known)}")
    if written:
        if len(sel) != 1 or not isinstance(cfg["resolved_settings"], dict):
            raise ValueError(
                f"{where}: resolved_settings (written by the workflow) needs experiments: [<id>]"
            )
        exp = known[sel[0]]
        mine = cell_settings(exp, experiment_settings(exp, body["scale"], body["overrides"]))
        diff = _differing(mine, cell_settings(exp, cfg["resolved_settings"]))
        if diff:
            raise ValueError(
                f"{where}: resolved_settings differ from what its overrides give in {diff}; "
                f"rewrite it (snakemake --forcerun {where})"
            )


def enumerate_cells(exp: Experiment, settings: dict) -> list[dict]:
    """``exp.cells(settings)``, checked: unique, file-name safe ``"cell"`` ids, JSON-able params; a cell
    whose method has an entry in ``settings["method_settings"]`` carries it in its params."""
    cells = exp.cells(settings)
    if not isinstance(cells, list):
        raise ValueError(f"{exp.id}.cells() must return a list, got {type(cells).__name__}")
    per_method = settings.get(METHOD_SETTINGS) or {}
    if per_method:
        cells = [
            {**p, METHOD_SETTINGS: per_method[p["method"]]}
            if isinstance(p, dict) and p.get("method") in per_method
            else p
            for p in cells
        ]
    seen: set[str] = set()
    for p in cells:
        cid = p.get("cell") if isinstance(p, dict) else None
        if not isinstance(cid, str) or not CELL_RE.match(cid):
            raise ValueError(f"{exp.id}: cell id {cid!r} is not a file-name safe string")
        if cid in seen:
            raise ValueError(f"{exp.id}: cell id {cid!r} appears twice")
        seen.add(cid)
        try:
            json.dumps(p, default=_jsonable)
        except TypeError as e:
            raise ValueError(f"{exp.id}/{cid}: params are not JSON-able ({e})") from None
    return cells


def find_cell(exp: Experiment, settings: dict, cell_id: str, grow: bool = False) -> dict:
    """The params of cell ``cell_id`` (ValueError listing a few known ids if absent). ``grow``: also
    look among the cells of higher replicate counts (``grid_keys`` doubled while that adds cells, up to
    MAX_GROWN_CELLS cells), since the workflow's cell configs leave counts raised by overrides out."""
    cells = enumerate_cells(exp, settings)
    while (
        grow and exp.grid_keys and all(p["cell"] != cell_id for p in cells) and len(cells) < MAX_GROWN_CELLS
    ):
        counts = [k for k in exp.grid_keys if isinstance(settings.get(k), (int, np.integer))]
        settings = {**settings, **{k: 2 * settings[k] for k in counts}}
        grown = enumerate_cells(exp, settings)
        grow, cells = len(grown) > len(cells), grown
    for p in cells:
        if p["cell"] == cell_id:
            return p
    few = ", ".join(c["cell"] for c in cells[:8]) + (" ..." if len(cells) > 8 else "")
    raise ValueError(f"experiment {exp.id!r} has no cell {cell_id!r}; cells: {few}")


def check_cell_params(exp: Experiment, settings: dict, params: dict) -> None:
    """ValueError unless ``params`` (given from outside, e.g. ``--params-json``) are the params the
    enumeration gives cell ``params["cell"]`` (:func:`find_cell` with ``grow``)."""
    own = find_cell(exp, settings, params["cell"], grow=True)
    if METHOD_SETTINGS in params and METHOD_SETTINGS not in own:  # the workflow's cell configs leave
        if not isinstance(params[METHOD_SETTINGS], dict):  # method settings to the params
            raise ValueError(f"params of {exp.id}/{params['cell']}: {METHOD_SETTINGS} must be a mapping")
        own = {**own, METHOD_SETTINGS: params[METHOD_SETTINGS]}
    diff = _differing(own, params)
    if diff:
        shown = [(k, *(repr(d[k]) if k in d else "(absent)" for d in (params, own))) for k in diff]
        detail = ", ".join(f"{k}={given} (cell: {theirs})" for k, given, theirs in shown)
        raise ValueError(f"params of {exp.id}/{params['cell']} disagree with the cell's own params: {detail}")


# ------------------------------------------------------------------------------ seeds
def cell_seed(root_seed: int, exp_id: str, cell_id: str) -> np.random.SeedSequence:
    """SeedSequence of one cell: entropy ``root_seed``, spawn key from sha256 of the cell id."""
    if not isinstance(root_seed, (int, np.integer)) or isinstance(root_seed, bool) or root_seed < 0:
        raise ValueError(f"root_seed must be a non-negative integer, got {root_seed!r}")
    digest = hashlib.sha256(f"{exp_id}/{cell_id}".encode()).digest()
    key = tuple(int.from_bytes(digest[4 * i : 4 * i + 4], "little") for i in range(4))
    return np.random.SeedSequence(int(root_seed), spawn_key=key)


def child_seed(ss: np.random.SeedSequence, *index: int) -> np.random.SeedSequence:
    """Seed of run/chain ``index`` inside a cell (spawn key extended; order-independent)."""
    if not index or any(not isinstance(i, (int, np.integer)) or i < 0 for i in index):
        raise ValueError(f"child_seed needs non-negative integer indices, got {index!r}")
    return np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key) + tuple(map(int, index)))


def seed_label(ss: np.random.SeedSequence) -> str:
    """Printable seed ``entropy:[spawn key]`` (the same format as ChainResult.seed)."""
    return f"{ss.entropy}:{list(ss.spawn_key)}"


# ------------------------------------------------------------------------------ context
@dataclass
class CellContext:
    """What ``run_cell(params, seed, ctx)`` gets besides params and seed."""

    experiment: str
    cell: str
    scale: str
    settings: dict
    out_dir: Path
    data_dir: str | None = None
    mirror: str | None = None
    _data: dict = field(default_factory=dict, repr=False)

    def data(self, name: str) -> Any:
        """Dataset ``name`` via :func:`bench.data_registry.load_named` (raises DataUnavailable)."""
        if name not in self._data:
            from bench.data_registry import load_named

            self._data[name] = load_named(name, data_dir=self.data_dir, mirror=self.mirror)
        return self._data[name]


def _is_unavailable(exc: BaseException) -> bool:
    from bench.datasets import DataUnavailable

    seen = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, DataUnavailable):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def cell_settings(exp: Experiment, settings: dict) -> dict:
    """What a cell of ``exp`` sees: ``settings`` without the experiment's ``grid_keys`` and without the
    per-method settings (each cell has its own method's in its params)."""
    return {k: v for k, v in settings.items() if k not in exp.grid_keys and k != METHOD_SETTINGS}


def cell_config_hash(exp: Experiment, scale: str, settings: dict, params: dict) -> str:
    """Hash identifying what a cell computes: experiment, scale, cell settings, params (seed
    excluded: it is recorded on its own; grid keys excluded: they do not change a cell)."""
    return config_hash(
        {"experiment": exp.id, "scale": scale, "settings": cell_settings(exp, settings), "params": params}
    )


def run_one(
    exp: Experiment,
    params: dict,
    *,
    scale: str,
    settings: dict,
    root_seed: int,
    out: str | os.PathLike,
    data_dir: str | None = None,
    mirror: str | None = None,
) -> dict:
    """Run one cell and write its record to ``out`` atomically; returns the record.

    Never raises for a failing cell: DataUnavailable -> status "data unavailable", any other
    exception -> status "error" with message and traceback (the caller decides the exit code).
    """
    out = Path(out)
    cid = params["cell"]
    ss = cell_seed(root_seed, exp.id, cid)
    chash = cell_config_hash(exp, scale, settings, params)
    ctx = CellContext(
        exp.id, cid, scale, cell_settings(exp, settings), out.with_suffix(".d"), data_dir, mirror
    )
    status, message, tb, rows = STATUS_OK, "", "", []
    s0, c0, n0 = chain_totals()
    t0 = time.perf_counter()
    try:
        rows = exp.run_cell(copy.deepcopy(params), ss, ctx)
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise TypeError(f"{exp.id}.run_cell must return a list of dicts, got {type(rows)}")
    except Exception as e:  # noqa: BLE001 -- recorded, never swallowed silently
        rows = []
        message = f"{type(e).__name__}: {e}"
        if _is_unavailable(e):
            status = STATUS_UNAVAILABLE
        else:
            status, tb = STATUS_ERROR, traceback.format_exc()
    wall = time.perf_counter() - t0
    s1, c1, n1 = chain_totals()
    seed = seed_label(ss)
    stamp = {
        "experiment": exp.id,
        "cell": cid,
        "config_hash": chash,
        "seed": seed,
        "wall_seconds": wall,
        "status": status,
    }
    rows = [{**r, **stamp} for r in rows]
    rec = {
        **stamp,
        "message": message,
        "traceback": tb,
        "scale": scale,
        "root_seed": int(root_seed),
        "params": params,
        "n_rows": len(rows),
        "rows": rows,
        "finished_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        # every chain the cell ran (ChainResult); NaN for a cell that ran none through samplers.run
        "sample_seconds": s1 - s0 if n1 > n0 else float("nan"),
        "compile_seconds": c1 - c0 if n1 > n0 else float("nan"),
        "code_commit": code_commit(),
        # the whole process so far (a `mcmc-bench cell` process runs one cell): wall / CPU shows the load
        "cpu_seconds": time.process_time(),
        "host": platform.node(),
        "python": platform.python_version(),
        **compile_target(),
    }
    atomic_write_text(out, json.dumps(rec, default=_jsonable, indent=1) + "\n")
    return rec


_COMMIT: list[str] = []


def code_commit() -> str:
    """The commit of the checkout ``bench`` runs from (12 hex digits), ``+dirty`` if samplers/, bench/ or
    verify/ hold uncommitted changes; ``unknown`` outside a git checkout. Read once per process."""
    if not _COMMIT:
        import subprocess

        try:
            git = ["git", "-C", str(REPO)]
            head = subprocess.run([*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
            dirty = subprocess.run(
                [*git, "status", "--porcelain", "--", "samplers", "bench", "verify"],
                capture_output=True,
                text=True,
            )
            ok = head.returncode == 0 and dirty.returncode == 0
            tag = head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
            _COMMIT.append(tag if ok else "unknown")
        except OSError:
            _COMMIT.append("unknown")
    return _COMMIT[0]


def compile_target() -> dict[str, str]:
    """What the kernels were compiled for: Numba's version and the CPU LLVM targets (``NUMBA_CPU_NAME``
    if set, else the host's). Loops compiled with reassociation vectorise for that CPU, so a chain is
    bit-identical on one target, not across them (docs/architecture.md, "Seeds and reproducibility": the
    same code gives Poisson-MALA chains that differ at rounding level on two VM kinds)."""
    import llvmlite.binding as llvm
    import numba
    from numba.core import config

    return {"numba": numba.__version__, "cpu": config.CPU_NAME or llvm.get_host_cpu_name()}


def load_record(path: str | os.PathLike) -> dict:
    """Read a cell record (ValueError if it is not one)."""
    path = Path(path)
    try:
        rec = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a JSON cell record ({e})") from None
    missing = [k for k in RECORD_FIELDS + ("rows", "params") if k not in rec]
    if missing or rec["status"] not in STATUSES:
        raise ValueError(f"{path}: not a cell record (missing {missing}, status {rec.get('status')})")
    return rec


def is_finished(path: str | os.PathLike, hashes: Iterable[str] | None = None) -> bool:
    """True when ``path`` holds an ok / data-unavailable record (with a hash in ``hashes`` if given)."""
    try:
        rec = load_record(path)
    except (OSError, ValueError):
        return False
    return rec["status"] != STATUS_ERROR and (hashes is None or rec["config_hash"] in set(hashes))


# ------------------------------------------------------------------------------ aggregation
def _flat(v: Any) -> Any:
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, default=_jsonable)
    return v


def records_frame(records: Iterable[dict]) -> pd.DataFrame:
    """All rows of ok cells + one row (params, status, message) per cell that is not ok, as the store holds
    them (:func:`bench.store.analysis_frame` of :func:`bench.store.frame_of_records`)."""
    from bench.store import analysis_frame, frame_of_records

    return analysis_frame(frame_of_records(records))


def cells_frame(records: Iterable[tuple[str, dict]]) -> pd.DataFrame:
    """``results/cells.csv`` rows from ``(path, record)`` pairs."""
    rows = []
    for path, rec in records:
        rows.append(
            {
                "experiment": rec["experiment"],
                "cell": rec["cell"],
                "status": rec["status"],
                "config_hash": rec["config_hash"],
                "seed": rec["seed"],
                "wall_seconds": rec["wall_seconds"],
                "n_rows": rec.get("n_rows", 0),
                "message": rec.get("message", ""),
                "finished_utc": rec.get("finished_utc", ""),
                "path": str(path),
            }
        )
    return pd.DataFrame(rows, columns=CELLS_COLUMNS)


def collect_records(
    exp: Experiment, settings: dict, scale: str, cells_dir: str | os.PathLike
) -> list[tuple[Path, dict]]:
    """Records of every cell of ``exp`` (missing or stale files -> ValueError naming them); current =
    the hash :func:`cell_config_hash` gives the cell under ``settings``."""
    missing, stale, out = [], [], []
    for p in enumerate_cells(exp, settings):
        path = Path(cells_dir) / exp.id / f"{p['cell']}.json"
        if not path.exists():
            missing.append(str(path))
            continue
        rec = load_record(path)
        if rec["config_hash"] != cell_config_hash(exp, scale, settings, p):
            stale.append(str(path))
        out.append((path, rec))
    if missing:
        raise ValueError(f"{exp.id}: {len(missing)} cell file(s) missing, e.g. {missing[:3]}")
    if stale:
        raise ValueError(
            f"{exp.id}: {len(stale)} cell file(s) computed with another config (rerun them), e.g. {stale[:3]}"
        )
    return out


def aggregate(exp: Experiment, settings: dict, records: list[dict], out: Any) -> pd.DataFrame:
    """:func:`aggregate_table` of the records' store table (the live workflow: its cells' records)."""
    from bench.store import frame_of_records

    return aggregate_table(exp, settings, frame_of_records(records), out)


def aggregate_table(exp: Experiment, settings: dict, table: pd.DataFrame, out: Any) -> pd.DataFrame:
    """Status table ``<exp>_cells`` + ``exp.summarize(df, settings, out)`` of a store table (the cells of one
    run, or those :func:`bench.store.select` takes from the committed store); returns the frame."""
    from bench.store import analysis_frame, status_frame

    df = analysis_frame(table)
    out.table(
        f"{exp.id}_cells",
        status_frame(table),
        caption=f"Cells of experiment {exp.id}: status, config hash, seed, wall time.",
    )
    exp.summarize(df, settings, out)
    return df
