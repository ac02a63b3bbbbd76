"""The exact_mh verification checks (verify/families/exact_mh.py) in quick mode: every exact row
passes (kernel-vs-matrix G-tests at family-wise alpha = 1e-4, per-draw detailed-balance identities at
1e-10 relative) and every mutant row reports that the mutant was caught; theory rows hold."""

from __future__ import annotations

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
