"""The RLR ESS tables put the paper's HMC value only on the HMC row with the paper's leapfrog count
(10 in seed 001 Tables 2/5, 5 in Tables 6/7), not on every HMC row."""

from __future__ import annotations

import pandas as pd
import pytest

import samplers  # noqa: F401  (sets the Numba cache dir)
from bench.experiments import exact_mh as X


def _row(method: str) -> dict:
    """One ok ESS-table record of ``method`` at acceptance 0.4."""
    return {
        "status": "ok",
        "method": method,
        "target_rate": 0.4,
        "ess_s": [1.0, 2.0],
        "accept": 0.4,
        "step": 0.1,
        "mean_batch": 1.0,
        "sec_per_iter": 1e-3,
    }


class _Out:
    def __init__(self) -> None:
        self.tables: dict[str, pd.DataFrame] = {}
        self.figures: dict[str, list] = {}

    def table(self, name: str, t: pd.DataFrame, caption: str = "") -> None:
        self.tables[name] = t

    def figure(self, name: str, fig, caption: str = "") -> None:
        import matplotlib.pyplot as plt

        self.figures[name] = [[ln.get_label() for ln in a.get_lines()] for a in fig.axes]
        plt.close(fig)


@pytest.mark.parametrize("variant, steps", [("rlr_10d_n1e5", 10), ("rlr_10d_n2e5", 5), ("rlr_50d", 5)])
def test_paper_hmc_value_only_on_matching_leapfrog_row(variant: str, steps: int) -> None:
    rows = [{**_row(m), "variant": variant} for m in ("hmc2", "hmc5", "hmc10", "mala")]
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
    rows = [_row(m) for m in ("mala", "mala+recompute")]
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

    monkeypatch.setenv("MCMC_BENCH_RESULTS", str(tmp_path))
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


def test_rlr_mse_figures_average_runs_and_compare_leapfrog_counts() -> None:
    """Figs. 1/4 (time and iteration MSE; recompute rows only on the time axis) and Fig. 5 (HMC
    2/5/10) counterparts; the run average is the mean of the runs' curves."""
    import numpy as np

    rows = []
    for m in ("mala", "mala+recompute", "poisson_mala", "hmc2", "hmc5", "hmc10"):
        for run in (0, 1):
            rows.append(
                {
                    "status": "ok",
                    "variant": "rlr_10d_n1e5",
                    "method": m,
                    "target_rate": 0.4,
                    "run": run,
                    "ess_s": [1.0, 2.0],
                    "accept": 0.4,
                    "step": 0.1,
                    "mean_batch": 1.0,
                    "sec_per_iter": 1e-3 * (2 if "recompute" in m else 1),
                    "mse_t": [0.01 * (run + 1), 0.1 * (run + 1)],
                    "mse_mean": [1.0 + run, 0.1 + run],
                }
            )
    df = pd.DataFrame(rows)
    t, it, mse = X.mean_mse_curves(df[df["method"] == "mala"])
    np.testing.assert_allclose(mse, [1.5, 0.6])
    np.testing.assert_allclose(t, [0.015, 0.15])
    np.testing.assert_allclose(it, [15.0, 150.0])
    out = _Out()
    X.rlr_summarize(df, {"variants": ["rlr_10d_n1e5"]}, out)
    clock, iters = out.figures["exact_mh_rlr_10d_n1e5_mse"]
    assert "MALA (authors' recompute)" in clock and "MALA (authors' recompute)" not in iters
    assert {"hmc2", "hmc5", "hmc10"} == set(out.figures["exact_mh_rlr_10d_n1e5_hmc_leapfrog"][0])
    out2 = _Out()  # N = 2e5 (Fig. 6): no leapfrog figure in the paper
    X.rlr_summarize(df.assign(variant="rlr_10d_n2e5"), {"variants": ["rlr_10d_n2e5"]}, out2)
    assert set(out2.figures) == {"exact_mh_rlr_10d_n2e5_mse", "exact_mh_rlr_10d_n2e5_ess"}


def test_tg_summarize_tables_and_figures() -> None:
    """Tables 1/3/4 + Fig. 3 counterparts and a figure per table, with recompute and SGLD rows."""
    import numpy as np

    rows = []
    for m in ("rwm", "rwm+recompute", "mala", "poisson_mh", "poisson_mala", "sgld"):
        for rate in [np.nan] if m == "sgld" else [0.25, 0.4]:
            for run in (0, 1):
                rows.append(
                    {
                        "status": "ok",
                        "method": m,
                        "target_rate": rate,
                        "run": run,
                        "ess_s": [1.0, 2.0 + run],
                        "accept": 0.4,
                        "step": 0.1,
                        "mean_batch": 5.0,
                        "sec_per_iter": 1e-3,
                        "mse_t": [0.01, 0.1],
                        "mse_mean": [1.0, 0.1],
                        "mse_var": [2.0, 0.2],
                        "ks_min": 0.01,
                        "ks_med": 0.02,
                        "ks_max": 0.05 + run * 0.01,
                    }
                )
    out = _Out()
    X.tg_summarize(pd.DataFrame(rows), {}, out)
    assert {"exact_mh_tg_ess", "exact_mh_tg_ess_best", "exact_mh_tg_ks"} <= set(out.tables)
    assert {"exact_mh_tg_fig3_mse", "exact_mh_tg_ess", "exact_mh_tg_ks"} <= set(out.figures)
    t = out.tables["exact_mh_tg_ess"].set_index(["method", "target_rate"])
    assert t.loc[("rwm+recompute", 0.4), "paper_value"] == t.loc[("rwm", 0.4), "paper_value"]
    assert t.loc[("poisson_mh", 0.4), "ess_s_med"] == 1.75  # per-coordinate mean over runs, then median


