"""``mcmc-bench perf`` argument parsing only: :mod:`bench.perf` (NumPy, pandas, Numba kernels) is
imported when the command runs, so building the CLI parser stays cheap for every other subcommand
(each workflow cell is one ``mcmc-bench cell`` process)."""

from __future__ import annotations

import argparse
import sys


def _cmd_perf(args: argparse.Namespace) -> int:
    split = lambda v: None if v is None else [m for m in v.split(",") if m]
    if args.from_table:
        from bench.perf import redraw

        redraw(args.from_table, args.out, args.figs)
        print(args.out)
        return 0
    from bench.perf import run_perf

    run_perf(
        args.quick,
        args.out,
        args.figs,
        startup_methods=split(args.startup),
        log=lambda s: print(s, file=sys.stderr, flush=True),
        methods=split(args.methods),
        max_n=args.max_n,
        paired=args.paired,
    )
    print(args.out)
    return 0


def register(subparsers) -> None:
    """Add ``mcmc-bench perf``."""
    p = subparsers.add_parser("perf", help="performance report: time vs N, E[B], speedups, start times")
    p.add_argument("--quick", action="store_true", help="N up to 1e5, short rounds, few start-up runs")
    p.add_argument("--out", default="results/performance.csv")
    p.add_argument("--figs", default="paper_figs")
    p.add_argument(
        "--startup",
        default=None,
        help="comma-separated methods for cold/warm start (default: all; --quick: 3)",
    )
    p.add_argument(
        "--methods",
        default=None,
        help="comma-separated minibatch methods to measure (default: every one with a twin)",
    )
    p.add_argument("--max-n", type=int, default=None, help="largest N of the sweep (overrides --quick)")
    p.add_argument(
        "--paired",
        type=int,
        default=0,
        metavar="K",
        help="also measure the efficiency and growth targets in K interleaved rounds and judge them by "
        "the median (docs/performance.md §4); 0 = off",
    )
    p.add_argument(
        "--from-table",
        default=None,
        metavar="CSV",
        help="measure nothing: write the table and figures of a stored run (results/store/perf.csv.xz)",
    )
    p.set_defaults(func=_cmd_perf)
