"""The exact checks of the exact-minibatch hot loops' other branches (verify/exact_mh_branches.py, registered
in verify/families/exact_mh.py) in quick mode: robust-regression and logistic targets on a tiny ball lattice
for all five tall-data kernels, and candidate counts beyond the pipeline's prefetch depth. Every kernel row
passes its G-test against the exact matrix (family-wise false alarm 1e-4 per kernel, Bonferroni over rows)
and every kernel carries a mutant that its check catches; the settings are shown to take the branches."""

from __future__ import annotations

import numpy as np
import pytest

from samplers import proposals as PR
from samplers.kernels import poisson_mh as PM
from samplers.kernels import tuna_mh as TM
from samplers.methods import exact_mh as XM
from samplers.poisson_minibatch import SLOT_AHEAD
from samplers.targets import tall
from verify import exact_mh_branches as BR
from verify.families import exact_mh as F

BY_ID = {c.id: c for c in F.CHECKS}
EXPECTED = {
    "exact_mh.kvm.rlr_branch": {
        "poisson_mh",
        "poisson_mala",
        "poisson_barker",
        "tuna_mh",
        "tuna_sgld[paper]",
    },
    "exact_mh.kvm.logistic_branch": {
        "poisson_mh",
        "poisson_mala",
        "poisson_barker",
        "tuna_mh",
        "tuna_sgld[paper]",
    },
    "exact_mh.kvm.deep_pipeline": {"poisson_mh", "poisson_mala", "poisson_barker", "tuna_mh"},
}


@pytest.mark.parametrize("cid", sorted(EXPECTED))
def test_branch_check_quick_passes_and_catches_a_mutant_per_kernel(cid):
    rows = BY_ID[cid].run(True)
    for r in rows:
        assert r["passed"], r
    gtests = [r for r in rows if r["statistic"].endswith("min row p-value (G-test, Bonferroni)")]
    kernels = {r["method"] for r in gtests if "[mutant:" not in r["method"]}
    caught = {r["method"].split("[mutant:")[0] for r in gtests if "[mutant:" in r["method"]}
    assert kernels == EXPECTED[cid] and caught == kernels
    assert all(r["detail"].startswith("caught") for r in gtests if "[mutant:" in r["method"])
    if cid == "exact_mh.kvm.deep_pipeline":
        cover = [r for r in rows if r["statistic"].startswith("P(")]
        assert len(cover) == 6 and all(r["value"] >= BR.MIN_DEEP_FRACTION for r in cover)


def test_the_settings_take_the_branches():
    """Kinds and supports as the real targets; the deep setting's compiled steps draw B > SLOT_AHEAD
    candidates (n_evals of the real chains), so the pipeline's staged / resolved branches run."""
    rlr, lg = BR.rlr_setting(), BR.logistic_setting()
    assert rlr.pb.model.kind == tall.RLR and lg.pb.model.kind == tall.LOGISTIC
    assert rlr.pb.model.support == lg.pb.model.support == tall.SUPPORT_BALL
    assert len(rlr.lat) == len(lg.lat) == 13 and rlr.pb.model.X.shape[0] == lg.pb.model.X.shape[0] == 4
    s = BR.deep_setting("poisson")
    t = s.pb.model
    lam, L, rows = XM.poisson_setup(t, s.lam_mult)
    x = s.lat.grid[4].copy()
    state = PM.poisson_mh_init(t, x, lam + L)
    out = PM.poisson_mh_sample(
        t, *state, 2000, rows, lam, L, PR.RW_LATTICE, 0.0, s.lat.h, s.K, False, np.random.default_rng(1), 1
    )
    inside = out[2] > 0  # B = 0 when the proposal leaves the support (no candidates drawn)
    assert state[2][0] == 0 and np.mean(out[2][inside] > SLOT_AHEAD) > 0.99
    s = BR.deep_setting("tuna")
    t = s.pb.model
    C, rows = XM.tuna_setup(t, s.chi)
    state = TM.tuna_mh_init(t, s.lat.grid[4].copy())
    out = TM.tuna_mh_sample(
        t, *state, 2000, rows, s.chi, C, PR.RW_LATTICE, 0.0, s.lat.h, s.K, np.random.default_rng(2), 1
    )
    inside = out[2] > 0
    assert state[2][0] == 0 and np.mean(out[2][inside] > SLOT_AHEAD) > 0.99
