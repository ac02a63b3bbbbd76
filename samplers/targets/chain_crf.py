"""Linear-chain CRFs as data (Chen et al. 2016 §4.4 counterpart): a batch of sentences with per-token label
scores and one label-transition matrix; conversion to a :class:`FactorGraph` (one unary factor per
token, one pairwise factor per adjacent pair); an averaged-perceptron trainer (Collins 2002) on
sparse token features with Viterbi decoding; IOB chunk extraction and entity-level F1 (CoNLL).

Log-probability of a labelling: sum_t unary[t, x_t] + sum_t trans[x_t, x_{t+1}] (within sentences).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from samplers.kernels.viterbi import viterbi_decode
from samplers.targets.factor_graph import FactorGraph


class ChainCRF(NamedTuple):
    ptr: np.ndarray  # (S+1,) sentence offsets
    unary: np.ndarray  # (N, K)
    trans: np.ndarray  # (K, K)


def make_chain(ptr, unary, trans) -> ChainCRF:
    ptr = np.asarray(ptr, dtype=np.int64)
    unary = np.ascontiguousarray(unary, dtype=np.float64)
    trans = np.ascontiguousarray(trans, dtype=np.float64)
    if unary.ndim != 2 or unary.shape[1] < 2:
        raise ValueError("unary must be (N, K) with K >= 2")
    K = unary.shape[1]
    if trans.shape != (K, K):
        raise ValueError(f"trans must be ({K}, {K})")
    if (
        ptr.ndim != 1
        or ptr.shape[0] < 2
        or ptr[0] != 0
        or ptr[-1] != unary.shape[0]
        or np.any(np.diff(ptr) < 1)
    ):
        raise ValueError("ptr must run from 0 to N with non-empty sentences")
    if not (np.all(np.isfinite(unary)) and np.all(np.isfinite(trans))):
        raise ValueError("scores contain NaN/inf")
    return ChainCRF(ptr, unary, trans)


def to_factor_graph(c: ChainCRF) -> FactorGraph:
    """FactorGraph with the same joint (each table shifted by its minimum, as ``from_tables``):
    factors 0..N-1 unary (token t), then one pairwise factor (t, t+1) per adjacent pair."""
    N, K = c.unary.shape
    last = np.zeros(N, dtype=bool)
    last[c.ptr[1:] - 1] = True
    left = np.nonzero(~last)[0].astype(np.int64)  # t with a right neighbour
    E = left.shape[0]
    fac_ptr = np.concatenate([np.arange(N + 1, dtype=np.int64), N + 2 * np.arange(1, E + 1)])
    fac_vars = np.concatenate([np.arange(N), np.stack([left, left + 1], 1).ravel()]).astype(np.int64)
    fac_stride = np.concatenate([np.ones(N, np.int64), np.tile(np.array([K, 1], np.int64), E)])
    un = c.unary - c.unary.min(axis=1, keepdims=True)
    tr = c.trans - c.trans.min()
    tables = np.concatenate([un.ravel(), np.tile(tr.ravel(), E)])
    tab_ptr = np.concatenate([K * np.arange(N + 1, dtype=np.int64), N * K + K * K * np.arange(1, E + 1)])
    M = np.concatenate([un.max(axis=1), np.full(E, tr.max())])
    # CSR var -> factors: unary first, then left pair (t-1, t), then right pair (t, t+1)
    pair_of_left = np.full(N, -1, dtype=np.int64)
    pair_of_left[left] = N + np.arange(E)
    lists = []
    for t in range(N):
        fs = [t]
        if t > 0 and pair_of_left[t - 1] >= 0:
            fs.append(int(pair_of_left[t - 1]))
        if pair_of_left[t] >= 0:
            fs.append(int(pair_of_left[t]))
        lists.append(fs)
    var_ptr = np.zeros(N + 1, dtype=np.int64)
    var_ptr[1:] = np.cumsum([len(a) for a in lists])
    var_fac = np.array([f for a in lists for f in a], dtype=np.int64)
    return FactorGraph(
        int(N),
        np.full(N, K, dtype=np.int64),
        fac_ptr,
        fac_vars,
        fac_stride,
        tab_ptr,
        tables,
        M,
        var_ptr,
        var_fac,
    )


def random_chain(seed: int, n_sent: int, length: int, K: int, scale: float = 1.0) -> ChainCRF:
    """Synthetic chain CRF with N(0, scale^2) unary and transition scores (tests, smoke)."""
    rng = np.random.default_rng(seed)
    N = n_sent * length
    return make_chain(
        np.arange(0, N + 1, length), scale * rng.standard_normal((N, K)), scale * rng.standard_normal((K, K))
    )


# ----------------------------------------------------------------------------- perceptron
@njit(cache=True)
def _unary_from_features(fptr, fid, Wf, out):
    N = fptr.shape[0] - 1
    K = Wf.shape[1]
    for t in range(N):
        for k in range(K):
            out[t, k] = 0.0
        for q in range(fptr[t], fptr[t + 1]):
            f = fid[q]
            for k in range(K):
                out[t, k] += Wf[f, k]


@njit(cache=True)
def _perceptron(fptr, fid, y, sptr, n_feat, K, epochs, seed):
    """Averaged structured perceptron (Collins 2002): W - U / c averaging trick."""
    np.random.seed(seed)
    Wf = np.zeros((n_feat, K))
    Uf = np.zeros((n_feat, K))
    Wt = np.zeros((K, K))
    Ut = np.zeros((K, K))
    c = 1.0
    S = sptr.shape[0] - 1
    order = np.arange(S)
    for _ in range(epochs):
        np.random.shuffle(order)
        for s in order:
            a, b = sptr[s], sptr[s + 1]
            n = b - a
            un = np.zeros((n, K))
            _unary_from_features(fptr[a : b + 1] - fptr[a], fid[fptr[a] : fptr[b]], Wf, un)
            pred, _ = viterbi_decode(un, Wt, np.array([0, n], dtype=np.int64))
            for t in range(n):
                g, p = y[a + t], pred[t]
                if g != p:
                    for q in range(fptr[a + t], fptr[a + t + 1]):
                        f = fid[q]
                        Wf[f, g] += 1.0
                        Wf[f, p] -= 1.0
                        Uf[f, g] += c
                        Uf[f, p] -= c
                if t + 1 < n:
                    g2, p2 = y[a + t + 1], pred[t + 1]
                    if g != p or g2 != p2:
                        Wt[g, g2] += 1.0
                        Wt[p, p2] -= 1.0
                        Ut[g, g2] += c
                        Ut[p, p2] -= c
            c += 1.0
    return Wf - Uf / c, Wt - Ut / c


def _shape(w: str) -> str:
    out = []
    for ch in w:
        s = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != s:
            out.append(s)
    return "".join(out)


def token_features(sent: list[tuple[str, ...]]) -> list[list[str]]:
    """Feature strings per token: bias, word (lower), prev/next word, prefix/suffix 1-3, shape,
    POS (if the tuples carry one: (word, pos, tag)), prev/next POS, sentence-start flag."""
    words = [t[0] for t in sent]
    pos = [t[1] if len(t) == 3 else "_" for t in sent]
    out = []
    n = len(sent)
    for i, w in enumerate(words):
        lw = w.lower()
        f = [
            "b",
            "w=" + lw,
            "sh=" + _shape(w),
            "p=" + pos[i],
            "s1=" + lw[-1:],
            "s2=" + lw[-2:],
            "s3=" + lw[-3:],
            "p3=" + lw[:3],
            "wp=" + (words[i - 1].lower() if i else "<s>"),
            "wn=" + (words[i + 1].lower() if i + 1 < n else "</s>"),
            "pp=" + (pos[i - 1] if i else "<s>"),
            "pn=" + (pos[i + 1] if i + 1 < n else "</s>"),
            "cap_first=" + str(w[:1].isupper()) + str(i == 0),
        ]
        out.append(f)
    return out


def _encode(sents, vocab: dict[str, int], labels: dict[str, int], grow: bool):
    fptr, fid, y, sptr = [0], [], [], [0]
    for sent in sents:
        for t, feats in enumerate(token_features(sent)):
            for f in feats:
                j = vocab.get(f)
                if j is None and grow:
                    j = vocab[f] = len(vocab)
                if j is not None:
                    fid.append(j)
            fptr.append(len(fid))
            y.append(labels.get(sent[t][-1], -1))
        sptr.append(len(y))
    return (
        np.asarray(fptr, np.int64),
        np.asarray(fid, np.int64),
        np.asarray(y, np.int64),
        np.asarray(sptr, np.int64),
    )


@njit(cache=True)
def chain_loglik(unary, trans, ptr, y, beta):
    """sum over sentences of log p_beta(y | sentence) for scores scaled by ``beta`` (forward algorithm;
    tokens with y < 0 (label unseen in training) make the sentence skipped)."""
    K = unary.shape[1]
    total = 0.0
    alpha = np.empty(K)
    new = np.empty(K)
    for s in range(ptr.shape[0] - 1):
        a, b = ptr[s], ptr[s + 1]
        skip = False
        for t in range(a, b):
            if y[t] < 0:
                skip = True
        if skip:
            continue
        gold = beta * unary[a, y[a]]
        for k in range(K):
            alpha[k] = beta * unary[a, k]
        for t in range(a + 1, b):
            gold += beta * (trans[y[t - 1], y[t]] + unary[t, y[t]])
            for k in range(K):
                m = -np.inf
                for j in range(K):
                    v = alpha[j] + beta * trans[j, k]
                    if v > m:
                        m = v
                z = 0.0
                for j in range(K):
                    z += np.exp(alpha[j] + beta * trans[j, k] - m)
                new[k] = m + np.log(z) + beta * unary[t, k]
            alpha[:] = new
        m = alpha.max()
        total += gold - (m + np.log(np.exp(alpha - m).sum()))
    return total


def fit_scale(chain: ChainCRF, y: np.ndarray, lo: float = 1e-3, hi: float = 10.0) -> float:
    """beta maximising the conditional log-likelihood of gold labels ``y`` (golden-section search in
    log beta): turns perceptron scores into a calibrated CRF p(y|x) ∝ exp(beta * score)."""
    f = lambda lb: -chain_loglik(chain.unary, chain.trans, chain.ptr, y, float(np.exp(lb)))
    a, b = np.log(lo), np.log(hi)
    g = (np.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(40):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return float(np.exp((a + b) / 2))


def train_chain_crf(
    train_sents, test_sents, epochs: int = 5, seed: int = 0, dev_sents=None
) -> tuple[ChainCRF, dict]:
    """Averaged perceptron on ``train_sents`` (lists of (word[, pos], tag)); returns the test-set
    ChainCRF (scores = learnt weights, times beta fitted by maximum conditional likelihood on
    ``dev_sents`` when given, see :func:`fit_scale`) and info (labels, gold test labels, beta, ...)."""
    if not train_sents or not test_sents:
        raise ValueError("need non-empty train and test sentence lists")
    if epochs < 1:
        raise ValueError("epochs must be >= 1")
    tags = sorted({t[-1] for s in train_sents for t in s})
    if "O" in tags:
        tags.remove("O")
        tags = ["O"] + tags
    labels = {t: k for k, t in enumerate(tags)}
    vocab: dict[str, int] = {}
    fptr, fid, y, sptr = _encode(train_sents, vocab, labels, True)
    Wf, Wt = _perceptron(fptr, fid, y, sptr, len(vocab), len(tags), int(epochs), int(seed))
    beta = 1.0
    if dev_sents:
        dfptr, dfid, dy, dsptr = _encode(dev_sents, vocab, labels, False)
        dun = np.zeros((dfptr.shape[0] - 1, len(tags)))
        _unary_from_features(dfptr, dfid, Wf, dun)
        beta = fit_scale(make_chain(dsptr, dun, Wt), dy)
    tfptr, tfid, ty, tsptr = _encode(test_sents, vocab, labels, False)
    un = np.zeros((tfptr.shape[0] - 1, len(tags)))
    _unary_from_features(tfptr, tfid, Wf, un)
    info = {
        "labels": tags,
        "gold": ty,
        "n_features": len(vocab),
        "epochs": epochs,
        "n_train_tokens": int(y.shape[0]),
        "beta": beta,
    }
    return make_chain(tsptr, beta * un, beta * Wt), info


# ----------------------------------------------------------------------------- evaluation
def chunks(tags: list[str]) -> set[tuple[int, int, str]]:
    """CoNLL (conlleval) chunks (start, end, type) of an IOB1/IOB2 tag sequence."""
    out = set()
    start, typ = None, None
    for i, t in enumerate(list(tags) + ["O"]):
        pre, _, ty = t.partition("-")
        begin = pre == "B" or (pre == "I" and ty != typ)
        if start is not None and (pre == "O" or begin or ty != typ):
            out.add((start, i, typ))
            start, typ = None, None
        if pre in ("B", "I") and (start is None):
            start, typ = i, ty
    return out


def entity_f1(gold: np.ndarray, pred: np.ndarray, ptr: np.ndarray, labels: list[str]) -> float:
    """Entity-level F1 (percent) over all sentences (CoNLL-style exact chunk match)."""
    tp = n_gold = n_pred = 0
    lab = np.asarray(labels + ["O"])
    for s in range(len(ptr) - 1):
        a, b = ptr[s], ptr[s + 1]
        g = chunks(list(lab[gold[a:b]]))
        p = chunks(list(lab[pred[a:b]]))
        tp += len(g & p)
        n_gold += len(g)
        n_pred += len(p)
    if n_gold == 0 and n_pred == 0:
        return 100.0
    prec = tp / n_pred if n_pred else 0.0
    rec = tp / n_gold if n_gold else 0.0
    return 0.0 if prec + rec == 0 else 200.0 * prec * rec / (prec + rec)


# ----------------------------------------------------------------------------- weights of a trained CRF
def chain_from_weights(
    labels: list[str],
    state_features: dict[tuple[str, str], float],
    transitions: dict[tuple[str, str], float],
    sentences: list[list[list[str]]],
) -> ChainCRF:
    """The ChainCRF of ``sentences`` (each a list of tokens, each token a list of attribute names with
    value 1) under a linear-chain CRF given by its weights, as CRFsuite's ``Tagger.info()`` lists them:
    ``state_features[(attribute, label)]`` and ``transitions[(label_from, label_to)]`` (absent = 0).
    Label k of the chain is ``labels[k]``. Score of a labelling y: sum_t sum_{a in x_t} w(a, y_t) +
    sum_t w(y_t, y_{t+1}), CRFsuite's CRF1d model (no start / end transitions), so the chain's
    Viterbi path is the CRF's own."""
    K = len(labels)
    if K < 2 or len(set(labels)) != K:
        raise ValueError("labels must be >= 2 distinct names")
    lab = {name: k for k, name in enumerate(labels)}
    attr: dict[str, int] = {}
    rows: list[np.ndarray] = []
    for (a, y), w in state_features.items():
        if y not in lab:
            raise ValueError(f"state feature ({a!r}, {y!r}) has an unknown label")
        j = attr.get(a)
        if j is None:
            j = attr[a] = len(rows)
            rows.append(np.zeros(K))
        rows[j][lab[y]] += float(w)
    W = np.array(rows) if rows else np.zeros((0, K))
    trans = np.zeros((K, K))
    for (y0, y1), w in transitions.items():
        if y0 not in lab or y1 not in lab:
            raise ValueError(f"transition ({y0!r}, {y1!r}) has an unknown label")
        trans[lab[y0], lab[y1]] = float(w)
    ntok = sum(len(s) for s in sentences)
    unary = np.zeros((ntok, K))
    ptr = np.zeros(len(sentences) + 1, dtype=np.int64)
    t = 0
    for s_i, sent in enumerate(sentences):
        for tok in sent:
            idx = [attr[a] for a in tok if a in attr]
            if idx:
                unary[t] = W[idx].sum(axis=0)
            t += 1
        ptr[s_i + 1] = t
    return make_chain(ptr, unary, trans)
