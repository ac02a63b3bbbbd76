"""Workflow subcommands of ``mcmc-bench`` (plugged in by ``bench.cli``; the Snakefile calls these).

* ``experiments``  list registered experiments
* ``cells``        list the cell ids of one experiment at a scale
* ``cell``         run one cell -> results/cells/<exp>/<cell>.json (atomic)
* ``aggregate``    one experiment's cell records -> tables (results/) and figures (paper_figs/)
* ``cells-table``  every cell of the selected experiments -> results/cells.csv (+ .md)
* ``check-cells``  exit 1 (listing them) if results/cells.csv has cells with status "error" (or
                   ``--verify-status`` says the verification failed)
* ``prepare-data`` fetch + preprocess one named dataset (or, with ``--raw``, fetch one raw
                   file) and write a status JSON (missing data: status "data unavailable")

``--config FILE`` is a workflow config (YAML/JSON, same keys as config/default.yaml: ``scale``,
``root_seed``, ``overrides``, ``mirror``, ``data_dir``, ``experiments``), checked like the workflow's
(:func:`bench.cells.validate_config`: the schema workflow/schemas/config.schema.yaml and registered ids).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from bench.outputs import atomic_write_text


# ------------------------------------------------------------------------------ config
def config_syntax_error(path: str | os.PathLike, text: str | None = None) -> str | None:
    """One line naming the file, line and column of a syntax error in a YAML / JSON config (``.json``
    files as JSON), None if it parses. The workflow calls it to explain a config file Snakemake's loader
    rejected (its message names neither file nor line)."""
    import yaml

    p = Path(path)
    text = p.read_text(encoding="utf-8") if text is None else text
    if p.suffix == ".json":
        try:
            json.loads(text)
        except json.JSONDecodeError as e:
            return f"{path}, line {e.lineno}, column {e.colno}: not valid JSON: {e.msg}"
        return None
    try:
        yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = " ".join(str(getattr(e, "problem", None) or e).split())
        ctx = getattr(e, "context", None)
        cmark = getattr(e, "context_mark", None)
        if ctx and cmark is not None and cmark is not mark:
            what += f" ({' '.join(ctx.split())} at line {cmark.line + 1})"
        return f"{path}{where}: not valid YAML: {what}"
    return None


def load_config(path: str | None) -> dict[str, Any]:
    """Read a workflow config (YAML or JSON) and validate it; ``None`` -> empty config. A syntax error
    is one line naming the file and the line (:func:`config_syntax_error`)."""
    if path is None:
        return {}
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"config file {path} not found")
    import yaml

    text = p.read_text(encoding="utf-8")
    try:  # JSON as JSON: YAML 1.1 would read a number like 1e-05 (no dot) as a string
        cfg = (json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)) or {}
    except (yaml.YAMLError, json.JSONDecodeError):
        raise ValueError(config_syntax_error(path, text)) from None
    from bench.cells import validate_config

    validate_config(cfg, str(path))
    return cfg


def _scale(args: argparse.Namespace, cfg: dict) -> str:
    scale = args.scale or cfg.get("scale") or "smoke"
    if cfg.get("scale") and args.scale and args.scale != cfg["scale"]:
        raise ValueError(f"--scale {args.scale} contradicts scale {cfg['scale']!r} in --config")
    return scale


def _mirror(cfg: dict) -> str | None:
    m = cfg.get("mirror") or os.environ.get("MCMC_BENCH_MIRROR") or None
    return str(m) if m else None


def selected_experiments(cfg: dict) -> list[str]:
    """Experiment ids the config selects (``experiments: all`` or a list; unknown -> error)."""
    from bench.experiments import all_experiments, get_experiment

    sel = cfg.get("experiments", "all")
    if sel in (None, "all"):
        return list(all_experiments())
    if not isinstance(sel, list):
        raise ValueError(f"experiments must be 'all' or a list of ids, got {sel!r}")
    return [get_experiment(e).id for e in sel]


def experiment_and_settings(exp_id: str, scale: str, cfg: dict):
    """The registered experiment and its settings at ``scale`` with the config's overrides applied."""
    from bench.cells import experiment_settings
    from bench.experiments import get_experiment

    exp = get_experiment(exp_id)
    return exp, experiment_settings(exp, scale, cfg.get("overrides"))


