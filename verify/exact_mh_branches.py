"""Kernel-vs-matrix checks of every specialised branch of the exact-minibatch hot loops that the
benchmarks time (Yuan & Wang 2024 Alg. 2, 3, 5, 6; registered in ``verify/families/exact_mh.py``).

The hot loops of PoissonMH (:func:`samplers.kernels.poisson_mh.poisson_counts_ratio`), Poisson-MALA /
Poisson-Barker (:func:`samplers.kernels.poisson_grad.counts_and_grad`, ``ratio_and_grad_at``), TunaMH and
Tuna-SGLD (:func:`samplers.kernels.tuna_mh.tuna_ratio_core`, ``grad_estimate``) branch on the target kind
(truncated Gaussian / Gaussian, robust regression, logistic, the generic rest) and on the candidate count
(the one-pass pipeline stages candidate ``b + SLOT_AHEAD`` and resolves ``b + RESOLVE_AHEAD`` only while
those exist; Poisson-MALA's ratio loop prefetches kept candidate ``k + PREFETCH_AHEAD``). The tiny
truncated-Gaussian checks of the family module take the first branch with B < SLOT_AHEAD; these take the
others:

* ``rlr``: robust regression (Student-t, nu = 4) with N = 4 data on the lattice {-0.5, -0.25, ..., 0.5}^2
  inside the ball ||theta|| <= 0.5 (13 states; the paper's target is a ball too), all five kernels;
  mutant: the candidate rows built without the y column the RLR branch reads (y_i = 0 there);
* ``logistic``: logistic regression with N = 4 data on the same lattice and ball (PoissonMH needs the
  ball for its bounds; the MNIST target is unbounded, which no finite lattice is), all five kernels;
  each with the family's mutant of that kernel (Tuna-SGLD with the paper's drift: the drift map does not
  branch on the target, and both drifts are checked on the truncated Gaussian);
* ``deep``: the 1-D truncated Gaussian (N = 3, {-1, -0.75, ..., 1}) with loose bounds, so that B exceeds
  the prefetch depth in nearly every step (M_i = 30 with shift_i unchanged: B ~ Poi(lam + 90) while the
  kept counts stay small; c_i = 120 for TunaMH: B ~ Poi(lam + 90 |theta' - theta| / 0.25)); a row states
  P(B > SLOT_AHEAD) (and, for Poisson-MALA / Barker, P(nk > PREFETCH_AHEAD)) from the exact Poisson laws;
  mutants: the candidate loop ending at the prefetch depth (PoissonMH,
  :data:`verify.exact_mh_drive.MUT_SHALLOW_PIPELINE`) and the family's generic ones.

Proposals: the lattice random walk (PoissonMH, TunaMH), lattice Barker, and lattice Langevin with offsets
|k| <= 1 per coordinate on the 2-D lattices (Poisson-MALA; Tuna-SGLD |k| <= 2) and |k| <= 2 on the 1-D one.
Exact matrices: :mod:`verify.exact_mh_matrices` (independent of the kernels); the kernels' compiled steps
driven by :mod:`verify.exact_mh_drive`; G-tests by :func:`verify.empirical.kernel_vs_matrix` (Bonferroni
over rows, family-wise false alarm 1e-4 per kernel and per mutant). Quick: 2 000 steps a row; full: 20 000.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from scipy import stats

from samplers import proposals as PR
from samplers import registry
from samplers.hotloop import PREFETCH_AHEAD
from samplers.methods import exact_mh as XM
from samplers.methods.baselines import grid_points
from samplers.poisson_minibatch import SLOT_AHEAD, table_rows
from samplers.targets import tall
from verify import densities as D
from verify import empirical as EM
from verify import enumerate as E
from verify import exact_mh_drive as DR
from verify import exact_mh_matrices as XMAT
from verify import markov as MK

PAPER = "Yuan & Wang 2024"
ALGS = {"poisson_mh": 5, "poisson_mala": 2, "poisson_barker": 2, "tuna_mh": 6, "tuna_sgld": 3}
BRANCH_GRID = {"d": 2, "half_width": 0.5, "h": 0.25, "N": 4}
DEEP_GRID = {"kind": "truncated_gaussian", "d": 1, "half_width": 1.0, "h": 0.25, "N": 3}
DEEP_M = 30.0  # PoissonMH family: M_i (a valid, loose bound: phi_i <= shift_i <= 3 here); L = 90
DEEP_LAM = 15.0  # lambda: a_i = lambda M_i / L = 5, so the kept counts are ~Poi(5 + phi_i): nk > 8
DEEP_C = 120.0  # TunaMH: c_i (loose Lipschitz constants); C h = 90 for a lattice move of h = 0.25
DEEP_CHI = 1e-4
SIGMA = 0.4
K = 1  # lattice Langevin offsets -h, 0, h per coordinate on the 2-D lattices (8 moves; the matrices' cost)
K_DEEP = 2  # on the 1-D deep-pipeline lattice
K_SGLD = 2  # Tuna-SGLD everywhere: with K = 1 its forward-gradient mutant moves the logistic rows too little


def _k(method: str, s) -> int:
    return max(s.K, K_SGLD) if method == "tuna_sgld" else s.K


LAM_MULT = 0.05
CHI = 0.5
BATCH = 2
MIN_DEEP_FRACTION = 0.9  # the deep setting must exceed the prefetch depth in at least this share of steps


@dataclass
class Setting:
    """A tiny enumerable problem and the hyperparameters of each kernel on it."""

    name: str
    pb: object
    lat: XMAT.Lattice
    elat: E.Lattice
    lam_mult: float = LAM_MULT
    chi: float = CHI
    K: int = K


def _setting(name: str, pb, **kw) -> Setting:
    lat = XMAT.Lattice(pb.meta["grid"], pb.meta["lo"], pb.meta["h"])
    elat = E.make_lattice(pb.meta["grid"], pb.meta["lo"], pb.meta["h"])
    return Setting(name, pb, lat, elat, **kw)


def rlr_setting() -> Setting:
    return _setting("rlr", registry.build_problem("tiny_grid", 0, kind="robust_regression", **BRANCH_GRID))


def logistic_setting() -> Setting:
    """N = 4 features ~ N(0, 4 I) (sharper than tiny_grid's N(0, I), so that the target varies over the
    lattice by a factor ~30 and a kernel defect changes the transitions by more than sampling noise),
    labels fair coins, beta = 1, the ball ||theta|| <= 0.5."""
    rng = np.random.default_rng(0)
    X = 2.0 * rng.standard_normal((BRANCH_GRID["N"], BRANCH_GRID["d"]))
    y = (rng.random(BRANCH_GRID["N"]) < 0.5).astype(float)
    w, h = BRANCH_GRID["half_width"], BRANCH_GRID["h"]
    model = tall.logistic_regression(X, y, prior_prec=0.0, beta=1.0, R=w)
    pts = grid_points(model, -w, w, h, BRANCH_GRID["d"])
    pb = SimpleNamespace(model=model, meta={"grid": pts, "lo": -w, "h": h})
    return _setting("logistic", pb)


def deep_setting(family: str) -> Setting:
    """``family="poisson"``: M_i = DEEP_M (shift_i as built); ``"tuna"``: c_i = DEEP_C."""
    pb = registry.build_problem("tiny_grid", 0, **DEEP_GRID)
    m = pb.model
    if family == "poisson":
        m.M[:] = DEEP_M
        L = float(m.M.sum())
        return _setting("deep", pb, lam_mult=DEEP_LAM / (L * L), K=K_DEEP)
    m.c[:] = DEEP_C
    return _setting("deep", pb, chi=DEEP_CHI, K=K_DEEP)


# ----------------------------------------------------------------------------- exact side
def exact_matrix(method: str, s: Setting, drift: str = "paper") -> tuple[np.ndarray, float]:
    t = s.pb.model
    if method in ("poisson_mh", "poisson_mala", "poisson_barker"):
        L = float(t.M.sum())
        lam = s.lam_mult * L * L
        if method == "poisson_mh":
            return XMAT.poisson_mh_matrix(t, s.lat, lam)
        mats = XMAT.poisson_grad_matrices(t, s.lat, lam, method.split("_")[1], SIGMA, s.K)
        return mats["aux"], mats["tail"]
    if method == "tuna_mh":
        return XMAT.tuna_mh_matrix(t, s.lat, s.chi)
    return XMAT.tuna_sgld_matrix(t, s.lat, s.chi, BATCH, SIGMA, _k(method, s), drift=drift)


# ----------------------------------------------------------------------------- kernel side
PROPS = {
    "poisson_mh": PR.RW_LATTICE,
    "poisson_mala": PR.LANGEVIN_LATTICE,
    "poisson_barker": PR.BARKER_LATTICE,
    "tuna_mh": PR.RW_LATTICE,
    "tuna_sgld": PR.LANGEVIN_LATTICE,
}


def kernel_driver(method: str, s: Setting, mutant: int, rows_without_y: bool = False, drift: str = "paper"):
    """``fn(x0, rng, n) -> (n, d)`` next states of ``n`` compiled steps of ``method`` from ``x0``."""
    t = s.pb.model
    h = s.lat.h
    prop = PROPS[method]
    if method.startswith("poisson"):
        lam, L, tab = XM.poisson_setup(t, s.lam_mult)
        a = t.M
    else:
        C, tab = XM.tuna_setup(t, s.chi)
        a = t.c
    if rows_without_y:  # the mutant: candidate rows as for a target without responses
        tab = table_rows(t.X, None, a, t.shift)

    def fn(x0, rng, n):
        if method == "poisson_mh":
            buf, ki, kr = DR._scratch(lam + L)
            X, err = DR.repeat_poisson_mh(t, x0, tab, lam, L, prop, 0.0, h, s.K, rng, n, mutant, buf, ki, kr)
        elif method in ("poisson_mala", "poisson_barker"):
            buf, ki, kr = DR._scratch(lam + L)
            X, err = DR.repeat_poisson_grad(
                t, x0, tab, lam, L, prop, SIGMA, h, s.K, rng, n, mutant, buf, ki, kr
            )
        elif method == "tuna_mh":
            X, err = DR.repeat_tuna_mh(t, x0, tab, s.chi, C, prop, 0.0, h, s.K, rng, n, mutant)
        else:
            X, err = DR.repeat_tuna_sgld(
                t, x0, BATCH, s.chi, C, tab, prop, XM.DRIFTS[drift], SIGMA, h, _k(method, s), rng, n, mutant
            )
        if err[0]:
            raise ValueError(f"{method}: bound violated on the {s.name} lattice (datum {int(err[1])})")
        return X

    return fn


def _row_sampler(elat, fn, reps):
    def sample_row(x: int, rng: np.random.Generator) -> np.ndarray:
        return EM.lattice_counts(elat, fn(elat.points[x].copy(), rng, reps))

    return sample_row


# ----------------------------------------------------------------------------- rows
def _row(cid, method, target, statistic, value, threshold, passed, detail=""):
    return {
        "check": cid,
        "paper": f"{PAPER} Alg. {ALGS[method.split('[')[0]]}",
        "method": method,
        "target": target,
        "statistic": statistic,
        "value": float(value),
        "threshold": float(threshold),
        "passed": bool(passed),
        "detail": detail,
    }


def matrix_rows(cid, method, target, P, pi, tail) -> list[dict]:
    tol = 1e-12 + 4 * tail
    out = []
    for stat, val in (
        ("row-stochasticity residual", MK.stochasticity_residual(P)),
        ("detailed-balance residual", MK.detailed_balance_residual(P, pi)),
        ("stationarity residual", MK.stationarity_residual(P, pi)),
    ):
        out.append(
            _row(
                cid,
                method,
                target,
                f"exact matrix: {stat}",
                val,
                tol,
                val <= tol,
                f"{P.shape[0]} states; Poisson truncation <= {tail:.1e}",
            )
        )
    return out


def mutant_row(res, cid, method, target, mutant) -> dict:
    row = res.row(cid, f"{PAPER} Alg. {ALGS[method.split('[')[0]]}", f"{method}[mutant:{mutant}]", target)
    row["statistic"] = "mutant must FAIL: " + row["statistic"]
    row["passed"] = not res.passed
    row["detail"] = ("caught; " if not res.passed else "NOT caught; ") + row["detail"]
    return row


def kvm_rows(cid, method, s: Setting, mutants, seed: int, reps: int, drift: str = "paper") -> list[dict]:
    """Matrix rows, the kernel's G-test row and a row per mutant ``(name, code, rows_without_y)``."""
    target = f"tiny_{s.name}"
    label = f"{method}[{drift}]" if method == "tuna_sgld" else method
    P, tail = exact_matrix(method, s, drift)
    pi = XMAT.stationary_on(s.pb.model, s.lat)
    rows = matrix_rows(cid, label, target, P, pi, tail)
    fn = kernel_driver(method, s, DR.MUT_NONE, drift=drift)
    res = EM.kernel_vs_matrix(P, _row_sampler(s.elat, fn, reps), reps, seed)
    rows.append(res.row(cid, f"{PAPER} Alg. {ALGS[method]}", label, target))
    for k, (name, code, no_y) in enumerate(mutants):
        fn = kernel_driver(method, s, code, rows_without_y=no_y, drift=drift)
        res = EM.kernel_vs_matrix(P, _row_sampler(s.elat, fn, reps), reps, seed + 1 + k)
        rows.append(mutant_row(res, cid, label, target, name))
    return rows


