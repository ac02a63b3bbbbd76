"""The results store (bench.store, `mcmc-bench store`): lossless round trip of what the tables read, refusal
of corrupt or mismatched files with a one-line error, and the committed store itself (size, schema, every
stored cell current under config/full.yaml).

Every assertion is deterministic (false-alarm probability 0). Each check is shown to catch its defect: the
round trip against a store that drops a type (mutant), the refusals on deliberately corrupted files."""

from __future__ import annotations

import json
import lzma
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bench.experiments as registry
from bench import cells as C
from bench import store as S
from bench.cli import main as cli_main
from bench.experiment import Experiment

REPO = Path(__file__).resolve().parents[1]


def _cells(s):
    # a NaN parameter (as approx_sgld_l1's eps of SGLD) must survive the record and the store round trips
    return [
        {"cell": f"c{i}", "i": i, "rate": None if i == 0 else 0.25 * i, "eps": math.nan if i == 1 else 0.1}
        for i in range(s["n"])
    ]


VALUES = [
    {"label": "barker", "looks_like_json": "1", "empty": "", "none": None, "flag": True, "k": 3},
    {"x": 0.1 + 0.2, "tiny": 5e-324, "nan": math.nan, "inf": -math.inf},
    {"curve": [0.123456789012, 1e-20, math.nan], "nested": [[1, 2], [3.25]], "d": {"a": [1.0, 2.5]}},
]


def _run(params, seed, ctx):
    if params["i"] == 3:
        raise RuntimeError("deliberate failure")
    rng = np.random.default_rng(C.child_seed(seed, 0))
    return [{"i": params["i"], "u": float(rng.random()), **v} for v in VALUES[: params["i"] + 1]]


def _summ(df, settings, out):
    out.table("fake_store_table", df.drop(columns=["seed"]))


def _fake(n=4):
    s = {"n": n, "a": 1}
    return Experiment("fake_store", "test", "-", "fake", {"smoke": s, "paper": s}, _cells, _run, _summ,
                      grid_keys=("n",))  # fmt: skip


@pytest.fixture
def fake(monkeypatch, tmp_path):
    exp = _fake()
    monkeypatch.setattr(registry, "_CACHE", {exp.id: exp})
    monkeypatch.chdir(tmp_path)
    settings = C.experiment_settings(exp, "smoke")
    recs = []
    for p in C.enumerate_cells(exp, settings):
        out = tmp_path / "results" / "cells" / exp.id / f"{p['cell']}.json"
        C.run_one(exp, p, scale="smoke", settings=settings, root_seed=7, out=out)
        recs.append(C.load_record(out))
    return exp, settings, recs


def test_store_round_trip_keeps_every_value_the_tables_read(fake, tmp_path):
    """records -> store file -> analysis frame gives the records' rows: types and scalars exact, floats in
    lists to 7 significant digits, absent keys absent; the live path (records in memory) gives the same."""
    exp, settings, recs = fake
    path, n = S.add(exp, recs, tmp_path / "store")
    assert n == 4 and path.name == "fake_store.csv.xz"
    table, missing = S.select(exp, settings, "smoke", S.read(path))
    assert missing == [] and list(dict.fromkeys(table["cell"])) == ["c0", "c1", "c2", "c3"]
    got = S.analysis_frame(table)
    live = C.records_frame(recs)
    pd.testing.assert_frame_equal(got, live)
    assert len(got) == 1 + 2 + 3 + 1  # c3 failed: one row with its message
    r0 = got.iloc[0].to_dict()
    assert r0["label"] == "barker" and r0["looks_like_json"] == "1" and r0["empty"] == ""
    assert pd.isna(r0["none"]) and r0["flag"] is True and r0["k"] == 3
    r1 = got.iloc[2].to_dict()
    assert r1["x"] == 0.1 + 0.2 and r1["tiny"] == 5e-324 and math.isnan(r1["nan"]) and r1["inf"] == -math.inf
    r2 = got.iloc[5].to_dict()
    assert r2["curve"][0] == 0.1234568 and r2["curve"][1] == 1e-20 and math.isnan(r2["curve"][2])
    assert r2["nested"] == [[1, 2], [3.25]] and r2["d"] == {"a": [1.0, 2.5]}
    assert math.isnan(got.iloc[0]["x"])  # c0's row has no key x
    bad = got[got["status"] == "error"].iloc[0]
    assert bad["cell"] == "c3" and "deliberate failure" in bad["message"] and bad["rate"] == 0.75
    st = S.read(path)
    assert set(st["code_commit"]) == {C.code_commit()} and (st["cpu_seconds"].map(float) > 0).all()
    # mutant: a store that writes values as plain text loses their types, which the check catches
    mutant = st.copy()
    mutant["looks_like_json"] = mutant["looks_like_json"].str.strip('"')
    assert S.analysis_frame(mutant).iloc[0]["looks_like_json"] == 1


def test_store_add_replaces_a_stored_cell_and_keeps_the_others(fake, tmp_path):
    exp, settings, recs = fake
    S.add(exp, recs[:3], tmp_path / "store")
    again = dict(recs[1], finished_utc="later")
    path, n = S.add(exp, [again], tmp_path / "store")
    t = S.read(path)
    assert n == 3 and t.loc[t["cell"] == "c1", "finished_utc"].eq("later").all()
    assert t.groupby("cell").size().to_dict() == {"c0": 1, "c1": 2, "c2": 3}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.assign(status=t["status"].where(t.index != 1, "done")), "line 3 has status 'done'"),
        (lambda t: t.assign(experiment="other"), "line 2 is of experiment 'other'"),
        (lambda t: t.assign(row=t["row"].where(t.index != 2, "0")), "cell 'c1' has rows"),
        (lambda t: t.drop(columns=["config_hash"]), "missing columns ['config_hash']"),
        (lambda t: t.assign(wall_seconds="fast"), "column wall_seconds holds a value that is not a number"),
    ],
)
def test_a_malformed_store_file_is_refused_naming_the_file(fake, tmp_path, edit, message):
    exp, _, recs = fake
    path, _ = S.add(exp, recs, tmp_path / "a")
    S.write(tmp_path / "fake_store.csv.xz", edit(S.read(path)))
    with pytest.raises(ValueError, match=re.escape(message)) as e:
        S.read(tmp_path / "fake_store.csv.xz")
    assert str(tmp_path / "fake_store.csv.xz") in str(e.value) and "\n" not in str(e.value)


