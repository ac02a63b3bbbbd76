"""``mcmc-bench``: list the registry, run one cell, and the subcommands other packages plug in.

Subcommand modules (each defines ``register(subparsers)``) are listed in ``PLUGINS``: ``cells``, ``cell``,
``aggregate``, ``experiments`` (workflow), ``verify``, ``perf`` and ``peers``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PLUGINS = ("bench.cli_workflow", "bench.cli_store", "verify.cli", "bench.perf_cli", "bench.peers")


def _cmd_methods(args: argparse.Namespace) -> int:
    from samplers.registry import METHODS

    for m in sorted(METHODS.values(), key=lambda s: (s.family, s.id)):
        exact = "exact" if m.exact else "approx"
        print(f"{m.id:20s} {m.family:16s} {exact:7s} {m.paper:34s} {m.description}")
    return 0


def _cmd_targets(args: argparse.Namespace) -> int:
    from samplers.registry import TARGETS

    for t in sorted(TARGETS.values(), key=lambda s: s.id):
        data = f"[data: {t.data}]" if t.data else ""
        print(f"{t.id:24s} {t.space:12s} {t.paper:34s} {t.description} {data}")
    return 0


def _parse_value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


OUT_SUFFIXES = (".npz", ".json")


def check_destination(text: str) -> Path:
    """The ``--out`` path, checked before anything runs: a ``.npz`` / ``.json`` name that is not a
    directory, whose nearest existing ancestor is a directory in which a file can be created (a
    temporary probe file, removed at once: this catches a read-only file system or a parent that is a
    file). ValueError naming the path as given."""
    out = Path(text)
    if out.suffix not in OUT_SUFFIXES:
        raise ValueError(f"--out {text}: must end in .npz or .json")
    if out.is_dir():
        raise ValueError(f"--out {text}: is a directory")
    anc = out.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise ValueError(f"--out {text}: cannot be written, {anc} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".mcmc-bench-probe.", dir=anc)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise ValueError(f"--out {text}: cannot be written ({e.strerror or e} in {anc})") from None
    return out


def _count(text: str) -> int:
    """A count given as an integer or in integer-valued float notation (``1e6``); its range is checked
    where it is used (``--iters 0`` is an error naming n_iter)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not (math.isfinite(v) and v == int(v) and abs(v) < 2**63):
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(v)


def _cmd_run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except KeyboardInterrupt:
        print("mcmc-bench: interrupted, nothing written", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace) -> int:
    from samplers import registry
    from samplers.run import check_result_size
    from samplers.tuning import tune_step

    out = check_destination(args.out) if args.out else None
    spec = registry.get_method(args.method)
    tspec = registry.get_target(args.target)
    hyper = dict(_parse_kv(args.param))
    tparams = dict(_parse_kv(args.target_param))
    if args.iters < args.thin:
        raise ValueError(f"--iters ({args.iters}) must be >= --thin ({args.thin})")
    data = None
    if tspec.data is not None:
        from bench.data_registry import load_named  # dataset names -> loaders

        data = load_named(args.data or tspec.data)
    root = np.random.SeedSequence(args.seed)
    data_ss, tune_ss, chain_ss = root.spawn(3)
    problem = registry.build_problem(args.target, data_ss, scale=args.scale, data=data, **tparams)
    check_result_size(args.iters, args.thin, problem.dim)  # before the pilot runs too
    if args.accept_target is not None:
        if spec.step_param is None:
            raise ValueError(f"method {args.method!r} has no step size to tune")
        step, acc = tune_step(
            args.method,
            problem,
            args.accept_target,
            tune_ss,
            **{k: v for k, v in hyper.items() if k != spec.step_param},
        )
        hyper[spec.step_param] = step
        print(f"tuned {spec.step_param}={step:.6g} (pilot acceptance {acc:.3f})", file=sys.stderr)
    from tqdm import tqdm

    with tqdm(
        total=args.iters,
        desc=f"{args.method} on {args.target}",
        unit="it",
        disable=args.quiet,
        file=sys.stderr,
    ) as bar:
        res = registry.run(
            args.method, problem, args.iters, chain_ss, thin=args.thin, progress=bar.update, **hyper
        )
    from samplers.result import atomic_write_text, config_hash

    cfg = {
        "method": args.method,
        "target": args.target,
        "scale": args.scale,
        "iters": args.iters,
        "thin": args.thin,
        "hyper": hyper,
        "target_params": tparams,
        "accept_target": args.accept_target,
    }
    res.config_hash = config_hash(cfg)
    res.seed = f"{args.seed}:{res.seed}"
    row = res.summary()
    if out is not None:
        try:
            if out.suffix == ".npz":
                res.save(out)
            else:
                rec = {
                    **row,
                    "samples": res.samples.tolist(),
                    "accepted": res.accepted.tolist(),
                    "n_evals": res.n_evals.tolist(),
                }
                atomic_write_text(out, json.dumps(rec, default=float))
        except OSError as e:
            raise ValueError(f"--out {args.out}: writing failed ({e.strerror or e})") from None
    print(json.dumps(row, default=float, indent=1))
    return 0


def _parse_kv(items: list[str] | None):
    for item in items or []:
        if "=" not in item:
            raise ValueError(f"expected KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        yield k, _parse_value(v)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mcmc-bench", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("methods", help="list registered methods").set_defaults(func=_cmd_methods)
    sub.add_parser("targets", help="list registered targets").set_defaults(func=_cmd_targets)
    r = sub.add_parser("run", help="run one method on one target")
    r.add_argument("--method", required=True)
    r.add_argument("--target", required=True)
    r.add_argument("--iters", type=_count, default=10_000, help="iterations (an integer; 1e6 notation too)")
    r.add_argument("--thin", type=_count, default=1, help="store every thin-th draw")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--scale", choices=("paper", "smoke"), default="smoke")
    r.add_argument(
        "--accept-target",
        type=float,
        default=None,
        help="tune the step size to this acceptance rate with pilot runs first",
    )
    r.add_argument("--param", "-p", action="append", help="hyperparameter KEY=VALUE (repeatable)")
    r.add_argument("--target-param", "-t", action="append", help="target parameter KEY=VALUE")
    r.add_argument("--data", default=None, help="dataset name for data-backed targets")
    r.add_argument("--out", default=None, help="write the result record (.npz or .json)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.set_defaults(func=_cmd_run)
    for name in PLUGINS:
        importlib.import_module(name).register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    try:
        rc = args.func(args)
    except (ValueError, FileNotFoundError) as e:
        print(f"mcmc-bench: error: {e}", file=sys.stderr)
        return 2
    if getattr(args, "verbose", False):
        print(f"done in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
