"""``mcmc-bench perf``: the performance report (docs/performance.md).

Writes ``results/performance.csv`` (+ ``.md``) and figures in ``paper_figs/``. Rows (column ``section``):

* ``scaling``  per-iteration time vs N (1e3..1e6; ``--quick`` stops at 1e5) of every continuous
  minibatch method beside its full-batch twin (``MethodSpec.twin``; ``sgld``, which declares none, is paired
  with ``mala``) on the truncated Gaussian (Yuan & Wang 2024 §5.1, d=20, N beta = 1) and the robust
  regression (§5.2, d=10, N beta = 10). Tempering with N keeps L = sum M_i, hence lambda + L = E[B], fixed.
  Reported: E[B] (mean of ``n_evals``), achieved speedup t_twin / t_method, ideal speedup N / E[B],
  efficiency = achieved / ideal.
* ``paper``    the same at the paper settings (N = 1e5; RR lambda = 0.01 L^2) with ESS/s (min/median over
  dimensions, bench.metrics.ess_report, sampling wall time only) of a longer chain.
* ``hotloop``  per-candidate cost split of the PoissonMH hot loop (alias draws; whole candidate pass)
  vs the full-batch per-datum cost, on the truncated Gaussian of the sweep (:func:`hotloop_rows`).
* ``discrete`` factor evaluations per second (E[B] / t) of each discrete minibatch Gibbs method and its
  twin on the Zhang & De Sa 2019 §4.1 Potts model (20x20, D=10).
* ``startup``  cold (subprocess, empty NUMBA_CACHE_DIR) and warm (subprocess, the cache it populated)
  time to the first sample: ``first_call_s`` = import + compile/load + a 2-iteration run of the kernel;
  ``process_s`` = the whole subprocess including the Python interpreter and imports.
* ``paired``   (``--paired K``) the efficiency and growth targets measured in K interleaved rounds
  (:func:`paired_rows`): the single-shot ratios above move up to 2x between runs on a shared machine,
  because the two sides of a ratio are timed minutes apart; within a round they are seconds apart.
* ``targets``  the four targets (efficiency, growth, discrete factor evaluations per second, warm start)
  with measured value, threshold and verdict (efficiency and growth from the ``paired`` medians when
  present); PoissonMH's TG rows also carry what the memory floor of its candidate pass allows
  (``lower_bound`` on growth, ``upper_bound`` on efficiency).

Times are minima over rounds: ``cpu_per_iter`` = CPU seconds of the compiled loop per iteration (used
for every ratio: robust to other processes sharing the machine) and ``sec_per_iter`` =
``ChainResult.sample_seconds / n_iter`` (wall clock, compiled loop only; ESS/s uses wall time).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.perf_compare import timed_run
from bench.perf_hotloop import hotloop_rows

FALLBACK_TWINS = {"sgld": "mala"}  # twins of methods whose MethodSpec declares none
SWEEP = {  # target -> (fixed params, param scaled with N so that N * beta is constant)
    "truncated_gaussian": ({"d": 20, "K": 3.0}, 1.0),
    "robust_regression": ({"d": 10, "nu": 4.0, "R": 15.0}, 10.0),
}
PAPER_HYPER = {"robust_regression": {"lam_mult": 0.01}}  # Yuan & Wang 2024 §5.2: lambda = 0.01 L^2
SHORT = {"truncated_gaussian": "TG", "robust_regression": "RR"}  # figure tick labels
PAIRED_TITLES = {
    "growth": "growth t(N max) / t(1e4)",
    "efficiency": "speed-up / (N/E[B]), cached twin",
    "efficiency_authors": "speed-up / (N/E[B]), authors' twin",
}
DISCRETE_TARGET = ("potts_20x20", {})
EFFICIENCY_TARGET = 0.6
GROWTH_TARGET = 1.5
FES_TARGET = 0.5
WARM_TARGET = 1.0


def pairs(space: str = "continuous", only: list[str] | None = None) -> list[tuple[str, str]]:
    """(minibatch method, full-batch twin) for methods of ``space`` that declare a registered twin
    (restricted to the minibatch methods in ``only`` if given)."""
    from samplers.registry import METHODS

    out = []
    for m in sorted(METHODS.values(), key=lambda s: (s.family, s.id)):
        twin = m.twin or FALLBACK_TWINS.get(m.id)
        if only is not None and m.id not in only:
            continue
        if twin in METHODS and space in m.spaces and space in METHODS[twin].spaces:
            out.append((m.id, twin))
    return out


def _hyper(method: str, target: str) -> dict[str, Any]:
    from samplers.registry import METHODS

    return {k: v for k, v in PAPER_HYPER.get(target, {}).items() if k in METHODS[method].defaults}


def _calibrate(method: str, problem, hyper: dict[str, Any], budget: float) -> tuple[int, int]:
    """``(n_iter, thin)``: a fixed-seed chain length of about ``budget`` CPU seconds (kernel compiled /
    loaded first)."""
    from samplers import registry

    registry.run(method, problem, 2, 0, **hyper)  # compile / load cache
    n = 4
    while True:
        res, cpu = timed_run(method, problem, n, 0, 1, **hyper)
        if cpu > 0.02 or n >= 200_000:
            break
        n *= 4
    n_iter = int(min(max(budget * n / max(cpu, 1e-9), 8), 200_000))
    thin = max(1, n_iter // 500)
    return max(2 * thin, n_iter - n_iter % thin), thin


def time_per_iter(
    method: str, problem, hyper: dict[str, Any], budget: float, rounds: int
) -> dict[str, float]:
    """Min over ``rounds`` fixed-seed chains (n_iter sized to ``budget`` CPU seconds) of the compiled
    loop's CPU seconds per iteration (``cpu_per_iter``, bench.perf_compare.timed_run: robust to other
    processes on a shared machine; speedups use it) and of ``sample_seconds / n_iter`` (wall)."""
    n_iter, thin = _calibrate(method, problem, hyper, budget)
    wall, best, batch, acc = math.inf, math.inf, float("nan"), float("nan")
    for _ in range(rounds):
        res, cpu = timed_run(method, problem, n_iter, 1, thin, **hyper)
        best = min(best, cpu / n_iter)
        wall = min(wall, res.sample_seconds / n_iter)
        batch, acc = res.mean_batch, res.accept_rate
    return {
        "cpu_per_iter": best,
        "sec_per_iter": wall,
        "mean_batch": batch,
        "accept_rate": acc,
        "n_iter": n_iter,
    }


def _problem(target: str, N: int):
    from samplers import registry

    fixed, nbeta = SWEEP[target]
    return registry.build_problem(target, 0, N=int(N), beta=nbeta / N, **fixed)


def scaling_rows(Ns: list[int], budget: float, rounds: int, log=print, only=None) -> list[dict]:
    rows = []
    prs = pairs("continuous", only)
    for target in SWEEP:
        for N in Ns:
            prob = _problem(target, N)
            twins: dict[str, dict] = {}
            for m, twin in prs:
                if twin not in twins:
                    twins[twin] = time_per_iter(twin, prob, {}, budget, rounds)
                    rows.append(
                        {
                            "section": "scaling",
                            "method": twin,
                            "twin": "",
                            "target": target,
                            "N": N,
                            **twins[twin],
                        }
                    )
                r = time_per_iter(m, prob, {}, budget, rounds)
                tw = twins[twin]
                speed = tw["cpu_per_iter"] / r["cpu_per_iter"]
                ideal = N / r["mean_batch"] if r["mean_batch"] > 0 else float("nan")
                rows.append(
                    {
                        "section": "scaling",
                        "method": m,
                        "twin": twin,
                        "target": target,
                        "N": N,
                        **r,
                        "speedup": speed,
                        "ideal_speedup": ideal,
                        "efficiency": speed / ideal,
                    }
                )
                log(
                    f"scaling {target} N={N:.0e} {m}: {r['cpu_per_iter'] * 1e6:.1f} us/it, "
                    f"E[B]={r['mean_batch']:.0f}; {twin}: {tw['cpu_per_iter'] * 1e6:.1f} us/it; "
                    f"speedup {speed:.2f} / ideal {ideal:.1f}"
                )
            del prob
    return rows


def _ess(method: str, prob, hyper: dict, n_iter: int) -> dict[str, float]:
    from bench.metrics import ess_report

    res, cpu = timed_run(method, prob, n_iter, 2, 1, **hyper)
    rep = ess_report(res.samples, res.sample_seconds, burn_in=n_iter // 5)
    return {
        "ess_per_s_min": rep["ess_identity_per_s_min"],
        "ess_per_s_median": rep["ess_identity_per_s_median"],
        "ess_per_cpu_s_min": rep["ess_identity_min"] / cpu,
        "ess_min": rep["ess_identity_min"],
        "chain_accept": res.accept_rate,
        "chain_iters": n_iter,
    }


def _paper_hyper(meth: str, target: str, prob, tune: bool, tuned: dict | None = None) -> dict[str, Any]:
    """The paper hyperparameters of ``meth`` at the paper problem, its step tuned to acceptance 0.4
    (fixed seed, so deterministic) when ``tune``; ``tuned`` caches them across sections of one run."""
    from samplers import registry
    from samplers.tuning import tune_step

    key = (meth, target, tune)
    if tuned is not None and key in tuned:
        return dict(tuned[key])
    hyper = _hyper(meth, target)
    spec = registry.get_method(meth)
    if tune and spec.step_param:
        hyper[spec.step_param] = tune_step(meth, prob, 0.4, 0, pilot_iters=200, rounds=4, **hyper)[0]
    if tuned is not None:
        tuned[key] = dict(hyper)
    return hyper


def paper_rows(
    budget: float, rounds: int, ess_seconds: float, tune: bool, log=print, only=None, tuned=None
) -> list[dict]:
    from samplers import registry

    rows = []
    for target in SWEEP:
        prob = registry.build_problem(target, 0)
        N = prob.meta["N"]
        done: dict[str, dict] = {}
        rec_done: dict[str, float] = {}
        for m, twin in pairs("continuous", only):
            for meth in (twin, m):
                if meth in done:
                    continue
                hyper = _paper_hyper(meth, target, prob, tune, tuned)
                r = time_per_iter(meth, prob, hyper, budget, rounds)
                n_ess = int(min(max(ess_seconds / r["cpu_per_iter"], 400), 50_000))
                r.update(_ess(meth, prob, hyper, n_ess))
                r["hyper"] = json.dumps(hyper)
                done[meth] = r
            r, tw = done[m], done[twin]
            speed = tw["cpu_per_iter"] / r["cpu_per_iter"]
            ideal = N / r["mean_batch"]
            # the twin as the Yuan & Wang 2024 code runs it (energy="recompute": log pi at theta and
            # theta' every step; the same chain, so only its time is measured)
            if twin not in rec_done and "energy" in registry.get_method(twin).defaults:
                hyp = {**json.loads(done[twin]["hyper"]), "energy": "recompute"}
                rec_done[twin] = time_per_iter(twin, prob, hyp, budget, rounds)["cpu_per_iter"]
            speed_a = rec_done.get(twin, math.nan) / r["cpu_per_iter"]
            rows.append(
                {
                    "section": "paper",
                    "method": m,
                    "twin": twin,
                    "target": target,
                    "N": N,
                    **r,
                    "speedup": speed,
                    "ideal_speedup": ideal,
                    "efficiency": speed / ideal,
                    "twin_recompute_cpu_per_iter": rec_done.get(twin, math.nan),
                    "speedup_authors": speed_a,
                    "efficiency_authors": speed_a / ideal,
                    "exact": registry.get_method(m).exact,
                }
            )
            log(
                f"paper {target} {m}: {r['cpu_per_iter'] * 1e6:.1f} us/it E[B]={r['mean_batch']:.0f} "
                f"speedup {speed:.2f} ideal {ideal:.1f} eff {speed / ideal:.2f} "
                f"(vs authors' recompute twin: eff {speed_a / ideal:.2f}) "
                f"ESS/s(min) {r['ess_per_s_min']:.3g} vs twin {tw['ess_per_s_min']:.3g}"
            )
        for meth, r in done.items():
            if not any(row["method"] == meth for row in rows if row["target"] == target):
                rows.append({"section": "paper", "method": meth, "twin": "", "target": target, "N": N, **r})
    return rows


def alternate(fns: list, k: int) -> np.ndarray:
    """``k`` rounds of calling every ``fns[i]()`` once (round r in the order rotated by r), as an array
    ``[k, len(fns)]`` of the returned values. Measurements of one round are seconds apart, so a drift of
    the machine's speed (load, frequency, neighbours) between rounds cancels in within-round ratios."""
    out = np.empty((k, len(fns)))
    for r in range(k):
        for j in range(len(fns)):
            i = (j + r) % len(fns)
            out[r, i] = fns[i]()
    return out


