"""Herded experiments (bench/experiments/herded/): cells, run_cell and summarize on tiny settings
(synthetic image and a synthetic tagged corpus, so no dataset is needed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from bench.cells import enumerate_cells
from bench.experiments import herded as E
from bench.experiments.herded import complete_graph as HCG
from bench.experiments.herded import crf as HCRF
from bench.experiments.herded import denoise as HDN
from bench.experiments.herded import incomplete_graph as HIG
from bench.outputs import Outputs

matplotlib.use("Agg")


@dataclass
class Ctx:
    settings: dict
    out_dir: Path
    payload: dict = field(default_factory=dict)

    def data(self, name):
        return self.payload[name]


def _exp(eid):
    return next(e for e in E.EXPERIMENTS if e.id == eid)


def _run_all(eid, settings, tmp_path, payload=None, limit=None):
    exp = _exp(eid)
    rows = []
    for k, p in enumerate(enumerate_cells(exp, settings)):
        if limit is not None and k >= limit:
            break
        ctx = Ctx(settings, tmp_path / "cells" / eid / p["cell"], payload or {})
        for r in exp.run_cell(p, np.random.SeedSequence([7, k]), ctx):
            rows.append({**r, "cell": p["cell"], "status": "ok"})
    out = Outputs(tmp_path / "results", tmp_path / "figs", experiment=eid)
    exp.summarize(pd.DataFrame(rows), settings, out)
    return pd.DataFrame(rows), out


def test_settings_and_cells_paper_scale():
    for exp in E.EXPERIMENTS:
        for scale in ("paper", "smoke"):
            cells = enumerate_cells(exp, exp.settings[scale])
            assert cells and len({c["cell"] for c in cells}) == len(cells)
    cg = enumerate_cells(_exp("hg_complete_graph"), HCG.SETTINGS_CG["paper"])
    assert len(cg) == 4 * (1 + 2 * 4) and HCG.SETTINGS_CG["paper"]["n_sweeps"] == 2**18
    assert len(enumerate_cells(_exp("hg_denoise"), HDN.SETTINGS_DN["paper"])) == 40
    assert len(enumerate_cells(_exp("hg_crf"), HCRF.SETTINGS_CRF["paper"])) == 1 + 3 * 6


def test_complete_graph_cells(tmp_path):
    s = {"eps": [0.1], "n_sweeps": 2**10, "n_seeds": 4, "seeds_per_cell": 2}
    df, out = _run_all("hg_complete_graph", s, tmp_path)
    fin = df[df["T"] == 2**10].groupby("method")["l1"].median()
    assert fin["herded_gibbs"] < fin["gibbs"]
    assert (tmp_path / "results" / "hg_fig5_final.csv").exists()
    assert (tmp_path / "figs" / "hg_fig5.png").exists()


def test_complete_graph_seed_reproducible():
    Ts = np.array([100, 1000])
    a = HCG.complete_graph_run("gibbs", 0.01, 1000, np.random.SeedSequence(3), Ts)
    b = HCG.complete_graph_run("gibbs", 0.01, 1000, np.random.SeedSequence(3), Ts)
    c = HCG.complete_graph_run("gibbs", 0.01, 1000, np.random.SeedSequence(4), Ts)
    assert np.array_equal(a[0], b[0]) and not np.array_equal(a[0], c[0])


def test_incomplete_graph_streaming_matches_direct(tmp_path):
    Ts, e = HIG.incomplete_graph_run(1, "neighbours", 5000, chunk=700)
    Ts2, e2 = HIG.incomplete_graph_run(1, "neighbours", 5000, chunk=5000)
    assert np.array_equal(Ts, Ts2) and np.allclose(e, e2, rtol=0, atol=1e-15)
    _run_all("hg_incomplete_graph", {"draws": [1], "n_sweeps": [3000]}, tmp_path)
    assert (tmp_path / "results" / "hg_fig7_incomplete.csv").exists()


def test_denoise_cells_toy(tmp_path):
    s = dict(
        HDN.SETTINGS_DN["smoke"],
        image="toy",
        n_images=1,
        toy_size=20,
        sigmas=[2.0],
        methods=list(HDN.DENOISE_METHODS + HDN.EXTRA_MF),
    )
    df, _ = _run_all("hg_denoise", s, tmp_path)
    assert set(df["method"]) == set(s["methods"]) and df["sweep"].max() == 30
    tab = pd.read_csv(tmp_path / "results" / "hg_table2.csv")
    assert {"paper_value", "error_x1e3"} <= set(tab.columns)
    assert tab.loc[tab["method"] == "gibbs", "paper_value"].iloc[0] == pytest.approx(21.63)


def _ieer_like(rng, n_docs):
    """Documents shaped like bench.datasets.ieer's: (docno, [(token, IOB2 tag), ...])."""
    words = {
        "PERSON": ["Ana", "Juan", "Moi"],
        "LOCATION": ["Madrid", "Lima", "Kenya"],
        "O": ["in", "lives", "the", "and", "said"],
    }
    docs = []
    for d in range(n_docs):
        toks = []
        for _ in range(rng.integers(3, 6)):
            for _ in range(rng.integers(3, 7)):
                t = str(rng.choice(["PERSON", "LOCATION", "O", "O"]))
                toks.append((str(rng.choice(words[t])), "O" if t == "O" else f"B-{t}"))
            toks[-1] = (toks[-1][0] + ".", toks[-1][1])
        docs.append((f"D{d}", toks))
    return docs


