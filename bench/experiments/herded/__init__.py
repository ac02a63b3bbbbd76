"""Experiments of the herded-Gibbs family: Chen, Bornn, de Freitas, Eskelin, Fang & Welling 2016,
"Herded Gibbs Sampling", §4.

* :mod:`.complete_graph` ``hg_complete_graph``: two-variable complete graph (§4.1, Fig. 5, Table 1
  reconstructed);
* :mod:`.incomplete_graph` ``hg_incomplete_graph``: four-variable incomplete graph (§4.2, Fig. 7);
* :mod:`.denoise` ``hg_denoise``: Ising-prior image denoising (§4.3, Table 2, Fig. 9);
* :mod:`.crf` ``hg_crf``: chain-CRF named-entity recognition on IE-ER (§4.4, Table 3);
* :mod:`.crf_skip` ``hg_crf_skip``: the same CRF with skip-chain edges (beyond the paper).

:mod:`.paper_values` holds the paper's Tables 2 and 3, :mod:`.common` the checkpoints and error envelope
the experiments share.
"""

from __future__ import annotations

from bench.experiments.herded import complete_graph, crf, crf_skip, denoise, incomplete_graph

EXPERIMENTS = [
    *complete_graph.EXPERIMENTS,
    *incomplete_graph.EXPERIMENTS,
    *denoise.EXPERIMENTS,
    *crf.EXPERIMENTS,
    *crf_skip.EXPERIMENTS,
]
