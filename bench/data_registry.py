"""Named datasets used by targets and experiments -> :mod:`bench.datasets` loaders.

``load_named(name)`` is what ``ctx.data(name)`` in a cell and ``mcmc-bench run --data`` call. Each
entry also lists the raw files (``bench.datasets.REGISTRY`` names) it needs, which the workflow's
``download`` rule fetches one by one. Loaders raise :class:`bench.datasets.DataUnavailable` when a
file cannot be obtained (no mirror copy, no network); callers turn that into a
"data unavailable" cell, never a crash.

Returned objects:

* ``mnist_3v5``, ``mnist_7v9`` (Yuan & Wang 2024 §5.3, Korattikara et al. 2014 §6.1): dict ``X_train,
  y_train, X_test, y_test`` (50 PCA components fitted on the train split, labels in {0, 1}) + PCA arrays.
* ``mnist_1v7`` (MNIST-13k) and ``mnist_1v7_100k`` (augmented substitute), Seita et al. 2017 §6.2: dict
  ``X_train, y_train, y_train_pm, X_test, y_test, y_test_pm, source, augmented`` (784 raw
  pixels / 255).
* ``miniboone`` (Korattikara et al. 2014 §6.3): dict ``X_train, y_train, X_test, y_test`` (80/20 split,
  standardised, constant feature appended) + split indices.
* ``letterA`` (Chen et al. 2016 §4.3): (128, 128) int8 image in {-1, +1}.
* ``conll2000`` (Chen et al. 2016 §4.4): dict ``{"train", "test"}`` -> list of sentences of
  (word, pos, chunk).
* ``conll2002``: dict ``{"esp.train", "esp.testa", ... "ned.testb"}`` -> list of sentences
  (word, pos, ner).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench import datasets as D

_MNIST_FILES = (
    "mnist-train-images",
    "mnist-train-labels",
    "mnist-test-images",
    "mnist-test-labels",
)


@dataclass(frozen=True)
class NamedDataset:
    """``load(data_dir, mirror)`` returns the preprocessed object; ``files`` = raw-file names."""

    name: str
    files: tuple[str, ...]
    load: Callable[[Any, Any], Any]
    description: str


def _conll2000(data_dir, mirror) -> dict[str, list]:
    return {s: D.conll2000(s, data_dir=data_dir, mirror=mirror) for s in ("train", "test")}


def _conll2002(data_dir, mirror) -> dict[str, list]:
    out = {}
    for fname in D.corpora.CONLL2002_FILES:
        lang, split = fname.split(".")
        out[fname] = D.conll2002(lang, split, data_dir=data_dir, mirror=mirror)
    return out


DATASETS: dict[str, NamedDataset] = {
    d.name: d
    for d in [
        NamedDataset(
            "mnist_3v5",
            _MNIST_FILES,
            lambda dd, m: D.digit_pair(3, 5, 50, data_dir=dd, mirror=m),
            "MNIST 3 vs 5, pixels/255, PCA 50 on train (Yuan & Wang 2024 §5.3)",
        ),
        NamedDataset(
            "mnist_7v9",
            _MNIST_FILES,
            lambda dd, m: D.digit_pair(7, 9, 50, data_dir=dd, mirror=m),
            "MNIST 7 vs 9, pixels/255, PCA 50 on train (Yuan & Wang 2024 §5.3, K14 §6.1)",
        ),
        NamedDataset(
            "mnist_1v7",
            _MNIST_FILES,
            lambda dd, m: D.mnist_1v7(None, data_dir=dd, mirror=m),
            "MNIST-13k 1 vs 7, raw pixels/255 (Seita et al. 2017 §6.2)",
        ),
        NamedDataset(
            "mnist_1v7_100k",
            _MNIST_FILES,
            lambda dd, m: D.mnist_1v7(100_000, data_dir=dd, mirror=m),
            "MNIST-100k 1 vs 7 (augmented substitute for infinite MNIST; Seita et al. 2017 §6.2)",
        ),
        NamedDataset(
            "miniboone",
            ("miniboone",),
            lambda dd, m: D.load_miniboone(data_dir=dd, mirror=m),
            "MiniBooNE PID, 80/20 split, standardised + constant (K14 §6.3)",
        ),
        NamedDataset(
            "letterA",
            ("letterA",),
            lambda dd, m: D.letter_a(True, data_dir=dd, mirror=m),
            "128x128 binary letter-A image (Chen et al. 2016 §4.3)",
        ),
        NamedDataset(
            "conll2000",
            ("conll2000",),
            _conll2000,
            "CoNLL-2000 chunking corpus, train/test (Chen et al. 2016 §4.4)",
        ),
        NamedDataset(
            "conll2002",
            ("conll2002",),
            _conll2002,
            "CoNLL-2002 NER corpus, esp/ned (Chen et al. 2016 §4.4)",
        ),
    ]
}


def get_dataset(name: str) -> NamedDataset:
    """Registry entry of ``name``; unknown -> ValueError listing the known names."""
    try:
        return DATASETS[name]
    except KeyError:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(sorted(DATASETS))}") from None


def raw_files(name: str) -> tuple[str, ...]:
    """Raw-file names (``bench.datasets.REGISTRY`` keys) that dataset ``name`` needs."""
    return get_dataset(name).files


def load_named(
    name: str,
    *,
    data_dir: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
) -> Any:
    """Load (fetch + preprocess, cached as .npz by the loaders) dataset ``name``.

    ``mirror`` defaults to env ``MCMC_BENCH_MIRROR``; ``data_dir`` to env ``MCMC_BENCH_DATA``
    (``<repo>/data/raw``). Raises ValueError for an unknown name and
    :class:`bench.datasets.DataUnavailable` when a file cannot be obtained.
    """
    return get_dataset(name).load(data_dir, mirror)
