"""The RLR ESS tables put the paper's HMC value only on the HMC row with the paper's leapfrog count
(10 in seed 001 Tables 2/5, 5 in Tables 6/7), not on every HMC row."""

from __future__ import annotations

import pandas as pd
import pytest

import samplers  # noqa: F401  (sets the Numba cache dir)
from bench.experiments import exact_mh as X


class _Out:
    def __init__(self) -> None:
        self.tables: dict[str, pd.DataFrame] = {}

    def table(self, name: str, t: pd.DataFrame, caption: str = "") -> None:
        self.tables[name] = t


@pytest.mark.parametrize("variant, steps", [("rlr_10d_n1e5", 10), ("rlr_10d_n2e5", 5), ("rlr_50d", 5)])
def test_paper_hmc_value_only_on_matching_leapfrog_row(variant: str, steps: int) -> None:
    rows = [
        {
            "status": "ok",
            "variant": variant,
            "method": m,
            "target_rate": 0.4,
            "ess_s": [1.0, 2.0],
            "accept": 0.4,
            "step": 0.1,
            "mean_batch": 1.0,
            "sec_per_iter": 1e-3,
        }
        for m in ("hmc2", "hmc5", "hmc10", "mala")
    ]
    out = _Out()
    X.rlr_summarize(pd.DataFrame(rows), {"variants": [variant]}, out)
    t = out.tables[f"exact_mh_{variant}_ess"].set_index("method")["paper_value"]
    assert t[f"hmc{steps}"] == X.P_RLR[variant]["hmc"][1]
    assert all(t[f"hmc{k}"] == "-" for k in (2, 5, 10) if k != steps)
    assert t["mala"] == X.P_RLR[variant]["mala"][1]
