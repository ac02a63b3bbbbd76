"""Bound checker: every registered target's bounds hold; deliberately wrong bounds are caught."""

import numpy as np
import pytest

from samplers import registry
from samplers.targets import factor_graph as fgm
from verify import bounds as B


def test_registry_bounds_hold():
    res = B.check_registry_bounds(0, n_random=150, n_pairs=400, max_data=300)
    names = {r.target for r in res}
    for tid in ("truncated_gaussian", "robust_regression", "logistic", "potts_grid", "tiny_grid"):
        assert tid in names
    assert any(r.phi_applicable for r in res) and any(r.lip_applicable for r in res)
    bad = [(r.target, r.phi_violation, r.lip_violation) for r in res if not r.passed]
    assert not bad
    tg = next(r for r in res if r.target == "truncated_gaussian")
    assert tg.phi_applicable and tg.lip_applicable and 0 < tg.lip_ratio <= 1


@pytest.mark.parametrize("tid,kw", [("truncated_gaussian", {}), ("robust_regression", {})])
def test_wrong_bounds_are_caught(tid, kw):
    m = registry.build_problem(tid, 0, scale="smoke", **kw).model
    m = B.subset_data(m, 200)
    assert B.check_tall_bounds(m, tid, 0, 150, 400).passed
    # M too small (upper bound violated) and no shift (phi = ll_i < 0)
    assert not B.check_tall_bounds(m._replace(M=0.5 * m.M), tid, 0, 150, 400).passed
    assert not B.check_tall_bounds(m._replace(shift=np.zeros_like(m.shift)), tid, 0, 150, 400).passed
    # Lipschitz constants too small (TG c_i uses lambda_max for every coordinate: ~2x loose)
    r = B.check_tall_bounds(m._replace(c=0.3 * m.c), tid, 0, 150, 400)
    assert not r.passed and r.lip_violation > 0


def test_factor_bounds():
    fg = registry.build_problem("potts_grid", 0).model
    assert B.check_factor_bounds(fg, "potts").passed
    assert not B.check_factor_bounds(fg._replace(M=0.5 * fg.M), "potts").passed
    fg2 = fgm.from_tables([2, 2], [((0, 1), np.array([[0.0, 1.0], [2.0, 0.5]]))])
    r = B.check_factor_bounds(fg2, "t")
    assert r.passed and r.phi_slack == 0.0
