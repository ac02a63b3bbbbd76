"""Targets of the approximate-test experiments (Korattikara et al. 2014; Seita et al. 2017): the MNIST
logistic tasks (tempered), the L1-regularised 1-d regression with its quadrature posterior, square ICA, the
RJMCMC variable-selection problems and the dense triple MRF of K14 App. F. Their methods are in
:mod:`samplers.methods.approx`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from samplers.approx import ica_stiefel as _ica_stiefel
from samplers.approx.mrf import dense_triple_mrf
from samplers.methods.baselines import build_logistic
from samplers.problem import Problem
from samplers.run import check_positive
from samplers.specs import TargetSpec
from samplers.targets import tall
from samplers.targets.factor_graph import exact_joint


def build_logistic_tempered(seed, data: dict, prior_prec: float, temperature: float) -> Problem:
    """Logistic regression on a data dict (X_train, y_train in {0,1}, X_test, y_test), likelihood
    tempered by 1/temperature (S17 §6.2: K = 100, flat prior; K14 §6.1: K = 1, precision 10)."""
    if not temperature > 0:
        raise ValueError("temperature must be > 0")
    pr = build_logistic(seed, data, prior_prec, 1.0 / temperature)
    pr.meta["temperature"] = temperature
    return pr


def make_linreg_l1_data(
    rng: np.random.Generator, N: int, slope: float = 0.5, noise_var: float = 1.0 / 3.0, x_law: str = "uniform"
) -> tuple[np.ndarray, np.ndarray]:
    """K14 §6.4 data: y_i = slope x_i + N(0, noise_var). The law of x is not stated in K14; ASSUMPTION:
    ``x_law = "uniform"`` x ~ U(-1, 1) (E x^2 = 1/3, which makes lambda0 = 4950 just below
    lambda sum x y ~ 5000, i.e. "the prior is not washed out"); ``"normal"`` x ~ N(0, 1)."""
    if x_law == "uniform":
        x = rng.uniform(-1.0, 1.0, N)
    elif x_law == "normal":
        x = rng.standard_normal(N)
    else:
        raise ValueError(f"x_law must be 'uniform' or 'normal', got {x_law!r}")
    return x, slope * x + math.sqrt(noise_var) * rng.standard_normal(N)


def linreg_l1_grid(x: np.ndarray, y: np.ndarray, lam: float, n_grid: int = 20001, width: float = 25.0):
    """Quadrature grid for the 1-d posterior: [min(0, ols) - width sd, max(0, ols) + width sd] with
    sd = (lam sum x^2)^{-1/2} (covers the mode, the kink at 0 and the tails)."""
    sxx = float(x @ x)
    sd = 1.0 / math.sqrt(lam * sxx)
    ols = float(x @ y) / sxx
    return np.linspace(min(0.0, ols) - width * sd, max(0.0, ols) + width * sd, int(n_grid))


def build_linreg_l1(
    seed, N: int, slope: float, lam: float, lam0: float, x_law: str = "uniform", n_grid: int = 20001
) -> Problem:
    """K14 §6.4 L1-regularised 1-d linear regression: p(y|x, theta) ~ exp(-lam (y - theta x)^2 / 2),
    prior ~ exp(-lam0 |theta|), data y = slope x + N(0, 1/lam). The exact posterior is tabulated on a
    fine grid (meta ``grid``, ``density``, ``cdf``); the reference sampler inverts the grid CDF."""
    check_positive("N", N, integer=True)
    check_positive("lam", lam)
    if not (np.isfinite(lam0) and lam0 >= 0):
        raise ValueError(f"lam0 must be finite and >= 0, got {lam0!r}")
    x, y = make_linreg_l1_data(np.random.default_rng(seed), int(N), float(slope), 1.0 / lam, x_law)
    model = tall.linear_regression_l1(x, y, 1.0 / lam, float(lam0))
    grid = linreg_l1_grid(x, y, lam, n_grid)
    dens = tall.linreg_l1_posterior_1d(x, y, 1.0 / lam, float(lam0), grid)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(grid))])
    cdf /= cdf[-1]
    mean = float(np.trapezoid(grid * dens, grid))

    def ref(rng: np.random.Generator, n: int) -> np.ndarray:
        return np.interp(rng.random(n), cdf, grid)[:, None]

    meta: dict[str, Any] = {
        "grid": grid,
        "density": dens,
        "cdf": cdf,
        "post_mean": mean,
        "post_mode": float(grid[np.argmax(dens)]),
        "N": int(N),
        "lam": lam,
        "lam0": lam0,
    }
    return Problem(
        "linreg_l1_1d", "continuous", model, 1, lambda rng: np.array([mean]), reference=ref, meta=meta
    )


def amari_distance(W: np.ndarray, A: np.ndarray) -> float:
    """Normalised Amari distance of P = W A from a scaled permutation (0 iff W unmixes A), in [0, 1]."""
    P = np.abs(np.asarray(W, dtype=float) @ np.asarray(A, dtype=float))
    D = P.shape[0]
    if D < 2:
        return 0.0
    r = (P.sum(axis=1) / P.max(axis=1) - 1.0).sum()
    c = (P.sum(axis=0) / P.max(axis=0) - 1.0).sum()
    return float((r + c) / (2.0 * D * (D - 1)))


def make_ica_data(rng: np.random.Generator, N: int, D: int) -> tuple[np.ndarray, np.ndarray]:
    """K14 §6.2 synthetic ICA data. ASSUMPTIONS (K14: "1.95M mixtures of 4 sources", nothing more):
    sources iid standard logistic (the model's own density 1/(4 cosh^2(s/2))), mixing A with iid
    N(0, 1) entries, mixtures centred and whitened with the sample covariance (x_w = V x, V = C^{-1/2}).
    Returns (X_white, A_eff = V A); the true unmixing of X_white is A_eff^{-1} (up to scale/permutation)."""
    S = rng.logistic(0.0, 1.0, size=(N, D))
    A = rng.standard_normal((D, D))
    Xr = S @ A.T
    Xr -= Xr.mean(axis=0)
    C = Xr.T @ Xr / N
    ev, U = np.linalg.eigh(C)
    V = U @ np.diag(ev**-0.5) @ U.T
    return Xr @ V.T, V @ A


def build_ica(seed, N: int, D: int) -> Problem:
    """K14 §6.2 ICA posterior (see :func:`samplers.targets.tall.ica` for the Stiefel-manifold
    assumption). Init: the true unmixing matrix A_eff^{-1} (assumption; K14 states no init)."""
    check_positive("N", N, integer=True)
    check_positive("D", D, integer=True)
    X, A_eff = make_ica_data(np.random.default_rng(seed), int(N), int(D))
    W0 = np.linalg.inv(A_eff)
    return Problem(
        f"ica_{D}",
        "continuous",
        tall.ica(X),
        int(D) * int(D),
        lambda rng: W0.reshape(-1).copy(),
        meta={"A_eff": A_eff, "W_true": W0, "N": int(N), "D": int(D)},
    )


def _rj_problem(name: str, X: np.ndarray, y: np.ndarray, meta: dict) -> Problem:
    """Variable-selection problem: logistic likelihood, init = the last feature (the constant) alone at
    logit(mean y) (K14 §6.3 "started with only one variable"; which one is unstated, ASSUMPTION)."""
    model = tall.logistic_regression(X, y)
    D = X.shape[1]
    ybar = float(np.clip(np.mean(y), 1e-3, 1 - 1e-3))
    b0 = math.log(ybar / (1.0 - ybar))
    b0 = b0 if abs(b0) >= 1e-2 else 1e-2

    def init(rng: np.random.Generator) -> np.ndarray:
        x = np.zeros(D)
        x[D - 1] = b0
        return x

    return Problem(name, "variable_selection", model, D, init, meta={"N": X.shape[0], "D": D, **meta})


def make_rj_synth_data(rng: np.random.Generator, N: int, D: int, n_true: int) -> dict:
    """Synthetic variable-selection data: D - 1 N(0, 1) features + a constant column (last), the first
    ``n_true`` features with coefficients +-1, intercept -0.5, labels ~ Bernoulli; 80/20 split."""
    if not (1 <= n_true < D):
        raise ValueError(f"need 1 <= n_true < D, got n_true={n_true}, D={D}")
    n = int(N / 0.8)
    X = np.hstack([rng.standard_normal((n, D - 1)), np.ones((n, 1))])
    beta = np.zeros(D)
    beta[:n_true] = np.where(np.arange(n_true) % 2 == 0, 1.0, -1.0)
    beta[-1] = -0.5
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X @ beta))).astype(np.int64)
    return {"X_train": X[:N], "y_train": y[:N], "X_test": X[N:], "y_test": y[N:], "beta_true": beta}


def build_rj_synth(seed, N: int, D: int, n_true: int) -> Problem:
    """Data-free RJMCMC target (tests, benchmarks): :func:`make_rj_synth_data`."""
    check_positive("N", N, integer=True)
    check_positive("D", D, integer=True)
    dat = make_rj_synth_data(np.random.default_rng(seed), int(N), int(D), int(n_true))
    return _rj_problem(
        "rj_logistic_synth",
        dat["X_train"],
        dat["y_train"],
        {"X_test": dat["X_test"], "y_test": dat["y_test"], "beta_true": dat["beta_true"]},
    )


def build_rj_miniboone(seed, data: dict) -> Problem:
    """K14 §6.3: MiniBooNE (bench.datasets.load_miniboone: 50 standardised features + constant last,
    80/20 split) for RJMCMC variable selection."""
    return _rj_problem(
        "rjmcmc_miniboone",
        np.asarray(data["X_train"], dtype=np.float64),
        np.asarray(data["y_train"]),
        {"X_test": np.asarray(data["X_test"]), "y_test": np.asarray(data["y_test"])},
    )


def build_dense_mrf(seed, D: int, sd: float) -> Problem:
    """K14 App. F dense binary MRF (exact joint only for D <= 20)."""
    fg = dense_triple_mrf(D, sd, np.random.default_rng(seed))
    meta: dict[str, Any] = {"D": D, "sd": sd, "F": int(fg.M.size)}
    ref = None
    if D <= 16:
        X, p = exact_joint(fg)
        meta["exact_states"], meta["exact_probs"] = X, p

        def ref(rng, n):  # noqa: E306
            return X[rng.choice(len(p), size=n, p=p)]

    return Problem(
        f"dense_mrf_{D}",
        "discrete",
        fg,
        D,
        lambda rng: rng.integers(0, 2, D).astype(np.int64),
        reference=ref,
        meta=meta,
    )


TARGETS = [
    TargetSpec(
        "logistic_mnist_1v7",
        "continuous",
        build_logistic_tempered,
        {"prior_prec": 0.0, "temperature": 100.0},
        "Seita et al. 2017 §6.2",
        "logistic regression MNIST 1v7 (13k), raw pixels, K = 100",
        data="mnist_1v7",
    ),
    TargetSpec(
        "logistic_mnist_1v7_100k",
        "continuous",
        build_logistic_tempered,
        {"prior_prec": 0.0, "temperature": 100.0},
        "Seita et al. 2017 §6.2",
        "logistic regression MNIST 1v7 augmented to 100k, K = 100",
        data="mnist_1v7_100k",
    ),
    TargetSpec(
        "logistic_mnist_7v9",
        "continuous",
        build_logistic_tempered,
        {"prior_prec": 10.0, "temperature": 1.0},
        "Korattikara, Chen & Welling 2014 §6.1",
        "logistic regression MNIST 7v9, 50 PCA, Gaussian prior precision 10",
        data="mnist_7v9",
    ),
    TargetSpec(
        "linreg_l1_1d",
        "continuous",
        build_linreg_l1,
        {"N": 10_000, "slope": 0.5, "lam": 3.0, "lam0": 4950.0, "x_law": "uniform", "n_grid": 20001},
        "Korattikara, Chen & Welling 2014 §6.4",
        "L1-regularised 1-d linear regression (Laplace prior), exact posterior by quadrature",
        smoke={"N": 2000, "lam0": 990.0, "n_grid": 4001},
    ),
    TargetSpec(
        "ica",
        "continuous",
        build_ica,
        {"N": 1_950_000, "D": 4},
        "Korattikara, Chen & Welling 2014 §6.2",
        "square ICA with logistic sources (1/(4 cosh^2)), flat prior, whitened synthetic mixtures",
        smoke={"N": 20_000},
    ),
    TargetSpec(
        "rj_logistic_synth",
        "variable_selection",
        build_rj_synth,
        {"N": 5000, "D": 11, "n_true": 3},
        "Korattikara, Chen & Welling 2014 §6.3 (synthetic stand-in)",
        "synthetic logistic variable selection (10 features + constant, 3 relevant) for RJMCMC",
        smoke={"N": 1000},
    ),
    TargetSpec(
        "rjmcmc_miniboone",
        "variable_selection",
        build_rj_miniboone,
        {},
        "Korattikara, Chen & Welling 2014 §6.3",
        "MiniBooNE logistic variable selection (50 features + constant, 80/20 split)",
        data="miniboone",
    ),
    TargetSpec(
        "dense_mrf",
        "discrete",
        build_dense_mrf,
        {"D": 100, "sd": 0.02},
        "Korattikara, Chen & Welling 2014 App. F",
        "dense binary MRF with all triple potentials",
        smoke={"D": 12},
    ),
]

# ICA on the orthogonal group (K14 §6.2's model): its own module, registered with the family
TARGETS += _ica_stiefel.TARGETS
