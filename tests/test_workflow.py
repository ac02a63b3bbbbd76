"""Workflow tests: Snakemake dry runs, the cell machinery (seeds, atomic records, resume, status
"data unavailable"/"error"), outputs, and the smoke workflow end to end (slow).

No statistical checks here: every assertion is deterministic (false-alarm probability 0). The seed
stability test is shown to fail on a broken variant (seeds by enumeration index)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bench.experiments as registry
from bench import cells as C
from bench.cli import main as cli_main
from bench.experiment import Experiment
from bench.outputs import Outputs, markdown_table

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
MIRROR = REPO.parent / "shared" / "datasets"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("NUMBA_CACHE_DIR", str(REPO / ".numba_cache"))
    env.update(extra)
    return env


def _snakemake(args: list[str], workdir: Path, timeout: float = 300, **env: str):
    return subprocess.run(
        SNAKEMAKE + ["-d", str(workdir)] + args,
        capture_output=True,
        text=True,
        env=_env(**env),
        timeout=timeout,
    )


# ------------------------------------------------------------------------------ fake experiments
CALLS: list[str] = []


def _fake_cells(settings):
    return [{"cell": f"c{i}", "i": i} for i in range(settings["n"])]


def _fake_run(params, seed, ctx):
    CALLS.append(params["cell"])
    mode = ctx.settings["mode"]
    if mode == "grid":  # a cell that depends on how many cells there are (not allowed)
        params = {**params, "i": params["i"] + ctx.settings["n"]}
    if mode == "data":
        ctx.data("miniboone")
    if mode == "error":
        raise RuntimeError("deliberate failure")
    rng = np.random.default_rng(C.child_seed(seed, 0))
    return [{"i": params["i"], "x": float(rng.random()), "arr": np.arange(2)}]


def _fake_summarize(df, settings, out):
    ok = df[df["status"] == "ok"]
    out.table("fake_summary", df[["cell", "status"]].assign(n_ok=len(ok)))


def _fake(exp_id="fake_exp", mode="ok", n=3, datasets=(), grid_keys=()):
    s = {"n": n, "mode": mode, "nested": {"a": 1, "b": 2}}
    return Experiment(
        id=exp_id,
        family="test",
        paper="-",
        description="fake",
        settings={"smoke": dict(s), "paper": dict(s)},
        cells=_fake_cells,
        run_cell=_fake_run,
        summarize=_fake_summarize,
        datasets=tuple(datasets),
        grid_keys=tuple(grid_keys),
    )


@pytest.fixture
def fake_registry(monkeypatch):
    """Replace the experiment registry by fake experiments for in-process CLI calls."""
    exps: dict[str, Experiment] = {}
    monkeypatch.setattr(registry, "_CACHE", exps)
    CALLS.clear()
    return exps


@pytest.fixture
def no_data(monkeypatch, tmp_path):
    """No data anywhere: empty data/cache dirs, no mirror, no network."""
    monkeypatch.setenv("MCMC_BENCH_DATA", str(tmp_path / "raw"))
    monkeypatch.setenv("MCMC_BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("MCMC_BENCH_MIRROR", raising=False)
    monkeypatch.setenv("MCMC_BENCH_OFFLINE", "1")


# ------------------------------------------------------------------------------ registry
def _module(name, exps):
    mod = types.ModuleType(name)
    mod.EXPERIMENTS = exps
    sys.modules[name] = mod
    return name


def test_registry_loads_families_and_rejects_duplicates():
    exps = registry.all_experiments()
    assert "baselines_smoke" in exps
    assert registry.get_experiment("baselines_smoke").family == "baseline"
    with pytest.raises(ValueError, match="unknown experiment"):
        registry.get_experiment("no_such_experiment")
    a = _module("_fake_fam_a", [_fake("dup")])
    b = _module("_fake_fam_b", [_fake("dup")])
    with pytest.raises(ValueError, match="registered twice"):
        registry.load_experiments((a, b))
    bad = _module("_fake_fam_c", [_fake("bad id/with slash")])
    with pytest.raises(ValueError, match="file-name safe"):
        registry.load_experiments((bad,))
    assert list(registry.load_experiments((a,))) == ["dup"]


def test_every_dataset_name_is_registered():
    from bench.data_registry import DATASETS, raw_files
    from bench.datasets import REGISTRY
    from samplers.registry import TARGETS

    used = {d for e in registry.all_experiments().values() for d in e.datasets}
    used |= {t.data for t in TARGETS.values() if t.data}
    assert used <= set(DATASETS), used - set(DATASETS)
    for name in DATASETS:
        assert set(raw_files(name)) <= set(REGISTRY)
    with pytest.raises(ValueError, match="unknown dataset"):
        raw_files("mnist_0v0")


# ------------------------------------------------------------------------------ settings
def test_settings_overrides_scale_and_unknown_keys():
    exp = _fake()
    over = {
        "fake_exp": {
            "reason": "fewer cells for the test",
            "scale": "smoke",
            "settings": {"n": 1, "nested": {"b": 5}},
        }
    }
    s = C.experiment_settings(exp, "smoke", over)
    assert s["n"] == 1 and s["nested"] == {"a": 1, "b": 5}
    assert C.experiment_settings(exp, "paper", over)["n"] == 3  # other scale: not applied
    with pytest.raises(ValueError, match="unknown setting"):
        C.experiment_settings(exp, "smoke", {"fake_exp": {"scale": "smoke", "settings": {"typo": 1}}})
    with pytest.raises(ValueError, match="scale"):
        C.experiment_settings(exp, "large")


def test_config_schema_requires_reason():
    import yaml
    from snakemake.utils import validate

    schema = str(REPO / "workflow" / "schemas" / "config.schema.yaml")
    default = yaml.safe_load((REPO / "config" / "default.yaml").read_text())
    names = sorted(p.name for p in (REPO / "config").glob("*.yaml"))
    assert {"default.yaml", "smoke.yaml"} <= set(names)
    for name in names:  # every shipped config, merged on default.yaml as `--configfile` does
        validate({**default, **yaml.safe_load((REPO / "config" / name).read_text())}, schema)
    cfg = yaml.safe_load((REPO / "config" / "default.yaml").read_text())
    cfg["overrides"] = {"x": {"scale": "paper", "settings": {"replicates": 2}}}
    with pytest.raises(Exception, match="reason"):
        validate(cfg, schema)


def test_enumerate_cells_rejects_bad_ids():
    exp = _fake()
    bad = Experiment(**{**exp.__dict__, "cells": lambda s: [{"cell": "a"}, {"cell": "a"}]})
    with pytest.raises(ValueError, match="twice"):
        C.enumerate_cells(bad, {})
    bad = Experiment(**{**exp.__dict__, "cells": lambda s: [{"cell": "a b"}]})
    with pytest.raises(ValueError, match="file-name safe"):
        C.enumerate_cells(bad, {})


# ------------------------------------------------------------------------------ seeds
def _seeds_by_hash(root, exp_id, cell_ids):
    return {c: C.cell_seed(root, exp_id, c) for c in cell_ids}


def _seeds_by_index(root, exp_id, cell_ids):  # the broken variant (mutant)
    kids = np.random.SeedSequence(root).spawn(len(cell_ids))
    return dict(zip(cell_ids, kids, strict=True))


def _stable(seed_fn) -> bool:
    """Adding and reordering cells leaves every other cell's random stream unchanged."""
    before = ["a", "b", "c"]
    after = ["new", "c", "a", "b", "z"]
    s1, s2 = seed_fn(7, "e", before), seed_fn(7, "e", after)
    draw = lambda ss: np.random.default_rng(ss).integers(0, 2**62, 4).tolist()
    return all(draw(s1[c]) == draw(s2[c]) for c in before)


