"""Bias metrics against a reference: running MSE of mean and variance, per-coordinate KS, marginal L2
errors of discrete chains, symmetric KL, total variation, L1."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from bench.metrics._validate import _checkpoints, _draws_2d, _finite_array, _prob_array


# ----------------------------------------------------------------------------------------------
# MSE vs reference (running mean / running variance)
# ----------------------------------------------------------------------------------------------
def mse(est, ref) -> float | np.ndarray:
    """Mean squared error over the last axis: ``mean((est - ref)**2, axis=-1)``.

    ``ref`` broadcasts against ``est`` (e.g. est (k, d), ref (d,) -> array (k,)).
    """
    e = _finite_array(est, "est")
    r = _finite_array(ref, "ref")
    if e.ndim == 0 or e.shape[-1] == 0:
        raise ValueError("est must have at least one coordinate")
    try:
        diff = e - r
    except ValueError:
        raise ValueError(f"est shape {e.shape} and ref shape {r.shape} do not broadcast") from None
    if diff.shape != e.shape:
        raise ValueError(f"ref shape {r.shape} must broadcast to est shape {e.shape}")
    out = np.mean(diff**2, axis=-1)
    return float(out) if out.ndim == 0 else out


class RunningMSE(NamedTuple):
    """Output of ``mse_running``: ``checkpoints[i]`` draws were used for entry i."""

    checkpoints: np.ndarray
    mse_mean: np.ndarray
    mse_var: np.ndarray | None


@njit(cache=True)
def _running_mse_kernel(x, ref_mean, ref_var, checkpoints, ddof, do_var):
    n, d = x.shape
    k = checkpoints.shape[0]
    out_m = np.empty(k)
    out_v = np.empty(k)
    mean = np.zeros(d)
    m2 = np.zeros(d)
    c = 0
    for t in range(n):
        cnt = t + 1.0
        for j in range(d):
            delta = x[t, j] - mean[j]
            mean[j] += delta / cnt
            m2[j] += delta * (x[t, j] - mean[j])
        if c < k and checkpoints[c] == t + 1:
            sm = 0.0
            sv = 0.0
            for j in range(d):
                sm += (mean[j] - ref_mean[j]) ** 2
                if do_var:
                    sv += (m2[j] / (cnt - ddof) - ref_var[j]) ** 2
            out_m[c] = sm / d
            out_v[c] = sv / d
            c += 1
            if c == k:
                break
    return out_m, out_v


def mse_running(samples, ref_mean, ref_var=None, checkpoints=None, ddof: int = 1) -> RunningMSE:
    """Squared error of the running mean (and running diagonal variance) vs a reference.

    The Yuan & Wang 2024 code's TG protocol: at each checkpoint t, the mean of
    draws 1..t vs ``ref_mean`` and their variance (``ddof``, default 1 as Julia ``var``) vs
    ``ref_var``, squared errors averaged over coordinates; no burn-in (slice beforehand).

    Parameters
    ----------
    samples : (n,) or (n, d); ref_mean, ref_var : (d,) (or scalars for d = 1)
    checkpoints : increasing ints in [1, n] (numbers of draws); default every t
        (from ``ddof + 1`` when ``ref_var`` is given).
    """
    x, _ = _draws_2d(samples, "samples", 1)
    n, d = x.shape
    if np.ndim(ref_mean) > 1 or (np.ndim(ref_mean) == 1 and np.shape(ref_mean)[0] != d):
        raise ValueError(f"ref_mean must have shape ({d},); got {np.shape(ref_mean)}")
    rm = np.broadcast_to(_finite_array(ref_mean, "ref_mean"), (d,)).copy()
    if not isinstance(ddof, int | np.integer) or ddof < 0:
        raise ValueError(f"ddof must be a non-negative integer; got {ddof!r}")
    do_var = ref_var is not None
    if do_var:
        if np.ndim(ref_var) > 1 or (np.ndim(ref_var) == 1 and np.shape(ref_var)[0] != d):
            raise ValueError(f"ref_var must have shape ({d},); got {np.shape(ref_var)}")
        rv = np.broadcast_to(_finite_array(ref_var, "ref_var"), (d,)).copy()
        if np.any(rv < 0):
            raise ValueError("ref_var must be non-negative")
    else:
        rv = np.zeros(d)
    cp = _checkpoints(checkpoints, n, start=(ddof + 1) if do_var else 1)
    out_m, out_v = _running_mse_kernel(x, rm, rv, cp, float(ddof), do_var)
    return RunningMSE(cp, out_m, out_v if do_var else None)


# ----------------------------------------------------------------------------------------------
# Kolmogorov-Smirnov
# ----------------------------------------------------------------------------------------------
def _ks_d(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample KS statistic sup |F_a - F_b| (same definition as scipy.stats.ks_2samp)."""
    a = np.sort(a)
    b = np.sort(b)
    allv = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, allv, side="right") / a.size
    cdf_b = np.searchsorted(b, allv, side="right") / b.size
    return float(np.max(np.abs(cdf_a - cdf_b)))


