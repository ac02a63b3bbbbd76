"""Kernel-vs-matrix check (verification tier T1): run the real compiled kernel one step from
every state many times and G-test each empirical row against the exact row.

Statistics. For row ``x`` with ``n`` draws, cells with expected count ``n P[x, y] < 5`` are pooled
into one cell (if the pool is still < 5 it is merged into the smallest remaining cell); a draw
landing where ``P[x, y] == 0`` (or outside the state space) gives p = 0. With >= 3 cells the
G-test (``scipy.stats.power_divergence(lambda_="log-likelihood")``) is used, with 2 cells the exact
binomial test, with 1 cell p = 1. The family-wise false-alarm rate is ``alpha`` (default 1e-4)
by Bonferroni over rows: the check passes iff ``min_x p_x > alpha / #rows``.

Recipe for families (see verify/README.md):
1. write a module-level ``@njit(cache=True)`` loop ``repeat_<name>_step(model, x0, ..., rng, reps)``
   that restores the state to ``x0`` and calls your kernel's ``*_step`` ``reps`` times, returning
   the next states as an array (kernels are called as globals, never passed in);
2. wrap it in a Python callable ``sample_row(s, rng) -> counts`` (length S, or S + 1 with a last
   "not a state" cell) -- :func:`lattice_counts` / :func:`graph_counts` map states to rows;
3. call :func:`kernel_vs_matrix(P, sample_row, reps, seed)` with your exact ``P``.

Or, with no driver of your own, :func:`step_vs_matrix` ``(step, states, P, reps, seed)`` takes any one-step
function ``step(state, rng) -> state`` (a Python function calling your compiled ``*_step``; optional
``init(x) -> state`` / ``position(state) -> x`` for a kernel with an explicit state, carried over
``n_steps``) and the enumerated ``states`` (the rows of ``P``), draws ``reps`` transitions per row and runs
the same G-tests. ``batched=True`` instead passes ``step`` the ``(reps, d)`` start states of a row at once (an
njit loop of your own: one call per row instead of one per draw).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit
from scipy import stats

from samplers.kernels.gibbs import gibbs_init, gibbs_step
from samplers.kernels.mh import mh_init, mh_step
from samplers.targets.factor_graph import FactorGraph
from samplers.targets.tall import TallData
from verify.enumerate import Lattice, state_index

ALPHA = 1e-4
MIN_EXPECTED = 5.0


# ============================================================================ statistics
def g_test(obs: np.ndarray, probs: np.ndarray) -> tuple[float, float, int]:
    """(statistic, p-value, dof) of ``obs`` counts against cell probabilities ``probs``.

    ``obs`` may have one more cell than ``probs`` (draws outside the state space, probability 0).
    See the module docstring for pooling and the exact fallbacks."""
    obs = np.asarray(obs, dtype=np.float64)
    probs = np.asarray(probs, dtype=np.float64)
    if obs.shape[0] == probs.shape[0] + 1:
        probs = np.append(probs, 0.0)
    if obs.shape != probs.shape or obs.ndim != 1:
        raise ValueError(f"obs {obs.shape} and probs {probs.shape} do not match")
    n = obs.sum()
    if n <= 0:
        raise ValueError("no draws")
    probs = np.clip(probs, 0.0, None)
    probs = probs / probs.sum()
    if np.any(obs[probs == 0.0] > 0):
        return float("inf"), 0.0, 0
    exp = n * probs
    keep = exp > 0
    o, e = obs[keep], exp[keep]
    small = e < MIN_EXPECTED
    if small.any():
        o = np.append(o[~small], o[small].sum())
        e = np.append(e[~small], e[small].sum())
        if e[-1] < MIN_EXPECTED and e.shape[0] > 1:
            k = int(np.argmin(e[:-1]))
            o[k] += o[-1]
            e[k] += e[-1]
            o, e = o[:-1], e[:-1]
    if e.shape[0] == 1:
        return 0.0, 1.0, 0
    if e.shape[0] == 2:
        res = stats.binomtest(int(round(o[0])), int(round(n)), float(e[0] / n))
        return float(abs(o[0] - e[0])), float(res.pvalue), 1
    stat, p = stats.power_divergence(o, e, lambda_="log-likelihood")
    return float(stat), float(p), int(e.shape[0] - 1)


@dataclass
class KvMResult:
    """Outcome of :func:`kernel_vs_matrix`; ``pvalues[k]`` belongs to ``rows[k]``."""

    name: str
    rows: np.ndarray
    pvalues: np.ndarray
    stats: np.ndarray
    reps: int
    alpha: float
    threshold: float = field(init=False)
    min_p: float = field(init=False)
    worst_row: int = field(init=False)
    passed: bool = field(init=False)

    def __post_init__(self) -> None:
        self.threshold = self.alpha / max(len(self.rows), 1)
        k = int(np.argmin(self.pvalues))
        self.min_p = float(self.pvalues[k])
        self.worst_row = int(self.rows[k])
        self.passed = bool(self.min_p > self.threshold)

    def row(self, check: str, paper: str, method: str, target: str) -> dict:
        """An ``exact``-table row (verify/checks.py EXACT_COLUMNS)."""
        return {
            "check": check,
            "paper": paper,
            "method": method,
            "target": target,
            "statistic": "min row p-value (G-test, Bonferroni)",
            "value": self.min_p,
            "threshold": self.threshold,
            "passed": self.passed,
            "detail": f"{len(self.rows)} rows x {self.reps} draws, FWER alpha={self.alpha:g}, "
            f"worst row {self.worst_row}",
        }


def kernel_vs_matrix(
    P: np.ndarray,
    sample_row: Callable[[int, np.random.Generator], np.ndarray],
    reps: int,
    seed: int | np.random.SeedSequence,
    alpha: float = ALPHA,
    rows: Sequence[int] | None = None,
    name: str = "",
) -> KvMResult:
    """G-test every row ``s`` of ``P`` against ``sample_row(s, rng)`` (counts of ``reps`` one-step
    transitions of the real kernel from state ``s``); Bonferroni over rows at FWER ``alpha``.

    Each row gets its own ``Generator`` spawned from ``SeedSequence(seed)`` (reproducible)."""
    P = np.asarray(P, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ValueError("P must be square")
    if reps < 1 or not 0 < alpha < 1:
        raise ValueError("reps must be >= 1 and alpha in (0, 1)")
    rows_arr = np.arange(P.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    children = ss.spawn(len(rows_arr))
    pv = np.empty(len(rows_arr))
    st = np.empty(len(rows_arr))
    for k, s in enumerate(rows_arr):
        counts = np.asarray(sample_row(int(s), np.random.default_rng(children[k])))
        if counts.sum() != reps:
            raise ValueError(f"sample_row returned {counts.sum()} draws, expected {reps}")
        st[k], pv[k], _ = g_test(counts, P[s])
    return KvMResult(name, rows_arr, pv, st, reps, alpha)


def state_counts(states: np.ndarray, X: np.ndarray, decimals: int = 9) -> np.ndarray:
    """Counts (S + 1,) of the rows of ``X`` (m, d) over the rows of ``states`` (S, d), compared after rounding
    to ``decimals`` (lattice points computed two ways differ in their last bits); the last cell counts rows
    that are no state. Duplicate states are a ValueError. Vectorised (``np.unique``)."""
    states = np.atleast_2d(np.asarray(states, dtype=np.float64))
    X = np.asarray(X, dtype=np.float64).reshape(-1, states.shape[1])
    S = states.shape[0]
    both = np.round(np.vstack([states, X]), decimals) + 0.0  # + 0.0: -0.0 -> 0.0
    _, inv = np.unique(both, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    if np.unique(inv[:S]).shape[0] < S:
        raise ValueError(f"states holds duplicate rows (after rounding to {decimals} decimals)")
    code_to_state = np.full(inv.max() + 1, S, dtype=np.int64)
    code_to_state[inv[:S]] = np.arange(S)
    return np.bincount(code_to_state[inv[S:]], minlength=S + 1)


def step_vs_matrix(
    step: Callable[[Any, np.random.Generator], Any],
    states: np.ndarray,
    P: np.ndarray,
    reps: int,
    seed: int | np.random.SeedSequence,
    *,
    init: Callable[[np.ndarray], Any] | None = None,
    position: Callable[[Any], np.ndarray] | None = None,
    n_steps: int = 1,
    batched: bool = False,
    alpha: float = ALPHA,
    rows: Sequence[int] | None = None,
    name: str = "",
) -> KvMResult:
    """:func:`kernel_vs_matrix` of any one-step function against the exact matrix ``P`` on ``states``.

    From each state ``x = states[s]``: ``state = init(x)`` (default: a copy of ``x``), ``n_steps`` times
    ``state = step(state, rng)``, then ``position(state)`` (default: the state itself) is one draw, counted by
    :func:`state_counts` (a draw that is no state lands in the extra cell and fails its row). The rows of
    ``P^n_steps`` are G-tested, Bonferroni over rows at family-wise false-alarm rate ``alpha`` (1e-4). Each
    row's Generator is spawned from ``SeedSequence(seed)``, so the result is a function of the seed.

    ``batched=True``: ``step(X, rng)`` gets the ``(reps, d)`` copies of ``x`` and returns their next states
    (``init`` / ``position`` not used): a compiled loop over your kernel, one call per row."""
    states = np.atleast_2d(np.asarray(states))
    S = states.shape[0]
    P = np.asarray(P, dtype=np.float64)
    if P.shape != (S, S):
        raise ValueError(f"P has shape {P.shape}, expected ({S}, {S}) for {S} states")
    if isinstance(n_steps, bool) or not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
        raise ValueError(f"n_steps must be an integer >= 1, got {n_steps!r}")
    if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or reps < 1:
        raise ValueError(f"reps must be an integer >= 1, got {reps!r}")
    if batched and (init is not None or position is not None):
        raise ValueError("batched=True takes no init / position (step maps (reps, d) states to their next)")
    Pn = np.linalg.matrix_power(P, int(n_steps)) if n_steps > 1 else P
    start = init if init is not None else (lambda x: x.copy())
    where = position if position is not None else (lambda st: st)
    d = states.shape[1]

    def sample_row(s: int, rng: np.random.Generator) -> np.ndarray:
        x0 = states[s]
        if batched:
            X = np.repeat(x0[None, :], reps, axis=0)
            for _ in range(n_steps):
                X = step(X, rng)
            X = np.asarray(X)
            if X.shape != (reps, d):
                raise ValueError(f"batched step returned shape {X.shape}, expected ({reps}, {d})")
        else:
            X = np.empty((reps, d), dtype=np.float64)
            for r in range(reps):
                st = start(x0.copy())
                for _ in range(n_steps):
                    st = step(st, rng)
                x = np.asarray(where(st))
                if x.shape != (d,):
                    raise ValueError(f"step / position gave a state of shape {x.shape}, expected ({d},)")
                X[r] = x
        return state_counts(states, X)

    return kernel_vs_matrix(Pn, sample_row, int(reps), seed, alpha=alpha, rows=rows, name=name)


# ============================================================================ state -> row maps
def lattice_counts(lat: Lattice, X: np.ndarray) -> np.ndarray:
    """Counts (S + 1,) of the rows of ``X`` (m, d) over the lattice states; the last cell counts
    points that are not states (off the lattice or the support). Vectorised."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    S = lat.ints.shape[0]
    k = np.rint((X - lat.lo) / lat.h).astype(np.int64)
    on = np.all(np.abs(lat.lo + lat.h * k - X) <= 1e-9 * max(1.0, lat.h), axis=1)
    kmin = lat.ints.min(axis=0)
    span = lat.ints.max(axis=0) - kmin + 1
    inside = on & np.all((k >= kmin) & (k < kmin + span), axis=1)
    strides = np.cumprod(np.concatenate([[1], span[:0:-1]]))[::-1]
    table = np.full(int(np.prod(span)), S, dtype=np.int64)
    table[(lat.ints - kmin) @ strides] = np.arange(S)
    idx = np.full(X.shape[0], S, dtype=np.int64)
    idx[inside] = table[(k[inside] - kmin) @ strides]
    return np.bincount(idx, minlength=S + 1)


