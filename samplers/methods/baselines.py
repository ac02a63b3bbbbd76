"""Full-batch baselines (``rwm mala barker hmc sgld gibbs``) and the synthetic targets they share.

Methods: the registry's canonical ids. Targets: Yuan & Wang 2024 App. F (truncated Gaussian, robust
regression, logistic regression), the Welling-Teh mixture (Seita et al. 2017 §6.1, Zhang & De Sa 2019 App.
D.2), a Gaussian location model with a closed-form posterior (tests), tiny enumerable grid versions, and small
Potts/Ising graphs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from samplers import proposals as P
from samplers.kernels import gibbs as G
from samplers.kernels import hmc as H
from samplers.kernels import mh as MH
from samplers.kernels import sgld as S
from samplers.problem import Problem
from samplers.result import ChainResult
from samplers.run import check_lattice, check_positive, drive
from samplers.specs import MethodSpec, TargetSpec
from samplers.targets import factor_graph as fgm
from samplers.targets import tall

# ============================================================================ method wrappers
_PROPS = {
    "rwm": {"gauss": P.RW_GAUSS, "lattice": P.RW_LATTICE},
    "mala": {"gauss": P.LANGEVIN_GAUSS, "lattice": P.LANGEVIN_LATTICE},
    "barker": {"gauss": P.BARKER_GAUSS, "lattice": P.BARKER_LATTICE},
}


def proposal_kind(base: str, proposal: str) -> int:
    """Proposal id for method family ``base`` (rwm/mala/barker) and ``proposal`` (gauss/lattice)."""
    try:
        return _PROPS[base][proposal]
    except KeyError:
        raise ValueError(f"proposal must be 'gauss' or 'lattice', got {proposal!r}") from None


def _tall(problem: Problem) -> tall.TallData:
    if not isinstance(problem.model, tall.TallData):
        raise ValueError(f"{problem.name} is not a tall-data target")
    tall.check_target(problem.model)
    return problem.model


ENERGY_MODES = ("cached", "recompute")


def energy_flag(energy: str) -> bool:
    """``energy="cached"`` (the algorithm as published: log pi cached at the current state) or
    ``"recompute"`` (Yuan & Wang's (2024) full-batch code: log pi, and its gradient, evaluated at
    theta and theta' every step; same chain, 2N evaluations per iteration). Returns the kernels'
    ``recompute`` flag."""
    if energy not in ENERGY_MODES:
        raise ValueError(f"energy must be one of {ENERGY_MODES}, got {energy!r}")
    return energy == "recompute"


def grad_flag(method: str, grad: str) -> float:
    """``grad="exact"`` (the algorithms as published, default), ``"normalized"`` (2 g / ||g||) or
    ``"authors"`` (Yuan & Wang's (2024) logistic code: 2 g / ||g||, Barker with the sign of grad U);
    returns the kernels' ``glen``
    (:func:`samplers.proposals.gradient_length`). Only the gradient methods accept a non-exact mode."""
    if method not in ("mala", "barker", "hmc") and grad != "exact":
        raise ValueError(f"grad={grad!r}: {method} uses no gradient (only 'exact' is valid)")
    return P.gradient_length(method, grad)


def _mh_runner(base: str):
    def run(
        problem: Problem,
        n_iter: int,
        seed: Any,
        *,
        step: float,
        proposal: str = "gauss",
        h: float = 0.0,
        K: int = 3,
        energy: str = "cached",
        grad: str = "exact",
        thin: int = 1,
        x0=None,
        progress=None,
    ) -> ChainResult:
        prop = proposal_kind(base, proposal)
        check_positive("step", step)
        check_lattice(proposal, h, K)
        rec = energy_flag(energy)
        glen = grad_flag(base, grad)
        hyper = {"step": step, "proposal": proposal, "h": h, "K": K, "energy": energy}
        if base != "rwm":
            hyper["grad"] = grad
        return drive(
            base,
            problem,
            n_iter,
            seed,
            MH.mh_init,
            (prop, glen),
            MH.mh_sample,
            (prop, float(step), float(h), int(K), rec, glen),
            thin=thin,
            x0=x0,
            progress=progress,
            hyper=hyper,
        )

    run.__name__ = f"run_{base}"
    run.__doc__ = f"Full-batch {base} (see samplers.kernels.mh)."
    return run


def run_hmc(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    n_leapfrog: int = 10,
    energy: str = "cached",
    grad: str = "exact",
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """Full-batch HMC (samplers.kernels.hmc); ``energy`` as in :func:`energy_flag`, ``grad`` as in
    :func:`grad_flag`."""
    check_positive("step", step)
    check_positive("n_leapfrog", n_leapfrog, integer=True)
    rec = energy_flag(energy)
    glen = grad_flag("hmc", grad)
    return drive(
        "hmc",
        problem,
        n_iter,
        seed,
        H.hmc_init,
        (glen,),
        H.hmc_sample,
        (float(step), int(n_leapfrog), rec, glen),
        thin=thin,
        x0=x0,
        progress=progress,
        hyper={"step": step, "n_leapfrog": n_leapfrog, "energy": energy, "grad": grad},
    )


def run_sgld(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    batch: int = 512,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """SGLD with a uniform minibatch of size ``batch`` (samplers.kernels.sgld)."""
    check_positive("step", step)
    check_positive("batch", batch, integer=True)
    N = _tall(problem).X.shape[0]
    if batch > N:
        raise ValueError(f"batch ({batch}) exceeds the data size N={N}")
    return drive(
        "sgld",
        problem,
        n_iter,
        seed,
        S.sgld_init,
        (),
        S.sgld_sample,
        (float(step), int(batch)),
        thin=thin,
        x0=x0,
        progress=progress,
        hyper={"step": step, "batch": batch},
    )


def run_gibbs(
    problem: Problem, n_iter: int, seed: Any, *, scan: str = "random", thin: int = 1, x0=None, progress=None
) -> ChainResult:
    """Single-site Gibbs on a discrete factor graph (samplers.kernels.gibbs)."""
    scans = {"random": G.RANDOM_SCAN, "systematic": G.SYSTEMATIC_SCAN}
    if scan not in scans:
        raise ValueError(f"scan must be 'random' or 'systematic', got {scan!r}")
    if x0 is not None:
        x0 = np.asarray(x0, dtype=np.int64)
        if np.any(x0 < 0) or np.any(x0 >= problem.model.card):
            raise ValueError("initial state outside the variables' domains")
    return drive(
        "gibbs",
        problem,
        n_iter,
        seed,
        G.gibbs_init,
        (),
        G.gibbs_sample,
        (scans[scan],),
        thin=thin,
        x0=x0,
        progress=progress,
        hyper={"scan": scan},
    )


_GRID = {"proposal": "gauss", "h": 0.0, "K": 3, "energy": "cached"}
METHODS = [
    MethodSpec(
        "rwm",
        "baseline",
        _mh_runner("rwm"),
        ("continuous",),
        {"step": 0.1, **_GRID},
        True,
        "Metropolis et al. 1953",
        "random-walk Metropolis, full batch",
    ),
    MethodSpec(
        "mala",
        "baseline",
        _mh_runner("mala"),
        ("continuous",),
        {"step": 0.1, **_GRID, "grad": "exact"},
        True,
        "Roberts & Tweedie 1996",
        "Metropolis-adjusted Langevin, full batch",
    ),
    MethodSpec(
        "barker",
        "baseline",
        _mh_runner("barker"),
        ("continuous",),
        {"step": 0.1, **_GRID, "grad": "exact"},
        True,
        "Livingstone & Zanella 2022",
        "Barker proposal, full batch",
    ),
    MethodSpec(
        "hmc",
        "baseline",
        run_hmc,
        ("continuous",),
        {"step": 0.05, "n_leapfrog": 10, "energy": "cached", "grad": "exact"},
        True,
        "Neal 2011",
        "Hamiltonian Monte Carlo (leapfrog, unit mass), full batch",
    ),
    MethodSpec(
        "sgld",
        "baseline",
        run_sgld,
        ("continuous",),
        {"step": 0.01, "batch": 512},
        False,
        "Welling & Teh 2011",
        "stochastic gradient Langevin (no MH correction)",
        twin="mala",
    ),
    MethodSpec(
        "gibbs",
        "baseline",
        run_gibbs,
        ("discrete",),
        {"scan": "random"},
        True,
        "Geman & Geman 1984",
        "single-site Gibbs on discrete factor graphs",
        step_param=None,
    ),
]


# ============================================================================ targets
def _ss(seed) -> np.random.Generator:
    return np.random.default_rng(seed)


def truncated_normal_draws(
    rng: np.random.Generator, mean: np.ndarray, sd: np.ndarray, lo: float, hi: float, n: int
) -> np.ndarray:
    """Exact draws of N(mean, diag(sd^2)) restricted to the box [lo, hi]^d by rejection (Yuan & Wang 2024
    §5.1)."""
    out = np.empty((0, mean.shape[0]))
    while out.shape[0] < n:
        z = mean + sd * rng.standard_normal((max(2 * (n - out.shape[0]), 1000), mean.shape[0]))
        z = z[np.all((z >= lo) & (z <= hi), axis=1)]
        out = np.vstack([out, z])
    return out[:n]


def _sizes(**sizes: int) -> tuple[int, ...]:
    """Data sizes (N, d, ...) as ints: ValueError naming the first that is not a positive integer."""
    for name, v in sizes.items():
        check_positive(name, v, integer=True)
    return tuple(int(v) for v in sizes.values())


def _box_init(lo: float, hi: float, d: int):
    def init(rng: np.random.Generator) -> np.ndarray:
        return np.clip(rng.standard_normal(d), lo, hi)  # authors: theta0 ~ N(0, I)

    return init


def build_truncated_gaussian(seed, N: int, d: int, beta: float, K: float) -> Problem:
    """Yuan & Wang 2024 §5.1: posterior N(ybar, Sigma/(N beta)) truncated to [-K, K]^d."""
    N, d = _sizes(N=N, d=d)
    Y, s2 = tall.make_truncated_gaussian_data(_ss(seed), N, d)
    model = tall.truncated_gaussian(Y, s2, beta=beta, K=K)
    mean = Y.mean(axis=0)
    sd = np.sqrt(s2 / (N * beta))
    return Problem(
        "truncated_gaussian",
        "continuous",
        model,
        d,
        _box_init(-K, K, d),
        reference=lambda rng, n: truncated_normal_draws(rng, mean, sd, -K, K, n),
        meta={
            "L": float(model.M.sum()),
            "C": float(model.c.sum()),
            "N": N,
            "sigma2": s2,
            "untruncated_mean": mean,
            "untruncated_sd": sd,
        },
    )


def build_robust_regression(seed, N: int, d: int, beta: float, nu: float, R: float) -> Problem:
    """Yuan & Wang 2024 §5.2 (theta* = 1)."""
    N, d = _sizes(N=N, d=d)
    X, y = tall.make_regression_data(_ss(seed), N, d)
    model = tall.robust_regression(X, y, beta=beta, nu=nu, R=R)

    def init(rng: np.random.Generator) -> np.ndarray:  # N(0, I), radially projected into the ball
        x = rng.standard_normal(d)
        r = float(np.sqrt(x @ x))
        return x if r <= R else x * (R / r * (1.0 - 1e-12))

    return Problem(
        "robust_regression",
        "continuous",
        model,
        d,
        init,
        meta={"L": float(model.M.sum()), "C": float(model.c.sum()), "N": N, "theta_star": np.ones(d)},
    )


def build_logistic(seed, data: dict, prior_prec: float, beta: float) -> Problem:
    """Yuan & Wang 2024 §5.3 / Korattikara et al. 2014 §6.1: ``data`` has X_train, y_train (0/1), X_test,
    y_test."""
    X = np.asarray(data["X_train"])
    model = tall.logistic_regression(X, data["y_train"], prior_prec=prior_prec, beta=beta)
    d = X.shape[1]
    return Problem(
        "logistic",
        "continuous",
        model,
        d,
        lambda rng: rng.uniform(-1 / np.sqrt(d), 1 / np.sqrt(d), d),  # authors' init
        meta={"C": float(model.c.sum()), "N": X.shape[0], "X_test": data["X_test"], "y_test": data["y_test"]},
    )


def build_mixture(seed, N: int, temperature: float, box: float | None) -> Problem:
    """Welling & Teh mixture at theta = (0, 1); Seita et al. 2017 §6.1 (K = 1e4), Zhang & De Sa 2019 App. D.2
    (box 6)."""
    (N,) = _sizes(N=N)
    if box is not None:
        check_positive("box", box)
    y = tall.make_mixture_data(_ss(seed), N)
    model = tall.gaussian_mixture(y, temperature=temperature, box=box)
    init = _box_init(-box, box, 2) if box else (lambda rng: rng.standard_normal(2))
    return Problem(
        "gaussian_mixture",
        "continuous",
        model,
        2,
        init,
        meta={"L": float(model.M.sum()), "C": float(model.c.sum()), "N": N},
    )


def build_gaussian_location(seed, N: int, d: int, beta: float, box: float | None) -> Problem:
    """Closed-form posterior N(ybar, 1/(N beta)) (truncated to the box if given); for tests."""
    N, d = _sizes(N=N, d=d)
    if box is not None:
        check_positive("box", box)
    Y = _ss(seed).standard_normal((N, d))
    model = tall.gaussian_location(Y, beta=beta, box=box)
    mean = Y.mean(axis=0)
    sd = np.full(d, 1.0 / np.sqrt(N * beta))
    lo, hi = (-box, box) if box else (-np.inf, np.inf)
    return Problem(
        "gaussian_location",
        "continuous",
        model,
        d,
        lambda rng: np.clip(mean + sd * rng.standard_normal(d), lo, hi),
        reference=lambda rng, n: truncated_normal_draws(rng, mean, sd, lo, hi, n),
        meta={"L": float(model.M.sum()), "C": float(model.c.sum()), "N": N, "post_mean": mean, "post_sd": sd},
    )


# ---------------------------------------------------------------------------- enumerable versions
def grid_points(model: tall.TallData, lo: float, hi: float, h: float, d: int) -> np.ndarray:
    """Lattice {lo + k h}^d points inside the model's support (the finite state space)."""
    n = int(round((hi - lo) / h)) + 1
    axes = [lo + h * np.arange(n)] * d
    pts = np.array(np.meshgrid(*axes, indexing="ij")).reshape(d, -1).T
    return np.array([p for p in pts if tall.in_support(model, p)])


def build_tiny_grid(seed, kind: str, N: int, d: int, h: float, half_width: float) -> Problem:
    """Tiny enumerable version of a tall-data target: N data points, theta on the lattice
    {-w, -w+h, ..., w}^d restricted to the support; kernels run on it with lattice proposals
    (``proposal="lattice"``, step ``h``), whose moves off the lattice/support are rejected."""
    N, d = _sizes(N=N, d=d)
    check_positive("h", h)
    check_positive("half_width", half_width)
    rng = _ss(seed)
    w = float(half_width)
    if kind == "truncated_gaussian":
        Y = rng.standard_normal((N, d)) * 0.7
        model = tall.truncated_gaussian(Y, np.linspace(1.0, 0.5, d), beta=1.0, K=w)
    elif kind == "robust_regression":
        X, y = tall.make_regression_data(rng, N, d)
        model = tall.robust_regression(X, y, beta=1.0, nu=4.0, R=w)
    elif kind == "logistic":
        X = rng.standard_normal((N, d))
        yl = (rng.random(N) < 0.5).astype(float)
        model = tall.logistic_regression(X, yl, prior_prec=0.0, beta=1.0, R=w)
    elif kind == "gaussian_mixture":
        if d != 2:
            raise ValueError("the mixture is 2-dimensional")
        y = tall.make_mixture_data(rng, N)
        model = tall.gaussian_mixture(y, temperature=1.0, box=w)
    else:
        raise ValueError(f"unknown tiny-grid kind {kind!r}")
    pts = grid_points(model, -w, w, h, d)
    return Problem(
        f"tiny_grid_{kind}",
        "continuous",
        model,
        d,
        lambda r: pts[r.integers(0, len(pts))].copy(),
        meta={
            "grid": pts,
            "h": h,
            "lo": -w,
            "hi": w,
            "L": float(model.M.sum()),
            "C": float(model.c.sum()),
            "N": N,
        },
    )


# ---------------------------------------------------------------------------- discrete
def build_potts_grid(seed, rows: int, cols: int, D: int, beta: float, coupling: str, gamma: float) -> Problem:
    """Potts model on a rows x cols lattice (nearest-neighbour or Gaussian-kernel couplings)."""
    J = fgm.grid_coupling(rows, cols, coupling, gamma)
    fg = fgm.potts(J, D, beta)
    n = rows * cols
    return Problem(
        f"potts_{rows}x{cols}_D{D}",
        "discrete",
        fg,
        n,
        lambda rng: rng.integers(0, D, n).astype(np.int64),
        meta={"L": float(_local_max_energy(fg)), "Psi": float(fg.M.sum()), "D": D},
    )


def build_random_ising(seed, n: int, density: float, scale: float) -> Problem:
    """Small Ising model with random N(0, scale^2) couplings on a random graph and random fields."""
    rng = _ss(seed)
    J = np.triu(rng.normal(0, scale, (n, n)) * (rng.random((n, n)) < density), 1)
    fg = fgm.ising(J + J.T, rng.normal(0, scale, n))
    return Problem(
        f"ising_{n}",
        "discrete",
        fg,
        n,
        lambda r: r.integers(0, 2, n).astype(np.int64),
        meta={"L": float(_local_max_energy(fg)), "Psi": float(fg.M.sum()), "D": 2},
    )


def _local_max_energy(fg: fgm.FactorGraph) -> float:
    """L = max_i sum_{f in A[i]} M_f (Zhang & De Sa 2019 §2)."""
    return max(fg.M[fg.var_fac[fg.var_ptr[i] : fg.var_ptr[i + 1]]].sum() for i in range(fg.n))


TARGETS = [
    TargetSpec(
        "truncated_gaussian",
        "continuous",
        build_truncated_gaussian,
        {"N": 100_000, "d": 20, "beta": 1e-5, "K": 3.0},
        "Yuan & Wang 2024 §5.1, App. F.1",
        "heterogeneous truncated Gaussian",
        smoke={"N": 2_000, "d": 5, "beta": 5e-4},
    ),
    TargetSpec(
        "robust_regression",
        "continuous",
        build_robust_regression,
        {"N": 100_000, "d": 10, "beta": 1e-4, "nu": 4.0, "R": 15.0},
        "Yuan & Wang 2024 §5.2, App. F.2",
        "robust (Student-t) linear regression on a ball",
        smoke={"N": 2_000, "d": 3, "beta": 5e-3},
    ),
    TargetSpec(
        "logistic",
        "continuous",
        build_logistic,
        {"prior_prec": 0.0, "beta": 1.0},
        "Yuan & Wang 2024 §5.3, App. F.3",
        "Bayesian logistic regression (data-backed)",
        data="mnist_3v5",
    ),
    TargetSpec(
        "gaussian_mixture",
        "continuous",
        build_mixture,
        {"N": 1_000_000, "temperature": 1e4, "box": None},
        "Seita et al. 2017 §6.1; Zhang & De Sa 2019 App. D.2",
        "two-component mixture with tied means (Welling & Teh)",
        smoke={"N": 10_000, "temperature": 1e2},
    ),
    TargetSpec(
        "gaussian_location",
        "continuous",
        build_gaussian_location,
        {"N": 1_000, "d": 2, "beta": 1.0, "box": None},
        "-",
        "Gaussian location model with closed-form posterior (tests)",
    ),
    TargetSpec(
        "tiny_grid",
        "continuous",
        build_tiny_grid,
        {"kind": "truncated_gaussian", "N": 4, "d": 1, "h": 0.25, "half_width": 1.5},
        "Yuan & Wang 2024 App. F (enumerable)",
        "tiny enumerable lattice version of a tall target",
    ),
    TargetSpec(
        "potts_grid",
        "discrete",
        build_potts_grid,
        {"rows": 2, "cols": 2, "D": 3, "beta": 1.0, "coupling": "nearest", "gamma": 1.5},
        "Zhang & De Sa 2019 §4.1 (small)",
        "Potts model on a small lattice",
    ),
    TargetSpec(
        "random_ising",
        "discrete",
        build_random_ising,
        {"n": 4, "density": 0.7, "scale": 0.6},
        "-",
        "small random Ising model",
    ),
]
