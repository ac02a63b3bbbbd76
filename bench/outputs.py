"""Where experiments write their tables and figures (``Experiment.summarize(df, settings, out)``).

``out.table(name, df)`` -> ``<results>/<name>.csv`` + ``<results>/<name>.md``;
``out.figure(name, fig)`` -> ``<figs>/<name>.png`` + ``<figs>/<name>.pdf``. Every write is atomic
(temp file in the target directory + ``os.replace``). Each call is recorded in a manifest (kind,
name, files, caption, experiment) that the workflow writes next to the results and the HTML report
reads; with ``assets_dir`` set, the CSV and PNG are also copied there for ``snakemake --report``.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name) or name.endswith("."):
        raise ValueError(f"output name {name!r} is not file-name safe (letters, digits, _ . -)")
    return name


def _fmt_cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.4g}"
    return str(v).replace("|", "\\|").replace("\n", " ")


def markdown_table(df: pd.DataFrame) -> str:
    """Pipe-table Markdown of ``df``: pandas ``to_markdown`` (tabulate) when available, otherwise
    a small formatter of our own (floats to 4 significant digits, no index)."""
    try:
        import tabulate  # noqa: F401

        return df.to_markdown(index=False, floatfmt=".4g") + "\n"
    except ImportError:
        pass
    cols = [str(c) for c in df.columns]
    rows = [[_fmt_cell(v) for v in rec] for rec in df.itertuples(index=False, name=None)]
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"
    out = [line(cols), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out) + "\n"


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write text atomically (temp file in the same directory + ``os.replace``) with the usual
    permissions (``mkstemp`` alone would leave 0600 files)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _atomic_savefig(fig: Any, path: Path, fmt: str, dpi: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=f".tmp.{fmt}")
    os.close(fd)
    try:
        fig.savefig(tmp, format=fmt, dpi=dpi, bbox_inches="tight")
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _atomic_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dst.parent, suffix=".tmp")
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class Outputs:
    """Table/figure writer with a manifest (see module docstring)."""

    def __init__(
        self,
        results_dir: str | os.PathLike = "results",
        figs_dir: str | os.PathLike = "paper_figs",
        *,
        experiment: str = "",
        assets_dir: str | os.PathLike | None = None,
        dpi: int = 150,
    ) -> None:
        self.results_dir = Path(results_dir)
        self.figs_dir = Path(figs_dir)
        self.assets_dir = None if assets_dir is None else Path(assets_dir)
        self.experiment = experiment
        self.dpi = int(dpi)
        self.manifest: list[dict[str, Any]] = []
        self._names: set[tuple[str, str]] = set()

    def _record(self, kind: str, name: str, files: list[Path], caption: str) -> None:
        if (kind, name) in self._names:
            raise ValueError(f"{kind} {name!r} written twice by experiment {self.experiment!r}")
        self._names.add((kind, name))
        self.manifest.append(
            {
                "kind": kind,
                "name": name,
                "files": [str(f) for f in files],
                "caption": caption,
                "experiment": self.experiment,
            }
        )

    def table(self, name: str, df: pd.DataFrame, caption: str = "") -> list[Path]:
        """Write ``df`` as ``<results>/<name>.csv`` and ``.md`` (atomic); returns the paths."""
        _check_name(name)
        if not isinstance(df, pd.DataFrame):
            raise ValueError(f"table {name!r}: expected a pandas DataFrame, got {type(df).__name__}")
        csv = self.results_dir / f"{name}.csv"
        md = self.results_dir / f"{name}.md"
        atomic_write_text(csv, df.to_csv(index=False))
        head = f"# {name}\n\n" + (f"{caption}\n\n" if caption else "")
        atomic_write_text(md, head + markdown_table(df))
        if self.assets_dir is not None:
            _atomic_copy(csv, self.assets_dir / f"{name}.csv")
        self._record("table", name, [csv, md], caption)
        return [csv, md]

    def figure(self, name: str, fig: Any, caption: str = "", close: bool = True) -> list[Path]:
        """Save a matplotlib figure as ``<figs>/<name>.png`` and ``.pdf`` (atomic)."""
        _check_name(name)
        if not hasattr(fig, "savefig"):
            raise ValueError(f"figure {name!r}: expected a matplotlib Figure, got {type(fig)}")
        self.figs_dir.mkdir(parents=True, exist_ok=True)
        png = self.figs_dir / f"{name}.png"
        pdf = self.figs_dir / f"{name}.pdf"
        _atomic_savefig(fig, png, "png", self.dpi)
        _atomic_savefig(fig, pdf, "pdf", self.dpi)
        if close:
            import matplotlib.pyplot as plt

            plt.close(fig)
        if self.assets_dir is not None:
            _atomic_copy(png, self.assets_dir / f"{name}.png")
        self._record("figure", name, [png, pdf], caption)
        return [png, pdf]

    def write_manifest(self, path: str | os.PathLike) -> Path:
        """Write the manifest as JSON (atomic)."""
        return atomic_write_text(path, json.dumps(self.manifest, indent=1) + "\n")