# ------------------------------------------------------------------------------ commands
def _cmd_experiments(args: argparse.Namespace) -> int:
    from bench.experiments import all_experiments

    for e in all_experiments().values():
        data = f"[data: {', '.join(e.datasets)}]" if e.datasets else ""
        print(f"{e.id:28s} {e.family:14s} {e.paper:28s} {e.description} {data}")
    return 0


def _cmd_cells(args: argparse.Namespace) -> int:
    from bench.cells import enumerate_cells

    cfg = load_config(args.config)
    exp, settings = experiment_and_settings(args.experiment, _scale(args, cfg), cfg)
    for p in enumerate_cells(exp, settings):
        print(p["cell"])
    return 0


def _cell_params(text: str, cell: str, exp, settings: dict) -> dict:
    """Params given as JSON (the workflow passes each cell its params, so that a cell's config file
    need not hold the grid keys); must be an object whose ``"cell"`` is ``cell`` and equal the cell's
    own params (:func:`bench.cells.check_cell_params`)."""
    from bench.cells import check_cell_params

    try:
        params = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"--params-json is not valid JSON ({e})") from None
    if not isinstance(params, dict) or params.get("cell") != cell:
        raise ValueError(f'--params-json must be a JSON object with "cell": {cell!r}, got {text[:80]!r}')
    try:
        check_cell_params(exp, settings, params)
    except ValueError as e:
        raise ValueError(f"--params-json: {e}") from None
    return params


def _cmd_cell(args: argparse.Namespace) -> int:
    from bench.cells import STATUS_ERROR, cell_config_hash, find_cell, is_finished, run_one

    cfg = load_config(args.config)
    scale = _scale(args, cfg)
    exp, settings = experiment_and_settings(args.experiment, scale, cfg)
    params = (
        _cell_params(args.params_json, args.cell, exp, settings)
        if args.params_json
        else find_cell(exp, settings, args.cell)
    )
    out = Path(args.out or Path("results/cells") / exp.id / f"{args.cell}.json")
    if args.skip_finished and is_finished(out, [cell_config_hash(exp, scale, settings, params)]):
        print(f"{out}: finished already (skipped)", file=sys.stderr)
        return 0
    rec = run_one(
        exp,
        params,
        scale=scale,
        settings=settings,
        root_seed=int(cfg.get("root_seed", args.root_seed)),
        out=out,
        data_dir=cfg.get("data_dir"),
        mirror=_mirror(cfg),
    )
    msg = f"{exp.id}/{args.cell}: {rec['status']} in {rec['wall_seconds']:.1f}s"
    if rec["message"]:
        msg += f" ({rec['message']})"
    print(msg, file=sys.stderr)
    if rec["status"] == STATUS_ERROR:
        print(rec["traceback"], file=sys.stderr)
        return 0 if args.record_errors else 1
    return 0


def _cmd_aggregate(args: argparse.Namespace) -> int:
    from bench.cells import STATUS_ERROR, aggregate_table, collect_records
    from bench.outputs import Outputs
    from bench.store import frame_of_records, read, select

    cfg = load_config(args.config)
    scale = _scale(args, cfg)
    exp, settings = experiment_and_settings(args.experiment, scale, cfg)
    if args.store:  # the rebuild: the cells the config enumerates that the store holds
        table, missing = select(exp, settings, scale, read(args.store, exp.id), where=args.store)
        if missing:
            print(f"{exp.id}: {len(missing)} cell(s) of the config not in the store, e.g. {missing[:3]}",
                  file=sys.stderr)  # fmt: skip
    else:
        table = frame_of_records(r for _, r in collect_records(exp, settings, scale, args.cells_dir))
    out = Outputs(args.results_dir, args.figs_dir, experiment=exp.id, assets_dir=args.assets_dir)
    import matplotlib

    matplotlib.use("Agg")
    aggregate_table(exp, settings, table, out)
    manifest = args.manifest or Path(args.results_dir) / "manifests" / f"{exp.id}.json"
    out.write_manifest(manifest)
    bad = sorted(set(table.loc[table["status"] == STATUS_ERROR, "cell"]))
    if bad:
        print(f"warning: {exp.id}: {len(bad)} cell(s) with status error: {bad[:5]}", file=sys.stderr)
    n = table["cell"].nunique()
    print(f"{exp.id}: {n} cells, {len(out.manifest)} outputs -> {manifest}", file=sys.stderr)
    return 0


