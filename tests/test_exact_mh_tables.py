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


def test_recompute_cells_only_for_full_batch_and_default_names_unchanged() -> None:
    base = {"runs": 1, "methods": X.TG_METHODS, "rates": [0.4]}
    plain = X.tg_cells(base)
    both = X.tg_cells({**base, "energies": ["cached", "recompute"]})
    assert [c["cell"] for c in plain] == [c["cell"] for c in both if c["energy"] == "cached"]
    rec = [c for c in both if c["energy"] == "recompute"]
    assert sorted(c["method"] for c in rec) == ["barker", "mala", "rwm"]
    assert all(c["cell"].startswith(c["method"] + "_recompute_") for c in rec)
    rl = X.rlr_cells(
        {
            "variants": ["rlr_10d_n1e5"],
            "runs": 1,
            "runs_50d": 1,
            "methods": X.RLR_METHODS,
            "rates": [0.4],
            "n_leapfrog_list": [5],
            "energies": ["cached", "recompute"],
        }
    )
    assert {c["cell"] for c in rl if c["energy"] == "recompute"} == {
        f"rlr_10d_n1e5_{m}_recompute_r0.4_run0" for m in ("rwm", "mala", "barker", "hmc5")
    }


def test_recompute_rows_get_the_papers_value_and_a_distinct_label() -> None:
    rows = [
        {
            "status": "ok",
            "method": m,
            "target_rate": 0.4,
            "ess_s": [1.0, 2.0],
            "accept": 0.4,
            "step": 0.1,
            "mean_batch": 1.0,
            "sec_per_iter": 1e-3,
        }
        for m in ("mala", "mala+recompute")
    ]
    t = X._ess_table(pd.DataFrame(rows), X.P_TG).set_index("method")
    assert t.loc["mala+recompute", "paper_value"] == t.loc["mala", "paper_value"] != "-"
    assert t.loc["mala+recompute", "label"] == "MALA (authors' recompute)"
    assert X.base_method("hmc10+recompute") == "hmc10" and X.base_method("mala") == "mala"


def test_verify_claim_against_the_authors_full_batch_timing(tmp_path, monkeypatch) -> None:
    """exact_mh.minibatch_beats_full_authors compares with the +recompute rows only; it flips when
    a Poisson method falls below them (mutant), and is 'not run' without such rows."""
    from verify.families import exact_mh as VF

    def table(pmh: float) -> pd.DataFrame:
        meds = {
            "rwm": 3.0,
            "mala": 5.0,
            "barker": 4.0,
            "rwm+recompute": 1.5,
            "mala+recompute": 2.5,
            "barker+recompute": 2.0,
            "poisson_mh": pmh,
            "poisson_mala": 9.0,
            "poisson_barker": 8.0,
        }
        return pd.DataFrame({"method": list(meds), "target_rate": 0.4, "ess_s_med": list(meds.values())})

    monkeypatch.setattr(VF, "RESULTS", tmp_path)
    for pmh, held in ((3.5, True), (2.4, False)):
        table(pmh).to_csv(tmp_path / "exact_mh_tg_ess.csv", index=False)
        rows = {r["claim_id"]: r for r in VF._claims(quick=True)}
        assert rows["exact_mh.minibatch_beats_full_authors"]["holds"] is held
        assert rows["exact_mh.minibatch_beats_full"]["holds"] is False  # cached MALA 5.0 beats both
        assert rows["exact_mh.tg_top_two"]["holds"] is True
    t = table(3.5)
    t[~t["method"].str.endswith("+recompute")].to_csv(tmp_path / "exact_mh_tg_ess.csv", index=False)
    rows = {r["claim_id"]: r for r in VF._claims(quick=True)}
    assert rows["exact_mh.minibatch_beats_full_authors"]["holds"] is None
