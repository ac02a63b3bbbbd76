"""``mcmc-bench verify [--quick] [--family F] [--out-dir DIR] [--results-dir DIR]`` (bench/cli.py plugin)."""

from __future__ import annotations

import argparse


def _cmd_verify(args: argparse.Namespace) -> int:
    import os

    from verify.checks import RESULTS_ENV
    from verify.runner import verify_main

    if args.results_dir is not None:
        os.environ[RESULTS_ENV] = args.results_dir

    return verify_main(quick=args.quick, families=args.family or None, out_dir=args.out_dir)


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
    p.add_argument("--out-dir", default="results", help="directory for the CSV tables")
    p.add_argument(
        "--results-dir",
        default=None,
        help="the experiments' tables the claim checks read (default: $MCMC_BENCH_RESULTS, else ./results)",
    )
    p.set_defaults(func=_cmd_verify)