def _cmd_cells_table(args: argparse.Namespace) -> int:
    import pandas as pd

    from bench.cells import CELLS_COLUMNS, cells_frame, collect_records, enumerate_cells
    from bench.outputs import markdown_table
    from bench.store import path_of, read, select, status_frame

    cfg = load_config(args.config)
    scale = _scale(args, cfg)
    parts = []
    for eid in selected_experiments(cfg):
        exp, settings = experiment_and_settings(eid, scale, cfg)
        if not args.store:
            parts.append(cells_frame(collect_records(exp, settings, scale, args.cells_dir)))
            continue
        p = path_of(eid, args.store)
        if not p.exists():
            ids = [c["cell"] for c in enumerate_cells(exp, settings)]
            part = pd.DataFrame({"experiment": eid, "cell": ids, "status": "not in store"})
        else:
            table, missing = select(exp, settings, scale, read(p, eid), where=str(p))
            absent = pd.DataFrame({"experiment": eid, "cell": missing, "status": "not in store"})
            part = pd.concat([status_frame(table), absent], ignore_index=True)
            part["path"] = str(p)
        parts.append(part)
    df = pd.concat(parts, ignore_index=True).reindex(columns=CELLS_COLUMNS) if parts else cells_frame([])
    out = Path(args.out)
    atomic_write_text(out, df.to_csv(index=False))
    counts = df["status"].value_counts().to_dict()
    atomic_write_text(
        out.with_suffix(".md"),
        f"# cells\n\nstatus counts: {json.dumps(counts)}\n\n" + markdown_table(df),
    )
    print(f"{len(df)} cells: {counts}", file=sys.stderr)
    return 0


def _cmd_check_cells(args: argparse.Namespace) -> int:
    import pandas as pd

    df = pd.read_csv(args.table, keep_default_na=False)
    bad = df[df["status"] == "error"]
    counts = df["status"].value_counts().to_dict()
    if len(bad):
        print(f"{len(bad)} of {len(df)} cells failed (status error):", file=sys.stderr)
        for _, r in bad.iterrows():
            print(f"  {r['path']}: {r['message']}", file=sys.stderr)
        print(
            "fix, then rerun them with: snakemake --forcerun " + " ".join(bad["path"]),
            file=sys.stderr,
        )
        return 1
    if args.verify_status and Path(args.verify_status).exists():
        vs = pd.read_csv(args.verify_status, keep_default_na=False)
        failed = vs[vs["status"] == "failed"]
        if len(failed):
            for _, r in failed.iterrows():
                print(f"verification failed: {r.get('family', '')} (see {r.get('log', '')})", file=sys.stderr)
            return 1
    text = f"all {len(df)} cells finished: {json.dumps(counts)}\n"
    if args.out:
        atomic_write_text(args.out, text)
    print(text, end="", file=sys.stderr)
    return 0


def _cmd_prepare_data(args: argparse.Namespace) -> int:
    import numpy as np

    from bench.cells import _is_unavailable
    from bench.data_registry import get_dataset, load_named
    from bench.datasets import REGISTRY, fetch

    cfg = load_config(args.config)
    data_dir, mirror = cfg.get("data_dir"), _mirror(cfg)
    if args.raw:
        if args.name not in REGISTRY:
            raise ValueError(f"unknown raw data file {args.name!r}; known: {sorted(REGISTRY)}")
        rec: dict[str, Any] = {"name": args.name, "kind": "raw", "url": REGISTRY[args.name].url}
    else:
        entry = get_dataset(args.name)
        rec = {
            "name": entry.name,
            "kind": "dataset",
            "files": list(entry.files),
            "description": entry.description,
        }
    try:
        if args.raw:
            rec["path"] = str(fetch(args.name, data_dir, mirror))
        else:
            obj = load_named(args.name, data_dir=data_dir, mirror=mirror)
            items = obj.items() if isinstance(obj, dict) else [("array", obj)]
            rec["shapes"] = {
                k: list(np.shape(v)) if hasattr(v, "shape") else [len(v)]
                for k, v in items
                if hasattr(v, "shape") or isinstance(v, list)
            }
        rec["status"] = "ok"
    except Exception as e:  # noqa: BLE001 -- only DataUnavailable is recorded, the rest raises
        if not _is_unavailable(e):
            raise
        rec["status"], rec["message"] = "data unavailable", str(e)
        print(f"{args.name}: data unavailable ({e})", file=sys.stderr)
    atomic_write_text(args.out, json.dumps(rec, indent=1) + "\n")
    print(f"{args.name}: {rec['status']}", file=sys.stderr)
    return 0


