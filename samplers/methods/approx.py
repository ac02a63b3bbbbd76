"""Approximate minibatch MH tests (Korattikara et al. 2014; Seita et al. 2017; Bardenet et al. 2014):
registrations and wrappers.

Methods (canonical ids): ``austere_mh_c``, ``austere_mh_nc``, ``mh_minibatch``, ``mh_sublhd``,
``sgld_austere``, ``austere_gibbs``. All are biased by design (``exact=False``). Every result has
``n_evals`` = data (or factor look-ups) used by the test per iteration and ``extra["trace_0"]`` = data
touched by a full-data pass in that iteration (AustereMH(nc)'s mu_std, MHSubLhd's C_{theta,theta'});
``extra["full_pass_evals"]`` is its total. The targets are in :mod:`samplers.methods.approx_targets`; ICA
on the orthogonal group (methods and target) in :mod:`samplers.approx.ica_stiefel`.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from samplers import proposals as P
from samplers.approx import correction as corr
from samplers.approx import design as dsg
from samplers.approx import ica_stiefel as _ica_stiefel
from samplers.approx.seqtest import tcrit_table
from samplers.kernels import austere as A
from samplers.kernels import austere_gibbs as AG
from samplers.kernels import mh_minibatch as MB
from samplers.kernels import mh_sublhd as SL
from samplers.kernels import rjmcmc as RJ
from samplers.problem import Problem
from samplers.result import ChainResult
from samplers.run import check_positive, drive
from samplers.specs import MethodSpec
from samplers.targets import tall
from samplers.targets.factor_graph import FactorGraph

_RW = {"gauss": P.RW_GAUSS, "lattice": P.RW_LATTICE}


def _tall(problem: Problem) -> tall.TallData:
    if not isinstance(problem.model, tall.TallData):
        raise ValueError(f"{problem.name} is not a tall-data target")
    return problem.model


def _rw(proposal: str, step: float, h: float, K: int) -> int:
    if proposal not in _RW:
        raise ValueError(f"proposal must be 'gauss' or 'lattice' (random walk), got {proposal!r}")
    check_positive("step", step)
    if proposal == "lattice":
        check_positive("h", h)
    check_positive("K", K, integer=True)
    return _RW[proposal]


def check_eps(eps: float, allow_half: bool = False) -> None:
    """Per-test threshold eps in (0, 0.5) (K14; 0.5 = always decide at the first stage, §6.4)."""
    ok = isinstance(eps, (int, float, np.floating)) and (0.0 < eps < 0.5 or (allow_half and eps == 0.5))
    if not ok:
        rng = "(0, 0.5]" if allow_half else "(0, 0.5)"
        raise ValueError(f"eps must be in {rng}, got {eps!r}")


def _tcrit(N: int, eps: float, boundary: str = "pocock", alpha: float = 0.5) -> np.ndarray:
    if eps == 0.5:
        tc = np.zeros(N + 1)
        tc[:2] = np.inf
        return tc
    return tcrit_table(N, float(eps), boundary, float(alpha))


def _add_full(state, res: ChainResult) -> None:
    res.extra["full_pass_evals"] = int(np.sum(res.extra.get("trace_0", 0)))


def cache_dir() -> Path:
    """Where precomputed tables (correction density) are stored: $MCMC_BENCH_CACHE or data/cache."""
    env = os.environ.get("MCMC_BENCH_CACHE")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "data" / "cache"


# ============================================================================ wrappers
def run_austere_mh_c(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    m: int = 500,
    eps: float = 0.05,
    boundary: str = "pocock",
    alpha: float = 0.5,
    design_bound: float | None = None,
    proposal: str = "gauss",
    h: float = 0.0,
    K: int = 3,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """AustereMH with a fixed design (K14 Alg. 1); ``design_bound`` = choose (m, eps) by the
    worst-case design (K14 eq. 8, S17 "AustereMH(c)") on the S17 grid instead."""
    t = _tall(problem)
    N = t.X.shape[0]
    prop = _rw(proposal, step, h, K)
    if design_bound is not None:
        check_positive("design_bound", design_bound)
        des = dsg.worst_case_design(N, float(design_bound))
        m, eps = des["m"], des["eps"]
    check_positive("m", m, integer=True)
    check_eps(eps)
    tc = _tcrit(N, eps, boundary, alpha)
    return drive(
        "austere_mh_c",
        problem,
        n_iter,
        seed,
        A.austere_init,
        (),
        A.austere_sample,
        (prop, float(step), float(h), int(K), int(m), tc),
        thin=thin,
        x0=x0,
        progress=progress,
        finalize=_add_full,
        hyper={
            "step": step,
            "m": int(m),
            "eps": float(eps),
            "boundary": boundary,
            "alpha": alpha,
            "design_bound": design_bound,
            "proposal": proposal,
            "h": h,
            "K": K,
        },
    )


_NC_TABLES: dict = {}


def nc_tables(
    N: int,
    m_grid=dsg.DEFAULT_M_GRID,
    eps_grid=dsg.DEFAULT_EPS_GRID,
    mu_points: int = 201,
    mu_max: float = 10.0,
    L: int = 100,
) -> dict:
    """DP tables E, pi_bar on |mu_std| in [0, mu_max] for every design (memoised per process)."""
    key = (N, tuple(m_grid), tuple(eps_grid), mu_points, mu_max, L)
    if key not in _NC_TABLES:
        mg = [m for m in m_grid if m <= N] or [N]
        _NC_TABLES[key] = dsg.design_table(N, mg, eps_grid, np.linspace(0, mu_max, mu_points), L)
    return _NC_TABLES[key]


def run_austere_mh_nc(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    bound: float = 0.05,
    m_grid: tuple = dsg.DEFAULT_M_GRID,
    eps_grid: tuple = dsg.DEFAULT_EPS_GRID,
    mu_points: int = 201,
    L: int = 100,
    proposal: str = "gauss",
    h: float = 0.0,
    K: int = 3,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """AustereMH(nc) (S17 §6, App. C.2.1): per-iteration design from the exact mu_std (full pass)."""
    t = _tall(problem)
    N = t.X.shape[0]
    prop = _rw(proposal, step, h, K)
    check_positive("bound", bound)
    check_positive("mu_points", mu_points, integer=True)
    check_positive("L", L, integer=True)
    if mu_points < 2:
        raise ValueError("mu_points must be >= 2")
    for m in m_grid:
        check_positive("m (in m_grid)", m, integer=True)
    for e in eps_grid:
        check_eps(e)
    tab = nc_tables(
        N, tuple(int(m) for m in m_grid), tuple(float(e) for e in eps_grid), int(mu_points), 10.0, int(L)
    )
    eps_u = sorted(set(tab["eps"].tolist()))
    tct = np.stack([_tcrit(N, e) for e in eps_u])
    eps_idx = np.array([eps_u.index(e) for e in tab["eps"]], dtype=np.int64)
    return drive(
        "austere_mh_nc",
        problem,
        n_iter,
        seed,
        A.austere_init,
        (),
        A.austere_nc_sample,
        (
            prop,
            float(step),
            float(h),
            int(K),
            float(bound),
            tab["m"],
            eps_idx,
            tct,
            tab["E"],
            tab["pibar"] * N,
            tab["mu_grid"],
        ),
        thin=thin,
        x0=x0,
        progress=progress,
        finalize=_add_full,
        hyper={
            "step": step,
            "bound": bound,
            "m_grid": list(m_grid),
            "eps_grid": list(eps_grid),
            "mu_points": mu_points,
            "L": L,
            "proposal": proposal,
            "h": h,
            "K": K,
        },
    )


_CORR: dict = {}


def get_correction(n: int = 4000, V: float = 20.0, lam: float = 10.0, sigma: float = 1.0) -> corr.Correction:
    """C_sigma (memoised; cached on disk under :func:`cache_dir`)."""
    key = (int(n), float(V), float(lam), float(sigma))
    if key not in _CORR:
        _CORR[key] = corr.build_correction(
            int(n), float(V), float(lam), float(sigma), cache_dir=cache_dir() / "approx"
        )
    return _CORR[key]


def run_mh_minibatch(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    m: int = 100,
    delta: float = float("inf"),
    corr_n: int = 4000,
    corr_V: float = 20.0,
    corr_lambda: float = 10.0,
    corr_sigma: float = 1.0,
    proposal: str = "gauss",
    h: float = 0.0,
    K: int = 3,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """MHminibatch (S17 Alg. 1) with the correction C_sigma(corr_n, corr_V, corr_lambda)."""
    _tall(problem)
    prop = _rw(proposal, step, h, K)
    check_positive("m", m, integer=True)
    if not (isinstance(delta, (int, float)) and delta > 0):
        raise ValueError(f"delta must be > 0 (inf = no Corollary-1 check), got {delta!r}")
    c = get_correction(corr_n, corr_V, corr_lambda, corr_sigma)
    return drive(
        "mh_minibatch",
        problem,
        n_iter,
        seed,
        MB.mh_minibatch_init,
        (),
        MB.mh_minibatch_sample,
        (prop, float(step), float(h), int(K), int(m), float(delta), float(c.sigma), c.y, float(c.h), c.cdf),
        thin=thin,
        x0=x0,
        progress=progress,
        finalize=_add_full,
        hyper={
            "step": step,
            "m": int(m),
            "delta": delta,
            "corr_n": corr_n,
            "corr_V": corr_V,
            "corr_lambda": corr_lambda,
            "corr_sigma": corr_sigma,
            "proposal": proposal,
            "h": h,
            "K": K,
        },
    )


def run_mh_sublhd(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    m: int = 100,
    gamma: float = 2.0,
    p: float = 2.0,
    delta: float = 0.01,
    proposal: str = "gauss",
    h: float = 0.0,
    K: int = 3,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """MHSubLhd (B14, empirical Bernstein; C from a full-data pass, its cost in trace 0)."""
    _tall(problem)
    prop = _rw(proposal, step, h, K)
    check_positive("m", m, integer=True)
    if not gamma > 1:
        raise ValueError(f"gamma must be > 1, got {gamma!r}")
    if not p > 1:
        raise ValueError(f"p must be > 1, got {p!r}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return drive(
        "mh_sublhd",
        problem,
        n_iter,
        seed,
        SL.mh_sublhd_init,
        (),
        SL.mh_sublhd_sample,
        (prop, float(step), float(h), int(K), int(m), float(gamma), float(p), float(delta)),
        thin=thin,
        x0=x0,
        progress=progress,
        finalize=_add_full,
        hyper={
            "step": step,
            "m": int(m),
            "gamma": gamma,
            "p": p,
            "delta": delta,
            "proposal": proposal,
            "h": h,
            "K": K,
        },
    )


def run_sgld_austere(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    batch: int = 500,
    m: int = 500,
    eps: float = 0.5,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """SGLD proposal + approximate MH test (K14 §6.4; eps = 0.5 decides on the first m points)."""
    t = _tall(problem)
    N = t.X.shape[0]
    check_positive("step", step)
    check_positive("batch", batch, integer=True)
    check_positive("m", m, integer=True)
    if batch > N:
        raise ValueError(f"batch ({batch}) exceeds the data size N={N}")
    check_eps(eps, allow_half=True)
    return drive(
        "sgld_austere",
        problem,
        n_iter,
        seed,
        A.sgld_austere_init,
        (),
        A.sgld_austere_sample,
        (float(step), int(batch), int(m), _tcrit(N, eps)),
        thin=thin,
        x0=x0,
        progress=progress,
        finalize=_add_full,
        hyper={"step": step, "batch": int(batch), "m": int(m), "eps": eps},
    )


def run_austere_gibbs(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    m: int = 500,
    eps: float = 0.05,
    scan: str = "random",
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """Austere Gibbs (K14 App. F) on a binary factor graph."""
    fg = problem.model
    if not isinstance(fg, FactorGraph):
        raise ValueError(f"{problem.name} is not a factor graph")
    if np.any(fg.card != 2):
        raise ValueError("austere_gibbs needs binary variables (card == 2)")
    scans = {"random": AG.RANDOM_SCAN, "systematic": AG.SYSTEMATIC_SCAN}
    if scan not in scans:
        raise ValueError(f"scan must be 'random' or 'systematic', got {scan!r}")
    check_positive("m", m, integer=True)
    check_eps(eps)
    if x0 is not None:
        x0 = np.asarray(x0, dtype=np.int64)
        if np.any((x0 != 0) & (x0 != 1)):
            raise ValueError("initial state must be binary")
    deg = int(np.max(np.diff(fg.var_ptr))) if fg.n else 1
    return drive(
        "austere_gibbs",
        problem,
        n_iter,
        seed,
        AG.austere_gibbs_init,
        (),
        AG.austere_gibbs_sample,
        (scans[scan], int(m), _tcrit(max(deg, 1), eps)),
        thin=thin,
        x0=x0,
        progress=progress,
        finalize=_add_full,
        hyper={"m": int(m), "eps": eps, "scan": scan},
    )


def _rj_model(problem: Problem) -> tall.TallData:
    t = _tall(problem)
    if t.kind != tall.LOGISTIC or problem.space != "variable_selection":
        raise ValueError(f"RJMCMC needs a logistic variable_selection target, got {problem.name}")
    return t


def run_rjmcmc(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    birth_sd: float = 0.1,
    lam: float = 1e-10,
    p_bd: float = 1.0 / 3.0,
    m: int | None = None,
    eps: float = 0.05,
    lattice_h: float = 0.0,
    lattice_M: int = 0,
    method: str = "rjmcmc_exact",
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """K14 §6.3 / App. E RJMCMC (update / birth / death) with the exact MH test (``m=None``: all N
    data in one stage) or the K14 sequential test (minibatch ``m``, threshold ``eps``). ``step`` =
    sigma_update, ``birth_sd`` = sigma_birth (standard deviations), ``lam`` = lambda' (see
    :mod:`samplers.kernels.rjmcmc`); ``lattice_h > 0`` = the lattice version used by verify."""
    t = _rj_model(problem)
    N = t.X.shape[0]
    check_positive("step", step)
    check_positive("birth_sd", birth_sd)
    check_positive("lam", lam)
    if not (0.0 < p_bd <= 0.5):
        raise ValueError(f"p_bd must be in (0, 0.5], got {p_bd!r}")
    if lattice_h < 0 or (lattice_h > 0 and (not isinstance(lattice_M, (int, np.integer)) or lattice_M < 1)):
        raise ValueError("lattice_h must be >= 0, and lattice_M a positive integer when lattice_h > 0")
    if m is None:
        mm, tc = N, np.full(N + 1, np.inf)
    else:
        check_positive("m", m, integer=True)
        check_eps(eps)
        mm, tc = int(m), _tcrit(N, float(eps))
    bmax = (lattice_M - 0.5) * lattice_h if lattice_h > 0 else np.inf
    return drive(
        method,
        problem,
        n_iter,
        seed,
        RJ.rjmcmc_init,
        (),
        RJ.rjmcmc_sample,
        (
            math.log(lam),
            float(p_bd),
            float(step),
            float(birth_sd),
            float(lattice_h),
            int(lattice_M),
            float(bmax),
            mm,
            tc,
        ),
        thin=thin,
        x0=x0,
        progress=progress,
        finalize=_add_full,
        hyper={
            "step": step,
            "birth_sd": birth_sd,
            "lam": lam,
            "p_bd": p_bd,
            "m": m,
            "eps": eps if m else None,
            "lattice_h": lattice_h,
            "lattice_M": lattice_M,
        },
    )


def run_rjmcmc_exact(problem: Problem, n_iter: int, seed: Any, **kw) -> ChainResult:
    """RJMCMC with the exact MH test (K14 §6.3 "exact reversible jump", eps = 0)."""
    return run_rjmcmc(problem, n_iter, seed, m=None, method="rjmcmc_exact", **kw)


def run_rjmcmc_austere(problem: Problem, n_iter: int, seed: Any, *, m: int, eps: float, **kw) -> ChainResult:
    """RJMCMC with the K14 sequential t-test (minibatch m, threshold eps) for every move."""
    return run_rjmcmc(problem, n_iter, seed, m=m, eps=eps, method="rjmcmc_austere", **kw)


_RJ_DEFAULTS = {"birth_sd": 0.1, "lam": 1e-10, "p_bd": 1.0 / 3.0, "lattice_h": 0.0, "lattice_M": 0}
_GRID = {"proposal": "gauss", "h": 0.0, "K": 3}
METHODS = [
    MethodSpec(
        "austere_mh_c",
        "approx",
        run_austere_mh_c,
        ("continuous",),
        {
            "step": 0.1,
            "m": 500,
            "eps": 0.05,
            "boundary": "pocock",
            "alpha": 0.5,
            "design_bound": None,
            **_GRID,
        },
        False,
        "Korattikara, Chen & Welling 2014 Alg. 1; Seita et al. 2017 §6",
        "AustereMH: sequential t-test, fixed (or worst-case-designed) m, eps",
        twin="rwm",
    ),
    MethodSpec(
        "austere_mh_nc",
        "approx",
        run_austere_mh_nc,
        ("continuous",),
        {
            "step": 0.1,
            "bound": 0.05,
            "m_grid": dsg.DEFAULT_M_GRID,
            "eps_grid": dsg.DEFAULT_EPS_GRID,
            "mu_points": 201,
            "L": 100,
            **_GRID,
        },
        False,
        "Seita et al. 2017 §6, App. C.2.1",
        "AustereMH(nc): per-iteration design from a full-data mu_std (cost reported)",
        twin="rwm",
    ),
    MethodSpec(
        "mh_minibatch",
        "approx",
        run_mh_minibatch,
        ("continuous",),
        {
            "step": 0.1,
            "m": 100,
            "delta": float("inf"),
            "corr_n": 4000,
            "corr_V": 20.0,
            "corr_lambda": 10.0,
            "corr_sigma": 1.0,
            **_GRID,
        },
        False,
        "Seita et al. 2017 Alg. 1",
        "MHminibatch: Barker test with Gaussian + correction noise",
        twin="barker",
    ),
    MethodSpec(
        "mh_sublhd",
        "approx",
        run_mh_sublhd,
        ("continuous",),
        {"step": 0.1, "m": 100, "gamma": 2.0, "p": 2.0, "delta": 0.01, **_GRID},
        False,
        "Bardenet et al. 2014",
        "MHSubLhd: adaptive subsampling, empirical Bernstein",
        twin="rwm",
    ),
    MethodSpec(
        "sgld_austere",
        "approx",
        run_sgld_austere,
        ("continuous",),
        {"step": 0.01, "batch": 500, "m": 500, "eps": 0.5},
        False,
        "Korattikara, Chen & Welling 2014 §6.4",
        "SGLD proposal + approximate MH test",
        twin="sgld",
    ),
    MethodSpec(
        "austere_gibbs",
        "approx",
        run_austere_gibbs,
        ("discrete",),
        {"m": 500, "eps": 0.05, "scan": "random"},
        False,
        "Korattikara, Chen & Welling 2014 App. F",
        "Gibbs with the sequential test over factors (binary MRF)",
        step_param=None,
        twin="gibbs",
    ),
    MethodSpec(
        "rjmcmc_exact",
        "approx",
        run_rjmcmc_exact,
        ("variable_selection",),
        {"step": 0.01, **_RJ_DEFAULTS},
        True,
        "Korattikara, Chen & Welling 2014 §6.3, App. E",
        "reversible-jump variable selection (update/birth/death), exact MH test",
    ),
    MethodSpec(
        "rjmcmc_austere",
        "approx",
        run_rjmcmc_austere,
        ("variable_selection",),
        {"step": 0.01, "m": 500, "eps": 0.05, **_RJ_DEFAULTS},
        False,
        "Korattikara, Chen & Welling 2014 §6.3, App. E",
        "reversible-jump variable selection with the K14 sequential test",
        twin="rjmcmc_exact",
    ),
]


METHODS += _ica_stiefel.METHODS  # ICA on the orthogonal group (K14 §6.2's model)
