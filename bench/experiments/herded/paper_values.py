"""The numbers printed by Chen, Bornn, de Freitas, Eskelin, Fang & Welling 2016 ("Herded Gibbs Sampling"),
used as ``paper_value`` columns.

* :data:`TABLE2`: Ising-prior denoising, reconstruction error x1e-3 as (mean, sd) over 10 noisy images at
  sigma = 2, 4, 6, 8 (:data:`bench.experiments.herded.denoise.SIGMAS`), per method;
* :data:`TABLE3`: CRF named-entity recognition, (F1, seconds) per (method, sweeps), Viterbi at 0.
"""

from __future__ import annotations

# Table 2 of the paper (x1e-3): mean (sd) over 10 images
TABLE2 = {
    "herded_gibbs": ((21.58, 0.26), (32.07, 0.98), (47.52, 1.64), (67.93, 2.78)),
    "herded_gibbs_shared": ((22.24, 0.29), (31.40, 0.59), (42.62, 1.98), (58.49, 2.86)),
    "gibbs": ((21.63, 0.28), (37.20, 1.23), (63.78, 2.41), (90.27, 3.48)),
    "mean_field_D0.5": ((15.52, 0.30), (41.76, 0.71), (76.24, 1.65), (104.08, 1.93)),
    "mean_field_D1": ((17.67, 0.40), (32.04, 0.76), (51.19, 1.44), (74.74, 2.21)),
}
# Table 3 of the paper: F1 (sd) [seconds] at 100 / 400 / 800 iterations
TABLE3 = {
    ("annealed_gibbs", 100): (84.36, 55.73),
    ("annealed_gibbs", 400): (84.51, 83.49),
    ("annealed_gibbs", 800): (84.61, 115.92),
    ("herded_gibbs", 100): (84.70, 59.08),
    ("herded_gibbs", 400): (84.75, 90.48),
    ("herded_gibbs", 800): (84.81, 132.00),
    ("viterbi", 0): (84.81, 46.74),
}
