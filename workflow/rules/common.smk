# Shared parse-time logic: config validation, environment, cell enumeration from the registry.
import json
import os
import re
import sys

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

validate(config, schema="../schemas/config.schema.yaml")

SCALE = config["scale"]
CLI = f"{sys.executable} -m bench.cli"
# source "cells" runs every cell; "store" (make results) runs none and aggregates the cells the config
# enumerates that the results store holds, through the same aggregate rule
SOURCE = config.get("source", "cells")
STORE_DIR = os.path.abspath(config.get("store") or os.path.join(workflow.basedir, "results", "store"))

# Environment of every job (local shells inherit os.environ; `envvars` forwards them to cluster
# jobs). Numba: one shared on-disk cache (atomic writes, safe for concurrent jobs), and one thread
# per job so `-j N` does not oversubscribe the cores.
# The cache lives under <numba_cache_dir>/<hash of the numerical sources> (chosen by `import samplers`):
# Numba does not notice edits in other files a kernel inlines, so the key keeps reruns stale-cache safe.
os.environ.setdefault(
    "MCMC_BENCH_NUMBA_CACHE", os.path.abspath(config.get("numba_cache_dir", ".numba_cache"))
)
import samplers  # noqa: E402,F401  (sets NUMBA_CACHE_DIR unless the user set it)
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
if config.get("mirror"):
    os.environ["MCMC_BENCH_MIRROR"] = os.path.abspath(config["mirror"])
if config.get("data_dir"):
    os.environ["MCMC_BENCH_DATA"] = os.path.abspath(config["data_dir"])


envvars:
    "NUMBA_CACHE_DIR",
    "NUMBA_NUM_THREADS",


from bench.cells import (  # noqa: E402
    METHOD_SETTINGS,
    applicable_override,
    cell_settings,
    enumerate_cells,
    experiment_settings,
    validate_config,
)
from bench.experiments import all_experiments, get_experiment  # noqa: E402

# the same checks as `mcmc-bench cell --config` (bench.cells.validate_config): beyond the schema,
# every id under `experiments` and `overrides` must be a registered experiment
try:
    validate_config(dict(config), "workflow config")
except ValueError as _err:
    raise WorkflowError(str(_err)) from None

_sel = config.get("experiments", "all")
EXPERIMENT_IDS = list(all_experiments()) if _sel == "all" else [get_experiment(e).id for e in _sel]
SETTINGS = {e: experiment_settings(get_experiment(e), SCALE, config.get("overrides")) for e in EXPERIMENT_IDS}
# params of every cell, by experiment and cell id (passed to each cell job; see experiment_cell_config)
CELL_PARAMS = {
    e: {p["cell"]: p for p in enumerate_cells(get_experiment(e), SETTINGS[e])} for e in EXPERIMENT_IDS
}
CELLS = {e: list(CELL_PARAMS[e]) for e in EXPERIMENT_IDS}
if SOURCE == "store":
    from bench.store import path_of, read, select  # noqa: E402

    for _e in list(EXPERIMENT_IDS):
        _p = path_of(_e, STORE_DIR)
        if not _p.exists():  # nothing stored for this experiment: no tables, said once
            print(f"results store: no {_p.name} in {STORE_DIR}; {_e} has no tables", file=sys.stderr)
            EXPERIMENT_IDS.remove(_e)
            continue
        try:
            _t, _missing = select(get_experiment(_e), SETTINGS[_e], SCALE, read(_p, _e), where=str(_p))
        except ValueError as _err:
            raise WorkflowError(str(_err)) from None
        CELLS[_e] = list(dict.fromkeys(_t["cell"]))
        if not CELLS[_e]:
            print(f"results store: {_p.name} holds none of {_e}'s cells; no tables", file=sys.stderr)
            EXPERIMENT_IDS.remove(_e)
# Kernels to warm before the cells: the "method" of every cell that names a registered one; for a
# cell that does not, every method of its experiment's family (all methods if no family matches).
# Warm-up groups: the methods on continuous spaces (tall-data targets, proposals and the hot loops they
# share, compiled once in one process) and the others (discrete, lattice, variable selection), run
# side by side; plus "metrics" (bench.metrics' compiled cores, which every experiment uses). A cell
# waits only for the groups of its experiment's methods and for "metrics".
from samplers.registry import METHODS as _METHODS  # noqa: E402


def warm_group(method):
    return "continuous" if "continuous" in _METHODS[method].spaces else "other"


_used = {}
for _e in EXPERIMENT_IDS if SOURCE == "cells" else ():  # a rebuild from the store runs no cell
    _fam = [m for m, spec in _METHODS.items() if spec.family == get_experiment(_e).family]
    _ms = set()
    for _p in enumerate_cells(get_experiment(_e), SETTINGS[_e]):
        _m = _p.get("method")
        _ms.update([_m] if _m in _METHODS else (_fam or _METHODS))
    _used[_e] = _ms
WARM = {}
for _m in sorted(set().union(*_used.values()) if _used else ()):
    WARM.setdefault(warm_group(_m), []).append(_m)
if WARM:
    WARM["metrics"] = []
# the warm-up jobs each experiment's cells wait for
EXP_WARM = {e: sorted({warm_group(m) for m in ms} | {"metrics"}) for e, ms in _used.items()}

EXP_DATASETS = {e: list(get_experiment(e).datasets) for e in EXPERIMENT_IDS}
DATASETS = sorted({d for ds in EXP_DATASETS.values() for d in ds})


