"""Checks for kernels on continuous spaces (verification tiers T0 / T2).

(a) Detailed-balance identity of the acceptance ratio at random state pairs:
    ``pi(x) q(x, x') a(x, x') = pi(x') q(x', x) a(x', x)`` where ``a = min(1, r)`` and ``r`` comes from
    the KERNEL's code path (the njit ``log_post``/``log_post_grad`` and ``proposals.log_q_ratio``
    that ``mh_step`` calls) while ``pi`` and ``q`` come from the independent NumPy formulas of
    :mod:`verify.densities`. Compared on the log scale, so the residual is a relative error.
    Auxiliary-variable methods: :func:`db_residual` takes the six log terms of one auxiliary draw
    (``log pi(x) + log P_x(w)``, ``log q_w(x, x')``, ``log a_w(x, x')`` and the reverse ones).
    HMC (no proposal density): :func:`hmc_reversibility_check` compares the compiled ``hmc_step``
    leapfrog end point with an independent NumPy leapfrog, checks that the NumPy leapfrog run
    from ``(q', -p')`` returns to ``(q, -p)``, and that the kernel's accept decision equals
    ``log u < H(q, p) - H(q', p')`` computed independently (u replayed from the same seed).
(b) Invariance: start ``n_chains >= 1e4`` chains from exact draws (``Problem.reference``), run
    ``n_steps`` steps of the real compiled kernel (njit loops below), and KS-test every coordinate
    against fresh exact draws (two-sample KS), Bonferroni over coordinates at FWER ``alpha = 1e-4``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy import stats

from samplers import proposals as PR
from samplers.kernels.hmc import hmc_init, hmc_step
from samplers.kernels.mh import mh_init, mh_step
from samplers.targets import tall
from samplers.targets.tall import TallData
from verify import densities as D

DB_TOL = 1e-10
ALPHA = 1e-4


# ============================================================================ (a) identities
def db_residual(
    log_pi_x: np.ndarray,
    log_q_fwd: np.ndarray,
    log_a_fwd: np.ndarray,
    log_pi_xp: np.ndarray,
    log_q_bwd: np.ndarray,
    log_a_bwd: np.ndarray,
) -> np.ndarray:
    """``|log(pi(x) q(x,x') a(x,x')) - log(pi(x') q(x',x) a(x',x))|`` per pair (relative error of
    the two probability fluxes). For auxiliary variables put ``log P_x(w)`` into ``log_pi_x`` (the
    extended target) and the per-draw proposal / acceptance into the other terms."""
    f = np.asarray(log_pi_x) + np.asarray(log_q_fwd) + np.asarray(log_a_fwd)
    b = np.asarray(log_pi_xp) + np.asarray(log_q_bwd) + np.asarray(log_a_bwd)
    return np.abs(f - b)


def kernel_log_ratio(
    model: TallData,
    prop: int,
    x: np.ndarray,
    xp: np.ndarray,
    sigma: float,
    h: float = 0.0,
    K: int = 3,
    glen: float = 0.0,
    glen_reverse: float | None = None,
) -> float:
    """``log r(x, x')`` exactly as ``samplers.kernels.mh.mh_step`` computes it (same njit calls;
    ``glen`` = the gradient rescaling of :func:`samplers.proposals.rescale_gradient`).
    ``glen_reverse`` (mutants only) rescales the gradient at x' differently; default = ``glen``."""
    d = x.shape[0]
    g = np.zeros(d)
    gp = np.zeros(d)
    if PR.uses_gradient(prop):
        lp = tall.log_post_grad(model, x, g)
        lpp = tall.log_post_grad(model, xp, gp)
        PR.rescale_gradient(g, glen)
        PR.rescale_gradient(gp, glen if glen_reverse is None else glen_reverse)
    else:
        lp = tall.log_post(model, x)
        lpp = tall.log_post(model, xp)
    return float(lpp - lp + PR.log_q_ratio(prop, x, xp, g, gp, sigma, h, K))


def numpy_rescale(g: np.ndarray, glen: float) -> np.ndarray:
    """Independent NumPy form of :func:`samplers.proposals.rescale_gradient` (``glen * g / ||g||``)."""
    if glen == 0.0:
        return g
    n = float(np.linalg.norm(g))
    return glen * g / n if n > 0.0 else g


def _numpy_log_q(prop: int, x: np.ndarray, xp: np.ndarray, g: np.ndarray, sigma: float) -> np.ndarray:
    if prop == PR.LANGEVIN_GAUSS:
        return D.log_q_mala(x, xp, g, sigma)
    if prop == PR.BARKER_GAUSS:
        return D.log_q_barker(x, xp, g, sigma)
    if prop == PR.RW_GAUSS:
        return D.log_normal_pdf(xp, x, sigma)
    raise ValueError(f"no independent density for proposal kind {prop}")


def _numpy_propose(
    prop: int, x: np.ndarray, g: np.ndarray, sigma: float, rng: np.random.Generator
) -> np.ndarray:
    z = sigma * rng.standard_normal(x.shape)
    if prop == PR.LANGEVIN_GAUSS:
        return x + 0.5 * sigma * sigma * g + z
    if prop == PR.BARKER_GAUSS:
        up = rng.random(x.shape) < 1.0 / (1.0 + np.exp(-g * z))
        return x + np.where(up, z, -z)
    return x + z


@dataclass
class IdentityResult:
    """Max relative residual of the detailed-balance identity over ``n_pairs`` pairs."""

    name: str
    n_pairs: int
    max_residual: float
    tol: float

    @property
    def passed(self) -> bool:
        return bool(self.max_residual <= self.tol)

    def row(self, check: str, paper: str, method: str, target: str) -> dict:
        return {
            "check": check,
            "paper": paper,
            "method": method,
            "target": target,
            "statistic": "max |log flux(x->x') - log flux(x'->x)|",
            "value": self.max_residual,
            "threshold": self.tol,
            "passed": self.passed,
            "detail": f"{self.n_pairs} random pairs; kernel log r vs independent NumPy pi, q",
        }


def mh_identity_check(
    model: TallData,
    prop: int,
    sigma: float,
    starts: np.ndarray,
    seed: int | np.random.SeedSequence,
    tol: float = DB_TOL,
    log_ratio: Callable[..., float] = kernel_log_ratio,
    name: str = "",
    glen: float = 0.0,
) -> IdentityResult:
    """Detailed-balance identity for Gaussian RW / MALA / Barker at pairs (x, x' ~ q(x, .)) with
    ``x`` in ``starts``; pairs with x' outside the support are redrawn once and else skipped.
    ``log_ratio`` defaults to the kernel path (mutants / families may pass another); ``glen`` = the
    gradient rescaling (the proposal's gradient is ``glen g / ||g||``; 0 = exact)."""
    rng = np.random.default_rng(seed)
    res = []
    for x in np.atleast_2d(starts):
        g = numpy_rescale(D.log_post_grad(model, x)[0], glen)
        xp = _numpy_propose(prop, x, g, sigma, rng)
        if not D.in_support(model, xp)[0]:
            xp = _numpy_propose(prop, x, g, sigma, rng)
            if not D.in_support(model, xp)[0]:
                continue
        gp = numpy_rescale(D.log_post_grad(model, xp)[0], glen)
        lpi_x, lpi_xp = D.log_post(model, np.vstack([x, xp]))
        lr_f = log_ratio(model, prop, x, xp, sigma, 0.0, 3, glen)
        lr_b = log_ratio(model, prop, xp, x, sigma, 0.0, 3, glen)
        r = db_residual(
            lpi_x,
            _numpy_log_q(prop, x, xp, g, sigma),
            min(0.0, lr_f),
            lpi_xp,
            _numpy_log_q(prop, xp, x, gp, sigma),
            min(0.0, lr_b),
        )
        res.append(float(r))
    if not res:
        raise ValueError("no valid pairs (all proposals left the support)")
    return IdentityResult(name, len(res), float(np.max(res)), tol)


def kernel_log_ratio_no_hastings(
    model: TallData,
    prop: int,
    x: np.ndarray,
    xp: np.ndarray,
    sigma: float,
    h: float = 0.0,
    K: int = 3,
    glen: float = 0.0,
) -> float:
    """Mutant log ratio (pi ratio only, as ``verify.mutants`` ``no_hastings``)."""
    return float(tall.log_post(model, xp) - tall.log_post(model, x))


def kernel_log_ratio_unscaled_reverse(
    model: TallData,
    prop: int,
    x: np.ndarray,
    xp: np.ndarray,
    sigma: float,
    h: float = 0.0,
    K: int = 3,
    glen: float = 0.0,
) -> float:
    """Mutant log ratio (as ``verify.mutants`` ``unscaled_reverse``): the gradient at x' enters the
    reverse density without the rescaling."""
    return kernel_log_ratio(model, prop, x, xp, sigma, h, K, glen, glen_reverse=0.0)


# ---------------------------------------------------------------------------- HMC
def numpy_leapfrog(
    model: TallData, q: np.ndarray, p: np.ndarray, eps: float, n_leap: int, glen: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Independent leapfrog (Neal 2011 eq. 5.18-5.20) with the NumPy gradient (rescaled to length
    ``glen`` unless 0)."""
    q = q.astype(np.float64).copy()
    p = p.astype(np.float64).copy()
    g = numpy_rescale(D.log_post_grad(model, q)[0], glen)
    for _ in range(n_leap):
        p = p + 0.5 * eps * g
        q = q + eps * p
        g = numpy_rescale(D.log_post_grad(model, q)[0], glen)
        p = p + 0.5 * eps * g
    return q, p


@dataclass
class HMCResult:
    n_pairs: int
    map_error: float  # max |kernel end point - NumPy leapfrog end point| (q and p)
    reversibility_error: float  # max |leapfrog(q', -p') - (q, -p)|
    decision_mismatches: int  # accept decisions differing from log u < H0 - H1 (non-ties)
    tol: float

    @property
    def passed(self) -> bool:
        return bool(
            self.map_error <= self.tol
            and self.reversibility_error <= self.tol
            and self.decision_mismatches == 0
        )

    def row(self, check: str, paper: str, method: str, target: str) -> dict:
        return {
            "check": check,
            "paper": paper,
            "method": method,
            "target": target,
            "statistic": "max(map error, reversibility error) [scaled]",
            "value": max(self.map_error, self.reversibility_error),
            "threshold": self.tol,
            "passed": self.passed,
            "detail": f"{self.n_pairs} trajectories; map err {self.map_error:.2e}, "
            f"reversibility err {self.reversibility_error:.2e}, "
            f"{self.decision_mismatches} accept-decision mismatches",
        }


def hmc_reversibility_check(
    model: TallData,
    eps: float,
    n_leap: int,
    starts: np.ndarray,
    seed: int,
    tol: float = DB_TOL,
    step: Callable = hmc_step,
    glen: float = 0.0,
) -> HMCResult:
    """See the module docstring (a). ``step`` is ``hmc_step`` or a mutant with its signature;
    the momentum and uniform are replayed with ``default_rng(seed + k)`` (Numba's Generator
    produces NumPy's streams). Errors are relative to ``1 + |value|``. ``glen``: the force is the
    gradient rescaled to that length (the reversibility and the accept rule with the true H must
    still hold)."""
    map_err = rev_err = 0.0
    mism = 0
    n = 0
    for k, x in enumerate(np.atleast_2d(starts)):
        d = x.shape[0]
        theta, grad, lp = hmc_init(model, x, glen)
        q, p, g = np.empty(d), np.empty(d), np.empty(d)
        acc, _ = step(model, theta, grad, lp, eps, n_leap, np.random.default_rng(seed + k), q, p, g, glen)
        rr = np.random.default_rng(seed + k)
        p0 = rr.standard_normal(d)
        u = rr.random()
        q1, p1 = numpy_leapfrog(model, x, p0, eps, n_leap, glen)
        if not (D.in_support(model, q1)[0] and tall.in_support(model, q)):
            continue  # trajectory left the support: the kernel rejects (tested elsewhere)
        n += 1
        map_err = max(
            map_err,
            float(np.max(np.abs(np.concatenate([q - q1, p - p1])) / (1 + np.abs(np.concatenate([q1, p1]))))),
        )
        q2, p2 = numpy_leapfrog(model, q1, -p1, eps, n_leap, glen)
        rev_err = max(
            rev_err,
            float(np.max(np.abs(np.concatenate([q2 - x, p2 + p0])) / (1 + np.abs(np.concatenate([x, p0]))))),
        )
        h0 = -D.log_post(model, x)[0] + 0.5 * p0 @ p0
        h1 = -D.log_post(model, q1)[0] + 0.5 * p1 @ p1
        margin = np.log(u) - (h0 - h1)
        if abs(margin) > 1e-9 and bool(acc) != bool(margin < 0):
            mism += 1
    if n == 0:
        raise ValueError("no trajectory stayed inside the support")
    return HMCResult(n, map_err, rev_err, mism, tol)


# ============================================================================ (b) invariance
@njit(cache=True)
def run_chains_mh(t: TallData, X0, prop: int, sigma: float, h: float, K: int, n_steps: int, rng, glen: float):
    """Run ``n_steps`` of ``mh_step`` from every row of X0 (independent chains); final states. ``glen``
    as in ``mh_step`` (0.0 = the exact gradient; always passed: one compiled specialisation)."""
    n, d = X0.shape
    X = X0.copy()
    theta_p = np.empty(d)
    grad_p = np.zeros(d)
    for c in range(n):
        theta, grad, lp = mh_init(t, X0[c], prop, glen)
        for _ in range(n_steps):
            mh_step(t, theta, grad, lp, prop, sigma, h, K, rng, theta_p, grad_p, glen)
        X[c] = theta
    return X


@njit(cache=True)
def run_chains_hmc(t: TallData, X0, eps: float, n_leap: int, n_steps: int, rng, glen: float):
    """Run ``n_steps`` of ``hmc_step`` from every row of X0; final states."""
    n, d = X0.shape
    X = X0.copy()
    q = np.empty(d)
    p = np.empty(d)
    g = np.empty(d)
    for c in range(n):
        theta, grad, lp = hmc_init(t, X0[c], glen)
        for _ in range(n_steps):
            hmc_step(t, theta, grad, lp, eps, n_leap, rng, q, p, g, glen)
        X[c] = theta
    return X


@dataclass
class InvarianceResult:
    name: str
    pvalues: np.ndarray
    ks_stats: np.ndarray
    n_chains: int
    n_steps: int
    alpha: float

    @property
    def min_p(self) -> float:
        return float(self.pvalues.min())

    @property
    def threshold(self) -> float:
        return self.alpha / len(self.pvalues)

    @property
    def passed(self) -> bool:
        return bool(self.min_p > self.threshold)

    def row(self, check: str, paper: str, method: str, target: str) -> dict:
        return {
            "check": check,
            "paper": paper,
            "method": method,
            "target": target,
            "statistic": "min per-dim KS p-value (Bonferroni)",
            "value": self.min_p,
            "threshold": self.threshold,
            "passed": self.passed,
            "detail": f"{self.n_chains} chains from exact draws x {self.n_steps} steps, "
            f"max KS D {self.ks_stats.max():.4f}, FWER alpha={self.alpha:g}",
        }


def invariance_check(
    reference: Callable[[np.random.Generator, int], np.ndarray],
    run_chains: Callable[[np.ndarray, np.random.Generator], np.ndarray],
    n_chains: int,
    n_steps: int,
    seed: int,
    n_ref: int | None = None,
    alpha: float = ALPHA,
    name: str = "",
) -> InvarianceResult:
    """Start ``n_chains`` chains at exact draws, run ``run_chains(X0, rng)`` (a Python callable
    that calls an njit loop for ``n_steps`` steps), and KS-test each coordinate against ``n_ref``
    (default ``4 n_chains``) fresh exact draws; Bonferroni over coordinates."""
    if n_chains < 2:
        raise ValueError("n_chains must be >= 2")
    r0, r1, r2 = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
    X0 = np.ascontiguousarray(reference(r0, n_chains), dtype=np.float64)
    X = np.asarray(run_chains(X0, r1))
    ref = reference(r2, n_ref or 4 * n_chains)
    res = [stats.ks_2samp(X[:, j], ref[:, j]) for j in range(X.shape[1])]
    return InvarianceResult(
        name,
        np.array([r.pvalue for r in res]),
        np.array([r.statistic for r in res]),
        n_chains,
        n_steps,
        alpha,
    )
