"""Models of the herded-Gibbs experiments (Chen et al. 2016 §3-§4) as :class:`FactorGraph` data.

* :func:`two_variable` — §4.1 / Table 1 (reconstructed): P(0,0) = 1/4 - eps,
  P(0,1) = P(1,0) = eps, P(1,1) = 3/4 - eps (0 < eps < 1/4); one pairwise factor log P.
* :func:`four_cycle` — §4.2: X1..X4 with the edges of the complete graph minus X1-X4 and X2-X3,
  i.e. the cycle 1-2-4-3-1 (0-based edges (0,1), (1,3), (3,2), (2,0)); unary 2-vectors and pairwise
  2x2 tables of energies drawn i.i.d. N(0,1) (full tables; the paper gives no parametrisation).
* :func:`independent` — empty graph with marginals P(X_i = 1) = p_i (Thm 2).
* :func:`ising_denoise` — §4.3 (eqs. 16-19): x_i in {-1,+1} (label 0 <-> -1, 1 <-> +1) on the
  4-neighbour lattice, factor J x_i x_j per edge (eq. 17 read as a sum over unordered pairs) and
  unary log N(y_i; x_i, sigma^2); full conditional P(x_i=+1|.) = sigmoid(2J sum_j x_j + 2 y_i/sigma^2).
* :func:`random_complete` — fully connected binary model with random pairwise energies (tests).
"""

from __future__ import annotations

import itertools

import numpy as np

from samplers.targets.factor_graph import FactorGraph, from_tables


def two_variable(eps: float) -> FactorGraph:
    """§4.1 two-variable complete graph (Table 1 reconstruction)."""
    if not 0.0 < eps < 0.25:
        raise ValueError(f"eps must be in (0, 1/4), got {eps!r}")
    return from_tables([2, 2], [((0, 1), np.log(two_variable_joint(eps)))])


def two_variable_joint(eps: float) -> np.ndarray:
    """Table 1 (reconstructed): [[1/4 - eps, eps], [eps, 3/4 - eps]] indexed [x1, x2]."""
    return np.array([[0.25 - eps, eps], [eps, 0.75 - eps]])


FOUR_CYCLE_EDGES = ((0, 1), (1, 3), (3, 2), (2, 0))


def four_cycle(seed: int) -> FactorGraph:
    """§4.2 four-variable incomplete graph with N(0,1) unary and pairwise energies."""
    rng = np.random.default_rng(seed)
    unary = rng.standard_normal((4, 2))
    pair = rng.standard_normal((len(FOUR_CYCLE_EDGES), 2, 2))
    factors = [((i,), unary[i]) for i in range(4)]
    factors += [(e, pair[k]) for k, e in enumerate(FOUR_CYCLE_EDGES)]
    return from_tables([2, 2, 2, 2], factors)


