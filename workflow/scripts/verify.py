"""Run `mcmc-bench verify` (verify/cli.py) and collect its tables for the report.

Always writes results/verify_status.{csv,md}: "ok" with the tables found, or "not available" when
the verify subcommand is not installed in this checkout (no theory/claims tables are invented).
A verify run that fails makes this rule fail.
"""

import importlib.util
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd

from bench.outputs import Outputs

sm = snakemake  # noqa: F821 (injected by `script:`)
TABLES = ("theory_vs_empirics", "claims", "exact_checks")
results = Path("results")
out = Outputs(results, "paper_figs", experiment="verify", assets_dir=sm.output.assets)
Path(sm.output.assets).mkdir(parents=True, exist_ok=True)
cmd = shlex.split(sm.params.cli) + ["verify"] + (["--quick"] if sm.params.quick else [])

with open(sm.log[0], "w") as log:
    if importlib.util.find_spec("verify.cli") is None:
        status = pd.DataFrame(
            [
                {
                    "status": "not available",
                    "command": " ".join(cmd[-2:]),
                    "detail": "verify/cli.py (the `mcmc-bench verify` subcommand) is not part of this "
                    "checkout yet; no theory-vs-empirics or claims table was produced.",
                }
            ]
        )
        print("mcmc-bench verify: not available", file=log)
    else:
        before = {
            t: (results / f"{t}.csv").stat().st_mtime if (results / f"{t}.csv").exists() else None
            for t in TABLES
        }
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
        if rc != 0:
            sys.exit(f"`{' '.join(cmd)}` failed with exit code {rc}; see {sm.log[0]}")
        found = []
        for t in TABLES:
            p = results / f"{t}.csv"
            if p.exists() and (before[t] is None or p.stat().st_mtime > before[t]):
                out.table(t, pd.read_csv(p), caption=f"{t} (mcmc-bench verify)")
                found.append(t)
        status = pd.DataFrame(
            [
                {
                    "status": "ok",
                    "command": " ".join(cmd[-2:]),
                    "detail": "tables: " + (", ".join(found) or "none written"),
                }
            ]
        )
    out.table("verify_status", status, caption="Status of the verification step.")
out.write_manifest(sm.output.manifest)
