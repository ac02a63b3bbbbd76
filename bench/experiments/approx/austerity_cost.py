"""Where an AustereMH iteration spends its time, against exact MH on the same data (Korattikara et al. 2014,
§6.1: logistic regression on MNIST 7v9, N = 12,214, d = 50, RW sd 0.01, m = 500).

Every chain starts from one state after ``burn`` exact-RWM iterations and runs ``iters`` iterations;
``rounds`` rounds alternate the chains (exact cached, exact uncached, AustereMH at each eps), and the table
gives medians over the rounds with the 1-minute load beside them. Then the per-datum pieces of the
sequential test are timed alone on the same data and states (200 proposals from the stationary state):

* ``index``   drawing the next datum without replacement (a Fisher-Yates step) from the chain's Generator
  (``rng.integers``) and from a counter-based stream (:mod:`samplers.streams`);
* ``l_i``     ``ll_i(theta') - ll_i(theta)`` by two calls of the generic ``loglik_i`` on the ``TallData``
  NamedTuple, in stream order and in random order, and by the array helper the test uses (row read once,
  one ``log1p``);
* ``stats``   the running mean / variance update (Welford, one division a datum; shifted sums);
* ``test``    the whole sequential test with its threshold never met (every datum drawn), per datum;
* ``exact``   the full-batch ``log_post`` of the exact chain, per datum.

``--ica`` instead times K14's ICA model of §6.2 (D = 4, N = 5e4 whitened logistic sources, W on the orthogonal
group, Cayley random walk of sd scale / sqrt(N) at scales 1, 2 and 4, from the true unmixing after 200 exact
iterations): exact MH and AustereMH at eps 0.05 / 0.2, per iteration and per datum, data saving beside the
wall-clock speed-up.

``python -m bench.experiments.approx.austerity_cost [--rounds R] [--iters I] [--ica] [--out FILE.json]``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np

EPS = (0.01, 0.05, 0.1, 0.2)


def _load1() -> float:
    return float(os.getloadavg()[0])


def _kernels():
    """Micro kernels (compiled on first use; not cached: a measurement script)."""
    from numba import njit

    from samplers.approx.seqtest import draw_next, seq_ttest
    from samplers.hotloop import log1pexp_diff, pair_z
    from samplers.streams import new_stream, uniform
    from samplers.targets.tall import log_post, loglik_i

    @njit
    def exact_pass(t, props):
        s = 0.0
        for p in range(props.shape[0]):
            s += log_post(t, props[p])
        return s

    @njit
    def index_generator(perm, reps, rng):
        s = 0
        for _ in range(reps):
            for k in range(perm.shape[0]):
                s += draw_next(perm, k, rng)
        return s

    @njit
    def index_stream(perm, reps, rng):
        s = 0
        N = perm.shape[0]
        for _ in range(reps):
            st = new_stream(rng)
            for k in range(N):
                j = k + int(uniform(st, k) * (N - k))
                tmp = perm[k]
                perm[k] = perm[j]
                perm[j] = tmp
                s += perm[k]
        return s

    @njit
    def li_generic(t, theta, props, idx):
        s = 0.0
        for p in range(props.shape[0]):
            for k in range(idx.shape[0]):
                i = idx[k]
                s += loglik_i(t, i, props[p]) - loglik_i(t, i, theta)
        return s

    @njit
    def li_arrays(X, y, beta, theta, props, idx):
        s = 0.0
        for p in range(props.shape[0]):
            thp = props[p]
            for k in range(idx.shape[0]):
                i = idx[k]
                z0, z1 = pair_z(X, i, theta, thp)
                sg = -1.0 if y[i] > 0.5 else 1.0
                s -= beta * log1pexp_diff(sg * z0, sg * (z1 - z0))
        return s

    @njit
    def stats_welford(lv, reps):
        out = 0.0
        for _ in range(reps):
            mean = 0.0
            m2 = 0.0
            for n in range(lv.shape[0]):
                dlt = lv[n] - mean
                mean += dlt / (n + 1)
                m2 += dlt * (lv[n] - mean)
            out += mean + m2
        return out

    @njit
    def stats_shifted(lv, reps):
        out = 0.0
        for _ in range(reps):
            c = lv[0]
            s1 = 0.0
            s2 = 0.0
            for n in range(lv.shape[0]):
                a = lv[n] - c
                s1 += a
                s2 += a * a
            out += s1 + s2
        return out

    @njit
    def whole_test(t, theta, props, perm, m, tc, rng):
        s = 0
        for p in range(props.shape[0]):
            a, n = seq_ttest(t, theta, props[p], 0.0, perm, m, tc, rng)
            s += n
        return s

    return {
        "exact_pass": exact_pass,
        "index_generator": index_generator,
        "index_stream": index_stream,
        "li_generic": li_generic,
        "li_arrays": li_arrays,
        "stats_welford": stats_welford,
        "stats_shifted": stats_shifted,
        "whole_test": whole_test,
    }


def _best(f, *a, repeat: int = 5) -> float:
    f(*a)
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        f(*a)
        best = min(best, time.perf_counter() - t0)
    return best


def components(t, theta: np.ndarray, step: float, seed: int = 5) -> list[dict]:
    """ns per datum of each piece of the test (best of 5), with the load."""
    K = _kernels()
    N, d = t.X.shape
    rng = np.random.default_rng(seed)
    props = theta + step * rng.standard_normal((200, d))
    idx_seq = np.arange(N)
    idx_rand = rng.permutation(N)
    perm = np.arange(N)
    lv = rng.standard_normal(N)
    never = np.full(N + 1, np.inf)
    P = props.shape[0]
    rows = []

    def add(piece, variant, sec, per):
        rows.append({"piece": piece, "variant": variant, "ns_per_datum": sec / per * 1e9, "load1": _load1()})

    add(
        "exact", "log_post (full batch, cached twin: 1 ll_i a datum)", _best(K["exact_pass"], t, props), P * N
    )
    add("index", "Generator.integers (Fisher-Yates step)", _best(K["index_generator"], perm, 20, rng), 20 * N)
    add(
        "index", "counter stream uniform (Fisher-Yates step)", _best(K["index_stream"], perm, 20, rng), 20 * N
    )
    add(
        "l_i", "2 x loglik_i(TallData), stream order", _best(K["li_generic"], t, theta, props, idx_seq), P * N
    )
    add(
        "l_i",
        "2 x loglik_i(TallData), random order",
        _best(K["li_generic"], t, theta, props, idx_rand),
        P * N,
    )
    add(
        "l_i",
        "array helper, row once, one log1p, random order",
        _best(K["li_arrays"], t.X, t.y, t.beta, theta, props, idx_rand),
        P * N,
    )
    add("stats", "Welford (a division a datum)", _best(K["stats_welford"], lv, 200), 200 * N)
    add("stats", "shifted sums", _best(K["stats_shifted"], lv, 200), 200 * N)
    add(
        "test",
        "seq_ttest, threshold never met, m = 500",
        _best(K["whole_test"], t, theta, props, perm, 500, never, rng),
        P * N,
    )
    return rows


def chains(pr, theta: np.ndarray, step: float, m: int, iters: int, rounds: int, seed: int = 11) -> list[dict]:
    """Alternated whole-chain runs from ``theta``; one row per (round, chain)."""
    from samplers import registry as R

    N = pr.model.X.shape[0]
    # exact MH three ways: the cached twin (one ll_i a datum), the uncached twin (two), and the test itself
    # with its first stage = all N data (m = N: exact MH's decision through the test's arithmetic)
    specs = [("rwm", 0.0, {"energy": "cached"}), ("rwm", 0.0, {"energy": "recompute"})]
    specs += [("austere_mh_c", 0.0, {"m": N, "eps": 0.05})]
    specs += [("austere_mh_c", e, {"m": m, "eps": e}) for e in EPS]
    rows = []
    for r in range(rounds):
        for k, (meth, e, kw) in enumerate(specs):
            sd = np.random.SeedSequence([seed, r, k])
            l0 = _load1()
            res = R.run(meth, pr, iters, sd, x0=theta, step=step, **kw)
            rows.append(
                {
                    "round": r,
                    "method": meth,
                    "energy": kw.get("energy", ""),
                    "m": kw.get("m", 0),
                    "eps": e,
                    "iters": iters,
                    "sample_seconds": res.sample_seconds,
                    "ms_per_iter": res.sample_seconds / iters * 1e3,
                    "data_per_iter": float(res.n_evals.mean()),
                    "frac_N": float(res.n_evals.mean()) / N,
                    "ns_per_datum": res.sample_seconds / max(float(res.n_evals.sum()), 1.0) * 1e9,
                    "accept": res.accept_rate,
                    "load1_start": l0,
                    "load1_end": _load1(),
                }
            )
    return rows


def chain_table(rows: list[dict]) -> list[dict]:
    """Medians over rounds per chain, and the speed-up over the cached exact chain (samples per second)."""
    import pandas as pd

    df = pd.DataFrame(rows)
    g = df.groupby(["method", "energy", "m", "eps"], sort=False)
    out = g[["ms_per_iter", "data_per_iter", "frac_N", "ns_per_datum", "accept"]].median().reset_index()
    out["load1"] = g["load1_start"].median().values
    ex = float(out.loc[(out["method"] == "rwm") & (out["energy"] == "cached"), "ms_per_iter"].iloc[0])
    out["speedup_vs_cached"] = ex / out["ms_per_iter"]
    out["data_speedup"] = 1.0 / out["frac_N"]
    return out.to_dict("records")


def ica_chains(
    iters: int,
    rounds: int,
    N: int = 50_000,
    D: int = 4,
    seed: int = 13,
    scales=(1.0, 2.0, 4.0),
    eps=(0.05, 0.2),
) -> list[dict]:
    """Alternated exact MH / AustereMH chains on K14's ICA model (W on O(D), Cayley random walk of sd
    scale / sqrt(N)), every chain from the state after 200 exact iterations; medians over rounds per setting,
    with the data saving (N / data per iteration) beside the wall-clock speed-up (samples per second over
    exact MH's)."""
    import pandas as pd

    from samplers import registry as R

    pr = R.build_problem("ica_stiefel", 0, N=N, D=D)
    x0 = pr.meta["W_true"].reshape(-1).copy()
    rows = []
    for scale in scales:
        step = scale / math.sqrt(N)
        x = (
            R.run("rwm_stiefel", pr, 200, np.random.SeedSequence([seed, 0]), x0=x0, step=step)
            .samples[-1]
            .copy()
        )
        specs = [("rwm_stiefel", 0.0, {})] + [("austere_mh_stiefel", e, {"m": 500, "eps": e}) for e in eps]
        for r in range(rounds):
            for k, (meth, e, kw) in enumerate(specs):
                l0 = _load1()
                res = R.run(meth, pr, iters, np.random.SeedSequence([seed, r, k]), x0=x, step=step, **kw)
                rows.append(
                    {
                        "scale": scale,
                        "method": meth,
                        "eps": e,
                        "ms_per_iter": res.sample_seconds / iters * 1e3,
                        "data_per_iter": float(res.n_evals.mean()),
                        "ns_per_datum": res.sample_seconds / max(float(res.n_evals.sum()), 1.0) * 1e9,
                        "accept": res.accept_rate,
                        "load1": l0,
                    }
                )
    df = pd.DataFrame(rows).groupby(["scale", "method", "eps"], sort=False).median().reset_index()
    ex = df[df["eps"] == 0.0].set_index("scale")
    df["data_saving"] = N / df["data_per_iter"]
    df["speedup_wall"] = df["scale"].map(ex["ms_per_iter"]) / df["ms_per_iter"]
    return df.to_dict("records")


def main(argv=None) -> None:
    import samplers  # noqa: F401  (sets the Numba cache before numba is imported)
    from bench.data_registry import load_named
    from samplers import registry as R

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--burn", type=int, default=20_000)
    ap.add_argument("--skip-components", action="store_true")
    ap.add_argument("--ica", action="store_true", help="time the ICA problem of §6.2 instead")
    ap.add_argument("--ica-n", type=int, default=50_000, help="ICA data size")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    if a.ica:
        tab = ica_chains(a.iters, a.rounds, N=a.ica_n)
        for r in tab:
            print(
                f"scale {r['scale']:<4} {r['method']:13s} eps={r['eps']:<5} {r['ms_per_iter']:8.3f} ms/it "
                f"{r['data_per_iter']:8.0f} data {r['ns_per_datum']:6.1f} ns/datum acc {r['accept']:.3f} "
                f"data x{r['data_saving']:.2f} wall x{r['speedup_wall']:.2f} load {r['load1']:.2f}"
            )
        if a.out:
            with open(a.out, "w") as f:
                json.dump({"ica": tab}, f, indent=1, default=float)
        return
    step, m = 0.01, 500
    data = load_named("mnist_7v9")
    pr = R.build_problem("logistic_mnist_7v9", 0, data=data)
    burn = R.run("rwm", pr, a.burn, np.random.SeedSequence(1), x0=np.zeros(pr.dim), step=step)
    theta = burn.samples[-1].copy()
    out = {"cpu": os.uname().machine, "burn": a.burn, "rounds": a.rounds, "iters": a.iters}
    if not a.skip_components:
        out["components"] = components(pr.model, theta, step)
        for r in out["components"]:
            print(
                f"{r['piece']:6s} {r['variant']:52s} {r['ns_per_datum']:8.1f} ns/datum  load {r['load1']:.2f}"
            )
    rows = chains(pr, theta, step, m, a.iters, a.rounds)
    out["chains"] = rows
    out["table"] = chain_table(rows)
    for r in out["table"]:
        print(
            f"{r['method']:13s} {r['energy']:9s} m={r['m']:<6} eps={r['eps']:<5} "
            f"{r['ms_per_iter']:8.3f} ms/it "
            f"{r['data_per_iter']:8.0f} data ({r['frac_N']:.3f} N) {r['ns_per_datum']:6.1f} ns/datum "
            f"acc {r['accept']:.3f} x{r['speedup_vs_cached']:.2f} (data x{r['data_speedup']:.2f}) "
            f"load {r['load1']:.2f}"
        )
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1, default=float)


if __name__ == "__main__":
    main()
