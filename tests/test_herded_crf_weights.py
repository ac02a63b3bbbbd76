"""hg_crf (Chen et al. 2016 §4.4): IE-ER tokenisation and sentences, and the CRFsuite-trained chain CRF
loaded into samplers.targets.chain_crf (its Viterbi path is CRFsuite's own tagging)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.experiments.herded import crf as HCRF
from samplers.kernels.viterbi import viterbi_decode
from samplers.targets import chain_crf as CC


def test_split_token_and_sentences():
    assert HCRF.split_token("laborers,") == ["laborers", ","]
    assert HCRF.split_token("U.S.") == ["U.S."] and HCRF.split_token("Mr.") == ["Mr."]
    assert HCRF.split_token("``") == ["``"] and HCRF.split_token("(AP)") == ["(", "AP", ")"]
    assert HCRF.split_token("end.''") == ["end", ".", "''"]
    docs = [("D0", [("Moi", "B-PERSON"), ("went.", "O"), ("The", "O"), ("Kenya,", "B-LOCATION"), ("x", "O")])]
    ((_, sents),) = HCRF.ieer_sentences(docs)
    assert [[w for w, _ in s] for s in sents] == [["Moi", "went", "."], ["The", "Kenya", ",", "x"]]
    assert sents[1][2] == (",", "I-LOCATION")  # a piece split off inside a mention keeps its type


def _toy_corpus(seed: int, n: int):
    rng = np.random.default_rng(seed)
    words = {
        "PERSON": ["Ana", "Juan", "Moi"],
        "LOCATION": ["Lima", "Kenya"],
        "O": ["in", "the", "said", "and"],
    }
    out = []
    for _ in range(n):
        tags = [str(rng.choice(["PERSON", "LOCATION", "O", "O", "O"])) for _ in range(rng.integers(2, 9))]
        out.append(([str(rng.choice(words[t])) for t in tags], tags))
    return out


def test_crfsuite_weights_give_crfsuite_viterbi(tmp_path):
    """Train CRFsuite (L-BFGS) on a toy corpus, load its weights into a ChainCRF: our Viterbi equals
    CRFsuite's tag() on every held-out sentence, and our chain score of CRFsuite's path is its best."""
    pycrfsuite = pytest.importorskip("pycrfsuite")
    tr = pycrfsuite.Trainer(verbose=False)
    for words, tags in _toy_corpus(0, 120):
        tr.append(HCRF.token_attributes(words), tags)
    tr.set_params({"c2": 0.1, "max_iterations": 60, "feature.possible_transitions": True})
    tr.train(str(tmp_path / "m.crfsuite"))
    tg = pycrfsuite.Tagger()
    tg.open(str(tmp_path / "m.crfsuite"))
    info = tg.info()
    labels = [lab for lab in HCRF.IO_LABELS if lab in tg.labels()]
    test = _toy_corpus(1, 60)
    attrs = [HCRF.token_attributes(w) for w, _ in test]
    chain = CC.chain_from_weights(labels, info.state_features, info.transitions, attrs)
    v, _ = viterbi_decode(chain.unary, chain.trans, chain.ptr)
    for s, a in enumerate(attrs):
        assert [labels[k] for k in v[chain.ptr[s] : chain.ptr[s + 1]]] == tg.tag(a)


def test_chain_from_weights_values_and_bad_input():
    sf = {("a", "X"): 1.5, ("b", "X"): -0.5, ("b", "O"): 2.0}
    tr = {("O", "X"): 0.25, ("X", "X"): -1.0}
    c = CC.chain_from_weights(["O", "X"], sf, tr, [[["a", "b"], ["zzz"]], [["b"]]])
    np.testing.assert_allclose(c.unary, [[2.0, 1.0], [0.0, 0.0], [2.0, -0.5]])
    np.testing.assert_allclose(c.trans, [[0.0, 0.25], [0.0, -1.0]])
    assert list(c.ptr) == [0, 2, 3]
    with pytest.raises(ValueError, match="unknown label"):
        CC.chain_from_weights(["O", "X"], {("a", "Y"): 1.0}, {}, [[["a"]]])
    with pytest.raises(ValueError, match="unknown label"):
        CC.chain_from_weights(["O", "X"], {}, {("O", "Q"): 1.0}, [[["a"]]])
    with pytest.raises(ValueError, match="distinct"):
        CC.chain_from_weights(["O", "O"], {}, {}, [[["a"]]])
