"""Square ICA on the orthogonal group, the model of Korattikara et al. 2014 §6.2: prewhitened mixtures, W
orthonormal (the Stiefel manifold V_{D,D} = O(D)) with a uniform prior, a random walk on the manifold, and the
Amari distance as the error measure. Kernels: :mod:`samplers.kernels.austere_stiefel` (Cayley random walk,
exact MH and the K14 sequential test). Target ``ica_stiefel`` (space ``orthogonal``: the generic Euclidean
kernels do not apply to it), methods ``rwm_stiefel`` and ``austere_mh_stiefel``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from samplers.approx.seqtest import tcrit_table
from samplers.kernels import austere_stiefel as AS
from samplers.problem import Problem
from samplers.result import ChainResult
from samplers.run import check_positive, drive
from samplers.specs import MethodSpec, TargetSpec
from samplers.targets import tall

SPACE = "orthogonal"
ORTHO_TOL = 1e-8


def nearest_orthogonal(M: np.ndarray) -> np.ndarray:
    """The orthogonal factor of M's polar decomposition (the nearest orthogonal matrix, Frobenius norm)."""
    U, _, Vt = np.linalg.svd(np.asarray(M, dtype=float))
    return U @ Vt


def orthogonality_error(theta: np.ndarray, D: int) -> float:
    """max |W W^T - I| of W = theta reshaped (D, D)."""
    W = np.asarray(theta, dtype=float).reshape(D, D)
    return float(np.max(np.abs(W @ W.T - np.eye(D))))


def _check_problem(problem: Problem) -> tall.TallData:
    if (
        problem.space != SPACE
        or not isinstance(problem.model, tall.TallData)
        or problem.model.kind != tall.ICA
    ):
        raise ValueError(f"{problem.name} is not an ICA target on the orthogonal group (space {SPACE!r})")
    return problem.model


def _setup_check(t: tall.TallData, x: np.ndarray) -> None:
    D = t.X.shape[1]
    err = orthogonality_error(x, D)
    if err > ORTHO_TOL:
        raise ValueError(f"initial W must be orthonormal (max |W W^T - I| = {err:.3g} > {ORTHO_TOL:g})")


def run_rwm_stiefel(
    problem: Problem, n_iter: int, seed: Any, *, step: float, thin: int = 1, x0=None, progress=None
) -> ChainResult:
    """Exact MH with the Cayley random walk on O(D) (log pi cached: N per-datum terms an iteration)."""
    _check_problem(problem)
    check_positive("step", step)
    return drive(
        "rwm_stiefel",
        problem,
        n_iter,
        seed,
        AS.stiefel_rwm_init,
        (),
        AS.stiefel_rwm_sample,
        (float(step),),
        thin=thin,
        x0=x0,
        progress=progress,
        setup_check=_setup_check,
        hyper={"step": step},
    )


def run_austere_mh_stiefel(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    step: float,
    m: int = 500,
    eps: float = 0.05,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """AustereMH (K14 Alg. 1) with the Cayley random walk on O(D) and the uniform prior (mu0 = log(u) / N)."""
    t = _check_problem(problem)
    check_positive("step", step)
    check_positive("m", m, integer=True)
    if not (isinstance(eps, (int, float, np.floating)) and 0.0 < eps < 0.5):
        raise ValueError(f"eps must be in (0, 0.5), got {eps!r}")
    tc = tcrit_table(t.X.shape[0], float(eps))
    return drive(
        "austere_mh_stiefel",
        problem,
        n_iter,
        seed,
        AS.austere_stiefel_init,
        (),
        AS.austere_stiefel_sample,
        (float(step), int(m), tc),
        thin=thin,
        x0=x0,
        progress=progress,
        setup_check=_setup_check,
        hyper={"step": step, "m": int(m), "eps": float(eps)},
    )


def build_ica_stiefel(seed, N: int, D: int) -> Problem:
    """K14 §6.2 data (:func:`samplers.methods.approx_targets.make_ica_data`: logistic sources, whitened
    mixtures) with W on O(D). Init: the orthogonal factor of the true unmixing A_eff^{-1} (K14 state no
    init; assumption). meta: ``A_eff`` (whitened mixing), ``W_true`` (that init)."""
    from samplers.methods.approx_targets import make_ica_data

    check_positive("N", N, integer=True)
    check_positive("D", D, integer=True)
    if D < 2:
        raise ValueError(f"D must be >= 2, got {D}")
    X, A_eff = make_ica_data(np.random.default_rng(seed), int(N), int(D))
    W0 = nearest_orthogonal(np.linalg.inv(A_eff))
    return Problem(
        f"ica_stiefel_{D}",
        SPACE,
        tall.ica(X),
        int(D) * int(D),
        lambda rng: W0.reshape(-1).copy(),
        meta={"A_eff": A_eff, "W_true": W0, "N": int(N), "D": int(D)},
    )


METHODS = [
    MethodSpec(
        "rwm_stiefel",
        "approx",
        run_rwm_stiefel,
        (SPACE,),
        {"step": 0.01},
        True,
        "Korattikara, Chen & Welling 2014 §6.2",
        "exact MH, Cayley random walk on the orthogonal group (ICA)",
    ),
    MethodSpec(
        "austere_mh_stiefel",
        "approx",
        run_austere_mh_stiefel,
        (SPACE,),
        {"step": 0.01, "m": 500, "eps": 0.05},
        False,
        "Korattikara, Chen & Welling 2014 §6.2",
        "AustereMH with the Cayley random walk on the orthogonal group (ICA)",
        twin="rwm_stiefel",
    ),
]

TARGETS = [
    TargetSpec(
        "ica_stiefel",
        SPACE,
        build_ica_stiefel,
        {"N": 1_950_000, "D": 4},
        "Korattikara, Chen & Welling 2014 §6.2",
        "square ICA, whitened mixtures, W orthonormal (uniform prior on O(D)), logistic sources",
        smoke={"N": 20_000},
    ),
]
