"""Fault injection in one place: each fault fails early, with one line naming what to fix, and leaves
nothing half-written.

* a PoissonMH bound violated at the initial state (caught at setup for every datum; the in-loop check
  on drawn data stays);
* an output path that cannot be written (a parent that is a file, a directory, a read-only file system):
  refused before sampling;
* an oversized request (``--iters 1e9`` at d = 20): refused with the size and the way out;
* Ctrl-C during ``mcmc-bench run``: exit 130, "interrupted, nothing written", within ~1 s;
* corrupt and truncated data files (mirror copy, local copy, preprocessed cache), a missing mirror
  directory;
* malformed YAML / JSON configs (CLI and workflow): the file and the line;
* kill -9 of a running workflow, then resume: no finished cell recomputed, every record parses.

Deterministic assertions only (false-alarm probability 0)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from bench import datasets as ds
from bench.cli import main as cli_main
from samplers import registry as R
from samplers import run as RUN

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "bench.cli"]


def _one_line_error(err: str, *needles: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("mcmc-bench: error: "), err
    for n in needles:
        assert n in lines[0], (n, err)
    return lines[0]


@pytest.fixture
def no_sampling(monkeypatch):
    """Fail the test if a chain is started (the fault must be caught before)."""

    def boom(*a, **k):
        raise AssertionError("sampling started")

    monkeypatch.setattr(R, "run", boom)


# ------------------------------------------------------------------------ PoissonMH bound at setup
def _tg_with_tiny_bound(i: int = 7):
    """Smoke truncated Gaussian whose datum i has shift_i = 0 (phi_i = ll_i < 0 away from y_i) and a tiny
    M_i, so that it is (almost) never drawn: the in-loop check would not see it."""
    pb = R.build_problem("truncated_gaussian", 0, scale="smoke")
    pb.model.shift[i] = 0.0
    pb.model.M[i] = 1e-6
    return pb


@pytest.mark.parametrize("method", ["poisson_mh", "poisson_mala", "poisson_barker"])
def test_poisson_bound_violated_at_the_initial_state_is_caught_at_setup(method):
    pb = _tg_with_tiny_bound()
    with pytest.raises(ValueError, match=r"bound violated at the initial state.* datum 7"):
        R.run(method, pb, 2000, 1, step=0.05)


def test_poisson_bound_setup_check_counts_every_datum():
    pb = R.build_problem("truncated_gaussian", 0, scale="smoke")
    pb.model.shift[[3, 11, 12]] = -1.0
    with pytest.raises(ValueError, match=r"for datum 3 \(3 data in all\)"):
        R.run("poisson_mh", pb, 10, 0, step=0.05)


def test_poisson_bound_violated_away_from_the_start_is_caught_in_the_loop():
    """Bounds that hold at the initial state but not on the whole support: the in-loop check on drawn
    data still stops the chain (the setup check does not replace it)."""
    pb = R.build_problem("truncated_gaussian", 0, scale="smoke", d=2)
    m = pb.model
    x0 = np.zeros(2)
    ll = np.array([-0.5 * m.beta * np.sum(m.w * (x0 - m.X[i]) ** 2) for i in range(m.X.shape[0])])
    b = 1.01 * float(-ll.min())  # phi_i(x0) = ll_i(x0) + b in (0, b]: every datum within bounds at x0
    m.shift[:] = b
    m.M[:] = b
    with pytest.raises(ValueError, match=r"^PoissonMH bound violated: phi_i\(theta\) outside"):
        R.run("poisson_mh", pb, 20_000, 0, step=1.0, x0=x0)


# ------------------------------------------------------------------------ unwritable destination
RUN_ARGS = ["run", "--method", "rwm", "--target", "gaussian_location", "--iters", "200", "--quiet"]


@pytest.mark.parametrize("case", ["parent_is_a_file", "directory", "suffix"])
def test_unwritable_destination_fails_before_sampling(tmp_path, capsys, no_sampling, case):
    f = tmp_path / "afile"
    f.write_text("x")
    out = {"parent_is_a_file": f / "sub" / "x.npz", "directory": tmp_path, "suffix": tmp_path / "x.csv"}[case]
    assert cli_main(RUN_ARGS + ["--out", str(out)]) == 2
    _one_line_error(capsys.readouterr().err, f"--out {out}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def _can_mount_read_only() -> bool:
    if shutil.which("unshare") is None:
        return False
    r = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o ro tmpfs /mnt"], capture_output=True)
    return r.returncode == 0


@pytest.mark.skipif(not _can_mount_read_only(), reason="no user/mount namespaces to mount a read-only fs")
def test_read_only_file_system_fails_before_sampling(tmp_path):
    """The CLI in a private mount namespace where ``tmp_path/ro`` is a read-only tmpfs."""
    ro = tmp_path / "ro"
    ro.mkdir()
    out = ro / "res" / "x.npz"
    script = 'mount -t tmpfs -o ro tmpfs "$0" && exec "$@"'
    r = subprocess.run(
        [
            "unshare",
            "-rm",
            "sh",
            "-c",
            script,
            str(ro),
            *CLI,
            *RUN_ARGS,
            "--iters",
            "100000000",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, r.stderr
    line = _one_line_error(r.stderr, f"--out {out}", "Read-only file system")
    assert ".tmp" not in line and "Traceback" not in r.stderr


# ------------------------------------------------------------------------ oversized request
def test_oversized_request_is_refused_with_the_size_and_the_way_out(capsys, monkeypatch, no_sampling):
    """``--iters 1e9`` at d = 20 (the paper truncated Gaussian): ~177 GB, refused on a 32 GB machine with
    the thinning that fits, and on a 16 GB one (where the unthinned per-iteration traces alone exceed it)
    with fewer iterations only."""
    args = ["run", "--method", "rwm", "--target", "truncated_gaussian", "--scale", "paper", "--iters", "1e9"]
    monkeypatch.setattr(RUN, "available_memory", lambda: 32 * 10**9)
    assert cli_main(args + ["--quiet"]) == 2
    line = _one_line_error(
        capsys.readouterr().err, "n_iter = 1000000000", "d = 20", "177 GB", "32 GB available"
    )
    assert re.search(
        r"--thin / thin= (\d+) or more\) or run fewer iterations \(at most ~\d+ at thin = 1\)", line
    )
    k = int(re.search(r"thin= (\d+)", line).group(1))
    RUN.check_result_size(10**9, k, 20, available=32 * 10**9)  # the suggested thinning fits
    with pytest.raises(RUN.ResultTooLarge):
        RUN.check_result_size(10**9, k - 1, 20, available=32 * 10**9)
    monkeypatch.setattr(RUN, "available_memory", lambda: 16 * 10**9)
    assert cli_main(args + ["--quiet", "--thin", "100"]) == 2
    line = _one_line_error(capsys.readouterr().err, "run fewer iterations", "--thin cannot help")


def test_oversized_request_is_refused_on_any_machine():
    """1e13 iterations at d = 20 (1.8 PB): refused before anything is compiled, through the Python API."""
    pb = R.build_problem("truncated_gaussian", 0, scale="smoke", d=20)
    t0 = time.perf_counter()
    with pytest.raises(RUN.ResultTooLarge, match=r"needs ~1.77e\+06 GB of memory"):
        R.run("rwm", pb, 10**13, 0, step=0.1)
    assert time.perf_counter() - t0 < 1.0
    assert issubclass(RUN.ResultTooLarge, ValueError)


def test_thinned_request_fits():
    assert RUN.result_bytes(10**9, 10**4, 20) < 20 * 10**9
    RUN.check_result_size(10**9, 10**4, 20, available=32 * 10**9)
    with pytest.raises(RUN.ResultTooLarge):
        RUN.check_result_size(10**9, 1, 20, available=32 * 10**9)


# ------------------------------------------------------------------------ interrupt
def test_ctrl_c_during_run_exits_130_with_nothing_written(tmp_path):
    out = tmp_path / "x.npz"
    cmd = [
        *CLI,
        "run",
        "--method",
        "rwm",
        "--target",
        "truncated_gaussian",
        "--iters",
        "2e7",
        "--out",
        str(out),
    ]
    p = subprocess.Popen(
        cmd,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    err = bytearray()

    def reader():
        while chunk := p.stderr.read1(4096):
            err.extend(chunk)

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    deadline = time.monotonic() + 240
    while not re.search(rb"\| *[1-9]\d*/20000000", bytes(err)):  # the chain has started and progresses
        assert p.poll() is None and time.monotonic() < deadline, bytes(err).decode()[-2000:]
        time.sleep(0.05)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    rc = p.wait(timeout=30)
    latency = time.monotonic() - t0
    th.join(5)
    text = bytes(err).decode()
    assert rc == 130, text[-2000:]
    assert text.rstrip().endswith("mcmc-bench: interrupted, nothing written"), text[-2000:]
    assert "Traceback" not in text and "SystemError" not in text
    assert latency < 5.0, latency
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_chunks_are_short_and_do_not_change_the_chain(monkeypatch):
    """Chunks of at most ~CHUNK_SECONDS (here forced to a few iterations) give the same chain as one call."""
    pb = R.build_problem("truncated_gaussian", 0, scale="smoke")
    sizes: list[int] = []
    one = R.run("poisson_mh", pb, 3000, 5, step=0.05, thin=3)
    monkeypatch.setattr(RUN, "CHUNK_SECONDS", 1e-6)
    many = R.run("poisson_mh", pb, 3000, 5, step=0.05, thin=3, progress=sizes.append)
    assert len(sizes) > 50 and all(n % 3 == 0 for n in sizes) and sum(sizes) == 3000
    for a, b in [(one.samples, many.samples), (one.accepted, many.accepted), (one.n_evals, many.n_evals)]:
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(one.extra["datum_evals"], many.extra["datum_evals"])


def test_chunk_plan():
    assert RUN.next_chunk(0, 10**8, 1, 2 * 10**6, None) == RUN.FIRST_CHUNK
    assert RUN.next_chunk(0, 1000, 1, 20, None) == 20  # short runs: the old layout (50 chunks)
    assert RUN.next_chunk(2000, 10**8, 7, 2 * 10**6, 1e-6) == int(RUN.CHUNK_SECONDS / 1e-6) // 7 * 7
    assert RUN.next_chunk(99, 100, 1, 50, 1.0) == 1


# ------------------------------------------------------------------------ data files
BLOB = bytes(range(256)) * 40


def _remote(name="blob"):
    return ds.RemoteFile(
        name, f"{name}/data.bin", "http://127.0.0.1:9/data.bin", sha256=hashlib.sha256(BLOB).hexdigest()
    )


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupt_mirror_file_names_the_mirror_file(tmp_path, damage):
    mirror = tmp_path / "mirror"
    src = mirror / "blob" / "data.bin"
    src.parent.mkdir(parents=True)
    data = bytearray(BLOB)
    if damage == "flip":
        data[100] ^= 1
    else:
        data = data[:-10]
    src.write_bytes(bytes(data))
    with pytest.raises(ValueError) as e:
        ds.fetch_remote(_remote(), data_dir=tmp_path / "d", mirror=mirror, offline=True)
    msg = str(e.value)
    assert f"replace {src}" in msg and f"({src})" in msg and ".part" not in msg, msg
    assert not (tmp_path / "d").exists() or not any((tmp_path / "d").rglob("*"))


def test_missing_mirror_directory_is_reported_as_such(tmp_path):
    gone = tmp_path / "no_such_mirror"
    with pytest.raises(
        ds.DataUnavailable, match=f"the mirror directory {re.escape(str(gone))} does not exist"
    ):
        ds.fetch_remote(_remote(), data_dir=tmp_path / "d", mirror=gone, offline=True)
    (tmp_path / "m").mkdir()
    with pytest.raises(ds.DataUnavailable, match=r"not in mirror .* \(no .*blob/data.bin\)"):
        ds.fetch_remote(_remote(), data_dir=tmp_path / "d", mirror=tmp_path / "m", offline=True)


def test_truncated_local_copy_names_it_and_the_remedy(tmp_path):
    local = tmp_path / "d" / "blob" / "data.bin"
    local.parent.mkdir(parents=True)
    local.write_bytes(BLOB[:-1])
    with pytest.raises(ValueError, match=f"delete {re.escape(str(local))} to fetch it again"):
        ds.fetch_remote(_remote(), data_dir=tmp_path / "d", offline=True)


def test_truncated_preprocessed_cache_is_recomputed(tmp_path):
    from bench.datasets import _cache

    recipe = {"what": "test"}
    p = _cache.cache_path("x", recipe, tmp_path)
    _cache.save_cached(p, {"a": np.arange(1000.0)}, recipe)
    assert _cache.load_cached(p, recipe)["a"].shape == (1000,)
    p.write_bytes(p.read_bytes()[:-200])
    assert _cache.load_cached(p, recipe) is None  # unreadable: recomputed by the caller, not a crash


# ------------------------------------------------------------------------ malformed configs
BAD_YAML = "scale: smoke\nroot_seed: 1\nexperiments: [a, b\noverrides:\n  x: 1\n"


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("bad.yaml", BAD_YAML, "line 4, column 10"),
        ("tab.yaml", "scale: smoke\n\troot_seed: 1\n", "line 2, column 1"),
        ("bad.json", '{"scale": "smoke",\n "root_seed": 1,,\n}', "line 2, column 17"),
    ],
)
def test_malformed_config_names_the_file_and_the_line_cli(tmp_path, capsys, name, text, where):
    cfg = tmp_path / name
    cfg.write_text(text)
    assert cli_main(["cells", "--config", str(cfg), "--experiment", "baselines_smoke"]) == 2
    _one_line_error(capsys.readouterr().err, f"{cfg}, {where}: not valid")


def test_malformed_default_config_names_the_file_and_the_line_workflow(tmp_path):
    """A copy of the workflow whose config/default.yaml is malformed: Snakemake's own loader says only
    "Config file is not valid JSON or YAML"; the workflow adds the file and the line."""
    wf = tmp_path / "wf"
    wf.mkdir()
    for name in ("Snakefile", "workflow", "config", "profiles"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, wf / name)
    (wf / "config" / "default.yaml").write_text(BAD_YAML)
    r = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "-s", str(wf / "Snakefile"), "-d", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode != 0
    assert f"{wf / 'config' / 'default.yaml'}, line 4, column 10: not valid YAML" in r.stdout + r.stderr


# ------------------------------------------------------------------------ kill -9, then resume
KILL_CFG = """scale: smoke
root_seed: 1
experiments: [baselines_smoke]
mirror: null
data_dir: null
overrides:
  baselines_smoke:
    reason: three short rwm cells for the kill -9 and resume test
    scale: smoke
    settings:
      tall_methods: [rwm]
      tall_targets: [gaussian_location]
      replicates: 3
      gibbs: {target: potts_grid, scans: []}
      n_iter: 100000
