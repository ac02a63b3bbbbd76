"""Deliberately broken herded-family kernels (negative controls for verify/herded_checks.py).

Each is an njit copy of the real sweep loop with ONE bug:

* ``BUG_SIGN``: Alg. 1 step 4 with the wrong sign, w <- w - pi + x_i (vector rule: w - p + e_x);
* ``BUG_MARGINAL``: weights keyed by the variable only (neighbour configuration ignored);
* ``BUG_GE``: step 3 uses w >= 0 instead of w > 0 (ties go to 1);
* MCQMC ``repeat_mcqmc_sweep_unrotated_last``: the last site of a sweep uses its CUD value without the
  Cranley-Patterson rotation.
The short-period MCQMC mutant needs no code: ``run_mcqmc_gibbs(..., m=small)`` reuses the sequence.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers.kernels.herded import HerdIndex, conditional_probs, neighbour_code
from samplers.kernels.mcqmc import mcqmc_uniform
from samplers.targets.factor_graph import FactorGraph, conditional_logits, sample_logits

BUG_SIGN, BUG_MARGINAL, BUG_GE = 1, 2, 3


@njit(cache=True)
def herded_sweeps_mutant(fg: FactorGraph, idx: HerdIndex, x, W, seen, n_sweeps: int, bug: int):
    """Dense-storage herded Gibbs sweeps with one bug; rows = state after each sweep."""
    out = np.empty((n_sweeps, fg.n), dtype=np.int64)
    K = fg.card.max()
    logits = np.empty(K)
    p = np.empty(K)
    for t in range(n_sweeps):
        for i in range(fg.n):
            conditional_probs(fg, x, i, logits, p)
            s = idx.off[i] if bug == BUG_MARGINAL else idx.off[i] + neighbour_code(idx, x, i)
            Ki = fg.card[i]
            if not seen[s]:
                seen[s] = True
                if Ki == 2:
                    W[s, 0] = p[1] - 0.5
                else:
                    for v in range(Ki):
                        W[s, v] = p[v]
            if Ki == 2:
                w = W[s, 0]
                if bug == BUG_GE:
                    xi = 1 if w >= 0 else 0
                else:
                    xi = 1 if w > 0 else 0
                if bug == BUG_SIGN:
                    W[s, 0] = w - p[1] + xi
                else:
                    W[s, 0] = w + p[1] - xi
            else:
                xi = 0
                for v in range(1, Ki):
                    if W[s, v] > W[s, xi]:
                        xi = v
                sg = -1.0 if bug == BUG_SIGN else 1.0
                for v in range(Ki):
                    W[s, v] += sg * p[v]
                W[s, xi] -= sg
            x[i] = xi
        out[t] = x
    return out


@njit(cache=True)
def repeat_mcqmc_sweep_unrotated_last(fg: FactorGraph, x0, u, d: int, k: int, rng, reps: int):
    """Mutant of verify.herded_checks.repeat_mcqmc_sweep: the last site ignores its rotation."""
    out = np.empty((reps, fg.n), dtype=np.int64)
    logits = np.empty(fg.card.max())
    x = x0.copy()
    for r in range(reps):
        x[:] = x0
        shift = np.empty(fg.n)
        for j in range(fg.n):
            shift[j] = rng.random()
        shift[fg.n - 1] = 0.0
        for i in range(fg.n):
            conditional_logits(fg, x, i, logits)
            x[i] = sample_logits(logits, fg.card[i], mcqmc_uniform(u, shift, d, k, i))
        out[r] = x
    return out
