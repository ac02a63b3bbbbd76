"""Registry of remote data files and a verified, atomic ``fetch``.

Every file the benchmark reads is listed in :data:`REGISTRY` with its canonical URL and a
checksum (sha256 from the dataset mirror's ``SHA256SUMS``). MiniBooNE has no published
sha256: it is verified by its git blob id (sha1 of ``b"blob <size>\\0" + content``) plus a layout
check (first line ``36499 93565``, 130064 rows of 50 floats); the sha256 of the first verified
copy is recorded next to it (``<file>.sha256``).

Sources, in order: an existing verified copy in the data dir; a *mirror* directory laid out like
the data dir (argument ``mirror=`` or env ``MCMC_BENCH_MIRROR``); the canonical URL
through :mod:`pooch` with a short timeout. Machines without internet get a prompt
:class:`DataUnavailable` instead of a hang. Nothing half-written is left behind: data are written to
a temporary file in the target directory and moved into place with :func:`os.replace` only after
verification.

Environment variables: ``MCMC_BENCH_DATA`` (data dir, default ``<repo>/data/raw``),
``MCMC_BENCH_MIRROR`` (mirror dir), ``MCMC_BENCH_OFFLINE=1`` (never try the network),
``MCMC_BENCH_TIMEOUT`` (connect/read timeout in seconds, default 10).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "REGISTRY",
    "DataUnavailable",
    "RemoteFile",
    "fetch",
    "fetch_remote",
    "file_hashes",
    "git_blob_id",
    "resolve_cache_dir",
    "resolve_data_dir",
    "resolve_mirror",
    "verify_file",
    "atomic_write_bytes",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
ENV_DATA = "MCMC_BENCH_DATA"
ENV_MIRROR = "MCMC_BENCH_MIRROR"
ENV_OFFLINE = "MCMC_BENCH_OFFLINE"
ENV_TIMEOUT = "MCMC_BENCH_TIMEOUT"
ENV_CACHE = "MCMC_BENCH_CACHE"
DEFAULT_TIMEOUT = 10.0
_CHUNK = 1 << 20


class DataUnavailable(RuntimeError):
    """A data file cannot be obtained (no mirror copy, download failed or disabled)."""


@dataclass(frozen=True)
class RemoteFile:
    """One remote file: registry ``name``, ``relpath`` inside data/mirror dirs, canonical ``url``.

    Exactly one of ``sha256`` / ``git_blob`` is the checksum. ``layout`` names an extra content
    check (only ``"miniboone"`` so far). ``size`` is the expected byte count when known.
    """

    name: str
    relpath: str
    url: str
    sha256: str | None = None
    git_blob: str | None = None
    size: int | None = None
    layout: str | None = None

    def __post_init__(self) -> None:
        if (self.sha256 is None) == (self.git_blob is None):
            raise ValueError(f"{self.name}: give exactly one of sha256 / git_blob")


_MNIST = "http://yann.lecun.com/exdb/mnist/"
_NLTK = "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/"

REGISTRY: dict[str, RemoteFile] = {
    f.name: f
    for f in [
        RemoteFile(
            "mnist-train-images",
            "mnist/train-images-idx3-ubyte.gz",
            _MNIST + "train-images-idx3-ubyte.gz",
            sha256="440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
            size=9912422,
        ),
        RemoteFile(
            "mnist-train-labels",
            "mnist/train-labels-idx1-ubyte.gz",
            _MNIST + "train-labels-idx1-ubyte.gz",
            sha256="3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
            size=28881,
        ),
        RemoteFile(
            "mnist-test-images",
            "mnist/t10k-images-idx3-ubyte.gz",
            _MNIST + "t10k-images-idx3-ubyte.gz",
            sha256="8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
            size=1648877,
        ),
        RemoteFile(
            "mnist-test-labels",
            "mnist/t10k-labels-idx1-ubyte.gz",
            _MNIST + "t10k-labels-idx1-ubyte.gz",
            sha256="f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
            size=4542,
        ),
        RemoteFile(
            "letterA",
            "images/letterA.bmp",
            "https://github.com/probml/pmtk3/raw/dfe84aabf65d4e5133a62ac1f4722bf3834a3327/"
            "data/letterA/letterA.bmp",
            sha256="816aa4fbfada9fe398daa81c53e32f3baf67ab0425b8e0602aaf09f12b53d823",
            size=17462,
        ),
        RemoteFile(
            "ieer",
            "nltk/ieer.zip",
            _NLTK + "ieer.zip",
            sha256="1f63b08ed212c1d52545307838d183c79e02fd09cc8c5a48542f82c61c078b5d",
            size=166156,
        ),
        RemoteFile(
            "conll2002",
            "nltk/conll2002.zip",
            _NLTK + "conll2002.zip",
            sha256="64440e49236d0d393e08e0b266284966d68e2d2a82a50cc41b8e96d98c03b5c8",
            size=1867449,
        ),
        RemoteFile(
            "conll2000",
            "nltk/conll2000.zip",
            _NLTK + "conll2000.zip",
            sha256="01e65164f268366e7caa0db92332a1955d081908c87016e2c7640c3c5279b7cd",
            size=756607,
        ),
        RemoteFile(
            "miniboone",
            "miniboone/MiniBooNE_PID.txt",
            "https://archive.ics.uci.edu/ml/machine-learning-databases/00199/MiniBooNE_PID.txt",
            git_blob="e5f8df59663a2d24da5d7ab7af9157a0dc23cdc1",
            layout="miniboone",
        ),
    ]
}


# --------------------------------------------------------------------------------------------
# locations


def _env_path(var: str) -> Path | None:
    val = os.environ.get(var, "").strip()
    return Path(val).expanduser() if val else None


def resolve_data_dir(path: str | os.PathLike | None = None) -> Path:
    """Raw-data dir: ``path``, else env ``MCMC_BENCH_DATA``, else ``<repo>/data/raw``."""
    if path is not None:
        return Path(path).expanduser()
    return _env_path(ENV_DATA) or REPO_ROOT / "data" / "raw"


def resolve_cache_dir(path: str | os.PathLike | None = None) -> Path:
    """Preprocessed-array cache: ``path``, else env ``MCMC_BENCH_CACHE``, else
    ``<repo>/data/cache``."""
    if path is not None:
        return Path(path).expanduser()
    return _env_path(ENV_CACHE) or REPO_ROOT / "data" / "cache"


def resolve_mirror(path: str | os.PathLike | None = None) -> Path | None:
    """Mirror dir: ``path``, else env ``MCMC_BENCH_MIRROR``, else ``None`` (no mirror)."""
    if path is not None:
        return Path(path).expanduser()
    return _env_path(ENV_MIRROR)


# --------------------------------------------------------------------------------------------
# verification


def git_blob_id(data: bytes) -> str:
    """Git blob id of ``data``: sha1 of ``b"blob <size>\\0" + data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def file_hashes(path: str | os.PathLike) -> dict[str, object]:
    """``{"size", "sha256", "git_blob"}`` of a file, read in chunks."""
    path = Path(path)
    size = path.stat().st_size
    sha256 = hashlib.sha256()
    sha1 = hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            sha256.update(chunk)
            sha1.update(chunk)
    return {"size": size, "sha256": sha256.hexdigest(), "git_blob": sha1.hexdigest()}


