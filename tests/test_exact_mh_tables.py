"""The RLR ESS tables put the paper's HMC value only on the HMC row with the paper's leapfrog count
(10 in Yuan & Wang 2024 Tables 2/5, 5 in Tables 6/7), not on every HMC row."""

from __future__ import annotations

import pandas as pd
import pytest

import samplers  # noqa: F401  (sets the Numba cache dir)
from bench.experiments.exact_mh import common as EC
from bench.experiments.exact_mh import paper_values as PV
from bench.experiments.exact_mh import robust_regression as RLRE
from bench.experiments.exact_mh import truncated_gaussian as TGE


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
    RLRE.rlr_summarize(pd.DataFrame(rows), {"variants": [variant]}, out)
    t = out.tables[f"exact_mh_{variant}_ess"].set_index("method")["paper_value"]
    assert t[f"hmc{steps}"] == PV.P_RLR[variant]["hmc"][1]
    assert all(t[f"hmc{k}"] == "-" for k in (2, 5, 10) if k != steps)
    assert t["mala"] == PV.P_RLR[variant]["mala"][1]


def test_recompute_cells_only_for_full_batch_and_default_names_unchanged() -> None:
    """energies [cached, recompute] adds the authors' timing of each method: energy=recompute cells of the
    full-batch methods, counts=dense cells of the three Poisson minibatch ones (SGLD has none); the cells
    as published keep their ids and params (so their config hashes)."""
    base = {"runs": 1, "methods": TGE.TG_METHODS, "rates": [0.4]}
    plain = TGE.tg_cells(base)
    both = TGE.tg_cells({**base, "energies": ["cached", "recompute"]})
    assert plain == [c for c in both if c["energy"] == "cached" and "counts" not in c]
    rec = [c for c in both if c["energy"] == "recompute"]
    assert sorted(c["method"] for c in rec) == ["barker", "mala", "rwm"]
    assert all(c["cell"].startswith(c["method"] + "_recompute_") for c in rec)
    dense = [c for c in both if "counts" in c]
    assert sorted(c["method"] for c in dense) == sorted(EC.COUNTS_METHODS)
    assert all(c["counts"] == "dense" and c["cell"].startswith(c["method"] + "_dense_") for c in dense)
    assert [EC.row_label(c["method"], c) for c in dense] == [c["method"] + EC.DENSE for c in dense]
    rl = RLRE.rlr_cells(
        {
            "variants": ["rlr_10d_n1e5"],
            "runs": 1,
            "runs_50d": 1,
            "methods": RLRE.RLR_METHODS,
            "rates": [0.4],
            "n_leapfrog_list": [5],
            "energies": ["cached", "recompute"],
        }
    )
    assert {c["cell"] for c in rl if c["energy"] == "recompute"} == {
        f"rlr_10d_n1e5_{m}_recompute_r0.4_run0" for m in ("rwm", "mala", "barker", "hmc5")
    }
    assert {c["cell"] for c in rl if "counts" in c} == {
        f"rlr_10d_n1e5_{m}_dense_r0.4_run0" for m in EC.COUNTS_METHODS
    }


