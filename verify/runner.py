"""Run registered checks and write the three result tables atomically.

* ``verify_exact.csv``          exact rows (verify.checks.EXACT_COLUMNS)
* ``theory_vs_empirics.csv``    theory rows (THEORY_COLUMNS + ``reason``)
* ``claims.csv``                claim rows (CLAIM_COLUMNS, ``family``, ``threshold``, ``paper_value`` and
                                the uncertainty columns CLAIM_UNCERTAINTY_COLUMNS, empty where a check
                                gives none)

Exit status (:func:`exit_code`): non-zero iff an exact row has ``passed`` false, a theory row has
``holds`` false without a non-empty ``reason``, or a check raised (recorded as a failed exact row
named ``<id>`` with the exception in ``detail``). Claims that do not hold are reported, not fatal
(they are the paper's qualitative statements, measured).
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from verify.checks import CLAIM_COLUMNS, EXACT_COLUMNS, THEORY_COLUMNS, Check

FILES = {"exact": "verify_exact.csv", "theory": "theory_vs_empirics.csv", "claim": "claims.csv"}
# Every claim row has these columns (empty where a check gives none): ``value`` (the number the verdict
# compares with its threshold), ``ci_low`` / ``ci_high`` (its 95 % interval), ``runs_held`` ("k/n": the
# runs, or settings, in which the claim holds alone) and ``verdict`` (text with the interval).
CLAIM_UNCERTAINTY_COLUMNS = ("value", "ci_low", "ci_high", "runs_held", "verdict")
COLUMNS = {
    "exact": EXACT_COLUMNS + ["family", "seconds"],
    "theory": THEORY_COLUMNS + ["reason", "family"],
    "claim": CLAIM_COLUMNS + ["family", "threshold", "paper_value"] + list(CLAIM_UNCERTAINTY_COLUMNS),
}


@dataclass
class RunReport:
    rows: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {"exact": [], "theory": [], "claim": []}
    )
    timings: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    paths: dict[str, Path] = field(default_factory=dict)

    def failures(self) -> list[str]:
        """Human-readable list of the failures that make the exit code non-zero."""
        out = [
            f"{r['check']}: exact check failed ({r.get('detail', '')})"
            for r in self.rows["exact"]
            if not _truthy(r.get("passed"))
        ]
        out += [
            f"{r['check']}: bound violated without a documented reason"
            for r in self.rows["theory"]
            if not _truthy(r.get("holds")) and not str(r.get("reason") or "").strip()
        ]
        return out


def _truthy(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("true", "1", "yes")
    return bool(v)


def exit_code(report: RunReport) -> int:
    return 1 if report.failures() else 0


def atomic_write_csv(df: pd.DataFrame, path: Path) -> Path:
    """Write ``df`` to ``path`` via a temporary file in the same directory + ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="") as fh:
            df.to_csv(fh, index=False)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def _validate_rows(chk: Check, rows: Any) -> list[dict[str, Any]]:
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise TypeError(f"check {chk.id!r} must return a list of dicts, got {type(rows).__name__}")
    base = {"exact": EXACT_COLUMNS, "theory": THEORY_COLUMNS, "claim": CLAIM_COLUMNS}[chk.kind]
    for r in rows:
        missing = [c for c in base if c not in r]
        if missing:
            raise ValueError(f"check {chk.id!r}: row misses columns {missing}")
    return rows


def run_checks(
    checks: list[Check],
    quick: bool = True,
    out_dir: str | os.PathLike | None = "results",
    log: Callable[[str], None] | None = print,
) -> RunReport:
    """Run ``checks`` (quick or full), print progress and timing per check, write the tables to
    ``out_dir`` (None: do not write). Exceptions become failed exact rows."""
    rep = RunReport()
    say = log or (lambda s: None)
    t_all = time.perf_counter()
    for k, chk in enumerate(checks, 1):
        say(f"[{k}/{len(checks)}] {chk.family}:{chk.id} ({chk.kind}) ...")
        t0 = time.perf_counter()
        c0 = time.process_time()
        try:
            rows = _validate_rows(chk, chk.run(quick))
            status = _status(chk.kind, rows)
        except Exception as e:  # recorded, makes the exit code non-zero
            rows = [
                {
                    "check": chk.id,
                    "paper": chk.paper,
                    "method": "-",
                    "target": "-",
                    "statistic": "error",
                    "value": float("nan"),
                    "threshold": float("nan"),
                    "passed": False,
                    "detail": f"{type(e).__name__}: {e}",
                }
            ]
            rep.errors[chk.id] = traceback.format_exc()
            status = f"ERROR {type(e).__name__}: {e}"
            kind = "exact"
        else:
            kind = chk.kind
        dt = time.perf_counter() - t0
        rep.timings[chk.id] = dt
        for r in rows:
            r = dict(r)
            r["family"] = chk.family
            if kind == "exact":
                r["seconds"] = round(dt, 3)
            if kind == "theory":
                r.setdefault("reason", "")
            rep.rows[kind].append(r)
        say(f"    {status}  ({dt:.1f} s wall, {time.process_time() - c0:.1f} s CPU)")
    if out_dir is not None:
        for kind, fname in FILES.items():
            df = pd.DataFrame(rep.rows[kind])
            cols = COLUMNS[kind] + [c for c in df.columns if c not in COLUMNS[kind]]
            df = df.reindex(columns=cols)
            rep.paths[kind] = atomic_write_csv(df, Path(out_dir) / fname)
    n_fail = len(rep.failures())
    say(
        f"verify: {len(checks)} checks, {sum(len(v) for v in rep.rows.values())} rows, "
        f"{n_fail} failure(s), {time.perf_counter() - t_all:.1f} s"
    )
    return rep


def _status(kind: str, rows: list[dict[str, Any]]) -> str:
    if kind == "exact":
        bad = sum(not _truthy(r["passed"]) for r in rows)
        return f"{len(rows) - bad}/{len(rows)} passed" if rows else "no rows"
    if kind == "theory":
        bad = sum(not _truthy(r["holds"]) for r in rows)
        undoc = sum(not _truthy(r["holds"]) and not str(r.get("reason") or "").strip() for r in rows)
        return f"{len(rows) - bad}/{len(rows)} bounds hold ({undoc} undocumented violations)"
    bad = sum(not _truthy(r["holds"]) for r in rows)
    return f"{len(rows) - bad}/{len(rows)} claims hold"


def verify_main(
    quick: bool = True,
    families: list[str] | None = None,
    out_dir: str | os.PathLike = "results",
    log: Callable[[str], None] | None = print,
    check_ids: list[str] | None = None,
) -> int:
    """Load, run, write; return the exit code (what ``mcmc-bench verify`` returns). ``check_ids``: only
    these checks (:func:`verify.registry.find_check`; an unknown id is a ValueError naming near ones)."""
    from verify.registry import find_check, load_checks

    if check_ids:
        if families:
            raise ValueError("give check ids or families, not both")
        checks = [find_check(c) for c in dict.fromkeys(check_ids)]
    else:
        checks = load_checks(families)
    rep = run_checks(checks, quick=quick, out_dir=out_dir, log=log)
    for f in rep.failures():
        (log or print)(f"FAIL {f}")
    return exit_code(rep)
