"""``mcmc-bench verify [--quick] [--family F | --check ID] [--list] [--out-dir DIR] [--results-dir DIR]``
(bench/cli.py plugin)."""

from __future__ import annotations

import argparse
import sys


def _cmd_verify(args: argparse.Namespace) -> int:
    import os

    from verify.checks import RESULTS_ENV
    from verify.runner import verify_main

    if args.results_dir is not None:
        os.environ[RESULTS_ENV] = args.results_dir

    if args.list:
        from verify.registry import load_checks

        for chk in load_checks(args.family or None):
            print(f"{chk.id:48s} {chk.family:14s} {chk.kind:7s} {chk.description}")
        return 0
    try:
        return verify_main(
            quick=args.quick, families=args.family or None, out_dir=args.out_dir, check_ids=args.check
        )
    except ValueError as e:  # an unknown family or check id: one line, no traceback
        print(f"mcmc-bench verify: {e}", file=sys.stderr)
        return 2


def register(subparsers) -> None:
    """Add the ``verify`` subcommand; its handler returns an int exit code."""
    p = subparsers.add_parser("verify", help="run the registered verification checks")
    p.add_argument("--quick", action="store_true", help="reduced sizes (seconds per check)")
    p.add_argument(
        "--family",
        action="append",
        default=None,
        help="only this check family (repeatable): baselines exact_mh approx poisson_gibbs herded",
    )
    p.add_argument(
        "--check",
        action="append",
        default=None,
        metavar="ID",
        help="only the check with this id (repeatable; --list shows the ids)",
    )
    p.add_argument(
        "--list", action="store_true", help="list the registered checks (id, family, kind) and exit"
    )
    p.add_argument("--out-dir", default="results", help="directory for the CSV tables")
    p.add_argument(
        "--results-dir",
        default=None,
        help="the experiments' tables the claim checks read (default: $MCMC_BENCH_RESULTS, else ./results)",
    )
    p.set_defaults(func=_cmd_verify)