def graph_counts(card: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Counts (S + 1,) of integer states ``X`` (m, n); last cell = values outside the domains."""
    card = np.asarray(card, dtype=np.int64)
    X = np.asarray(X, dtype=np.int64)
    S = int(np.prod(card))
    ok = np.all((X >= 0) & (X < card[None, :]), axis=1)
    idx = np.full(X.shape[0], S, dtype=np.int64)
    idx[ok] = state_index(card, X[ok])
    return np.bincount(idx, minlength=S + 1)


# ============================================================================ njit repeat loops
@njit(cache=True)
def repeat_mh_step(t: TallData, theta0, prop: int, sigma: float, h: float, K: int, rng, reps: int):
    """``reps`` independent one-step transitions of ``samplers.kernels.mh.mh_step`` from theta0."""
    d = theta0.shape[0]
    th0, g0, lp0 = mh_init(t, theta0, prop, 0.0)
    out = np.empty((reps, d))
    theta = np.empty(d)
    grad = np.empty(d)
    lp = np.empty(1)
    theta_p = np.empty(d)
    grad_p = np.zeros(d)
    for r in range(reps):
        theta[:] = th0
        grad[:] = g0
        lp[0] = lp0[0]
        mh_step(t, theta, grad, lp, prop, sigma, h, K, rng, theta_p, grad_p, 0.0)
        out[r] = theta
    return out


@njit(cache=True)
def repeat_mh_steps(
    t: TallData, theta0, prop: int, sigma: float, h: float, K: int, n_steps: int, rng, reps: int
):
    """``reps`` independent runs of ``n_steps`` ``mh_step`` calls from theta0 (compare with the
    rows of ``P^n_steps``; catches bugs in the state carried between steps)."""
    d = theta0.shape[0]
    th0, g0, lp0 = mh_init(t, theta0, prop, 0.0)
    out = np.empty((reps, d))
    theta = np.empty(d)
    grad = np.empty(d)
    lp = np.empty(1)
    theta_p = np.empty(d)
    grad_p = np.zeros(d)
    for r in range(reps):
        theta[:] = th0
        grad[:] = g0
        lp[0] = lp0[0]
        for _ in range(n_steps):
            mh_step(t, theta, grad, lp, prop, sigma, h, K, rng, theta_p, grad_p, 0.0)
        out[r] = theta
    return out


@njit(cache=True)
def repeat_gibbs_steps(fg: FactorGraph, x0, counter0: int, scan: int, n_steps: int, rng, reps: int):
    """``reps`` independent runs of ``n_steps`` ``gibbs_step`` calls from (x0, counter0)."""
    x, counter = gibbs_init(fg, x0)
    out = np.empty((reps, fg.n), dtype=np.int64)
    logits = np.empty(fg.card.max())
    for r in range(reps):
        x[:] = x0
        counter[0] = counter0
        for _ in range(n_steps):
            gibbs_step(fg, x, counter, scan, rng, logits)
        out[r] = x
    return out


# ============================================================================ row samplers
def mh_lattice_row_sampler(
    model: TallData,
    lat: Lattice,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    reps: int,
    repeat: Callable = repeat_mh_step,
) -> Callable[[int, np.random.Generator], np.ndarray]:
    """``sample_row`` for a lattice MH kernel; ``repeat`` is any njit loop with the signature of
    :func:`repeat_mh_step` (mutants pass theirs). Called from Python, never passed into njit."""

    def sample_row(s: int, rng: np.random.Generator) -> np.ndarray:
        X = repeat(model, lat.points[s].copy(), prop, float(sigma), float(h), int(K), rng, reps)
        return lattice_counts(lat, X)

    return sample_row


def mh_lattice_multistep_row_sampler(
    model: TallData,
    lat: Lattice,
    prop: int,
    sigma: float,
    h: float,
    K: int,
    n_steps: int,
    reps: int,
    repeat: Callable = repeat_mh_steps,
) -> Callable[[int, np.random.Generator], np.ndarray]:
    """``sample_row`` for ``n_steps`` MH steps (compare with ``np.linalg.matrix_power(P, n)``)."""

    def sample_row(s: int, rng: np.random.Generator) -> np.ndarray:
        X = repeat(model, lat.points[s].copy(), prop, float(sigma), float(h), int(K), int(n_steps), rng, reps)
        return lattice_counts(lat, X)

    return sample_row


def gibbs_row_sampler(
    fg: FactorGraph,
    states: np.ndarray,
    scan: int,
    counter0: int,
    n_steps: int,
    reps: int,
    repeat: Callable = repeat_gibbs_steps,
) -> Callable[[int, np.random.Generator], np.ndarray]:
    """``sample_row`` for Gibbs: ``n_steps`` steps from state ``states[s]`` with the scan counter
    at ``counter0`` (systematic scan: site ``counter0 % n`` first)."""

    def sample_row(s: int, rng: np.random.Generator) -> np.ndarray:
        X = repeat(fg, states[s].copy(), int(counter0), int(scan), int(n_steps), rng, reps)
        return graph_counts(fg.card, X)

    return sample_row