def test_cell_seeds_stable_distinct_and_mutant_fails():
    assert _stable(_seeds_by_hash)
    assert not _stable(_seeds_by_index)  # the check has power
    seeds = _seeds_by_hash(7, "e", [f"c{i}" for i in range(200)])
    firsts = {np.random.default_rng(s).integers(0, 2**62) for s in seeds.values()}
    assert len(firsts) == 200
    assert C.cell_seed(7, "e", "a").spawn_key != C.cell_seed(7, "f", "a").spawn_key
    assert C.cell_seed(7, "e", "a").entropy != C.cell_seed(8, "e", "a").entropy
    ss = C.cell_seed(7, "e", "a")
    a1 = np.random.default_rng(C.child_seed(ss, 1, 0)).random()
    ss.spawn(3)  # spawning elsewhere must not shift child seeds
    assert np.random.default_rng(C.child_seed(ss, 1, 0)).random() == a1
    assert np.random.default_rng(C.child_seed(ss, 1, 1)).random() != a1
    assert C.seed_label(ss).startswith("7:[")
    with pytest.raises(ValueError):
        C.cell_seed(-1, "e", "a")


# ------------------------------------------------------------------------------ records
def test_run_one_record_and_atomic_write(tmp_path, monkeypatch):
    exp = _fake()
    s = C.experiment_settings(exp, "smoke")
    out = tmp_path / "cells" / "fake_exp" / "c1.json"
    rec = C.run_one(exp, {"cell": "c1", "i": 1}, scale="smoke", settings=s, root_seed=3, out=out)
    assert rec["status"] == "ok" and rec["n_rows"] == 1
    disk = C.load_record(out)
    row = disk["rows"][0]
    for k in C.RECORD_FIELDS:
        assert row[k] == disk[k]
    assert row["arr"] == [0, 1] and disk["seed"] == C.seed_label(C.cell_seed(3, "fake_exp", "c1"))
    assert disk["config_hash"] == C.cell_config_hash(exp, "smoke", s, {"cell": "c1", "i": 1})
    import llvmlite.binding as llvm
    import numba
    from numba.core import config

    cpu = config.CPU_NAME or llvm.get_host_cpu_name()  # the compile target is recorded with the chain
    assert disk["numba"] == numba.__version__ and disk["cpu"] == cpu != ""
    assert oct(out.stat().st_mode & 0o777) != "0o600"
    # a write interrupted before the rename leaves the old record intact and no temp file
    before = out.read_text()

    def boom(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        C.run_one(exp, {"cell": "c1", "i": 1}, scale="smoke", settings=s, root_seed=99, out=out)
    monkeypatch.undo()
    assert out.read_text() == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["c1.json"]


def test_data_unavailable_cell_aggregates(tmp_path, fake_registry, no_data, monkeypatch):
    fake_registry["fake_data"] = _fake("fake_data", mode="data", n=2, datasets=("miniboone",))
    monkeypatch.chdir(tmp_path)
    for c in ("c0", "c1"):
        assert cli_main(["cell", "-e", "fake_data", "-c", c, "--scale", "smoke"]) == 0
    rec = C.load_record(tmp_path / "results/cells/fake_data/c0.json")
    assert rec["status"] == "data unavailable" and "miniboone" in rec["message"]
    assert cli_main(["aggregate", "-e", "fake_data", "--scale", "smoke"]) == 0
    status = pd.read_csv(tmp_path / "results/fake_data_cells.csv")
    assert set(status["status"]) == {"data unavailable"}
    summary = pd.read_csv(tmp_path / "results/fake_summary.csv")
    assert list(summary["status"]) == ["data unavailable"] * 2
    assert cli_main(["cells-table", "--scale", "smoke", "--out", "results/cells.csv"]) == 0
    assert cli_main(["check-cells", "results/cells.csv"]) == 0
    manifest = json.loads((tmp_path / "results/manifests/fake_data.json").read_text())
    assert [m["name"] for m in manifest] == ["fake_data_cells", "fake_summary"]


def test_error_cell_is_recorded_and_fails_loudly(tmp_path, fake_registry, monkeypatch, capsys):
    fake_registry["fake_err"] = _fake("fake_err", mode="error", n=1)
    monkeypatch.chdir(tmp_path)
    assert cli_main(["cell", "-e", "fake_err", "-c", "c0", "--scale", "smoke"]) == 1
    assert cli_main(["cell", "-e", "fake_err", "-c", "c0", "--scale", "smoke", "--record-errors"]) == 0
    rec = C.load_record(tmp_path / "results/cells/fake_err/c0.json")
    assert rec["status"] == "error" and "deliberate failure" in rec["message"]
    assert "RuntimeError" in rec["traceback"]
    assert cli_main(["aggregate", "-e", "fake_err", "--scale", "smoke"]) == 0
    assert cli_main(["cells-table", "--scale", "smoke"]) == 0
    capsys.readouterr()
    assert cli_main(["check-cells", "results/cells.csv"]) == 1
    assert "--forcerun results/cells/fake_err/c0.json" in capsys.readouterr().err


def test_resume_skips_finished_cells(tmp_path, fake_registry, monkeypatch):
    fake_registry["fake_exp"] = _fake()
    monkeypatch.chdir(tmp_path)
    args = ["cell", "-e", "fake_exp", "-c", "c2", "--scale", "smoke", "--skip-finished"]
    assert cli_main(args) == 0 and CALLS == ["c2"]
    assert cli_main(args) == 0 and CALLS == ["c2"]  # finished: not recomputed
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        "scale: smoke\nroot_seed: 1\nexperiments: all\noverrides:\n  fake_exp:\n"
        "    reason: changed settings for the test\n    scale: smoke\n"
        "    settings: {nested: {a: 9}}\n"
    )
    assert cli_main(args + ["--config", str(cfg)]) == 0 and CALLS == ["c2", "c2"]  # new config
    # missing or stale cell files make aggregation fail instead of leaving a silent gap
    with pytest.raises(ValueError, match="missing"):
        C.collect_records(
            fake_registry["fake_exp"],
            C.experiment_settings(fake_registry["fake_exp"], "smoke"),
            "smoke",
            "results/cells",
        )


