"""Feasibility up front and progress by default: a Poisson-minibatch run whose expected minibatch E[B]
exceeds N is refused before anything is compiled, with the numbers and the remedies; a feasible run
records E[B] beside N; the automatic progress line is on for interactive runs only."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from samplers import registry
from samplers import run as R
from samplers.methods import exact_mh as XM
from samplers.problem import Problem
from samplers.targets import tall


def _logistic_problem(N=2000, d=5, beta=1.0):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, d))
    y = (rng.random(N) < 0.5).astype(float)
    t = tall.logistic_regression(X, y, prior_prec=1.0, beta=beta, R=3.0)
    return Problem("logistic_probe", "continuous", t, d, lambda rng: np.zeros(d)), t


def test_tuna_expected_batch_formula():
    assert XM.tuna_expected_batch(100.0, 1e-3, 0.2, 4) == pytest.approx(1e-3 * 1e4 * 0.04 * 4 + 100 * 0.2 * 2)


@pytest.mark.parametrize("method", ["tuna_mh", "tuna_sgld"])
def test_tuna_family_refuses_an_expected_batch_above_n(method):
    pb, t = _logistic_problem()
    C = float(t.c.sum())
    EB = XM.tuna_expected_batch(C, 1e-5, 1.0, 5)
    assert EB > 2000
    msg = r"^TunaMH family infeasible: E\[B\] = .* exceeds N = 2000 .*temper the likelihood \(beta\)"
    with pytest.raises(ValueError, match=msg):
        registry.run(method, pb, 10, 0, step=1.0, progress=False)


def test_tuna_records_its_expected_batch_beside_n():
    pb, t = _logistic_problem()
    res = registry.run("tuna_mh", pb, 20, 0, step=0.05, progress=False)
    assert res.extra["EB_initial"] == pytest.approx(XM.tuna_expected_batch(float(t.c.sum()), 1e-5, 0.05, 5))
    note = XM.check_tuna_feasible(t, float(t.c.sum()), 1e-5, 0.05)
    assert "N = 2000" in note and f"{res.extra['EB_initial']:.4g}" in note


def test_poisson_family_refuses_and_reports():
    pb, t = _logistic_problem()
    with pytest.raises(ValueError, match=r"^PoissonMH family infeasible: E\[B\] = lam \+ L = "):
        registry.run("poisson_mh", pb, 10, 0, progress=False)
    pb, t = _logistic_problem(beta=1e-3)  # tempered: feasible
    res = registry.run("poisson_mh", pb, 20, 0, progress=False)
    L = float(t.M.sum())
    assert res.extra["EB_theory"] == pytest.approx(5e-4 * L * L + L)
    note = XM.check_feasible(t, 5e-4 * L * L, L, 5e-4)
    assert note.endswith(f"N = 2000 ({res.extra['EB_theory'] / 2000:.3g} N)")


def test_progress_argument(monkeypatch):
    monkeypatch.delenv("MCMC_BENCH_PROGRESS", raising=False)
    assert R.resolve_progress(None, "m", 10) is None  # under pytest: quiet
    assert R.resolve_progress(False, "m", 10) is None
    assert isinstance(R.resolve_progress(True, "m", 10), R._AutoProgress)
    monkeypatch.setenv("MCMC_BENCH_PROGRESS", "1")
    assert isinstance(R.resolve_progress(None, "m", 10), R._AutoProgress)
    monkeypatch.setenv("MCMC_BENCH_PROGRESS", "0")
    assert R.resolve_progress(None, "m", 10) is None
    calls = []
    assert R.resolve_progress(calls.append, "m", 10) == calls.append
    with pytest.raises(ValueError, match="progress must be"):
        R.resolve_progress("yes", "m", 10)


def test_auto_progress_line_shows_the_note_once(monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr(R.sys, "stderr", buf)
    monkeypatch.setattr(R, "PROGRESS_AFTER", 0.0)
    p = R._AutoProgress("poisson_mh", 100, "E[B] = 12 candidates an iteration, N = 1000 (0.012 N)")
    p(50)
    p.last = -math.inf
    p(50)
    out = buf.getvalue()
    assert out.count("E[B] = 12") == 1
    assert "100/100 iterations (100 %)" in out and out.endswith("\n")
