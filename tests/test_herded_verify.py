"""The herded-family checks (verify/herded_checks.py) pass on the real kernels and FAIL on mutants.

Statistical rows (kernel-vs-matrix G-tests) use fixed seeds and a family-wise false-alarm rate of
alpha = 1e-4 per check (Bonferroni over rows); all other rows are deterministic."""

from __future__ import annotations

import numpy as np
import pytest

from verify import herded_checks as HC
from verify.families import herded as FAM
from verify.herded_mutants import BUG_GE, BUG_MARGINAL, BUG_SIGN, repeat_mcqmc_sweep_unrotated_last


def _passed(rows, key="passed"):
    return [bool(r[key]) for r in rows]


def test_checks_registered():
    ids = {c.id for c in FAM.CHECKS}
    assert {"herded_alg1_transcription", "herded_lemma1", "herded_thm3", "herded_claim_crf"} <= ids
    assert {c.kind for c in FAM.CHECKS} == {"exact", "theory", "claim"}


def test_transcription_passes_and_catches_mutants():
    assert all(_passed(HC.check_transcription(True)))
    for bug in (BUG_SIGN, BUG_GE, BUG_MARGINAL):
        rows = HC.check_transcription(True, runner=HC.mutant_runner(bug), storages=("dense",))
        assert not all(_passed(rows)), bug


def test_lemma1_passes_and_sign_mutant_fails():
    assert all(_passed(HC.theory_lemma1(True), "holds"))
    assert not all(_passed(HC.theory_lemma1(True, trace=HC.mutant_trace(BUG_SIGN)), "holds"))
    assert not all(_passed(HC.theory_lemma1(True, trace=HC.mutant_trace(BUG_GE)), "holds"))


def test_thm2_rows():
    rows = HC.theory_thm2(True)
    assert all(_passed(rows, "holds"))
    assert rows[1]["measured"] == pytest.approx(0.5)


def test_thm3_bound_holds_and_marginal_mutant_fails():
    rows = HC.theory_thm3(True)
    assert len(rows) >= 10 and all(_passed(rows, "holds"))
    assert all(r["slack"] > 0 for r in rows)
    bad = HC.theory_thm3(True, runner=HC.mutant_runner(BUG_MARGINAL))
    assert not all(_passed(bad, "holds"))


def test_slopes_and_marginal_mutant():
    rows = HC.theory_slopes(True)
    assert all(_passed(rows, "holds")), [(r["check"], r["measured"]) for r in rows]
    bad = HC.theory_slopes(True, runner=HC.mutant_runner(BUG_MARGINAL))
    assert not bad[0]["holds"]


@pytest.mark.slow
def test_incomplete_graph_rows():
    rows = HC.theory_incomplete(True)
    assert all(_passed(rows, "holds")), [(r["check"], r["measured"]) for r in rows]


def test_exact_rows_pass():
    for fn in (
        HC.check_enumeration,
        HC.check_viterbi,
        HC.check_mean_field_fixed_point,
        HC.check_shared_slots,
    ):
        assert all(_passed(fn(True))), fn.__name__


def test_gibbs_kvm_passes_and_drop_factor_mutant_fails():
    from verify.mutants import repeat_gibbs_drop_factor

    assert all(_passed(HC.check_gibbs_kvm(True)))
    assert not all(_passed(HC.check_gibbs_kvm(True, repeat=repeat_gibbs_drop_factor)))


def test_mcqmc_kvm_passes_and_unrotated_mutant_fails():
    assert all(_passed(HC.check_mcqmc_kvm(True)))
    assert not all(_passed(HC.check_mcqmc_kvm(True, repeat=repeat_mcqmc_sweep_unrotated_last)))


def test_mcqmc_full_period_passes_and_short_period_mutant_fails():
    assert all(_passed(HC.check_mcqmc_full_period(True)))
    for m_run in (10, 12):
        assert not all(_passed(HC.check_mcqmc_full_period(True, m_run=m_run))), m_run


def test_alg1_transcription_is_literal():
    """Spot check of the reference itself on one variable: pi = 0.3 gives 0,1,0,0,1,... (w0 = -0.2)."""
    from samplers.targets.herded_models import independent
    from verify.herded_theory import alg1_transcription

    states, W = alg1_transcription(independent([0.3]), np.zeros(1, np.int64), 10)
    want, w = [], 0.3 - 0.5
    for _ in range(10):
        x = 1 if w > 0 else 0
        w = w + 0.3 - x
        want.append(x)
    assert states[:, 0].tolist() == want
    assert W[(0, ())][0] == w


@pytest.mark.parametrize("eps,lam,tstar", [(0.1, 619, 145), (0.01, 8.2e5, 1.2e4), (0.001, 8.4e8, 1.1e6)])
def test_theorem3_constants_match_closed_form(eps, lam, tstar):
    """Chen et al. 2016 Thm. 3 on the two-variable model: eta = 1 - 16 eps/3, pi_min = 4 eps/3 (eps <
    3/16), l = pi_min^2, B of eq. (15)."""
    from samplers.targets.herded_models import two_variable
    from verify.herded_theory import theorem3_constants

    c = theorem3_constants(two_variable(eps))
    pm = 4 * eps / 3
    assert c["eta"] == pytest.approx(1 - 16 * eps / 3, abs=1e-12)
    assert c["pi_min"] == pytest.approx(pm, rel=1e-12)
    assert c["l"] == pytest.approx(pm**2, rel=1e-12)
    assert c["B"] == pytest.approx(pm**2 + (1 - (2 * pm) ** 2) / (1 - 2 * pm), rel=1e-12)
    assert c["lambda"] == pytest.approx(lam, rel=0.02)
    assert c["T_star"] == pytest.approx(tstar, rel=0.05)
