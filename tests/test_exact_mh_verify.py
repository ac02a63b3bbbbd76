"""The exact_mh verification checks (verify/families/exact_mh.py) in quick mode: every exact row
passes (kernel-vs-matrix G-tests at family-wise alpha = 1e-4, per-draw detailed-balance identities at
1e-10 relative) and every mutant row reports that the mutant was caught; theory rows hold."""

from __future__ import annotations

import pandas as pd
import pytest

from verify.families import exact_mh as F

BY_ID = {c.id: c for c in F.CHECKS}
FAST = [
    "exact_mh.kvm.poisson_mh",
    "exact_mh.kvm.tuna_mh",
]
SLOW = [
    "exact_mh.kvm.exchange",
    "exact_mh.db.poisson_barker",
    "exact_mh.kvm.poisson_barker",
    "exact_mh.kvm.poisson_mala",
    "exact_mh.db.poisson_mala",
    "exact_mh.db.tuna_sgld",
    "exact_mh.ks_invariance",
]


def _assert_rows(rows):
    assert rows
    muts = [r for r in rows if "[mutant:" in r["method"]]
    for r in rows:
        assert r["passed"], r
    return muts


@pytest.mark.parametrize("cid", FAST)
def test_check_quick(cid):
    muts = _assert_rows(BY_ID[cid].run(True))
    assert muts, "every exact check carries at least one mutant"


@pytest.mark.slow
@pytest.mark.parametrize("cid", SLOW)
def test_check_quick_slow(cid):
    muts = _assert_rows(BY_ID[cid].run(True))
    assert muts


def test_theory_rows_hold():
    rows = BY_ID["exact_mh.theory"].run(True)
    assert len(rows) > 20
    bad = [r for r in rows if not r["holds"]]
    assert not bad, bad


def test_claims_report_not_run_or_value():
    rows = BY_ID["exact_mh.claims"].run(True)
    assert {r["claim_id"] for r in rows} >= {"exact_mh.tg_top_two", "exact_mh.sgld_ks"}
    for r in rows:
        assert r["measured"] == "not run" or r["holds"] in (True, False)


RLR_MEDS = {  # median ESS/s per method at one rate where every RLR claim holds
    "rwm": 2.0,
    "mala": 4.0,
    "barker": 3.0,
    "hmc2": 0.5,
    "hmc10": 1.0,
    "rwm+recompute": 1.0,
    "mala+recompute": 2.0,
    "hmc10+recompute": 0.5,
    "poisson_mh": 50.0,
    "poisson_barker": 200.0,
    "poisson_mala": 300.0,
}


def _rlr_claim_rows(tmp_path, monkeypatch, variant: str, by_rate: dict[float, dict[str, float]]) -> dict:
    """The exact_mh.claims rows after rlr_summarize wrote the ESS table of ``variant`` from one run per
    (method, rate) with the given medians (the table verify reads in the workflow)."""
    from bench.experiments.exact_mh import robust_regression as RLRE

    class Out:
        def table(self, name, t, caption=""):
            t.to_csv(tmp_path / f"{name}.csv", index=False)

        def figure(self, name, fig, caption=""):
            import matplotlib.pyplot as plt

            plt.close(fig)

    cells = [
        {
            "status": "ok",
            "variant": variant,
            "method": m,
            "target_rate": rate,
            "run": 0,
            "ess_s": [0.5 * v, v, 2.0 * v],
            "accept": rate,
            "step": 0.1,
            "mean_batch": 1.0,
            "sec_per_iter": 1e-3,
        }
        for rate, meds in by_rate.items()
        for m, v in meds.items()
    ]
    monkeypatch.setenv("MCMC_BENCH_RESULTS", str(tmp_path))
    RLRE.rlr_summarize(pd.DataFrame(cells), {"variants": [variant]}, Out())
    return {r["claim_id"]: r for r in F._claims(quick=True)}


