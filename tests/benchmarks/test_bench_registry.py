"""pytest-benchmark: every registered method, per-iteration time of its compiled loop, + regression gate.

One case per method in :data:`samplers.registry.METHODS` (discovered, not listed), grouped by family, on
the first standard small problem of its space that it accepts (bench.perf_compare.STANDARD_PROBLEMS;
other spaces: any data-free registered target of that space at smoke scale). Compilation is excluded
(a warm-up run first); each round is one fixed-seed chain long enough for ~30 ms of CPU, 5 rounds, min.
Recorded per case (``extra_info``): ``sec_per_iter`` (ChainResult.sample_seconds / n_iter, wall),
``cpu_per_iter``, ``normalised`` (cpu_per_iter / calibration-kernel CPU time of the same rounds),
``mean_batch`` (E[B]).

``test_regression_gate`` (last) compares the normalised times with the committed baseline of this CPU kind
(tests/benchmarks/baseline/registry_baseline*.json, one per LLVM CPU name; on a kind without one, with
every baseline, each kernel against the most lenient) (threshold 2x, one retry of the failing kernels; see
bench.perf_compare and docs/performance.md). Paper-scale cases (d=20 N=1e5 truncated Gaussian, N=1e5
robust regression, 20x20 Potts) are marked ``benchmark_large`` (opt-in: ``-m benchmark_large``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench import perf_compare as pc
from samplers import registry

ROUNDS = 5
UPDATE = os.environ.get("MCMC_PERF_UPDATE_BASELINE", "") not in ("", "0")
THRESHOLD = float(os.environ.get("MCMC_PERF_THRESHOLD", pc.DEFAULT_THRESHOLD))
RESULTS = Path(__file__).resolve().parents[2] / "results"

_METHODS = sorted(registry.METHODS, key=lambda m: (registry.METHODS[m].family, m))
# baselines per CPU kind (bench.perf_compare.host_cpu): this machine's if committed; chain configs from it,
# else from registry_baseline.json
_HOST = pc.host_cpu()
_BASELINES = {cpu: pc.load_baseline(path) for cpu, path in pc.baseline_files().items()}
_BASELINE = _BASELINES.get(_HOST) or pc.load_baseline()


def _config_for(method: str) -> tuple[str, dict, str, int, int]:
    """Reuse the baseline's chain (target, params, n_iter, thin) if it still applies, else choose."""
    base = _BASELINE.get(method)
    if base is not None and base.target in registry.TARGETS:
        try:
            prob = pc.get_problem(base.target, base.target_params, base.scale)
            registry.run(method, prob, 2, 0)
            return base.target, base.target_params, base.scale, base.n_iter, base.thin
        except ValueError:
            pass  # the method rejects the baseline's problem: choose afresh (compared as "new")
    target, params, scale = pc.select_problem(method)[0]
    n_iter, thin = pc.choose_iterations(method, pc.get_problem(target, params, scale))
    return target, params, scale, n_iter, thin


def _bench(
    benchmark,
    method: str,
    target: str,
    params: dict,
    scale: str,
    n_iter: int,
    thin: int,
    rounds: int,
    key: str,
) -> pc.Entry:
    """pytest-benchmark rounds: setup = one calibration call (untimed by pytest-benchmark), target =
    one fixed-seed chain of n_iter; returns the entry built from the rounds' minima."""
    prob = pc.get_problem(target, params, scale)
    registry.run(method, prob, thin, 0, thin=thin)  # compile / load the cache outside the timing
    cal, wall, cpu, batch = [], [], [], []

    def setup():
        cal.append(pc.calibration_once())

    def one_round():
        res, c = pc.timed_run(method, prob, n_iter, 1, thin)
        wall.append(res.sample_seconds)
        cpu.append(c)
        batch.append(res.mean_batch)

    benchmark.pedantic(one_round, setup=setup, rounds=rounds, iterations=1, warmup_rounds=1)
    entry = pc.entry_from_rounds(method, target, params, scale, n_iter, thin, cal, wall, cpu, batch[-1], key)
    benchmark.extra_info.update(
        target=target,
        target_params=json.dumps(params),
        n_iter=n_iter,
        thin=thin,
        sec_per_iter=entry.sec_per_iter,
        cpu_per_iter=entry.cpu_per_iter,
        calib_seconds=entry.calib_seconds,
        normalised=entry.normalised,
        mean_batch=entry.mean_batch,
        gated=entry.gated,
    )
    return entry


