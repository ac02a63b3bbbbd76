"""Machine-noise-robust performance regression gate (docs/performance.md §2).

Every kernel's per-iteration time (``ChainResult.sample_seconds / n_iter``, compile excluded, the
minimum over rounds) is divided by the time of a fixed **calibration kernel** (a dense N x d
dot-product loop, :func:`calibration_kernel`) measured right next to it in the same process. That
ratio ("normalised time") is what the committed baseline stores, so a slower or faster machine
cancels out (ionelmc's "control benchmark"; GDAL's same-runner A/B). A kernel **regresses** when

    normalised_now > threshold * normalised_baseline     (threshold = 2.0 by default)

in the first measurement *and* in one re-measurement of the failing kernels (GDAL's single retry); the
verdict uses the smaller of the two measurements, so one preempted run cannot fail the gate while a
real slowdown (present in both) does. Methods absent from the baseline pass with status ``new``;
baseline entries not measured are reported as ``missing`` (not a failure).

Refresh the baseline deliberately (docs/performance.md): ``MCMC_PERF_UPDATE_BASELINE=1 pytest
tests/benchmarks/test_bench_registry.py --benchmark-enable --benchmark-only -p no:xdist``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from samplers.result import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
BASELINE_DIR = ROOT / "tests" / "benchmarks" / "baseline"
# the baseline of LLVM CPU kind `rocketlake` (Intel VMs); other kinds: registry_baseline_<cpu>.json
BASELINE_PATH = BASELINE_DIR / "registry_baseline.json"
SCHEMA = 1
DEFAULT_THRESHOLD = 2.0

# ============================================================================ calibration kernel
CALIB_N = 20_000
CALIB_D = 20
CALIB_REPS = 10


@njit(cache=True)
def calibration_kernel(X: np.ndarray, theta: np.ndarray, reps: int) -> float:
    """Fixed workload: ``reps`` passes of the dense product X @ theta with a data-dependent update of
    theta (so the compiler cannot hoist it) -- the same memory/FMA mix as a full-batch likelihood."""
    n, d = X.shape
    acc = 0.0
    for _ in range(reps):
        for i in range(n):
            s = 0.0
            for j in range(d):
                s += X[i, j] * theta[j]
            acc += s
        theta[0] = 1.0 + 1e-12 * acc
    return acc


_CALIB_DATA: dict[str, np.ndarray] = {}


def _calib_data() -> tuple[np.ndarray, np.ndarray]:
    if not _CALIB_DATA:
        rng = np.random.default_rng(12345)
        _CALIB_DATA["X"] = rng.standard_normal((CALIB_N, CALIB_D))
        _CALIB_DATA["theta"] = rng.standard_normal(CALIB_D)
    return _CALIB_DATA["X"], _CALIB_DATA["theta"]


def calibration_once() -> float:
    """CPU seconds (``time.process_time``) of one calibration call (``CALIB_REPS`` passes over
    20000 x 20); compiled first. CPU time, not wall time, so time slices lost to other processes on a
    shared machine do not count (GDAL's choice for VMs)."""
    X, theta = _calib_data()
    calibration_kernel(X, theta, 1)  # compile / load from cache (no-op cost after the first call)
    t0 = time.process_time()
    calibration_kernel(X, theta, CALIB_REPS)
    return time.process_time() - t0


def calibration_seconds(rounds: int = 5) -> float:
    """Minimum over ``rounds`` calls of :func:`calibration_once`."""
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    return min(calibration_once() for _ in range(rounds))


# ============================================================================ pure comparison logic
@dataclass(frozen=True)
class Verdict:
    """Outcome for one kernel. ``ratio`` = current / baseline normalised time."""

    key: str
    status: str  # ok | regression | faster | new | missing
    baseline: float | None
    current: float | None
    ratio: float | None


@dataclass
class GateResult:
    verdicts: list[Verdict]
    threshold: float
    retried: list[str] = field(default_factory=list)
    first_pass: dict[str, float] = field(default_factory=dict)

    @property
    def regressions(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status == "regression"]

    @property
    def passed(self) -> bool:
        return not self.regressions

    def report(self) -> str:
        """Human-readable table of all verdicts (regressions first)."""
        order = {"regression": 0, "faster": 1, "new": 2, "missing": 3, "ok": 4}
        lines = [
            f"perf gate: threshold {self.threshold:g}x baseline (normalised by the calibration "
            f"kernel); retried: {', '.join(self.retried) or '-'}"
        ]
        for v in sorted(self.verdicts, key=lambda v: (order[v.status], v.key)):
            r = "" if v.ratio is None else f"{v.ratio:6.2f}x"
            b = "" if v.baseline is None else f"{v.baseline:.4g}"
            c = "" if v.current is None else f"{v.current:.4g}"
            lines.append(f"  {v.status:10s} {v.key:40s} base={b:>10s} now={c:>10s} {r}")
        return "\n".join(lines)


def _check_threshold(threshold: float) -> float:
    if not (isinstance(threshold, (int, float)) and math.isfinite(threshold) and threshold > 1.0):
        raise ValueError(f"threshold must be a finite number > 1, got {threshold!r}")
    return float(threshold)


def _check_times(name: str, times: Mapping[str, float]) -> None:
    for k, v in times.items():
        if not (isinstance(v, (int, float, np.floating)) and math.isfinite(v) and v > 0):
            raise ValueError(f"{name}[{k!r}] must be a finite positive time, got {v!r}")


def compare(
    current: Mapping[str, float], baseline: Mapping[str, float], threshold: float = DEFAULT_THRESHOLD
) -> list[Verdict]:
    """Verdicts for normalised times ``current`` vs ``baseline`` (both ``key -> normalised time``).

    ``regression`` if current > threshold * baseline; ``faster`` if current < baseline / threshold
    (informational: refresh the baseline); ``new`` / ``missing`` for keys on one side only."""
    threshold = _check_threshold(threshold)
    _check_times("current", current)
    _check_times("baseline", baseline)
    out = []
    for k in sorted(set(current) | set(baseline)):
        c, b = current.get(k), baseline.get(k)
        if b is None:
            out.append(Verdict(k, "new", None, float(c), None))
        elif c is None:
            out.append(Verdict(k, "missing", float(b), None, None))
        else:
            r = float(c) / float(b)
            status = "regression" if r > threshold else ("faster" if r < 1.0 / threshold else "ok")
            out.append(Verdict(k, status, float(b), float(c), r))
    return out


def gate(
    current: Mapping[str, float],
    baseline: Mapping[str, float],
    remeasure: Callable[[list[str]], Mapping[str, float]] | None,
    threshold: float = DEFAULT_THRESHOLD,
    retries: int = 1,
) -> GateResult:
    """Compare, then re-measure only the regressed kernels up to ``retries`` times, keeping for each
    kernel the minimum normalised time seen (noise only ever adds time; a real regression stays)."""
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    best = dict(current)
    verdicts = compare(best, baseline, threshold)
    res = GateResult(verdicts, float(threshold), first_pass=dict(current))
    for _ in range(retries):
        failing = [v.key for v in verdicts if v.status == "regression"]
        if not failing or remeasure is None:
            break
        again = remeasure(failing)
        _check_times("remeasured", again)
        for k in failing:
            if k in again:
                best[k] = min(best[k], float(again[k]))
        res.retried.extend(failing)
        verdicts = compare(best, baseline, threshold)
    res.verdicts = verdicts
    return res


# ============================================================================ baseline file
@dataclass
class Entry:
    """One measured kernel: enough to rerun it identically and compare it."""

    key: str
    method: str
    family: str
    target: str
    target_params: dict[str, Any]
    scale: str
    n_iter: int
    thin: int
    sec_per_iter: float  # min over rounds of sample_seconds / n_iter (compiled loop, wall clock)
    cpu_per_iter: float  # min over rounds of compiled-loop CPU time / n_iter (what the gate uses)
    calib_seconds: float  # min over rounds of the calibration kernel's CPU time
    normalised: float  # cpu_per_iter / calib_seconds
    mean_batch: float  # E[B]: mean per-datum / per-factor evaluations per iteration
    sec_per_iter_median: float = float("nan")
    gated: bool = True  # False if a round is too short to time reliably (reported, not gated)


def host_cpu() -> str:
    """LLVM's name of this CPU (what Numba compiles for, e.g. ``rocketlake``, ``znver5``). Baselines are kept
    per CPU kind: the calibration kernel cancels a faster or slower machine of one kind, not another
    microarchitecture (an AMD Zen 5 VM runs the streaming calibration ~2.5x faster than the Intel VMs and the
    branchy Gibbs kernels no faster, which read as 2-4.7x "regressions": docs/performance.md §2)."""
    from llvmlite import binding as llvm

    return str(llvm.get_host_cpu_name())


def baseline_files(directory: str | os.PathLike = BASELINE_DIR) -> dict[str, Path]:
    """``{LLVM CPU name: path}`` of the committed baselines (``registry_baseline*.json``), each naming its
    CPU kind in ``machine.llvm_cpu``; ValueError if one does not or two name the same kind."""
    out: dict[str, Path] = {}
    for p in sorted(Path(directory).glob("registry_baseline*.json")):
        try:
            cpu = json.loads(p.read_text()).get("machine", {}).get("llvm_cpu")
        except json.JSONDecodeError as e:
            raise ValueError(f"baseline {p} is not valid JSON: {e}") from None
        if not cpu:
            raise ValueError(f"baseline {p}: machine.llvm_cpu is missing")
        if cpu in out:
            raise ValueError(f"baselines {out[cpu]} and {p} are both for CPU kind {cpu!r}")
        out[cpu] = p
    return out


def host_baseline_path(directory: str | os.PathLike = BASELINE_DIR) -> Path:
    """This CPU kind's baseline file: the committed one, else where a refresh on this machine writes it."""
    cpu = host_cpu()
    return baseline_files(directory).get(cpu, Path(directory) / f"registry_baseline_{cpu}.json")


def machine_info() -> dict[str, Any]:
    import numba

    return {
        "llvm_cpu": host_cpu(),
        "node": platform.node(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numpy": np.__version__,
        "cpus": os.cpu_count(),
        "processor": platform.processor(),
    }


def save_baseline(
    entries: Iterable[Entry],
    path: str | os.PathLike = BASELINE_PATH,
    threshold: float = DEFAULT_THRESHOLD,
    note: str = "",
) -> Path:
    """Write the baseline JSON atomically (sorted keys so diffs stay readable)."""
    doc = {
        "schema": SCHEMA,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "note": note,
        "threshold": _check_threshold(threshold),
        "machine": machine_info(),
        "calibration": {"N": CALIB_N, "d": CALIB_D, "reps": CALIB_REPS},
        "entries": {e.key: asdict(e) for e in sorted(entries, key=lambda e: e.key)},
    }
    return atomic_write_text(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def load_baseline(path: str | os.PathLike = BASELINE_PATH) -> dict[str, Entry]:
    """Entries of a baseline file; ``{}`` if it does not exist; ValueError if malformed."""
    p = Path(path)
    if not p.exists():
        return {}
    try:
        doc = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"baseline {p} is not valid JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("entries"), dict):
        raise ValueError(f"baseline {p}: expected schema {SCHEMA} with an 'entries' object")
    cal = doc.get("calibration", {})
    if cal and (cal.get("N"), cal.get("d"), cal.get("reps")) != (CALIB_N, CALIB_D, CALIB_REPS):
        raise ValueError(f"baseline {p} was made with another calibration kernel {cal}; refresh it")
    out = {}
    for k, e in doc["entries"].items():
        try:
            out[k] = Entry(**e)
        except TypeError as err:
            raise ValueError(f"baseline {p}: bad entry {k!r}: {err}") from None
    return out


def normalised_map(entries: Mapping[str, Entry]) -> dict[str, float]:
    return {k: e.normalised for k, e in entries.items()}


# ============================================================================ measuring registered methods
# Standard small problem per problem space (first one the method accepts is used); spaces not listed
# fall back to every data-free registered target of that space at smoke scale.
STANDARD_PROBLEMS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "continuous": [
        ("truncated_gaussian", {"N": 10_000, "d": 10, "beta": 1e-4}),  # N beta = 1 (Yuan & Wang 2024 §5.1)
        ("robust_regression", {"N": 10_000, "d": 5, "beta": 1e-3}),  # N beta = 10 as in §5.2
    ],
    "discrete": [
        ("potts_20x20", {"rows": 8, "cols": 8}),  # Zhang & De Sa 2019 §4.1 couplings, 64 vars, 2016 factors
        ("potts_grid", {"rows": 8, "cols": 8, "D": 3}),
    ],
}
# Paper scale (opt-in, marker benchmark_large): every method runs on every listed target it accepts.
LARGE_PROBLEMS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "continuous": [("truncated_gaussian", {}), ("robust_regression", {})],  # d=20 N=1e5; d=10 N=1e5
    "discrete": [("potts_20x20", {})],  # 20x20, D=10, beta=4.6
}

_PROBLEMS: dict[str, Any] = {}


def get_problem(target: str, params: Mapping[str, Any], scale: str = "paper"):
    """Build (once per process, seed 0) the registered target ``target`` with ``params``."""
    from samplers import registry

    key = json.dumps([target, dict(params), scale], sort_keys=True)
    if key not in _PROBLEMS:
        _PROBLEMS[key] = registry.build_problem(target, 0, scale=scale, **dict(params))
    return _PROBLEMS[key]


def problem_candidates(
    space: str, table: Mapping[str, list] | None = None
) -> list[tuple[str, dict[str, Any], str]]:
    """(target, params, scale) candidates for ``space``: the table's entries that are registered, then
    every other data-free target of that space at smoke scale."""
    from samplers.registry import TARGETS

    table = STANDARD_PROBLEMS if table is None else table
    out = [
        (t, dict(p), "paper") for t, p in table.get(space, []) if t in TARGETS and TARGETS[t].space == space
    ]
    listed = {t for t, _, _ in out}
    out += [
        (t.id, {}, "smoke")
        for t in TARGETS.values()
        if t.space == space and t.data is None and t.id not in listed
    ]
    return out


class NotApplicable(Exception):
    """No candidate problem could be built or accepted by the method (message = reasons)."""


def select_problem(
    method: str, table: Mapping[str, list] | None = None, all_matches: bool = False
) -> list[tuple[str, dict[str, Any], str]]:
    """Candidates the method accepts (its wrapper raises no ValueError on a 2-iteration run, which also
    compiles it). First match only unless ``all_matches`` (then only the table's own entries)."""
    from samplers import registry

    spec = registry.get_method(method)
    reasons, ok = [], []
    for space in spec.spaces:
        cands = problem_candidates(space, table)
        if all_matches:
            cands = [c for c in cands if c[2] == "paper"]
        for target, params, scale in cands:
            try:
                prob = get_problem(target, params, scale)
                registry.run(method, prob, 2, 0)
            except ValueError as e:
                reasons.append(f"{target}{params or ''}: {e}")
                continue
            ok.append((target, params, scale))
            if not all_matches:
                return ok
    if not ok:
        raise NotApplicable(
            f"{method} (spaces {spec.spaces}): no usable benchmark problem; "
            + ("; ".join(reasons) or "no registered data-free target in these spaces")
        )
    return ok


def _nice(n: float) -> int:
    """Round up to 2 significant digits."""
    if n <= 10:
        return max(1, int(math.ceil(n)))
    p = 10 ** (int(math.log10(n)) - 1)
    return int(math.ceil(n / p) * p)


MIN_ROUND_CPU = 2e-3  # rounds shorter than this (at max_iter) are too short to gate


def timed_run(method: str, problem, n_iter: int, seed: int, thin: int, **hyper: Any):
    """Run a chain; return ``(result, cpu)`` with ``cpu`` = CPU seconds of the compiled loop scaled
    to ``n_iter`` iterations. The driver calls ``progress`` after each of its ~50 chunks, so the CPU
    time between the first and the last call covers chunks 2..k of the compiled loop exactly and
    excludes the wrapper's O(N) set-up (alias tables, permutations) and the result assembly. Falls
    back to the whole call's CPU time if the method reports fewer than two chunks."""
    from samplers import registry

    marks: list[tuple[float, int]] = []
    t0 = time.process_time()
    res = registry.run(
        method,
        problem,
        n_iter,
        seed,
        thin=thin,
        progress=lambda n: marks.append((time.process_time(), n)),
        **hyper,
    )
    total = time.process_time() - t0
    iters = sum(n for _, n in marks[1:])
    if len(marks) >= 2 and iters > 0:
        return res, (marks[-1][0] - marks[0][0]) * n_iter / iters
    return res, total


def choose_iterations(
    method: str, problem, budget: float = 0.03, max_iter: int = 100_000, max_stored: int = 500
) -> tuple[int, int]:
    """(n_iter, thin) so one round takes about ``budget`` CPU seconds and at most ``max_stored``
    draws are stored (so storing draws does not dominate cheap single-site updates)."""
    n = 16
    while True:  # grow the pilot until it is long enough to time
        _, cpu = timed_run(method, problem, n, 0, 1)
        if cpu > 0.005 or n >= max_iter:
            break
        n = min(n * 8, max_iter)
    n_iter = _nice(min(max(budget * n / max(cpu, 1e-9), 8), max_iter))
    thin = max(1, n_iter // max_stored)
    n_iter = max(thin, (n_iter // thin) * thin)
    return n_iter, thin


def entry_from_rounds(
    method: str,
    target: str,
    params: Mapping[str, Any],
    scale: str,
    n_iter: int,
    thin: int,
    calib: list[float],
    wall: list[float],
    cpu: list[float],
    mean_batch: float,
    key: str | None = None,
) -> Entry:
    """Entry from per-round calibration CPU seconds and the chain's wall / CPU seconds per round."""
    from samplers import registry

    if not (calib and wall and cpu):
        raise ValueError("need at least one round of measurements")
    family = registry.get_method(method).family
    c_min = min(calib)
    cpu_min = max(min(cpu) / n_iter, 1e-12)
    spi = [w / n_iter for w in wall]
    return Entry(
        key or method,
        method,
        family,
        target,
        dict(params),
        scale,
        int(n_iter),
        int(thin),
        min(spi),
        cpu_min,
        c_min,
        cpu_min / c_min,
        float(mean_batch),
        float(np.median(spi)),
        gated=cpu_min * n_iter >= MIN_ROUND_CPU,
    )


def measure_entry(
    method: str,
    target: str,
    params: Mapping[str, Any],
    scale: str,
    n_iter: int,
    thin: int,
    rounds: int = 5,
    key: str | None = None,
) -> Entry:
    """Interleave ``rounds`` x (calibration call, fixed-seed chain of ``n_iter``); keep the minima.
    The chain is identical in every round (same seed), so only the machine varies."""
    from samplers import registry

    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    prob = get_problem(target, params, scale)
    registry.run(method, prob, thin, 0, thin=thin)  # compiled / cache-loaded before timing
    cal, wall, cpu, batch = [], [], [], float("nan")
    for _ in range(rounds):
        cal.append(calibration_once())
        res, c = timed_run(method, prob, n_iter, 1, thin)
        wall.append(res.sample_seconds)
        cpu.append(c)
        batch = res.mean_batch
    return entry_from_rounds(method, target, params, scale, n_iter, thin, cal, wall, cpu, batch, key)


def same_config(a: Entry, b: Entry) -> bool:
    """True if two entries timed the same chain (so their normalised times are comparable)."""
    return (a.method, a.target, a.scale, a.n_iter, a.thin) == (
        b.method,
        b.target,
        b.scale,
        b.n_iter,
        b.thin,
    ) and a.target_params == b.target_params