def _timer(method: str, problem, hyper: dict[str, Any], budget: float):
    """A closure timing one fixed-seed chain of ``method`` (CPU s / iteration; E[B] kept in ``.batch``)."""
    n_iter, thin = _calibrate(method, problem, hyper, budget)

    def once() -> float:
        res, cpu = timed_run(method, problem, n_iter, 1, thin, **hyper)
        once.batch = res.mean_batch
        return cpu / n_iter

    return once


def _paired_row(kind: str, method: str, target: str, N: int, v: np.ndarray, thr: float, le: bool) -> dict:
    met = v <= thr if le else v >= thr
    return {
        "section": "paired",
        "paired_kind": kind,
        "method": method,
        "target": target,
        "N": N,
        "value": float(np.median(v)),
        "value_min": float(v.min()),
        "value_max": float(v.max()),
        "rounds": len(v),
        "rounds_met": int(met.sum()),
        "values": json.dumps([round(float(x), 4) for x in v]),
    }


def paired_rows(
    k: int, budget: float, n_hi: int, log=print, only=None, tune: bool = True, tuned=None
) -> list[dict]:
    """The two kernel targets (growth, efficiency) measured in ``k`` interleaved rounds (:func:`alternate`)
    instead of once: ``growth`` = t(N = n_hi) / t(N = 1e4) of each minibatch method on the sweep problems
    (both N built up front, timed alternately), ``efficiency`` / ``efficiency_authors`` = (t_twin /
    t_method) / (N / E[B]) at the paper problems (N = 1e5; step tuned to acceptance 0.4 as in
    :func:`paper_rows`), method, cached twin and the authors' recompute twin timed in each round. One row per
    (kind, method, target): median over rounds, min, max, rounds meeting the target, the values."""
    from samplers import registry

    rows = []
    prs = pairs("continuous", only)
    for target in SWEEP:
        lo_p, hi_p = _problem(target, 10_000), _problem(target, n_hi)
        for m, _twin in prs:
            t = alternate([_timer(m, lo_p, {}, budget), _timer(m, hi_p, {}, budget)], k)
            g = t[:, 1] / t[:, 0]
            rows.append(_paired_row("growth", m, target, n_hi, g, GROWTH_TARGET, le=True))
            log(f"paired growth {target} {m}: median {np.median(g):.2f} ({g.min():.2f}-{g.max():.2f}, k={k})")
        del lo_p, hi_p
        prob = registry.build_problem(target, 0)
        N = prob.meta["N"]
        for m, twin in prs:
            hyps = [_paper_hyper(meth, target, prob, tune, tuned) for meth in (m, twin)]
            fns = [_timer(m, prob, hyps[0], budget), _timer(twin, prob, hyps[1], budget)]
            rec = "energy" in registry.get_method(twin).defaults
            if rec:
                fns.append(_timer(twin, prob, {**hyps[1], "energy": "recompute"}, budget))
            t = alternate(fns, k)
            ideal = N / fns[0].batch
            e = t[:, 1] / t[:, 0] / ideal
            rows.append(_paired_row("efficiency", m, target, N, e, EFFICIENCY_TARGET, le=False))
            msg = f"paired efficiency {target} {m}: median {np.median(e):.2f} ({e.min():.2f}-{e.max():.2f})"
            if rec:
                ea = t[:, 2] / t[:, 0] / ideal
                rows.append(_paired_row("efficiency_authors", m, target, N, ea, EFFICIENCY_TARGET, le=False))
                msg += f"; vs authors' twin {np.median(ea):.2f} ({ea.min():.2f}-{ea.max():.2f})"
            log(msg + f", E[B] {fns[0].batch:.0f}, k={k}")
        del prob
    return rows


