"""Herded Gibbs family (Chen et al. 2016): ``herded_gibbs``, ``herded_gibbs_shared``,
``mcqmc_gibbs``, ``mean_field``, ``annealed_gibbs``, ``viterbi`` and the §4 targets.

Iteration unit: one *sweep* (all n sites in the fixed order 0..n-1) for every method here; the
sample row of a sweep is the state at its end (Def. 1). ``viterbi`` returns one row (the MAP).
The plain ``gibbs`` baseline (samplers.methods.baselines) counts single-site updates: use
``scan="systematic", thin=n`` for per-sweep rows.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numba import njit

from samplers.kernels import annealed as AN
from samplers.kernels import herded as HG
from samplers.kernels import mcqmc as MQ
from samplers.kernels import mean_field as MF
from samplers.kernels.viterbi import viterbi_decode
from samplers.problem import Problem
from samplers.result import ChainResult
from samplers.run import as_generator, check_positive, drive
from samplers.specs import MethodSpec, TargetSpec
from samplers.targets import chain_crf as CC
from samplers.targets import herded_models as HM
from samplers.targets.factor_graph import FactorGraph, exact_joint


def _fg(problem: Problem) -> FactorGraph:
    if not isinstance(problem.model, FactorGraph):
        raise ValueError(f"{problem.name} is not a discrete factor-graph target")
    return problem.model


def _labels(problem: Problem, x0) -> np.ndarray | None:
    if x0 is None:
        return None
    x0 = np.asarray(x0)
    if x0.shape != (problem.dim,) or not np.all(np.isfinite(x0)) or np.any(x0 != np.round(x0)):
        raise ValueError(f"initial state must be {problem.dim} integer labels")
    x0 = x0.astype(np.int64)
    if np.any(x0 < 0) or np.any(x0 >= problem.model.card):
        raise ValueError("initial state outside the variables' domains")
    return x0


# ============================================================================ herded Gibbs
def _herd_init(fg, x0, idx, n_slots, cap):
    return (idx, *HG.herded_gibbs_init(fg, np.asarray(x0, dtype=np.int64), n_slots, cap))


def _finalize_best(state, res: ChainResult) -> None:
    res.extra["best_x"] = np.asarray(state[-1]).copy()


def _check_status(res: ChainResult) -> ChainResult:
    st = res.extra.pop("trace_0", None)
    if st is not None and np.any(st != 0):
        raise RuntimeError("herded_gibbs: hash table full; pass a larger capacity= or storage='dense'")
    return res


def run_herded_gibbs(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    init: str = "mid",
    storage: str = "auto",
    capacity: int | None = None,
    track_best: bool = False,
    shared: bool = False,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """Alg. 1 (binary) / §2 vector rule (K > 2); weights per (variable, neighbour configuration);
    ``shared`` keys them by the distinct full-conditional value (§4.3). ``init``: "mid" (w = pi - 1/2)
    or "random" (w = pi - U). ``track_best`` keeps the highest-probability sweep state per connected
    component in ``result.extra["best_x"]`` (§4.4 MAP prediction)."""
    fg = _fg(problem)
    inits = {"mid": HG.INIT_MID, "random": HG.INIT_RANDOM}
    if init not in inits:
        raise ValueError(f"init must be 'mid' or 'random', got {init!r}")
    if capacity is not None:
        check_positive("capacity", capacity, integer=True)
    idx, n_slots, cap = HG.build_index(fg, shared=shared, storage=storage, capacity=capacity)
    name = "herded_gibbs_shared" if shared else "herded_gibbs"
    res = drive(
        name,
        problem,
        n_iter,
        seed,
        _herd_init,
        (idx, n_slots, cap),
        HG.herded_gibbs_sample,
        (inits[init], bool(track_best)),
        thin=thin,
        x0=_labels(problem, x0),
        progress=progress,
        finalize=_finalize_best if track_best else None,
        hyper={
            "init": init,
            "storage": "hashed" if idx.mode == HG.HASHED else "dense",
            "n_slots": n_slots,
            "track_best": track_best,
        },
    )
    return _check_status(res)


def run_herded_gibbs_shared(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    init: str = "mid",
    track_best: bool = False,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """Herded Gibbs - shared (§4.3): one weight per distinct conditional of each variable."""
    return run_herded_gibbs(
        problem,
        n_iter,
        seed,
        init=init,
        storage="dense",
        shared=True,
        track_best=track_best,
        thin=thin,
        x0=x0,
        progress=progress,
    )


# ============================================================================ MCQMC Gibbs
def lfsr_size_for(n_sweeps: int) -> int:
    """Smallest m >= 2 with 2^m >= n_sweeps (a full period is then used by the run)."""
    return max(2, int(np.ceil(np.log2(max(n_sweeps, 2)))))


def run_mcqmc_gibbs(
    problem: Problem, n_iter: int, seed: Any, *, m: int | None = None, thin: int = 1, x0=None, progress=None
) -> ChainResult:
    """Gibbs driven by an m-bit LFSR CUD sequence (samplers.kernels.mcqmc), Cranley-Patterson rotated
    by the seed. ``m=None``: the smallest LFSR whose period (+ origin) 2^m covers ``n_iter`` sweeps."""
    fg = _fg(problem)
    check_positive("n_iter", n_iter, integer=True)
    m = lfsr_size_for(n_iter) if m is None else m
    u, info = MQ.cud_sequence(m)
    d = MQ.sweep_stride(fg.n, info["period"])
    rng, _ = as_generator(seed)
    shift = rng.random(fg.n)
    res = drive(
        "mcqmc_gibbs",
        problem,
        n_iter,
        rng,
        MQ.mcqmc_gibbs_init,
        (),
        MQ.mcqmc_gibbs_sample,
        (u, shift, d),
        thin=thin,
        x0=_labels(problem, x0),
        progress=progress,
        hyper={
            "m": m,
            "s": info["s"],
            "taps": list(info["taps"]),
            "stride": d,
            "lfsr_source": info["source"],
            "period_fraction_used": n_iter / (info["period"] + 1),
        },
    )
    return res


# ============================================================================ mean field
@njit(cache=True)
def _unary_q0_nb(fg: FactorGraph, x0: np.ndarray, mode: int) -> np.ndarray:
    K = fg.card.max()
    q = np.zeros((fg.n, K))
    lg = np.zeros(K)
    for i in range(fg.n):
        Ki = fg.card[i]
        if mode == 2:
            q[i, x0[i]] = 1.0
            continue
        lg[:] = 0.0
        if mode == 0:
            for k in range(fg.var_ptr[i], fg.var_ptr[i + 1]):
                f = fg.var_fac[k]
                if fg.fac_ptr[f + 1] - fg.fac_ptr[f] == 1:
                    for v in range(Ki):
                        lg[v] += fg.tables[fg.tab_ptr[f] + v]
        m = lg[:Ki].max()
        z = 0.0
        for v in range(Ki):
            q[i, v] = np.exp(lg[v] - m)
            z += q[i, v]
        for v in range(Ki):
            q[i, v] /= z
    return q


def _unary_q0(fg: FactorGraph, x0: np.ndarray, mode: str) -> np.ndarray:
    """Initial marginals: "unary" (softmax of the unary factors), "uniform", "state" (one-hot x0)."""
    return _unary_q0_nb(fg, np.asarray(x0, dtype=np.int64), {"unary": 0, "uniform": 1, "state": 2}[mode])


def run_mean_field(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    damping: float = 1.0,
    order: str = "sequential",
    q_init: str = "unary",
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """Damped naive mean field (samplers.kernels.mean_field). ``q_init``: "unary" (q_i from the
    unary factors only; PMTK mu = tanh(y/sigma^2) for denoising), "uniform" or "state" (one-hot x0).
    Rows are the mean labels sum_v v q_i(v) (floats)."""
    _fg(problem)
    if not (isinstance(damping, (int, float)) and 0.0 < damping <= 1.0):
        raise ValueError(f"damping D must be in (0, 1], got {damping!r}")
    orders = {"sequential": MF.SEQUENTIAL, "parallel": MF.PARALLEL}
    if order not in orders:
        raise ValueError(f"order must be 'sequential' or 'parallel', got {order!r}")
    if q_init not in ("unary", "uniform", "state"):
        raise ValueError(f"q_init must be 'unary', 'uniform' or 'state', got {q_init!r}")

    def init(model, x, mode):
        return MF.mean_field_init(model, _unary_q0(model, np.asarray(x, dtype=np.int64), mode))

    return drive(
        "mean_field",
        problem,
        n_iter,
        seed,
        init,
        (q_init,),
        MF.mean_field_sample,
        (float(damping), orders[order]),
        thin=thin,
        x0=_labels(problem, x0),
        progress=progress,
        hyper={"damping": damping, "order": order, "q_init": q_init},
    )


# ============================================================================ annealed Gibbs
def run_annealed_gibbs(
    problem: Problem,
    n_iter: int,
    seed: Any,
    *,
    track_best: bool = True,
    thin: int = 1,
    x0=None,
    progress=None,
) -> ChainResult:
    """Linear annealing T_k = 1 - k/(n_iter-1) over ``n_iter`` sweeps (samplers.kernels.annealed);
    ``extra["best_x"]``: best-probability state per connected component (Stanford NER style)."""
    fg = _fg(problem)
    comp, fac_comp, n_comp = HG.components(fg)
    idx = HG.HerdIndex(
        np.zeros(1, np.int64),
        np.zeros(0, np.int64),
        np.zeros(0, np.int64),
        np.zeros(1, np.int64),
        np.zeros(0, np.int64),
        HG.DENSE,
        comp,
        fac_comp,
        n_comp,
    )

    def init(model, x, idx_):
        return (idx_, *AN.annealed_gibbs_init(model, np.asarray(x, dtype=np.int64)))

    return drive(
        "annealed_gibbs",
        problem,
        n_iter,
        seed,
        init,
        (idx,),
        AN.annealed_gibbs_sample,
        (int(n_iter), bool(track_best)),
        thin=thin,
        x0=_labels(problem, x0),
        progress=progress,
        finalize=_finalize_best if track_best else None,
        hyper={"schedule": "linear", "track_best": track_best},
    )


# ============================================================================ Viterbi
def run_viterbi(
    problem: Problem, n_iter: int, seed: Any, *, thin: int = 1, x0=None, progress=None
) -> ChainResult:
    """Exact MAP of a chain model (``problem.meta["chain"]``); one row; ``n_iter`` is ignored."""
    chain = problem.meta.get("chain")
    if not isinstance(chain, CC.ChainCRF):
        raise ValueError(f"viterbi needs a chain model (problem.meta['chain']); {problem.name} has none")
    check_positive("n_iter", n_iter, integer=True)
    _, seed_str = as_generator(seed)
    t0 = time.perf_counter()
    viterbi_decode(chain.unary[:2], chain.trans, np.array([0, min(2, chain.unary.shape[0])]))
    comp_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    x, scores = viterbi_decode(chain.unary, chain.trans, chain.ptr)
    el = time.perf_counter() - t1
    if progress is not None:
        progress(n_iter)
    res = ChainResult(
        "viterbi",
        problem.name,
        seed_str,
        1,
        1,
        x[None, :],
        np.ones(1, bool),
        np.array([chain.unary.size * chain.unary.shape[1]]),
        el,
        comp_s,
    )
    res.extra["best_x"] = x
    res.extra["map_score"] = float(scores.sum())
    return res


METHODS = [
    MethodSpec(
        "herded_gibbs",
        "herded",
        run_herded_gibbs,
        ("discrete",),
        {"init": "mid", "storage": "auto", "capacity": None, "track_best": False, "shared": False},
        False,
        "Chen et al. 2016 Alg. 1",
        "herded Gibbs: deterministic herding of every full conditional, fixed scan",
        step_param=None,
    ),
    MethodSpec(
        "herded_gibbs_shared",
        "herded",
        run_herded_gibbs_shared,
        ("discrete",),
        {"init": "mid", "track_best": False},
        False,
        "Chen et al. 2016 §4.3",
        "herded Gibbs with weights shared per distinct conditional",
        step_param=None,
    ),
    MethodSpec(
        "mcqmc_gibbs",
        "herded",
        run_mcqmc_gibbs,
        ("discrete",),
        {"m": None},
        False,
        "Chen, Dick & Owen 2011; Chen et al. 2012 (Chen et al. 2016 §4.1)",
        "systematic-scan Gibbs driven by a full-period LFSR CUD sequence",
        step_param=None,
    ),
    MethodSpec(
        "mean_field",
        "herded",
        run_mean_field,
        ("discrete",),
        {"damping": 1.0, "order": "sequential", "q_init": "unary"},
        False,
        "MLaPP §21.3 (Chen et al. 2016 §4.3)",
        "damped naive mean field",
        step_param=None,
    ),
    MethodSpec(
        "annealed_gibbs",
        "herded",
        run_annealed_gibbs,
        ("discrete",),
        {"track_best": True},
        False,
        "Finkel et al. 2005 (Chen et al. 2016 §4.4)",
        "systematic Gibbs with a linear cooling schedule, best state kept",
        step_param=None,
    ),
    MethodSpec(
        "viterbi",
        "herded",
        run_viterbi,
        ("discrete",),
        {},
        True,
        "Viterbi 1967 (Chen et al. 2016 §4.4)",
        "exact MAP of chain models (max-sum)",
        step_param=None,
    ),
]


# ============================================================================ targets
def _random_init(fg: FactorGraph):
    card = fg.card

    def init(rng: np.random.Generator) -> np.ndarray:
        return np.floor(rng.random(fg.n) * card).astype(np.int64)

    return init


def _meta_exact(fg: FactorGraph) -> dict:
    X, p = exact_joint(fg)
    return {"states": X, "joint": p}


def _problem(name: str, fg: FactorGraph, meta: dict, init=None, exact: bool = True) -> Problem:
    if exact:
        meta = {**_meta_exact(fg), **meta}
    return Problem(name, "discrete", fg, fg.n, init or _random_init(fg), meta=meta)


def build_two_variable(seed, eps: float) -> Problem:
    """§4.1 Table 1 (reconstructed): P = [[1/4-eps, eps], [eps, 3/4-eps]]; init x0 = (1, 1)."""
    fg = HM.two_variable(eps)
    return _problem(
        "hg_two_variable",
        fg,
        {"eps": eps, "table": HM.two_variable_joint(eps)},
        init=lambda rng: np.ones(2, dtype=np.int64),
    )


def build_four_cycle(seed, draw: int) -> Problem:
    """§4.2 cycle 1-2-4-3-1 with N(0,1) energies drawn with ``draw``."""
    return _problem("hg_four_cycle", HM.four_cycle(draw), {"draw": draw, "edges": HM.FOUR_CYCLE_EDGES})


def build_independent(seed, p: tuple) -> Problem:
    return _problem("hg_independent", HM.independent(p), {"p": np.asarray(p, float)})


def _denoise_problem(name: str, image: np.ndarray, sigma: float, J: float, noise_seed: int):
    rng = np.random.default_rng(noise_seed)
    y = HM.noisy_observation(image, sigma, rng)
    fg = HM.ising_denoise(y, sigma, J)
    guess = (y.ravel() > 0).astype(np.int64)  # sign(y): PMTK's best local guess
    return Problem(
        name,
        "discrete",
        fg,
        fg.n,
        lambda r: guess.copy(),
        meta={
            "image": image,
            "y": y,
            "sigma": sigma,
            "J": J,
            "truth01": (image.ravel() > 0).astype(np.int64),
            "coupling": "J x_i x_j per unordered edge (eq. 17 = 1/2 ordered sum)",
        },
    )


def build_ising_denoise(seed, data, sigma: float, J: float, noise_seed: int) -> Problem:
    """§4.3 on the letter-A image (``data`` = +-1 array from bench.datasets.letter_a)."""
    image = np.asarray(data)
    if image.ndim != 2 or not np.all(np.isin(image, (-1, 1))):
        raise ValueError("data must be a +-1 image")
    return _denoise_problem("hg_ising_denoise", image, sigma, J, noise_seed)


def build_ising_denoise_toy(seed, rows: int, cols: int, sigma: float, J: float, noise_seed: int) -> Problem:
    """§4.3 model on a synthetic +-1 image (tests / smoke)."""
    return _denoise_problem("hg_ising_denoise_toy", HM.toy_image(rows, cols), sigma, J, noise_seed)


def _chain_problem(name: str, chain: CC.ChainCRF, meta: dict) -> Problem:
    fg = CC.to_factor_graph(chain)
    exact = fg.n <= 12 and int(np.prod(fg.card.astype(float))) <= 200_000
    return _problem(name, fg, {"chain": chain, **meta}, exact=exact)


def build_chain_toy(seed, n_sent: int, length: int, K: int, score_sd: float) -> Problem:
    """Synthetic chain CRF with N(0, scale^2) scores (seed = draw)."""
    return _chain_problem("hg_chain_toy", CC.random_chain(seed, n_sent, length, K, score_sd), {})


def build_chain_conll2002(
    seed, data, lang: str, n_train: int | None, n_test: int | None, epochs: int
) -> Problem:
    """§4.4 counterpart: CoNLL-2002 NER chain CRF, averaged-perceptron weights trained on the
    ``{lang}.train`` split (first ``n_train`` sentences), scored on ``{lang}.testb``.
    ``data`` = {"train": ..., "test": ...} or the ``conll2002`` named dataset ({"esp.train", ...,
    "esp.testb", ...}); sentences of (word, pos, tag) tuples."""
    if not isinstance(data, dict):
        raise ValueError("data must be a dict of sentence lists")
    tr = data.get("train", data.get(f"{lang}.train"))
    te = data.get("test", data.get(f"{lang}.testb"))
    if tr is None or te is None:
        raise ValueError(f"data has no train/test split for lang {lang!r}")
    train = list(tr)[:n_train]
    test = list(te)[:n_test]
    dev = data.get("dev", data.get(f"{lang}.testa"))  # scale beta fitted here when present
    chain, info = CC.train_chain_crf(
        train, test, epochs=epochs, seed=0, dev_sents=None if dev is None else list(dev)
    )
    return _chain_problem("hg_chain_conll2002", chain, {**info, "lang": lang})


TARGETS = [
    TargetSpec(
        "hg_two_variable",
        "discrete",
        build_two_variable,
        {"eps": 0.1},
        "Chen et al. 2016 §4.1, Table 1 (reconstructed)",
        "two-variable complete graph",
    ),
    TargetSpec(
        "hg_four_cycle",
        "discrete",
        build_four_cycle,
        {"draw": 1},
        "Chen et al. 2016 §4.2",
        "four-variable incomplete graph (cycle), N(0,1) energies",
    ),
    TargetSpec(
        "hg_independent",
        "discrete",
        build_independent,
        {"p": (float(np.sqrt(2) - 1), float(np.sqrt(3) - 1), float(np.sqrt(5) - 2))},
        "Chen et al. 2016 Thm 2",
        "empty graph (independent bits)",
    ),
    TargetSpec(
        "hg_ising_denoise",
        "discrete",
        build_ising_denoise,
        {"sigma": 4.0, "J": 1.0, "noise_seed": 0},
        "Chen et al. 2016 §4.3",
        "Ising-prior denoising of the letter-A image",
        data="letterA",
    ),
    TargetSpec(
        "hg_ising_denoise_toy",
        "discrete",
        build_ising_denoise_toy,
        {"rows": 24, "cols": 24, "sigma": 2.0, "J": 1.0, "noise_seed": 0},
        "Chen et al. 2016 §4.3",
        "Ising-prior denoising of a synthetic image",
    ),
    TargetSpec(
        "hg_chain_toy",
        "discrete",
        build_chain_toy,
        {"n_sent": 2, "length": 4, "K": 3, "score_sd": 1.0},
        "Chen et al. 2016 §4.4",
        "synthetic chain CRF",
    ),
    TargetSpec(
        "hg_chain_conll2002",
        "discrete",
        build_chain_conll2002,
        {"lang": "esp", "n_train": None, "n_test": None, "epochs": 5},
        "Chen et al. 2016 §4.4",
        "CoNLL-2002 NER chain CRF (averaged perceptron)",
        data="conll2002",
        smoke={"n_train": 500, "n_test": 100, "epochs": 3},
    ),
]
