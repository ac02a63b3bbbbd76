"""Regenerate tests/data/miniboone_small.txt (synthetic, MiniBooNE_PID.txt layout).

20 signal + 40 background rows of 50 E14.6 fields; feature scales 1e-3..1e3, some signs
flipped, one exact zero, two all-missing rows (-999, rows 11 and 47) and one single missing
entry (row 30, feature 12). Run: ``.venv/bin/python tests/data/make_miniboone_small.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.datasets.miniboone import format_miniboone

N_SIGNAL, N_BACKGROUND = 20, 40


def make() -> str:
    rng = np.random.default_rng(199)
    n = N_SIGNAL + N_BACKGROUND
    scale = 10.0 ** (np.arange(50) % 7 - 3)
    X = rng.lognormal(0.0, 0.5, size=(n, 50)) * scale
    X[:, 1::5] *= rng.choice([-1, 1], size=(n, 10))
    X[:N_SIGNAL] *= 1.3
    X[3, 7] = 0.0
    X[11, :] = -999.0
    X[47, :] = -999.0
    X[30, 12] = -999.0
    return format_miniboone(X, N_SIGNAL)


if __name__ == "__main__":
    out = Path(__file__).with_name("miniboone_small.txt")
    out.write_text(make())
    print(f"wrote {out}")