def discrete_rows(budget: float, rounds: int, log=print, only=None) -> list[dict]:
    from samplers import registry

    target, params = DISCRETE_TARGET
    if target not in registry.TARGETS:
        return []
    prob = registry.build_problem(target, 0, **params)
    rows, seen = [], {}
    for m, twin in pairs("discrete", only):
        for meth in (twin, m):
            if meth not in seen:
                try:
                    seen[meth] = time_per_iter(meth, prob, {}, budget, rounds)
                except ValueError as e:
                    log(f"discrete {meth}: not applicable to {target}: {e}")
                    seen[meth] = None
        if seen[m] is None or seen[twin] is None:
            continue
        r, tw = seen[m], seen[twin]
        fes, fes_tw = r["mean_batch"] / r["cpu_per_iter"], tw["mean_batch"] / tw["cpu_per_iter"]
        rows.append(
            {
                "section": "discrete",
                "method": m,
                "twin": twin,
                "target": target,
                "N": int(prob.model.M.shape[0]),
                **r,
                "factor_evals_per_s": fes,
                "twin_factor_evals_per_s": fes_tw,
                "fes_ratio": fes / fes_tw,
                "speedup": tw["cpu_per_iter"] / r["cpu_per_iter"],
            }
        )
        log(f"discrete {m}: {fes:.3g} factor evals/s ({twin}: {fes_tw:.3g}), ratio {fes / fes_tw:.2f}")
    return rows


