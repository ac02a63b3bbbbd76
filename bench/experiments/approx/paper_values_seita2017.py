"""The numbers printed by Seita, Pan, Chen & Canny 2017 ("An Efficient Minibatch Acceptance Test for
Metropolis-Hastings"), used as ``paper_value`` columns.

* :data:`TABLE1`: mean final minibatch size (mean, sd over 10 trials), Gaussian mixture (§6.1);
* :data:`TABLE4`: binned Poisson log-likelihood (eq. 39) and chi^2 of the samples, (loglik, sd, chi^2, sd);
* :data:`TABLE2`: mean minibatch size, logistic regression on MNIST 1v7 (13k and 100k training points);
* :data:`FIG6_MEAN_BATCH`: MHminibatch mean minibatch size on MNIST-100k per RW sd (App. C.3, Fig. 6; sd 0.01
  is Table 2's value).

Table 3 (L_inf error of the correction distribution) is transcribed once, as ``TABLE3`` of
:mod:`verify.approx_checks`, which :mod:`bench.experiments.approx.correction_table` and verify read.
"""

from __future__ import annotations

TABLE1 = {"mh_minibatch": (182.3, 11.4), "austere_mh_c": (13540.5, 1521.4), "mh_sublhd": (65758.9, 3222.6)}
TABLE4 = {
    "mh_minibatch": (-1307.0, 229.5, 4502.3, 1821.8),
    "austere_mh_c": (-1386.9, 322.4, 5216.9, 3315.8),
    "mh_sublhd": (-1295.1, 278.0, 3462.3, 1519.5),
}
TABLE2 = {
    "mnist_1v7": {
        "mh_minibatch": 125.4,
        "austere_mh_nc": 973.8,
        "austere_mh_c": 1924.3,
        "mh_sublhd": 10783.4,
    },
    "mnist_1v7_100k": {
        "mh_minibatch": 216.5,
        "austere_mh_nc": 1098.3,
        "austere_mh_c": 2795.6,
        "mh_sublhd": 14977.3,
    },
}
FIG6_MEAN_BATCH = {0.005: 116.1, 0.01: 216.5, 0.05: 2215.6}