def independent(p) -> FactorGraph:
    """Empty graph: independent bits with P(X_i = 1) = p_i in (0, 1)."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or np.any(p <= 0) or np.any(p >= 1):
        raise ValueError("p must be a non-empty vector in (0, 1)")
    return from_tables(np.full(p.size, 2), [((i,), np.log([1 - q, q])) for i, q in enumerate(p)])


def random_complete(seed: int, n: int, scale: float = 1.0, card: int = 2) -> FactorGraph:
    """Fully connected model: N(0, scale^2) unary and pairwise tables on all pairs."""
    if n < 1 or card < 2:
        raise ValueError("need n >= 1 and card >= 2")
    rng = np.random.default_rng(seed)
    factors = [((i,), scale * rng.standard_normal(card)) for i in range(n)]
    factors += [
        ((i, j), scale * rng.standard_normal((card, card))) for i, j in itertools.combinations(range(n), 2)
    ]
    return from_tables(np.full(n, card), factors)


def random_sparse(seed: int, n: int, p_edge: float = 0.4, scale: float = 1.0, card: int = 2) -> FactorGraph:
    """Random graph (each pair an edge with prob. p_edge) with N(0, scale^2) tables (tests)."""
    rng = np.random.default_rng(seed)
    factors = [((i,), scale * rng.standard_normal(card)) for i in range(n)]
    factors += [
        ((i, j), scale * rng.standard_normal((card, card)))
        for i, j in itertools.combinations(range(n), 2)
        if rng.random() < p_edge
    ]
    return from_tables(np.full(n, card), factors)


def grid_edges(rows: int, cols: int) -> np.ndarray:
    """4-neighbour lattice edges (i, j), i < j, raster order."""
    idx = np.arange(rows * cols).reshape(rows, cols)
    e = [
        np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
        np.stack([idx[:-1, :].ravel(), idx[1:, :].ravel()], 1),
    ]
    return np.concatenate(e).astype(np.int64)


def ising_denoise(y: np.ndarray, sigma: float, J: float = 1.0) -> FactorGraph:
    """§4.3 Ising prior + Gaussian likelihood on the observed image ``y`` (rows x cols floats).

    Built directly in the ``from_tables`` layout (tables shifted by their minimum)."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 2 or y.size < 2 or not np.all(np.isfinite(y)):
        raise ValueError("y must be a finite 2-D image")
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be > 0, got {sigma!r}")
    rows, cols = y.shape
    n = rows * cols
    E = grid_edges(rows, cols)
    nE = E.shape[0]
    yv = y.ravel()
    un = np.stack([-((yv + 1.0) ** 2), -((yv - 1.0) ** 2)], 1) / (2.0 * sigma**2)  # x=-1, x=+1
    un -= un.min(axis=1, keepdims=True)
    pair = J * np.array([[1.0, -1.0], [-1.0, 1.0]])
    pair = pair - pair.min()
    fac_ptr = np.concatenate([np.arange(n + 1), n + 2 * np.arange(1, nE + 1)]).astype(np.int64)
    fac_vars = np.concatenate([np.arange(n), E.ravel()]).astype(np.int64)
    fac_stride = np.concatenate([np.ones(n, np.int64), np.tile(np.array([2, 1], np.int64), nE)])
    tab_ptr = np.concatenate([2 * np.arange(n + 1), 2 * n + 4 * np.arange(1, nE + 1)]).astype(np.int64)
    tables = np.concatenate([un.ravel(), np.tile(pair.ravel(), nE)])
    M = np.concatenate([un.max(axis=1), np.full(nE, pair.max())])
    inc: list[list[int]] = [[k] for k in range(n)]
    for k, (i, j) in enumerate(E):
        inc[i].append(n + k)
        inc[j].append(n + k)
    var_ptr = np.zeros(n + 1, dtype=np.int64)
    var_ptr[1:] = np.cumsum([len(a) for a in inc])
    var_fac = np.array([f for a in inc for f in a], dtype=np.int64)
    return FactorGraph(
        int(n),
        np.full(n, 2, dtype=np.int64),
        fac_ptr,
        fac_vars,
        fac_stride,
        tab_ptr,
        tables,
        M,
        var_ptr,
        var_fac,
    )


def toy_image(rows: int = 24, cols: int = 24) -> np.ndarray:
    """Synthetic +-1 test image (a filled rectangle and a bar), for tests and smoke runs."""
    if rows < 4 or cols < 4:
        raise ValueError("toy image needs rows, cols >= 4")
    x = -np.ones((rows, cols), dtype=np.int8)
    x[rows // 4 : 3 * rows // 4, cols // 4 : cols // 2] = 1
    x[rows // 6 : rows // 6 + max(1, rows // 8), cols // 2 :] = 1
    return x


def noisy_observation(image: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """y = x + N(0, sigma^2) for a +-1 image (mu_{+-1} = +-1)."""
    return image.astype(np.float64) + sigma * rng.standard_normal(image.shape)
