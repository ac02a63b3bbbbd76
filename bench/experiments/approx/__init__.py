"""Experiments of the approximate minibatch MH tests.

Seita, Pan, Chen & Canny 2017, "An Efficient Minibatch Acceptance Test for Metropolis-Hastings"
(MHminibatch against AustereMH(nc / c) and MHSubLhd of Bardenet et al. 2014):

* :mod:`.gaussian_mixture` ``approx_gmm``: §6.1, Tables 1, 4, Fig. 2;
* :mod:`.mnist_1v7` ``approx_mnist``: logistic regression MNIST 1v7, §6.2, Table 2, Figs. 3-5;
* :mod:`.correction_table` ``approx_table3``: the correction distribution, App. C.1, Table 3;
* :mod:`.paper_values_seita2017`: their printed tables.

Korattikara, Chen & Welling 2014, "Austerity in MCMC Land: Cutting the Metropolis-Hastings Budget"
(the sequential t-test, AustereMH):

* :mod:`.mnist_7v9` ``approx_mnist79``: logistic regression MNIST 7v9, §6.1, Fig. 2;
* :mod:`.sequential_design` ``approx_design``: average- vs worst-case designs, §5.2, §6.5, App. D;
* :mod:`.dense_mrf` ``approx_mrf``: approximate Gibbs on a dense MRF, App. F;
* :mod:`.sgld_l1` ``approx_sgld_l1``: SGLD + approximate MH, §6.4, Fig. 5;
* :mod:`.ica` ``approx_ica``: ICA, §6.2, Fig. 3;
* :mod:`.rjmcmc` ``approx_rjmcmc``: RJMCMC variable selection on MiniBooNE, §6.3, App. E;
* :mod:`.paper_values_korattikara2014`: the numbers they print.

:mod:`.common` holds the method labels and per-run minibatch statistics. Every run reports n_evals (data
used by the test) and the full-data passes (trace 0) separately.
"""

from __future__ import annotations

from bench.experiments.approx import (
    correction_table,
    dense_mrf,
    gaussian_mixture,
    ica,
    mnist_1v7,
    mnist_7v9,
    rjmcmc,
    sequential_design,
    sgld_l1,
)

EXPERIMENTS = [
    *gaussian_mixture.EXPERIMENTS,
    *mnist_1v7.EXPERIMENTS,
    *correction_table.EXPERIMENTS,
    *mnist_7v9.EXPERIMENTS,
    *sequential_design.EXPERIMENTS,
    *dense_mrf.EXPERIMENTS,
    *sgld_l1.EXPERIMENTS,
    *ica.EXPERIMENTS,
    *rjmcmc.EXPERIMENTS,
]