def _check_miniboone_layout(path: Path) -> None:
    """First line ``36499 93565``, then 130064 rows of 50 floats (the mirror's PROVENANCE.md)."""
    with open(path, "rb") as fh:
        head = fh.readline().split()
        if head != [b"36499", b"93565"]:
            raise ValueError(f"{path}: first line {head!r} is not '36499 93565'")
        n = 0
        for lineno, line in enumerate(fh, start=2):
            if not line.strip():
                continue
            if len(line.split()) != 50:
                raise ValueError(f"{path}: line {lineno} has {len(line.split())} fields, not 50")
            n += 1
    if n != 36499 + 93565:
        raise ValueError(f"{path}: {n} data rows, expected 130064")


def verify_file(
    remote: RemoteFile,
    path: str | os.PathLike,
    hashes: dict | None = None,
    check_layout: bool = True,
    source: str | os.PathLike | None = None,
    fix: str = "",
) -> dict:
    """Check ``path`` against ``remote``'s checksum (and layout); return its hashes.

    Raises ValueError naming the file with the expected and actual hash (or size) on mismatch. ``source``
    is the file (or URL) the message names instead of ``path`` when ``path`` is a temporary copy of it,
    ``fix`` the remedy appended to the message.
    """
    path = Path(path)
    try:
        return _verify(remote, path, hashes, check_layout)
    except ValueError as e:
        if source is None and not fix:
            raise
        msg = str(e).replace(str(path), str(source)) if source is not None else str(e)
        raise ValueError(msg + (f"; {fix}" if fix else "")) from None