def test_rlr_colors_pair_cached_and_recompute_rows():
    """Fig. 1/4/8 panels: a `+recompute` row gets its cached row's colour, distinct methods distinct
    colours (the time row used to draw recompute rows with the next colour of the cycle)."""
    from bench.experiments.exact_mh import RECOMPUTE, rlr_colors

    ms = ["mala", "mala" + RECOMPUTE, "hmc5", "hmc5" + RECOMPUTE, "poisson_mala"]
    c = rlr_colors(ms)
    assert set(c) == {"mala", "hmc5", "poisson_mala"}
    assert len(set(c.values())) == 3


def _rlr_cells(variant: str, meds: dict[str, dict[float, float]]) -> pd.DataFrame:
    """One run per (method, rate) of ``variant`` whose per-coordinate ESS/s is (0.5 m, m, 2 m), m = the
    given median."""
    return pd.DataFrame(
        [
            {**_row(m), "variant": variant, "target_rate": rate, "run": 0, "ess_s": [0.5 * v, v, 2.0 * v]}
            for m, by_rate in meds.items()
            for rate, v in by_rate.items()
        ]
    )


def test_rlr_best_rate_table_per_method_with_the_papers_best_rate() -> None:
    """exact_mh_<v>_ess_best (seed 001 Table 2): each method at its largest median ESS/s, beside the
    paper's best rate and its printed value (HMC only on the paper's leapfrog row; the recompute row gets
    its cached row's); tg_summarize and the markdown report select with the same function."""
    from bench.experiments import exact_mh_report as R

    v = "rlr_10d_n1e5"
    meds = {
        "rwm": {0.25: 3.0, 0.4: 2.0, 0.55: 1.0},
        "mala": {0.25: 2.0, 0.4: 6.0, 0.55: 5.0},
        "mala+recompute": {0.25: 1.0, 0.4: 1.5, 0.55: 2.0},
        "hmc10": {0.25: 0.5, 0.4: 0.4, 0.55: 0.6},
        "hmc2": {0.25: 0.7, 0.4: 0.2, 0.55: 0.1},
        "poisson_mala": {0.25: 100.0, 0.4: 300.0, 0.55: 400.0},
    }
    out = _Out()
    X.rlr_summarize(_rlr_cells(v, meds), {"variants": [v]}, out)
    best = out.tables[f"exact_mh_{v}_ess_best"].set_index("method")
    ours = {
        "rwm": 0.25,
        "mala": 0.4,
        "mala+recompute": 0.55,
        "hmc10": 0.55,
        "hmc2": 0.25,
        "poisson_mala": 0.55,
    }
    assert best["target_rate"].to_dict() == ours
    assert best["ess_s_med"].to_dict() == {m: meds[m][r] for m, r in ours.items()}
    assert best.loc["poisson_mala", "ess_s_max"] == 800.0 and best.loc["rwm", "ess_s_min"] == 1.5
    paper = {"rwm": 0.25, "mala": 0.55, "mala+recompute": 0.55, "hmc10": 0.4, "poisson_mala": 0.55}
    assert best["paper_rate"].dropna().to_dict() == paper and pd.isna(best.loc["hmc2", "paper_rate"])
    assert best.loc["poisson_mala", "paper_value"] == "(489.3,491.8,496.5)"
    assert best.loc["mala+recompute", "paper_value"] == best.loc["mala", "paper_value"] == "(5.0,5.1,5.2)"
    assert best.loc["hmc10", "paper_value"] == "(.9,.9,1.0)" and best.loc["hmc2", "paper_value"] == "-"
    assert f"exact_mh_{v}_ess" in out.figures  # the ESS/s figure of both tables, as for the TG
    # the truncated Gaussian's Table 1 and the markdown report: the same selection
    df = _rlr_cells(v, meds).assign(mse_t=[[0.1]] * 18, mse_mean=[[1.0]] * 18, mse_var=[[1.0]] * 18)
    tg = _Out()
    X.tg_summarize(df.assign(ks_min=0.0, ks_med=0.0, ks_max=0.0), {}, tg)
    assert tg.tables["exact_mh_tg_ess_best"].set_index("method")["target_rate"].to_dict() == ours
    md = R.best_rate_markdown(
        R.ess_summary(df.assign(wall_cpu=float("nan")), "ess_s", X.rlr_paper(v)), X.rlr_paper(v)
    )
    assert "| Poisson-MALA | 0.55 | (200.0, 400.0, 800.0) | 0.55 | (489.3,491.8,496.5) |" in md
    assert "| MALA | 0.4 | (3, 6, 12) | 0.55 | (5.0,5.1,5.2) |" in md
