"""Cost split of one Poisson-Gibbs iteration on the Zhang & De Sa 2019 §4.1 Potts model (docs/performance.md
§5.5).

``.venv/bin/python tools/profile_poisson_gibbs.py [lam_L2] [n_iter] [side]`` (defaults 1.0, 200000, 20:
lambda = lam_L2 L^2, iterations, side of the lattice) runs the compiled chain loop cut after each stage of
:func:`samplers.kernels.poisson_gibbs.poisson_gibbs_step` (same code, same stream) and prints the
cumulative CPU nanoseconds per iteration, then the real kernel and plain ``gibbs`` with their
factor evaluations per second (n_evals / CPU second, one table lookup = one evaluation).
Stages: pick i (``rng.integers``); B ~ Poisson(Lambda_i); B alias draws; thinning coins (phi
replaced by a constant); phi_f(x) where the coin needs it; the D values of each kept factor
(``factor_slice``); log1p; the categorical draw of x_i. The start state is a burnt-in chain state.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from numba import njit

import samplers  # noqa: F401  (sets the Numba cache directory before numba compiles anything)
from samplers.alias import alias_slot
from samplers.kernels import gibbs as G
from samplers.kernels import poisson_gibbs as PG
from samplers.kernels.poisson_gibbs import sample_softmax_inplace
from samplers.poisson_minibatch import coin
from samplers.streams import new_stream, uniform
from samplers.targets.factor_graph import FactorGraph, factor_slice, factor_value

STAGES = [
    "pick i (rng.integers)",
    "+ B ~ Poisson(Lambda_i)",
    "+ B alias draws",
    "+ B thinning coins",
    "+ phi_f(x) where needed",
    "+ D values of kept factors",
    "+ log1p",
    "+ draw x_i",
]


@njit(cache=True)
def staged_loop(
    fg: FactorGraph, x, prob, alias, Lam, arate, buf, cnt, touched, logits, n_iter: int, level: int, rng
) -> float:
    """The Poisson-Gibbs chain loop stopped after stage ``level`` (0..7) of each iteration."""
    tot = 0.0
    for _ in range(n_iter):
        i = rng.integers(0, fg.n)
        if level == 0:
            tot += i
            continue
        p0 = fg.var_ptr[i]
        n_loc = fg.var_ptr[i + 1] - p0
        B = rng.poisson(Lam[i])
        st = new_stream(rng)
        if level == 1:
            tot += B
            continue
        if B > buf.shape[0]:
            buf = np.empty(2 * B, dtype=np.int64)
        for b in range(B):
            buf[b] = alias_slot(prob, alias, p0, n_loc, uniform(st, b))
        if level == 2:
            tot += B
            continue
        nt = 0
        for b in range(B):
            k = buf[b]
            f = fg.var_fac[p0 + k]
            a = arate[f]
            t = coin(st, B, b) * (a + fg.M[f])
            if t < a:
                ok = True
            elif level == 3:
                ok = t < a + 0.5 * fg.M[f]
            else:
                ok = t < a + factor_value(fg, f, x)
            if ok:
                if cnt[k] == 0:
                    touched[nt] = k
                    nt += 1
                cnt[k] += 1
        if level <= 4:
            for t in range(nt):
                cnt[touched[t]] = 0
            tot += nt
            continue
        D = fg.card[i]
        for v in range(D):
            logits[v] = 0.0
        for t in range(nt):
            k = touched[t]
            c = cnt[k]
            cnt[k] = 0
            f = fg.var_fac[p0 + k]
            a = arate[f]
            base, stride = factor_slice(fg, f, x, i)
            for v in range(D):
                phv = fg.tables[base + v * stride]
                if level == 5:
                    logits[v] += c * phv
                elif phv > 0.0:
                    logits[v] += c * math.log1p(phv / a)
        if level <= 6:
            tot += logits[0]
            continue
        x[i] = sample_softmax_inplace(logits, D, rng.random())
    return tot


def _best(fn, rounds: int = 3) -> float:
    best = math.inf
    for r in range(rounds):
        t = time.process_time()
        fn(r)
        best = min(best, time.process_time() - t)
    return best


def main(argv: list[str] | None = None) -> int:
    from samplers import registry

    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    lam_L2 = float(argv[0]) if argv else 1.0
    n = int(argv[1]) if len(argv) > 1 else 200_000
    if not (lam_L2 > 0 and n > 0):
        raise ValueError("usage: tools/profile_poisson_gibbs.py [lam_L2 > 0] [n_iter > 0] [side]")
    side = int(argv[2]) if len(argv) > 2 else 20
    fg = registry.build_problem("potts_20x20", 0, rows=side, cols=side).model
    L = PG.local_max_energy(fg)
    tabs = PG.poisson_gibbs_tables(fg, lam_L2 * L * L, L)
    st = PG.poisson_gibbs_init(fg, np.zeros(fg.n, dtype=np.int64), *tabs)
    PG.poisson_gibbs_sample(fg, *st, 20_000, 0, np.random.default_rng(0), 20_000)  # burn in st[0]
    x = st[0]
    print(
        f"potts {side}x{side}: {fg.M.shape[0]} factors, tables {fg.tables.nbytes / 1e6:.1f} MB, L = {L:.4f}, "
        f"lambda = {lam_L2} L^2"
    )
    for lev, name in enumerate(STAGES):
        staged_loop(fg, x.copy(), *st[1:], 10, lev, np.random.default_rng(0))
        t = _best(lambda r, lev=lev: staged_loop(fg, x.copy(), *st[1:], n, lev, np.random.default_rng(r)))
        print(f"  {name:28s} {t / n * 1e9:8.1f} ns/iter (cumulative)")
    out = {}

    def pg(r):
        out["pg"] = PG.poisson_gibbs_sample(fg, x.copy(), *st[1:], n, 0, np.random.default_rng(r), n)

    t = _best(pg)
    ne = out["pg"][2].mean()
    print(
        f"poisson_gibbs: {t / n * 1e9:.1f} ns/iter, E[B] = {out['pg'][3].mean():.2f}, "
        f"E[n_evals] = {ne:.2f}, {ne * n / t:.3g} factor evals/s"
    )
    ng = max(n // 40, 100)
    xg, cg = G.gibbs_init(fg, x)
    G.gibbs_sample(fg, xg, cg, 2, G.RANDOM_SCAN, np.random.default_rng(0), 2)

    def gb(r):
        out["g"] = G.gibbs_sample(fg, x.copy(), cg, ng, G.RANDOM_SCAN, np.random.default_rng(r), ng)

    tg = _best(gb)
    neg = out["g"][2].mean()
    print(f"gibbs: {tg / ng * 1e9:.1f} ns/iter, E[n_evals] = {neg:.1f}, {neg * ng / tg:.3g} factor evals/s")
    print(
        f"ratio poisson_gibbs / gibbs factor evals/s: {(ne * n / t) / (neg * ng / tg):.2f}; "
        f"per-iteration speed-up {(tg / ng) / (t / n):.1f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