def ks_2samp_per_dim(samples, reference, rng: np.random.Generator | None = None) -> np.ndarray:
    """Two-sample KS statistic D per coordinate (Yuan & Wang 2024 Table 3 protocol).

    If ``rng`` is given and the sizes differ, the larger set is subsampled *without replacement*
    (whole rows, one subsample for all coordinates) to the size of the smaller, as the authors'
    eval script does. Without ``rng`` all draws are used.

    Returns array (d,) of D in [0, 1]; summarise with ``min_median_max``.
    """
    a, _ = _draws_2d(samples, "samples", 1)
    b, _ = _draws_2d(reference, "reference", 1)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"dimension mismatch: samples d={a.shape[1]}, reference d={b.shape[1]}")
    if rng is not None:
        if not isinstance(rng, np.random.Generator):
            raise ValueError("rng must be a numpy.random.Generator or None")
        na, nb = a.shape[0], b.shape[0]
        if na > nb:
            a = a[np.sort(rng.choice(na, size=nb, replace=False))]
        elif nb > na:
            b = b[np.sort(rng.choice(nb, size=na, replace=False))]
    return np.array([_ks_d(a[:, j], b[:, j]) for j in range(a.shape[1])])


# ----------------------------------------------------------------------------------------------
# Discrete chains: marginal L2 error
# ----------------------------------------------------------------------------------------------
@njit(cache=True)
def marginal_l2_from_counts(counts, p_true):
    """Mean over variables j of ``|| counts[j] / counts[j].sum() - p_true[j] ||_2``.

    Numba-compiled, so a Gibbs sampler can call it inside its own njit loop at checkpoints.

    Inputs (float64, C-contiguous): ``counts`` (V, card) -- running marginal counts maintained
    by the sampler, ``counts[j, x_j] += 1`` after every iteration (or Rao-Blackwellised
    conditional probabilities added instead; each row is normalised by its own sum, so both
    work); ``p_true`` (V, card) -- true marginals. No validation here: use
    ``marginal_l2_error(..., counts=True)`` from Python for checked inputs.
    """
    v, card = counts.shape
    total = 0.0
    for j in range(v):
        s = 0.0
        for c in range(card):
            s += counts[j, c]
        acc = 0.0
        for c in range(card):
            diff = counts[j, c] / s - p_true[j, c]
            acc += diff * diff
        total += np.sqrt(acc)
    return total / v


def _p_true_matrix(p_true, v: int, card: int) -> np.ndarray:
    if p_true is None:
        return np.full((v, card), 1.0 / card)
    p = _prob_array(p_true, "p_true")
    if p.shape == (card,):
        p = np.broadcast_to(p, (v, card))
    if p.shape != (v, card):
        raise ValueError(f"p_true must have shape ({card},) or ({v}, {card}); got {p.shape}")
    return np.ascontiguousarray(p, dtype=float)


def _check_card(card) -> int:
    if not isinstance(card, int | np.integer) or card < 2:
        raise ValueError(f"card must be an integer >= 2; got {card!r}")
    return int(card)


def _discrete_samples(samples, card: int) -> np.ndarray:
    s = np.asarray(samples)
    if s.ndim == 1:
        s = s[:, None]
    if s.ndim != 2 or s.shape[0] == 0 or s.shape[1] == 0:
        raise ValueError(f"samples must have shape (n, V) with n, V >= 1; got {np.shape(samples)}")
    if not np.issubdtype(s.dtype, np.integer):
        s = _finite_array(s, "samples")
        if np.any(s != np.round(s)):
            raise ValueError("samples must be integer states")
    s = s.astype(np.int64)
    if s.min() < 0 or s.max() >= card:
        raise ValueError(f"samples must lie in [0, {card - 1}]; got [{s.min()}, {s.max()}]")
    return np.ascontiguousarray(s)