# ----------------------------------------------------------------------------- deep-pipeline coverage
def deep_coverage_rows(cid: str, method: str, s: Setting) -> list[dict]:
    """P(B > SLOT_AHEAD) at the worst state and move (exact Poisson laws of the candidate count), and for
    Poisson-MALA / Barker P(nk > PREFETCH_AHEAD) of the kept count: the setting must take the deep branches
    in at least MIN_DEEP_FRACTION of the steps."""
    t = s.pb.model
    target = f"tiny_{s.name}"
    out = []
    if method.startswith("poisson"):
        L = float(t.M.sum())
        lam = s.lam_mult * L * L
        pB = float(stats.poisson.sf(SLOT_AHEAD, lam + L))
        detail = f"B ~ Poi(lam + L = {lam + L:.4g}); SLOT_AHEAD = {SLOT_AHEAD}"
    else:
        C = float(t.c.sum())
        Md = s.lat.h  # the shortest lattice move
        lam = s.chi * C * C * Md * Md
        pB = float(stats.poisson.sf(SLOT_AHEAD, lam + C * Md))
        detail = f"B ~ Poi(lam + C M >= {lam + C * Md:.4g}) for every move; SLOT_AHEAD = {SLOT_AHEAD}"
    out.append(
        _row(
            cid,
            method,
            target,
            "P(B > SLOT_AHEAD): the pipeline's deep branches",
            pB,
            MIN_DEEP_FRACTION,
            pB >= MIN_DEEP_FRACTION,
            detail,
        )
    )
    if method in ("poisson_mala", "poisson_barker"):
        phi = D.phi_terms(t, s.lat.grid)  # (S, N)
        kept_rate = (lam * t.M / float(t.M.sum()))[None, :] + phi
        pk = float(stats.poisson.sf(PREFETCH_AHEAD, kept_rate.sum(axis=1)).min())
        out.append(
            _row(
                cid,
                method,
                target,
                "P(nk > PREFETCH_AHEAD): the ratio loop's prefetch branch",
                pk,
                MIN_DEEP_FRACTION,
                pk >= MIN_DEEP_FRACTION,
                f"nk ~ Poi(sum_i lam M_i / L + phi_i(theta)), worst state; PREFETCH_AHEAD = {PREFETCH_AHEAD}",
            )
        )
    return out