def test_rlr_claims_hold_fail_and_not_run(tmp_path, monkeypatch):
    """RLR claim rows (Tables 2/5, 6, 7) per variant and rate: they hold on medians where they should;
    a cached full batch above PoissonMH fails the cached claim only, a recompute full batch above the
    minibatch methods the authors' claim only, PoissonMH above Poisson-Barker the top two; a variant
    without results, a rate without PoissonMH and a table without recompute rows give 'not run' (holds
    None), never a verdict."""
    v = "rlr_10d_n1e5"
    bad_full = {**RLR_MEDS, "mala": 60.0}  # cached MALA beats PoissonMH (50)
    bad_auth = {**RLR_MEDS, "hmc10+recompute": 70.0, "poisson_barker": 40.0}
    rows = _rlr_claim_rows(tmp_path, monkeypatch, v, {0.25: RLR_MEDS, 0.4: bad_full, 0.55: bad_auth})
    held = {k: r["holds"] for k, r in rows.items() if k.startswith(f"exact_mh.{v}.") and "_both" not in k}
    both = [r for k, r in rows.items() if k.startswith(f"exact_mh.{v}.minibatch_beats_full_authors_both")]
    assert len(both) == 3 and all(
        r["holds"] is None and "no PoissonMH (authors' counts)" in r["evidence"] for r in both
    )
    assert held == {
        f"exact_mh.{v}.top_two.r0.25": True,
        f"exact_mh.{v}.minibatch_beats_full.r0.25": True,
        f"exact_mh.{v}.minibatch_beats_full_authors.r0.25": True,
        f"exact_mh.{v}.top_two.r0.4": True,
        f"exact_mh.{v}.minibatch_beats_full.r0.4": False,
        f"exact_mh.{v}.minibatch_beats_full_authors.r0.4": True,
        f"exact_mh.{v}.top_two.r0.55": False,
        f"exact_mh.{v}.minibatch_beats_full.r0.55": True,  # cached HMC-10 stays at 1
        f"exact_mh.{v}.minibatch_beats_full_authors.r0.55": False,
    }
    r = rows[f"exact_mh.{v}.minibatch_beats_full.r0.4"]
    assert "PoissonMH 50" in r["measured"] and "MALA 60" in r["measured"] and "(x0.83)" in r["measured"]
    assert r["paper_value"] == "x20.23" and r["threshold"] and r["paper"].endswith("Tables 2 / 5")
    r = rows[f"exact_mh.{v}.top_two.r0.25"]
    assert r["measured"] == "Poisson-MALA 300.0, Poisson-Barker 200.0; next PoissonMH 50"
    assert r["paper_value"] == "Poisson-MALA 222, Poisson-Barker 185.5"
    assert "Poisson-Barker 40" in rows[f"exact_mh.{v}.minibatch_beats_full_authors.r0.55"]["measured"]
    for other in ("rlr_10d_n2e5", "rlr_50d"):  # no results file: not run, no verdict
        for k in ("top_two", "minibatch_beats_full", "minibatch_beats_full_authors"):
            r = rows[f"exact_mh.{other}.{k}"]
            assert r["measured"] == "not run" and r["holds"] is None, r
    # 50d (Table 7) without recompute rows, and without PoissonMH at 0.4
    cached = {m: x for m, x in RLR_MEDS.items() if not m.endswith("+recompute")}
    no_pmh = {m: x for m, x in cached.items() if m != "poisson_mh"}
    rows = _rlr_claim_rows(tmp_path, monkeypatch, "rlr_50d", {0.25: cached, 0.4: no_pmh})
    assert rows["exact_mh.rlr_50d.top_two.r0.25"]["holds"] is True
    assert rows["exact_mh.rlr_50d.minibatch_beats_full.r0.25"]["holds"] is True
    assert rows["exact_mh.rlr_50d.top_two.r0.4"]["holds"] is True
    for cid in (
        "exact_mh.rlr_50d.minibatch_beats_full_authors.r0.25",
        "exact_mh.rlr_50d.minibatch_beats_full.r0.4",
        "exact_mh.rlr_50d.minibatch_beats_full_authors.r0.4",
    ):
        assert rows[cid]["measured"] == "not run" and rows[cid]["holds"] is None, rows[cid]
    assert "no PoissonMH at 0.4" in rows["exact_mh.rlr_50d.minibatch_beats_full.r0.4"]["evidence"]
    assert rows["exact_mh.rlr_50d.top_two.r0.25"]["paper"].endswith("Table 7")
