"""What a workflow configuration costs in CPU hours, from the wall times in the results store.

Each cell of the configuration belongs to a *group*: its id without a trailing replicate index
(``poisson_mh_r0.4_run7`` -> ``poisson_mh_r0.4``, ``..._trial3`` -> ``...``). A group's cost per cell is the
median over its stored cells of the cell's CPU time (``cpu_seconds``: the whole ``mcmc-bench cell`` process)
where recorded, else its ``wall_seconds``; each cell is one single-threaded process. Groups without a stored
cell are counted, not guessed, except for a lower bound: a chain cell of a time-budgeted experiment (setting
``seconds``, cell kind ``run``) samples for that budget, so ``budget_hours`` sums the budgets of the cells
without a stored time. The estimate is that of the machines the store names (column ``cpu``).

``python -m bench.paper_cost [--config config/default.yaml] [--store results/store]`` prints one row per
experiment and the total per family.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
from collections import defaultdict
from pathlib import Path

import pandas as pd

from bench.cells import REPO
from bench.store import STORE, path_of, read

REPLICATE_SUFFIX = re.compile(r"_[a-z]+\d+$")


def group_of(cell: str) -> str:
    """The cell id without its replicate index (``poisson_mh_r0.4_run7`` -> ``poisson_mh_r0.4``)."""
    return REPLICATE_SUFFIX.sub("", cell)


def stored_costs(exp_id: str, store: Path) -> tuple[dict[str, list[float]], set[str]]:
    """``({group: [seconds per stored cell]}, {cpu kinds})`` of one experiment's store file (empty if none);
    cells that are not ok are left out."""
    p = path_of(exp_id, store)
    if not p.exists():
        return {}, set()
    t = read(p, exp_id)
    t = t[(t["row"] == "0") & (t["status"] == "ok")]
    out: dict[str, list[float]] = defaultdict(list)
    cpus, walls = t["cpu_seconds"].map(float), t["wall_seconds"].map(float)
    for cell, cpu, wall in zip(t["cell"], cpus, walls, strict=True):
        out[group_of(cell)].append(cpu if math.isfinite(cpu) else wall)
    return dict(out), set(t["cpu"])


def cost_plan(config: Path, store: Path = STORE, experiments: list[str] | None = None) -> pd.DataFrame:
    """One row per experiment the configuration selects (or ``experiments``): family, cells, the cells whose
    group has a stored time, their estimated CPU hours, the cells without one, and the machines."""
    from bench.cells import enumerate_cells
    from bench.cli_workflow import experiment_and_settings, load_config, selected_experiments

    cfg = load_config(str(config))
    scale = cfg.get("scale") or "smoke"
    rows = []
    for e in experiments or selected_experiments(cfg):
        exp, settings = experiment_and_settings(e, scale, cfg)
        groups: dict[str, int] = defaultdict(int)
        budget: dict[str, float] = defaultdict(float)
        for p in enumerate_cells(exp, settings):
            groups[group_of(p["cell"])] += 1
            if p.get("kind") == "run" and "seconds" in settings:
                budget[group_of(p["cell"])] += float(settings["seconds"])
        costs, cpus = stored_costs(e, store) if scale == "paper" else ({}, set())
        have = {g: n for g, n in groups.items() if g in costs}
        sec = sum(n * statistics.median(costs[g]) for g, n in have.items())
        rows.append(
            {
                "experiment": e,
                "family": exp.family,
                "cells": sum(groups.values()),
                "cells_with_time": sum(have.values()),
                "cpu_hours": sec / 3600,
                "cells_without_time": sum(groups.values()) - sum(have.values()),
                "budget_hours": sum(b for g, b in budget.items() if g not in costs) / 3600,
                "machines": ", ".join(sorted(cpus)),
            }
        )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=str(REPO / "config" / "default.yaml"))
    ap.add_argument("--store", default=str(STORE))
    ap.add_argument("--experiments", default="", help="comma-separated ids (default: the config's)")
    a = ap.parse_args(argv)
    df = cost_plan(Path(a.config), Path(a.store), [e for e in a.experiments.split(",") if e] or None)
    print(df.to_markdown(index=False, floatfmt=".2f"))
    cols = ["cells", "cells_with_time", "cpu_hours", "cells_without_time", "budget_hours"]
    fam = df.groupby("family", sort=False)[cols].sum()
    print("\nper family:\n" + fam.reset_index().to_markdown(index=False, floatfmt=".2f"))
    print(
        f"\ntotal: {df.cells.sum()} cells, {df.cells_with_time.sum()} with a stored time: "
        f"{df.cpu_hours.sum():.1f} CPU-h; {df.cells_without_time.sum()} cells without one, of which the "
        f"time-budgeted chains sample for at least {df.budget_hours.sum():.1f} CPU-h"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
