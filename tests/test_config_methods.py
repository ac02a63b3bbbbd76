"""A method joins an experiment from the config alone, and ``experiments:`` limits the verify jobs.

A method added to an experiment's method selection, with or without its own ``method_settings``, adds
cells and changes no other cell's config hash; its settings reach only its own cells (through their
params); a method with no step set gets its step tuned (bench.cells.method_hyper). A config that selects
experiments runs only the check families verifying them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench import cells as C
from bench.experiment import Experiment
from bench.experiments import get_experiment
from verify import registry as VR

REPO = Path(__file__).resolve().parents[1]


def _cells(s):
    return [{"cell": f"{m}_r{r}", "method": m, "run": r} for m in s["methods"] for r in range(s["runs"])]


def _exp(grid_keys=("runs", "methods")):
    s = {"runs": 2, "methods": ["rwm", "mala"], "accept_target": {"rwm": 0.25, "mala": 0.55}, "n_iter": 10}
    return Experiment(
        id="fake_methods",
        family="test",
        paper="-",
        description="fake",
        settings={"smoke": dict(s), "paper": dict(s)},
        cells=_cells,
        run_cell=lambda params, seed, ctx: [],
        summarize=lambda df, s, out: None,
        grid_keys=tuple(grid_keys),
    )


def _hashes(exp, over=None):
    s = C.experiment_settings(exp, "smoke", {exp.id: {"settings": over}} if over else None)
    return {p["cell"]: C.cell_config_hash(exp, "smoke", s, p) for p in C.enumerate_cells(exp, s)}, s


def test_a_method_added_with_its_settings_changes_no_other_cells_hash():
    exp = _exp()
    before, _ = _hashes(exp)
    added, s = _hashes(
        exp, {"methods": ["rwm", "mala", "barker"], "method_settings": {"barker": {"accept_target": 0.3}}}
    )
    assert {c: added[c] for c in before} == before and set(added) - set(before) == {"barker_r0", "barker_r1"}
    new = [p for p in C.enumerate_cells(exp, s) if p["method"] == "barker"]
    assert all(p["method_settings"] == {"accept_target": 0.3} for p in new)
    assert "method_settings" not in C.cell_settings(exp, s)  # no cell sees another method's settings
    changed, _ = _hashes(
        exp, {"methods": ["rwm", "mala", "barker"], "method_settings": {"barker": {"accept_target": 0.4}}}
    )
    assert {c for c in changed if changed[c] != added[c]} == {"barker_r0", "barker_r1"}
    # mutant: the methods selection hashed (not a grid key) -> adding a method moves every hash
    plain = _exp(grid_keys=("runs",))
    b0, _ = _hashes(plain)
    b1, _ = _hashes(plain, {"methods": ["rwm", "mala", "barker"]})
    assert all(b1[c] != b0[c] for c in b0)


def test_method_setting_reads_the_cells_own_entry_then_the_table_then_the_default():
    s = {"accept_target": {"rwm": 0.25}}
    assert C.method_setting({"method": "rwm"}, s, "accept_target") == 0.25
    own = {"method": "rwm", "method_settings": {"accept_target": 0.3}}
    assert C.method_setting(own, s, "accept_target") == 0.3
    assert C.method_setting({"method": "barker"}, s, "accept_target", 0.4) == 0.4
    with pytest.raises(KeyError, match="method_settings.barker.accept_target"):
        C.method_setting({"method": "barker"}, s, "accept_target")


def test_method_settings_must_name_registered_methods_and_hold_mappings():
    with pytest.raises(ValueError, match=r"unknown method\(s\) \['no_such_method'\]"):
        C.experiment_settings(
            _exp(), "smoke", {"fake_methods": {"settings": {"method_settings": {"no_such_method": {}}}}}
        )
    with pytest.raises(ValueError, match="must map method ids to mappings"):
        C.experiment_settings(
            _exp(), "smoke", {"fake_methods": {"settings": {"method_settings": {"rwm": 0.3}}}}
        )


def test_a_cell_accepts_its_method_settings_through_its_params():
    exp = _exp()
    s = C.experiment_settings(exp, "smoke")  # the workflow's cell config: no method settings
    C.check_cell_params(
        exp, s, {"cell": "rwm_r0", "method": "rwm", "run": 0, "method_settings": {"hyper": {}}}
    )
    with pytest.raises(ValueError, match="must be a mapping"):
        C.check_cell_params(exp, s, {"cell": "rwm_r0", "method": "rwm", "run": 0, "method_settings": 1})


def test_method_hyper_tunes_the_step_unless_the_settings_give_it():
    from samplers import registry
    from samplers.tuning import tune_step

    pb = registry.build_problem("gaussian_location", 0, scale="smoke")
    seed = np.random.SeedSequence(5)
    hyper, acc = C.method_hyper({"method": "rwm"}, {}, pb, seed, 50)
    ref = tune_step("rwm", pb, C.DEFAULT_ACCEPT_TARGET, np.random.SeedSequence(5), pilot_iters=50)[0]
    assert hyper["step"] == ref and acc > 0
    own = {"method": "rwm", "method_settings": {"hyper": {"step": 0.1}}}
    assert C.method_hyper(own, {}, pb, seed, 50) == ({"step": 0.1}, pytest.approx(float("nan"), nan_ok=True))
    assert C.method_hyper({"method": "gibbs"}, {}, pb, seed, 50)[0] == {}  # no tuned step parameter


@pytest.fixture
def new_method():
    """A method registered from outside (the public ``register`` path): the rwm wrapper under a new id,
    absent from every experiment's per-method tables."""
    import dataclasses

    from samplers import registry

    spec = dataclasses.replace(registry.get_method("rwm"), id="rwm_copy", family="user")
    registry.register(spec)
    yield spec.id
    registry.METHODS.pop(spec.id)
    registry.SOURCES.pop(("method", spec.id))