def test_recompute_rows_get_the_papers_value_and_a_distinct_label() -> None:
    rows = [_row(m) for m in ("mala", "mala+recompute")]
    t = EC._ess_table(pd.DataFrame(rows), PV.P_TG).set_index("method")
    assert t.loc["mala+recompute", "paper_value"] == t.loc["mala", "paper_value"] != "-"
    assert t.loc["mala+recompute", "label"] == "MALA (authors' recompute)"
    assert EC.base_method("hmc10+recompute") == "hmc10" and EC.base_method("mala") == "mala"


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
    t, it, mse = EC.mean_mse_curves(df[df["method"] == "mala"])
    np.testing.assert_allclose(mse, [1.5, 0.6])
    np.testing.assert_allclose(t, [0.015, 0.15])
    np.testing.assert_allclose(it, [15.0, 150.0])
    out = _Out()
    RLRE.rlr_summarize(df, {"variants": ["rlr_10d_n1e5"]}, out)
    clock, iters = out.figures["exact_mh_rlr_10d_n1e5_mse"]
    assert "MALA (authors' recompute)" in clock and "MALA (authors' recompute)" not in iters
    assert {"hmc2", "hmc5", "hmc10"} == set(out.figures["exact_mh_rlr_10d_n1e5_hmc_leapfrog"][0])
    out2 = _Out()  # N = 2e5 (Fig. 6): no leapfrog figure in the paper
    RLRE.rlr_summarize(df.assign(variant="rlr_10d_n2e5"), {"variants": ["rlr_10d_n2e5"]}, out2)
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
    TGE.tg_summarize(pd.DataFrame(rows), {}, out)
    assert {"exact_mh_tg_ess", "exact_mh_tg_ess_best", "exact_mh_tg_ks"} <= set(out.tables)
    assert {"exact_mh_tg_fig3_mse", "exact_mh_tg_ess", "exact_mh_tg_ks"} <= set(out.figures)
    t = out.tables["exact_mh_tg_ess"].set_index(["method", "target_rate"])
    assert t.loc[("rwm+recompute", 0.4), "paper_value"] == t.loc[("rwm", 0.4), "paper_value"]
    assert t.loc[("poisson_mh", 0.4), "ess_s_med"] == 1.75  # per-coordinate mean over runs, then median


def test_rlr_colors_pair_cached_and_recompute_rows():
    """Fig. 1/4/8 panels: a `+recompute` row gets its cached row's colour, distinct methods distinct
    colours (a recompute row drawn with the next colour of the cycle fails)."""
    from bench.experiments.exact_mh.common import RECOMPUTE
    from bench.experiments.exact_mh.robust_regression import rlr_colors

    ms = ["mala", "mala" + RECOMPUTE, "hmc5", "hmc5" + RECOMPUTE, "poisson_mala"]
    c = rlr_colors(ms)
    assert set(c) == {"mala", "hmc5", "poisson_mala"}
    assert len(set(c.values())) == 3


def _rlr_cells(variant: str, trips: dict[str, dict[float, tuple[float, float, float]]]) -> pd.DataFrame:
    """One run per (method, rate) of ``variant`` whose per-coordinate ESS/s is the given (min, med, max)."""
    return pd.DataFrame(
        [
            {**_row(m), "variant": variant, "target_rate": rate, "run": 0, "ess_s": list(v)}
            for m, by_rate in trips.items()
            for rate, v in by_rate.items()
        ]
    )


# Yuan & Wang 2024's printed Best triples: Table 1 (TG) and Table 2 (RLR d = 10, N = 1e5)
PAPER_TABLE_1 = {
    "rwm": (0.05, 0.08, 0.47),
    "mala": (0.10, 0.19, 2.77),
    "barker": (0.12, 0.22, 1.53),
    "poisson_mh": (0.40, 0.66, 4.67),
    "poisson_barker": (0.91, 1.65, 12.16),
    "poisson_mala": (0.84, 1.65, 23.84),
}
PAPER_TABLE_2 = {
    "rwm": (2.0, 2.1, 2.1),
    "mala": (5.0, 5.1, 5.2),
    "barker": (2.9, 3.0, 3.0),
    "hmc10": (0.9, 0.9, 1.0),
    "poisson_mh": (99.0, 100.2, 101.1),
    "poisson_barker": (265.3, 268.3, 270.3),
    "poisson_mala": (489.3, 491.8, 496.5),
}


def test_paper_best_is_the_per_column_max_the_paper_prints() -> None:
    """The paper column of Tables 1 / 2 is what the paper prints: the per-column max of (min, med, max)
    over its three rates (TG MALA, Barker and Poisson-Barker take their max from another rate than their
    median: one rate's triple would print (.10,.19,1.85), (.12,.22,1.24), (.91,1.65,9.75))."""
    for paper, printed in ((PV.P_TG, PAPER_TABLE_1), (RLRE.rlr_paper("rlr_10d_n1e5"), PAPER_TABLE_2)):
        for m, want in printed.items():
            rate, val = EC.paper_best(paper, m)
            assert tuple(float(x) for x in val.strip("()").split(",")) == want, m
    assert EC.paper_best(PV.P_TG, "mala") == (0.4, "(.10,.19,2.77)")  # tie of medians: the lower rate
    assert EC.paper_best(PV.P_TG, "poisson_barker") == (0.4, "(.91,1.65,12.16)")
    assert EC.paper_best(PV.P_TG, "mala+recompute") == EC.paper_best(PV.P_TG, "mala")
    assert EC.paper_best(RLRE.rlr_paper("rlr_10d_n1e5"), "hmc2") is None


