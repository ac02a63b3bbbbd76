"""What the herded-Gibbs experiments share: child seeds, log-spaced checkpoints and the running-maximum
envelope of an error curve (herded Gibbs' error is not monotone; the figures show max_{tau >= t} e_tau).
"""

from __future__ import annotations

import math

import numpy as np


def _child(seed: np.random.SeedSequence, *idx: int) -> np.random.SeedSequence:
    from bench.cells import child_seed

    return child_seed(seed, *idx)


def _checkpoints(n: int, per_decade: int = 8) -> np.ndarray:
    g = np.unique(np.round(np.logspace(0, math.log10(n), int(per_decade * math.log10(n)) + 1)))
    return np.unique(np.append(g.astype(np.int64), n))


def _envelope(e: np.ndarray) -> np.ndarray:
    return np.maximum.accumulate(e[::-1])[::-1]


# the figures' legends, in the paper's names (unknown ids shown as they are)
LEGEND = {
    "gibbs": "Gibbs",
    "mcqmc_gibbs": "MCQMC Gibbs",
    "herded_gibbs": "herded Gibbs",
    "herded_gibbs_shared": "shared herded Gibbs",
    "mean_field_D0.5": "mean field, D = 0.5 (parallel)",
    "mean_field_D1": "mean field, D = 1 (sequential)",
    "mean_field_D0.5_seq": "mean field, D = 0.5 (sequential)",
    "mean_field_D1_par": "mean field, D = 1 (parallel)",
}


def legend(method: str) -> str:
    return LEGEND.get(method, method)
