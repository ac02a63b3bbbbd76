"""Effective sample size: ``ess`` (four estimators), ``ess_report`` (ESS and ESS/s per coordinate),
``mcse_mean``.

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

import numpy as np
from numba import njit

from bench.metrics._validate import _draws_2d, _finite_array

ESS_METHODS = ("identity", "mean", "bulk", "authors")
AUTHORS_MAXLAG = 250
_RESOLUTION = float(np.finfo(float).resolution)  # 1e-15, ArviZ's constant-chain threshold


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
