"""What a workflow configuration costs, estimated from committed cell records (issue 5: "the full paper-scale
``snakemake -j8``").

Each cell of the configuration (``mcmc-bench cells``) belongs to a *group*: its id without the ``_run<k>``
suffix (method, target setting and rate). A group's cost per cell is the median ``wall_seconds`` of its
cells in the newest record archive that holds it (``docs/results/records/*_s<session>.tar.xz``; a cell is one
single-threaded process, so wall ~ CPU). Groups no archive holds are counted, not guessed. The machines are
those the archives name (``cpu``): the estimate is theirs, not the reader's.

``python -m bench.paper_cost [--config config/default.yaml] [--records docs/results/records]``
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tarfile
from collections import defaultdict
from pathlib import Path

import pandas as pd

from bench.cells import RECORDS, REPO

RUN_SUFFIX = re.compile(r"_run\d+$")
# a session's archive is <name>_s<k>.tar.xz; the A/B archives of superseded kernels carry a further suffix
# (``_s15_old_kernels``, ``_s29_ab_new``, ``_s31_calib``) and are not read: not the code a rerun would use
SESSION = re.compile(r"_s(\d+)\.tar\.xz$")


def group_of(cell: str) -> str:
    """The cell id without its replicate suffix (``poisson_mh_r0.4_run7`` -> ``poisson_mh_r0.4``)."""
    return RUN_SUFFIX.sub("", cell)


def record_costs(archives: list[Path]) -> dict[tuple[str, str], dict]:
    """``{(experiment, group): {"archive", "session", "cpu", "walls"}}`` from the newest archive holding
    each group (finished cells only)."""
    out: dict[tuple[str, str], dict] = {}
    keyed = []
    for a in archives:
        m = SESSION.search(a.name)
        if m:
            keyed.append((int(m.group(1)), a))
    for session, a in sorted(keyed, key=lambda t: (-t[0], t[1].name)):
        found: dict[tuple[str, str], dict] = {}
        with tarfile.open(a) as tf:
            for mem in tf.getmembers():
                if not (mem.isfile() and mem.name.endswith(".json") and "cells/" in mem.name):
                    continue
                rec = json.load(tf.extractfile(mem))
                if rec.get("status") != "ok" or "wall_seconds" not in rec:
                    continue
                key = (rec["experiment"], group_of(rec["cell"]))
                if key in out:  # a newer archive holds this group
                    continue
                g = found.setdefault(
                    key, {"archive": a.name, "session": session, "cpu": rec.get("cpu"), "walls": []}
                )
                g["walls"].append(float(rec["wall_seconds"]))
        out.update(found)
    return out


def cost_plan(config: Path, records: Path, experiments: list[str] | None = None) -> pd.DataFrame:
    """One row per experiment the configuration selects (or ``experiments``): its cells, the cells whose
    group has a record, their estimated CPU hours, and the record machines and sessions used."""
    from bench.cells import enumerate_cells
    from bench.cli_workflow import experiment_and_settings, load_config, selected_experiments

    cfg = load_config(str(config))
    scale = cfg.get("scale") or "smoke"
    costs = record_costs(sorted(records.glob("*.tar.xz")))
    rows = []
    for e in experiments or selected_experiments(cfg):
        groups: dict[str, int] = defaultdict(int)
        for p in enumerate_cells(*experiment_and_settings(e, scale, cfg)):
            groups[group_of(p["cell"])] += 1
        n = sum(groups.values())
        have = {g: costs[(e, g)] for g in groups if (e, g) in costs}
        sec = sum(groups[g] * statistics.median(c["walls"]) for g, c in have.items())
        rows.append(
            {
                "experiment": e,
                "cells": n,
                "cells_with_record": sum(groups[g] for g in have),
                "cpu_hours": sec / 3600,
                "groups_without_record": len(groups) - len(have),
                "machines": ", ".join(sorted({str(c["cpu"]) for c in have.values()})),
                "sessions": ", ".join(str(s) for s in sorted({c["session"] for c in have.values()})),
            }
        )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=str(REPO / "config" / "default.yaml"))
    ap.add_argument("--records", default=str(RECORDS))
    ap.add_argument("--experiments", default="", help="comma-separated ids (default: the config's)")
    a = ap.parse_args(argv)
    df = cost_plan(Path(a.config), Path(a.records), [e for e in a.experiments.split(",") if e] or None)
    print(df.to_markdown(index=False, floatfmt=".2f"))
    print(
        f"\ntotal: {df.cells.sum()} cells, {df.cells_with_record.sum()} with a record, "
        f"{df.cpu_hours.sum():.1f} CPU-h for those"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