def marginal_l2_error(counts_or_samples, card: int, p_true=None, *, counts: bool = False) -> float:
    """Mean over variables of ``|| p_hat_j - p_true_j ||_2`` (Poisson-Gibbs Potts metric).

    Parameters
    ----------
    counts_or_samples :
        ``counts=False`` (default): integer states, shape (n, V) (or (n,) for V = 1), values in
        ``[0, card)``; p_hat_j = empirical frequencies over all n draws (no burn-in).
        ``counts=True``: marginal counts (V, card), non-negative (floats allowed, e.g.
        Rao-Blackwellised); each row normalised by its sum.
    card : int >= 2
        Number of states per variable (same for all variables).
    p_true : None (uniform 1/card), (card,) or (V, card)
    """
    card = _check_card(card)
    if counts:
        c = _finite_array(counts_or_samples, "counts")
        if c.ndim == 1:
            c = c[None, :]
        if c.ndim != 2 or c.shape[1] != card:
            raise ValueError(f"counts must have shape (V, {card}); got {np.shape(counts_or_samples)}")
        if np.any(c < 0) or np.any(c.sum(axis=1) <= 0):
            raise ValueError("counts must be non-negative with a positive sum in every row")
    else:
        s = _discrete_samples(counts_or_samples, card)
        v = s.shape[1]
        offs = s + card * np.arange(v)[None, :]
        c = np.bincount(offs.ravel(), minlength=v * card).reshape(v, card).astype(float)
    p = _p_true_matrix(p_true, c.shape[0], card)
    return float(marginal_l2_from_counts(np.ascontiguousarray(c, dtype=float), p))


@njit(cache=True)
def _marginal_running_kernel(s, card, p_true, checkpoints):
    n, v = s.shape
    counts = np.zeros((v, card))
    out = np.empty(checkpoints.shape[0])
    c = 0
    for t in range(n):
        for j in range(v):
            counts[j, s[t, j]] += 1.0
        if checkpoints[c] == t + 1:
            out[c] = marginal_l2_from_counts(counts, p_true)
            c += 1
            if c == checkpoints.shape[0]:
                break
    return out


def marginal_l2_error_running(
    samples, card: int, p_true=None, checkpoints=None
) -> tuple[np.ndarray, np.ndarray]:
    """Running ``marginal_l2_error`` of draws 1..t for each checkpoint t.

    ``samples``: integer states (n, V); ``checkpoints``: increasing draw counts in [1, n]
    (default every t). Returns ``(checkpoints, errors)``. Samplers that keep their own running
    counts instead call ``marginal_l2_from_counts`` directly.
    """
    card = _check_card(card)
    s = _discrete_samples(samples, card)
    p = _p_true_matrix(p_true, s.shape[1], card)
    cp = _checkpoints(checkpoints, s.shape[0])
    return cp, _marginal_running_kernel(s, card, p, cp)


# ----------------------------------------------------------------------------------------------
# Symmetric KL, TV, L1
# ----------------------------------------------------------------------------------------------
def _sym_kl_unchecked(p: np.ndarray, q: np.ndarray, floor: float) -> float:
    lp = np.log(np.clip(p, floor, None))
    lq = np.log(np.clip(q, floor, None))
    return float(0.5 * (np.sum(p * (lp - lq)) + np.sum(q * (lq - lp))))


def _check_floor(floor) -> float:
    floor = float(floor)
    if not np.isfinite(floor) or floor <= 0:
        raise ValueError(f"floor must be finite and > 0; got {floor}")
    return floor


def sym_kl(p, q, floor: float = 1e-13) -> float:
    """Symmetric KL ``(KL(p||q) + KL(q||p)) / 2`` of probability arrays (summed over all cells).

    Logs are taken of ``max(p, floor)`` (as ruqizhang/dpfastmh ``util/SymKL.jl``, which clamps
    at ``10e-14 = 1e-13``); the weights ``p``, ``q`` are not clamped.
    """
    pa = _prob_array(np.ravel(p), "p")
    qa = _prob_array(np.ravel(q), "q")
    if np.shape(p) != np.shape(q):
        raise ValueError(f"p and q shapes differ: {np.shape(p)} vs {np.shape(q)}")
    return _sym_kl_unchecked(pa, qa, _check_floor(floor))