def _verify(remote: RemoteFile, path: Path, hashes: dict | None, check_layout: bool) -> dict:
    h = hashes if hashes is not None else file_hashes(path)
    if remote.size is not None and h["size"] != remote.size:
        raise ValueError(
            f"{remote.name} ({path}): size {h['size']} bytes != expected {remote.size} "
            f"(truncated or corrupt); sha256 expected {remote.sha256}, got {h['sha256']}"
        )
    if remote.sha256 is not None and h["sha256"] != remote.sha256:
        raise ValueError(
            f"{remote.name} ({path}): sha256 mismatch: expected {remote.sha256}, got {h['sha256']}"
        )
    if remote.git_blob is not None and h["git_blob"] != remote.git_blob:
        raise ValueError(
            f"{remote.name} ({path}): git blob id mismatch: expected {remote.git_blob}, got {h['git_blob']}"
        )
    if remote.layout == "miniboone":
        if check_layout:
            _check_miniboone_layout(path)
    elif remote.layout is not None:
        raise ValueError(f"{remote.name}: unknown layout check {remote.layout!r}")
    return h


# --------------------------------------------------------------------------------------------
# acquisition


def _make_readable(path: str | os.PathLike) -> None:
    """Give a mkstemp file (mode 0600) the usual umask-based mode before publishing it."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def _copy_verified(remote: RemoteFile, src: Path, target: Path) -> dict:
    """Copy ``src`` to a temp file next to ``target``, verify, then os.replace. A mismatch names the mirror
    file ``src`` (the one to replace), not the temporary copy."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
            shutil.copyfileobj(inp, out, _CHUNK)
        h = verify_file(
            remote,
            tmp,
            source=src,
            fix=f"the mirror copy is corrupt or truncated: replace {src} (e.g. from {remote.url})",
        )
        _make_readable(tmp)
        os.replace(tmp, target)
        return h
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _download_verified(remote: RemoteFile, url: str, target: Path, timeout: float) -> dict:
    """Download ``url`` with pooch into a private temp dir, verify, then os.replace."""
    import pooch
    import requests

    tmpdir = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".dl", dir=target.parent))
    try:
        known = f"sha256:{remote.sha256}" if remote.sha256 else None
        downloader = pooch.HTTPDownloader(progressbar=False, timeout=timeout)
        try:
            got = pooch.retrieve(url, known_hash=known, fname=target.name, path=tmpdir, downloader=downloader)
        except ValueError as exc:  # pooch's hash mismatch (names both hashes)
            raise ValueError(f"{remote.name} ({url}): {exc}") from exc
        except (requests.exceptions.RequestException, OSError) as exc:
            raise DataUnavailable(
                f"{remote.name}: download of {url} failed ({type(exc).__name__}: {exc})"
            ) from exc
        h = verify_file(remote, got, source=url, fix="the download is corrupt or truncated: try again")
        _make_readable(got)
        os.replace(got, target)
        return h
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same dir and os.replace."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        _make_readable(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _record_sha256(remote: RemoteFile, target: Path, h: dict) -> None:
    """For files verified by blob id only, record the sha256 of the verified copy."""
    if remote.sha256 is None:
        side = target.with_name(target.name + ".sha256")
        atomic_write_bytes(side, f"{h['sha256']}  {target.name}\n".encode())


