"""The numbers printed by Zhang & De Sa 2019 ("Poisson-Minibatching for Gibbs Sampling with Convergence
Rate Guarantees"), §4, used as ``paper_value`` columns: mean factors evaluated per iteration.

* :data:`POTTS_FACTORS`: Potts model (§4.1), Poisson-Gibbs at lambda = 0.1, 1, 5 L^2;
* :data:`SPIN_FACTORS`: continuous spin model (§4.2): 190 for PGITS / PGDA, ">300" proposals per sample
  for the rejection samplers;
* :data:`TGM_FACTORS`: truncated Gaussian mixture (§4.3): 1802 for PGITS / PGDA, ~1000 proposals per
  Gibbs-rejection sample.
"""

from __future__ import annotations

POTTS_FACTORS = {"pg_0.1": 7.0, "pg_1": 28.0, "pg_5": 132.0}
SPIN_FACTORS = {"pgits": 190.0, "pgda": 190.0, "pg_rejection": 300.0, "gibbs_rejection": 300.0}
TGM_FACTORS = {"pgits": 1802.0, "pgda": 1802.0, "gibbs_rejection": 1000.0}
