"""Exact minibatch MH family (Yuan & Wang 2024; Zhang & De Sa 2019; Zhang, Cooper & De Sa 2020):
``poisson_mh tuna_mh poisson_mala poisson_barker tuna_sgld exchange`` + the ``ising_param`` target.

Hyperparameters as in the papers: ``lam_mult`` with ``lambda = lam_mult * L^2`` (PoissonMH family,
Yuan & Wang 2024 §5.1 uses 5e-4), ``chi`` for TunaMH (``lambda = chi C^2 M(theta, theta')^2``), ``step`` = the
proposal scale sigma of :mod:`samplers.proposals` (Yuan & Wang's (2024) MALA ``h`` is ``sigma / sqrt 2``).
Each wrapper validates its inputs with ValueError, builds the candidate rows with their alias table once
(:func:`candidate_rows`, outside the timed loop), runs the compiled chain through
:func:`samplers.run.drive`, and raises ValueError if the kernel
reported a violated bound (phi_i outside [0, M_i], or the TunaMH Lipschitz bound); the PoissonMH bound is
checked for every datum at the initial state before sampling (:func:`check_bounds_at`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from samplers import proposals as P
from samplers.kernels import exchange as EX
from samplers.kernels import poisson_grad as PG
from samplers.kernels import poisson_mh as PM
from samplers.kernels import tuna_mh as TM
from samplers.kernels import tuna_sgld as TS
from samplers.poisson_minibatch import check_rate, table_rows
from samplers.problem import Problem
from samplers.result import ChainResult
from samplers.run import check_lattice, check_positive, drive
from samplers.specs import MethodSpec, TargetSpec
from samplers.targets import ising_param as IP
from samplers.targets import tall

_KINDS = {
    "rw": {"gauss": P.RW_GAUSS, "lattice": P.RW_LATTICE},
    "mala": {"gauss": P.LANGEVIN_GAUSS, "lattice": P.LANGEVIN_LATTICE},
    "barker": {"gauss": P.BARKER_GAUSS, "lattice": P.BARKER_LATTICE},
}
DRIFTS = {"paper": TS.DRIFT_PAPER, "normalized": TS.DRIFT_NORMALIZED}


def _prop(base: str, proposal: str, h: float, K: int) -> int:
    if proposal not in ("gauss", "lattice"):
        raise ValueError(f"proposal must be 'gauss' or 'lattice', got {proposal!r}")
    check_lattice(proposal, h, K)
    return _KINDS[base][proposal]


# kinds whose ll_i depends on theta only through x_i (x_i^T theta, or W x_i for ICA): constant if x_i = 0
_LINEAR_KINDS = (tall.RLR, tall.LOGISTIC, tall.LINREG, tall.ICA)


def _check_tall_data(model: tall.TallData, a: np.ndarray, bound: str) -> None:
    """Re-check the target's data at a kernel's setup (once per run, O(N p)): they may have been changed
    after the target was built. X, y, shift, M and c finite, and the bound ``a`` (``bound``: "M" for the
    PoissonMH family, "c" for TunaMH) positive. A datum with a_i = 0 is never drawn (p_i ∝ a_i), so its
    factor is left out of every ratio: exact only if ll_i does not depend on theta (then phi_i is constant,
    and |U_i(t') - U_i(t)| = 0), which these models guarantee only for x_i = 0 in a linear-predictor kind;
    any other zero (or negative, NaN) bound is rejected."""
    for name in ("X", "y", "shift", "M", "c"):
        ok = np.isfinite(getattr(model, name)).reshape(len(model.X), -1).all(axis=1)
        if not ok.all():
            bad = np.flatnonzero(~ok)
            raise ValueError(f"target data {name} contains NaN or inf (datum {bad[0]}, {bad.size} data)")
    bad = np.flatnonzero(~(a > 0))
    if bad.size and model.kind in _LINEAR_KINDS:
        bad = bad[(a[bad] != 0) | np.any(model.X[bad] != 0, axis=1)]
    if bad.size:
        i = bad[0]
        raise ValueError(
            f"bound {bound}_i = {float(a[i])!r} for datum {i} ({bad.size} data): {bound}_i must be > 0 "
            f"(a datum with {bound}_i = 0 is never drawn, so its likelihood would be silently left out)"
        )


def _tall(problem: Problem) -> tall.TallData:
    if not isinstance(problem.model, tall.TallData):
        raise ValueError(f"{problem.name} is not a tall-data target")
    tall.check_target(problem.model)
    return problem.model


def candidate_rows(model: tall.TallData, a: np.ndarray) -> np.ndarray:
    """Candidate rows with the alias table on ``a`` (the y column only where the kernels read it: RLR)."""
    return table_rows(model.X, model.y if model.kind == tall.RLR else None, a, model.shift)


def poisson_setup(model: tall.TallData, lam_mult: float) -> tuple[float, float, np.ndarray]:
    """``(lam, L, rows)`` for the PoissonMH family (rows: x_i, M_i, shift_i and the alias table on M);
    ValueError without usable bounds."""
    check_positive("lam_mult", lam_mult)
    if not np.any(model.M):  # all M_i = 0: the target has no bounds at all
        raise ValueError(
            "target has no PoissonMH bounds (L = sum M_i must be > 0); "
            "e.g. give the target a bounded support (box / ball)"
        )
    _check_tall_data(model, model.M, "M")
    L = float(model.M.sum())
    lam = float(lam_mult) * L * L
    check_rate(lam + L, f"lam_mult (lam + L = lam_mult L^2 + L, L = {L:.4g})")
    return lam, L, candidate_rows(model, model.M)


def check_feasible(model: tall.TallData, lam: float, L: float, lam_mult: float) -> str:
    """ValueError when the expected candidate count E[B] = lam + L of a PoissonMH-family iteration exceeds
    N: every iteration would then touch more data than a full-batch one, and a long run stalls without
    progress. The message gives both numbers and the remedies. Returns the one-line report
    (E[B] beside N) the run shows with its progress line and stores as ``EB_theory``."""
    N = int(model.X.shape[0])
    EB = lam + L
    if EB > N:
        raise ValueError(
            f"PoissonMH family infeasible: E[B] = lam + L = {EB:.4g} candidates an iteration exceeds N = {N} "
            f"({EB / N:.3g}x; L = {L:.4g}, lam = lam_mult L^2 = {lam:.4g}): temper the likelihood (beta), "
            f"give the target a tighter support, or lower lam_mult (now {lam_mult:g})"
        )
    return f"E[B] = lam + L = {EB:.4g} candidates an iteration, N = {N} ({EB / N:.3g} N)"


def tuna_expected_batch(C: float, chi: float, step: float, d: int) -> float:
    """TunaMH's expected candidate count at the initial move size, for a Gaussian random-walk or Langevin
    proposal of scale ``step``: B ~ Poi(chi C^2 Md^2 + C Md), Md = ||theta' - theta||, with E[Md^2] =
    step^2 d (the noise; a Langevin drift adds to it) and E[Md] <= step sqrt(d):
    ``chi C^2 step^2 d + C step sqrt(d)``."""
    return chi * C * C * step * step * d + C * step * math.sqrt(d)


def check_tuna_feasible(model: tall.TallData, C: float, chi: float, step: float, refuse: bool = True) -> str:
    """ValueError (if ``refuse``) when TunaMH's expected batch at the initial move size
    (:func:`tuna_expected_batch`) exceeds N, with the numbers and the remedies; else the one-line report
    (stored as ``EB_initial``)."""
    N = int(model.X.shape[0])
    d = int(model.prior_mean.shape[0])
    EB = tuna_expected_batch(C, chi, step, d)
    if refuse and EB > N:
        raise ValueError(
            f"TunaMH family infeasible: E[B] = chi C^2 step^2 d + C step sqrt(d) = {EB:.4g} candidates an "
            f"iteration at the initial move size exceeds N = {N} ({EB / N:.3g}x; C = {C:.4g}, "
            f"step = {step:g}, d = {d}): temper the likelihood (beta), give the target a tighter support "
            f"(smaller c_i), or lower chi (now {chi:g}) or the step"
        )
    return f"E[B] = {EB:.4g} candidates an iteration at the initial move size, N = {N} ({EB / N:.3g} N)"


def check_bounds_at(model: tall.TallData, theta: np.ndarray) -> None:
    """ValueError naming the first datum (and the count) whose ``phi_i(theta)`` lies outside ``[0, M_i]``:
    the PoissonMH family's setup check at the initial state, for every datum (O(N p), outside the timed
    loop; the loop itself checks only the data it draws)."""
    first, count = PM.bound_violations(model, np.ascontiguousarray(theta, dtype=np.float64))
    if first >= 0:
        ph = float(tall.phi_i(model, first, np.ascontiguousarray(theta, dtype=np.float64)))
        more = f" ({count} data in all)" if count > 1 else ""
        raise ValueError(
            f"PoissonMH bound violated at the initial state: phi_i(theta0) = {ph:.6g} outside [0, M_i] = "
            f"[0, {float(model.M[first]):.6g}] for datum {first}{more}; the bounds (shift_i, M_i) must hold "
            "for every datum on the whole support"
        )


def tuna_setup(model: tall.TallData, chi: float) -> tuple[float, np.ndarray]:
    """``(C, rows)`` for the TunaMH family (rows: x_i, c_i and the alias table on c); ValueError
    without Lipschitz constants."""
    check_positive("chi", chi)
    if not np.any(model.c):
        raise ValueError("target has no TunaMH constants (C = sum c_i must be > 0)")
    _check_tall_data(model, model.c, "c")
    C = float(model.c.sum())
    # the rate chi C^2 M^2 + C M grows with the move length M: each draw checks it against RATE_CAP
    if not np.isfinite(float(chi) * C * C):
        raise ValueError(f"chi = {chi!r} overflows the TunaMH rate chi C^2 M^2 (C = {C:.4g})")
    return C, candidate_rows(model, model.c)


def _tuna_report(model, C, chi, step, proposal, h, K) -> tuple[float, str]:
    """TunaMH family: ``(E[B] at the initial move size, its one-line report)``. The lattice proposal
    (verification runs) moves by ``h k``, |k_j| <= K: ``h K`` a coordinate bounds its move size, an upper
    bound that is reported but never refused on."""
    gauss = proposal == "gauss"
    scale = float(step) if gauss else float(h) * int(K)
    note = check_tuna_feasible(model, C, chi, scale, refuse=gauss)
    return tuna_expected_batch(C, chi, scale, int(model.prior_mean.shape[0])), note


def _finalize(extra: dict[str, Any]):
    def fin(state: tuple, res: ChainResult) -> None:
        err = state[2]
        if err[0] != 0:
            raise ValueError(PM.ERR_MESSAGES[int(err[0])].format(i=int(err[1])))
        if "trace_0" in res.extra:
            res.extra["datum_evals"] = res.extra.pop("trace_0")
        res.extra["final_state"] = np.array(state[0], copy=True)
        res.extra.update(extra)

    return fin


def _poisson_runner(method: str, base: str, init, sample, doc: str):
    """Wrapper of a PoissonMH-family kernel (``poisson_mh``: RW proposal; ``poisson_grad``: Langevin /
    Barker proposals): same hyperparameters, same state, same sample signature."""

    def run(
        problem: Problem,
        n_iter: int,
        seed: Any,
        *,
        step: float,
        lam_mult: float = 5e-4,
        proposal: str = "gauss",
        h: float = 0.0,
        K: int = 3,
        counts: str = "sparse",
        thin: int = 1,
        x0=None,
        progress=None,
    ) -> ChainResult:
        model = _tall(problem)
        check_positive("step", step)
        prop = _prop(base, proposal, h, K)
        dense = PM.counts_flag(counts)
        lam, L, rows = poisson_setup(model, lam_mult)
        note = check_feasible(model, lam, L, lam_mult)
        return drive(
            method,
            problem,
            n_iter,
            seed,
            init,
            (lam + L,),
            sample,
            (rows, lam, L, prop, float(step), float(h), int(K), dense),
            thin=thin,
            x0=x0,
            progress=progress,
            hyper={
                "step": step,
                "lam_mult": lam_mult,
                "proposal": proposal,
                "h": h,
                "K": K,
                "counts": counts,
            },
            finalize=_finalize({"lam": lam, "L": L, "EB_theory": lam + L}),
            setup_check=check_bounds_at,
            note=note,
        )

    run.__name__ = f"run_{method}"
    run.__doc__ = doc
    return run


run_poisson_mh = _poisson_runner(
    "poisson_mh",
    "rw",
    PM.poisson_mh_init,
    PM.poisson_mh_sample,
    "PoissonMH with a random-walk proposal (Yuan & Wang 2024 Alg. 5).",
)
_GRAD_DOC = "{} (Yuan & Wang 2024 Alg. 2, App. D; samplers.kernels.poisson_grad)."
run_poisson_mala = _poisson_runner(
    "poisson_mala", "mala", PG.poisson_grad_init, PG.poisson_grad_sample, _GRAD_DOC.format("poisson_mala")
)
run_poisson_barker = _poisson_runner(
    "poisson_barker",
    "barker",
    PG.poisson_grad_init,
    PG.poisson_grad_sample,
    _GRAD_DOC.format("poisson_barker"),
)


def run_tuna_mh(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    chi: float = 1e-5,
    proposal: str = "gauss",
    h: float = 0.0,
    K: int = 3,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """TunaMH with a random-walk proposal (Yuan & Wang 2024 Alg. 6)."""
    model = _tall(problem)
    check_positive("step", step)
    prop = _prop("rw", proposal, h, K)
    C, rows = tuna_setup(model, chi)
    eb, note = _tuna_report(model, C, chi, step, proposal, h, K)
    return drive(
        "tuna_mh",
        problem,
        n_iter,
        seed,
        TM.tuna_mh_init,
        (),
        TM.tuna_mh_sample,
        (rows, float(chi), C, prop, float(step), float(h), int(K)),
        thin=thin,
        x0=x0,
        progress=progress,
        hyper={"step": step, "chi": chi, "proposal": proposal, "h": h, "K": K},
        finalize=_finalize({"C": C, "EB_initial": eb}),
        note=note,
    )


def run_tuna_sgld(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    chi: float = 1e-5,
    batch: int = 20,
    drift: str = "paper",
    proposal: str = "gauss",
    h: float = 0.0,
    K: int = 3,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """Tuna-SGLD (Yuan & Wang 2024 Alg. 3); ``drift="normalized"`` is the authors' code variant."""
    model = _tall(problem)
    check_positive("step", step)
    check_positive("batch", batch, integer=True)
    N = model.X.shape[0]
    if batch > N:
        raise ValueError(f"batch ({batch}) exceeds the data size N={N}")
    if drift not in DRIFTS:
        raise ValueError(f"drift must be one of {sorted(DRIFTS)}, got {drift!r}")
    prop = _prop("mala", proposal, h, K)
    C, rows = tuna_setup(model, chi)
    eb, note = _tuna_report(model, C, chi, step, proposal, h, K)
    return drive(
        "tuna_sgld",
        problem,
        n_iter,
        seed,
        TS.tuna_sgld_init,
        (),
        TS.tuna_sgld_sample,
        (int(batch), float(chi), C, rows, prop, DRIFTS[drift], float(step), float(h), int(K)),
        thin=thin,
        x0=x0,
        progress=progress,
        hyper={
            "step": step,
            "chi": chi,
            "batch": batch,
            "drift": drift,
            "proposal": proposal,
            "h": h,
            "K": K,
        },
        finalize=_finalize({"C": C, "EB_initial": eb}),
        note=note,
    )


def run_exchange(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    proposal: str = "gauss",
    h: float = 0.0,
    K: int = 3,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """Exchange algorithm (Yuan & Wang 2024 Alg. 4) on the Ising-parameter posterior."""
    if not isinstance(problem.model, IP.IsingParam):
        raise ValueError(f"exchange needs an ising_param target, got {problem.name}")
    check_positive("step", step)
    prop = _prop("rw", proposal, h, K)

    def fin(state: tuple, res: ChainResult) -> None:
        res.extra["final_state"] = np.array(state[0], copy=True)

    return drive(
        "exchange",
        problem,
        n_iter,
        seed,
        EX.exchange_init,
        (),
        EX.exchange_sample,
        (prop, float(step), float(h), int(K)),
        thin=thin,
        x0=x0,
        progress=progress,
        hyper={"step": step, "proposal": proposal, "h": h, "K": K},
        finalize=fin,
    )


_RW = {"proposal": "gauss", "h": 0.0, "K": 3}
METHODS = [
    MethodSpec(
        "poisson_mh",
        "exact_mh",
        run_poisson_mh,
        ("continuous",),
        {"step": 0.1, "lam_mult": 5e-4, **_RW, "counts": "sparse"},
        True,
        "Zhang & De Sa 2019; Yuan & Wang 2024 Alg. 5",
        "PoissonMH: random walk + Poisson-minibatch ratio estimator",
        twin="rwm",
    ),
    MethodSpec(
        "poisson_mala",
        "exact_mh",
        run_poisson_mala,
        ("continuous",),
        {"step": 0.1, "lam_mult": 5e-4, **_RW, "counts": "sparse"},
        True,
        "Yuan & Wang 2024 Alg. 2, App. D",
        "Poisson-MALA: Langevin proposal with the Poisson-minibatch surrogate gradient",
        twin="mala",
    ),
    MethodSpec(
        "poisson_barker",
        "exact_mh",
        run_poisson_barker,
        ("continuous",),
        {"step": 0.1, "lam_mult": 5e-4, **_RW, "counts": "sparse"},
        True,
        "Yuan & Wang 2024 Alg. 2, App. D",
        "Poisson-Barker: Barker proposal with the Poisson-minibatch surrogate gradient",
        twin="barker",
    ),
    MethodSpec(
        "tuna_mh",
        "exact_mh",
        run_tuna_mh,
        ("continuous",),
        {"step": 0.1, "chi": 1e-5, **_RW},
        True,
        "Zhang, Cooper & De Sa 2020; Yuan & Wang 2024 Alg. 6",
        "TunaMH: random walk + Lipschitz-bounded Poisson-minibatch ratio",
        twin="rwm",
    ),
    MethodSpec(
        "tuna_sgld",
        "exact_mh",
        run_tuna_sgld,
        ("continuous",),
        {"step": 0.01, "chi": 1e-5, "batch": 20, "drift": "paper", **_RW},
        True,
        "Yuan & Wang 2024 Alg. 3",
        "Tuna-SGLD: SGLD proposal, TunaMH acceptance (exact)",
        twin="mala",
    ),
    MethodSpec(
        "exchange",
        "exact_mh",
        run_exchange,
        ("ising_param",),
        {"step": 0.05, **_RW},
        True,
        "Murray et al. 2006; Yuan & Wang 2024 Alg. 4",
        "exchange algorithm with exact auxiliary draws (enumeration / CFTP)",
    ),
]


# ============================================================================ targets
def _posterior_reference(model: IP.IsingParam, n_grid: int = 20001):
    grid = np.linspace(model.lo, model.hi, n_grid)
    lp = IP.log_posterior_grid(model, grid)
    w = np.exp(lp - lp.max())
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (w[1:] + w[:-1]) * np.diff(grid))])
    cdf /= cdf[-1]

    def draws(rng: np.random.Generator, n: int) -> np.ndarray:
        return np.interp(rng.random(n), cdf, grid)[:, None]

    return grid, w / (cdf[-1] if cdf[-1] else 1.0), cdf, draws