def experiment_config(exp):
    """The workflow config one experiment's cells see (written to results/config/<exp>.json)."""
    over = (config.get("overrides") or {}).get(exp)
    return {
        "scale": SCALE,
        "root_seed": config["root_seed"],
        "experiments": [exp],
        "mirror": config.get("mirror"),
        "data_dir": config.get("data_dir"),
        "overrides": {exp: over} if over else {},
        # informational for the CLI; here so that a change of the experiment's settings in its
        # module (not only in the config) rewrites this file and reruns exactly its cells
        "resolved_settings": SETTINGS[exp],
    }


def experiment_cell_config(exp):
    """What one experiment's cells read (results/config/<exp>.cells.json): experiment_config without
    the experiment's grid keys (replicate counts such as runs, selections such as methods), without
    the per-method settings (a cell of a method gets that method's in its params) and without the
    overrides' reason text (and without an override for the other scale). Raising runs, or adding a
    method with its settings, therefore leaves this file, and every finished cell, as they are; each
    cell job gets its own params (run index included) as a Snakemake param instead."""
    e = get_experiment(exp)
    cfg = experiment_config(exp)
    over = applicable_override(exp, SCALE, cfg["overrides"])
    hidden = set(e.grid_keys) | {METHOD_SETTINGS}
    kept = {k: v for k, v in (over.get("settings") or {}).items() if k not in hidden}
    cfg["overrides"] = {exp: {"scale": SCALE, "settings": kept}} if kept else {}
    cfg["resolved_settings"] = cell_settings(e, SETTINGS[exp])
    return cfg


def cell_params_json(wc):
    return json.dumps(CELL_PARAMS[wc.exp][wc.cell], sort_keys=True)


def config_json(cfg):
    """The canonical JSON of a config file (sorted keys); passed to a shell job as one argument."""
    text = json.dumps(cfg, sort_keys=True, default=str)
    if len(text) > 100_000:  # one argv string is limited to 128 KiB on Linux
        raise WorkflowError(f"config too large for results/config ({len(text)} characters)")
    return text


# Writes {params.cfg} to {output}: a shell job, not `run:` (a `run:` job re-parses the whole Snakefile
# in a subprocess, ~4 s each); atomic (temporary file, then rename).
CONFIG_WRITE = "printf '%s\\n' {params.cfg:q} > {output}.tmp && mv {output}.tmp {output}"


def workflow_config():
    """The config of the whole run (results/config/_all.json) for the cells table."""
    return {
        "scale": SCALE,
        "root_seed": config["root_seed"],
        "experiments": EXPERIMENT_IDS,
        "mirror": config.get("mirror"),
        "data_dir": config.get("data_dir"),
        "overrides": config.get("overrides") or {},
    }


def raw_status_files(wildcards):
    """Download status files of the raw files a named dataset needs."""
    from bench.data_registry import raw_files

    return [f"data/status/raw/{f}.json" for f in raw_files(wildcards.name)]


def cell_inputs(wc):
    """A cell needs its experiment's config, warm kernels and its experiment's datasets."""
    return {
        "config": f"results/config/{wc.exp}.cells.json",
        "kernels": [f"results/logs/compile_kernels/{g}.json" for g in EXP_WARM[wc.exp]],
        "data": [f"data/status/{d}.json" for d in EXP_DATASETS[wc.exp]],
    }


def cell_files(exp):
    return [f"results/cells/{exp}/{c}.json" for c in CELLS[exp]]


def aggregate_inputs(wc):
    """An experiment's aggregation reads its cell records, or (source: store) its store file."""
    src = {"store": str(path_of(wc.exp, STORE_DIR))} if SOURCE == "store" else {"cells": cell_files(wc.exp)}
    return {**src, "config": f"results/config/{wc.exp}.json"}


def source_args(wc=None):
    """``--store ...`` for the aggregate (one experiment) and cells-table (all) commands in store mode."""
    if SOURCE != "store":
        return ""
    return f"--store {path_of(wc.exp, STORE_DIR) if wc is not None and hasattr(wc, 'exp') else STORE_DIR}"


def peers_outputs():
    """The side-by-side with BlackJAX / NumPyro (rule ``peers`` in perf.smk): redrawn from the store where it
    holds a run; run at paper scale (a "peers not installed" table where the extra is absent); not at smoke."""
    if SOURCE == "store":
        return ["results/peers.csv"] if os.path.exists(os.path.join(STORE_DIR, "peers.csv.xz")) else []
    return ["results/peers.csv"] if SCALE == "paper" else []


def report_inputs():
    """Everything the HTML report shows (not the error check: the report also documents errors)."""
    out = [f"results/manifests/{e}.json" for e in EXPERIMENT_IDS]
    return out + ["results/cells.csv", "results/manifests/verify.json"] + peers_outputs()


def all_outputs():
    stored_perf = SOURCE == "store" and os.path.exists(os.path.join(STORE_DIR, "perf.csv.xz"))
    perf = ["results/performance.csv"] if stored_perf else []
    return report_inputs() + ["results/cells_check.txt", "results/report.html"] + perf


wildcard_constraints:
    # only registered, selected experiments (so e.g. results/manifests/verify.json is unambiguous)
    exp="|".join(re.escape(e) for e in EXPERIMENT_IDS) or "(?!)",
    cell=r"[A-Za-z0-9][A-Za-z0-9_.=+-]*",
    name=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    family=r"[A-Za-z0-9_]+",
