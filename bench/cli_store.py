"""``mcmc-bench store``: put finished cells into the results store, check it, say what it holds.

* ``store add --config C [-e E ...]``: the finished records under ``--cells-dir`` (default results/cells)
  of the experiments C selects -> ``results/store/<experiment>.csv.xz`` (a stored cell is replaced). Every
  record must be a cell of C with C's config hash; cells with status "error" are not added (listed).
* ``store check [--config C]``: every store file readable and well formed, each stored cell a cell of C
  (default config/full.yaml) with C's hash; prints what the store holds of C per experiment. Exit 1 otherwise.
* ``docs-figures``: the figures the docs show (``figs/<name>.png`` in docs/results/*.md and docs/*.md) copied
  from ``paper_figs/`` into docs/results/figs/ as 128-colour PNGs, every other PNG there removed: one
  committed copy of each figure a page shows (``make results`` runs it after the rebuild).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.cells import REPO

FULL_CONFIG = REPO / "config" / "full.yaml"
DOCS = REPO / "docs" / "results"
# not experiments: the `mcmc-bench perf --paired` and `mcmc-bench peers` runs behind docs/performance.md
OTHER_TABLES = ("perf", "peers")


def _cmd_add(args: argparse.Namespace) -> int:
    from bench.cells import STATUS_ERROR, _differing, cell_config_hash, enumerate_cells, load_record
    from bench.cli_workflow import _scale, experiment_and_settings, load_config, selected_experiments
    from bench.store import STORE, add

    cfg = load_config(args.config)
    scale = _scale(args, cfg)
    if scale != "paper" and Path(args.store).resolve() == STORE.resolve():
        raise ValueError(
            f"the committed store holds paper-scale cells; a {scale} run goes to another --store"
        )
    ids = args.experiment or selected_experiments(cfg)
    for eid in ids:
        exp, settings = experiment_and_settings(eid, scale, cfg)
        records, stale, errors = [], [], []
        for p in enumerate_cells(exp, settings):
            f = Path(args.cells_dir) / exp.id / f"{p['cell']}.json"
            if not f.exists():
                continue
            rec = load_record(f)
            own_hash = cell_config_hash(exp, scale, settings, p)
            if rec["config_hash"] != own_hash or _differing(rec["params"], p):
                stale.append(str(f))
            elif rec["status"] == STATUS_ERROR:
                errors.append(p["cell"])
            else:
                records.append(rec)
        if stale:
            raise ValueError(
                f"{exp.id}: {len(stale)} record(s) computed with other settings than {args.config}, "
                f"e.g. {stale[0]}: rerun them first"
            )
        if errors:
            print(
                f"{exp.id}: {len(errors)} cell(s) with status error not added, e.g. {errors[:3]}",
                file=sys.stderr,
            )
        if not records:
            print(f"{exp.id}: no finished cell under {args.cells_dir}", file=sys.stderr)
            continue
        path, held = add(exp, records, args.store)
        print(f"{exp.id}: {len(records)} cell(s) added -> {path} ({held} cells)", file=sys.stderr)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from bench.cells import enumerate_cells
    from bench.cli_workflow import experiment_and_settings, load_config
    from bench.experiments import all_experiments
    from bench.store import SUFFIX, read, select

    cfg = load_config(args.config)
    scale = args.scale or cfg.get("scale") or "paper"
    files = sorted(Path(args.store).glob(f"*{SUFFIX}"))
    if not files:
        raise ValueError(f"{args.store}: no store files (*{SUFFIX})")
    known = all_experiments()
    for f in files:
        eid = f.name.removesuffix(SUFFIX)
        if eid in OTHER_TABLES:
            continue
        if eid not in known:
            raise ValueError(f"{f}: no registered experiment {eid!r}")
        exp, settings = experiment_and_settings(eid, scale, cfg)
        table = read(f, eid)
        sel, missing = select(exp, settings, scale, table, where=str(f))
        extra = sorted(set(table["cell"]) - {p["cell"] for p in enumerate_cells(exp, settings)})
        if extra:
            raise ValueError(
                f"{f}: {len(extra)} stored cell(s) are not cells of {args.config}, e.g. {extra[:3]}"
            )
        n = table["cell"].nunique()
        print(f"{eid}: {n} cells stored, {len(missing)} of the config's {n + len(missing)} not stored")
    return 0


def _cmd_docs_figures(args: argparse.Namespace) -> int:
    import re

    docs, figs = Path(args.docs), Path(args.figs)
    pages = [*docs.glob("*.md"), *docs.parent.glob("*.md")]  # docs/results/*.md and docs/*.md
    link = re.compile(r"figs/([A-Za-z0-9_.-]+\.png)")
    shown = sorted({m for p in pages for m in link.findall(p.read_text())})
    missing = [n for n in shown if not (figs / n).is_file()]
    if missing:
        raise ValueError(f"{len(missing)} figure(s) the results pages show are not in {figs}: {missing[:5]}")
    out = docs / "figs"
    out.mkdir(exist_ok=True)
    from PIL import Image

    for n in shown:  # a 128-colour palette: a quarter of the bytes of matplotlib's RGBA, the same picture
        with Image.open(figs / n) as im:
            im.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(
                out / f".{n}.tmp", format="PNG", optimize=True
            )
        (out / f".{n}.tmp").replace(out / n)
    stale = [p for p in out.glob("*.png") if p.name not in shown]
    for p in stale:
        p.unlink()
    print(f"{len(shown)} figures -> {out} ({len(stale)} not shown removed)", file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("store", help="the results store: add finished cells, check it")
    sub = p.add_subparsers(dest="store_command", required=True)
    s = sub.add_parser("add", help="put finished cell records into the store")
    s.add_argument("--config", required=True, help="the workflow config the cells ran with")
    s.add_argument("--experiment", "-e", action="append", default=None, help="only these (repeatable)")
    s.add_argument("--cells-dir", default="results/cells")
    s.add_argument("--store", default=str(REPO / "results" / "store"))
    s.add_argument("--scale", default=None, choices=["paper", "smoke"])
    s.set_defaults(func=_cmd_add)
    s = sub.add_parser("check", help="check every store file against a config")
    s.add_argument("--config", default=str(FULL_CONFIG))
    s.add_argument("--store", default=str(REPO / "results" / "store"))
    s.add_argument("--scale", default=None, choices=["paper", "smoke"])
    s.set_defaults(func=_cmd_check)
    s = subparsers.add_parser(
        "docs-figures", help="copy the figures the results pages show into docs/results/figs"
    )
    s.add_argument("--docs", default=str(DOCS))
    s.add_argument("--figs", default="paper_figs")
    s.set_defaults(func=_cmd_docs_figures)
