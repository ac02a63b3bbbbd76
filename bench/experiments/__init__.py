"""Experiment registry: every family lists ``EXPERIMENTS = [Experiment(...)]`` in its own module or package.

A family package (``bench/experiments/<family>/``) holds one module per paper experiment (its settings,
cells, run_cell, summarize and ``EXPERIMENTS`` entry), one module of each paper's transcribed values and
the helpers its experiments share; its ``__init__`` collects the modules' ``EXPERIMENTS`` in order.
The workflow, the CLI and the tests read :func:`all_experiments` / :func:`get_experiment`; adding an
experiment is a module of its family package (listed in the package's ``EXPERIMENTS``) and never an edit
of the Snakefile.
A module that fails to import, a non-:class:`~bench.experiment.Experiment` entry, a file-name unsafe
id or an id registered twice is an error (never a silently missing experiment).
"""

from __future__ import annotations

import importlib
import re

from bench.experiment import Experiment

FAMILY_MODULES = (
    "bench.experiments.baselines",
    "bench.experiments.exact_mh",
    "bench.experiments.approx",
    "bench.experiments.poisson_gibbs",
    "bench.experiments.herded",
)

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

_CACHE: dict[str, Experiment] | None = None


def load_experiments(modules: tuple[str, ...] = FAMILY_MODULES) -> dict[str, Experiment]:
    """Import ``modules`` and collect their ``EXPERIMENTS`` in registration order."""
    out: dict[str, Experiment] = {}
    for modname in modules:
        mod = importlib.import_module(modname)
        for exp in getattr(mod, "EXPERIMENTS", []):
            if not isinstance(exp, Experiment):
                raise TypeError(f"{modname}.EXPERIMENTS holds {type(exp).__name__}, not Experiment")
            if not ID_RE.match(exp.id):
                raise ValueError(
                    f"experiment id {exp.id!r} ({modname}) is not file-name safe "
                    f"(letters, digits, '_', '.', '-')"
                )
            if exp.id in out:
                raise ValueError(f"experiment id {exp.id!r} registered twice ({modname})")
            out[exp.id] = exp
    return out


def all_experiments() -> dict[str, Experiment]:
    """All registered experiments (loaded once per process)."""
    global _CACHE
    if _CACHE is None:
        _CACHE = load_experiments()
    return _CACHE


def get_experiment(exp_id: str) -> Experiment:
    """The experiment registered as ``exp_id``; unknown id -> ValueError listing the known ones."""
    exps = all_experiments()
    try:
        return exps[exp_id]
    except KeyError:
        raise ValueError(
            f"unknown experiment {exp_id!r}; known: {', '.join(sorted(exps)) or '(none)'}"
        ) from None
