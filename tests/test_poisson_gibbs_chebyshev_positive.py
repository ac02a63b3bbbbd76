"""The Chebyshev proposal of PGITS / PGDA / Gibbs-ITS / Gibbs-DA (Zhang & De Sa 2019 Alg. 3, App. C.1 Alg. 5)
is sampled only from a provably positive interpolant, and the MH correction rejects when the interpolant at
the current value is <= 0 (ratio <= 0)."""

from __future__ import annotations

import numpy as np
from scipy import integrate, stats

from samplers import chebyshev as C
from samplers import registry as R
from samplers.kernels import continuous_gibbs as CG


def _steep_conditional(deg: int):
    """spin_pair with coupling 13 and x_1 = 1: the conditional of x_0 is exp(13 (v + 1)) on [0, 1]
    (as steep as the §4.2 model's centre sites); its degree-``deg`` interpolant of exp(U - max)."""
    prob = R.build_problem("spin_pair", coupling=13.0, field=1)
    nodes = np.empty(deg + 1)
    C.cheb_nodes(deg, 0.0, 1.0, nodes)
    vals = np.exp(13.0 * (nodes - 1.0))
    c = np.empty(deg + 1)
    C.cheb_coeffs(vals, deg, c)
    return prob, c


def test_certified_proposal_is_positive_everywhere():
    """After certify_positive, the interpolant is >= its floor on a dense grid, for steep exponentials and
    narrow spikes (the §4.3 mixture's conditionals) at the experiments' degrees; the grid-only guard it
    replaced leaves negative dips on the steep exponential."""
    v = np.linspace(-1.0, 1.0, 400_001)
    cases = []
    for deg in (2, 3, 10, 20, 25):
        nodes = np.empty(deg + 1)
        C.cheb_nodes(deg, -1.0, 1.0, nodes)
        for f in (lambda t: np.exp(6.5 * (t - 1.0)), lambda t: np.exp(-0.5 * ((t - 0.3) / 0.01) ** 2)):
            vals = f(nodes)
            vals = vals / vals.max()
            c = np.empty(deg + 1)
            C.cheb_coeffs(vals, deg, c)
            cases.append((deg, c))
    for deg, c in cases:
        old = c.copy()
        C.guard_positive(old, deg + 1, 8 * (deg + 1) + 1, 1e-6)
        lb = CG.certify_positive(c, deg + 1, CG.POSITIVE_GRID_PER_DEGREE, CG.POSITIVE_FLOOR)
        p = C.evaluate(c, v)
        assert lb > 0 and p.min() >= lb * (1 - 1e-9), (deg, p.min(), lb)
    _, c3 = _steep_conditional(3)
    C.guard_positive(c3, 4, 33, 1e-6)
    assert C.evaluate(c3, np.linspace(0.0, 1.0, 100_001), 0.0, 1.0).min() < 0  # what the old guard left


def test_step_from_a_point_where_the_old_interpolant_is_negative():
    """Gibbs-ITS (m = 3, deterministic proposal given x_1) started at the point where the old proposal
    polynomial was negative: the old kernel accepted every proposal there (400 / 400). The kernel's
    acceptance count must match the exact MH acceptance probability a(x) = int q(v) min(1, pi(v) q(x) /
    (pi(x) q(v))) dv of the certified proposal q (quadrature), two-sided binomial p-value > 1e-4
    (false-alarm probability <= 1e-4)."""
    deg = 3
    prob, c = _steep_conditional(deg)
    old = c.copy()
    C.guard_positive(old, deg + 1, 8 * (deg + 1) + 1, 1e-6)
    grid = np.linspace(0.0, 1.0, 200_001)
    xs = float(grid[np.argmin(C.evaluate(old, grid, 0.0, 1.0))])
    assert C.evaluate(old, [xs], 0.0, 1.0)[0] < 0
    CG.certify_positive(c, deg + 1, CG.POSITIVE_GRID_PER_DEGREE, CG.POSITIVE_FLOOR)

    def q(v):
        return C.evaluate(c, v, 0.0, 1.0)[0]

    zq = integrate.quad(q, 0.0, 1.0, limit=200)[0]
    zpi = (1.0 - np.exp(-13.0)) / 13.0

    def pi(v):
        return np.exp(13.0 * (v - 1.0)) / zpi

    qx = q(xs) / zq
    a = integrate.quad(lambda v: min(q(v) / zq, pi(v) * qx / pi(xs)), 0.0, 1.0, limit=400, points=[xs])[0]
    m = prob.model
    tables = CG.continuous_tables(m, 2 * prob.meta["L"], prob.meta["L"])
    st = CG.continuous_gibbs_init(m, np.array([xs, 1.0]), *tables, deg)

    def accepts(mutant: int, n: int = 400) -> int:
        rng = np.random.default_rng(0)
        acc = 0
        for _ in range(n):
            st[0][:] = (xs, 1.0)
            acc += bool(CG.continuous_gibbs_step(m, *st, 0, rng, CG.GIBBS_ITS, deg, deg, 0.0, 1, mutant)[0])
        return acc

    acc = accepts(CG.MUT_NONE)
    p = stats.binomtest(acc, 400, a).pvalue
    assert p > 1e-4, (acc, a, p)
    # the grid-guarded kernel that accepted whenever f~(x_i) <= 0 (mutant): 400 / 400, rejected
    acc_old = accepts(CG.MUT_GRID_GUARD)
    assert acc_old == 400 and stats.binomtest(acc_old, 400, a).pvalue < 1e-4
