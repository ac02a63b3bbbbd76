"""Readers for NLTK's tagged-corpus zips (no nltk dependency), for the chain-CRF labelling
experiment of Chen et al. 2016 §4.4.

* CoNLL-2000 chunking (``conll2000.zip``: ``train.txt``, ``test.txt``): ``word POS chunk``.
* CoNLL-2002 NER (``conll2002.zip``: ``{esp,ned}.{train,testa,testb}``): ``word POS NE``;
  the Dutch ``-DOCSTART- -DOCSTART- O`` article markers are dropped (as NLTK does).
* IE-ER (``ieer.zip``, the paper's NIST 1999 test set): documents with inline
  ``<b_enamex type=..>..<e_enamex>`` (also timex/numex) mark-up, turned into IOB2 token tags.

Sentences are lists of tuples: ``(token, tag)`` for the chosen ``tagset``, or
``(token, pos, tag)`` with ``tagset="all"``.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

from .fetch import fetch

__all__ = [
    "CONLL2000_SPLITS",
    "CONLL2002_FILES",
    "conll2000",
    "conll2002",
    "ieer",
    "parse_conll",
]

CONLL2000_SPLITS = ("train", "test")
CONLL2002_FILES = tuple(f"{lang}.{s}" for lang in ("esp", "ned") for s in ("train", "testa", "testb"))
_TAGSET_COLUMN = {"pos": 1, "chunk": 2, "ner": 2}


def parse_conll(text: str, tagset: str = "chunk", name: str = "<text>") -> list[list[tuple[str, ...]]]:
    """Parse ``word POS tag`` lines (blank line ends a sentence) into sentences.

    ``tagset`` is ``"pos"`` (column 2), ``"chunk"``/``"ner"`` (column 3) -> (token, tag) pairs,
    or ``"all"`` -> (token, pos, tag) triples. ``-DOCSTART-`` lines are skipped.
    """
    if tagset not in (*_TAGSET_COLUMN, "all"):
        raise ValueError(f"tagset must be one of pos/chunk/ner/all, got {tagset!r}")
    sents: list[list[tuple[str, ...]]] = []
    cur: list[tuple[str, ...]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            if cur:
                sents.append(cur)
                cur = []
            continue
        if len(fields) != 3:
            raise ValueError(f"{name}: line {lineno} has {len(fields)} fields, expected 3")
        if fields[0] == "-DOCSTART-":
            continue
        if tagset == "all":
            cur.append(tuple(fields))
        else:
            cur.append((fields[0], fields[_TAGSET_COLUMN[tagset]]))
    if cur:
        sents.append(cur)
    return sents


def _read_member(zpath: Path, member: str, encoding: str) -> str:
    try:
        with zipfile.ZipFile(zpath) as zf:
            raw = zf.read(member)
    except KeyError as exc:
        raise ValueError(f"{zpath}: no member {member!r}") from exc
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{zpath}: corrupt zip ({exc})") from exc
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{zpath}:{member}: not valid {encoding} ({exc})") from exc


def conll2000(
    split: str = "train",
    tagset: str = "chunk",
    *,
    data_dir: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
) -> list[list[tuple[str, ...]]]:
    """CoNLL-2000 chunking sentences (train: 8936 sentences / 211727 tokens; test: 2012 / 47377)."""
    if split not in CONLL2000_SPLITS:
        raise ValueError(f"split must be one of {CONLL2000_SPLITS}, got {split!r}")
    zpath = fetch("conll2000", data_dir, mirror)
    member = f"conll2000/{split}.txt"
    return parse_conll(_read_member(zpath, member, "ascii"), tagset, member)


def conll2002(
    lang: str = "esp",
    split: str = "train",
    tagset: str = "ner",
    *,
    data_dir: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
) -> list[list[tuple[str, ...]]]:
    """CoNLL-2002 NER sentences, ``lang`` in {esp, ned}, ``split`` in {train, testa, testb}."""
    fname = f"{lang}.{split}"
    if fname not in CONLL2002_FILES:
        raise ValueError(f"unknown CoNLL-2002 file {fname!r}; known: {CONLL2002_FILES}")
    zpath = fetch("conll2002", data_dir, mirror)
    member = f"conll2002/{fname}"
    return parse_conll(_read_member(zpath, member, "utf-8"), tagset, member)


_IEER_PIECE = re.compile(r"<[^>]+>|[^\s<]+")
_IEER_TYPE = re.compile(r'<b_\w+\s+[^>]*?type="(\w+)"')
_IEER_DOC = re.compile(r"<DOC>(.*?)</DOC>", re.S)
_IEER_DOCNO = re.compile(r"<DOCNO>\s*(\S+)\s*</DOCNO>")
_IEER_TEXT = re.compile(r"<TEXT>(.*?)</TEXT>", re.S)
IEER_FILES = (
    "APW_19980314",
    "APW_19980424",
    "APW_19980429",
    "NYT_19980315",
    "NYT_19980403",
    "NYT_19980407",
)


def _ieer_tokens(text: str, keep: set[str] | None, name: str) -> list[tuple[str, str]]:
    """Whitespace tokens of an IE-ER TEXT block with IOB2 tags of the outermost mention."""
    out: list[tuple[str, str]] = []
    stack: list[str] = []  # open mention types, outermost first
    fresh = False
    for m in _IEER_PIECE.finditer(text):
        piece = m.group()
        if piece.startswith("<b_"):
            t = _IEER_TYPE.match(piece)
            if t is None:
                raise ValueError(f"{name}: mention tag without type: {piece!r}")
            stack.append(t.group(1))
            fresh = fresh or len(stack) == 1
        elif piece.startswith("<e_"):
            if not stack:
                raise ValueError(f"{name}: unbalanced {piece!r}")
            stack.pop()
        elif piece.startswith("<"):
            continue  # other mark-up inside TEXT (none expected)
        else:
            typ = stack[0] if stack else None
            if typ is None or (keep is not None and typ not in keep):
                out.append((piece, "O"))
            else:
                out.append((piece, ("B-" if fresh else "I-") + typ))
            fresh = False
    if stack:
        raise ValueError(f"{name}: unclosed mention {stack}")
    return out


def ieer(
    types: tuple[str, ...] | None = None,
    *,
    data_dir: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
) -> list[tuple[str, list[tuple[str, str]]]]:
    """IE-ER documents as (docno, [(token, IOB2 tag), ...]) from each ``<TEXT>`` block.

    Tokens are maximal runs of non-space, non-``<`` characters; tags come from the outermost
    mention. ``types`` (e.g. ("PERSON", "ORGANIZATION", "LOCATION") for a 3-class NER model)
    keeps only those mention types; others become ``O``. No sentence segmentation exists.
    Counts: 94 documents, 57,899 tokens, 4,953 B- tags (4,954 mentions, one nested). NLTK's
    reader reports 57,931 tokens because it also keeps the 32 ``<ANNOTATION>`` mark-up tags as
    tokens; we drop the tags (the annotation text itself is kept).
    """
    zpath = fetch("ieer", data_dir, mirror)
    keep = None if types is None else set(types)
    docs = []
    for f in IEER_FILES:
        text = _read_member(zpath, f"ieer/{f}", "ascii")
        for dm in _IEER_DOC.finditer(text):
            body = dm.group(1)
            no = _IEER_DOCNO.search(body)
            tm = _IEER_TEXT.search(body)
            if no is None or tm is None:
                raise ValueError(f"{zpath}:ieer/{f}: document without DOCNO or TEXT")
            docs.append((no.group(1), _ieer_tokens(tm.group(1), keep, f"ieer/{f}")))
    return docs
