"""What the approximate-test experiments share: the methods compared by Seita et al. 2017 (MHminibatch,
AustereMH(nc) / AustereMH(c) of Korattikara et al. 2014, MHSubLhd of Bardenet et al. 2014), their labels,
and the per-run minibatch statistics (data used by the test per iteration, kept apart from the full-data
passes of trace 0).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

APPROX_METHODS = ("mh_minibatch", "austere_mh_nc", "austere_mh_c", "mh_sublhd")
LABEL = {
    "mh_minibatch": "MHminibatch",
    "austere_mh_nc": "AustereMH(nc)",
    "austere_mh_c": "AustereMH(c)",
    "mh_sublhd": "MHSubLhd",
    "rwm": "exact RWM",
    "gibbs": "exact Gibbs",
    "austere_gibbs": "austere Gibbs",
}


def _child(seed, *k):
    from bench.cells import child_seed

    return child_seed(seed, *k)


def next_chunk(n: int, cap: int, budget: float, t_tot: float, last_secs: float) -> int:
    """The next chunk of a time-budgeted chain: twice the last one (n), at most cap, and at most what the
    last chunk's rate says the remaining budget holds (plus 5 % and one), so a chain ends near its budget
    instead of up to a doubling past it."""
    left = budget - t_tot
    if left <= 0.0 or last_secs <= 0.0:
        return min(2 * n, cap)
    return max(1, min(2 * n, cap, math.ceil(1.05 * left * n / last_secs) + 1))


def _log_hist(n_evals: np.ndarray, N: int, nb: int = 40) -> tuple[list, list]:
    edges = np.unique(np.round(np.logspace(0, math.log10(max(N, 2)) + 1e-9, nb)).astype(int))
    c, _ = np.histogram(np.clip(n_evals, 1, N), bins=np.append(edges, N + 1))
    return edges.tolist(), c.tolist()


def _run_rows(res, method: str, N: int) -> dict[str, Any]:
    ne = res.n_evals
    edges, counts = _log_hist(ne[ne > 0], N) if np.any(ne > 0) else ([], [])
    return {
        "method": method,
        "mean_batch": float(ne.mean()),
        "std_batch": float(ne.std()),
        "median_batch": float(np.median(ne)),
        "full_pass_per_iter": float(np.mean(res.extra.get("trace_0", np.zeros(1)))),
        "accept_rate": res.accept_rate,
        "sample_seconds": res.sample_seconds,
        "hist_edges": edges,
        "hist_counts": counts,
    }


def t_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, lower, upper): the Student-t interval of the mean over replicates (trials, chains); the bounds
    are nan with fewer than 2 finite values."""
    from scipy import stats

    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float)
    if v.size == 0:
        return float("nan"), float("nan"), float("nan")
    mu = float(v.mean())
    if v.size < 2:
        return mu, float("nan"), float("nan")
    h = float(stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return mu, mu - h, mu + h


def log_t_interval(ratios, level: float = 0.95) -> tuple[float, float, float]:
    """(geometric mean, lower, upper) of positive ratios over replicates: :func:`t_interval` on their logs,
    mapped back (a ratio's interval stays positive and multiplicative)."""
    v = [math.log(x) for x in ratios if x is not None and np.isfinite(x) and x > 0]
    return tuple(math.exp(x) if np.isfinite(x) else float("nan") for x in t_interval(v, level))


def fmt_interval(mu: float, lo: float, hi: float, digits: int = 3, spec: str | None = None) -> str:
    """``mu [lo, hi]`` (``mu`` alone without an interval); ``spec`` (e.g. ``".0f"``) overrides ``digits``."""
    g = "{:" + (spec if spec is not None else f".{digits}g") + "}"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return g.format(mu)
    return f"{g.format(mu)} [{g.format(lo)}, {g.format(hi)}]"


def risk_at(times, risks, t: float) -> float:
    """A chain's risk curve at time t: log-log interpolation between its checkpoints, clamped to its ends."""
    lt, lr = np.log(np.asarray(times, float)), np.log(np.maximum(np.asarray(risks, float), 1e-300))
    return float(np.exp(np.interp(math.log(t), lt, lr)))


def risk_comparisons(curves: dict, t_early: float) -> tuple[float, dict]:
    """K14 Figs. 2 / 3 as numbers. ``curves[eps][chain] = (times, risks)`` (eps 0 = exact MH). Per eps,
    95 % t-intervals over chains paired by index (chain k against chain k) of risk differences (ratios of
    risks near 0 are unstable): ``early_gain`` = exact's risk - this eps's at ``t_early`` (> 0: ahead
    early), ``late_gain`` = the same at ``t_late``, the last time every chain reached, and ``floor_excess``
    = this eps's risk - the smallest eps's at ``t_late`` (> 0: a higher bias floor). Returns
    (t_late, {eps: {name: (mean, lo, hi)}})."""
    t_late = min(tr[0][-1] for ch in curves.values() for tr in ch.values())
    ex = curves.get(0.0, {})
    approx = sorted(e for e in curves if e > 0)
    small = curves[approx[0]] if approx else {}
    out = {}
    for e, ch in curves.items():
        paired = [c for c in ch if c in ex]
        out[e] = {
            "early_gain": t_interval([risk_at(*ex[c], t_early) - risk_at(*ch[c], t_early) for c in paired]),
            "late_gain": t_interval([risk_at(*ex[c], t_late) - risk_at(*ch[c], t_late) for c in paired]),
            "floor_excess": t_interval(
                [risk_at(*ch[c], t_late) - risk_at(*small[c], t_late) for c in ch if c in small]
            )
            if e > 0
            else (float("nan"),) * 3,
        }
    return t_late, out


def risk_columns(cmp: dict, t_early: float, t_late: float) -> dict:
    """The table columns of one eps's :func:`risk_comparisons` entry."""
    row = {"t_early": t_early, "t_late": t_late}
    for k, (mu, lo, hi) in cmp.items():
        row.update({k: mu, f"{k}_lo": lo, f"{k}_hi": hi})
    return row
