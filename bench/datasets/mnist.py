"""MNIST: IDX parsing, digit-pair logistic-regression sets with PCA, and the 1-vs-7 sets.

* :func:`digit_pair` is the recipe of Yuan & Wang 2024 App. F (also Korattikara et al. 2014 §6.1 for
  7v9): the two digits from the official train/test splits, pixels / 255,
  PCA fitted on the training split only (centred by the train mean, no whitening), no
  intercept; label 1 for the second digit. 3v5 gives 11,552 / 1,902 and 7v9 12,214 / 2,037 rows.
* :func:`mnist_1v7` is Seita et al. 2017 §6.2 (MNIST-13k / MNIST-100k): raw pixels / 255 (784 features,
  no bias), test = all 1s and 7s of the test split (2,163). Infinite MNIST (Loosli et al. 2007)
  is not available offline, so the "100k" set is the 13,007 original training 1s and 7s plus
  synthetic copies made by :func:`augment_digits` (documented random affine maps with a fixed
  seed; see there).

Preprocessed arrays are cached as .npz (atomic write) keyed by a hash of the recipe, which
includes the sha256 of the source files.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from ._cache import cache_path, load_cached, save_cached
from .fetch import REGISTRY, fetch

__all__ = [
    "AUGMENT_MAX_ROTATION_DEG",
    "AUGMENT_MAX_SHIFT_PX",
    "AUGMENT_SCALE_RANGE",
    "augment_digits",
    "digit_pair",
    "load_mnist",
    "mnist_1v7",
    "parse_idx",
    "pca_fit",
    "read_idx",
]

_IDX_DTYPES = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
MAGIC_IMAGES = 2051  # 0x00000803: ubyte, 3 dims
MAGIC_LABELS = 2049  # 0x00000801: ubyte, 1 dim
_CACHE_VERSION = 1
# The PCA's BLAS products and eigh run on one BLAS thread: OpenBLAS splits a product differently for
# 1 and 2 threads, which changes the features in the last bits (the sha of X_train differs between
# OPENBLAS_NUM_THREADS=1 and 2), and with them the gradient-driven MNIST chains (Tuna-SGLD, MALA, HMC)
# at rounding level. Recorded in the cache recipe, so a cache built with another setting is rebuilt.
ONE_BLAS_THREAD = 1

# Augmentation used for the MNIST-100k substitute (mnist_1v7(augmented_to=...)).
AUGMENT_MAX_ROTATION_DEG = 10.0
AUGMENT_MAX_SHIFT_PX = 2.0
AUGMENT_SCALE_RANGE = (0.9, 1.1)
AUGMENT_SEED = 20170804


def parse_idx(data: bytes, name: str = "<bytes>") -> np.ndarray:
    """Parse an (uncompressed) IDX file; validate magic, dims and exact payload size."""
    if len(data) < 4:
        raise ValueError(f"{name}: IDX file too short for a header ({len(data)} bytes)")
    if data[0] != 0 or data[1] != 0:
        raise ValueError(f"{name}: bad IDX magic {data[:4].hex()} (first two bytes must be 0)")
    code, ndim = data[2], data[3]
    if code not in _IDX_DTYPES:
        raise ValueError(f"{name}: unknown IDX type code 0x{code:02x}")
    if ndim < 1:
        raise ValueError(f"{name}: IDX header has 0 dimensions")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(f"{name}: truncated IDX header ({len(data)} < {header} bytes)")
    dims = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    dtype = _IDX_DTYPES[code]
    need = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    have = len(data) - header
    if have < need:
        raise ValueError(f"{name}: truncated IDX payload: dims {dims} need {need} bytes, file has {have}")
    if have > need:
        raise ValueError(f"{name}: {have - need} trailing bytes after IDX payload (dims {dims})")
    arr = np.frombuffer(data, dtype=dtype, count=need // dtype.itemsize, offset=header)
    return arr.reshape(dims).astype(dtype.newbyteorder("="), copy=True)


def read_idx(path: str | os.PathLike, magic: int | None = None) -> np.ndarray:
    """Read an IDX file (gzip-compressed if it starts with 1f 8b); optionally check the magic."""
    path = Path(path)
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise ValueError(f"{path}: corrupt or truncated gzip stream ({exc})") from exc
    if magic is not None and int.from_bytes(raw[:4], "big") != magic:
        raise ValueError(f"{path}: IDX magic {int.from_bytes(raw[:4], 'big')} != expected {magic}")
    return parse_idx(raw, str(path))


def load_mnist(
    data_dir: str | os.PathLike | None = None, mirror: str | os.PathLike | None = None
) -> dict[str, np.ndarray]:
    """The four MNIST arrays: X_train (60000, 28, 28) uint8, y_train, X_test, y_test (uint8)."""
    out = {}
    for split, (img, lab) in {
        "train": ("mnist-train-images", "mnist-train-labels"),
        "test": ("mnist-test-images", "mnist-test-labels"),
    }.items():
        X = read_idx(fetch(img, data_dir, mirror), MAGIC_IMAGES)
        y = read_idx(fetch(lab, data_dir, mirror), MAGIC_LABELS)
        if X.ndim != 3 or X.shape[1:] != (28, 28):
            raise ValueError(f"MNIST {split} images have shape {X.shape}, expected (n, 28, 28)")
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"MNIST {split}: {y.shape} labels for {X.shape[0]} images")
        if y.size and y.max() > 9:
            raise ValueError(f"MNIST {split}: label {y.max()} outside 0..9")
        out[f"X_{split}"], out[f"y_{split}"] = X, y
    return out


def _source_hashes() -> dict[str, str | None]:
    return {n: REGISTRY[n].sha256 for n in REGISTRY if n.startswith("mnist-")}


def pca_fit(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PCA of ``X`` (rows = samples): (components (k, d) orthonormal rows, mean, variances).

    Eigendecomposition of the sample covariance of the centred data (same subspace as an SVD of
    the centred data, ~10x faster for MNIST's 784 columns). Sign convention: each component's
    largest-magnitude entry is positive.
    """
    n, d = X.shape
    if not 1 <= k <= min(n - 1, d):
        raise ValueError(f"pca={k} must be in 1..{min(n - 1, d)}")
    mean = X.mean(axis=0)
    Xc = X - mean
    with threadpool_limits(limits=1, user_api="blas"):  # bit-reproducible: see ONE_BLAS_THREAD
        cov = (Xc.T @ Xc) / (n - 1)
        w, v = np.linalg.eigh(cov)
    order = np.argsort(w)[::-1][:k]
    comps = v[:, order].T.copy()
    signs = np.sign(comps[np.arange(k), np.abs(comps).argmax(axis=1)])
    comps *= signs[:, None]
    return comps, mean, w[order]


