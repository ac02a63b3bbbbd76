"""``mcmc-bench peers``: the project's samplers side by side with BlackJAX and NumPyro.

On the truncated Gaussian (d = 20, Yuan & Wang 2024 §5.1) and the robust regression (d = 10, §5.2), with
the data arrays and supports of :func:`samplers.registry.build_problem` and float64 on both sides:

* BlackJAX RWM, MALA and HMC (L = 10, unit mass) beside the project's full-batch twins ``rwm`` / ``mala`` /
  ``hmc`` at the same step (the project's step tuned to acceptance 0.4, as ``mcmc-bench perf``'s paper
  section; BlackJAX's MALA ``step_size`` = sigma^2 / 2 gives the same proposal);
* NumPyro HMCECS (Dang et al. 2019: NUTS on a subsample of 1000 with the second-order Taylor proxy at the
  reference posterior mean) and full-data NUTS beside the project's exact minibatch methods.

Per-iteration time: every side timed once per round in ``rounds`` interleaved rounds (order rotated,
:func:`bench.perf.alternate`), compiled code only (JIT / Numba compile and NumPyro warm-up excluded), CPU
seconds of a fixed chain, one XLA thread; medians, and for BlackJAX the median of the per-round ratio to the
project's twin. ESS with :func:`bench.metrics.ess` (bulk and the paper's identity ESS, min over dimensions)
on one longer chain per side started at the reference posterior mean (first fifth dropped); ESS/s = ESS
per iteration / median time per iteration. Agreement: max_j |mean_j - ref_j| / sd_j against the exact draws
(truncated Gaussian) or a long NUTS chain (robust regression). The peers are an optional extra
(``pip install -e ".[peers]"``); nothing else in the project imports jax.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

PEER_MODULES = ("jax", "blackjax", "numpyro")
INSTALL_HINT = 'peers not installed: pip install -e ".[peers]" (jax, blackjax, numpyro)'
TARGETS = ("truncated_gaussian", "robust_regression")
SHORT = {"truncated_gaussian": "TG d=20", "robust_regression": "RR d=10"}
FULL_BATCH = ("rwm", "mala", "hmc")
N_LEAP = 10
TARGET_ACCEPT = 0.4
SUBSAMPLE = 1000
QUICK_N = 10_000
CHAIN_SEED, REFERENCE_SEED = 2, 11  # every timed-side chain; the NUTS reference chain
NBETA = {"truncated_gaussian": 1.0, "robust_regression": 10.0}  # N beta of the paper problems


def missing_peers() -> list[str]:
    """The peer packages that are not importable (without importing them)."""
    return [m for m in PEER_MODULES if importlib.util.find_spec(m) is None]


def _jax():
    """jax with float64 and one XLA CPU thread (the project's kernels run on one core too)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "intra_op_parallelism_threads" not in flags:
        os.environ["XLA_FLAGS"] = (
            flags + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        ).strip()
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    return jax


# ----------------------------------------------------------------------------- the targets in JAX
def _check_model(model) -> None:
    from samplers.targets import tall

    if model.kind not in (tall.TG, tall.RLR):
        raise ValueError(f"peers: kind {model.kind} is not the truncated Gaussian or robust regression")
    if any(float(v) != 0.0 for v in model.prior_prec) or model.prior_l1 != 0.0:
        raise ValueError("peers: the targets here have a flat prior on their support")


def jax_loglik_terms(model):
    """``theta -> (ll_i(theta))_i`` (the tempered per-datum terms of :func:`samplers.targets.tall.loglik_i`)
    and ``theta -> in_support(theta)``, as jnp functions of the model's own arrays."""
    import jax.numpy as jnp

    from samplers.targets import tall

    _check_model(model)
    X = jnp.asarray(model.X)
    beta, nu = float(model.beta), float(model.nu)
    if model.kind == tall.TG:
        w = jnp.asarray(model.w)
        lo, hi = float(model.lo), float(model.hi)

        def terms(theta, X=X, y=None):
            r = theta - X
            return -0.5 * beta * ((r * r) @ w)

        def support(theta):
            return jnp.all(jnp.isfinite(theta) & (theta >= lo) & (theta <= hi))

        return terms, support, (X,)
    y = jnp.asarray(model.y)
    R2 = float(model.R) ** 2
    c = -0.5 * beta * (nu + 1.0)

    def terms(theta, X=X, y=y):
        r = y - X @ theta
        return c * jnp.log1p(r * r / nu)

    def support(theta):
        return jnp.all(jnp.isfinite(theta)) & (theta @ theta <= R2)

    return terms, support, (X, y)


def jax_logdensity(model):
    """log pi(theta) of :func:`samplers.targets.tall.log_post` in jnp: flat prior, -inf off the support."""
    import jax.numpy as jnp

    terms, support, _ = jax_loglik_terms(model)

    def logdensity(theta):
        return jnp.where(support(theta), jnp.sum(terms(theta)), -jnp.inf)

    return logdensity


def numpyro_model(model, subsample_size: int | None = None):
    """A NumPyro model of the same posterior: theta flat on the support (the truncated Gaussian's box as
    ``Uniform(lo, hi)``, the regression's ball as a -inf factor outside it), the likelihood one
    ``numpyro.factor`` per datum inside a plate (subsampled when ``subsample_size``: HMCECS)."""
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    from samplers.targets import tall

    terms, support, data = jax_loglik_terms(model)
    N, d = model.X.shape
    tg = model.kind == tall.TG
    lo, hi = float(model.lo), float(model.hi)

    def np_model():
        if tg:
            theta = numpyro.sample("theta", dist.Uniform(lo, hi).expand([d]).to_event(1))
        else:
            theta = numpyro.sample("theta", dist.ImproperUniform(constraints.real_vector, (), (d,)))
            numpyro.factor("support", jnp.where(support(theta), 0.0, -jnp.inf))
        with numpyro.plate("data", N, subsample_size=subsample_size):
            batch = [numpyro.subsample(a, event_dim=a.ndim - 1) for a in data]
            numpyro.factor("ll", terms(theta, *batch))

    return np_model


# ----------------------------------------------------------------------------- samplers as timed closures
def _cpu(fn, *a):
    t0 = time.process_time()
    out = fn(*a)
    return out, time.process_time() - t0


class Side:
    """One sampler on one target: ``time_once()`` -> CPU seconds per iteration of a fixed chain of ``n_time``
    iterations continuing from the last state; ``chain(n)`` -> (draws (n, d), acceptance)."""

    name: str
    method: str
    impl: str
    hyper: dict

    def calibrate(self, budget: float) -> None:
        n = 4
        while True:
            self.n_time = n
            self.prepare()
            t = self.time_once() * n
            if t > 0.02 or n >= 100_000:
                break
            n *= 4
        self.n_time = int(min(max(budget * n / max(t, 1e-9), 4), 100_000))
        self.prepare()

    def prepare(self) -> None:  # compile for n_time iterations
        pass


class OursSide(Side):
    def __init__(self, method: str, problem, hyper: dict, x0, label: str):
        self.method, self.impl, self.problem, self.hyper, self.x0 = method, "ours", problem, hyper, x0
        self.name = label

    def prepare(self) -> None:
        from samplers import registry

        registry.run(self.method, self.problem, 2, 0, x0=self.x0, **self.hyper)

    def time_once(self) -> float:
        from bench.perf_compare import timed_run

        res, cpu = timed_run(self.method, self.problem, self.n_time, 1, 1, **self.hyper)
        return cpu / self.n_time

    def chain(self, n: int, seed: int = CHAIN_SEED):
        from samplers import registry

        res = registry.run(self.method, self.problem, n, seed, x0=self.x0, **self.hyper)
        return res.samples, res.accept_rate


class BlackjaxSide(Side):
    def __init__(self, method: str, model, step: float, x0):
        jax = _jax()
        import blackjax
        import jax.numpy as jnp

        self.jax, self.method, self.impl, self.name = jax, method, "blackjax", f"blackjax_{method}"
        d = model.X.shape[1]
        logdensity = jax_logdensity(model)
        if method == "rwm":
            alg = blackjax.normal_random_walk(logdensity, jnp.full(d, step))
            self.hyper = {"sigma": step}
        elif method == "mala":
            alg = blackjax.mala(logdensity, 0.5 * step * step)  # theta + h grad + sqrt(2h) xi, h = sigma^2/2
            self.hyper = {"step_size": 0.5 * step * step}
        else:
            alg = blackjax.hmc(logdensity, step, jnp.ones(d), N_LEAP)
            self.hyper = {"step_size": step, "num_integration_steps": N_LEAP}
        self.state = alg.init(jnp.asarray(x0))
        self.x0 = jnp.asarray(x0)
        self.init = alg.init

        def run(key, state, n):
            def body(s, k):
                s, info = alg.step(k, s)
                return s, (s.position, info.is_accepted)

            return jax.lax.scan(body, state, jax.random.split(key, n))

        self._run = jax.jit(run, static_argnums=2)
        self.key = jax.random.key(1)

    def _go(self, state, n: int, key):
        out = self._run(key, state, n)
        self.jax.block_until_ready(out)
        return out

    def prepare(self) -> None:
        self._go(self.state, self.n_time, self.key)

    def time_once(self) -> float:
        self.key, k = self.jax.random.split(self.key)
        (self.state, _), cpu = _cpu(self._go, self.state, self.n_time, k)
        return cpu / self.n_time

    def chain(self, n: int, seed: int = CHAIN_SEED):
        import numpy as np

        _, (pos, acc) = self._go(self.init(self.x0), n, self.jax.random.key(seed))
        return np.asarray(pos), float(np.mean(np.asarray(acc)))


class NumpyroSide(Side):
    """NumPyro's kernel after ``n_warmup`` adaptation iterations (``MCMC.warmup``), then stepped by its own
    ``kernel.sample`` inside one jitted ``lax.scan`` (``MCMC.run`` recompiles its loop on every call)."""

    def __init__(self, method: str, model, x0, n_warmup: int, ref_mean=None):
        jax = _jax()
        import jax.numpy as jnp
        from numpyro.infer import HMCECS, MCMC, NUTS, init_to_value

        self.jax, self.method, self.impl, self.name = jax, method, "numpyro", f"numpyro_{method}"
        init = init_to_value(values={"theta": jnp.asarray(x0)})
        if method == "hmcecs":
            proxy = HMCECS.taylor_proxy({"theta": jnp.asarray(ref_mean)})
            kernel = HMCECS(NUTS(numpyro_model(model, SUBSAMPLE), init_strategy=init), proxy=proxy)
            self.hyper = {"subsample_size": SUBSAMPLE, "proxy": "taylor", "inner": "NUTS"}
        else:
            kernel = NUTS(numpyro_model(model), init_strategy=init)
            self.hyper = {"inner": "NUTS"}
        mcmc = MCMC(kernel, num_warmup=n_warmup, num_samples=1, progress_bar=False)
        mcmc.warmup(jax.random.key(3))
        self.warm_state = self.state = mcmc.post_warmup_state
        hmc = self.state.hmc_state if method == "hmcecs" else self.state
        self.hyper.update(step_size=float(hmc.adapt_state.step_size), warmup=n_warmup)
        post = kernel.postprocess_fn((), {})

        def run(state, n):
            def body(s, _):
                s = kernel.sample(s, (), {})
                return s, (s.z, s.accept_prob)

            return jax.lax.scan(body, state, None, length=n)

        self._run = jax.jit(run, static_argnums=1)
        self._post = jax.jit(jax.vmap(post))

    def _go(self, state, n: int):
        out = self._run(state, n)
        self.jax.block_until_ready(out)
        return out

    def prepare(self) -> None:
        self._go(self.state, self.n_time)

    def time_once(self) -> float:
        (self.state, _), cpu = _cpu(self._go, self.state, self.n_time)
        return cpu / self.n_time

    def chain(self, n: int, seed: int = CHAIN_SEED):
        import numpy as np

        st = self.warm_state._replace(rng_key=self.jax.random.key(seed))
        _, (z, acc) = self._go(st, n)
        return np.asarray(self._post(z)["theta"]), float(np.mean(np.asarray(acc)))


# ----------------------------------------------------------------------------- one target
def _problem(target: str, quick: bool):
    from samplers import registry

    if quick:
        return registry.build_problem(target, 0, N=QUICK_N, beta=NBETA[target] / QUICK_N)
    return registry.build_problem(target, 0)


def _exact_minibatch() -> list[str]:
    from bench.perf import pairs
    from samplers.registry import get_method

    return [m for m, twin in pairs("continuous") if get_method(m).exact and twin in FULL_BATCH]


def _reference(target: str, prob, quick: bool, log) -> tuple[Any, Any, str]:
    """(mean, sd, source) of the posterior: exact draws where the problem has them, else a long NUTS chain."""
    import numpy as np

    if prob.reference is not None:
        draws = prob.reference(np.random.default_rng(7), 20_000 if quick else 200_000)
        return draws.mean(axis=0), draws.std(axis=0), "exact draws"
    x0 = prob.init(np.random.default_rng(0))
    ref = NumpyroSide("nuts", prob.model, x0, 300 if quick else 1000)
    draws, _ = ref.chain(1000 if quick else 4000, seed=REFERENCE_SEED)
    log(f"peers {target}: reference NUTS chain of {len(draws)} draws")
    return draws.mean(axis=0), draws.std(axis=0), "NUTS (NumPyro)"


def _ess_row(draws, ref_mean, ref_sd) -> dict[str, float]:
    import numpy as np

    from bench.metrics import ess

    x = np.asarray(draws, float)[len(draws) // 5 :]
    eb, ei = ess(x, "bulk"), ess(x, "identity")
    return {
        "ess_iters": len(x),
        "ess_bulk_min": float(np.min(eb)),
        "ess_identity_min": float(np.min(ei)),
        "ess_bulk_per_iter": float(np.min(eb)) / len(x),
        "ess_identity_per_iter": float(np.min(ei)) / len(x),
        "max_mean_diff_sd": float(np.max(np.abs(x.mean(axis=0) - ref_mean) / ref_sd)),
    }


def target_rows(target: str, quick: bool, rounds: int, budget: float, ess_seconds: float, log) -> list[dict]:
    import numpy as np

    from bench.perf import _paper_hyper, alternate

    prob = _problem(target, quick)
    N, d = prob.model.X.shape
    ref_mean, ref_sd, ref_src = _reference(target, prob, quick, log)
    x0 = np.array(ref_mean, dtype=float)
    sides: list[Side] = []
    steps = {}
    for m in FULL_BATCH + tuple(_exact_minibatch()):
        hyper = _paper_hyper(m, target, prob, tune=True)
        steps[m] = hyper
        sides.append(OursSide(m, prob, hyper, x0, f"ours_{m}"))
        log(f"peers {target}: {m} {json.dumps(hyper)}")
    for m in FULL_BATCH:
        sides.append(BlackjaxSide(m, prob.model, float(steps[m]["step"]), x0))
    n_warm = 200 if quick else 500
    sides.append(NumpyroSide("hmcecs", prob.model, x0, n_warm, ref_mean))
    sides.append(NumpyroSide("nuts", prob.model, x0, n_warm))
    for s in sides:
        s.calibrate(budget)
    load0 = os.getloadavg()[0]
    t = alternate([s.time_once for s in sides], rounds)
    load1 = os.getloadavg()[0]
    med = np.median(t, axis=0)
    rows = []
    names = [s.name for s in sides]
    for j, s in enumerate(sides):
        n_ess = int(min(max(ess_seconds / med[j], 500 if not quick else 300), 50_000))
        draws, acc = s.chain(n_ess)
        row = {
            "target": target,
            "N": N,
            "d": d,
            "impl": s.impl,
            "method": s.method,
            "hyper": json.dumps(s.hyper, default=float),
            "us_per_iter": med[j] * 1e6,
            "us_per_iter_min": float(t[:, j].min()) * 1e6,
            "us_per_iter_max": float(t[:, j].max()) * 1e6,
            "ns_per_datum": med[j] * 1e9 / N,
            "rounds": rounds,
            "accept": acc,
            **_ess_row(draws, ref_mean, ref_sd),
            "reference": ref_src,
            "load1_start": load0,
            "load1_end": load1,
        }
        row["ess_bulk_per_s"] = row["ess_bulk_per_iter"] / med[j]
        row["ess_identity_per_s"] = row["ess_identity_per_iter"] / med[j]
        if s.impl == "blackjax":  # paired: the same round's time of the project's twin
            ours = t[:, names.index(f"ours_{s.method}")]
            row["peer_over_ours"] = float(np.median(t[:, j] / ours))
            row["peer_over_ours_min"] = float(np.min(t[:, j] / ours))
            row["peer_over_ours_max"] = float(np.max(t[:, j] / ours))
        rows.append(row)
        log(
            f"peers {target} {s.name}: {med[j] * 1e6:.1f} us/it ({t[:, j].min() * 1e6:.1f}-"
            f"{t[:, j].max() * 1e6:.1f}), acc {acc:.2f}, ESS/s bulk {row['ess_bulk_per_s']:.3g} identity "
            f"{row['ess_identity_per_s']:.3g}, mean diff {row['max_mean_diff_sd']:.3f} sd"
            + (f", BlackJAX / ours {row['peer_over_ours']:.2f}" if "peer_over_ours" in row else "")
        )
    ecs = next(r for r in rows if r["method"] == "hmcecs")
    for r in rows:  # ESS/s relative to NumPyro's HMCECS
        r["ess_bulk_per_s_over_hmcecs"] = r["ess_bulk_per_s"] / ecs["ess_bulk_per_s"]
        r["ess_identity_per_s_over_hmcecs"] = r["ess_identity_per_s"] / ecs["ess_identity_per_s"]
    return rows


# ----------------------------------------------------------------------------- outputs
def figure(df, figs_dir) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(2, 2, figsize=(11, 6.5))
    colors = {"ours": "C0", "blackjax": "C1", "numpyro": "C2"}
    for c, target in enumerate(TARGETS):
        g = df[df.target == target]
        if g.empty:
            continue
        labels = [f"{r.impl}\n{r.method}" for r in g.itertuples()]
        x = np.arange(len(g))
        col = [colors[i] for i in g.impl]
        axes[0, c].bar(x, g.us_per_iter, color=col)
        axes[0, c].set_yscale("log")
        axes[0, c].set_ylabel("µs per iteration (median)")
        axes[0, c].set_title(f"{SHORT[target]}, N = {int(g.N.iloc[0]):.0e}")
        axes[1, c].bar(x, g.ess_bulk_per_s, color=col)
        axes[1, c].set_yscale("log")
        axes[1, c].set_ylabel("bulk ESS / s (min over dims)")
        for ax in axes[:, c]:
            ax.set_xticks(x, labels, rotation=60, fontsize=7)
    fig.tight_layout()
    Path(figs_dir).mkdir(parents=True, exist_ok=True)
    for ext in ("png", "pdf"):
        fig.savefig(Path(figs_dir) / f"peers.{ext}", dpi=130)
    plt.close(fig)


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {m: version(m) for m in ("jax", "jaxlib", "blackjax", "numpyro", "numba")}


def run_peers(quick: bool, out: str, figs: str, log=print) -> Path:
    import pandas as pd

    from bench.cells import code_commit
    from bench.perf_compare import host_cpu
    from samplers.result import atomic_write_text

    rounds, budget, ess_s = (3, 0.1, 1.5) if quick else (5, 0.3, 8.0)
    rows = []
    for target in TARGETS:
        rows += target_rows(target, quick, rounds, budget, ess_s, log)
    df = pd.DataFrame(rows)
    for k, v in versions().items():
        df[f"{k}_version"] = v
    df["quick"] = quick
    df["seed"], df["reference_seed"] = CHAIN_SEED, REFERENCE_SEED
    df["code_commit"], df["cpu"] = code_commit(), host_cpu()
    atomic_write_text(out, df.to_csv(index=False, float_format="%.6g"))
    figure(df, figs)
    return Path(out)


def redraw(table: str | os.PathLike, out: str | os.PathLike, figs: str | os.PathLike) -> Path:
    """The table and figure of a stored ``mcmc-bench peers`` run (results/store/peers.csv.xz); measures
    nothing and needs no peer package."""
    import pandas as pd

    from samplers.result import atomic_write_text

    try:
        df = pd.read_csv(table)
    except (OSError, ValueError) as e:
        raise ValueError(f"{table}: not a readable peers table ({e})") from None
    need = {"target", "impl", "method", "us_per_iter", "ess_bulk_per_s"}
    if not need <= set(df.columns):
        raise ValueError(f"{table}: not a peers table (missing {sorted(need - set(df.columns))})")
    atomic_write_text(out, df.to_csv(index=False, float_format="%.6g"))
    figure(df, figs)
    return Path(out)


def placeholder(out: str | os.PathLike, figs: str | os.PathLike, missing: list[str]) -> Path:
    """What the workflow's ``peers`` rule leaves where the extra is absent: a one-row table whose
    ``status`` says so and a figure with the same words (so the report shows it, never a crash)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from samplers.result import atomic_write_text

    msg = f"{INSTALL_HINT}; missing: {', '.join(missing)}"
    row = {"status": "peers not installed", "message": msg}
    atomic_write_text(out, pd.DataFrame([row]).to_csv(index=False))
    fig, ax = plt.subplots(figsize=(8, 1.6))
    ax.axis("off")
    ax.text(0.5, 0.5, msg, ha="center", va="center", fontsize=10, wrap=True)
    Path(figs).mkdir(parents=True, exist_ok=True)
    for ext in ("png", "pdf"):
        fig.savefig(Path(figs) / f"peers.{ext}", dpi=130)
    plt.close(fig)
    return Path(out)


def _cmd_peers(args: argparse.Namespace) -> int:
    if args.from_table:
        redraw(args.from_table, args.out, args.figs)
        print(args.out)
        return 0
    miss = missing_peers()
    if miss:
        if args.if_missing == "placeholder":
            placeholder(args.out, args.figs, miss)
            print(f"{INSTALL_HINT}; wrote the placeholder {args.out}", file=sys.stderr)
            return 0
        print(f"{INSTALL_HINT}; missing: {', '.join(miss)}", file=sys.stderr)
        return 2
    run_peers(args.quick, args.out, args.figs, log=lambda s: print(s, file=sys.stderr, flush=True))
    print(args.out)
    return 0


def register(subparsers) -> None:
    """Add ``mcmc-bench peers`` (nothing heavy is imported to build the parser)."""
    p = subparsers.add_parser("peers", help="side by side with BlackJAX and NumPyro (optional extra [peers])")
    p.add_argument("--quick", action="store_true", help=f"N = {QUICK_N:.0e} (N beta kept), short rounds")
    p.add_argument("--out", default="results/peers.csv")
    p.add_argument("--figs", default="paper_figs")
    p.add_argument(
        "--from-table",
        default=None,
        metavar="CSV",
        help="measure nothing: write the table and figure of a stored run (results/store/peers.csv.xz)",
    )
    p.add_argument(
        "--if-missing",
        choices=("fail", "placeholder"),
        default="fail",
        help="without the extra: exit 2 (fail) or write a 'peers not installed' table and figure, exit 0",
    )
    p.set_defaults(func=_cmd_peers)
