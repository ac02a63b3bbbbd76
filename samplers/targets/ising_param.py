"""Ising model with an unknown interaction parameter: a doubly-intractable posterior (Yuan & Wang 2024
Alg. 4).

Likelihood of m i.i.d. spin configurations ``x^k in {-1, +1}^n`` on a rows x cols lattice (free boundary):
``p_theta(x) = f_theta(x) / Z(theta)``, ``f_theta(x) = exp(theta S(x))``, ``S(x) = sum_{<ij>} x_i x_j``.
Prior: uniform on ``[lo, hi]``. Posterior ``∝ exp(theta S_data - m log Z(theta))`` on ``[lo, hi]``.

Exact auxiliary draws ``omega ~ p_theta'`` (the exchange algorithm only needs ``S(omega)``):

* ``AUX_ENUM``: density of states ``g(S)`` by enumerating all ``2^n`` configurations once (n <= 22);
  a draw is an inverse-CDF draw over the ``O(E)`` levels of S with ``P(S) ∝ g(S) e^{theta S}``.
* ``AUX_CFTP``: monotone coupling from the past (Propp & Wilson 1996) with systematic-scan heat-bath
  sweeps from the all-(+1) and all-(-1) states; valid for ferromagnetic ``theta >= 0`` (requires lo >= 0).

Exact ``log Z(theta)`` for the reference posterior: enumeration (small n) or the column transfer matrix
(:func:`log_partition_tm`, cols <= 12), both independent of the samplers' draws.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from samplers.run import check_positive

AUX_ENUM, AUX_CFTP = 0, 1


class IsingParam(NamedTuple):
    n: int
    rows: int
    cols: int
    nbr_ptr: np.ndarray  # (n+1,) CSR neighbour lists
    nbr: np.ndarray
    edges: np.ndarray  # (E, 2)
    s_data: float  # sum_k S(x^k)
    m: int  # number of observed configurations
    lo: float  # uniform prior support
    hi: float
    levels: np.ndarray  # (nl,) distinct values of S (AUX_ENUM), else empty
    logcount: np.ndarray  # (nl,) log #configurations at each level
    aux: int  # AUX_ENUM or AUX_CFTP


# ----------------------------------------------------------------------------- geometry
def lattice_edges(rows: int, cols: int) -> np.ndarray:
    """Nearest-neighbour edges of a rows x cols grid (free boundary), site index r * cols + c."""
    e = []
    for r in range(rows):
        for c in range(cols):
            i = r * cols + c
            if c + 1 < cols:
                e.append((i, i + 1))
            if r + 1 < rows:
                e.append((i, i + cols))
    return np.array(e, dtype=np.int64).reshape(-1, 2)


def _csr(n: int, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lists: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        lists[a].append(int(b))
        lists[b].append(int(a))
    ptr = np.zeros(n + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    return ptr, np.array([v for x in lists for v in x], dtype=np.int64)


def density_of_states(n: int, edges: np.ndarray, chunk: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
    """Enumerate all 2^n configurations: distinct S values and log counts."""
    if n > 22:
        raise ValueError(f"enumeration of 2^{n} states is too large (n <= 22)")
    counts: dict[int, int] = {}
    total = 1 << n
    for start in range(0, total, chunk):
        idx = np.arange(start, min(start + chunk, total), dtype=np.int64)
        spins = 1 - 2 * ((idx[:, None] >> np.arange(n)[None, :]) & 1)
        S = (spins[:, edges[:, 0]] * spins[:, edges[:, 1]]).sum(axis=1)
        v, c = np.unique(S, return_counts=True)
        for a, b in zip(v.tolist(), c.tolist(), strict=True):
            counts[a] = counts.get(a, 0) + b
    lv = np.array(sorted(counts), dtype=np.float64)
    lc = np.log(np.array([counts[int(s)] for s in lv], dtype=np.float64))
    return lv, lc


def log_partition_tm(rows: int, cols: int, theta: float | np.ndarray) -> np.ndarray:
    """``log Z(theta)`` of the free-boundary rows x cols Ising model by the row transfer matrix
    (2^cols states per row; exact up to floating point)."""
    if cols > 12:
        raise ValueError("transfer matrix needs cols <= 12")
    th = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    k = np.arange(1 << cols)
    sp = 1 - 2 * ((k[:, None] >> np.arange(cols)[None, :]) & 1)  # (2^c, c)
    intra = (sp[:, :-1] * sp[:, 1:]).sum(axis=1) if cols > 1 else np.zeros(len(k))
    inter = sp @ sp.T  # (2^c, 2^c)
    out = np.empty(th.shape[0])
    for a, t in enumerate(th):
        logv = t * intra.astype(np.float64)
        T = np.exp(t * (inter + intra[None, :]))
        for _ in range(rows - 1):
            mx = logv.max()
            v = np.exp(logv - mx) @ T
            logv = np.log(v) + mx
        mx = logv.max()
        out[a] = mx + np.log(np.exp(logv - mx).sum())
    return out


def log_partition(model: IsingParam, theta: float | np.ndarray) -> np.ndarray:
    """``log Z(theta)`` from the density of states if present, else by transfer matrix."""
    th = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    if model.levels.shape[0]:
        a = model.logcount[None, :] + th[:, None] * model.levels[None, :]
        mx = a.max(axis=1)
        return mx + np.log(np.exp(a - mx[:, None]).sum(axis=1))
    return log_partition_tm(model.rows, model.cols, th)


def log_posterior_grid(model: IsingParam, grid: np.ndarray) -> np.ndarray:
    """Unnormalised exact log posterior on a theta grid (-inf outside [lo, hi])."""
    grid = np.asarray(grid, dtype=np.float64)
    lp = grid * model.s_data - model.m * log_partition(model, grid)
    return np.where((grid >= model.lo) & (grid <= model.hi), lp, -np.inf)


# ----------------------------------------------------------------------------- exact draws (njit)
@njit(cache=True)
def stat(model: IsingParam, x: np.ndarray) -> float:
    """S(x) = sum over edges of x_i x_j."""
    s = 0.0
    for e in range(model.edges.shape[0]):
        s += x[model.edges[e, 0]] * x[model.edges[e, 1]]
    return s


@njit(cache=True)
def draw_stat_enum(model: IsingParam, theta: float, rng) -> float:
    """S(omega) for omega ~ p_theta, by inverse CDF over the enumerated density of states."""
    nl = model.levels.shape[0]
    mx = -np.inf
    for k in range(nl):
        v = model.logcount[k] + theta * model.levels[k]
        if v > mx:
            mx = v
    z = 0.0
    for k in range(nl):
        z += math.exp(model.logcount[k] + theta * model.levels[k] - mx)
    u = rng.random() * z
    acc = 0.0
    for k in range(nl):
        acc += math.exp(model.logcount[k] + theta * model.levels[k] - mx)
        if u < acc:
            return model.levels[k]
    return model.levels[nl - 1]


@njit(cache=True)
def _sweep(model: IsingParam, x: np.ndarray, theta: float, u: np.ndarray) -> None:
    for i in range(model.n):
        hf = 0.0
        for k in range(model.nbr_ptr[i], model.nbr_ptr[i + 1]):
            hf += x[model.nbr[k]]
        p = 1.0 / (1.0 + math.exp(-2.0 * theta * hf))
        x[i] = 1 if u[i] < p else -1


@njit(cache=True)
def cftp(model: IsingParam, theta: float, rng, us: np.ndarray, top: np.ndarray, bot: np.ndarray):
    """Monotone CFTP: on return ``top`` holds an exact draw from p_theta (theta >= 0).

    ``us[k]`` holds the uniforms of the sweep at time -(k+1) (reused when going further back).
    Returns ``(site_updates, us)`` (``us`` regrown when more sweeps are needed)."""
    n = model.n
    T = 1
    filled = 0
    cost = 0
    while True:
        if T > us.shape[0]:
            new = np.empty((2 * T, n))
            new[:filled] = us[:filled]
            us = new
        while filled < T:
            for i in range(n):
                us[filled, i] = rng.random()
            filled += 1
        for i in range(n):
            top[i] = 1
            bot[i] = -1
        for k in range(T - 1, -1, -1):
            _sweep(model, top, theta, us[k])
            _sweep(model, bot, theta, us[k])
        cost += 2 * T * n
        same = True
        for i in range(n):
            if top[i] != bot[i]:
                same = False
                break
        if same:
            return cost, us
        T *= 2


@njit(cache=True)
def draw_stat(model: IsingParam, theta: float, rng, us, top, bot):
    """S(omega), omega ~ p_theta exactly (enumeration or CFTP). Returns ``(S, cost, us)``."""
    if model.aux == AUX_ENUM:
        return draw_stat_enum(model, theta, rng), model.levels.shape[0], us
    cost, us = cftp(model, theta, rng, us, top, bot)
    return stat(model, top), cost, us


# ----------------------------------------------------------------------------- constructor
def ising_param(rows: int, cols: int, X: np.ndarray, lo: float, hi: float, aux: str = "auto") -> IsingParam:
    """Model for observed configurations ``X`` (m, rows*cols) in {-1, +1}; prior U[lo, hi].

    ``aux``: "enum", "cftp" or "auto" (enum when rows*cols <= 16)."""
    rows, cols = _lattice_size(rows, cols)
    n = rows * cols
    Xf = np.atleast_2d(np.asarray(X, dtype=np.float64))  # checked before the int cast (1.5 is not a spin)
    if Xf.ndim != 2 or Xf.shape[1] != n or not np.all(np.abs(Xf) == 1):
        raise ValueError(f"X must be (m, {n}) with entries in {{-1, +1}}")
    if Xf.shape[0] < 1:
        raise ValueError("X holds no configuration: m >= 1 observations are needed (else posterior = prior)")
    X = Xf.astype(np.int64)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError("prior support needs finite lo < hi")
    if aux == "auto":
        aux = "enum" if n <= 16 else "cftp"
    if aux not in ("enum", "cftp"):
        raise ValueError(f"aux must be 'enum', 'cftp' or 'auto', got {aux!r}")
    if aux == "cftp" and lo < 0:
        raise ValueError("monotone CFTP needs a ferromagnetic prior support (lo >= 0)")
    edges = lattice_edges(rows, cols)
    ptr, nb = _csr(n, edges)
    if aux == "enum":
        lv, lc = density_of_states(n, edges)
    else:
        lv, lc = np.zeros(0), np.zeros(0)
    s_data = float((X[:, edges[:, 0]] * X[:, edges[:, 1]]).sum())
    return IsingParam(
        n,
        rows,
        cols,
        ptr,
        nb,
        edges,
        s_data,
        int(X.shape[0]),
        float(lo),
        float(hi),
        lv,
        lc,
        AUX_ENUM if aux == "enum" else AUX_CFTP,
    )


def _lattice_size(rows: int, cols: int) -> tuple[int, int]:
    """rows, cols as ints: positive integers with at least one edge (rows * cols >= 2; a single site has
    no edge, so its data say nothing about theta)."""
    check_positive("rows", rows, integer=True)
    check_positive("cols", cols, integer=True)
    if int(rows) * int(cols) < 2:
        raise ValueError(f"the lattice needs rows * cols >= 2 sites (an edge), got {rows} x {cols}")
    return int(rows), int(cols)


def simulate(
    rows: int,
    cols: int,
    theta: float,
    m: int,
    rng: np.random.Generator,
    support: tuple[float, float] | None = None,
) -> np.ndarray:
    """m >= 1 exact configurations at a finite ``theta >= 0`` by CFTP (data generation); ``support``:
    the prior's ``[lo, hi]``, which must contain ``theta`` (checked before the draws, since CFTP's time
    grows fast with theta: theta = 5 on 4 x 4 ran out of memory)."""
    rows, cols = _lattice_size(rows, cols)
    check_positive("m", m, integer=True)
    m = int(m)
    if not (np.isfinite(theta) and theta >= 0):
        raise ValueError(f"data generation by monotone CFTP needs a finite theta >= 0, got theta = {theta!r}")
    if support is not None and not (support[0] <= theta <= support[1]):
        raise ValueError(f"theta_true = {theta!r} is outside the prior support [lo, hi] = {list(support)}")
    geo = ising_param(rows, cols, np.ones((1, rows * cols)), 0.0, max(theta, 1e-9) + 1.0, aux="cftp")
    us = np.empty((8, geo.n))
    top = np.empty(geo.n, dtype=np.int64)
    bot = np.empty(geo.n, dtype=np.int64)
    out = np.empty((m, geo.n), dtype=np.int64)
    for k in range(m):
        _, us = cftp(geo, float(theta), rng, us, top, bot)
        out[k] = top
    return out
