"""Numba MCMC kernels and targets (no I/O, no plotting).

Layout: ``targets/`` (models as data + @njit functions), ``kernels/`` (compiled chain loops with
explicit state), ``proposals.py`` (shared proposal densities), ``alias.py`` + ``poisson_minibatch.py``
(shared minibatch machinery), ``methods/`` (one registration module per family) and
``registry.py`` (the single list of methods and targets).
"""

import hashlib as _hashlib
import os as _os
from pathlib import Path as _Path


def _numba_cache_dir() -> str:
    """Numba's cache does not notice edits in *other* files a kernel inlines (Numba docs, "Notes on
    caching"), so the cache directory is keyed by a hash of the project's numerical sources."""
    root = _Path(__file__).resolve().parent.parent
    h = _hashlib.sha256()
    for pkg in ("samplers", "verify"):
        for f in sorted((root / pkg).rglob("*.py")):
            h.update(f.relative_to(root).as_posix().encode())
            h.update(f.read_bytes())
    base = _os.environ.get("MCMC_BENCH_NUMBA_CACHE")
    if not base:
        base = str(root / ".numba_cache")
        if not _os.access(root, _os.W_OK):
            base = str(_Path.home() / ".cache" / "minibatch-mcmc-bench" / "numba")
    return str(_Path(base) / h.hexdigest()[:16])


if "NUMBA_CACHE_DIR" not in _os.environ:
    _os.environ["NUMBA_CACHE_DIR"] = _numba_cache_dir()