def test_a_truncated_store_file_is_refused(fake, tmp_path):
    exp, _, recs = fake
    path, _ = S.add(exp, recs, tmp_path / "a")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not a readable store file"):
        S.read(path)
    path.write_bytes(b"not xz at all")
    with pytest.raises(ValueError, match="not a readable store file"):
        S.read(path)


def test_a_stored_cell_of_other_settings_is_refused(fake, tmp_path, capsys):
    """A row whose hash or params are not what the config gives its cell (computed with other settings, or
    edited) stops the rebuild with the cell named; the CLI says it in one line and exits 2."""
    exp, settings, recs = fake
    path, _ = S.add(exp, recs, tmp_path / "store")
    other = C.experiment_settings(exp, "smoke", {exp.id: {"scale": "smoke", "settings": {"a": 2}}})
    msg = r"4 stored cell\(s\) of fake_store were computed .*e\.g\. c0 \(stored"
    with pytest.raises(ValueError, match=msg):
        S.select(exp, other, "smoke", S.read(path))
    t = S.read(path)
    t.loc[t["cell"] == "c2", "params"] = json.dumps({"cell": "c2", "i": 5, "rate": 0.5})
    with pytest.raises(ValueError, match=r"c2 \(params or scale differ"):
        S.select(exp, settings, "smoke", t)
    S.write(path, t)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("scale: smoke\nroot_seed: 7\nexperiments: all\noverrides: {}\n")
    assert cli_main(["store", "check", "--config", str(cfg), "--store", str(path.parent)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "c2 (params or scale differ" in err


def test_store_add_refuses_other_settings_and_smoke_cells_in_the_committed_store(fake, tmp_path, capsys):
    exp, _, _ = fake
    cfg = tmp_path / "c.yaml"
    over = "  fake_store:\n    reason: another setting for the test\n    scale: smoke\n    settings: {a: 2}\n"
    cfg.write_text("scale: smoke\nroot_seed: 7\nexperiments: all\noverrides:\n" + over)
    assert cli_main(["store", "add", "--config", str(cfg), "--store", str(tmp_path / "s")]) == 2
    assert "computed with other settings" in capsys.readouterr().err
    cfg.write_text("scale: smoke\nroot_seed: 7\nexperiments: all\noverrides: {}\n")
    assert cli_main(["store", "add", "--config", str(cfg)]) == 2
    assert "holds paper-scale cells" in capsys.readouterr().err
    assert cli_main(["store", "add", "--config", str(cfg), "--store", str(tmp_path / "s")]) == 0
    assert "1 cell(s) with status error not added" in capsys.readouterr().err
    assert S.read(tmp_path / "s" / "fake_store.csv.xz")["cell"].nunique() == 3


# ------------------------------------------------------------------------------ the committed store
STORE_FILES = sorted(
    f for f in S.STORE.glob(f"*{S.SUFFIX}") if f.name not in (f"perf{S.SUFFIX}", f"peers{S.SUFFIX}")
)


def test_committed_store_is_small_and_every_column_documented():
    """<= 10 MB in all; results/store/README.md documents each provenance column as bench.store does, and
    each metric column of each file under that experiment's heading (and no column that no file has)."""
    assert STORE_FILES, "no committed store files"
    assert sum(f.stat().st_size for f in STORE_FILES) <= 10 * 2**20
    readme = (S.STORE / "README.md").read_text()
    prov = dict(re.findall(r"^\| (\w+) \| (.+) \|$", readme.split("## Metric columns")[0], re.M))
    prov.pop("column", None)
    assert prov == {k: v.replace("|", "\\|") for k, v in S.PROVENANCE.items()}
    sections = re.split(r"^### ", readme.split("## Metric columns")[1], flags=re.M)[1:]
    documented = {}
    for sec in sections:
        exp_id = sec.split()[0]
        names = set()
        for cell in re.findall(r"^\| ([^|]+) \|", sec, re.M):
            names |= {n.strip() for n in cell.split(",")} - {"column"}
        documented[exp_id] = names
    for f in STORE_FILES:
        exp_id = f.name.removesuffix(S.SUFFIX)
        with lzma.open(f, "rt") as fh:
            header = fh.readline().strip().split(",")
        assert header[: len(S.PROVENANCE)] == list(S.PROVENANCE)
        assert set(header[len(S.PROVENANCE) :]) == documented.get(exp_id), exp_id
    assert set(documented) == {f.name.removesuffix(S.SUFFIX) for f in STORE_FILES}


def test_every_stored_cell_is_a_current_cell_of_the_full_config(capsys):
    """`mcmc-bench store check`: each file well formed, each stored cell a cell of config/full.yaml with the
    hash that config gives it (so `make results` uses it), at paper scale."""
    assert cli_main(["store", "check"]) == 0
    out = capsys.readouterr().out
    for f in STORE_FILES:
        assert f"{f.name.removesuffix(S.SUFFIX)}: " in out
