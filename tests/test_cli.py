"""The mcmc-bench CLI: registry listings, one-cell runs with atomic output, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from bench.cli import main

BASELINES = ("rwm", "mala", "barker", "hmc", "sgld", "gibbs")


def test_methods_lists_the_baselines(capsys):
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    for m in BASELINES:
        assert any(line.split()[0] == m for line in out.splitlines())


def test_targets_lists_registry(capsys):
    assert main(["targets"]) == 0
    out = capsys.readouterr().out
    assert "truncated_gaussian" in out and "potts_grid" in out


def test_run_writes_a_record(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(
        [
            "run",
            "--method",
            "mala",
            "--target",
            "truncated_gaussian",
            "--iters",
            "300",
            "--seed",
            "3",
            "--accept-target",
            "0.5",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert rc == 0
    rec = json.loads(out.read_text())
    assert rec["method"] == "mala" and rec["n_iter"] == 300
    assert len(rec["samples"]) == 300 and rec["config_hash"]
    assert rec["seed"].startswith("3:")
    npz = tmp_path / "r.npz"
    assert (
        main(
            [
                "run",
                "--method",
                "gibbs",
                "--target",
                "potts_grid",
                "--iters",
                "50",
                "--out",
                str(npz),
                "--quiet",
                "-p",
                'scan="systematic"',
            ]
        )
        == 0
    )
    with np.load(npz) as z:
        assert z["samples"].shape == (50, 4)


def test_run_is_reproducible(tmp_path):
    args = [
        "run",
        "--method",
        "rwm",
        "--target",
        "truncated_gaussian",
        "--iters",
        "200",
        "--seed",
        "9",
        "-p",
        "step=0.3",
        "--quiet",
        "--out",
    ]
    main(args + [str(tmp_path / "a.json")])
    main(args + [str(tmp_path / "b.json")])
    a = json.loads((tmp_path / "a.json").read_text())
    b = json.loads((tmp_path / "b.json").read_text())
    assert a["samples"] == b["samples"] and a["config_hash"] == b["config_hash"]


def test_bad_arguments_exit_nonzero_with_one_line_reason():
    for argv in (
        ["run", "--method", "nope", "--target", "truncated_gaussian"],
        ["run", "--method", "rwm", "--target", "truncated_gaussian", "-p", "step=-1"],
        ["run", "--method", "rwm", "--target", "truncated_gaussian", "--iters", "0"],
        ["run", "--method", "rwm", "--target", "truncated_gaussian", "--out", "x.txt"],
        ["run", "--method", "gibbs", "--target", "potts_grid", "--accept-target", "0.4"],
    ):
        p = subprocess.run(
            [sys.executable, "-m", "bench.cli", *argv], capture_output=True, text=True, timeout=300
        )
        assert p.returncode != 0, argv
        err = p.stderr.strip().splitlines()
        assert err and err[-1].startswith("mcmc-bench: error:"), p.stderr