@pytest.mark.parametrize("method", _METHODS)
def test_method(benchmark, perf_store, method):
    """Per-iteration time of ``method`` on its standard small problem (compile excluded)."""
    spec = registry.METHODS[method]
    benchmark.group = f"family:{spec.family}"
    try:
        target, params, scale, n_iter, thin = (
            _config_for(method) if not benchmark.disabled else (*pc.select_problem(method)[0], 0, 0)
        )
    except pc.NotApplicable as e:
        perf_store.skipped[method] = str(e)
        pytest.skip(str(e))
    if benchmark.disabled:  # unit run (--benchmark-disable): one short chain as a smoke test
        prob = pc.get_problem(target, params, scale)
        res = benchmark(registry.run, method, prob, 4, 0)
        assert res.n_evals.ndim == 1 and res.samples.shape[0] >= 1  # (viterbi ignores n_iter)
        return
    entry = _bench(benchmark, method, target, params, scale, n_iter, thin, ROUNDS, method)
    assert entry.sec_per_iter > 0 and entry.mean_batch >= 0
    perf_store.entries[method] = entry
    perf_store.remeasure[method] = lambda: pc.measure_entry(
        method, target, params, scale, n_iter, thin, ROUNDS, method
    )


def _large_cases() -> list:
    out = []
    for m in _METHODS:
        for space in registry.METHODS[m].spaces:
            for target, params in pc.LARGE_PROBLEMS.get(space, []):
                if target in registry.TARGETS:
                    out.append(pytest.param(m, target, params, id=f"{m}@{target}"))
    return out


@pytest.mark.benchmark_large
@pytest.mark.parametrize(("method", "target", "params"), _large_cases())
def test_method_paper_scale(benchmark, method, target, params):
    """Paper scale (Yuan & Wang 2024 §5.1-5.2: d=20 N=1e5 TG, d=10 N=1e5 robust regression; Zhang & De Sa
    2019 §4.1 Potts 20x20). Reported, not gated."""
    benchmark.group = f"paper-scale:{target}"
    prob = pc.get_problem(target, params)
    try:
        registry.run(method, prob, 2, 0)
    except ValueError as e:
        pytest.skip(f"{method} does not accept {target}: {e}")
    if benchmark.disabled:
        return
    n_iter, thin = pc.choose_iterations(method, prob, budget=0.2)
    _bench(benchmark, method, target, params, "paper", n_iter, thin, 3, f"{method}@{target}")


def test_regression_gate(benchmark, perf_store):
    """Normalised times vs the committed baseline: fails only on a > THRESHOLD x slowdown that
    persists in one re-measurement (bench.perf_compare.gate). Runs last in this module."""
    benchmark.group = "control"
    benchmark.pedantic(pc.calibration_once, rounds=5, iterations=1, warmup_rounds=1)  # the control
    if benchmark.disabled:
        pytest.skip("benchmarks disabled (unit run): timings are not meaningful")
    entries = perf_store.entries
    if not entries:
        pytest.skip("no kernel was measured in this session")
    if UPDATE:
        host_entries = _BASELINES.get(_HOST, {})
        keep = {k: e for k, e in host_entries.items() if k in registry.METHODS and k not in entries}
        path = pc.save_baseline(
            [*keep.values(), *entries.values()],
            path=pc.host_baseline_path(),
            threshold=THRESHOLD,
            note=os.environ.get("MCMC_PERF_NOTE", ""),
        )
        print(f"baseline refreshed: {path} ({len(entries)} measured, {len(keep)} kept)")
        return
    current = {k: e.normalised for k, e in entries.items() if e.gated}
    # this CPU kind's baseline; on a kind without one, every committed baseline, each kernel against the
    # most lenient (a kernel fails only if it is > THRESHOLD x slower than on every known kind)
    against = [_HOST] if _HOST in _BASELINES else sorted(_BASELINES)
    base: dict[str, float] = {}
    for cpu in against:
        for k, e in _BASELINES[cpu].items():
            if k not in registry.METHODS or (e.gated and k in current and pc.same_config(e, entries[k])):
                base[k] = max(base.get(k, 0.0), e.normalised)

    def remeasure(keys):
        return {k: perf_store.remeasure[k]().normalised for k in keys}

    result = pc.gate(current, base, remeasure, threshold=THRESHOLD, retries=1)
    mode = "its own baseline" if _HOST in _BASELINES else f"no baseline of its own, compared with {against}"
    report = f"CPU kind {_HOST!r}: {mode}\n" + result.report()
    if perf_store.skipped:
        report += "\nnot benchmarked:\n" + "\n".join(f"  {k}: {v}" for k, v in perf_store.skipped.items())
    pc.atomic_write_text(RESULTS / "perf_gate.txt", report + "\n")
    pc.atomic_write_text(
        RESULTS / "perf_gate.json",
        json.dumps(
            {
                "passed": result.passed,
                "threshold": THRESHOLD,
                "retried": result.retried,
                "verdicts": [v.__dict__ for v in result.verdicts],
                "entries": {k: e.__dict__ for k, e in entries.items()},
            },
            indent=1,
            default=float,
        )
        + "\n",
    )
    print(report)
    assert result.passed, report
