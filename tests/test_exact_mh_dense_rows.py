"""The authors'-timing minibatch rows of the TG / RLR tables (``+dense``: ``counts="dense"`` cells of
PoissonMH, Poisson-MALA, Poisson-Barker) and the claim that compares them with the ``+recompute``
full-batch rows: both sides timed as the Yuan & Wang 2024 code runs them (docs/performance.md §7.9), like
for like with the paper's printed ratios.

The cells are selected by the optional grid key ``dense_runs`` (0 = no dense cells); it is a grid key, so
it changes no cell's config hash."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import samplers  # noqa: F401  (sets the Numba cache dir)
from bench import cells as C
from bench.experiments import get_experiment
from bench.experiments.exact_mh import common as EC
from bench.experiments.exact_mh import truncated_gaussian as TGE
from bench.experiments.exact_mh import verdicts as V


def _settings(exp_id: str, **over) -> dict:
    """The paper settings of ``exp_id`` with ``over`` as a config override."""
    o = {exp_id: {"reason": "test settings", "scale": "paper", "settings": over}} if over else None
    return C.experiment_settings(get_experiment(exp_id), "paper", o)


def test_dense_cells_follow_the_optional_grid_key() -> None:
    """dense_runs (an optional grid key): absent = every run has the three dense cells per rate (the
    paper default), 10 = runs 0-9 only, 0 = none; it may be 0 but not negative, runs may not be 0; it
    changes no cell hash."""
    exp = get_experiment("exact_mh_tg")
    base = C.experiment_settings(exp, "paper")
    assert "dense_runs" not in base and "dense_runs" in exp.grid_keys
    dense = [p for p in C.enumerate_cells(exp, base) if "counts" in p]
    assert len(dense) == 100 * 3 * 3 and {p["method"] for p in dense} == set(EC.COUNTS_METHODS)
    ten = _settings("exact_mh_tg", dense_runs=10)
    none = _settings("exact_mh_tg", dense_runs=0)
    d_ten = [p for p in C.enumerate_cells(exp, ten) if "counts" in p]
    assert len(d_ten) == 90 and {p["run"] for p in d_ten} == set(range(10))
    assert not [p for p in C.enumerate_cells(exp, none) if "counts" in p]
    p = C.find_cell(exp, ten, "poisson_mala_dense_r0.25_run3")
    assert p == {"cell": "poisson_mala_dense_r0.25_run3", "method": "poisson_mala", "rate": 0.25, "run": 3,
                 "energy": "cached", "counts": "dense"}  # fmt: skip
    q = C.find_cell(exp, none, "poisson_mala_r0.25_run3")
    h = C.cell_config_hash
    assert h(exp, "paper", ten, q) == h(exp, "paper", none, q) == h(exp, "paper", base, q)
    over = {"exact_mh_tg": {"scale": "paper", "settings": {"dense_runs": -1}}}
    with pytest.raises(ValueError, match="dense_runs .*non-negative integer, got -1"):
        C.experiment_settings(exp, "paper", over)
    over["exact_mh_tg"]["settings"] = {"dense_runs": 0, "runs": 0}
    with pytest.raises(ValueError, match="runs .*positive integer, got 0"):
        C.experiment_settings(exp, "paper", over)
    rlr = _settings("exact_mh_rlr", variants=["rlr_10d_n1e5"], dense_runs=10)
    dr = [p for p in C.enumerate_cells(get_experiment("exact_mh_rlr"), rlr) if "counts" in p]
    assert len(dr) == 90 and all(p["cell"].startswith(f"rlr_10d_n1e5_{p['method']}_dense_") for p in dr)
    rlr_all = _settings("exact_mh_rlr", variants=["rlr_10d_n1e5"])  # dense_runs absent: every run
    d_all = [p for p in C.enumerate_cells(get_experiment("exact_mh_rlr"), rlr_all) if "counts" in p]
    assert len(d_all) == 100 * 3 * 3 and {p["run"] for p in d_all} == set(range(100))


def test_dense_cell_is_its_sparse_twin_timed_the_authors_way() -> None:
    """A dense cell run with its sparse twin's seed gives the twin's chain (acceptance, E[B], ESS, KS
    equal) under the row label ``poisson_mh+dense``; only the time differs."""
    exp = get_experiment("exact_mh_tg")
    s = C.cell_settings(exp, C.experiment_settings(exp, "smoke"))
    ctx = type("Ctx", (), {"settings": s})()
    seed = C.cell_seed(1, "exact_mh_tg", "twin")
    rows = {}
    for counts in ("sparse", "dense"):
        p = {"cell": "x", "method": "poisson_mh", "rate": 0.4, "run": 0, "energy": "cached"}
        if counts == "dense":
            p["counts"] = "dense"
        (rows[counts],) = TGE.tg_run_cell(p, seed, ctx)
    a, b = rows["sparse"], rows["dense"]
    assert (a["method"], b["method"]) == ("poisson_mh", "poisson_mh" + EC.DENSE)
    assert (a["counts"], b["counts"]) == ("sparse", "dense")
    for k in ("accept", "mean_batch", "ks", "step", "n_draws"):
        assert a[k] == b[k], k
    ess = lambda r: np.asarray(r["ess_s"]) * r["seconds"]  # noqa: E731
    assert np.allclose(ess(a), ess(b), rtol=1e-12)
    assert (
        EC.label_of(b["method"]) == "PoissonMH (authors' counts)"
        and EC.base_method(b["method"]) == "poisson_mh"
    )


MEDS = {  # median ESS/s at one rate where all three beat claims hold
    "rwm": 1.0,
    "mala": 2.0,
    "barker": 1.5,
    "rwm+recompute": 0.5,
    "mala+recompute": 1.0,
    "barker+recompute": 0.8,
    "poisson_mh": 10.0,
    "poisson_mala": 30.0,
    "poisson_barker": 20.0,
    "poisson_mh+dense": 3.0,
    "poisson_mala+dense": 100.0,  # above the cached rows: must not enter the top two
    "poisson_barker+dense": 6.0,
}


def test_both_sides_authors_claim_compares_dense_with_recompute_rows_only() -> None:
    """authors_both: worst +dense row vs best +recompute row. A dense row below an authors' full batch
    (mutant) fails it and nothing else; a cached row below a cached full batch fails the cached claim
    and not this one; the top two ignore the authors'-timing rows."""
    top, top_ok, txt, ok = V.top_two_and_beat(MEDS, "authors_both")
    assert top == ["poisson_mala", "poisson_barker"] and top_ok and ok
    assert (
        "PoissonMH (authors' counts) 3" in txt and "MALA (authors' recompute) 1" in txt and "(x3.00)" in txt
    )
    assert V.sides(MEDS, "authors_both") == (
        ["poisson_mh+dense", "poisson_mala+dense", "poisson_barker+dense"],
        ["rwm+recompute", "mala+recompute", "barker+recompute"],
    )
    assert [V.top_two_and_beat(MEDS, t)[3] for t in V.TIMINGS] == [True, True, True]
    mutant = {**MEDS, "poisson_mh+dense": 0.9}
    assert [V.top_two_and_beat(mutant, t)[3] for t in V.TIMINGS] == [True, True, False]
    cached_low = {**MEDS, "poisson_mh": 1.9}
    assert [V.top_two_and_beat(cached_low, t)[3] for t in V.TIMINGS] == [False, True, True]
    no_dense = {m: v for m, v in MEDS.items() if not m.endswith(EC.DENSE)}
    assert V.top_two_and_beat(no_dense, "authors_both")[2:] == ("-", False)
    with pytest.raises(ValueError, match="timing must be one of"):
        V.sides(MEDS, "dense")


