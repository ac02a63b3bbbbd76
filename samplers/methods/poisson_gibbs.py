"""Poisson-minibatching Gibbs family (Zhang & De Sa 2019; baselines De Sa, Chen & Wong 2018).

Discrete methods: ``poisson_gibbs`` (Alg. 2 + Alg. 4), ``min_gibbs``, ``mgpmh``, ``doublemin_gibbs``
(the last three RECONSTRUCTED from the descriptions in Zhang & De Sa 2019 and De Sa, Chen & Wong 2018 —
no public code).
Continuous methods (x in [a, b]): ``gibbs_its``, ``gibbs_da``, ``pgits`` (App. C.1, Alg. 5), ``pgda``
(Alg. 3), ``gibbs_rejection``, ``pg_rejection`` (samplers.kernels.continuous_gibbs).

Minibatch sizes are given in units of L^2 (``lam_L2``; lambda = lam_L2 * L^2, Zhang & De Sa 2019 §4.1) or as
an absolute ``lam`` (> 0 overrides ``lam_L2``). Targets: the §4.1 Potts model, the §4.2 continuous spin
model, the §4.3 truncated Gaussian mixture, and tiny enumerable versions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from samplers.kernels import continuous_gibbs as CG
from samplers.kernels import doublemin_gibbs as DM
from samplers.kernels import mgpmh as MG
from samplers.kernels import min_gibbs as MI
from samplers.kernels import poisson_gibbs as PG
from samplers.poisson_minibatch import alias_for
from samplers.problem import Problem
from samplers.result import ChainResult
from samplers.run import check_positive, drive
from samplers.specs import MethodSpec, TargetSpec
from samplers.targets import continuous_spin as cs
from samplers.targets import factor_graph as fgm
from samplers.targets import tall

_MUTANT_IDS = (0, 1, 2, 3)


# ============================================================================ helpers
def _fg(problem: Problem) -> fgm.FactorGraph:
    if not isinstance(problem.model, fgm.FactorGraph):
        raise ValueError(f"{problem.name} is not a discrete factor graph")
    return problem.model


def _x0(problem: Problem, x0):
    if x0 is None:
        return None
    x0 = np.asarray(x0, dtype=np.int64)
    if x0.shape != (problem.dim,) or np.any(x0 < 0) or np.any(x0 >= problem.model.card):
        raise ValueError("initial state outside the variables' domains")
    return x0


def resolve_lambda(L: float, lam: float, lam_L2: float, name: str = "lam") -> float:
    """lambda = lam if lam > 0 else lam_L2 * L^2 (validated)."""
    if lam is not None and lam != 0:
        check_positive(name, lam)
        return float(lam)
    check_positive(f"{name}_L2", lam_L2)
    return float(lam_L2) * L * L


def _check_mutant(mutant: int, allowed: tuple[int, ...]) -> int:
    if mutant not in allowed:
        raise ValueError(f"mutant must be one of {allowed} (0 = the correct kernel), got {mutant!r}")
    return int(mutant)


def global_tables(fg: fgm.FactorGraph, glam: float):
    """Global alias table p(f) ∝ M_f and rates glam M_f / Psi (MIN-style estimator)."""
    Psi = float(fg.M.sum())
    if not Psi > 0:
        raise ValueError("the graph has Psi = 0")
    gprob, galias = alias_for(fg.M)
    grate = glam * fg.M / Psi
    return gprob, galias, grate, Psi


# ============================================================================ discrete wrappers
def run_poisson_gibbs(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    lam_L2: float = 1.0,
    lam: float = 0.0,
    mutant: int = 0,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """Poisson-Gibbs (Zhang & De Sa 2019 Alg. 2, auxiliary counts by Alg. 4); ``mutant`` != 0 only for
    verify."""
    fg = _fg(problem)
    L = PG.local_max_energy(fg)
    lam_v = resolve_lambda(L, lam, lam_L2)
    mutant = _check_mutant(mutant, _MUTANT_IDS)
    prob, alias, Lam, arate, bufsize = PG.poisson_gibbs_tables(fg, lam_v, L)
    res = drive(
        "poisson_gibbs",
        problem,
        n_iter,
        seed,
        PG.poisson_gibbs_init,
        (prob, alias, Lam, arate, bufsize),
        PG.poisson_gibbs_sample,
        (mutant,),
        thin=thin,
        x0=_x0(problem, x0),
        progress=progress,
        hyper={"lam": lam_v, "lam_L2": lam_v / L**2, "mutant": mutant},
    )
    res.extra["L"] = L
    res.extra["mean_B"] = float(np.mean(res.extra["trace_0"]))
    res.extra["mean_kept"] = float(np.mean(res.extra["trace_1"]))
    return res


def run_mgpmh(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    lam_L2: float = 1.0,
    lam: float = 0.0,
    mutant: int = 0,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """MGPMH (De Sa et al. 2018, reconstructed): local state-independent minibatch proposal + exact MH."""
    fg = _fg(problem)
    L = PG.local_max_energy(fg)
    lam_v = resolve_lambda(L, lam, lam_L2)
    mutant = _check_mutant(mutant, (0, 1))
    prob, alias, Msum = PG.build_local_tables(fg, 1.0)
    Lam = lam_v * Msum / L
    arate = lam_v * fg.M / L
    bufsize = PG.candidate_buffer_for(float(Lam.max())).shape[0]
    res = drive(
        "mgpmh",
        problem,
        n_iter,
        seed,
        MG.mgpmh_init,
        (prob, alias, Lam, arate, bufsize),
        MG.mgpmh_sample,
        (mutant,),
        thin=thin,
        x0=_x0(problem, x0),
        progress=progress,
        hyper={"lam": lam_v, "lam_L2": lam_v / L**2, "mutant": mutant},
    )
    res.extra["L"] = L
    res.extra["mean_B"] = float(np.mean(res.extra["trace_0"]))
    return res


def run_min_gibbs(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    lam_L2: float = 1.0,
    lam: float = 0.0,
    mutant: int = 0,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """MIN-Gibbs (De Sa et al. 2018, reconstructed): global Poisson estimates per candidate, cached
    estimate for the current value. lambda is the expected GLOBAL batch per estimate."""
    fg = _fg(problem)
    L = PG.local_max_energy(fg)
    lam_v = resolve_lambda(L, lam, lam_L2)
    mutant = _check_mutant(mutant, (0, 1))
    gprob, galias, grate, Psi = global_tables(fg, lam_v)
    res = drive(
        "min_gibbs",
        problem,
        n_iter,
        seed,
        MI.min_gibbs_init,
        (gprob, galias, grate),
        MI.min_gibbs_sample,
        (lam_v, mutant),
        thin=thin,
        x0=_x0(problem, x0),
        progress=progress,
        hyper={"lam": lam_v, "lam_L2": lam_v / L**2, "mutant": mutant},
    )
    res.extra["L"] = L
    res.extra["Psi"] = Psi
    return res


def run_doublemin_gibbs(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    lam_L2: float = 1.0,
    lam: float = 0.0,
    lam2_L2: float = 1.0,
    lam2: float = 0.0,
    mutant: int = 0,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """DoubleMIN-Gibbs (De Sa et al. 2018, reconstructed): MGPMH proposal (lambda1) + pseudo-marginal
    MH with global estimates (second batch lambda2)."""
    fg = _fg(problem)
    L = PG.local_max_energy(fg)
    lam_v = resolve_lambda(L, lam, lam_L2)
    lam2_v = resolve_lambda(L, lam2, lam2_L2, "lam2")
    mutant = _check_mutant(mutant, (0, 1))
    prob, alias, Msum = PG.build_local_tables(fg, 1.0)
    Lam = lam_v * Msum / L
    arate = lam_v * fg.M / L
    bufsize = PG.candidate_buffer_for(float(Lam.max())).shape[0]
    gprob, galias, grate, Psi = global_tables(fg, lam2_v)
    res = drive(
        "doublemin_gibbs",
        problem,
        n_iter,
        seed,
        DM.doublemin_gibbs_init,
        (prob, alias, Lam, arate, bufsize, gprob, galias, grate),
        DM.doublemin_gibbs_sample,
        (lam2_v, mutant),
        thin=thin,
        x0=_x0(problem, x0),
        progress=progress,
        hyper={
            "lam": lam_v,
            "lam_L2": lam_v / L**2,
            "lam2": lam2_v,
            "lam2_L2": lam2_v / L**2,
            "mutant": mutant,
        },
    )
    res.extra["L"] = L
    res.extra["Psi"] = Psi
    res.extra["mean_B1"] = float(np.mean(res.extra["trace_0"]))
    res.extra["mean_B2"] = float(np.mean(res.extra["trace_1"]))
    return res


# ============================================================================ continuous wrappers
def _cm(problem: Problem) -> cs.ContinuousModel:
    if not isinstance(problem.model, cs.ContinuousModel):
        raise ValueError(f"{problem.name} is not a continuous box model (ContinuousModel)")
    return problem.model


def _continuous_runner(mid: str):
    method = CG.METHOD_IDS[mid]

    def run(
        problem: Problem,
        n_iter: int,
        seed: Any,
        *,
        lam_L2: float = 1.0,
        lam: float = 0.0,
        m: int = 3,
        k: int = 10,
        log_offset: float = 0.0,
        max_steps: int = 100_000,
        mutant: int = 0,
        thin: int = 1,
        x0=None,
        progress=None,
    ) -> ChainResult:
        model = _cm(problem)
        L = cs.local_max_energy(model)
        lam_v = resolve_lambda(L, lam, lam_L2)
        check_positive("m", m, integer=True)
        check_positive("k", k, integer=True)
        check_positive("max_steps", max_steps, integer=True)
        check_positive("log_offset", log_offset, allow_zero=True)
        mutant = _check_mutant(mutant, (0, 1))
        if x0 is not None:
            x0 = np.asarray(x0, dtype=np.float64)
            if x0.shape != (problem.dim,) or np.any(x0 < model.lo) or np.any(x0 > model.hi):
                raise ValueError(f"initial state must lie in [{model.lo}, {model.hi}]^{problem.dim}")
        prob, alias, Lam, arate, Msum, bufsize = CG.continuous_tables(model, lam_v, L)
        maxdeg = max(int(m), int(k))
        res = drive(
            mid,
            problem,
            n_iter,
            seed,
            CG.continuous_gibbs_init,
            (prob, alias, Lam, arate, Msum, bufsize, maxdeg),
            CG.continuous_gibbs_sample,
            (method, int(m), int(k), float(log_offset), int(max_steps), mutant),
            thin=thin,
            x0=x0,
            progress=progress,
            hyper={
                "lam": lam_v,
                "lam_L2": lam_v / L**2,
                "m": int(m),
                "k": int(k),
                "log_offset": float(log_offset),
                "max_steps": int(max_steps),
                "mutant": mutant,
            },
        )
        res.extra["L"] = L
        res.extra["mean_B"] = float(np.mean(res.extra["trace_0"]))
        res.extra["mean_steps"] = float(np.mean(res.extra["trace_1"]))
        res.extra["mean_S"] = float(np.mean(res.extra["trace_2"]))
        return res

    run.__name__ = f"run_{mid}"
    run.__doc__ = f"{mid} (samplers.kernels.continuous_gibbs, Zhang & De Sa 2019 §3)."
    return run


_LAM = {"lam_L2": 1.0, "lam": 0.0, "mutant": 0}
_CONT = {"lam_L2": 1.0, "lam": 0.0, "m": 3, "k": 10, "log_offset": 0.0, "max_steps": 100_000, "mutant": 0}
_CONT_DESC = {
    "gibbs_its": (
        "Zhang & De Sa 2019 §4.2 (FITS, Olver & Townsend 2013)",
        "Gibbs with Chebyshev inverse transform sampling (+ MH correction)",
    ),
    "gibbs_da": ("Zhang & De Sa 2019 §4.2", "Gibbs with double Chebyshev approximation (+ MH correction)"),
    "pgits": ("Zhang & De Sa 2019 App. C.1, Alg. 5", "Poisson-Gibbs with fast inverse transform sampling"),
    "pgda": ("Zhang & De Sa 2019 Alg. 3", "Poisson-Gibbs with double Chebyshev approximation"),
    "gibbs_rejection": ("Zhang & De Sa 2019 §4.2", "Gibbs with uniform-proposal rejection sampling"),
    "pg_rejection": ("Zhang & De Sa 2019 §4.2", "Poisson-Gibbs with uniform-proposal rejection sampling"),
}
METHODS = [
    MethodSpec(
        "poisson_gibbs",
        "poisson_gibbs",
        run_poisson_gibbs,
        ("discrete",),
        dict(_LAM),
        True,
        "Zhang & De Sa 2019 Alg. 2, App. A Alg. 4",
        "Poisson-minibatching Gibbs (no MH step)",
        step_param=None,
        twin="gibbs",
    ),
    MethodSpec(
        "min_gibbs",
        "poisson_gibbs",
        run_min_gibbs,
        ("discrete",),
        dict(_LAM),
        True,
        "De Sa et al. 2018 (reconstructed)",
        "MIN-Gibbs: global Poisson energy estimates",
        step_param=None,
        twin="gibbs",
    ),
    MethodSpec(
        "mgpmh",
        "poisson_gibbs",
        run_mgpmh,
        ("discrete",),
        dict(_LAM),
        True,
        "De Sa et al. 2018 (reconstructed)",
        "minibatch-Gibbs proposal + exact local MH",
        step_param=None,
        twin="gibbs",
    ),
    MethodSpec(
        "doublemin_gibbs",
        "poisson_gibbs",
        run_doublemin_gibbs,
        ("discrete",),
        {**_LAM, "lam2_L2": 1.0, "lam2": 0.0},
        True,
        "De Sa et al. 2018 (reconstructed)",
        "MGPMH proposal + pseudo-marginal MH with a second global minibatch",
        step_param=None,
        twin="gibbs",
    ),
] + [
    MethodSpec(
        mid,
        "poisson_gibbs",
        _continuous_runner(mid),
        ("continuous_box",),
        dict(_CONT),
        mid not in ("gibbs_rejection", "pg_rejection"),
        paper,
        desc,
        step_param=None,
        twin=None if mid.startswith("gibbs") else mid.replace("pg", "gibbs_", 1).replace("gibbs__", "gibbs_"),
    )
    for mid, (paper, desc) in _CONT_DESC.items()
]


# ============================================================================ discrete targets
def build_potts_gauss(seed, rows: int, cols: int, D: int, beta: float, gamma: float, start: str) -> Problem:
    """Zhang & De Sa 2019 §4.1: fully connected Potts, A_ij = exp(-gamma ||r_i - r_j||^2) (no wrap, one factor
    per unordered pair, M_f = beta A_ij). gamma = 1.5 gives L = 5.0878 on 20x20 (paper: 5.09).
    ``start``: "ones" (authors' code: all spins at the first value) or "random"."""
    if rows < 1 or cols < 1 or rows * cols < 2:
        raise ValueError("need at least two sites")
    check_positive("beta", beta)
    check_positive("gamma", gamma)
    if start not in ("ones", "random"):
        raise ValueError("start must be 'ones' or 'random'")
    J = fgm.grid_coupling(rows, cols, "gaussian", gamma)
    fg = fgm.potts(J, int(D), beta)
    n = rows * cols
    if start == "ones":

        def init(rng):
            return np.zeros(n, dtype=np.int64)
    else:

        def init(rng):
            return rng.integers(0, D, n).astype(np.int64)

    L = PG.local_max_energy(fg)
    return Problem(
        f"potts_{rows}x{cols}_D{D}_gauss",
        "discrete",
        fg,
        n,
        init,
        meta={
            "L": L,
            "Psi": float(fg.M.sum()),
            "D": int(D),
            "beta": beta,
            "gamma": gamma,
            "p_marginal": np.full(int(D), 1.0 / D),
        },
    )


def build_potts_tiny(seed, n: int, D: int, beta: float, scale: float) -> Problem:
    """Tiny enumerable Potts (fully connected, random couplings |N(0, scale^2)| and random unary
    fields) for exact transition matrices."""
    if n < 2 or n > 6 or D < 2 or D**n > 5000:
        raise ValueError("tiny Potts needs 2 <= n <= 6 and D^n <= 5000")
    rng = np.random.default_rng(seed)
    J = np.abs(np.triu(rng.normal(0.0, scale, (n, n)), 1))
    J = J + J.T
    unary = rng.normal(0.0, scale, (n, D))
    fg = fgm.potts(J, int(D), beta, unary=unary)
    X, p = fgm.exact_joint(fg)
    return Problem(
        f"potts_tiny_{n}_D{D}",
        "discrete",
        fg,
        n,
        lambda r: r.integers(0, D, n).astype(np.int64),
        reference=lambda r, m: X[r.choice(len(p), size=m, p=p)],
        meta={"L": PG.local_max_energy(fg), "Psi": float(fg.M.sum()), "D": int(D), "states": X, "probs": p},
    )


def build_ising_tiny(seed, n: int, scale: float) -> Problem:
    """Tiny fully connected Ising model with N(0, scale^2) couplings and fields (enumerable)."""
    if n < 2 or n > 10:
        raise ValueError("tiny Ising needs 2 <= n <= 10")
    rng = np.random.default_rng(seed)
    J = np.triu(rng.normal(0.0, scale, (n, n)), 1)
    fg = fgm.ising(J + J.T, rng.normal(0.0, scale, n))
    X, p = fgm.exact_joint(fg)
    return Problem(
        f"ising_tiny_{n}",
        "discrete",
        fg,
        n,
        lambda r: r.integers(0, 2, n).astype(np.int64),
        reference=lambda r, m: X[r.choice(len(p), size=m, p=p)],
        meta={"L": PG.local_max_energy(fg), "Psi": float(fg.M.sum()), "D": 2, "states": X, "probs": p},
    )


# ============================================================================ continuous targets
def build_continuous_spin(seed, rows: int, cols: int, beta: float, gamma: float) -> Problem:
    """Zhang & De Sa 2019 §4.2: x in [0, 1]^n, U = sum_{i<j} beta A_ij (x_i x_j + 1), A_ij = exp(-gamma d^2)
    on a rows x cols lattice; M = 2 beta A_ij. gamma = 0.4 on 20x20 gives L = 13.708 (paper 13.71;
    the lattice size and gamma are inferred, not stated)."""
    if rows * cols < 2:
        raise ValueError("need at least two sites")
    check_positive("gamma", gamma)
    A = fgm.grid_coupling(rows, cols, "gaussian", gamma)
    model = cs.spin_model(A, beta)
    n = rows * cols
    return Problem(
        f"continuous_spin_{rows}x{cols}",
        "continuous_box",
        model,
        n,
        lambda rng: rng.random(n),
        meta={"L": cs.local_max_energy(model), "beta": beta, "gamma": gamma, "A": A},
    )


def build_spin_pair(seed, coupling: float, field: float) -> Problem:
    """Two-variable continuous spin model on [0, 1]^2 (for quadrature-exact kernels, Thms 4/5):
    factors beta A (x_0 x_1 + 1) with A = ``coupling``, split into ``field``-many equal copies so the
    minibatch is non-trivial."""
    check_positive("coupling", coupling)
    check_positive("field", field, integer=True)
    # replicate the pair factor as ``field`` parallel factors of weight coupling / field
    n = 2
    reps = int(field)
    ptr = np.array([0, reps, 2 * reps], dtype=np.int64)
    nbr = np.array([1] * reps + [0] * reps, dtype=np.int64)
    w = np.full(2 * reps, coupling / reps)
    model = cs.ContinuousModel(cs.SPIN, n, 0.0, 1.0, ptr, nbr, w, 2.0 * w, cs._placeholder_tall())
    return Problem(
        "spin_pair",
        "continuous_box",
        model,
        n,
        lambda rng: rng.random(n),
        meta={"L": cs.local_max_energy(model), "coupling": coupling},
    )


def build_tgm(seed, N: int, temperature: float, box: float) -> Problem:
    """Zhang & De Sa 2019 §4.3 / App. D.2: Welling-Teh mixture (theta = (0, 1), sigma^2 = (10, 1), s2 = 2)
    with N data, truncated to [-box, box]^2, likelihood tempered by 1/temperature (not stated in the
    paper; 27972 reproduces the paper's L = 1581.14 with the tall-module bounds, while Seita et al.
    2017's K = 1e4 would give L = 4.4e3), factors
    phi_n = ll_n + shift_n in [0, M_n] (samplers.targets.tall bounds). Same data as the registry's
    ``gaussian_mixture`` target with the same seed (used by poisson_mh)."""
    check_positive("N", N, integer=True)
    check_positive("temperature", temperature)
    check_positive("box", box)
    y = tall.make_mixture_data(np.random.default_rng(seed), int(N))
    t = tall.gaussian_mixture(y, temperature=temperature, box=box)
    model = cs.tall_model(t)
    return Problem(
        "tgm",
        "continuous_box",
        model,
        2,
        lambda rng: rng.uniform(-box, box, 2),
        meta={"L": cs.local_max_energy(model), "N": int(N), "temperature": temperature, "box": box},
    )


TARGETS = [
    TargetSpec(
        "continuous_spin",
        "continuous_box",
        build_continuous_spin,
        {"rows": 20, "cols": 20, "beta": 1.0, "gamma": 0.4},
        "Zhang & De Sa 2019 §4.2",
        "continuous spin model on [0,1] (L = 13.708)",
        smoke={"rows": 8, "cols": 8},
    ),
    TargetSpec(
        "spin_pair",
        "continuous_box",
        build_spin_pair,
        {"coupling": 1.5, "field": 4},
        "Zhang & De Sa 2019 §3 (Thms 4/5 check)",
        "two-variable continuous spin model",
    ),
    TargetSpec(
        "tgm",
        "continuous_box",
        build_tgm,
        {"N": 1_000_000, "temperature": 27_972.0, "box": 6.0},
        "Zhang & De Sa 2019 §4.3, App. D.2",
        "truncated Gaussian mixture for PGITS/PGDA/rejection Gibbs",
        smoke={"N": 20_000, "temperature": 200.0},
    ),
    TargetSpec(
        "potts_20x20",
        "discrete",
        build_potts_gauss,
        {"rows": 20, "cols": 20, "D": 10, "beta": 4.6, "gamma": 1.5, "start": "ones"},
        "Zhang & De Sa 2019 §4.1",
        "fully connected Gaussian-kernel Potts model (L = 5.0878)",
        smoke={"rows": 8, "cols": 8},
    ),
    TargetSpec(
        "potts_tiny",
        "discrete",
        build_potts_tiny,
        {"n": 3, "D": 3, "beta": 1.0, "scale": 0.7},
        "Zhang & De Sa 2019 §4.1 (enumerable)",
        "tiny fully connected Potts model with fields (exact matrices)",
    ),
    TargetSpec(
        "ising_tiny",
        "discrete",
        build_ising_tiny,
        {"n": 3, "scale": 0.5},
        "Zhang & De Sa 2019 §4.1 (enumerable)",
        "tiny fully connected Ising model (exact matrices)",
    ),
]