def test_rlr_best_rate_table_per_method_with_the_papers_best_rate() -> None:
    """exact_mh_<v>_ess_best (Yuan & Wang 2024 Table 2): each method's Best by the paper's rule (per-column
    max of (min, med, max) over its rates) with the rate of its largest median (ties: the lowest), beside the
    paper's Best by the same rule (HMC only on the paper's leapfrog row; the recompute row gets its cached
    row's); tg_summarize uses the same function."""

    v = "rlr_10d_n1e5"
    trips = {
        "rwm": {0.25: (1.5, 3.0, 4.0), 0.4: (1.8, 2.0, 6.0), 0.55: (0.5, 1.0, 2.0)},
        "mala": {0.25: (1.0, 2.0, 4.0), 0.4: (3.0, 6.0, 7.0), 0.55: (2.5, 6.0, 12.0)},
        "mala+recompute": {0.25: (0.5, 1.0, 2.0), 0.4: (0.75, 1.5, 3.0), 0.55: (1.0, 2.0, 4.0)},
        "hmc10": {0.25: (0.25, 0.5, 1.0), 0.4: (0.2, 0.4, 0.8), 0.55: (0.3, 0.6, 1.2)},
        "hmc2": {0.25: (0.35, 0.7, 1.4), 0.4: (0.1, 0.2, 0.4), 0.55: (0.05, 0.1, 0.2)},
        "poisson_mala": {0.25: (50.0, 100.0, 900.0), 0.4: (150.0, 300.0, 600.0), 0.55: (200.0, 400.0, 800.0)},
    }
    ours = {"rwm": 0.25, "mala": 0.4, "mala+recompute": 0.55, "hmc10": 0.55, "hmc2": 0.25}
    ours["poisson_mala"] = 0.55
    colmax = {m: tuple(max(t[k] for t in by.values()) for k in range(3)) for m, by in trips.items()}
    out = _Out()
    RLRE.rlr_summarize(_rlr_cells(v, trips), {"variants": [v]}, out)
    best = out.tables[f"exact_mh_{v}_ess_best"].set_index("method")
    assert best["best_rate"].to_dict() == ours
    got = {m: tuple(best.loc[m, c] for c in EC.BEST_COLS) for m in best.index}
    assert got == colmax  # e.g. MH (1.8, 3.0, 6.0): no single rate has it
    assert got["rwm"] == (1.8, 3.0, 6.0) and got["poisson_mala"] == (200.0, 400.0, 900.0)
    paper = {"rwm": 0.25, "mala": 0.55, "mala+recompute": 0.55, "hmc10": 0.4, "poisson_mala": 0.55}
    assert best["paper_rate"].dropna().to_dict() == paper and pd.isna(best.loc["hmc2", "paper_rate"])
    assert best.loc["poisson_mala", "paper_value"] == "(489.3,491.8,496.5)"
    assert best.loc["mala+recompute", "paper_value"] == best.loc["mala", "paper_value"] == "(5.0,5.1,5.2)"
    assert best.loc["hmc10", "paper_value"] == "(.9,.9,1.0)" and best.loc["hmc2", "paper_value"] == "-"
    assert (best["rates"] == 3).all()
    assert f"exact_mh_{v}_ess" in out.figures  # the ESS/s figure of both tables, as for the TG
    # the truncated Gaussian's Table 1: the same rule
    df = _rlr_cells(v, trips).assign(mse_t=[[0.1]] * 18, mse_mean=[[1.0]] * 18, mse_var=[[1.0]] * 18)
    tg = _Out()
    TGE.tg_summarize(df.assign(ks_min=0.0, ks_med=0.0, ks_max=0.0), {}, tg)
    tg_best = tg.tables["exact_mh_tg_ess_best"].set_index("method")
    assert tg_best["best_rate"].to_dict() == ours
    assert {m: tuple(tg_best.loc[m, c] for c in EC.BEST_COLS) for m in tg_best.index} == colmax