def fetch_remote(
    remote: RemoteFile,
    data_dir: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
    *,
    timeout: float | None = None,
    offline: bool | None = None,
) -> Path:
    """Return a verified local path for ``remote`` (see :func:`fetch`)."""
    root = resolve_data_dir(data_dir)
    target = root / remote.relpath
    if target.exists():
        h = file_hashes(target)
        side = target.with_name(target.name + ".sha256")
        known = side.is_file() and side.read_text().split()[:1] == [h["sha256"]]
        # layout checked once
        verify_file(remote, target, h, check_layout=not known, fix=f"delete {target} to fetch it again")
        if not known:
            _record_sha256(remote, target, h)
        return target
    made_parent = not target.parent.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _acquire(remote, target, root, mirror, timeout, offline)
    except BaseException:
        if made_parent:
            try:
                target.parent.rmdir()  # only if still empty
            except OSError:
                pass
        raise


def _acquire(
    remote: RemoteFile,
    target: Path,
    root: Path,
    mirror: str | os.PathLike | None,
    timeout: float | None,
    offline: bool | None,
) -> Path:
    tried: list[str] = []
    mroot = resolve_mirror(mirror)
    if mroot is not None:
        src = mroot / remote.relpath
        if src.is_file():
            h = _copy_verified(remote, src, target)
            _record_sha256(remote, target, h)
            return target
        if not mroot.exists():
            tried.append(f"the mirror directory {mroot} does not exist")
        elif not mroot.is_dir():
            tried.append(f"the mirror {mroot} is not a directory")
        else:
            tried.append(f"not in mirror {mroot} (no {src})")
    if offline is None:
        offline = os.environ.get(ENV_OFFLINE, "").strip() not in ("", "0")
    if offline:
        tried.append(f"download disabled ({ENV_OFFLINE})")
        raise DataUnavailable(f"{remote.name}: unavailable ({'; '.join(tried)}); url {remote.url}")
    if timeout is None:
        timeout = float(os.environ.get(ENV_TIMEOUT, DEFAULT_TIMEOUT))
    try:
        h = _download_verified(remote, remote.url, target, timeout)
    except DataUnavailable as exc:
        msg = (f"{exc}; " + "; ".join(tried)) if tried else str(exc)
        raise DataUnavailable(
            f"{msg}. Put {remote.relpath} into the data dir {root} or a mirror ({ENV_MIRROR})."
        ) from exc
    _record_sha256(remote, target, h)
    return target


def fetch(
    name: str,
    data_dir: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
    *,
    timeout: float | None = None,
    offline: bool | None = None,
) -> Path:
    """Verified local path of registry file ``name`` (e.g. ``"mnist-train-images"``).

    Order: existing copy in the data dir (verified; a mismatch raises ValueError, delete it to
    re-fetch), then the mirror (``mirror`` or env ``MCMC_BENCH_MIRROR``), then the canonical URL
    via pooch (``timeout`` seconds, env ``MCMC_BENCH_TIMEOUT``; skipped when ``offline`` or env
    ``MCMC_BENCH_OFFLINE=1``). Raises ValueError on checksum/layout mismatch and
    :class:`DataUnavailable` when no source works.
    """
    if name not in REGISTRY:
        raise ValueError(f"unknown data file {name!r}; known: {sorted(REGISTRY)}")
    return fetch_remote(REGISTRY[name], data_dir, mirror, timeout=timeout, offline=offline)
