"""``hg_crf``: chain-CRF named-entity recognition of Chen et al. 2016, §4.4 (Table 3).

Test set: the NIST 1999 IE-ER corpus (NLTK's ``ieer``, 94 newswire documents), as in the paper, with the
paper's three classes (PERSON, LOCATION, ORGANIZATION; every other mention type is O), tokenised by
splitting punctuation off whitespace tokens and cut into sentences after ``.``/``?``/``!`` (IE-ER has no
sentence mark-up). Model: a linear-chain CRF with IO labels (PERSON / LOCATION / ORGANIZATION / O, the
label set of the paper's 3-class Stanford model) trained with CRFsuite's L-BFGS (``python-crfsuite``,
L2 penalty ``c2``) on word, shape, affix and +-2 context features; its weights are loaded into
:class:`samplers.targets.chain_crf.ChainCRF` (:func:`~samplers.targets.chain_crf.chain_from_weights`),
whose Viterbi path equals CRFsuite's own tagging (tests).

Training text: the paper's pre-trained Stanford CRF (trained on CoNLL-2003 English, MUC and ACE) and
those corpora are not on hand; the only English text with person / location / organisation mark-up here
is IE-ER itself (CoNLL-2002 is Spanish / Dutch, CoNLL-2000 has no entity labels). So the CRF is
cross-fitted: IE-ER's documents are split into ``folds`` folds, and each fold is tagged by the CRF
trained on the other folds. Every IE-ER document is tested, each by a model that never saw it.

Inference on each fold's chain: Viterbi (exact MAP), annealed Gibbs (linear schedule T_k = 1 - k/(n-1),
``annealed_runs`` seeds) and herded Gibbs (multi-valued weights, not annealed) after 100 / 400 / 800
sweeps, the samplers predicting the highest-probability sweep state of each sentence and starting from the
per-token argmax of the unary scores. Per-entity F1 by ``seqeval`` (CoNLL chunks: predicted I-X after O
or another type starts an entity), per-class F1, agreement with Viterbi, the fraction of sentences at
the MAP score, and the sampling time for the whole test set (compile time excluded).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.experiment import Experiment
from bench.experiments.herded.common import _child
from bench.experiments.herded.paper_values import TABLE3
from samplers.result import atomic_write_text

TYPES = ("PERSON", "LOCATION", "ORGANIZATION")
IO_LABELS = ["O", *TYPES]
_ABBREV = {
    "mr", "mrs", "ms", "dr", "jr", "sr", "st", "gen", "gov", "sen", "rep", "lt", "col", "sgt", "capt",
    "prof", "rev", "inc", "co", "corp", "ltd", "bros", "jan", "feb", "mar", "apr", "aug", "sept", "sep",
    "oct", "nov", "dec", "mt", "ft", "vs", "no", "ave", "blvd", "calif", "fla", "mass", "conn", "ariz",
}  # fmt: skip
_LEAD = re.compile(r"^(``|\(|\[|\"|'(?!s\b))")
_TRAIL = re.compile(r"(''|\)|\]|\"|,|;|:|\?|!|\.)$")


def split_token(tok: str) -> list[str]:
    """Punctuation split off a whitespace token (``laborers,`` -> ``laborers`` ``,``); a final ``.`` stays
    on abbreviations (U.S., p.m., Mr., single initials)."""
    lead: list[str] = []
    trail: list[str] = []
    while len(tok) > 1:
        m = _LEAD.match(tok)
        if not m or m.end() == len(tok):
            break
        lead.append(m.group())
        tok = tok[m.end() :]
    while len(tok) > 1:
        m = _TRAIL.search(tok)
        if not m or m.start() == 0:
            break
        p = m.group()
        if p == ".":
            stem = tok[:-1]
            if "." in stem or len(stem) == 1 or stem.lower() in _ABBREV:
                break
        trail.append(p)
        tok = tok[: m.start()]
    return [*lead, tok, *reversed(trail)]


def ieer_sentences(
    docs: list[tuple[str, list[tuple[str, str]]]],
) -> list[tuple[str, list[list[tuple[str, str]]]]]:
    """(docno, sentences of (token, IOB2 tag)) from ``bench.datasets.ieer`` documents: tokens split by
    :func:`split_token` (pieces inside a mention keep its type, I-), a sentence ends after ``.``, ``?``
    or ``!`` (optionally followed by a closing quote) when the next token starts with a capital or an
    opening quote."""
    out = []
    for docno, toks in docs:
        flat: list[tuple[str, str]] = []
        for tok, tag in toks:
            for j, piece in enumerate(split_token(tok)):
                t = tag if j == 0 or tag == "O" else "I-" + tag[2:]
                flat.append((piece, t))
        sents: list[list[tuple[str, str]]] = []
        cur: list[tuple[str, str]] = []
        for j, (tok, tag) in enumerate(flat):
            cur.append((tok, tag))
            nxt = flat[j + 1][0] if j + 1 < len(flat) else None
            end = tok in (".", "?", "!") or (tok == "''" and len(cur) > 1 and cur[-2][0] in (".", "?", "!"))
            if end and nxt is not None and nxt != "''" and (nxt[:1].isupper() or nxt == "``"):
                sents.append(cur)
                cur = []
        if cur:
            sents.append(cur)
        out.append((docno, sents))
    return out


def _shape(w: str) -> str:
    out = []
    for ch in w:
        s = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != s:
            out.append(s)
    return "".join(out)


def token_attributes(words: list[str]) -> list[list[str]]:
    """CRFsuite attributes (value 1) of each token of a sentence: bias, lower-cased word, shape,
    prefixes / suffixes 1-3, capitalisation flags, the words and shapes at -2..+2, sentence start / end."""
    n = len(words)
    low = [w.lower() for w in words]
    sh = [_shape(w) for w in words]
    out = []
    for i, w in enumerate(words):
        f = [
            "b",
            "w=" + low[i],
            "sh=" + sh[i],
            "p1=" + low[i][:1],
            "p2=" + low[i][:2],
            "p3=" + low[i][:3],
            "s1=" + low[i][-1:],
            "s2=" + low[i][-2:],
            "s3=" + low[i][-3:],
            "title=" + str(w[:1].isupper() and w[1:].islower()),
            "upper=" + str(w.isupper()),
            "digit=" + str(any(c.isdigit() for c in w)),
        ]
        for d in (-2, -1, 1, 2):
            j = i + d
            if 0 <= j < n:
                f.append(f"w{d:+d}=" + low[j])
                f.append(f"sh{d:+d}=" + sh[j])
            else:
                f.append(f"w{d:+d}=" + ("<s>" if j < 0 else "</s>"))
        if i == 0:
            f.append("BOS")
        if i == n - 1:
            f.append("EOS")
        out.append(f)
    return out


def io_tag(tag: str) -> str:
    """IOB2 -> IO label of the 3-class model (B-X / I-X -> X)."""
    return "O" if tag == "O" else tag[2:]


def fold_of(n_docs: int, folds: int) -> np.ndarray:
    """Document -> fold (contiguous blocks in corpus order, sizes differing by at most one)."""
    return np.arange(n_docs) * folds // n_docs


_CRF_CACHE: dict[str, Any] = {}


def ieer_documents(ctx: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    """IE-ER documents with the three classes: the named dataset ``ieer`` if the data registry has it,
    else read from the raw file (``bench.datasets.ieer``, the mirror or download of the cell)."""
    try:
        return ctx.data("ieer")
    except (KeyError, ValueError):
        from bench import datasets as D

        return D.ieer(TYPES, data_dir=getattr(ctx, "data_dir", None), mirror=getattr(ctx, "mirror", None))


def trained_folds(s: dict, raw_docs, cache_dir: str | os.PathLike | None) -> list[dict]:
    """One dict per fold: ``chain`` (ChainCRF of the fold's test sentences), ``gold`` (IOB2 tags per
    sentence), ``labels``, ``words``, ``doc_ptr`` (sentence offsets of the fold's documents),
    ``train_seconds``, ``n_features``, ``n_train_tokens``. Trained once per process
    and cached on disk (the CRFsuite model files, keyed by the settings and the corpus)."""
    import hashlib

    import pycrfsuite

    from samplers.result import config_hash
    from samplers.targets import chain_crf as CC

    docs = ieer_sentences(raw_docs)
    if s["n_docs"] is not None:
        docs = docs[: int(s["n_docs"])]
    digest = hashlib.sha1(repr(docs).encode()).hexdigest()
    keys = ("folds", "c1", "c2", "max_iterations")
    key = config_hash({k: s[k] for k in keys} | {"corpus": digest, "v": 3})
    if key in _CRF_CACHE:
        return _CRF_CACHE[key]
    folds = int(s["folds"])
    if not 2 <= folds <= len(docs):
        raise ValueError(f"folds must be in [2, {len(docs)}], got {folds}")
    fold = fold_of(len(docs), folds)
    cdir = Path(cache_dir) if cache_dir is not None else None
    out = []
    for f in range(folds):
        train = [sent for d, (_, ss) in enumerate(docs) if fold[d] != f for sent in ss]
        test = [sent for d, (_, ss) in enumerate(docs) if fold[d] == f for sent in ss]
        doc_ptr = np.cumsum([0] + [len(ss) for d, (_, ss) in enumerate(docs) if fold[d] == f])
        model = None
        if cdir is not None:
            cdir.mkdir(parents=True, exist_ok=True)
            model = cdir / f"hg_crf_{key}_fold{f}.crfsuite"
        t0 = time.perf_counter()
        if model is None or not (model.exists() and Path(str(model) + ".json").exists()):
            tr = pycrfsuite.Trainer(verbose=False)
            for sent in train:
                tr.append(token_attributes([w for w, _ in sent]), [io_tag(t) for _, t in sent])
            tr.set_params(
                {
                    "c1": float(s["c1"]),
                    "c2": float(s["c2"]),
                    "max_iterations": int(s["max_iterations"]),
                    "feature.possible_transitions": True,
                }
            )
            path = str(model) if model is not None else f"/tmp/hg_crf_{key}_{os.getpid()}_{f}.crfsuite"
            tmp = path + f".{os.getpid()}.tmp"
            tr.train(tmp)
            os.replace(tmp, path)
            model = Path(path)
            train_s = time.perf_counter() - t0
            atomic_write_text(str(model) + ".json", json.dumps({"train_seconds": train_s}))
        else:
            train_s = float(json.loads(Path(str(model) + ".json").read_text())["train_seconds"])
        tg = pycrfsuite.Tagger()
        tg.open(str(model))
        info = tg.info()
        labels = [lab for lab in IO_LABELS if lab in tg.labels()]
        attrs = [token_attributes([w for w, _ in sent]) for sent in test]
        chain = CC.chain_from_weights(labels, info.state_features, info.transitions, attrs)
        out.append(
            {
                "chain": chain,
                "labels": labels,
                "gold": [[t for _, t in sent] for sent in test],
                "train_seconds": train_s,
                "n_features": len(info.state_features),
                "n_train_tokens": sum(len(x) for x in train),
                "tagger": tg,
                "attrs": attrs,
                "words": [[w for w, _ in sent] for sent in test],
                "doc_ptr": doc_ptr,
            }
        )
    _CRF_CACHE[key] = out
    return out


def crf_predict(chain, method: str, n_sweeps: int, seed: Any, block: int) -> tuple[np.ndarray, float]:
    """(label index of every token, sampling seconds for the whole chain)."""
    from samplers import registry as R
    from samplers.kernels.viterbi import viterbi_decode
    from samplers.problem import Problem
    from samplers.targets import chain_crf as CC

    if method == "viterbi":
        viterbi_decode(chain.unary[:2], chain.trans, np.array([0, 2]))  # compile
        t0 = time.perf_counter()
        x, _ = viterbi_decode(chain.unary, chain.trans, chain.ptr)
        return x, time.perf_counter() - t0
    pred = np.empty(chain.unary.shape[0], dtype=np.int64)
    secs = 0.0
    S = chain.ptr.shape[0] - 1
    ss = np.random.SeedSequence(0) if seed is None else seed
    for b0 in range(0, S, block):
        b1 = min(S, b0 + block)
        a, z = chain.ptr[b0], chain.ptr[b1]
        sub = CC.make_chain(chain.ptr[b0 : b1 + 1] - a, chain.unary[a:z], chain.trans)
        fg = CC.to_factor_graph(sub)
        x0 = np.argmax(sub.unary, axis=1).astype(np.int64)
        prob = Problem("crf_block", "discrete", fg, fg.n, lambda r, x0=x0: x0.copy(), meta={"chain": sub})
        if method == "herded_gibbs":
            r = R.run("herded_gibbs", prob, n_sweeps, 0, track_best=True, thin=n_sweeps, storage="dense")
        elif method == "annealed_gibbs":
            child = np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key) + (b0,))
            r = R.run("annealed_gibbs", prob, n_sweeps, child, track_best=True, thin=n_sweeps)
        else:
            raise ValueError(f"unknown CRF method {method!r}")
        pred[a:z] = r.extra["best_x"]
        secs += r.sample_seconds
    return pred, secs


def _as_entity_tags(labels: list[str], idx: np.ndarray, ptr: np.ndarray) -> list[list[str]]:
    """IO label indices -> seqeval tags (X -> I-X: an entity starts after O or another type)."""
    names = ["O" if lab == "O" else "I-" + lab for lab in labels]
    return [[names[k] for k in idx[ptr[s] : ptr[s + 1]]] for s in range(ptr.shape[0] - 1)]


def crf_evaluate(folds: list[dict], method: str, iters: int, seed: Any, block: int) -> dict:
    from seqeval.metrics import classification_report, f1_score, precision_score, recall_score

    from samplers.kernels.viterbi import chain_score, viterbi_decode

    gold, pred, vit = [], [], []
    secs = 0.0
    agree = n_tok = at_map = n_sent = 0
    for f, fd in enumerate(folds):
        ch = fd["chain"]
        p, sec = crf_predict(ch, method, iters, None if seed is None else _child(seed, f), block)
        secs += sec
        v, vscore = viterbi_decode(ch.unary, ch.trans, ch.ptr)
        sc = chain_score(ch.unary, ch.trans, ch.ptr, p)
        agree += int(np.sum(p == v))
        n_tok += int(p.shape[0])
        at_map += int(np.sum(sc >= vscore - 1e-9))
        n_sent += int(ch.ptr.shape[0] - 1)
        gold += fd["gold"]
        pred += _as_entity_tags(fd["labels"], p, ch.ptr)
        vit += _as_entity_tags(fd["labels"], v, ch.ptr)
    rep = classification_report(gold, pred, output_dict=True, zero_division=0)
    row = {
        "method": method,
        "iters": int(iters),
        "f1": 100.0 * f1_score(gold, pred),
        "precision": 100.0 * precision_score(gold, pred),
        "recall": 100.0 * recall_score(gold, pred),
        "f1_vs_viterbi": 100.0 * f1_score(vit, pred),
        "token_agreement_viterbi": agree / n_tok,
        "frac_sentences_at_map": at_map / n_sent,
        "seconds": secs,
        "n_tokens": n_tok,
        "n_sentences": n_sent,
    }
    for t in TYPES:
        row[f"f1_{t.lower()}"] = 100.0 * rep.get(t, {}).get("f1-score", 0.0)
    return row


def _crf_cells(s: dict) -> list[dict]:
    out = [{"cell": "viterbi", "method": "viterbi", "iters": 0, "run": 0}]
    for it in s["iters"]:
        out.append({"cell": f"herded_gibbs__it{it}", "method": "herded_gibbs", "iters": it, "run": 0})
        for r in range(int(s["annealed_runs"])):
            out.append(
                {"cell": f"annealed_gibbs__it{it}__r{r}", "method": "annealed_gibbs", "iters": it, "run": r}
            )
    return out


def _crf_run(params: dict, seed: np.random.SeedSequence, ctx: Any) -> list[dict]:
    s = ctx.settings
    folds = trained_folds(s, ieer_documents(ctx), os.path.join(str(Path(ctx.out_dir).parent), "hg_crf_cache"))
    row = crf_evaluate(folds, params["method"], int(params["iters"]), _child(seed, 0), int(s["block"]))
    row.update(
        {
            "run": params["run"],
            "folds": len(folds),
            "train_seconds": float(sum(f["train_seconds"] for f in folds)),
            "n_features": int(np.mean([f["n_features"] for f in folds])),
            "n_train_tokens": int(np.mean([f["n_train_tokens"] for f in folds])),
        }
    )
    return [row]


def _crf_summary(df: pd.DataFrame, settings: dict, out) -> None:
    df = df[df["status"] == "ok"] if "status" in df else df
    if df.empty:
        return
    g = (
        df.groupby(["method", "iters"])
        .agg(
            f1=("f1", "mean"),
            f1_sd=("f1", "std"),
            seconds=("seconds", "mean"),
            f1_person=("f1_person", "mean"),
            f1_location=("f1_location", "mean"),
            f1_organization=("f1_organization", "mean"),
            token_agreement_viterbi=("token_agreement_viterbi", "mean"),
            frac_sentences_at_map=("frac_sentences_at_map", "mean"),
            runs=("f1", "count"),
        )
        .reset_index()
    )
    g["paper_value"] = [
        TABLE3.get((m, i), (np.nan, np.nan))[0] for m, i in zip(g["method"], g["iters"], strict=True)
    ]
    g["paper_seconds"] = [
        TABLE3.get((m, i), (np.nan, np.nan))[1] for m, i in zip(g["method"], g["iters"], strict=True)
    ]
    out.table(
        "hg_table3",
        g,
        caption="Table 3: per-entity F1 (seqeval, PERSON / LOCATION / ORGANIZATION) on the NIST 1999 "
        "IE-ER corpus and sampling seconds for the whole test set; linear-chain CRF trained with "
        "CRFsuite L-BFGS, cross-fitted over IE-ER's documents (the paper used the pre-trained Stanford "
        "3-class CRF, so F1 levels differ; the comparison is between inference methods on one model). "
        "f1_sd: sd over the annealed runs.",
    )


SETTINGS_CRF = {
    "paper": {
        "folds": 5,
        "n_docs": None,
        "c1": 0.0,
        "c2": 1.0,
        "max_iterations": 200,
        "iters": [100, 400, 800],
        "annealed_runs": 5,
        "block": 200,
    },
    "smoke": {
        "folds": 2,
        "n_docs": 12,
        "c1": 0.0,
        "c2": 1.0,
        "max_iterations": 30,
        "iters": [10, 40],
        "annealed_runs": 2,
        "block": 200,
    },
}
EXPERIMENTS = [
    Experiment(
        "hg_crf",
        "herded",
        "Chen et al. 2016, §4.4, Table 3",
        "chain-CRF NER on IE-ER: herded vs annealed Gibbs vs Viterbi",
        SETTINGS_CRF,
        _crf_cells,
        _crf_run,
        _crf_summary,
        notes="IE-ER test set and 3 classes as the paper; CRF trained with CRFsuite L-BFGS on IE-ER "
        "itself, 5-fold cross-fitted by document (the paper's Stanford model and its training corpora "
        "are not on hand); smoke: 12 documents, 2 folds, 10/40 sweeps, 2 annealed runs.",
        grid_keys=("annealed_runs",),
    ),
]