def digit_pair(
    a: int,
    b: int,
    pca: int | None = 50,
    *,
    data_dir: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
) -> dict[str, np.ndarray]:
    """Binary MNIST task ``a`` vs ``b`` (label 1 = digit ``b``), PCA on the train split only.

    Returns X_train, y_train, X_test, y_test (float64 features, int64 labels in {0, 1}, MNIST
    order), idx_train / idx_test (row indices into the MNIST splits) and, when ``pca`` is set,
    components (pca, 784), mean (784,), explained_variance (pca,). ``pca=None`` keeps the raw
    784 scaled pixels.
    """
    if a == b or not (0 <= a <= 9 and 0 <= b <= 9):
        raise ValueError(f"need two different digits in 0..9, got {a}, {b}")
    recipe = {
        "kind": "digit_pair",
        "version": _CACHE_VERSION,
        "digits": [int(a), int(b)],
        "pca": None if pca is None else int(pca),
        "scale": 255,
        "pca_fit": "train-only, centred, covariance eigh, no whitening, no intercept",
        "blas_threads": ONE_BLAS_THREAD,
        "sources": _source_hashes(),
    }
    path = cache_path(f"mnist_{a}v{b}_pca{pca}", recipe, cache_dir)
    if use_cache and (hit := load_cached(path, recipe)) is not None:
        return hit
    m = load_mnist(data_dir, mirror)
    out: dict[str, np.ndarray] = {}
    raw = {}
    for split in ("train", "test"):
        y = m[f"y_{split}"]
        idx = np.flatnonzero((y == a) | (y == b))
        raw[split] = m[f"X_{split}"][idx].reshape(len(idx), -1).astype(np.float64) / 255.0
        out[f"y_{split}"] = (y[idx] == b).astype(np.int64)
        out[f"idx_{split}"] = idx.astype(np.int64)
    if pca is None:
        out["X_train"], out["X_test"] = raw["train"], raw["test"]
    else:
        comps, mean, var = pca_fit(raw["train"], int(pca))
        with threadpool_limits(limits=1, user_api="blas"):
            out["X_train"] = (raw["train"] - mean) @ comps.T
            out["X_test"] = (raw["test"] - mean) @ comps.T
        out.update(components=comps, mean=mean, explained_variance=var)
    if use_cache:
        save_cached(path, out, recipe)
    return out


