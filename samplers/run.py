"""Generic driver: validate, compile (timed apart), run the compiled chain in chunks, time it.

Every method's Python wrapper calls :func:`drive` with its njit ``init`` and ``sample`` functions.
Chunking only serves the progress bar: the state is explicit and carried between chunks, so the
result is bit-identical to one long call with the same seed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from samplers.problem import Problem
from samplers.result import ChainResult

_COMPILED: set[tuple[int, str]] = set()

Progress = Callable[[int], None] | None


def as_generator(seed: int | np.random.SeedSequence | np.random.Generator) -> tuple[np.random.Generator, str]:
    """Generator + a printable seed (entropy and spawn key) for the result row."""
    if isinstance(seed, np.random.Generator):
        ss = seed.bit_generator.seed_seq
        return seed, f"{ss.entropy}:{list(ss.spawn_key)}"
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed), f"{seed.entropy}:{list(seed.spawn_key)}"
    if isinstance(seed, (int, np.integer)) and seed >= 0:
        return np.random.default_rng(int(seed)), f"{int(seed)}:[]"
    raise ValueError(f"seed must be a non-negative int, SeedSequence or Generator, got {seed!r}")


def check_positive(name: str, value: float, integer: bool = False, allow_zero: bool = False) -> None:
    """Raise ValueError unless ``value`` is a finite positive (or >= 0) number (int if asked; a bool is
    not a number here: ``step=True`` is a mistake, not 1)."""
    ok = (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )
    if ok and integer:
        ok = float(value) == int(value)
    if ok:
        ok = value >= 0 if allow_zero else value > 0
    if not ok:
        kind = "integer" if integer else "number"
        sign = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite {kind} {sign}, got {value!r}")


def check_step(name: str, value: float) -> None:
    """A proposal scale: :func:`check_positive`, and its square (the Gaussian / Langevin variance) must
    neither underflow to 0 nor overflow (a step of 1e-200 divided by zero inside the kernels)."""
    check_positive(name, value)
    sq = float(value) * float(value)
    if not (0.0 < sq < math.inf):
        raise ValueError(f"{name} = {value!r}: its square {sq!r} underflows to 0 or overflows")


def check_lattice(proposal: str, h: float, K: int) -> None:
    """The lattice proposal's spacing ``h`` and half-width ``K``, checked whatever the proposal (the Gaussian
    ignores them, but they are recorded with the run): h finite (> 0 for "lattice", else >= 0), K an
    integer >= 1."""
    check_positive("h", h, allow_zero=proposal != "lattice")
    check_positive("K", K, integer=True)


def outside_support(model: Any, x: np.ndarray) -> str | None:
    """Why state ``x`` lies outside the target's support (None if inside or unknown): the target's own
    log prior / domain (tall data: ``log_prior == -inf``; Ising parameter: ``[lo, hi]``; factor graphs:
    ``0 <= x_i < card_i``; continuous spins: the box and the tall prior). O(d), once per run."""
    from samplers.targets import continuous_spin, factor_graph, ising_param, tall

    if isinstance(model, tall.TallData):
        if tall.log_prior(model, np.ascontiguousarray(x, dtype=np.float64)) == -np.inf:
            where = {
                tall.SUPPORT_BOX: f": the box [{model.lo}, {model.hi}]^d",
                tall.SUPPORT_BALL: f": the ball ||theta|| <= {model.R}",
            }
            return f"its log prior is -inf (outside the target's support{where.get(model.support, '')})"
    elif isinstance(model, ising_param.IsingParam):
        if not np.all((x >= model.lo) & (x <= model.hi)):
            return f"theta is outside the prior support [lo, hi] = [{model.lo}, {model.hi}]"
    elif isinstance(model, factor_graph.FactorGraph):
        if np.any(x != np.round(x)) or np.any((x < 0) | (x >= model.card)):
            return "a variable is not an integer in its domain 0 <= x_i < card_i"
    elif isinstance(model, continuous_spin.ContinuousModel):
        xf = np.ascontiguousarray(x, dtype=np.float64)
        if np.any((xf < model.lo) | (xf > model.hi)) or continuous_spin.log_prior_c(model, xf) == -np.inf:
            return f"it is outside the box [{model.lo}, {model.hi}] or the log prior is -inf"
    return None


def check_state(problem: Problem, x0: np.ndarray | None, rng: np.random.Generator) -> np.ndarray:
    """Initial state: given or drawn by ``problem.init``; must be numeric, finite, of the right shape and
    inside the target's support (:func:`outside_support`: a chain started outside would be stuck or
    forced to its first move)."""
    x = problem.init(rng) if x0 is None else np.array(x0, copy=True)
    if x.dtype.kind not in "iuf":
        raise TypeError(f"initial state x0 must be an int or float array, got dtype {x.dtype} ({x0!r:.80})")
    if x.shape != (problem.dim,):
        raise ValueError(f"initial state must have shape ({problem.dim},), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("initial state contains NaN or inf")
    why = outside_support(problem.model, x)
    if why is not None:
        src = "x0" if x0 is not None else f"{problem.name}'s init draw"
        raise ValueError(f"initial state ({src}) {np.array2string(x, threshold=8)}: {why}")
    return x


def drive(
    method: str,
    problem: Problem,
    n_iter: int,
    seed: int | np.random.SeedSequence | np.random.Generator,
    init_fn: Callable,
    init_args: Sequence[Any],
    sample_fn: Callable,
    sample_args: Sequence[Any],
    *,
    thin: int = 1,
    x0: np.ndarray | None = None,
    progress: Progress = None,
    hyper: dict[str, Any] | None = None,
    n_chunks: int = 50,
    finalize: Callable[[tuple, ChainResult], None] | None = None,
) -> ChainResult:
    """Run ``sample_fn(model, *state, n, *sample_args, rng, thin)`` for ``n_iter`` iterations.

    ``init_fn(model, x0, *init_args)`` must return the state tuple (arrays mutated in place by
    ``sample_fn``). ``sample_fn`` returns ``(samples, accepted, n_evals)`` or a longer tuple whose
    extra per-iteration arrays are concatenated into ``result.extra["trace_k"]``.
    """
    check_positive("n_iter", n_iter, integer=True)
    check_positive("thin", thin, integer=True)
    if hyper and "step" in hyper:  # every method's proposal scale, whatever its wrapper checked
        check_step("step", hyper["step"])
    if n_iter < thin:
        raise ValueError(f"n_iter ({n_iter}) must be >= thin ({thin})")
    rng, seed_str = as_generator(seed)
    x = check_state(problem, x0, rng)
    model = problem.model
    # --- compile (or load from cache) on a throwaway state and RNG; timed apart from sampling
    key = (id(sample_fn), type(model).__name__)
    t0 = time.perf_counter()
    if key not in _COMPILED:
        wstate = init_fn(model, x.copy(), *init_args)
        sample_fn(model, *wstate, thin, *sample_args, np.random.default_rng(0), thin)
        _COMPILED.add(key)
    compile_s = time.perf_counter() - t0
    # --- sample
    state = init_fn(model, x, *init_args)
    chunk = max(thin, int(math.ceil(n_iter / n_chunks / thin)) * thin)
    parts: list[tuple] = []
    done = 0
    elapsed = 0.0
    while done < n_iter:
        n = min(chunk, n_iter - done)
        t1 = time.perf_counter()
        out = sample_fn(model, *state, n, *sample_args, rng, thin)
        elapsed += time.perf_counter() - t1
        parts.append(out)
        done += n
        if progress is not None:
            progress(n)
    cat = [np.concatenate([p[k] for p in parts]) for k in range(len(parts[0]))]
    samples, accepted, n_evals = cat[:3]
    if samples.dtype.kind == "f" and not np.all(np.isfinite(samples)):
        raise FloatingPointError(f"{method}: chain produced NaN/inf states")
    res = ChainResult(
        method=method,
        target=problem.name,
        seed=seed_str,
        n_iter=int(n_iter),
        thin=int(thin),
        samples=samples,
        accepted=accepted,
        n_evals=n_evals,
        sample_seconds=elapsed,
        compile_seconds=compile_s,
        hyper=dict(hyper or {}),
    )
    for k, arr in enumerate(cat[3:]):
        res.extra[f"trace_{k}"] = arr
    if finalize is not None:
        finalize(state, res)
    return res
