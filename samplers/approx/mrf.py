"""Dense binary MRF with all triple potentials (K14 App. F), built directly as a FactorGraph.

D binary variables, one factor per unordered triple {i < j < k} (C(D, 3) factors; 161,700 for D = 100),
each a 2x2x2 table of log-potentials drawn i.i.d. N(0, sd^2). K14 writes "log-normal LN(0, 0.02)";
whether 0.02 is a variance or an sd is unstated (as an sd the conditional log-odds have sd about
2 over the 4851 factors of a variable; as a variance the model is near-deterministic), so ``sd`` is a
parameter (default 0.02). Tables are shifted by their minimum, as :func:`factor_graph.from_tables`.
"""

from __future__ import annotations

import numpy as np

from samplers.targets.factor_graph import FactorGraph


def dense_triple_mrf(D: int, sd: float = 0.02, rng: np.random.Generator | None = None) -> FactorGraph:
    """All-triples binary MRF (same layout as ``from_tables`` would produce, vectorised)."""
    if not (isinstance(D, (int, np.integer)) and D >= 3):
        raise ValueError(f"D must be an integer >= 3, got {D!r}")
    if not sd > 0:
        raise ValueError(f"sd must be > 0, got {sd!r}")
    rng = np.random.default_rng(0) if rng is None else rng
    ii, jj, kk = np.array(
        [(i, j, k) for i in range(D) for j in range(i + 1, D) for k in range(j + 1, D)], dtype=np.int64
    ).T
    F = ii.size
    tabs = rng.normal(0.0, sd, (F, 8))
    tabs -= tabs.min(axis=1, keepdims=True)
    fac_vars = np.stack([ii, jj, kk], axis=1).reshape(-1)
    fac_stride = np.tile(np.array([4, 2, 1], dtype=np.int64), F)
    fac_ptr = np.arange(F + 1, dtype=np.int64) * 3
    tab_ptr = np.arange(F + 1, dtype=np.int64) * 8
    fid = np.repeat(np.arange(F, dtype=np.int64), 3)
    order = np.lexsort((fid, fac_vars))  # by variable, then factor id
    var_fac = fid[order]
    counts = np.bincount(fac_vars, minlength=D)
    var_ptr = np.zeros(D + 1, dtype=np.int64)
    var_ptr[1:] = np.cumsum(counts)
    return FactorGraph(
        int(D),
        np.full(D, 2, dtype=np.int64),
        fac_ptr,
        fac_vars,
        fac_stride,
        tab_ptr,
        tabs.reshape(-1).copy(),
        tabs.max(axis=1),
        var_ptr,
        var_fac,
    )
