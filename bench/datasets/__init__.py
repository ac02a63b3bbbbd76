"""Data layer: verified fetching, parsers and preprocessing recipes for the benchmark's data sets.

Public API
----------
* :func:`fetch` (name -> verified local path), :data:`REGISTRY`, :class:`RemoteFile`,
  :func:`fetch_remote`, :class:`DataUnavailable` (RuntimeError subclass: the file cannot be
  obtained; experiments write "data unavailable" cells).
* MNIST: :func:`load_mnist`, :func:`digit_pair` (3v5 / 7v9 with train-only PCA 50; Yuan & Wang
  2024 App. F), :func:`mnist_1v7` (Seita et al. 2017 §6.2 MNIST-13k / augmented MNIST-100k substitute),
  :func:`read_idx` / :func:`parse_idx`, :func:`augment_digits`, :func:`pca_fit`.
* MiniBooNE (Korattikara et al. 2014 §6.3): :func:`load_miniboone`, :func:`parse_miniboone`,
  :func:`format_miniboone`.
* Images (Chen et al. 2016 §4.3): :func:`letter_a`, :func:`parse_bmp8`, :func:`read_bmp8_grey`.
* Corpora (Chen et al. 2016 §4.4): :func:`conll2000`, :func:`conll2002`, :func:`ieer`,
  :func:`parse_conll`.

Environment variables
---------------------
``MCMC_BENCH_DATA``
    raw-data dir (default ``<repo>/data/raw``); files keep the mirror layout
    (``mnist/...``, ``images/...``, ``nltk/...``, ``miniboone/MiniBooNE_PID.txt``).
``MCMC_BENCH_MIRROR``
    a local directory laid out like the raw-data dir (the dataset mirror, ``data/README.md``);
    files are copied from it (and verified) before any download is tried.
``MCMC_BENCH_CACHE``
    preprocessed .npz cache dir (default ``<repo>/data/cache``).
``MCMC_BENCH_OFFLINE``
    ``1`` = never try the network (missing files raise DataUnavailable at once).
``MCMC_BENCH_TIMEOUT``
    download connect/read timeout in seconds (default 10).
"""

from .corpora import conll2000, conll2002, ieer, parse_conll
from .fetch import (
    REGISTRY,
    DataUnavailable,
    RemoteFile,
    fetch,
    fetch_remote,
    file_hashes,
    git_blob_id,
    resolve_cache_dir,
    resolve_data_dir,
    resolve_mirror,
    verify_file,
)
from .images import letter_a, parse_bmp8, read_bmp8_grey
from .miniboone import format_miniboone, load_miniboone, parse_miniboone
from .mnist import augment_digits, digit_pair, load_mnist, mnist_1v7, parse_idx, pca_fit, read_idx

__all__ = [
    "REGISTRY",
    "DataUnavailable",
    "RemoteFile",
    "augment_digits",
    "conll2000",
    "conll2002",
    "digit_pair",
    "fetch",
    "fetch_remote",
    "file_hashes",
    "format_miniboone",
    "git_blob_id",
    "ieer",
    "letter_a",
    "load_miniboone",
    "load_mnist",
    "mnist_1v7",
    "parse_bmp8",
    "parse_conll",
    "parse_idx",
    "parse_miniboone",
    "pca_fit",
    "read_bmp8_grey",
    "read_idx",
    "resolve_cache_dir",
    "resolve_data_dir",
    "resolve_mirror",
    "verify_file",
]