def _n_config(path: Path, n: int, a: int = 1) -> str:
    path.write_text(
        "scale: smoke\nroot_seed: 1\nexperiments: all\noverrides:\n  fake_exp:\n"
        f"    reason: n = {n} cells for the test\n    scale: smoke\n"
        f"    settings: {{n: {n}, nested: {{a: {a}}}}}\n"
    )
    return str(path)


def test_grid_keys_raising_the_count_reruns_nothing(tmp_path, fake_registry, monkeypatch):
    """A grid key (here n, the number of cells) is not part of any cell's hash: raising it keeps
    every finished record valid and runs only the new cells; any other setting still invalidates."""
    exp = fake_registry["fake_exp"] = _fake(grid_keys=("n",))
    monkeypatch.chdir(tmp_path)
    s3, s5 = (C.experiment_settings(exp, "smoke", {"fake_exp": {"settings": {"n": n}}}) for n in (3, 5))
    s_a = C.experiment_settings(exp, "smoke", {"fake_exp": {"settings": {"nested": {"a": 9}}}})
    for p in C.enumerate_cells(exp, s3):
        assert C.cell_config_hash(exp, "smoke", s3, p) == C.cell_config_hash(exp, "smoke", s5, p)
        assert C.cell_config_hash(exp, "smoke", s3, p) != C.cell_config_hash(exp, "smoke", s_a, p)
        plain = _fake()  # mutant: no grid keys -> n is hashed and every record goes stale
        assert C.cell_config_hash(plain, "smoke", s3, p) != C.cell_config_hash(plain, "smoke", s5, p)
    cfg3, cfg5 = _n_config(tmp_path / "n3.yaml", 3), _n_config(tmp_path / "n5.yaml", 5)
    for c in ("c0", "c1", "c2"):
        assert cli_main(["cell", "-e", "fake_exp", "-c", c, "--config", cfg3, "--skip-finished"]) == 0
    with pytest.raises(ValueError, match=r"2 cell file\(s\) missing") as err:
        C.collect_records(exp, s5, "smoke", "results/cells")
    assert "stale" not in str(err.value)
    for c in ("c0", "c1", "c2", "c3", "c4"):
        assert cli_main(["cell", "-e", "fake_exp", "-c", c, "--config", cfg5, "--skip-finished"]) == 0
    assert CALLS == ["c0", "c1", "c2", "c3", "c4"]  # c0-c2 finished under n = 3: not rerun
    assert len(C.collect_records(exp, s5, "smoke", "results/cells")) == 5
    cfg_a = _n_config(tmp_path / "a.yaml", 5, a=9)
    assert cli_main(["cell", "-e", "fake_exp", "-c", "c0", "--config", cfg_a, "--skip-finished"]) == 0
    assert CALLS[-1] == "c0" and len(CALLS) == 6  # a real setting changed: rerun
    with pytest.raises(ValueError, match="stale|another config"):
        C.collect_records(exp, s5, "smoke", "results/cells")