def test_baselines_take_a_new_method_from_the_config_alone(tmp_path, new_method):
    exp = get_experiment("baselines_smoke")
    before, _ = _hashes(exp)
    methods = list(exp.settings["smoke"]["tall_methods"]) + [new_method]
    s = C.experiment_settings(exp, "smoke", {exp.id: {"settings": {"tall_methods": methods}}})
    after = {p["cell"]: C.cell_config_hash(exp, "smoke", s, p) for p in C.enumerate_cells(exp, s)}
    assert {c: after[c] for c in before} == before and len(after) == len(before) + 2
    over = {"tall_methods": methods, "n_iter": 300, "pilot_iters": 50}
    rows = {}
    for own in ({}, {"method_settings": {new_method: {"hyper": {"step": 0.05}}}}):
        s = C.experiment_settings(exp, "smoke", {exp.id: {"settings": {**over, **own}}})
        params = C.find_cell(exp, s, f"{new_method}__gaussian_location__r0")
        rec = C.run_one(exp, params, scale="smoke", settings=s, root_seed=1, out=tmp_path / "c.json")
        assert rec["status"] == "ok", rec["message"]
        rows[bool(own)] = rec["rows"][0]
    tuned, given = rows[False], rows[True]
    assert tuned["method"] == new_method and np.isfinite(tuned["pilot_accept"]) and tuned["step"] != 0.05
    assert given["step"] == 0.05 and np.isnan(given["pilot_accept"])  # its own step: no tuning


def test_families_of_experiments_maps_experiment_families_to_check_families():
    assert VR.families_of_experiments(["baseline"]) == ("baselines",)
    assert VR.families_of_experiments(["herded", "exact_mh", "exact_mh"]) == ("exact_mh", "herded")
    assert VR.families_of_experiments(["no_family"]) == ()


def test_a_config_selecting_experiments_runs_only_their_verify_families(tmp_path):
    cfg = tmp_path / "one.yaml"
    cfg.write_text("experiments: [baselines_smoke]\n")
    snakemake = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path)]
    smoke = ["--configfile", str(REPO / "config" / "smoke.yaml"), str(cfg)]
    r = subprocess.run(
        snakemake + ["-n", "--quiet", "rules"] + smoke, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    counts = dict(line.split()[:2] for line in (r.stdout + r.stderr).splitlines() if len(line.split()) == 2)
    assert counts.get("verify_family") == "1", r.stdout[-2000:]