def augment_digits(
    images: np.ndarray, n_out: int, rng: np.random.Generator, chunk: int = 4096
) -> tuple[np.ndarray, np.ndarray]:
    """Random affine copies of ``images`` (n, 28, 28) uint8: returns (copies, source index).

    Each copy picks a source uniformly with replacement, then applies, about the image centre
    (13.5, 13.5), a rotation ~ U(+-AUGMENT_MAX_ROTATION_DEG), an isotropic scale
    ~ U(AUGMENT_SCALE_RANGE) and a translation ~ U(+-AUGMENT_MAX_SHIFT_PX) px per axis, with
    bilinear interpolation (zero outside), rounded to uint8. This stands in for the
    deformations of infinite MNIST (Loosli et al. 2007), which cannot be obtained offline.
    """
    from scipy.ndimage import map_coordinates

    images = np.asarray(images)
    if images.ndim != 3 or images.dtype != np.uint8 or len(images) == 0:
        raise ValueError(f"images must be a non-empty (n, h, w) uint8 stack, got {images.shape}")
    if n_out < 0:
        raise ValueError(f"n_out must be >= 0, got {n_out}")
    n, h, w = images.shape
    src = rng.integers(0, n, size=n_out)
    theta = np.deg2rad(rng.uniform(-AUGMENT_MAX_ROTATION_DEG, AUGMENT_MAX_ROTATION_DEG, n_out))
    scale = rng.uniform(*AUGMENT_SCALE_RANGE, size=n_out)
    shift = rng.uniform(-AUGMENT_MAX_SHIFT_PX, AUGMENT_MAX_SHIFT_PX, size=(n_out, 2))
    out = np.empty((n_out, h, w), dtype=np.uint8)
    cr, cc = (h - 1) / 2.0, (w - 1) / 2.0
    rr, ccol = np.meshgrid(np.arange(h) - cr, np.arange(w) - cc, indexing="ij")
    for lo in range(0, n_out, chunk):
        hi = min(lo + chunk, n_out)
        k = hi - lo
        cos = (np.cos(theta[lo:hi]) / scale[lo:hi])[:, None, None]
        sin = (np.sin(theta[lo:hi]) / scale[lo:hi])[:, None, None]
        dr = rr[None] - shift[lo:hi, 0, None, None]
        dc = ccol[None] - shift[lo:hi, 1, None, None]
        coords = np.empty((3, k, h, w))
        coords[0] = np.arange(k)[:, None, None]
        coords[1] = cos * dr + sin * dc + cr  # inverse map: R(-theta) / scale
        coords[2] = -sin * dr + cos * dc + cc
        stack = images[src[lo:hi]].astype(np.float32)
        vals = map_coordinates(stack, coords, order=1, mode="constant", cval=0.0)
        out[lo:hi] = np.clip(np.rint(vals), 0, 255).astype(np.uint8)
    return out, src


