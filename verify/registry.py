"""Registry of verification checks: collects ``CHECKS`` from ``verify/families/<family>.py``.

A family module defines ``CHECKS = [Check(id, kind, paper, description, run, family), ...]`` (see
:mod:`verify.checks`). Ids must be unique across families; ``kind`` must be "exact", "theory" or
"claim". A missing family module is an error, not a silent gap.
"""

from __future__ import annotations

import importlib

from verify.checks import Check

FAMILIES = ("baselines", "exact_mh", "approx", "poisson_gibbs", "herded")
KINDS = ("exact", "theory", "claim")


def load_checks(families: list[str] | tuple[str, ...] | None = None) -> list[Check]:
    """All registered checks of ``families`` (default: every family), in registration order."""
    fams = FAMILIES if not families else tuple(families)
    unknown = [f for f in fams if f not in FAMILIES]
    if unknown:
        raise ValueError(f"unknown check family {unknown}; known: {', '.join(FAMILIES)}")
    out: list[Check] = []
    seen: set[str] = set()
    for fam in fams:
        mod = importlib.import_module(f"verify.families.{fam}")
        for chk in getattr(mod, "CHECKS", []):
            if not isinstance(chk, Check):
                raise TypeError(f"verify.families.{fam}.CHECKS contains {chk!r}, not a Check")
            if chk.kind not in KINDS:
                raise ValueError(f"check {chk.id!r}: kind {chk.kind!r} not in {KINDS}")
            if chk.id in seen:
                raise ValueError(f"check id {chk.id!r} registered twice")
            seen.add(chk.id)
            out.append(chk)
    return out
