"""Tests of bench.datasets: verified fetching, parsers and preprocessing recipes.

Uses the read-only dataset mirror ``$MCMC_BENCH_MIRROR`` (tests/conftest.py sets its default; tests
that need it are skipped if it is absent) and small fixtures in tests/data. All checks are deterministic
(no false alarms by chance).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import os
import shutil
import struct
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import bench.datasets as ds

fetch_mod = importlib.import_module("bench.datasets.fetch")  # the package re-exports fetch()
mnist_mod = importlib.import_module("bench.datasets.mnist")

MIRROR = Path(os.environ["MCMC_BENCH_MIRROR"])  # default set by tests/conftest.py
FIXTURE = Path(__file__).parent / "data" / "miniboone_small.txt"

needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(), reason="dataset mirror absent")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in (
        "MCMC_BENCH_DATA",
        "MCMC_BENCH_MIRROR",
        "MCMC_BENCH_CACHE",
        "MCMC_BENCH_OFFLINE",
        "MCMC_BENCH_TIMEOUT",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    """Shared data + cache dirs for the (slower) MNIST recipes."""
    root = tmp_path_factory.mktemp("mnist")
    return {"data_dir": root / "raw", "cache_dir": root / "cache", "mirror": MIRROR}


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


# ------------------------------------------------------------------------------------- fetch


@needs_mirror
def test_registry_matches_sha256sums():
    sums = {}
    for line in (MIRROR / "SHA256SUMS").read_text().splitlines():
        digest, rel = line.split()
        sums[rel] = digest
    with_sha = {r.relpath: r.sha256 for r in ds.REGISTRY.values() if r.sha256}
    assert with_sha == sums
    assert ds.REGISTRY["miniboone"].git_blob == "e5f8df59663a2d24da5d7ab7af9157a0dc23cdc1"


@needs_mirror
def test_fetch_from_mirror_verifies_and_reuses(tmp_path):
    for name, remote in ds.REGISTRY.items():
        if remote.sha256 is None:
            continue
        p = ds.fetch(name, data_dir=tmp_path, mirror=MIRROR)
        assert p == tmp_path / remote.relpath
        assert hashlib.sha256(p.read_bytes()).hexdigest() == remote.sha256
    # second call: existing verified copy, no mirror and no network needed
    p2 = ds.fetch("letterA", data_dir=tmp_path, mirror=None, offline=True)
    assert p2 == tmp_path / "images/letterA.bmp"
    assert not [p for p in _files(tmp_path) if p.name.endswith(".part")]


@needs_mirror
def test_fetch_env_vars(tmp_path, monkeypatch):
    monkeypatch.setenv("MCMC_BENCH_MIRROR", str(MIRROR))
    monkeypatch.setenv("MCMC_BENCH_DATA", str(tmp_path / "d"))
    p = ds.fetch("mnist-test-labels")
    assert p == tmp_path / "d" / "mnist" / "t10k-labels-idx1-ubyte.gz"
    assert ds.resolve_data_dir() == tmp_path / "d"


@needs_mirror
@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupt_mirror_file_raises_and_leaves_nothing(tmp_path, damage):
    mirror = tmp_path / "mirror"
    (mirror / "images").mkdir(parents=True)
    data = bytearray((MIRROR / "images/letterA.bmp").read_bytes())
    if damage == "flip":
        data[5000] ^= 0x01
    else:
        data = data[:-100]
    (mirror / "images/letterA.bmp").write_bytes(bytes(data))
    bad_sha = hashlib.sha256(bytes(data)).hexdigest()
    data_dir = tmp_path / "data"
    with pytest.raises(ValueError) as err:
        ds.fetch("letterA", data_dir=data_dir, mirror=mirror, offline=True)
    msg = str(err.value)
    assert "letterA" in msg and ds.REGISTRY["letterA"].sha256 in msg and bad_sha in msg
    assert _files(data_dir) == []


@needs_mirror
def test_corrupt_existing_copy_raises(tmp_path):
    p = ds.fetch("mnist-test-labels", data_dir=tmp_path, mirror=MIRROR)
    data = bytearray(p.read_bytes())
    data[100] ^= 0xFF
    p.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="sha256 mismatch"):
        ds.fetch("mnist-test-labels", data_dir=tmp_path, mirror=MIRROR)


def test_download_unreachable_raises_quickly(tmp_path):
    remote = ds.RemoteFile("bogus", "bogus/x.bin", "http://127.0.0.1:9/x", sha256="0" * 64)
    t0 = time.monotonic()
    with pytest.raises(ds.DataUnavailable, match="bogus"):
        ds.fetch_remote(remote, data_dir=tmp_path, mirror=tmp_path / "empty", timeout=2)
    assert time.monotonic() - t0 < 5
    assert issubclass(ds.DataUnavailable, RuntimeError)
    assert _files(tmp_path) == [] and not (tmp_path / "bogus").exists()


@pytest.fixture
def http_dir(tmp_path):
    """A local HTTP server (127.0.0.1, free port) serving tmp_path/www."""
    import functools
    import http.server
    import threading

    www = tmp_path / "www"
    www.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(www))
    handler.log_message = lambda *a, **k: None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    yield www, f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_download_with_pooch_verifies(tmp_path, http_dir):
    www, base = http_dir
    payload = FIXTURE.read_bytes()
    (www / "good.txt").write_bytes(payload)
    (www / "bad.txt").write_bytes(payload[:-1] + b"?")
    sha = hashlib.sha256(payload).hexdigest()
    good = ds.RemoteFile("good", "dl/good.txt", f"{base}/good.txt", sha256=sha)
    p = ds.fetch_remote(good, data_dir=tmp_path / "d", timeout=5)
    assert p.read_bytes() == payload
    assert [q.name for q in _files(tmp_path / "d")] == ["good.txt"]
    bad = ds.RemoteFile("bad", "dl/bad.txt", f"{base}/bad.txt", sha256=sha)
    with pytest.raises(ValueError, match=sha):
        ds.fetch_remote(bad, data_dir=tmp_path / "e", timeout=5)
    assert _files(tmp_path / "e") == []
    blob = ds.RemoteFile("bad", "dl/bad.txt", f"{base}/bad.txt", git_blob=ds.git_blob_id(payload))
    with pytest.raises(ValueError, match="git blob id mismatch"):
        ds.fetch_remote(blob, data_dir=tmp_path / "f", timeout=5)
    assert _files(tmp_path / "f") == []
    missing = ds.RemoteFile("gone", "dl/gone.txt", f"{base}/gone.txt", sha256=sha)
    with pytest.raises(ds.DataUnavailable, match="404"):
        ds.fetch_remote(missing, data_dir=tmp_path / "g", timeout=5)


def test_offline_mode_never_downloads(tmp_path, monkeypatch):
    monkeypatch.setenv("MCMC_BENCH_OFFLINE", "1")

    def boom(*a, **k):
        raise AssertionError("download attempted")

    monkeypatch.setattr(fetch_mod, "_download_verified", boom)
    with pytest.raises(ds.DataUnavailable, match="disabled"):
        ds.fetch("conll2000", data_dir=tmp_path)


def test_unknown_name():
    with pytest.raises(ValueError, match="unknown data file"):
        ds.fetch("nope")


def test_git_blob_id_matches_git(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    out = subprocess.run(
        ["git", "hash-object", str(FIXTURE)], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert ds.git_blob_id(FIXTURE.read_bytes()) == out
    assert ds.file_hashes(FIXTURE)["git_blob"] == out


def test_blob_verified_copy_records_sha256(tmp_path):
    blob = ds.git_blob_id(FIXTURE.read_bytes())
    remote = ds.RemoteFile("mb-small", "mb/small.txt", "http://127.0.0.1:9/x", git_blob=blob)
    mirror = tmp_path / "mirror"
    (mirror / "mb").mkdir(parents=True)
    shutil.copy(FIXTURE, mirror / "mb/small.txt")
    p = ds.fetch_remote(remote, data_dir=tmp_path / "d", mirror=mirror, offline=True)
    side = p.with_name("small.txt.sha256").read_text().split()[0]
    assert side == hashlib.sha256(FIXTURE.read_bytes()).hexdigest()
    # a copy placed by hand in the data dir is verified and gets its sha256 recorded
    manual = tmp_path / "d3" / "mb" / "small.txt"
    manual.parent.mkdir(parents=True)
    shutil.copy(FIXTURE, manual)
    assert ds.fetch_remote(remote, data_dir=tmp_path / "d3", offline=True) == manual
    assert manual.with_name("small.txt.sha256").read_text().split()[0] == side
    # a one-byte change breaks the blob id
    (mirror / "mb/small.txt").write_bytes(FIXTURE.read_bytes().replace(b"E+0", b"E-0", 1))
    with pytest.raises(ValueError, match=blob):
        ds.fetch_remote(remote, data_dir=tmp_path / "d2", mirror=mirror, offline=True)
    assert _files(tmp_path / "d2") == []


def test_miniboone_layout_check(tmp_path):
    good = tmp_path / "good.txt"
    row = b" 0" * 50 + b"\n"
    good.write_bytes(b"    36499    93565\n" + row * 130064)
    fetch_mod._check_miniboone_layout(good)
    bad_rows = tmp_path / "rows.txt"
    bad_rows.write_bytes(b"36499 93565\n" + row * 130063)
    with pytest.raises(ValueError, match="130063 data rows"):
        fetch_mod._check_miniboone_layout(bad_rows)
    with pytest.raises(ValueError, match="first line"):
        fetch_mod._check_miniboone_layout(FIXTURE)
    bad_fields = tmp_path / "fields.txt"
    bad_fields.write_bytes(b"36499 93565\n" + row * 10 + b" 0" * 49 + b"\n" + row * 130053)
    with pytest.raises(ValueError, match="49 fields"):
        fetch_mod._check_miniboone_layout(bad_fields)


# -------------------------------------------------------------------------------------- IDX


def _idx(dims: tuple[int, ...], payload: bytes, code: int = 0x08) -> bytes:
    return bytes([0, 0, code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + payload


def test_idx_parse_and_validation(tmp_path):
    arr = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    np.testing.assert_array_equal(ds.parse_idx(_idx((2, 3, 4), arr.tobytes())), arr)
    with pytest.raises(ValueError, match="truncated IDX payload"):
        ds.parse_idx(_idx((2, 3, 4), arr.tobytes()[:-1]))
    with pytest.raises(ValueError, match="trailing"):
        ds.parse_idx(_idx((2, 3, 4), arr.tobytes() + b"\0"))
    with pytest.raises(ValueError, match="magic"):
        ds.parse_idx(b"\x01" + _idx((2, 3, 4), arr.tobytes())[1:])
    with pytest.raises(ValueError, match="type code"):
        ds.parse_idx(_idx((2, 3, 4), arr.tobytes(), code=0x07))
    with pytest.raises(ValueError, match="header"):
        ds.parse_idx(_idx((2, 3, 4), b"")[:9])
    p = tmp_path / "x.idx.gz"
    p.write_bytes(gzip.compress(_idx((3,), b"\x01\x02\x03", code=0x08)))
    np.testing.assert_array_equal(ds.read_idx(p, magic=2049), [1, 2, 3])
    with pytest.raises(ValueError, match="magic 2049 != expected 2051"):
        ds.read_idx(p, magic=2051)


@needs_mirror
def test_truncated_mnist_gzip_clear_error(tmp_path):
    src = (MIRROR / "mnist/t10k-labels-idx1-ubyte.gz").read_bytes()
    p = tmp_path / "cut.gz"
    p.write_bytes(src[: len(src) // 2])
    with pytest.raises(ValueError, match="truncated"):
        ds.read_idx(p)
    raw = gzip.decompress(src)
    q = tmp_path / "cut.idx"
    q.write_bytes(raw[:-10])
    with pytest.raises(ValueError, match="truncated IDX payload"):
        ds.read_idx(q, magic=2049)


# ------------------------------------------------------------------------------------ MNIST


@needs_mirror
def test_load_mnist_counts(dirs):
    m = ds.load_mnist(dirs["data_dir"], dirs["mirror"])
    assert m["X_train"].shape == (60000, 28, 28) and m["X_test"].shape == (10000, 28, 28)
    assert np.bincount(m["y_train"]).tolist() == [
        5923,
        6742,
        5958,
        6131,
        5842,
        5421,
        5918,
        6265,
        5851,
        5949,
    ]
    assert np.bincount(m["y_test"]).tolist() == [
        980,
        1135,
        1032,
        1010,
        982,
        892,
        958,
        1028,
        974,
        1009,
    ]


@needs_mirror
@pytest.mark.parametrize(
    "a,b,n_train,n_test,train_counts,test_counts,C",
    [
        (3, 5, 11552, 1902, [6131, 5421], [1010, 892], 7.31e4),
        (7, 9, 12214, 2037, [6265, 5949], [1028, 1009], 7.13e4),
    ],
)
def test_digit_pair(dirs, a, b, n_train, n_test, train_counts, test_counts, C):
    r = ds.digit_pair(a, b, data_dir=dirs["data_dir"], cache_dir=dirs["cache_dir"], mirror=MIRROR)
    assert r["X_train"].shape == (n_train, 50) and r["X_test"].shape == (n_test, 50)
    assert np.bincount(r["y_train"]).tolist() == train_counts
    assert np.bincount(r["y_test"]).tolist() == test_counts
    comps = r["components"]
    assert comps.shape == (50, 784)
    np.testing.assert_allclose(comps @ comps.T, np.eye(50), atol=1e-10)
    assert np.abs(r["X_train"].mean(axis=0)).max() < 1e-10  # centred by the train mean
    # PCA on the train split only: the mean is the train pixel mean and the variances are the
    # top eigenvalues of the train covariance
    m = ds.load_mnist(dirs["data_dir"])
    Xtr = m["X_train"][r["idx_train"]].reshape(n_train, -1) / 255.0
    np.testing.assert_allclose(r["mean"], Xtr.mean(axis=0), atol=1e-12)
    ev = r["explained_variance"]
    assert (np.diff(ev) <= 0).all()
    np.testing.assert_allclose(np.cov(r["X_train"], rowvar=False), np.diag(ev), atol=1e-10)
    resid = np.cov(Xtr - r["X_train"] @ comps, rowvar=False)  # variance left outside the span
    assert np.linalg.eigvalsh(resid)[-1] <= ev[-1] * (1 + 1e-9)  # so the span is the top 50
    Xte = m["X_test"][r["idx_test"]].reshape(n_test, -1) / 255.0
    np.testing.assert_allclose(r["X_test"], (Xte - r["mean"]) @ comps.T, atol=1e-10)
    assert set(m["y_test"][r["idx_test"][r["y_test"] == 1]]) == {b}
    # TunaMH constant C = sum_i ||x_i|| of the PCA features
    assert abs(np.linalg.norm(r["X_train"], axis=1).sum() / C - 1) < 0.005


@needs_mirror
def test_digit_pair_cache(dirs, monkeypatch):
    r1 = ds.digit_pair(3, 5, data_dir=dirs["data_dir"], cache_dir=dirs["cache_dir"], mirror=MIRROR)
    files = sorted(dirs["cache_dir"].glob("mnist_3v5_pca50-*.npz"))
    assert len(files) == 1

    def boom(*a, **k):
        raise AssertionError("recomputed instead of cache hit")

    monkeypatch.setattr(mnist_mod, "load_mnist", boom)
    r2 = ds.digit_pair(3, 5, data_dir=dirs["data_dir"], cache_dir=dirs["cache_dir"])
    assert r1.keys() == r2.keys()
    for k in r1:
        np.testing.assert_array_equal(r1[k], r2[k])
    with pytest.raises(AssertionError, match="recomputed"):  # different recipe -> new key
        ds.digit_pair(3, 5, pca=10, data_dir=dirs["data_dir"], cache_dir=dirs["cache_dir"])


@needs_mirror
def test_digit_pair_features_do_not_depend_on_blas_threads(dirs):
    """The PCA runs on one BLAS thread whatever the caller's setting: the same features bit for bit
    under 1 and 2 threads (the unpinned code gave different last bits on this 2-core machine)."""
    from threadpoolctl import threadpool_limits

    kw = dict(data_dir=dirs["data_dir"], mirror=MIRROR, use_cache=False)
    with threadpool_limits(limits=1, user_api="blas"):
        r1 = ds.digit_pair(3, 5, **kw)
    with threadpool_limits(limits=2, user_api="blas"):
        r2 = ds.digit_pair(3, 5, **kw)
    for k in ("X_train", "X_test", "components", "explained_variance"):
        np.testing.assert_array_equal(r1[k], r2[k])


def test_digit_pair_bad_args():
    with pytest.raises(ValueError):
        ds.digit_pair(3, 3)
    with pytest.raises(ValueError):
        ds.digit_pair(3, 10)


@needs_mirror
def test_mnist_1v7_base(dirs):
    r = ds.mnist_1v7(data_dir=dirs["data_dir"], cache_dir=dirs["cache_dir"], mirror=MIRROR)
    assert r["X_train"].shape == (13007, 784) and r["X_test"].shape == (2163, 784)
    assert np.bincount(r["y_train"]).tolist() == [6742, 6265]
    assert np.bincount(r["y_test"]).tolist() == [1135, 1028]
    assert set(np.unique(r["y_train_pm"])) == {-1, 1}
    assert r["X_train"].min() == 0.0 and r["X_train"].max() == 1.0
    assert not r["augmented"].any()
    r13 = ds.mnist_1v7(n_train=13000, data_dir=dirs["data_dir"], cache_dir=dirs["cache_dir"])
    np.testing.assert_array_equal(r13["X_train"], r["X_train"][:13000])


@needs_mirror
def test_mnist_1v7_augmented(dirs):
    kw = {"data_dir": dirs["data_dir"], "mirror": MIRROR, "use_cache": False}
    r = ds.mnist_1v7(augmented_to=13400, **kw)
    assert r["X_train"].shape == (13400, 784)
    assert r["augmented"].sum() == 393 and not r["augmented"][:13007].any()
    m = ds.load_mnist(dirs["data_dir"])
    np.testing.assert_array_equal(r["y_train"], (m["y_train"][r["source"]] == 7).astype(int))
    aug, src = r["X_train"][13007:], m["X_train"][r["source"][13007:]].reshape(393, -1) / 255.0
    assert (np.abs(aug - src).max(axis=1) > 0.1).all()  # every copy is actually transformed
    ink = aug.sum(axis=1) / src.sum(axis=1)  # scale in [0.9, 1.1] -> ink ratio ~ s^2
    assert 0.6 < ink.min() and ink.max() < 1.4
    r2 = ds.mnist_1v7(augmented_to=13400, **kw)  # fixed seed: reproducible
    np.testing.assert_array_equal(r["X_train"], r2["X_train"])
    r3 = ds.mnist_1v7(augmented_to=13400, seed=1, **kw)
    assert not np.array_equal(r["X_train"][13007:], r3["X_train"][13007:])
    with pytest.raises(ValueError):
        ds.mnist_1v7(augmented_to=100, **kw)


def test_augment_identity_and_rotation(monkeypatch):
    rng = np.random.default_rng(0)
    img = np.zeros((3, 28, 28), dtype=np.uint8)
    img[:, 5:9, 12:16] = 200
    img[1, 20, 3] = 255
    monkeypatch.setattr(mnist_mod, "AUGMENT_MAX_ROTATION_DEG", 0.0)
    monkeypatch.setattr(mnist_mod, "AUGMENT_MAX_SHIFT_PX", 0.0)
    monkeypatch.setattr(mnist_mod, "AUGMENT_SCALE_RANGE", (1.0, 1.0))
    out, src = ds.augment_digits(img, 10, rng)
    np.testing.assert_array_equal(out, img[src])
    # 180-degree rotation about the centre (13.5, 13.5) maps pixel (r, c) to (27 - r, 27 - c)
    monkeypatch.setattr(mnist_mod, "AUGMENT_MAX_ROTATION_DEG", 180.0)
    monkeypatch.setattr(mnist_mod, "np", _FixedUniform(np, 180.0))
    out, src = ds.augment_digits(img, 4, rng)
    np.testing.assert_array_equal(out, img[src][:, ::-1, ::-1])


class _FixedUniform:
    """numpy stand-in whose deg2rad returns a fixed angle (forces an exact rotation)."""

    def __init__(self, base, deg):
        self._base, self._deg = base, deg

    def __getattr__(self, name):
        return getattr(self._base, name)

    def deg2rad(self, x):
        return self._base.full_like(x, self._base.deg2rad(self._deg))


# -------------------------------------------------------------------------------- MiniBooNE


def test_miniboone_fixture_format():
    lines = FIXTURE.read_text().splitlines()
    assert lines[0].split() == ["20", "40"] and len(lines) == 61
    assert all(len(ln) == 700 for ln in lines[1:])  # 50 fields of E14.6
    X, y = ds.parse_miniboone(FIXTURE)
    assert X.shape == (60, 50) and y.tolist() == [1] * 20 + [0] * 40
    assert (X == -999.0).all(axis=1).sum() == 2 and (X == -999.0).sum() == 101


def test_fixture_is_reproducible():
    import runpy

    gen = runpy.run_path(str(FIXTURE.with_name("make_miniboone_small.py")))
    assert gen["make"]() == FIXTURE.read_text()


def test_e14_6_format_roundtrip(tmp_path):
    txt = ds.format_miniboone(np.array([[2.89624, -999.0, 0.0, 1e-5, 0.99999999]]), 1)
    assert txt.splitlines()[1] == ("  0.289624E+01 -0.999000E+03  0.000000E+00  0.100000E-04  0.100000E+01")
    X, _ = ds.parse_miniboone(FIXTURE)
    p = tmp_path / "rt.txt"
    p.write_text(ds.format_miniboone(X, 20))
    assert p.read_bytes() == FIXTURE.read_bytes()


def test_miniboone_bad_files(tmp_path):
    lines = FIXTURE.read_text().splitlines(keepends=True)
    p = tmp_path / "bad.txt"
    p.write_text("    20    41\n" + "".join(lines[1:]))
    with pytest.raises(ValueError, match="60 data rows"):
        ds.parse_miniboone(p)
    p.write_text("".join(lines[:5]) + lines[5][14:] + "".join(lines[6:]))
    with pytest.raises(ValueError, match="49 fields"):
        ds.parse_miniboone(p)
    p.write_text("twenty forty\n" + "".join(lines[1:]))
    with pytest.raises(ValueError, match="two counts"):
        ds.parse_miniboone(p)


def test_load_miniboone_fixture():
    r = ds.load_miniboone(path=FIXTURE)
    assert r["X_train"].shape == (48, 51) and r["X_test"].shape == (12, 51)
    assert (r["X_train"][:, -1] == 1).all() and (r["X_test"][:, -1] == 1).all()
    assert sorted(np.concatenate([r["idx_train"], r["idx_test"]]).tolist()) == list(range(60))
    y = np.r_[np.ones(20, int), np.zeros(40, int)]
    np.testing.assert_array_equal(r["y_train"], y[r["idx_train"]])
    Z = r["X_train"][:, :50]
    np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(Z.std(axis=0), 1, atol=1e-12)
    assert int(r["n_missing_rows"]) == 3
    X, _ = ds.parse_miniboone(FIXTURE)
    for split in ("train", "test"):  # imputed entries sit exactly at the train mean -> 0
        miss = X[r[f"idx_{split}"]] == -999.0
        assert miss.any() or split == "test"
        np.testing.assert_allclose(r[f"X_{split}"][:, :50][miss], 0.0, atol=1e-12)
    again = ds.load_miniboone(path=FIXTURE)
    np.testing.assert_array_equal(again["idx_test"], r["idx_test"])
    other = ds.load_miniboone(path=FIXTURE, seed=1)
    assert not np.array_equal(other["idx_test"], r["idx_test"])
    drop = ds.load_miniboone(path=FIXTURE, missing="drop", bias=False)
    assert drop["X_train"].shape[1] == 50
    assert len(drop["idx_train"]) + len(drop["idx_test"]) == 57
    keep = ds.load_miniboone(path=FIXTURE, missing="keep", standardize=False)
    assert (keep["X_train"] == -999.0).any()
    with pytest.raises(ValueError):
        ds.load_miniboone(path=FIXTURE, missing="zero")


def test_load_miniboone_unavailable(tmp_path, monkeypatch):
    monkeypatch.setenv("MCMC_BENCH_OFFLINE", "1")
    with pytest.raises(ds.DataUnavailable, match="MiniBooNE data unavailable"):
        ds.load_miniboone(data_dir=tmp_path, mirror=tmp_path)


# ----------------------------------------------------------------------------------- images


@needs_mirror
def test_letter_a(tmp_path):
    x = ds.letter_a(data_dir=tmp_path, mirror=MIRROR)
    assert x.shape == (128, 128) and x.dtype == np.int8
    assert (x == 1).sum() == 4282 and (x == -1).sum() == 128 * 128 - 4282
    rows, cols = np.nonzero(x == 1)
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (11, 117, 8, 112)
    g = ds.letter_a(binary=False, data_dir=tmp_path)
    assert (g == 29).sum() == 11932 and (g == 227).sum() == 3628 and len(np.unique(g)) == 97


@needs_mirror
def test_bmp_validation():
    data = (MIRROR / "images/letterA.bmp").read_bytes()
    idx, pal = ds.parse_bmp8(data)
    assert idx.shape == (128, 128) and pal.shape == (256, 3)
    with pytest.raises(ValueError, match="truncated"):
        ds.parse_bmp8(data[:-10])
    with pytest.raises(ValueError, match="signature"):
        ds.parse_bmp8(b"XX" + data[2:])
    with pytest.raises(ValueError, match="bits per pixel"):
        ds.parse_bmp8(data[:28] + struct.pack("<H", 24) + data[30:])
    topdown = data[:22] + struct.pack("<i", -128) + data[26:]
    np.testing.assert_array_equal(ds.parse_bmp8(topdown)[0], idx[::-1])


# ---------------------------------------------------------------------------------- corpora


@needs_mirror
def test_conll2000(tmp_path):
    train = ds.conll2000("train", data_dir=tmp_path, mirror=MIRROR)
    test = ds.conll2000("test", data_dir=tmp_path)
    assert (len(train), sum(map(len, train))) == (8936, 211727)
    assert (len(test), sum(map(len, test))) == (2012, 47377)
    assert train[0][:2] == [("Confidence", "B-NP"), ("in", "B-PP")]
    assert len({t for s in train for _, t in s}) == 22
    assert len({p for s in ds.conll2000("train", "pos", data_dir=tmp_path) for _, p in s}) == 44
    assert ds.conll2000("test", "all", data_dir=tmp_path)[0][0] == ("Rockwell", "NNP", "B-NP")


@needs_mirror
def test_conll2002(tmp_path):
    expected = {"esp.train": (8323, 264715, 4321), "ned.train": (15806, 202644, 4716)}
    for f, (n_sent, n_tok, n_per) in expected.items():
        lang, split = f.split(".")
        s = ds.conll2002(lang, split, data_dir=tmp_path, mirror=MIRROR)
        tags = [t for sent in s for _, t in sent]
        assert (len(s), len(tags), tags.count("B-PER")) == (n_sent, n_tok, n_per)
        assert len(set(tags)) == 9
        assert not any(w == "-DOCSTART-" for sent in s for w, _ in sent)
    with pytest.raises(ValueError):
        ds.conll2002("eng", "train", data_dir=tmp_path)


@needs_mirror
def test_ieer(tmp_path):
    docs = ds.ieer(data_dir=tmp_path, mirror=MIRROR)
    assert len(docs) == 94
    toks = [t for _, d in docs for t in d]
    assert len(toks) == 57899  # NLTK: 57931 incl. 32 <ANNOTATION> tags
    assert sum(t.startswith("B-") for _, t in toks) == 4953
    three = ds.ieer(("PERSON", "ORGANIZATION", "LOCATION"), data_dir=tmp_path)
    tags = {t for _, d in three for _, t in d}
    assert tags == {"O"} | {f"{p}-{c}" for p in "BI" for c in ("PERSON", "ORGANIZATION", "LOCATION")}
    assert docs[0][1][:2] == [("NAIROBI", "B-LOCATION"), (",", "O")]


def test_parse_conll_errors():
    assert ds.parse_conll("a DT B-NP\n\nb NN I-NP\n") == [[("a", "B-NP")], [("b", "I-NP")]]
    with pytest.raises(ValueError, match="2 fields"):
        ds.parse_conll("a DT\n")
    with pytest.raises(ValueError, match="tagset"):
        ds.parse_conll("a DT O\n", tagset="xyz")
