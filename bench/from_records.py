"""Issue 5's paper-scale tables, figures, claims and report, rebuilt by the workflow from the committed
cell records (docs/results/exact_mh.md section 50.2): minutes instead of ~99 CPU hours.

For each set:
1. The workflow directory's configs are written first (``snakemake --until`` the config rules).
2. The set's archives are extracted into ``<dir>/results/cells`` in order, so a later archive's record
   replaces an earlier one. Each record gets the extraction time as its mtime: older than the configs,
   Snakemake would rerun every cell.
3. ``snakemake -j N`` finds every cell finished and runs only aggregation, verify, the cells table and
   the report.

``aggregate`` still rejects a record whose config hash is not the config's
(:func:`bench.cells.collect_records`).

``python -m bench.from_records [--set tg_mnist_exchange|rlr_tables_2_5|all] [--dir results-records]
[-j 2]`` (``make paper-from-records``). Data come from ``$MCMC_BENCH_MIRROR`` or the config's mirror,
as in the workflow.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from bench.cells import RECORDS, REPO

CONFIG_RULES = (
    "experiment_cell_config",
    "experiment_config",
    "workflow_config",
    "compile_kernels",
    "preprocess",
)

# set -> (config, archives in extraction order): exact_mh.md section 49 (TG runs 0-99 with the +dense rows),
# exact_mh_mnist.md section 15, section 36 (exchange), and section 45 (RLR Tables 2 / 5, runs 0-99)
SETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "tg_mnist_exchange": (
        "config/paper_exact_mh_records.yaml",
        (
            "exact_mh_tg_s36",
            "exact_mh_tg_dense_s39",
            "exact_mh_tg_s46",
            "exact_mh_tg_s47",
            "exact_mh_tg_s48",
            "exact_mh_tg_s49",
            "exact_mh_mnist_s34",
            "exact_mh_exchange_s38",
        ),
    ),
    "rlr_tables_2_5": (
        "config/paper_exact_mh_s41.yaml",
        (
            "exact_mh_rlr_s36",
            "exact_mh_rlr_hmc10_s38",
            "exact_mh_rlr_s39",
            "exact_mh_rlr_s41",
            "exact_mh_rlr_s42",
            "exact_mh_rlr_s43",
            "exact_mh_rlr_s44",
            "exact_mh_rlr_s45",
        ),
    ),
}


def extract_cells(archives: list[Path], results: Path) -> int:
    """Extract the ``cells/<experiment>/<cell>.json`` records of ``archives`` (in order: later ones replace
    earlier ones) into ``results/cells``, each stamped with the current time. Returns the number of distinct
    record files. ValueError on a member outside ``cells/`` that is not the CPU csv, or an unsafe path."""
    now = time.time()
    written: set[Path] = set()
    for a in archives:
        with tarfile.open(a) as tf:
            members = []
            for m in tf.getmembers():
                if m.name == "cells_cpu.csv" or (m.isdir() and m.name.rstrip("/") == "cells"):
                    continue
                parts = Path(m.name).parts
                if not (
                    parts and parts[0] == "cells" and ".." not in parts and not Path(m.name).is_absolute()
                ):
                    raise ValueError(
                        f"{a.name}: unexpected member {m.name!r} (records hold cells/<exp>/<cell>.json)"
                    )
                if m.isfile() or m.isdir():
                    members.append(m)
                else:
                    raise ValueError(f"{a.name}: {m.name!r} is not a regular file or directory")
            tf.extractall(results, members=members, filter="data")
            for m in members:
                if m.isfile():
                    p = results / m.name
                    os.utime(p, (now, now))
                    written.add(p)
    return len(written)


def _snakemake(workdir: Path, config: Path, extra: list[str], jobs: int) -> None:
    cmd = [str(Path(sys.executable).with_name("snakemake")), f"-j{jobs}", "-s", str(REPO / "Snakefile")]
    cmd += ["-d", str(workdir), "--configfile", str(config), *extra]
    # the repository's kernel cache, not a cold one in the workflow directory (a user's setting wins)
    env = {"MCMC_BENCH_NUMBA_CACHE": str(REPO / ".numba_cache"), **os.environ}
    subprocess.run(cmd, check=True, env=env)


def rebuild(name: str, workdir: Path, jobs: int = 2) -> int:
    """Rebuild set ``name`` in ``workdir`` (created; a previous rebuild there is reused). Returns the
    number of records extracted."""
    cfg, archives = SETS[name]
    workdir.mkdir(parents=True, exist_ok=True)
    _snakemake(workdir, REPO / cfg, ["--until", *CONFIG_RULES], jobs)
    n = extract_cells([RECORDS / f"{a}.tar.xz" for a in archives], workdir / "results")
    print(
        f"{name}: {n} cell records from {len(archives)} archives into {workdir / 'results' / 'cells'}",
        flush=True,
    )
    _snakemake(workdir, REPO / cfg, [], jobs)
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="all", choices=[*SETS, "all"])
    ap.add_argument("--dir", default="results-records", help="parent of one workflow directory per set")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    for name in SETS if a.set == "all" else [a.set]:
        rebuild(name, Path(a.dir) / name, a.jobs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
