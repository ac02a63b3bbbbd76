"""Building blocks of the approximate minibatch MH tests (Korattikara et al. 2014; Seita et al. 2017;
Bardenet et al. 2014).

* :mod:`samplers.approx.seqtest`    sequential t-test with finite-population correction (K14 §4),
  critical-value tables, data drawn without replacement by a persistent partial Fisher-Yates.
* :mod:`samplers.approx.design`     K14 §5.2 / App. A, D: Gaussian random-walk model of the test
  statistics, dynamic program for the error and expected data usage, grid-search designs
  (average / worst case), Pocock and Wang-Tsiatis boundaries.
* :mod:`samplers.approx.correction` S17 §4 / App. C.1: correction density C_sigma by regularised
  least-squares deconvolution, its L_inf error (Table 3) and an O(log n) sampler.
* :mod:`samplers.approx.mrf`        K14 App. F dense binary MRF with triple potentials.
* :mod:`samplers.approx.gibbs_calibration` K14 App. F Fig. 14: austere Gibbs's conditional probabilities
  against the exact ones.
* :mod:`samplers.approx.ica_stiefel` K14 §6.2 ICA with W on the orthogonal group (Cayley random walk):
  target ``ica_stiefel``, methods ``rwm_stiefel`` and ``austere_mh_stiefel``.
"""
