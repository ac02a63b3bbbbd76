"""Generic driver: validate, compile (timed apart), run the compiled chain in chunks, time it.

Every method's Python wrapper calls :func:`drive` with its njit ``init`` and ``sample`` functions.
Chunking serves the progress bar and Ctrl-C (chunks of at most ~``CHUNK_SECONDS``): the state is explicit
and carried between chunks, so the result is bit-identical to one long call with the same seed. A result
that would not fit in memory is refused before anything runs (:func:`check_result_size`).

Progress (the ``progress`` argument of every method and of ``samplers.registry.run``): ``None`` (the
default) shows a one-line progress report on stderr once a run has taken ``PROGRESS_AFTER`` seconds, if
stderr is a terminal and not under pytest (so tests and workflow jobs, whose stderr goes to a log, stay
quiet; ``MCMC_BENCH_PROGRESS=0`` turns it off, ``=1`` on whatever stderr is); ``False`` turns it off; a
callable receives the iterations of each finished chunk (the CLI's progress bar).
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from samplers.problem import Problem
from samplers.result import ChainResult

_COMPILED: set[tuple[int, str]] = set()

Progress = Callable[[int], None] | bool | None
PROGRESS_AFTER = 3.0  # seconds of sampling before the automatic progress line appears


def auto_progress_enabled() -> bool:
    """Whether ``progress=None`` shows the automatic progress line (see the module docstring)."""
    env = os.environ.get("MCMC_BENCH_PROGRESS")
    if env is not None:
        return env not in ("", "0")
    if "PYTEST_CURRENT_TEST" in os.environ:
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _AutoProgress:
    """The automatic progress line: ``method: done/total iterations (pct), elapsed, ETA`` on stderr, rewritten
    in place at most ~twice a second, from ``PROGRESS_AFTER`` seconds into the run; ``note`` (e.g. the
    expected minibatch size beside N) is printed once, when the line first appears."""

    def __init__(self, method: str, n_iter: int, note: str | None) -> None:
        self.method, self.n_iter, self.note = method, n_iter, note
        self.done = 0
        self.t0 = time.perf_counter()
        self.shown = False
        self.last = 0.0

    def __call__(self, n: int) -> None:
        self.done += n
        now = time.perf_counter()
        el = now - self.t0
        if el < PROGRESS_AFTER or (now - self.last < 0.5 and self.done < self.n_iter):
            return
        if not self.shown and self.note:
            print(f"{self.method}: {self.note}", file=sys.stderr)
        self.shown = True
        self.last = now
        eta = el * (self.n_iter - self.done) / max(self.done, 1)
        end = "\n" if self.done >= self.n_iter else ""
        print(
            f"\r{self.method}: {self.done}/{self.n_iter} iterations ({100 * self.done / self.n_iter:.0f} %), "
            f"{el:.0f} s, ETA {eta:.0f} s ",
            end=end,
            file=sys.stderr,
            flush=True,
        )


def resolve_progress(progress: Progress, method: str, n_iter: int, note: str | None = None):
    """The callable ``drive`` calls per chunk (None: no progress) for a ``progress`` argument."""
    if progress is False:
        return None
    if progress is None or progress is True:
        return _AutoProgress(method, n_iter, note) if (progress or auto_progress_enabled()) else None
    if not callable(progress):
        raise ValueError(f"progress must be None, True, False or a callable, got {progress!r:.80}")
    return progress


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


def _check_model(model: Any, method: str) -> None:
    """A tall-data target must have per-datum functions for its kind (every tall-data method evaluates a
    ``CUSTOM`` model through the one dispatch of :mod:`samplers.targets.likelihoods`)."""
    from samplers.targets import tall

    if isinstance(model, tall.TallData):
        tall.check_target(model)


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


CHUNK_SECONDS = 0.25  # target wall time of a chunk: progress updates and Ctrl-C take effect within ~1 s
FIRST_CHUNK = 2000  # the first chunk's iterations at most, before the chain's rate is measured
# bytes a result row costs beyond its stored draw: accepted (1), n_evals (8), one 8-byte extra trace
ROW_BYTES = 17
MEMORY_FRACTION = 0.9  # of the memory available when the run starts
SMALL_RESULT = 1 << 26  # bytes: results below 64 MB are not checked


class ResultTooLarge(ValueError):
    """The run's result arrays would not fit in the memory available (raised before sampling)."""


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``; else the free physical
    pages), None if unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def result_bytes(n_iter: int, thin: int, dim: int) -> int:
    """Estimated size of a run's result arrays: ``n_iter // thin`` stored draws of ``dim`` 8-byte values
    and ``ROW_BYTES`` per iteration (acceptance flag, batch size, one extra trace)."""
    return (n_iter // thin) * dim * 8 + n_iter * ROW_BYTES


def _gb(n: float) -> str:
    return f"{n / 1e9:.3g} GB" if n >= 1e8 else f"{n / 1e6:.3g} MB"


def check_result_size(n_iter: int, thin: int, dim: int, available: int | None = None) -> None:
    """:class:`ResultTooLarge` (a ValueError naming the size and the way out) if the result of ``n_iter``
    iterations thinned by ``thin`` at dimension ``dim`` (:func:`result_bytes`) exceeds
    ``MEMORY_FRACTION`` of the available memory. O(1), before anything is compiled or sampled."""
    need = result_bytes(n_iter, thin, dim)
    if need < SMALL_RESULT and available is None:  # no /proc read for the many small runs (pilots, tests)
        return
    have = available_memory() if available is None else available
    if have is None or need <= MEMORY_FRACTION * have:
        return
    cap = MEMORY_FRACTION * have
    fit = int(cap / (dim * 8 / thin + ROW_BYTES)) // thin * thin  # iterations that fit at this thin
    per_iter = n_iter * ROW_BYTES  # the per-iteration traces are not thinned
    way = f"run fewer iterations (at most ~{fit} at thin = {thin})"
    if per_iter >= cap:
        way += f"; --thin cannot help: the per-iteration traces alone need ~{_gb(per_iter)}"
    else:
        need_thin = max(thin + 1, math.ceil(n_iter * dim * 8 / (cap - per_iter)))
        way = f"store fewer draws (--thin / thin= {need_thin} or more) or " + way
    raise ResultTooLarge(
        f"the result of n_iter = {n_iter} iterations (thin = {thin}, d = {dim}) needs ~{_gb(need)} of memory "
        f"({n_iter // thin} stored draws of {dim} values + {ROW_BYTES} bytes per iteration), more than the "
        f"{_gb(have)} available: {way}"
    )


class _SigintGuard:
    """While active (main thread only, and only if SIGINT has Python's default handler), Ctrl-C sets a
    flag instead of raising inside the compiled loop (where it surfaces as a ``SystemError`` of the
    dispatcher); :meth:`check` raises ``KeyboardInterrupt`` between chunks."""

    def __init__(self) -> None:
        self.hit = False
        self.prev = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                self.prev = signal.signal(signal.SIGINT, self._handler)
        return self

    def _handler(self, signum, frame) -> None:
        self.hit = True

    def check(self) -> None:
        if self.hit:
            self.hit = False
            raise KeyboardInterrupt

    def __exit__(self, *exc) -> None:
        if self.prev is not None:
            signal.signal(signal.SIGINT, self.prev)
        if exc[0] is None:
            self.check()


def next_chunk(done: int, n_iter: int, thin: int, base: int, rate: float | None) -> int:
    """Iterations of the next chunk: ``base`` (``n_iter / n_chunks`` rounded up to whole ``thin``), the first
    at most ``FIRST_CHUNK`` and the later ones at most ``CHUNK_SECONDS`` at the measured ``rate`` (seconds per
    iteration), always a multiple of ``thin`` (so a chain run in chunks equals one long run) and >= thin."""
    n = base
    if rate is None:
        n = min(n, max(thin, -(-FIRST_CHUNK // thin) * thin))
    elif rate > 0:
        n = min(n, max(thin, int(CHUNK_SECONDS / rate) // thin * thin))
    return min(n, n_iter - done)


class _ChunkSink:
    """The chunks' outputs written into result arrays allocated once, at the first chunk (a per-iteration
    output of ``n_iter`` rows, a per-draw one of ``n_iter // thin``), so a run needs its result's memory
    and one chunk's, not twice the result's; an output of any other length is concatenated."""

    def __init__(self, n_iter: int, thin: int) -> None:
        self.n_iter, self.thin = n_iter, thin
        self.out: list[np.ndarray | list[np.ndarray]] = []
        self.step: list[int] = []

    def add(self, parts: tuple, done: int, n: int) -> None:
        if not self.out:
            for a in parts:
                per = 1 if a.shape[0] == n else self.thin if a.shape[0] == n // self.thin else 0
                self.step.append(per)
                self.out.append(np.empty((self.n_iter // per,) + a.shape[1:], a.dtype) if per else [])
        for a, per, dst in zip(parts, self.step, self.out, strict=True):
            if per:
                dst[done // per : done // per + a.shape[0]] = a
            else:
                dst.append(a)

    def arrays(self) -> list[np.ndarray]:
        return [o if isinstance(o, np.ndarray) else np.concatenate(o) for o in self.out]


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
    setup_check: Callable[[Any, np.ndarray], None] | None = None,
    note: str | None = None,
) -> ChainResult:
    """Run ``sample_fn(model, *state, n, *sample_args, rng, thin)`` for ``n_iter`` iterations.

    ``init_fn(model, x0, *init_args)`` must return the state tuple (arrays mutated in place by
    ``sample_fn``). ``sample_fn`` returns ``(samples, accepted, n_evals)`` or a longer tuple whose
    extra per-iteration arrays are concatenated into ``result.extra["trace_k"]``. ``setup_check(model,
    x)`` (optional) validates the initial state ``x`` before anything is compiled or sampled (e.g. a
    bound at every datum, O(N)). ``progress``: see the module docstring; ``note`` is a one-line fact
    about the run (e.g. the expected minibatch size beside N) shown with the automatic progress line.
    A tall-data target is checked to have per-datum functions for its kind
    (:func:`samplers.targets.tall.check_target`).

    Before compiling: the result's size is checked against the available memory
    (:func:`check_result_size`). The chain runs in ``n_chunks`` chunks, each at most ~``CHUNK_SECONDS``
    long; Ctrl-C takes effect at the end of a chunk as a ``KeyboardInterrupt`` (:class:`_SigintGuard`).
    """
    check_positive("n_iter", n_iter, integer=True)
    check_positive("thin", thin, integer=True)
    check_positive("n_chunks", n_chunks, integer=True)
    n_iter, thin = int(n_iter), int(thin)
    if hyper and "step" in hyper:  # every method's proposal scale, whatever its wrapper checked
        check_step("step", hyper["step"])
    if n_iter < thin:
        raise ValueError(f"n_iter ({n_iter}) must be >= thin ({thin})")
    check_result_size(n_iter, thin, problem.dim)
    rng, seed_str = as_generator(seed)
    model = problem.model
    _check_model(model, method)
    x = check_state(problem, x0, rng)
    progress = resolve_progress(progress, method, n_iter, note)
    if setup_check is not None:
        setup_check(model, x)
    with _SigintGuard() as guard:
        # --- compile (or load from cache) on a throwaway state and RNG; timed apart from sampling
        key = (id(sample_fn), type(model).__name__)
        t0 = time.perf_counter()
        if key not in _COMPILED:
            wstate = init_fn(model, x.copy(), *init_args)
            sample_fn(model, *wstate, thin, *sample_args, np.random.default_rng(0), thin)
            _COMPILED.add(key)
        compile_s = time.perf_counter() - t0
        guard.check()
        if isinstance(progress, _AutoProgress):
            progress.t0 = time.perf_counter()  # the line reports sampling time, not compilation
        # --- sample, in chunks written into the result arrays (allocated once, after the first chunk)
        state = init_fn(model, x, *init_args)
        base = max(thin, int(math.ceil(n_iter / n_chunks / thin)) * thin)
        sink = _ChunkSink(n_iter, thin)
        done = 0
        elapsed = 0.0
        rate = None
        while done < n_iter:
            n = next_chunk(done, n_iter, thin, base, rate)
            t1 = time.perf_counter()
            out = sample_fn(model, *state, n, *sample_args, rng, thin)
            dt = time.perf_counter() - t1
            elapsed += dt
            rate = dt / n
            sink.add(out, done, n)
            done += n
            guard.check()
            if progress is not None:
                progress(n)
    cat = sink.arrays()
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
