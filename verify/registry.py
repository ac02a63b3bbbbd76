"""Registry of verification checks: collects ``CHECKS`` from ``verify/families/<family>.py`` and from
other packages.

A family module defines ``CHECKS = [Check(id, kind, paper, description, run, family), ...]`` (see
:mod:`verify.checks`). Ids must be unique across families; ``kind`` must be "exact", "theory" or
"claim". A missing family module is an error, not a silent gap.

Checks of another package register themselves without editing ``verify/``: through the entry-point group
``minibatch_mcmc_bench.checks`` (:data:`CHECK_GROUP`; each entry point names a module or object with
``CHECKS``, a list of checks, or one check), or from a script with :func:`register_check`. Their
``family`` is theirs to choose (a shipped family's name joins that family's runs).
"""

from __future__ import annotations

import difflib
import importlib

from verify.checks import Check

FAMILIES = ("baselines", "exact_mh", "approx", "poisson_gibbs", "herded")
KINDS = ("exact", "theory", "claim")
CHECK_GROUP = "minibatch_mcmc_bench.checks"
# experiment family (bench.experiment.Experiment.family) -> the check family that verifies its methods
EXPERIMENT_FAMILIES = {"baseline": "baselines"}

_REGISTERED: list[Check] = []  # register_check() calls
_PLUGINS: list[Check] = []  # the entry points' checks, loaded once (_LOADED)
_LOADED: list[bool] = []


def _valid(chk: object, where: str) -> Check:
    if not isinstance(chk, Check):
        raise TypeError(f"{where}: CHECKS contains {chk!r:.80}, not a Check")
    if chk.kind not in KINDS:
        raise ValueError(f"check {chk.id!r} ({where}): kind {chk.kind!r} not in {KINDS}")
    return chk


def plugin_checks() -> list[Check]:
    """Checks of the installed ``minibatch_mcmc_bench.checks`` entry points, then :func:`register_check`'s."""
    if not _LOADED:
        from samplers.registry import entry_point_objects

        for where, obj in entry_point_objects(CHECK_GROUP):
            items = obj if isinstance(obj, (list, tuple, Check)) else getattr(obj, "CHECKS", None)
            if items is None:
                raise ValueError(f"{where} gives {obj!r:.80}: expected CHECKS, a list of Check, or a Check")
            for chk in [items] if isinstance(items, Check) else items:
                _PLUGINS.append(_valid(chk, where))
        _LOADED.append(True)
    return _PLUGINS + _REGISTERED


def register_check(*checks: Check) -> None:
    """Register checks from a script (a package uses the entry-point group, module docstring). An id
    already registered by a plugin or an earlier call is a ValueError (a shipped id: :func:`load_checks`)."""
    known = {c.id for c in plugin_checks()}
    for chk in checks:
        _valid(chk, "register_check()")
        if chk.id in known:
            raise ValueError(f"check id {chk.id!r} registered twice (register_check)")
        known.add(chk.id)
    _REGISTERED.extend(checks)


def all_families() -> tuple[str, ...]:
    """The shipped families, then the other families of the plugin checks (first appearance)."""
    return tuple(dict.fromkeys(FAMILIES + tuple(c.family for c in plugin_checks())))


def families_of_experiments(experiment_families: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Check families (in :func:`all_families` order) verifying experiments of these families: the workflow
    runs only these when its config selects experiments."""
    want = {EXPERIMENT_FAMILIES.get(f, f) for f in experiment_families}
    return tuple(f for f in all_families() if f in want)


def load_checks(families: list[str] | tuple[str, ...] | None = None) -> list[Check]:
    """All registered checks of ``families`` (default: every family), in registration order."""
    known = all_families()
    fams = known if not families else tuple(families)
    unknown = [f for f in fams if f not in known]
    if unknown:
        raise ValueError(f"unknown check family {unknown}; known: {', '.join(known)}")
    out: list[Check] = []
    seen: set[str] = set()
    plugins = plugin_checks()
    for fam in fams:
        chks: list[Check] = []
        if fam in FAMILIES:
            mod = importlib.import_module(f"verify.families.{fam}")
            chks = [_valid(c, f"verify.families.{fam}") for c in getattr(mod, "CHECKS", [])]
        for chk in chks + [c for c in plugins if c.family == fam]:
            if chk.id in seen:
                raise ValueError(f"check id {chk.id!r} registered twice")
            seen.add(chk.id)
            out.append(chk)
    return out


def find_check(check_id: str) -> Check:
    """The check ``check_id`` (the family named by its first dotted part is searched first); an unknown id
    is a one-line ValueError listing the nearest registered ids."""
    first = check_id.split(".", 1)[0]
    if first in all_families():
        for chk in load_checks([first]):
            if chk.id == check_id:
                return chk
    checks = load_checks()
    for chk in checks:
        if chk.id == check_id:
            return chk
    ids = [c.id for c in checks]
    near = difflib.get_close_matches(check_id, ids, n=5, cutoff=0.5) or [i for i in ids if first in i][:5]
    hint = f"; nearest: {', '.join(near)}" if near else ""
    raise ValueError(f"unknown check {check_id!r}{hint} ({len(ids)} checks: mcmc-bench verify --list)")
