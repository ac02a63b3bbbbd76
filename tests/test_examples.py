"""Every script in ``examples/`` runs from the command line with ``--quick`` and exits 0.

Each runs as its own process, as a user runs it (``python examples/<name>.py --quick``), so it can use only
what an installed checkout offers; its own output states what it checked (an example exits 1 when one of
its checks fails).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_quick(script: Path, tmp_path: Path):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    r = subprocess.run(
        [sys.executable, str(script), "--quick"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, f"{script.name} exited {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