"""


def test_kill_9_of_a_running_workflow_then_resume(tmp_path):
    """Three cells at -j1; SIGKILL to Snakemake and its jobs once Snakemake has recorded the first cell
    as finished (the second runs); then `--unlock` (Snakemake's lock outlives a kill) and the same command
    again: exit 0, the finished cell neither rerun nor rewritten, every record parses with status ok. (A
    kill in the instant between a cell's atomic write and Snakemake's bookkeeping reruns that cell: its
    job is incomplete to Snakemake; the rerun writes the same record.)"""
    (tmp_path / "cfg.yaml").write_text(KILL_CFG)
    cells = tmp_path / "results" / "cells" / "baselines_smoke"
    targets = [f"results/cells/baselines_smoke/rwm__gaussian_location__r{i}.json" for i in range(3)]
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path)]
    cmd += ["--configfile", str(tmp_path / "cfg.yaml"), "-j1"]
    env = dict(os.environ, MCMC_BENCH_NUMBA_CACHE=str(REPO / ".numba_cache"), MCMC_BENCH_OFFLINE="1")
    log = open(tmp_path / "first.log", "w")
    p = subprocess.Popen(cmd + targets, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 240
    first = tmp_path / "first.log"
    while "(Rule: run_cell)" not in first.read_text():  # Snakemake has recorded a finished cell
        assert p.poll() is None and time.monotonic() < deadline, first.read_text()[-3000:]
        time.sleep(0.05)
    done = {f.name: (f.stat().st_mtime_ns, f.read_bytes()) for f in cells.glob("*.json")}
    time.sleep(0.5)  # the next cell runs
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    log.close()
    assert len(done) == 1 and len(list(cells.glob("*.json"))) < 3, first.read_text()[-3000:]
    for f in cells.glob("*.json"):  # atomic records: whatever exists parses
        json.loads(f.read_text())
    r = subprocess.run(cmd + targets, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode != 0 and "--unlock" in r.stdout + r.stderr  # the stale lock, said so
    assert subprocess.run(cmd + ["--unlock"], env=env, capture_output=True, timeout=240).returncode == 0
    r = subprocess.run(cmd + targets, env=env, capture_output=True, text=True, timeout=240)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    rerun = set(re.findall(r"cell=(rwm__gaussian_location__r\d)", out))
    assert rerun == {f"rwm__gaussian_location__r{i}" for i in range(3)} - {n[:-5] for n in done}, out[-3000:]
    for name, (mtime, blob) in done.items():
        f = cells / name
        assert f.stat().st_mtime_ns == mtime and f.read_bytes() == blob  # not recomputed
    recs = [json.loads(f.read_text()) for f in sorted(cells.glob("*.json"))]
    assert len(recs) == 3 and all(rec["status"] == "ok" for rec in recs)