def test_verify_rows_of_the_both_sides_claim(tmp_path, monkeypatch) -> None:
    """verify: exact_mh.minibatch_beats_full_authors_both (TG) and exact_mh.<variant>.
    minibatch_beats_full_authors_both.r<rate> (RLR) decided by the verdicts' rule; 'not run' without
    the dense rows; a mutant flips them."""
    from verify.families import exact_mh as VF

    monkeypatch.setenv("MCMC_BENCH_RESULTS", str(tmp_path))
    v = "rlr_10d_n1e5"
    for meds, held in ((MEDS, True), ({**MEDS, "poisson_mala+dense": 0.2}, False), (None, None)):
        m = meds or {k: x for k, x in MEDS.items() if "+dense" not in k}
        t = pd.DataFrame({"method": list(m), "target_rate": 0.4, "ess_s_med": list(m.values())})
        t.to_csv(tmp_path / "exact_mh_tg_ess.csv", index=False)
        t.to_csv(tmp_path / f"exact_mh_{v}_ess.csv", index=False)
        rows = {r["claim_id"]: r for r in VF._claims(quick=True)}
        assert rows["exact_mh.minibatch_beats_full_authors_both"]["holds"] is held
        r = rows[f"exact_mh.{v}.minibatch_beats_full_authors_both.r0.4"]
        assert r["holds"] is held and r["threshold"].startswith("worst minibatch (authors' counts)")
        assert rows["exact_mh.minibatch_beats_full_authors"]["holds"] is True
        if held is None:
            assert r["measured"] == "not run" and "no PoissonMH (authors' counts)" in r["evidence"]