# ----------------------------------------------------------------------------- the checks
GENERIC_MUTANTS = {
    "poisson_mh": [("counts_at_proposal", DR.MUT_COUNTS_AT_PROPOSAL, False)],
    "poisson_mala": [("forward_grad", DR.MUT_FORWARD_GRAD, False)],
    "poisson_barker": [("no_hastings", DR.MUT_NO_HASTINGS, False)],
    "tuna_mh": [("swapped_estimator", DR.MUT_SWAPPED, False)],
    "tuna_sgld": [("forward_grad", DR.MUT_FORWARD_GRAD, False)],
}
METHODS = ("poisson_mh", "poisson_mala", "poisson_barker", "tuna_mh", "tuna_sgld")


def run_rlr(quick: bool) -> list[dict]:
    """Every kernel's robust-regression branch (the y column of the candidate rows, the Student-t terms)."""
    s = rlr_setting()
    reps = 2_000 if quick else 20_000
    rows: list[dict] = []
    for k, m in enumerate(METHODS):
        rows += kvm_rows(
            "exact_mh.kvm.rlr_branch", m, s, [("rows_without_y", DR.MUT_NONE, True)], 81 + 4 * k, reps
        )
    return rows


def run_logistic(quick: bool) -> list[dict]:
    """Every kernel's logistic branch (the generic pair / gradient forms, TunaMH's logistic difference)."""
    s = logistic_setting()
    reps = 2_000 if quick else 20_000
    rows: list[dict] = []
    for k, m in enumerate(METHODS):
        rows += kvm_rows("exact_mh.kvm.logistic_branch", m, s, GENERIC_MUTANTS[m], 101 + 4 * k, reps)
    return rows


def run_deep(quick: bool) -> list[dict]:
    """B > SLOT_AHEAD (and nk > PREFETCH_AHEAD): the candidate pipeline's staged and resolved branches."""
    reps = 2_000 if quick else 20_000
    rows: list[dict] = []
    cid = "exact_mh.kvm.deep_pipeline"
    plan = [
        ("poisson_mh", [("shallow_pipeline", DR.MUT_SHALLOW_PIPELINE, False)]),
        ("poisson_mala", GENERIC_MUTANTS["poisson_mala"]),
        ("poisson_barker", GENERIC_MUTANTS["poisson_barker"]),
        ("tuna_mh", GENERIC_MUTANTS["tuna_mh"]),
    ]
    for k, (m, muts) in enumerate(plan):
        s = deep_setting("poisson" if m.startswith("poisson") else "tuna")
        rows += deep_coverage_rows(cid, m, s)
        rows += kvm_rows(cid, m, s, muts, 121 + 4 * k, reps)
    return rows