def mnist_1v7(
    augmented_to: int | None = None,
    *,
    n_train: int | None = None,
    seed: int = AUGMENT_SEED,
    dtype: type = np.float64,
    data_dir: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
) -> dict[str, np.ndarray]:
    """Seita et al. 2017 §6.2 1-vs-7 logistic-regression data (MNIST-13k, or MNIST-100k substitute).

    Train = all 13,007 training-split 1s and 7s in MNIST order (the paper rounds to "13,000";
    ``n_train=13000`` keeps the first 13,000, as the authors' code's N), then, if
    ``augmented_to`` is set, synthetic copies of those rows from :func:`augment_digits` with
    ``seed`` appended until there are ``augmented_to`` rows (100,000 for MNIST-100k). Test = the
    2,163 test-split 1s and 7s. Features: raw pixels / 255 (784, no bias) as ``dtype``.
    Labels: y_* in {0, 1} (1 = digit 7) and y_*_pm in {-1, +1}. Also returns ``augmented``
    (bool mask) and ``source`` (index into MNIST train of the original image of each row).
    """
    recipe = {
        "kind": "mnist_1v7",
        "version": _CACHE_VERSION,
        "n_train": None if n_train is None else int(n_train),
        "augmented_to": None if augmented_to is None else int(augmented_to),
        "seed": int(seed),
        "augment": [AUGMENT_MAX_ROTATION_DEG, AUGMENT_MAX_SHIFT_PX, list(AUGMENT_SCALE_RANGE)],
        "sources": _source_hashes(),
    }
    path = cache_path(f"mnist_1v7_{augmented_to or 'base'}", recipe, cache_dir)
    store = load_cached(path, recipe) if use_cache else None
    if store is None:
        m = load_mnist(data_dir, mirror)
        store = {}
        idx = np.flatnonzero((m["y_train"] == 1) | (m["y_train"] == 7))
        if n_train is not None:
            if not 1 <= n_train <= len(idx):
                raise ValueError(f"n_train must be in 1..{len(idx)}, got {n_train}")
            idx = idx[:n_train]
        images, source = m["X_train"][idx], idx
        augmented = np.zeros(len(idx), dtype=bool)
        if augmented_to is not None:
            if augmented_to < len(idx):
                raise ValueError(f"augmented_to={augmented_to} < {len(idx)} original rows")
            rng = np.random.default_rng(seed)
            extra, src = augment_digits(images, augmented_to - len(idx), rng)
            images = np.concatenate([images, extra])
            source = np.concatenate([idx, idx[src]])
            augmented = np.concatenate([augmented, np.ones(len(extra), dtype=bool)])
        tidx = np.flatnonzero((m["y_test"] == 1) | (m["y_test"] == 7))
        store = {
            "images_train": images,
            "labels_train": m["y_train"][source],
            "images_test": m["X_test"][tidx],
            "labels_test": m["y_test"][tidx],
            "source": source.astype(np.int64),
            "augmented": augmented,
        }
        if use_cache:
            save_cached(path, store, recipe, compressed=True)
    out: dict[str, np.ndarray] = {"source": store["source"], "augmented": store["augmented"]}
    for split in ("train", "test"):
        img = store[f"images_{split}"]
        out[f"X_{split}"] = img.reshape(len(img), -1).astype(dtype) / dtype(255.0)
        y = (store[f"labels_{split}"] == 7).astype(np.int64)
        out[f"y_{split}"] = y
        out[f"y_{split}_pm"] = 2 * y - 1
    return out