def _s16_settings() -> tuple:
    """Tables 2 / 5: the paper settings of exact_mh_rlr for the d = 10, N = 1e5 variant."""
    from bench.cells import experiment_settings
    from bench.experiments import get_experiment

    exp = get_experiment("exact_mh_rlr")
    settings = {"variants": ["rlr_10d_n1e5"]}
    over = {"exact_mh_rlr": {"reason": "Tables 2 / 5", "scale": "paper", "settings": settings}}
    return exp, experiment_settings(exp, "paper", over)


def test_hmc10_cells_use_the_authors_hmc10_steps() -> None:
    """Tables 2 / 5: the HMC-10 cells take the authors' HMC-10 step sizes (.074 / .064 / .052), HMC-2 / 5
    and the other variants the HMC row's; the step row is a param of the HMC-10 cells only (``h_row``)."""
    from bench.cells import enumerate_cells

    exp, s = _s16_settings()
    cells = {p["cell"]: p for p in enumerate_cells(exp, s)}
    for p in cells.values():
        assert ("h_row" in p) == (p["method"] == "hmc" and p["n_leapfrog"] == 10), p
    for nl, want in ((10, (0.074, 0.064, 0.052)), (5, (0.11, 0.088, 0.07)), (2, (0.11, 0.088, 0.07))):
        p = cells[f"rlr_10d_n1e5_hmc{nl}_r0.25_run0"]
        ss = {**s, **({"h_row": p["h_row"]} if "h_row" in p else {})}
        assert tuple(EC._step("hmc", ss, "rlr_10d_n1e5", r, None, None) for r in EC.RATES) == want
    for v in ("rlr_10d_n2e5", "rlr_50d"):  # no authors' HMC-10 steps: the HMC row's, no param
        c = RLRE.rlr_cells({**s, "variants": [v], "runs": 1, "runs_50d": 1})
        assert not any("h_row" in p for p in c)


def test_rlr_50d_paper_variant_registered_at_the_papers_constants() -> None:
    """App. G.3 ("the same as in Section 5.2, except for d = 50"): rlr_50d_paper = rlr_10d_n1e5's
    constants with d = 50, the paper's Table 7 as its paper column, 10 runs (runs_50d), step sizes tuned
    (no authors' h at these constants), in the default (paper) settings; rlr_50d (the authors' code
    constants) stays a named variant."""
    v = "rlr_50d_paper"
    assert RLRE.RLR_VARIANTS[v] == {**RLRE.RLR_VARIANTS["rlr_10d_n1e5"], "d": 50}
    assert RLRE.RLR_VARIANTS["rlr_50d"] == {"N": 100_000, "d": 50, "beta": 1e-3, "R": 30.0, "lam_mult": 1e-4}
    assert {"rlr_50d", v} <= set(RLRE.RLR_SETTINGS["paper"]["variants"])
    assert RLRE.rlr_paper(v) == RLRE.rlr_paper("rlr_50d") and "hmc5" in RLRE.rlr_paper(v)
    assert RLRE.RLR_TABLES[v] == "Table 7" and v in RLRE.RLR_BEST and v in RLRE.RLR_FIGS and v in EC.RLR_TUNED
    s = {**RLRE.RLR_SETTINGS["paper"], "variants": [v], "runs": 100, "runs_50d": 10}
    c = RLRE.rlr_cells(s)
    # 6 full-batch rows (both timings), HMC-2/5/10 cached + HMC-5 timed the authors' way, 3 Poisson + 3 dense
    assert {p["run"] for p in c} == set(range(10)) and len(c) == 10 * 16 * 3
    rows = [{**_row(m), "variant": v} for m in ("hmc5", "hmc10", "mala")]
    out = _Out()
    RLRE.rlr_summarize(pd.DataFrame(rows), {"variants": [v]}, out)
    t = out.tables[f"exact_mh_{v}_ess"].set_index("method")["paper_value"]
    assert t["hmc5"] == PV.P_RLR["rlr_50d"]["hmc"][1] and t["hmc10"] == "-"