_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from bench import perf_compare as pc
from samplers import registry
t1 = time.perf_counter()
target, params, scale = pc.select_problem(sys.argv[1])[0]
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_call_s": t2 - t0, "target": target}))
"""


def startup_rows(methods: list[str], log=print) -> list[dict]:
    """Cold (empty cache) then warm (same cache) subprocess for each method."""
    root = Path(__file__).resolve().parents[1]
    rows = []
    for m in methods:
        with tempfile.TemporaryDirectory(prefix="numba_cold_") as cache:
            env = {
                **os.environ,
                "NUMBA_CACHE_DIR": cache,
                "NUMBA_NUM_THREADS": "1",
                "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            }
            rec = {"section": "startup", "method": m}
            for kind in ("cold", "warm"):
                t0 = time.perf_counter()
                out = subprocess.run(
                    [sys.executable, "-c", _CHILD, m], env=env, cwd=root, capture_output=True, text=True
                )
                wall = time.perf_counter() - t0
                if out.returncode != 0:
                    rec[f"{kind}_error"] = out.stderr.strip().splitlines()[-1][:200]
                    break
                info = json.loads(out.stdout.strip().splitlines()[-1])
                rec.update(
                    {
                        "target": info["target"],
                        f"{kind}_first_call_s": info["first_call_s"],
                        f"{kind}_import_s": info["import_s"],
                        f"{kind}_process_s": wall,
                    }
                )
            rows.append(rec)
            log(
                f"startup {m}: cold {rec.get('cold_first_call_s', float('nan')):.2f} s, warm "
                f"{rec.get('warm_first_call_s', float('nan')):.2f} s (import "
                f"{rec.get('warm_import_s', float('nan')):.2f} s)"
            )
    return rows


def _floor_factor(hl: pd.DataFrame, method: str, target: str, N: float) -> float:
    """fused / gather of the PoissonMH TG candidate pass at N (``hl``: the hotloop rows indexed by N; NaN
    if not measured): an efficiency times this is the efficiency if the candidate pass cost only its
    memory floor, the twin and the per-iteration overhead as measured (docs/performance.md §6.2)."""
    if method != "poisson_mh" or target != "truncated_gaussian" or N not in hl.index:
        return math.nan
    return float(hl.loc[N, "fused_ns"] / hl.loc[N, "gather_ns"])


def target_rows(df: pd.DataFrame) -> list[dict]:
    """The kernel targets, evaluated on the rows of this run. With ``paired`` rows (``--paired K``) the
    efficiency and growth verdicts are their medians over the K interleaved rounds (with the range and
    the rounds that met the target), and the single-shot ``paper`` / ``scaling`` verdicts are not given."""
    out = []
    pr = df[df.section == "paired"] if "paired_kind" in df else df.iloc[0:0]
    hl = df[df.section == "hotloop"].set_index("N") if "gather_ns" in df else pd.DataFrame()

    names = {
        "efficiency": "efficiency>=0.6",
        "efficiency_authors": "efficiency(authors' twin)>=0.6",
        "growth": "growth N=1e+04->{N:.0e}<=1.5",
    }
    for _, r in pr.iterrows():
        le = r.paired_kind == "growth"
        thr = GROWTH_TARGET if le else EFFICIENCY_TARGET
        row = {
            "section": "targets",
            "target_name": names[r.paired_kind].format(N=r.N) + f" (median of {int(r.rounds)} paired)",
            "method": r.method,
            "target": r.target,
            "value": r.value,
            "value_min": r.value_min,
            "value_max": r.value_max,
            "rounds_met": f"{int(r.rounds_met)}/{int(r.rounds)}",
            "threshold": thr,
            "met": bool(r.value <= thr if le else r.value >= thr),
        }
        ff = math.nan if le else _floor_factor(hl, r.method, r.target, r.N)
        if ff == ff:
            row["upper_bound"] = r.value * ff
        out.append(row)
    paper = df[(df.section == "paper") & (df.twin.fillna("") != "")] if pr.empty else df.iloc[0:0]
    for _, r in paper.iterrows():
        if r.get("exact") is True or r.get("exact") == 1:
            ff = _floor_factor(hl, r.method, r.target, r.get("N", math.nan))
            ea = r.get("efficiency_authors", math.nan)  # NaN: the twin has no authors' recompute variant
            for name, v in (("efficiency>=0.6", r.efficiency), ("efficiency(authors' twin)>=0.6", ea)):
                if v == v:
                    row = {
                        "section": "targets",
                        "target_name": name,
                        "method": r.method,
                        "target": r.target,
                        "value": v,
                        "threshold": EFFICIENCY_TARGET,
                        "met": bool(v >= EFFICIENCY_TARGET),
                    }
                    if ff == ff:
                        row["upper_bound"] = v * ff
                    out.append(row)
    sc = df[(df.section == "scaling") & (df.twin.fillna("") != "")] if pr.empty else df.iloc[0:0]
    for (m, tgt), g in sc.groupby(["method", "target"]):
        g = g.set_index("N")["cpu_per_iter"]
        lo = 10_000 if 10_000 in g.index else g.index.min()
        hi = g.index.max()
        if hi > lo:
            row = {
                "section": "targets",
                "target_name": f"growth N={lo:.0e}->{hi:.0e}<=1.5",
                "method": m,
                "target": tgt,
                "value": g[hi] / g[lo],
                "threshold": GROWTH_TARGET,
                "met": bool(g[hi] / g[lo] <= GROWTH_TARGET),
            }
            if m == "poisson_mh" and tgt == "truncated_gaussian" and hi in hl.index:
                # the memory floor of the candidate pass at N = hi over the whole iteration at N = lo: the
                # growth if all arithmetic hid under the memory traffic (docs/performance.md §6.2)
                floor = hl.loc[hi, "gather_ns"] * 1e-9 * hl.loc[hi, "mean_batch"]
                row["lower_bound"] = floor / g[lo]
            out.append(row)
    for _, r in df[df.section == "discrete"].iterrows():
        out.append(
            {
                "section": "targets",
                "target_name": "factor_evals_per_s>=0.5*twin",
                "method": r.method,
                "target": r.target,
                "value": r.fes_ratio,
                "threshold": FES_TARGET,
                "met": bool(r.fes_ratio >= FES_TARGET),
            }
        )
    for _, r in df[df.section == "startup"].iterrows():
        v = r.get("warm_first_call_s", float("nan"))
        out.append(
            {
                "section": "targets",
                "target_name": "warm_start<=1s",
                "method": r.method,
                "target": r.get("target", ""),
                "value": v,
                "threshold": WARM_TARGET,
                "met": bool(v <= WARM_TARGET),
            }
        )
    return out


def figures(df: pd.DataFrame, out) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sc = df[df.section == "scaling"]
    if len(sc):
        targets = list(dict.fromkeys(sc.target))
        fig, axes = plt.subplots(1, len(targets), figsize=(6 * len(targets), 4.5), squeeze=False)
        for ax, tgt in zip(axes[0], targets, strict=True):
            g = sc[sc.target == tgt]
            for m, gm in g.groupby("method", sort=True):
                full = (gm.twin.fillna("") == "").all()
                ax.loglog(
                    gm.N, gm.cpu_per_iter, "--o" if full else "-s", label=m + (" (full)" if full else "")
                )
            ax.set_xlabel("N")
            ax.set_ylabel("CPU seconds / iteration (compiled loop)")
            ax.set_title(tgt)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        out.figure(
            "perf_time_vs_N",
            fig,
            caption="per-iteration time vs N, minibatch (solid) vs full-batch twin (dashed)",
        )
    pp = df[(df.section == "paper") & (df.twin.fillna("") != "")]
    if len(pp):
        fig, ax = plt.subplots(figsize=(7, 4))
        labels = [f"{r.method}\n{SHORT.get(r.target, r.target)}" for r in pp.itertuples()]
        ax.bar(range(len(pp)), pp.efficiency)
        ax.axhline(EFFICIENCY_TARGET, color="r", ls="--", label="target 0.6")
        ax.set_xticks(range(len(pp)), labels, fontsize=7, rotation=45)
        ax.set_ylabel("achieved / ideal speedup (N / E[B])")
        ax.legend()
        out.figure("perf_efficiency", fig, caption="achieved / ideal speedup at N = 1e5")
    pr = df[df.section == "paired"] if "paired_kind" in df else df.iloc[0:0]
    if len(pr):
        hl = df[df.section == "hotloop"].set_index("N") if "gather_ns" in df else pd.DataFrame()
        kinds = list(dict.fromkeys(pr.paired_kind))
        fig, axes = plt.subplots(1, len(kinds), figsize=(5 * len(kinds), 4.5), squeeze=False)
        for ax, kind in zip(axes[0], kinds, strict=True):
            g = pr[pr.paired_kind == kind]
            label = "memory-floor bound"
            for x, r in enumerate(g.itertuples()):
                v = json.loads(r.values)
                ax.plot([x] * len(v), v, "o", color="0.6", ms=4)
                ax.plot([x - 0.25, x + 0.25], [r.value] * 2, "k-", lw=2)
                ff = math.nan if kind == "growth" else _floor_factor(hl, r.method, r.target, r.N)
                if ff == ff:
                    ax.plot([x], [r.value * ff], "bv", ms=7, label=label)
                    label = None
            thr = GROWTH_TARGET if kind == "growth" else EFFICIENCY_TARGET
            ax.axhline(thr, color="r", ls="--", label=f"target {thr:g}")
            ax.set_xticks(
                range(len(g)),
                [f"{r.method}\n{SHORT.get(r.target, r.target)}" for r in g.itertuples()],
                fontsize=7,
                rotation=45,
            )
            ax.set_title(PAIRED_TITLES.get(kind, kind))
            ax.grid(True, axis="y", alpha=0.3)
            ax.legend(fontsize=7)
        out.figure(
            "perf_paired_targets",
            fig,
            caption="efficiency and growth per interleaved round (grey) and their median (black); blue: "
            "PoissonMH's TG efficiency with its candidate pass at the memory floor (performance.md §6.2)",
        )
    st = df[df.section == "startup"]
    if len(st) and "warm_first_call_s" in st:
        fig, ax = plt.subplots(figsize=(7, 4))
        x = np.arange(len(st))
        ax.bar(x - 0.2, st.cold_first_call_s, 0.4, label="cold (empty cache)")
        ax.bar(x + 0.2, st.warm_first_call_s, 0.4, label="warm (cached)")
        ax.axhline(WARM_TARGET, color="r", ls="--")
        ax.set_yscale("log")
        ax.set_xticks(x, st.method, fontsize=7, rotation=45)
        ax.set_ylabel("seconds to first sample (import + compile/load)")
        ax.legend()
        out.figure("perf_startup", fig, caption="cold vs warm start")


def _write(df: pd.DataFrame, out_csv: Path, figs_dir: str | os.PathLike) -> None:
    from bench.outputs import Outputs

    outs = Outputs(out_csv.parent, figs_dir, experiment="perf")
    outs.table(out_csv.stem, df, caption="mcmc-bench perf (docs/performance.md)")
    figures(df, outs)
    outs.write_manifest(out_csv.parent / f"{out_csv.stem}_manifest.json")


def redraw(table: str | os.PathLike, out_csv: str | os.PathLike, figs_dir: str | os.PathLike) -> pd.DataFrame:
    """The table and figures of a stored ``mcmc-bench perf`` run (its CSV, e.g. results/store/perf.csv.xz)
    without measuring anything."""
    out_csv = Path(out_csv)
    if out_csv.suffix != ".csv":
        raise ValueError(f"--out must end in .csv, got {out_csv}")
    try:
        df = pd.read_csv(table)
    except (OSError, ValueError) as e:
        raise ValueError(f"{table}: not a readable perf table ({e})") from None
    if "section" not in df.columns:
        raise ValueError(f"{table}: not a perf table (no column 'section')")
    _write(df, out_csv, figs_dir)
    return df


def run_perf(
    quick: bool,
    out_csv: str | os.PathLike,
    figs_dir: str | os.PathLike,
    startup_methods: list[str] | None = None,
    log=print,
    methods: list[str] | None = None,
    max_n: int | None = None,
    paired: int = 0,
) -> pd.DataFrame:
    """Measure everything and write the CSV/MD table and the figures; returns the table.
    ``methods`` restricts the minibatch methods (their twins come along); ``startup_methods`` the
    cold/warm start-up runs (default: all methods; quick: rwm, sgld and one discrete method)."""
    from samplers.registry import METHODS

    out_csv = Path(out_csv)
    if out_csv.suffix != ".csv":
        raise ValueError(f"--out must end in .csv, got {out_csv}")
    unknown = sorted(set(methods or []) - set(METHODS)) + sorted(set(startup_methods or []) - set(METHODS))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; known: {', '.join(sorted(METHODS))}")
    Ns = [1_000, 10_000, 100_000] if quick else [1_000, 10_000, 100_000, 1_000_000]
    if max_n is not None:
        if max_n < 1_000:
            raise ValueError(f"--max-n must be >= 1000, got {max_n}")
        Ns = [n for n in (1_000, 10_000, 100_000, 1_000_000) if n <= max_n]
    budget, rounds = (0.05, 2) if quick else (0.2, 3)
    rows = scaling_rows(Ns, budget, rounds, log, methods)
    rows += hotloop_rows(Ns, budget, rounds, log)
    tuned: dict = {}  # tuned steps shared by the paper and paired sections (same problem, same seed)
    rows += paper_rows(
        budget, rounds, ess_seconds=0.5 if quick else 3.0, tune=not quick, log=log, only=methods, tuned=tuned
    )
    if paired:
        rows += paired_rows(paired, budget, max(Ns), log, methods, tune=not quick, tuned=tuned)
    rows += discrete_rows(budget, rounds, log, methods)
    if startup_methods is None:
        startup_methods = (
            ["rwm", "sgld"] + [m for m, _ in pairs("discrete")][:1] if quick else sorted(METHODS)
        )
    rows += startup_rows(list(startup_methods), log)
    df = pd.DataFrame(rows)
    df = pd.concat([df, pd.DataFrame(target_rows(df))], ignore_index=True)
    _write(df, out_csv, figs_dir)
    t = df[df.section == "targets"]
    for r in t.itertuples():
        lb = getattr(r, "lower_bound", math.nan)
        ub = getattr(r, "upper_bound", math.nan)
        rng = getattr(r, "value_min", math.nan)
        extra = f" (memory floor alone: {lb:.3g})" if lb == lb else ""
        extra += f" (at most {ub:.3g} with the candidate pass at its memory floor)" if ub == ub else ""
        if rng == rng:
            extra += f" (range {r.value_min:.3g}-{r.value_max:.3g}, met in {r.rounds_met} rounds)"
        log(
            f"target {r.target_name:32s} {r.method:16s} {str(r.target):20s} {r.value:8.3g} "
            f"{'MET' if r.met else 'MISSED'}" + extra
        )
    return df