def test_grid_keys_are_hidden_from_cells_and_must_exist(tmp_path):
    """A cell cannot read a grid key (KeyError -> status error), so no result depends on how
    many cells exist; a grid key missing from the settings is rejected at registration."""
    exp = _fake(mode="grid", grid_keys=("n",))
    s = C.experiment_settings(exp, "smoke")
    rec = C.run_one(
        exp, {"cell": "c0", "i": 0}, scale="smoke", settings=s, root_seed=1, out=tmp_path / "c0.json"
    )
    assert rec["status"] == "error" and "KeyError" in rec["message"] and "'n'" in rec["message"]
    rec = C.run_one(  # the mutant without grid keys reads n silently
        _fake(mode="grid"),
        {"cell": "c0", "i": 0},
        scale="smoke",
        settings=s,
        root_seed=1,
        out=tmp_path / "m.json",
    )
    assert rec["status"] == "ok" and rec["rows"][0]["i"] == 3
    assert C.cell_settings(exp, s) == {k: v for k, v in s.items() if k != "n"}
    with pytest.raises(ValueError, match="grid_keys"):
        _fake(grid_keys=("runs",))


def test_cell_params_json_equals_lookup(tmp_path, fake_registry, monkeypatch, capsys):
    """The workflow passes each cell its params (--params-json): same record as looking them up."""
    fake_registry["fake_exp"] = _fake(grid_keys=("n",))
    monkeypatch.chdir(tmp_path)
    base = ["cell", "-e", "fake_exp", "-c", "c1", "--scale", "smoke"]
    assert cli_main(base + ["--out", "a.json"]) == 0
    assert cli_main(base + ["--out", "b.json", "--params-json", '{"cell": "c1", "i": 1}']) == 0
    a, b = C.load_record("a.json"), C.load_record("b.json")
    for k in ("config_hash", "seed", "params"):
        assert a[k] == b[k]
    assert a["rows"][0]["x"] == b["rows"][0]["x"]
    for bad in ('{"cell": "c2", "i": 2}', "[1]", "not json"):
        assert cli_main(base + ["--params-json", bad]) == 2
        assert "--params-json" in capsys.readouterr().err


