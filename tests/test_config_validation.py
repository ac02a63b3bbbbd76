"""Malformed workflow configs and cell params are clear errors on the CLI path too (never ignored keys,
silently applied overrides or a cell recorded under another cell's id): ``bench.cells.validate_config``
behind ``mcmc-bench --config``, the replicate-count check of ``experiment_settings`` and the
``--params-json`` check against the cell enumeration. Deterministic; the workflow-written configs come
from a real (local-rules only) Snakemake run."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench import cells as C
from bench.cli import build_parser
from bench.cli import main as cli_main
from bench.cli_workflow import load_config, selected_experiments
from bench.experiment import Experiment
from bench.experiments import get_experiment

REPO = Path(__file__).resolve().parents[1]
EXP = "exact_mh_exchange"
HEAD = f"scale: smoke\nroot_seed: 1\nexperiments: [{EXP}]\n"
OVER = f"overrides:\n  {EXP}:\n    reason: a reason long enough\n    scale: smoke\n"
CELL = ["cell", "-e", EXP, "-c", "4x4_enum_run0"]


def _fails(argv: list[str], match: str, capsys) -> None:
    """``argv`` raises ValueError matching ``match`` in its handler, and ``mcmc-bench`` exits 2 with it."""
    args = build_parser().parse_args(argv)
    with pytest.raises(ValueError, match=match):
        args.func(args)
    capsys.readouterr()
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcmc-bench: error:") and re.search(match, err)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (HEAD + "overrides: {}\noverides: {}\n", r"cfg\.yaml.*\(top level\).*'overides' was unexpected"),
        (
            HEAD + OVER.replace("scale: smoke\n", "scale: smok\n") + "    settings: {iters: 10}\n",
            rf"overrides\.{EXP}\.scale: 'smok' is not one of",
        ),
        (
            HEAD + f"overrides:\n  {EXP}:\n    scale: smoke\n    settings: {{iters: 10}}\n",
            rf"overrides\.{EXP}: 'reason' is a required property",
        ),
        (
            HEAD + OVER.replace(f"  {EXP}:", f"  {EXP}e:") + "    settings: {iters: 10}\n",
            rf"overrides: unknown experiment\(s\) \['{EXP}e'\]; known: .*{EXP}",
        ),
        (
            HEAD.replace(f"[{EXP}]", f"[{EXP}, exact_mh_tgg]") + "overrides: {}\n",
            r"experiments: unknown experiment\(s\) \['exact_mh_tgg'\]",
        ),
        (HEAD.replace("smoke", "smokey") + "overrides: {}\n", r"scale: 'smokey' is not one of"),
        (
            HEAD + OVER + "    settings: {runs: '2'}\n",
            rf"'{EXP}': runs \(a replicate count\) must be a positive integer, got '2'",
        ),
        (HEAD + OVER + "    settings: {runs: true}\n", r"runs .*positive integer, got True"),
        (HEAD + OVER + "    settings: {runs: 0}\n", r"runs .*positive integer, got 0"),
        (HEAD + OVER + "    settings: {runs: 1.5}\n", r"runs .*positive integer, got 1\.5"),
        ("- a\n- b\n", r"a config must be a mapping, got list"),
    ],
    ids=[
        "typo_toplevel",
        "override_scale",
        "no_reason",
        "unknown_override_id",
        "unknown_selected_id",
        "scale",
        "runs_str",
        "runs_bool",
        "runs_0",
        "runs_float",
        "list",
    ],
)
def test_bad_config_is_a_clear_error(tmp_path, capsys, text, match):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(text)
    _fails(CELL + ["--config", str(cfg), "--out", str(tmp_path / "c.json")], match, capsys)
    assert not (tmp_path / "c.json").exists()


def test_params_json_must_match_the_cell(tmp_path, capsys):
    bad = {"cell": "4x4_enum_run0", "rows": 2, "cols": 3, "aux": "enum", "run": 0}
    argv = CELL + ["--scale", "smoke", "--out", str(tmp_path / "c.json"), "--params-json"]
    _fails(
        argv + [json.dumps(bad)],
        r"--params-json: .*4x4_enum_run0.*cols=3 \(cell: 4\), rows=2 \(cell: 4\)",
        capsys,
    )
    _fails(
        argv + [json.dumps({**bad, "rows": 4, "cols": 4, "extra": 1})],
        r"extra=1 \(cell: \(absent\)\)",
        capsys,
    )
    _fails(argv + ['{"cell": "4x4_enum_run0"}'], r"aux=\(absent\) \(cell: 'enum'\)", capsys)
    assert not (tmp_path / "c.json").exists()
    # NaN params equal their JSON round trip; a grid key that adds no cells ends the search for a missing id
    sgld = get_experiment("approx_sgld_l1")
    p = C.find_cell(sgld, C.experiment_settings(sgld, "smoke"), "sgld__c0")
    assert math.isnan(p["eps"])
    C.check_cell_params(sgld, C.experiment_settings(sgld, "smoke"), json.loads(json.dumps(p)))
    one = {"smoke": {"n": 2}}
    fixed = Experiment(
        "fixed", "test", "-", "-", one, lambda s: [{"cell": "a"}], None, None, grid_keys=("n",)
    )
    with pytest.raises(ValueError, match="has no cell 'nope'; cells: a$"):
        C.check_cell_params(fixed, C.experiment_settings(fixed, "smoke"), {"cell": "nope"})


def test_shipped_configs_validate():
    names = sorted(p.name for p in (REPO / "config").glob("*.yaml"))
    assert {"default.yaml", "smoke.yaml"} <= set(names)
    for name in names:
        cfg = load_config(str(REPO / "config" / name))
        for e in selected_experiments(cfg):  # replicate counts of every selected experiment are valid
            C.experiment_settings(get_experiment(e), cfg.get("scale", "paper"), cfg.get("overrides"))


def test_workflow_written_configs_and_valid_override(tmp_path, capsys):
    """The configs the workflow writes for the CLI (override reasons and raised replicate counts left
    out of <exp>.cells.json) validate, and a cell beyond the counts they enumerate is found; their
    resolved_settings must match their overrides (so the key cannot replace a reason)."""
    up = tmp_path / "up.yaml"
    up.write_text(HEAD + OVER + "    settings: {runs: 3, iters: 200}\n")
    files = [f"results/config/{EXP}.cells.json", f"results/config/{EXP}.json", "results/config/_all.json"]
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), *files]
    cmd += ["-j1", "--configfile", str(REPO / "config" / "smoke.yaml"), str(up)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for f in files:
        load_config(str(tmp_path / f))
    written = tmp_path / files[0]
    assert "reason" not in written.read_text() and "runs" not in written.read_text()
    params = {"aux": "cftp", "cell": "4x4_cftp_run2", "cols": 4, "rows": 4, "run": 2}
    argv = ["cell", "-e", EXP, "-c", params["cell"], "--scale", "smoke", "--config", str(written)]
    assert cli_main(argv + ["--out", str(tmp_path / "a.json"), "--params-json", json.dumps(params)]) == 0
    rec = C.load_record(tmp_path / "a.json")
    assert rec["status"] == "ok" and rec["params"] == params and rec["root_seed"] == 1
    for change in ({"step": 0.3}, {"iters": 3000}):  # forged: reason-less override, other settings
        cfg = json.loads(written.read_text())
        cfg["resolved_settings"].update(change)
        (forged := tmp_path / "forged.json").write_text(json.dumps(cfg))
        _fails(
            CELL + ["--config", str(forged)],
            rf"forged\.json: resolved_settings differ .*\['{next(iter(change))}'\]",
            capsys,
        )
    # a valid user override still applies: the cell runs 200 iterations at the override's step
    cfg = tmp_path / "ok.yaml"
    cfg.write_text(HEAD + OVER + "    settings: {iters: 200, step: 0.2}\n")
    assert cli_main(CELL + ["--config", str(cfg), "--out", str(tmp_path / "b.json")]) == 0
    rec = C.load_record(tmp_path / "b.json")
    assert rec["status"] == "ok" and rec["root_seed"] == 1
    s = C.experiment_settings(get_experiment(EXP), "smoke", load_config(str(cfg))["overrides"])
    assert (s["iters"], s["step"]) == (200, 0.2)
    assert rec["config_hash"] == C.cell_config_hash(get_experiment(EXP), "smoke", s, rec["params"])


def test_json_configs_are_read_as_json(tmp_path):
    """A workflow-written JSON config keeps its numbers: YAML 1.1 reads 1e-05 (no dot) as a string, which
    made the resolved settings of exact_mh_mnist (chi = 1e-05) differ from its overrides' and stopped
    every MNIST cell of the smoke workflow."""
    from bench.cli_workflow import load_config

    p = tmp_path / "c.json"
    p.write_text('{"scale": "smoke", "experiments": ["exact_mh_mnist"], "overrides": {}, "x": 1e-05}')
    with pytest.raises(ValueError, match="'x' was unexpected"):  # still validated
        load_config(str(p))
    p.write_text(
        '{"scale": "smoke", "overrides": {"exact_mh_mnist": {"reason": "a chi in exponent form, '
        'no dot", "scale": "smoke", "settings": {"chi": 1e-05}}}}'
    )
    assert load_config(str(p))["overrides"]["exact_mh_mnist"]["settings"]["chi"] == 1e-05
