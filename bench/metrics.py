"""Metrics for the minibatch-MCMC benchmark: one implementation of each, for the whole project.

Contents
--------
* ESS (``ess``) with four estimators, ``ess_report`` (ESS and ESS/s, min/median/max over
  dimensions, reliability flags) and ``mcse_mean``.
* Bias metrics: ``mse`` / ``mse_running`` (running mean and variance vs a reference),
  ``ks_2samp_per_dim`` (two-sample Kolmogorov-Smirnov D per coordinate),
  ``marginal_l2_error`` / ``marginal_l2_error_running`` / ``marginal_l2_from_counts``
  (discrete chains), ``sym_kl_hist`` / ``sym_kl`` (symmetric KL), ``tv_distance`` /
  ``l1_error``, ``test_accuracy`` and ``risk`` (logistic regression).
* ``batch_summary`` of per-iteration evaluation counts.

ESS estimators:

``"identity"`` -- "the paper's ESS" (Yuan & Wang 2024 §5.1: "standard autocorrelation-based ESS
    to each dimension (identity test function)"). Single chain, raw draws, FFT autocovariance
    (divided by n), Geyer initial positive then initial monotone sequence, tau floored at
    ``1/log10(n)``. This is exactly ``arviz_stats.base.array_stats.ess(x, chain_axis=None,
    draw_axis=-2, method="identity")`` (arviz-stats 0.8.0 ``_ess``), except for our guard below.
``"mean"`` -- the same on the chain split in two halves (ArviZ ``method="mean"``).
``"bulk"`` -- split in two, rank-normalise (average ranks, Blom offset 3/8), z-scale
    (ArviZ ``method="bulk"``).
``"authors"`` -- the estimator used by the Yuan & Wang 2024 code (Julia):
    ``MCMCDiagnosticTools.ess(samples)`` with 0.3.x defaults (``kind=:bulk``,
    ``autocov_method=AutocovMethod()``, ``split_chains=2``, ``maxlag=250``). Re-implemented from
    ``src/ess_rhat.jl`` / ``src/utils.jl`` of TuringLang/MCMCDiagnosticTools.jl (the 0.3.x branch's
    ``_ess_rhat(Val(:basic))`` loop; the exact 0.3.17 tag is not pinned). What it does, step by step:

    1. rank-normalise each coordinate over the *unsplit* chain (``StatsBase.tiedrank`` = average
       ranks, ``q = (r - 3/8) / (n + 1/4)``, ``norminvcdf``);
    2. split into 2 chains of ``niter = n // 2`` draws (odd n: the middle draw is dropped);
    3. ``W`` = mean of the two within-chain variances (ddof 1),
       ``var+ = (niter-1)/niter * W + var(chain means, ddof 1)``;
    4. autocovariance at lag k = mean over chains of ``dot(s[:niter-k], s[k:]) / niter`` on the
       chain-centred draws (direct sums, computed lazily only for the lags the loop reaches),
       ``rho_k = 1 - (W - acov_k) / var+``;
    5. **lag cap**: ``maxlag = min(250, niter - 4)``; ``P_0 = rho_0 + rho_1``; for
       ``k = 2, 4, ...`` while ``k < maxlag - 1``: ``Delta = rho_k + rho_{k+1}``, stop if
       ``Delta <= 0``, else ``P = min(Delta, P)`` (monotone step), ``sum += P``. So with the
       default cap at most lags 0..249 enter the pair sums;
    6. then ``rho_even = rho_k`` at the lag ``k`` where the loop stopped (lag 250 if it ran to the
       cap), ``tau = max(0, 2 * sum + max(0, rho_even) - 1)``,
       ``ESS = min(ntotal / tau, ntotal * log10(ntotal))`` with ``ntotal = 2 * niter``.

    Consequence: for a chain whose autocorrelation stays near 1
    beyond lag 250, ``tau <= ~500`` and ESS ~ ``n / 500`` however sticky the chain is.

Guard (all methods, unless ``guard=False``): a coordinate whose draws are constant (ArviZ's own
criterion ``max - min < finfo(float).resolution``) gets ESS 0.0 and is flagged (ArviZ returns n
there, Julia returns NaN); this also covers chains with acceptance rate 0.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

__all__ = [
    "ESS_METHODS",
    "ess",
    "ess_cap",
    "capped_dims",
    "ess_report",
    "mcse_mean",
    "mse",
    "mse_running",
    "RunningMSE",
    "ks_2samp_per_dim",
    "min_median_max",
    "marginal_l2_error",
    "marginal_l2_error_running",
    "marginal_l2_from_counts",
    "sym_kl_hist",
    "sym_kl",
    "tv_distance",
    "l1_error",
    "batch_summary",
    "test_accuracy",
    "risk",
    "Risk",
]

ESS_METHODS = ("identity", "mean", "bulk", "authors")
AUTHORS_MAXLAG = 250
_RESOLUTION = float(np.finfo(float).resolution)  # 1e-15, ArviZ's constant-chain threshold


# ----------------------------------------------------------------------------------------------
# input validation
# ----------------------------------------------------------------------------------------------
def _finite_array(x, name: str, dtype=float) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric array-like: {exc}") from None
    if arr.size and not np.all(np.isfinite(arr)):
        n_bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} contains {n_bad} non-finite value(s) (NaN or inf)")
    return arr


def _draws_2d(x, name: str, min_draws: int) -> tuple[np.ndarray, bool]:
    """Return ``x`` as a C-contiguous float array of shape (n, d) and whether it was 1-D."""
    arr = _finite_array(x, name)
    if arr.ndim == 1:
        arr, was_1d = arr[:, None], True
    elif arr.ndim == 2:
        was_1d = False
    else:
        raise ValueError(f"{name} must have shape (n,) or (n, d); got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} has zero dimensions (shape {arr.shape})")
    if arr.shape[0] < min_draws:
        raise ValueError(f"{name} needs at least {min_draws} draws; got {arr.shape[0]}")
    return np.ascontiguousarray(arr), was_1d


def _prob_array(p, name: str, atol: float = 1e-6) -> np.ndarray:
    arr = _finite_array(p, name)
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ValueError(f"{name} must be a non-empty probability vector (last axis)")
    if np.any(arr < 0):
        raise ValueError(f"{name} has negative entries")
    s = arr.sum(axis=-1)
    if not np.all(np.abs(s - 1.0) <= atol):
        raise ValueError(f"{name} must sum to 1 along its last axis (sums: {np.ravel(s)[:5]})")
    return arr


def _checkpoints(checkpoints, n: int, start: int = 1) -> np.ndarray:
    if checkpoints is None:
        return np.arange(start, n + 1, dtype=np.int64)
    cp = np.asarray(checkpoints)
    if cp.ndim != 1 or cp.size == 0:
        raise ValueError("checkpoints must be a non-empty 1-D array of draw counts")
    if not np.issubdtype(cp.dtype, np.integer):
        if not np.all(np.isfinite(cp)) or np.any(cp != np.round(cp)):
            raise ValueError("checkpoints must be integers (numbers of draws used)")
    cp = cp.astype(np.int64)
    if np.any(np.diff(cp) <= 0):
        raise ValueError("checkpoints must be strictly increasing")
    if cp[0] < start or cp[-1] > n:
        raise ValueError(f"checkpoints must lie in [{start}, {n}]; got [{cp[0]}, {cp[-1]}]")
    return cp


# ----------------------------------------------------------------------------------------------
# ESS: numba cores
# ----------------------------------------------------------------------------------------------
@njit(cache=True)
def _geyer_arviz(acov_mean, mean_var, var_plus, n_total, monotone, floor):
    """ArviZ ``_ess`` after the autocovariances: Geyer initial positive + monotone sequence.

    ``acov_mean[k]`` is the chain-averaged biased autocovariance at lag k. ``monotone`` and
    ``floor`` are True in production; False only builds the mutants used by the tests.
    Returns the ESS (NaN if any autocorrelation is NaN, as ArviZ).
    """
    n_draw = acov_mean.shape[0]
    rho = np.zeros(n_draw)
    rho_even = 1.0
    rho[0] = rho_even
    rho_odd = 1.0 - (mean_var - acov_mean[1]) / var_plus
    rho[1] = rho_odd
    # Geyer's initial positive sequence
    t = 1
    while t < (n_draw - 3) and (rho_even + rho_odd) > 0.0:
        rho_even = 1.0 - (mean_var - acov_mean[t + 1]) / var_plus
        rho_odd = 1.0 - (mean_var - acov_mean[t + 2]) / var_plus
        if (rho_even + rho_odd) >= 0:
            rho[t + 1] = rho_even
            rho[t + 2] = rho_odd
        t += 2
    max_t = t - 2
    if rho_even > 0:
        rho[max_t + 1] = rho_even
    # Geyer's initial monotone sequence
    if monotone:
        t = 1
        while t <= max_t - 2:
            if (rho[t + 1] + rho[t + 2]) > (rho[t - 1] + rho[t]):
                rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0
                rho[t + 2] = rho[t + 1]
            t += 2
    s = 0.0
    for k in range(max_t + 1):
        s += rho[k]
    tail = rho[max_t + 1] if max_t + 1 < n_draw else 0.0
    tau = -1.0 + 2.0 * s + tail
    if floor:
        tau = max(tau, 1.0 / np.log10(n_total))
    for k in range(n_draw):
        if np.isnan(rho[k]):
            return np.nan
    return n_total / tau


@njit(cache=True)
def _geyer_arviz_all(acov_mean, mean_var, var_plus, n_total, monotone, floor):
    d = acov_mean.shape[0]
    out = np.empty(d)
    for j in range(d):
        if var_plus[j] > 0.0:
            out[j] = _geyer_arviz(acov_mean[j], mean_var[j], var_plus[j], n_total, monotone, floor)
        else:  # exactly constant: replaced by the guard / ArviZ's shortcut in ``_ess_core``
            out[j] = np.nan
    return out


@njit(cache=True)
def _lag_acov(s1, s2, k, niter):
    """MCMCDiagnosticTools ``mean_autocov(k, ::AutocovCache)``: mean of dots, divided by niter."""
    a = 0.0
    b = 0.0
    for i in range(niter - k):
        a += s1[i] * s1[i + k]
        b += s2[i] * s2[i + k]
    return ((a + b) / 2.0) / niter


@njit(cache=True)
def _ess_authors_1d(z, maxlag):
    """MCMCDiagnosticTools 0.3.x ``_ess_rhat(Val(:basic))`` for one chain split in 2.

    ``z`` is the (already rank-normalised) chain. Returns ESS (NaN for a constant chain, as Julia).
    """
    n = z.shape[0]
    niter = n // 2
    ntotal = 2 * niter
    c1 = z[:niter]
    c2 = z[n - niter :]  # odd n: the middle draw is discarded (copyto_split!)
    m1 = c1.mean()
    m2 = c2.mean()
    s1 = c1 - m1
    s2 = c2 - m2
    v1 = (s1 * s1).sum() / (niter - 1)
    v2 = (s2 * s2).sum() / (niter - 1)
    w = (v1 + v2) / 2.0
    mbar = (m1 + m2) / 2.0
    var_between = (m1 - mbar) ** 2 + (m2 - mbar) ** 2  # var(chain_mean; corrected=true), 2 chains
    var_plus = (niter - 1) / niter * w + var_between
    if not (var_plus > 0.0):
        return np.nan
    inv_var_plus = 1.0 / var_plus
    maxlag = min(maxlag, niter - 4)
    ess_max = ntotal * np.log10(ntotal)

    rho_odd = 1.0 - inv_var_plus * (w - _lag_acov(s1, s2, 1, niter))
    rho_even = 1.0
    p_t = rho_even + rho_odd
    sum_p = p_t
    k = 2
    while k < (maxlag - 1):
        rho_even = 1.0 - inv_var_plus * (w - _lag_acov(s1, s2, k, niter))
        rho_odd = 1.0 - inv_var_plus * (w - _lag_acov(s1, s2, k + 1, niter))
        delta = rho_even + rho_odd
        if not (delta > 0.0):
            break
        p_t = min(delta, p_t)
        sum_p += p_t
        k += 2
    if maxlag > 1:
        rho_even = 1.0 - inv_var_plus * (w - _lag_acov(s1, s2, k, niter))
    else:
        rho_even = 0.0
    tau = max(0.0, 2.0 * sum_p + max(0.0, rho_even) - 1.0)
    if tau == 0.0:
        return ess_max
    return min(ntotal / tau, ess_max)


@njit(cache=True)
def _ess_authors_all(z, maxlag):
    d = z.shape[1]
    out = np.empty(d)
    for j in range(d):
        out[j] = _ess_authors_1d(np.ascontiguousarray(z[:, j]), maxlag)
    return out


# ----------------------------------------------------------------------------------------------
# ESS: numpy front ends
# ----------------------------------------------------------------------------------------------
def _split2(x: np.ndarray) -> np.ndarray:
    """(n, d) -> (d, 2, n // 2): ArviZ ``_split_chains`` (odd n drops the middle draw)."""
    half = x.shape[0] // 2
    return np.stack((x[:half].T, x[x.shape[0] - half :].T), axis=1)


def _autocov(chains: np.ndarray) -> np.ndarray:
    """ArviZ ``autocov``: FFT autocovariance along the last axis, divided by n_draw."""
    from scipy.fft import next_fast_len  # here, not at import: scipy costs ~0.4 s per cell process

    n = chains.shape[-1]
    m = next_fast_len(2 * n, real=True)  # 5-smooth, as scipy.fftpack.next_fast_len in ArviZ
    centred = chains - chains.mean(axis=-1, keepdims=True)
    f = np.fft.rfft(centred, n=m, axis=-1)
    f *= np.conjugate(f)
    cov = np.fft.irfft(f, n=m, axis=-1)[..., :n]
    cov /= n
    return cov


def _arviz_ess_chains(chains: np.ndarray, monotone: bool = True, floor: bool = True):
    """ArviZ ``_ess`` on chains of shape (d, m, n_draw), without its constant-chain shortcut."""
    _, n_chain, n_draw = chains.shape
    acov = _autocov(chains)
    acov_mean = np.ascontiguousarray(acov.mean(axis=1))  # (d, n_draw)
    mean_var = acov[:, :, 0].mean(axis=1) * n_draw / (n_draw - 1.0)
    var_plus = mean_var * (n_draw - 1.0) / n_draw
    if n_chain > 1:
        var_plus = var_plus + np.var(chains.mean(axis=2), axis=1, ddof=1)
    return _geyer_arviz_all(acov_mean, mean_var, var_plus, float(n_chain * n_draw), monotone, floor)


def rank_average(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of each column of the (n, d) array ``x``, ties get their average rank: the same as
    ``scipy.stats.rankdata(x, method="average", axis=0)`` (tested), without importing scipy.stats
    (~1 s per workflow job). MH chains repeat states, so ties are the rule, not the exception."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    order = np.argsort(x, axis=0, kind="stable")
    s = np.take_along_axis(x, order, axis=0)
    new = np.ones(s.shape, dtype=bool)
    new[1:] = s[1:] != s[:-1]
    out = np.empty(x.shape)
    for j in range(x.shape[1]):
        starts = np.flatnonzero(new[:, j])
        ends = np.append(starts[1:], n)
        avg = 0.5 * (starts + 1 + ends)  # ranks start+1 .. end, 1-based
        out[order[:, j], j] = np.repeat(avg, ends - starts)
    return out


def _z_scale(chains: np.ndarray) -> np.ndarray:
    """ArviZ ``_z_scale`` per coordinate of (d, m, n_draw): ranks over all m*n_draw draws."""
    from scipy import special

    d, m, n_draw = chains.shape
    flat = chains.reshape(d, m * n_draw)
    rank = rank_average(flat.T).T
    q = (rank - 3.0 / 8.0) / (flat.shape[1] - 2.0 * (3.0 / 8.0) + 1.0)
    return special.ndtri(q).reshape(d, m, n_draw)


def _rank_normalize_unsplit(x: np.ndarray) -> np.ndarray:
    """MCMCDiagnosticTools ``_rank_normalize`` for one chain of shape (n, d)."""
    from scipy import special

    n = x.shape[0]
    rank = rank_average(x)
    return np.ascontiguousarray(special.ndtri((rank - 3.0 / 8.0) / (n - 2.0 * (3.0 / 8.0) + 1.0)))


_MIN_DRAWS = {"identity": 4, "mean": 8, "bulk": 8, "authors": 10}


def _ess_core(
    x: np.ndarray,
    method: str,
    *,
    guard: bool = True,
    maxlag: int = AUTHORS_MAXLAG,
    _monotone: bool = True,
    _floor: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """ESS per column of validated (n, d) draws, plus the constant-column mask."""
    n, d = x.shape
    constant = np.ptp(x, axis=0) < _RESOLUTION
    if method == "identity":
        chains = np.ascontiguousarray(x.T[:, None, :])
        out = _arviz_ess_chains(chains, _monotone, _floor)
        const_eval = constant
        const_value = float(n)
    elif method in ("mean", "bulk"):
        chains = _split2(x)
        if method == "bulk":
            chains = _z_scale(chains)
        out = _arviz_ess_chains(chains, _monotone, _floor)
        const_eval = np.ptp(chains.reshape(d, -1), axis=1) < _RESOLUTION
        const_value = float(chains.shape[1] * chains.shape[2])
    elif method == "authors":
        if not isinstance(maxlag, int | np.integer) or maxlag < 1:
            raise ValueError(f"maxlag must be a positive integer; got {maxlag!r}")
        out = _ess_authors_all(_rank_normalize_unsplit(x), int(maxlag))
        const_eval = constant
        const_value = np.nan  # Julia: W = 0 -> NaN
    else:
        raise ValueError(f"unknown ESS method {method!r}; choose one of {ESS_METHODS}")
    if guard:
        out = np.where(constant, 0.0, out)
    else:  # reproduce the reference implementation exactly
        out = np.where(const_eval, const_value, out)
    return out, constant


def ess(
    x,
    method: str = "identity",
    *,
    guard: bool = True,
    maxlag: int = AUTHORS_MAXLAG,
) -> float | np.ndarray:
    """Effective sample size per dimension of one chain (Yuan & Wang 2024 §5.1).

    Parameters
    ----------
    x : array (n,) or (n, d)
        Draws of one chain, iterations along axis 0.
    method : {"identity", "mean", "bulk", "authors"}
        See the module docstring. ``"identity"`` is the paper's ESS; ``"authors"`` is the
        MCMCDiagnosticTools 0.3.x default (bulk, split 2, Geyer, lags capped at ``maxlag``).
    guard : bool
        If True (default) constant dimensions get ESS 0.0. If False the reference behaviour is
        reproduced (ArviZ: ESS = number of draws used; authors/Julia: NaN).
    maxlag : int
        Lag cap of the ``"authors"`` estimator (default 250, as MCMCDiagnosticTools).

    Returns
    -------
    float for 1-D input, array of shape (d,) for 2-D input.
    """
    method = str(method).lower()
    if method not in ESS_METHODS:
        raise ValueError(f"unknown ESS method {method!r}; choose one of {ESS_METHODS}")
    arr, was_1d = _draws_2d(x, "x", _MIN_DRAWS[method])
    out, _ = _ess_core(arr, method, guard=guard, maxlag=maxlag)
    return float(out[0]) if was_1d else out


def ess_cap(n_draws: int, method: str) -> float:
    """The largest ESS ``method`` reports for a chain of ``n_draws`` draws: ``n_total log10(n_total)``.

    ArviZ floors tau at ``1 / log10(n_total)`` and MCMCDiagnosticTools caps ESS at
    ``ntotal * log10(ntotal)``; ``n_total = n`` for the single-chain ``identity`` estimator and
    ``2 (n // 2)`` for the split ones (odd n drops the middle draw). A coordinate at the cap is
    antithetic (estimated ESS > n): its value is a lower bound on the uncapped estimate, not a
    measurement (the authors' tables are capped the same way)."""
    if method not in ESS_METHODS:
        raise ValueError(f"unknown ESS method {method!r}; choose one of {ESS_METHODS}")
    if not isinstance(n_draws, int | np.integer) or n_draws < 2:
        raise ValueError(f"n_draws must be an integer >= 2; got {n_draws!r}")
    n_total = int(n_draws) if method == "identity" else 2 * (int(n_draws) // 2)
    return n_total * float(np.log10(n_total))


def capped_dims(ess_values, n_draws: int, method: str) -> list[int]:
    """Coordinates whose ESS is at :func:`ess_cap` (to a relative 1e-9)."""
    cap = ess_cap(n_draws, method)
    return [int(i) for i in np.flatnonzero(np.asarray(ess_values, float) >= cap * (1.0 - 1e-9))]


def min_median_max(values) -> dict[str, float]:
    """Summary ``{"min", "median", "max"}`` of a 1-D array (e.g. KS D or ESS over dims)."""
    v = _finite_array(values, "values").ravel()
    if v.size == 0:
        raise ValueError("values is empty")
    return {"min": float(v.min()), "median": float(np.median(v)), "max": float(v.max())}


def ess_report(samples, seconds: float, burn_in: int = 0) -> dict:
    """ESS and ESS/s per chain: min/median/max over dimensions.

    Parameters
    ----------
    samples : array (n,) or (n, d)
        Draws of one chain (burn-in included or not; see ``burn_in``).
    seconds : float > 0
        Sampling wall time (compiled loop only, JIT excluded); ESS/s = ESS / seconds.
    burn_in : int
        Number of leading draws dropped before computing ESS.

    Returns
    -------
    dict with
      ``n_draws, n_dims, burn_in, seconds``;
      ``ess_identity`` / ``ess_authors``: arrays (d,) (paper estimator / authors' estimator);
      ``ess_identity_{min,median,max}``, ``ess_identity_per_s_{min,median,max}`` and the same
      for ``ess_authors``;
      ``tau_identity``: n / ESS_identity per dim (inf for constant dims);
      ``ess_identity_capped_dims`` / ``ess_authors_capped_dims``: coordinates at the estimator's
      cap :func:`ess_cap` (antithetic: the value is a lower bound);
      ``constant_dims`` (list of int), ``constant`` (bool): zero-variance dimensions (ESS := 0);
      ``unreliable_dims`` (list of int), ``unreliable`` (bool): n < 50 * tau (emcee's
      criterion, i.e. ESS_identity < 50), constant dimensions included.
    """
    try:
        seconds = float(seconds)
    except (TypeError, ValueError):
        raise ValueError(f"seconds must be a number; got {seconds!r}") from None
    if not np.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"seconds must be finite and > 0; got {seconds}")
    if not isinstance(burn_in, int | np.integer) or burn_in < 0:
        raise ValueError(f"burn_in must be a non-negative integer; got {burn_in!r}")
    arr, _ = _draws_2d(samples, "samples", 1)
    if burn_in >= arr.shape[0]:
        raise ValueError(f"burn_in={burn_in} leaves no draws (n={arr.shape[0]})")
    arr = np.ascontiguousarray(arr[burn_in:])
    n, d = arr.shape
    if n < _MIN_DRAWS["authors"]:
        raise ValueError(f"need at least {_MIN_DRAWS['authors']} draws after burn-in; got {n}")
    e_id, constant = _ess_core(arr, "identity")
    e_au, _ = _ess_core(arr, "authors")
    with np.errstate(divide="ignore"):
        tau = np.where(e_id > 0, n / np.where(e_id > 0, e_id, 1.0), np.inf)
    unreliable = n < 50.0 * tau
    out: dict = {"n_draws": n, "n_dims": d, "burn_in": int(burn_in), "seconds": seconds}
    for key, e in (("ess_identity", e_id), ("ess_authors", e_au)):
        out[key] = e
        for stat, val in min_median_max(e).items():
            out[f"{key}_{stat}"] = val
        for stat, val in min_median_max(e / seconds).items():
            out[f"{key}_per_s_{stat}"] = val
        out[f"{key}_capped_dims"] = capped_dims(e, n, key.removeprefix("ess_"))
    out["tau_identity"] = tau
    out["constant_dims"] = [int(i) for i in np.flatnonzero(constant)]
    out["constant"] = bool(constant.any())
    out["unreliable_dims"] = [int(i) for i in np.flatnonzero(unreliable)]
    out["unreliable"] = bool(unreliable.any())
    return out


def mcse_mean(x) -> float | np.ndarray:
    """Monte Carlo standard error of the mean: ``sd(ddof=1) / sqrt(ESS_identity)``.

    Constant dimensions (ESS 0) give NaN: the MCSE is undefined there.
    """
    arr, was_1d = _draws_2d(x, "x", _MIN_DRAWS["identity"])
    e, constant = _ess_core(arr, "identity")
    sd = arr.std(axis=0, ddof=1)
    out = np.full(arr.shape[1], np.nan)
    ok = ~constant
    out[ok] = sd[ok] / np.sqrt(e[ok])
    return float(out[0]) if was_1d else out


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


# ----------------------------------------------------------------------------------------------
# Cost, logistic regression accuracy, risk
# ----------------------------------------------------------------------------------------------
def batch_summary(n_evals) -> dict[str, float]:
    """Summary of per-iteration evaluation counts (minibatch sizes / factors evaluated).

    Keys: mean, std (ddof 0), min, q05, q25, median, q75, q95, max (numpy linear quantiles).
    """
    v = _finite_array(n_evals, "n_evals")
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"n_evals must be a non-empty 1-D array; got shape {v.shape}")
    if np.any(v < 0):
        raise ValueError("n_evals must be non-negative")
    q = np.quantile(v, [0.05, 0.25, 0.5, 0.75, 0.95])
    return {
        "mean": float(v.mean()),
        "std": float(v.std()),
        "min": float(v.min()),
        "q05": float(q[0]),
        "q25": float(q[1]),
        "median": float(q[2]),
        "q75": float(q[3]),
        "q95": float(q[4]),
        "max": float(v.max()),
    }


def test_accuracy(theta_running_mean, X, y) -> float | np.ndarray:
    """Test accuracy of ``predict = 1 if theta.x > 0 else 0`` vs labels in {0, 1}.

    As ruqizhang/tunamh ``logistic/tunamh.jl::test`` (Yuan & Wang 2024 MNIST protocol): ``theta`` is the
    running mean of all samples so far. ``theta_running_mean`` (d,) -> float; (k, d) -> (k,)
    (one accuracy per checkpoint). ``X`` (N, d), ``y`` (N,).
    """
    th = _finite_array(theta_running_mean, "theta_running_mean")
    xm = _finite_array(X, "X")
    yv = _finite_array(y, "y")
    if xm.ndim != 2 or xm.shape[0] == 0:
        raise ValueError(f"X must have shape (N, d) with N >= 1; got {xm.shape}")
    if th.ndim not in (1, 2) or th.shape[-1] != xm.shape[1]:
        raise ValueError(f"theta must have shape ({xm.shape[1]},) or (k, {xm.shape[1]}); got {th.shape}")
    if yv.shape != (xm.shape[0],):
        raise ValueError(f"y must have shape ({xm.shape[0]},); got {yv.shape}")
    if not np.all((yv == 0) | (yv == 1)):
        raise ValueError("y must contain only 0/1 labels")
    pred = (xm @ np.atleast_2d(th).T > 0).astype(float)  # (N, k)
    acc = np.mean(pred == yv[:, None], axis=0)
    return float(acc[0]) if th.ndim == 1 else acc


test_accuracy.__test__ = False  # not a pytest test, despite the name


class Risk(NamedTuple):
    """``risk = bias2 + variance`` (each averaged over coordinates)."""

    risk: float
    bias2: float
    variance: float


def risk(estimates, truth) -> Risk:
    """Risk of an estimator over independent chains: squared bias + variance (ddof 0).

    ``estimates`` (n_chains,) or (n_chains, d): one estimate per chain (e.g. the predictive
    mean per test point); ``truth`` scalar or (d,). Per coordinate, bias^2 = (mean over chains
    - truth)^2 and variance = var over chains; both are averaged over coordinates, and risk
    equals the mean over chains and coordinates of (estimate - truth)^2.
    """
    e = _finite_array(estimates, "estimates")
    if e.ndim == 1:
        e = e[:, None]
    if e.ndim != 2 or e.shape[0] < 1 or e.shape[1] < 1:
        raise ValueError(f"estimates must have shape (n_chains,) or (n_chains, d); got {e.shape}")
    t = _finite_array(truth, "truth")
    if t.ndim > 1 or (t.ndim == 1 and t.shape[0] != e.shape[1]):
        raise ValueError(f"truth must be a scalar or shape ({e.shape[1]},); got {t.shape}")
    bias2 = float(np.mean((e.mean(axis=0) - t) ** 2))
    var = float(np.mean(e.var(axis=0)))
    return Risk(bias2 + var, bias2, var)
