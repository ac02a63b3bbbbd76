"""Runner, registry and CLI: tables written atomically with their columns; exit codes; and the quick
verification of the baselines runs inside the test suite."""

import pandas as pd
import pytest

from verify import registry as VR
from verify import runner as R
from verify.checks import CLAIM_COLUMNS, EXACT_COLUMNS, THEORY_COLUMNS, Check


def _exact(passed):
    return lambda quick: [
        {
            "check": "x",
            "paper": "p",
            "method": "m",
            "target": "t",
            "statistic": "s",
            "value": 1.0,
            "threshold": 2.0,
            "passed": passed,
            "detail": "",
        }
    ]


def _theory(holds, reason=""):
    return lambda quick: [
        {
            "check": "th",
            "paper": "p",
            "theorem": "T1",
            "params": "a=1",
            "bound": 1.0,
            "measured": 0.5,
            "holds": holds,
            "slack": 0.5,
            "reason": reason,
        }
    ]


def _claim(quick):
    return [
        {"claim_id": "c1", "paper": "p", "statement": "s", "evidence": "e", "measured": 1, "holds": False}
    ]


def _boom(quick):
    raise RuntimeError("boom")


@pytest.mark.parametrize(
    "checks,code",
    [
        (
            [
                Check("a", "exact", "p", "d", _exact(True)),
                Check("b", "theory", "p", "d", _theory(True)),
                Check("c", "claim", "p", "d", _claim),
            ],
            0,
        ),
        ([Check("a", "exact", "p", "d", _exact(False))], 1),
        ([Check("b", "theory", "p", "d", _theory(False))], 1),
        ([Check("b", "theory", "p", "d", _theory(False, "needs lambda >= L^2"))], 0),
        ([Check("e", "exact", "p", "d", _boom)], 1),
    ],
)
def test_exit_codes_and_tables(tmp_path, checks, code):
    rep = R.run_checks(checks, quick=True, out_dir=tmp_path, log=None)
    assert R.exit_code(rep) == code
    for kind, cols in (("exact", EXACT_COLUMNS), ("theory", THEORY_COLUMNS), ("claim", CLAIM_COLUMNS)):
        df = pd.read_csv(tmp_path / R.FILES[kind])
        assert list(df.columns[: len(cols)]) == cols
    assert not list(tmp_path.glob("*.tmp"))


def test_bad_rows_and_registry_errors(tmp_path):
    rep = R.run_checks([Check("a", "exact", "p", "d", lambda q: [{"check": "a"}])], out_dir=None, log=None)
    assert R.exit_code(rep) == 1 and "a" in rep.errors
    with pytest.raises(ValueError):
        VR.load_checks(["nope"])
    ids = [c.id for c in VR.load_checks(["baselines"])]
    assert len(ids) == len(set(ids)) >= 8


def test_cli_quick_verify_baselines(tmp_path):
    """``mcmc-bench verify --quick --family baselines`` end to end (the quick verification)."""
    from bench.cli import main

    rc = main(["verify", "--quick", "--family", "baselines", "--out-dir", str(tmp_path)])
    assert rc == 0
    exact = pd.read_csv(tmp_path / "verify_exact.csv")
    assert exact["passed"].all() and len(exact) > 50
    assert exact["method"].str.contains("mutant").sum() >= 10  # mutants are caught in the run
    th = pd.read_csv(tmp_path / "theory_vs_empirics.csv")
    assert th["holds"].all() and (th["check"] == "baselines.tv_decay").sum() >= 7
    assert (tmp_path / "claims.csv").exists()


@pytest.mark.slow
def test_quick_verify_all_families(tmp_path):
    """The whole ``mcmc-bench verify --quick`` (every family's registered checks)."""
    assert R.verify_main(quick=True, out_dir=tmp_path, log=None) == 0


def test_claims_read_the_results_of_the_working_directory(tmp_path, monkeypatch):
    """Claim checks read ./results of the working directory (``snakemake -d DIR`` runs verify in DIR),
    or $MCMC_BENCH_RESULTS, which ``mcmc-bench verify --results-dir`` sets; never the source checkout's."""
    import argparse

    import verify.runner
    from verify.checks import RESULTS_ENV, results_dir
    from verify.cli import register

    monkeypatch.setenv(RESULTS_ENV, "")  # recorded, so whatever a test sets is undone
    monkeypatch.delenv(RESULTS_ENV)
    monkeypatch.chdir(tmp_path)
    assert results_dir() == tmp_path / "results"
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    seen = []
    monkeypatch.setattr(verify.runner, "verify_main", lambda **kw: seen.append(results_dir()) or 0)
    for argv, want in (
        (["verify", "--quick"], tmp_path / "results"),
        (["verify", "--results-dir", "run1/results"], tmp_path / "run1" / "results"),
    ):
        args = parser.parse_args(argv)
        assert args.func(args) == 0 and seen[-1] == want