def test_crf_cells_synthetic_corpus(tmp_path):
    rng = np.random.default_rng(0)
    s = dict(HCRF.SETTINGS_CRF["smoke"], n_docs=None, iters=[5, 10], annealed_runs=1, block=4)
    df, _ = _run_all("hg_crf", s, tmp_path, payload={"ieer": _ieer_like(rng, 8)})
    assert set(df["method"]) == {"viterbi", "herded_gibbs", "annealed_gibbs"}
    v = df[df["method"] == "viterbi"].iloc[0]
    assert v["token_agreement_viterbi"] == 1.0 and v["frac_sentences_at_map"] == 1.0
    assert (df["frac_sentences_at_map"] <= 1.0).all() and (df["folds"] == 2).all()
    assert v["n_tokens"] > sum(len(t) for _, t in _ieer_like(np.random.default_rng(0), 8))  # "." split off
    assert (tmp_path / "results" / "hg_table3.csv").exists()
    # the trained models are cached on disk next to the cells and reused (with their training time)
    assert len(list((tmp_path / "cells" / "hg_crf").glob("hg_crf_cache/*.crfsuite"))) == 2
    assert (df["train_seconds"] == df["train_seconds"].iloc[0]).all()


def test_crf_skip_cells_synthetic_corpus(tmp_path):
    rng = np.random.default_rng(1)
    s = dict(E.crf_skip.SETTINGS_SKIP["smoke"], n_docs=None, iters=[5], annealed_runs=1)
    df, _ = _run_all("hg_crf_skip", s, tmp_path, payload={"ieer": _ieer_like(rng, 8)})
    assert set(df["method"]) == {"viterbi", "herded_gibbs", "annealed_gibbs"}
    assert (df.loc[df["method"] != "viterbi", "n_skip_edges"] > 0).all()
    assert (tmp_path / "results" / "hg_crf_skip.csv").exists()


def test_skip_edges_join_repeated_capitalised_words_within_documents():
    words = [["Moi", "met", "Ana"], ["Moi", "and", "Ana", "Moi"], ["Moi", "x"]]
    e = E.crf_skip.skip_edges(words, np.array([0, 2, 3]))
    assert e.tolist() == [[0, 3], [2, 5], [3, 6]]  # "Moi" of the third document is not joined