# ------------------------------------------------------------------------------ parser
def _common(p: argparse.ArgumentParser, experiment: bool = True) -> None:
    if experiment:
        p.add_argument("--experiment", "-e", required=True)
    p.add_argument(
        "--scale",
        choices=("paper", "smoke"),
        default=None,
        help="default: the config's scale, else smoke",
    )
    p.add_argument("--config", default=None, help="workflow config YAML/JSON")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the workflow subcommands to ``mcmc-bench``."""
    s = subparsers.add_parser("experiments", help="list registered experiments")
    s.set_defaults(func=_cmd_experiments)

    s = subparsers.add_parser("cells", help="list the cell ids of an experiment")
    _common(s)
    s.set_defaults(func=_cmd_cells)

    s = subparsers.add_parser("cell", help="run one cell and write its record")
    _common(s)
    s.add_argument("--cell", "-c", required=True)
    s.add_argument("--out", default=None, help="record path (default results/cells/<e>/<c>.json)")
    s.add_argument("--root-seed", type=int, default=20261122, help="used when the config has no root_seed")
    s.add_argument(
        "--params-json",
        default=None,
        help="the cell's params as JSON instead of looking them up in the config's cell list "
        "(the workflow's cell configs omit grid keys such as runs)",
    )
    s.add_argument(
        "--record-errors",
        action="store_true",
        help="exit 0 after recording status 'error' (the workflow uses this)",
    )
    s.add_argument(
        "--skip-finished",
        action="store_true",
        help="do nothing if --out holds a finished record with the same config hash",
    )
    s.set_defaults(func=_cmd_cell)

    s = subparsers.add_parser("aggregate", help="tables and figures of one experiment")
    _common(s)
    s.add_argument("--cells-dir", default="results/cells")
    s.add_argument("--results-dir", default="results")
    s.add_argument("--figs-dir", default="paper_figs")
    s.add_argument("--assets-dir", default=None, help="also copy CSV/PNG here (HTML report)")
    s.add_argument("--manifest", default=None, help="default <results-dir>/manifests/<experiment>.json")
    s.add_argument("--store", default=None, help="read the cells from this store file instead of --cells-dir")
    s.set_defaults(func=_cmd_aggregate)

    s = subparsers.add_parser("cells-table", help="results/cells.csv over all experiments")
    _common(s, experiment=False)
    s.add_argument("--cells-dir", default="results/cells")
    s.add_argument("--out", default="results/cells.csv")
    s.add_argument("--store", default=None, help="list the cells of this store directory, not --cells-dir")
    s.set_defaults(func=_cmd_cells_table)

    s = subparsers.add_parser("check-cells", help="fail if any cell has status error")
    s.add_argument("table", nargs="?", default="results/cells.csv")
    s.add_argument("--out", default=None, help="write a one-line OK note here on success")
    s.add_argument("--verify-status", default=None, help="also fail if this verify_status.csv says 'failed'")
    s.set_defaults(func=_cmd_check_cells)

    s = subparsers.add_parser("prepare-data", help="fetch + preprocess one named dataset")
    s.add_argument("name")
    s.add_argument("--config", default=None)
    s.add_argument(
        "--raw",
        action="store_true",
        help="NAME is a raw file of bench.datasets.REGISTRY: fetch + verify it only",
    )
    s.add_argument("--out", required=True, help="status JSON")
    s.set_defaults(func=_cmd_prepare_data)