def build_ising_param(
    seed, rows: int, cols: int, theta_true: float, m: int, lo: float, hi: float, aux: str
) -> Problem:
    """Ising-parameter posterior: m exact configurations at ``theta_true`` (CFTP), prior U[lo, hi]."""
    X = IP.simulate(rows, cols, theta_true, m, np.random.default_rng(seed), support=(lo, hi))
    model = IP.ising_param(rows, cols, X, lo, hi, aux=aux)
    grid, dens, cdf, draws = _posterior_reference(model)
    mid = 0.5 * (lo + hi)
    return Problem(
        f"ising_param_{rows}x{cols}",
        "ising_param",
        model,
        1,
        lambda rng: np.array([min(max(mid + 0.1 * rng.standard_normal(), lo), hi)]),
        reference=draws,
        meta={
            "theta_true": theta_true,
            "grid": grid,
            "cdf": cdf,
            "X": X,
            "post_median": float(np.interp(0.5, cdf, grid)),
        },
    )


TARGETS = [
    TargetSpec(
        "ising_param",
        "ising_param",
        build_ising_param,
        {"rows": 8, "cols": 8, "theta_true": 0.25, "m": 4, "lo": 0.0, "hi": 0.6, "aux": "cftp"},
        "Yuan & Wang 2024 Alg. 4 (no experiment in the paper)",
        "Ising model with unknown interaction (doubly intractable)",
        smoke={"rows": 4, "cols": 4, "aux": "enum"},
    ),
]