def test_cli_bad_arguments_exit_nonzero(capsys):
    assert cli_main(["cells", "-e", "no_such_experiment", "--scale", "smoke"]) == 2
    assert "unknown experiment" in capsys.readouterr().err
    assert cli_main(["cell", "-e", "baselines_smoke", "-c", "nope", "--scale", "smoke"]) == 2
    assert cli_main(["cells", "-e", "baselines_smoke", "--config", "/no/such.yaml"]) == 2
    assert cli_main(["cells", "-e", "baselines_smoke", "--scale", "smoke"]) == 0
    assert "rwm__gaussian_location__r0" in capsys.readouterr().out


# ------------------------------------------------------------------------------ outputs
def test_outputs_tables_figures_manifest(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Outputs(tmp_path / "r", tmp_path / "f", experiment="e", assets_dir=tmp_path / "a")
    df = pd.DataFrame({"method": ["rwm", "mala"], "ess": [1.23456, float("nan")]})
    out.table("t1", df, caption="cap")
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    out.figure("f1", fig)
    for p in ("r/t1.csv", "r/t1.md", "f/f1.png", "f/f1.pdf", "a/t1.csv", "a/f1.png"):
        assert (tmp_path / p).stat().st_size > 0, p
    assert pd.read_csv(tmp_path / "r/t1.csv")["method"].tolist() == ["rwm", "mala"]
    with pytest.raises(ValueError, match="twice"):
        out.table("t1", df)
    with pytest.raises(ValueError, match="file-name safe"):
        out.table("../x", df)
    out.write_manifest(tmp_path / "m.json")
    assert [m["kind"] for m in json.loads((tmp_path / "m.json").read_text())] == ["table", "figure"]
    # own formatter when tabulate is missing
    monkeypatch.setitem(sys.modules, "tabulate", None)
    md = markdown_table(df).splitlines()
    assert md[0].split("|")[1].strip() == "method" and "1.235" in md[2] and "nan" in md[3]
    assert len(md) == 4 and set(md[1]) <= {"|", "-"}


# ------------------------------------------------------------------------------ snakemake
@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--configfile", str(REPO / "config" / "smoke.yaml")],
        # the profile on the small DAG (the paper-scale DAG is parsed by "default"; 78 s -> seconds)
        [
            "--workflow-profile",
            str(REPO / "profiles" / "slurm"),
            "--configfile",
            str(REPO / "config" / "smoke.yaml"),
        ],
    ],
    ids=["default", "smoke", "slurm-profile"],
)
def test_snakemake_dry_run(tmp_path, args):
    # --quiet rules: the job statistics only (the paper DAG's ~12700 job listings cost ~10 s to print)
    r = _snakemake(["-n", "--quiet", "rules"] + args, tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    text = r.stdout + r.stderr
    from bench.cli_workflow import experiment_and_settings, load_config

    name = "smoke.yaml" if "smoke.yaml" in " ".join(args) else "default.yaml"
    cfg = load_config(str(REPO / "config" / name))
    exps = registry.all_experiments()
    n_cells = sum(len(C.enumerate_cells(*experiment_and_settings(e, cfg["scale"], cfg))) for e in exps)
    assert f"run_cell {n_cells:>{len(str(n_cells))}}" in " ".join(text.split()) or n_cells == 0
    for rule in ("compile_kernels", "aggregate", "cells_table", "verify", "report"):
        assert rule in text


def test_snakemake_rejects_an_override_of_an_unknown_experiment(tmp_path):
    """The workflow applies the checks of `mcmc-bench cell --config` (bench.cells.validate_config): a
    misspelt experiment id under `overrides` stops the DAG with a message naming it (the schema alone
    lets it through and the override would be silently ignored)."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "overrides:\n  exact_mh_exchangee:\n    reason: a misspelt experiment id in this override\n"
        "    scale: smoke\n    settings: {runs: 2}\n"
    )
    r = _snakemake(["-n", "--configfile", str(REPO / "config" / "smoke.yaml"), str(bad)], tmp_path)
    assert r.returncode != 0
    assert "unknown experiment(s) ['exact_mh_exchangee']" in r.stdout + r.stderr


def test_download_rule_records_unavailable_data(tmp_path):
    """MiniBooNE cannot be fetched here: the rule succeeds and writes status 'data unavailable'."""
    r = _snakemake(
        ["-j1", "data/status/miniboone.json"],
        tmp_path,
        MCMC_BENCH_DATA=str(tmp_path / "raw"),
        MCMC_BENCH_CACHE=str(tmp_path / "cache"),
        MCMC_BENCH_OFFLINE="1",
        MCMC_BENCH_MIRROR="",
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert (
        json.loads((tmp_path / "data/status/raw/miniboone.json").read_text())["status"] == "data unavailable"
    )
    assert json.loads((tmp_path / "data/status/miniboone.json").read_text())["status"] == "data unavailable"


@pytest.mark.slow
@pytest.mark.workflow_smoke
def test_smoke_workflow_end_to_end(tmp_path):
    """`snakemake -j2 --configfile config/smoke.yaml` (into a temp dir) within 10 minutes; its cells put into
    a results store rebuild every table byte for byte without running a cell; then a rerun has nothing
    to do and deleting one cell reruns only that cell (resume)."""
    smoke = ["--configfile", str(REPO / "config" / "smoke.yaml")]
    env = {"MCMC_BENCH_MIRROR": str(MIRROR)} if MIRROR.is_dir() else {}
    t0 = time.perf_counter()
    r = _snakemake(["-j2"] + smoke, tmp_path, timeout=900, **env)
    wall = time.perf_counter() - t0
    print(f"smoke workflow wall time: {wall:.0f} s")
    assert r.returncode == 0, r.stderr[-5000:]
    assert wall <= 600, f"smoke workflow took {wall:.0f} s (> 10 min)"
    cells = pd.read_csv(tmp_path / "results/cells.csv", keep_default_na=False)
    assert len(cells) > 0 and set(cells["status"]) <= {"ok", "data unavailable"}
    for p in (
        "results/report.html",
        "results/baselines_ess.md",
        "results/baselines_ess.csv",
        "paper_figs/baselines_ess.png",
        "paper_figs/baselines_ess.pdf",
        "results/verify_status.csv",
        "results/cells_check.txt",
    ):
        assert (tmp_path / p).stat().st_size > 0, p
    base = pd.read_csv(tmp_path / "results/baselines_ess.csv")
    assert set(base["method"]) == {"rwm", "mala", "barker", "hmc", "sgld", "gibbs"}
    # the claim checks read this run's tables (the workflow's directory), not the source checkout's
    claims = pd.read_csv(tmp_path / "results/claims.csv", keep_default_na=False).set_index("claim_id")
    for cid in (
        "exact_mh.tg_top_two",
        "exact_mh.minibatch_beats_full_authors_both",  # the +dense cells ran through the workflow
        "exact_mh.tuna_sgld_faster",
        "exact_mh.rlr_10d_n1e5.top_two.r0.4",
    ):
        assert claims.loc[cid, "measured"] != "not run", (cid, claims.loc[cid].to_dict())
    # the results store: this run's cells put into a store and rebuilt from it (source: store, another
    # directory, no cell runs) give every table of every experiment byte for byte
    store, rebuilt = tmp_path / "store", tmp_path / "rebuilt"
    add = ["store", "add", "--config", smoke[1], "--cells-dir", str(tmp_path / "results/cells")]
    assert cli_main(add + ["--store", str(store)]) == 0
    manifests = sorted((tmp_path / "results/manifests").glob("*.json"))
    exps = [m.stem for m in manifests if m.stem != "verify"]
    targets = [f"results/manifests/{e}.json" for e in exps] + ["results/cells.csv"]
    # targets before the options: --configfile and --config take every word after them
    r = _snakemake(["-j2", *targets, *smoke, "--config", "source=store", f"store={store}"], rebuilt, **env)
    assert r.returncode == 0, r.stderr[-5000:]
    assert "run_cell" not in r.stdout + r.stderr
    n = 0
    for e in exps:
        for item in json.loads((tmp_path / f"results/manifests/{e}.json").read_text()):
            for f in item["files"]:
                if item["kind"] == "table":
                    assert (rebuilt / f).read_bytes() == (tmp_path / f).read_bytes(), f
                    n += 1
    assert n > 2 * len(exps)
    rc = pd.read_csv(rebuilt / "results/cells.csv", keep_default_na=False)
    assert sorted(rc["cell"]) == sorted(cells["cell"]) and list(rc["status"]).count("not in store") == 0
    # resume: nothing to do; an interrupted state (one cell and the experiment's aggregate
    # missing) recomputes exactly that cell, not the finished ones
    r = _snakemake(["-n"] + smoke, tmp_path, **env)
    assert "Nothing to be done" in r.stdout + r.stderr, r.stdout[-2000:]
    (tmp_path / "results/cells/baselines_smoke/rwm__gaussian_location__r0.json").unlink()
    (tmp_path / "results/manifests/baselines_smoke.json").unlink()
    r = _snakemake(["-n"] + smoke, tmp_path, **env)
    stats = " ".join((r.stdout + r.stderr).split("Job stats:")[-1].split())
    assert re.search(r"\brun_cell 1\b", stats) and "compile_kernels" not in stats, stats
    # raising a replicate count (a grid key) schedules only the new cells (+ the deleted one)
    exp = registry.get_experiment("baselines_smoke")
    s = C.experiment_settings(exp, "smoke")
    more = {**s, "replicates": s["replicates"] + 1}
    n_new = len(C.enumerate_cells(exp, more)) - len(C.enumerate_cells(exp, s))
    import yaml

    cfg = yaml.safe_load((REPO / "config" / "smoke.yaml").read_text())
    cfg["overrides"] = {
        "baselines_smoke": {
            "reason": "one more replicate (resume test)",
            "scale": "smoke",
            "settings": {"replicates": more["replicates"]},
        },
        # an override for the other scale changes no smoke cell
        "exact_mh_tg": {
            "reason": "paper-scale only (resume test)",
            "scale": "paper",
            "settings": {"lam_mult": 1e-3},
        },
    }
    (tmp_path / "more.yaml").write_text(yaml.safe_dump(cfg))
    r = _snakemake(["-n", "--configfile", str(tmp_path / "more.yaml")], tmp_path, **env)
    stats = " ".join((r.stdout + r.stderr).split("Job stats:")[-1].split())
    assert n_new > 0 and re.search(rf"\brun_cell {n_new + 1}\b", stats), stats
    assert "experiment_cell_config" not in stats, stats


def _stored(cell: str, cpu: float, wall: float, status: str = "ok") -> dict:
    rows = [{"x": 1}] if status == "ok" else []
    return {"experiment": "exact_mh_exchange", "cell": cell, "status": status, "params": {"cell": cell},
            "config_hash": "h", "seed": "1:[]", "wall_seconds": wall, "cpu_seconds": cpu, "rows": rows,
            "cpu": "testcpu"}  # fmt: skip


def test_paper_cost_takes_each_group_from_its_stored_cells(tmp_path):
    """bench.paper_cost: a group's cost per cell is the median of its stored cells' CPU time (wall time where
    the CPU time is unknown); cells that are not ok do not count; groups without a stored cell are counted,
    not guessed. Fails if the mean were taken (4x4 would cost 5 x 4 s), if wall time won over CPU time
    (5 x 20 s), or if the error cells counted (8x8's median 500 s)."""
    from bench.paper_cost import cost_plan, group_of
    from bench.store import frame_of_records, write

    assert group_of("rlr_10d_n1e5_poisson_mh_dense_r0.4_run17") == "rlr_10d_n1e5_poisson_mh_dense_r0.4"
    assert group_of("4x4_enum_run3") == "4x4_enum" and group_of("gmm_austere_trial12") == "gmm_austere"
    recs = [_stored("4x4_enum_run0", 1.0, 20.0), _stored("4x4_enum_run1", 2.0, 20.0),
            _stored("4x4_enum_run2", 9.0, 20.0), _stored("8x8_cftp_run0", float("nan"), 5.0),
            *(_stored(f"8x8_cftp_run{i}", 500.0, 500.0, "error") for i in (1, 2, 3))]  # fmt: skip
    write(tmp_path / "exact_mh_exchange.csv.xz", frame_of_records(recs))
    df = cost_plan(REPO / "config" / "full.yaml", tmp_path, ["exact_mh_exchange"])
    row = df.iloc[0]
    assert (row.cells, row.cells_with_time, row.cells_without_time, row.machines) == (10, 10, 0, "testcpu")
    assert row.cpu_hours * 3600 == pytest.approx(5 * 2.0 + 5 * 5.0)
    write(tmp_path / "exact_mh_exchange.csv.xz", frame_of_records(recs[:3]))
    df = cost_plan(REPO / "config" / "full.yaml", tmp_path, ["exact_mh_exchange"])
    assert (df.iloc[0].cells_with_time, df.iloc[0].cells_without_time) == (5, 5)
    assert df.iloc[0].cpu_hours * 3600 == pytest.approx(5 * 2.0)
    # a time-budgeted experiment without stored cells: its chain cells sample for at least their budget
    # (the truth cells have no budget); stored groups leave the bound
    from bench.experiments.approx.ica import ICA_SETTINGS, ICA_TRUTH_RUNS

    ica = ICA_SETTINGS["paper"]
    row = cost_plan(REPO / "config" / "full.yaml", tmp_path, ["approx_ica"]).iloc[0]
    runs = ica["chains"] * (1 + len(ica["eps"]))
    assert (row.cells, row.cells_with_time) == (runs + ICA_TRUTH_RUNS, 0)
    assert row.budget_hours * 3600 == pytest.approx(runs * ica["seconds"])
    assert df.iloc[0].budget_hours == 0.0
