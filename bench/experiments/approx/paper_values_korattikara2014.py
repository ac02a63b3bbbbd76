"""The numbers printed by Korattikara, Chen & Welling 2014 ("Austerity in MCMC Land: Cutting the
Metropolis-Hastings Budget"), used as ``paper_value`` columns.

The paper's experiments are figures; the numbers it prints are how many samples each setting drew
within its time budget:

* :data:`MNIST79_SAMPLES`: samples drawn by ~400 s, MNIST 7v9 (§6.1), per eps (0 = exact RWM);
* :data:`ICA_SAMPLES`: samples drawn in ~6400 s, ICA (§6.2), per eps;
* :data:`MRF_SAMPLES_1000S`: samples (sweeps) in 1000 s, dense MRF (App. F), per eps (0 = exact Gibbs).
"""

from __future__ import annotations

MNIST79_SAMPLES = {0.0: 75484, 0.01: 133069, 0.05: 200672, 0.1: 257897, 0.2: 422978}
ICA_SAMPLES = {0.0: 5992, 0.01: 11320, 0.05: 40973, 0.1: 171917, 0.2: 1894000}
MRF_SAMPLES_1000S = {0.0: 2897, 0.01: 3429, 0.05: 3979, 0.1: 4494, 0.15: 4889, 0.2: 5507, 0.25: 5959}
