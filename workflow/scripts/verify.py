"""Merge the per-family `mcmc-bench verify` tables (verify/runner.py FILES) for the report.

Writes results/{verify_exact,theory_vs_empirics,claims}.{csv,md} (rows of every family, with a
``family`` column) and always results/verify_status.{csv,md}: one row per family with "ok" or
"failed" (exit code of `mcmc-bench verify --family F`: non-zero iff an exact check failed, a bound
was violated without a documented reason, or a check raised), or one "not available" row when the
verify subcommand is not part of this checkout (no theory/claims table is invented then). A
"failed" row makes the workflow's final check_cells step fail loudly, after the report is written.
"""

import json
from pathlib import Path

import pandas as pd

from bench.outputs import Outputs

sm = snakemake  # noqa: F821 (injected by `script:`)
TABLES = ("verify_exact", "theory_vs_empirics", "claims")
out = Outputs("results", "paper_figs", experiment="verify", assets_dir=sm.output.assets)
Path(sm.output.assets).mkdir(parents=True, exist_ok=True)

rows, frames = [], {t: [] for t in TABLES}
for fam, path in zip(sm.params.families, sm.input, strict=True):
    rc = json.loads(Path(path).read_text())["exit_code"]
    found = []
    for t in TABLES:
        p = Path(path).parent / f"{t}.csv"
        if p.exists() and p.stat().st_size > 0:
            df = pd.read_csv(p)
            if "family" not in df.columns:
                df.insert(0, "family", fam)
            frames[t].append(df)
            found.append(f"{t} ({len(df)} rows)")
    rows.append(
        {
            "family": fam,
            "status": "ok" if rc == 0 else "failed",
            "exit_code": rc,
            "tables": ", ".join(found) or "none",
            "log": f"logs/verify/{fam}.log",
        }
    )
if not sm.params.families:
    rows.append(
        {
            "family": "-",
            "status": "not available",
            "exit_code": "",
            "tables": "none: verify/cli.py (mcmc-bench verify) is not part of this checkout",
            "log": "",
        }
    )
for t in TABLES:
    if frames[t]:
        out.table(
            t,
            pd.concat(frames[t], ignore_index=True),
            caption=f"{t}: `mcmc-bench verify` rows of every check family",
        )
out.table(
    "verify_status",
    pd.DataFrame(rows),
    caption="Verification step per check family: ok / failed (exit code) / not available.",
)
out.write_manifest(sm.output.manifest)
