"""Experiment contract shared by the workflow, the CLI and every family.

An experiment (one paper table/figure group) registers in its family's module or package under
``bench/experiments/`` as ``EXPERIMENTS = [Experiment(...)]``. The workflow never needs editing to add one:

* ``settings[scale]`` (scale = "paper" | "smoke") holds the parameters; ``notes`` explains any
  reduction from the paper (e.g. fewer replicates) — the config files may override per experiment.
* ``cells(settings) -> list[dict]``: one dict of JSON-able parameters per cell (method x target x
  setting x seed shard); each must contain a unique ``"cell"`` id string (file-name safe).
* ``run_cell(params, seed: SeedSequence, ctx) -> list[dict]``: runs the cell, returns result rows
  (flat dicts; the runner adds ``experiment, cell, config_hash, seed, wall_seconds, status``).
  ``ctx`` gives ``data(name)`` (dataset loader; raises ``DataUnavailable``) and ``out_dir``.
* ``grid_keys``: top-level settings that only say which cells exist: replicate counts (an int, e.g.
  ``runs``) and selections (a non-empty list, e.g. ``methods``, ``rates``, ``variants``); every cell's
  params carry its own index, method, rate ... A cell does not see them (they are absent from
  ``ctx.settings``: reading one is a KeyError) and they are left out of its config hash, so raising
  ``runs`` from 30 to 100, or selecting fewer methods, keeps every finished record valid and reruns
  nothing.
* ``optional_grid_keys``: grid keys that select an optional subset of the grid (e.g. ``dense_runs``: how
  many runs get the authors'-timing cells): absent = the whole subset, 0 allowed.
* ``summarize(rows: DataFrame, settings, out: Outputs) -> None``: writes tables
  (``out.table(name, df)`` -> results/<name>.csv + .md) and figures (``out.figure(name, fig)`` ->
  paper_figs/<name>.png + .pdf). Tables that counterpart a paper table carry a ``paper_value`` column.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Experiment:
    id: str
    family: str
    paper: str
    description: str
    settings: dict[str, dict[str, Any]]  # {"paper": {...}, "smoke": {...}}
    cells: Callable[[dict[str, Any]], list[dict[str, Any]]]
    run_cell: Callable[..., list[dict[str, Any]]]
    summarize: Callable[..., None]
    notes: str = ""
    datasets: tuple[str, ...] = field(default_factory=tuple)
    grid_keys: tuple[str, ...] = field(default_factory=tuple)
    optional_grid_keys: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not set(self.optional_grid_keys) <= set(self.grid_keys):
            raise ValueError(f"experiment {self.id!r}: optional_grid_keys must be grid_keys")
        for scale, st in self.settings.items():
            missing = [k for k in self.grid_keys if k not in st and k not in self.optional_grid_keys]
            if missing:
                raise ValueError(f"experiment {self.id!r}: grid_keys {missing} not in its {scale!r} settings")