def _hist_left_closed(x: np.ndarray, edges: list[np.ndarray]) -> np.ndarray:
    nb = [len(e) - 1 for e in edges]
    idx = np.zeros(x.shape[0], dtype=np.int64)
    keep = np.ones(x.shape[0], dtype=bool)
    for j, e in enumerate(edges):
        b = np.searchsorted(e, x[:, j], side="right") - 1
        keep &= (b >= 0) & (b < nb[j])
        idx = idx * nb[j] + np.clip(b, 0, nb[j] - 1)
    return np.bincount(idx[keep], minlength=int(np.prod(nb))).reshape(nb).astype(float)


def sym_kl_hist(a, b, bins: int = 100, range=None, floor: float = 1e-13) -> float:  # noqa: A002
    """Symmetric KL between histograms of samples ``a`` and reference samples ``b``.

    Same definition as ruqizhang/dpfastmh ``util/SymKL.jl``:

    * samples of shape (n,) or (n, k), k in {1, 2, 3} (k = 2: 2-D histogram);
    * ``bins`` bins per coordinate on an equal-width grid spanning ``range``; default range =
      per-coordinate (min, max) of the *reference* ``b``; ``range`` may be ``(lo, hi)`` (k = 1)
      or a sequence of k such pairs;
    * bins are left-closed ``[e_i, e_{i+1})`` including the last one (StatsBase default), so
      draws at the upper edge or outside the grid fall out;
    * cell probability = count / total number of draws (including dropped ones);
    * ``(KL(p||q) + KL(q||p)) / 2`` with logs of ``max(p, floor)``.

    ``bins=99`` reproduces SymKL.jl, whose grid has 100 *edges*.
    """
    xa, _ = _draws_2d(a, "a", 1)
    xb, _ = _draws_2d(b, "b", 1)
    k = xa.shape[1]
    if xb.shape[1] != k:
        raise ValueError(f"dimension mismatch: a has {k} columns, b has {xb.shape[1]}")
    if k > 3:
        raise ValueError(f"sym_kl_hist supports 1-3 coordinates; got {k}")
    if not isinstance(bins, int | np.integer) or bins < 1:
        raise ValueError(f"bins must be a positive integer; got {bins!r}")
    if range is None:
        ranges = [(float(xb[:, j].min()), float(xb[:, j].max())) for j in np.arange(k)]
    else:
        r = _finite_array(range, "range")
        if r.shape == (2,) and k == 1:
            r = r[None, :]
        if r.shape != (k, 2):
            raise ValueError(f"range must be (lo, hi) or {k} such pairs; got shape {r.shape}")
        ranges = [(float(lo), float(hi)) for lo, hi in r]
    for lo, hi in ranges:
        if not hi > lo:
            raise ValueError(f"empty histogram range ({lo}, {hi})")
    edges = [np.linspace(lo, hi, int(bins) + 1) for lo, hi in ranges]
    p = _hist_left_closed(xa, edges) / xa.shape[0]
    q = _hist_left_closed(xb, edges) / xb.shape[0]
    return _sym_kl_unchecked(p, q, _check_floor(floor))


def l1_error(p_hat, p_true) -> float | np.ndarray:
    """``sum |p_hat - p_true|`` over the last axis (scalar for 1-D input)."""
    a = _finite_array(p_hat, "p_hat")
    b = _finite_array(p_true, "p_true")
    if a.shape != b.shape or a.ndim == 0:
        raise ValueError(f"p_hat and p_true must have the same non-scalar shape: {a.shape}, {b.shape}")
    out = np.sum(np.abs(a - b), axis=-1)
    return float(out) if out.ndim == 0 else out


def tv_distance(p, q) -> float | np.ndarray:
    """Total-variation distance ``0.5 * sum |p - q|`` of probability vectors (last axis)."""
    pa = _prob_array(p, "p")
    qa = _prob_array(q, "q")
    if pa.shape != qa.shape:
        raise ValueError(f"p and q shapes differ: {pa.shape} vs {qa.shape}")
    out = 0.5 * np.sum(np.abs(pa - qa), axis=-1)
    return float(out) if out.ndim == 0 else out
