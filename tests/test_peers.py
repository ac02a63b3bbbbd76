"""``mcmc-bench peers``: the peers' log densities are the project's (BlackJAX's jnp log density and NumPyro's
model, on random states), and without the optional extra the command says how to install it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from bench import peers
from samplers import registry
from samplers.targets import tall

TARGETS = [(t, 2_000) for t in peers.TARGETS]


def _states(prob, rng, n):
    """Random states inside the support (the project's init, shrunk) and a few outside it."""
    inside = [prob.init(rng) * rng.uniform(0.1, 1.0) for _ in range(n)]
    d = prob.dim
    outside = [np.full(d, 6.0), np.full(d, 40.0), np.full(d, np.nan)]
    return inside, outside


@pytest.fixture(scope="module")
def jax_mod():
    pytest.importorskip("jax", reason='the peers extra is not installed (pip install -e ".[peers]")')
    pytest.importorskip("numpyro", reason='the peers extra is not installed (pip install -e ".[peers]")')
    return peers._jax()


@pytest.mark.parametrize("target,N", TARGETS)
def test_jax_log_density_equals_the_projects(jax_mod, target, N):
    prob = registry.build_problem(target, 0, N=N, beta=peers.NBETA[target] / N)
    f = jax_mod.jit(peers.jax_logdensity(prob.model))
    inside, outside = _states(prob, np.random.default_rng(1), 20)
    for th in inside:
        ours = tall.log_post(prob.model, th)
        assert np.isfinite(ours)
        assert float(f(th)) == pytest.approx(ours, rel=1e-10, abs=0)
    for th in outside:
        assert tall.log_post(prob.model, th) == -np.inf
        assert float(f(th)) == -np.inf


@pytest.mark.parametrize("target,N", TARGETS)
def test_numpyro_model_log_density_equals_the_projects(jax_mod, target, N):
    from numpyro.infer.util import log_density

    prob = registry.build_problem(target, 0, N=N, beta=peers.NBETA[target] / N)
    model = peers.numpyro_model(prob.model)
    inside, _ = _states(prob, np.random.default_rng(2), 20)
    ld = [float(log_density(model, (), {}, {"theta": th})[0]) for th in inside]
    ours = [tall.log_post(prob.model, th) for th in inside]
    # NumPyro's box prior Uniform(lo, hi)^d adds its constant -d log(hi - lo): compare differences
    const = [a - b for a, b in zip(ld, ours, strict=True)]
    if prob.model.kind == tall.TG:
        expect = -prob.dim * np.log(prob.model.hi - prob.model.lo)
    else:
        expect = 0.0
    scale = max(abs(v) for v in ours)
    assert np.allclose(const, expect, rtol=0, atol=1e-10 * scale)


def test_without_the_extra_the_command_says_how_to_install(monkeypatch, capsys):
    monkeypatch.setattr(peers, "missing_peers", lambda: ["jax"])
    from bench.cli import main

    rc = main(["peers", "--quick"])
    err = capsys.readouterr().err
    assert rc != 0
    assert 'pip install -e ".[peers]"' in err and len(err.strip().splitlines()) == 1


def test_the_cli_and_the_project_import_no_jax():
    code = (
        "import sys, bench.cli, bench.peers, samplers.registry, bench.perf; "
        "bench.cli.build_parser(); "
        "print(sorted(m for m in ('jax', 'blackjax', 'numpyro') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_blocked_robust_regression_sum_equals_the_per_datum_sum():
    """The full-batch twins' RLR pass (blocks, one log per block's product, log1p per datum when a block's
    product would overflow) equals the sum of ``loglik_i`` / ``loglik_grad_i``, at states near the posterior
    and at the edge of the ball, where 256 factors (1 + r^2 / nu) overflow."""
    N = 3 * tall.RLR_BLOCK + 17
    prob = registry.build_problem("robust_regression", 0, N=N, beta=10.0 / N)
    t = prob.model
    rng = np.random.default_rng(3)
    edge = rng.standard_normal(prob.dim)
    edge *= 0.999 * t.R / np.linalg.norm(edge)
    for th in (np.ones(prob.dim) + 0.1 * rng.standard_normal(prob.dim), edge, np.zeros(prob.dim)):
        g_ref = np.zeros(prob.dim)
        ref = sum(tall.loglik_grad_i(t, i, th, 1.0, g_ref) for i in range(N))
        g = np.zeros(prob.dim)
        assert tall.log_post(t, th) == pytest.approx(ref, rel=1e-12)
        assert tall.log_post_grad(t, th, g) == pytest.approx(ref, rel=1e-12)
        assert np.allclose(g, g_ref, rtol=1e-12, atol=1e-12 * np.abs(g_ref).max())
    big = np.prod(1.0 + ((t.y[: tall.RLR_BLOCK] - t.X[: tall.RLR_BLOCK] @ edge) ** 2) / t.nu)
    assert not big <= 1e300  # the edge state takes the overflow branch in its first block


def test_without_the_extra_the_workflow_placeholder_says_so_and_exits_zero(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(peers, "missing_peers", lambda: ["jax", "numpyro"])
    from bench.cli import main

    out = tmp_path / "peers.csv"
    rc = main(["peers", "--if-missing", "placeholder", "--out", str(out), "--figs", str(tmp_path)])
    assert rc == 0
    import pandas as pd

    df = pd.read_csv(out)
    assert list(df.status) == ["peers not installed"] and "jax, numpyro" in df.message[0]
    assert (tmp_path / "peers.png").stat().st_size > 0


def test_a_stored_run_is_redrawn_without_the_extra_and_a_wrong_table_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(peers, "missing_peers", lambda: ["jax"])
    import pandas as pd

    from bench.cli import main

    rows = [
        {"target": t, "N": 100_000, "impl": impl, "method": m, "us_per_iter": us, "ess_bulk_per_s": e}
        for t in peers.TARGETS
        for impl, m, us, e in (("ours", "rwm", 300.0, 40.0), ("blackjax", "rwm", 400.0, 30.0))
    ]
    table = tmp_path / "peers.csv.xz"
    pd.DataFrame(rows).to_csv(table, index=False)
    out = tmp_path / "out.csv"
    assert main(["peers", "--from-table", str(table), "--out", str(out), "--figs", str(tmp_path)]) == 0
    assert pd.read_csv(out).shape == (4, 6) and (tmp_path / "peers.png").stat().st_size > 0
    pd.DataFrame([{"target": "x"}]).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="not a peers table"):
        peers.redraw(tmp_path / "bad.csv", out, tmp_path)


@pytest.mark.slow
def test_quick_run_writes_every_side_with_its_provenance(jax_mod, tmp_path):
    """``mcmc-bench peers --quick`` end to end: one row per target and side (ours, BlackJAX, NumPyro), each
    timed, accepting, with a finite posterior-mean difference and its seed, commit and CPU kind."""
    import pandas as pd

    from bench.cli import main

    out = tmp_path / "peers.csv"
    assert main(["peers", "--quick", "--out", str(out), "--figs", str(tmp_path)]) == 0
    df = pd.read_csv(out)
    sides = {(i, m) for i, m in zip(df.impl, df.method, strict=True)}
    expect = {("ours", m) for m in (*peers.FULL_BATCH, *peers._exact_minibatch())}
    expect |= {("blackjax", m) for m in peers.FULL_BATCH} | {("numpyro", "hmcecs"), ("numpyro", "nuts")}
    for target in peers.TARGETS:
        g = df[df.target == target]
        assert {(i, m) for i, m in zip(g.impl, g.method, strict=True)} == expect, target
    assert sides == expect
    assert (df.us_per_iter > 0).all() and df.accept.between(0.05, 1.0).all()
    assert np.isfinite(df.max_mean_diff_sd).all() and np.isfinite(df.ess_bulk_per_s_over_hmcecs).all()
    bj = df[df.impl == "blackjax"]
    assert np.isfinite(bj.peer_over_ours).all() and (bj.peer_over_ours > 0).all()
    assert (df.seed == peers.CHAIN_SEED).all() and df.code_commit.notna().all() and df.cpu.notna().all()
    assert (tmp_path / "peers.png").stat().st_size > 0
