"""Hand-written 8-bit BMP reader and the PMTK letter-"A" image (Chen et al. 2016 §4.3 denoising).

The letter-A image (``images/letterA.bmp``, the mirror's PROVENANCE.md) is a 128 x 128 Windows BMP,
8 bits per pixel with a grey palette (index i -> grey i), rows stored bottom-up. Binarised as
PMTK's ``isingImageDenoiseDemo.m`` does: +1 where the grey level exceeds the image mean, -1
elsewhere, which gives 4282 foreground pixels (26.14 %).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np

from .fetch import fetch

__all__ = ["LETTER_A_FOREGROUND", "letter_a", "parse_bmp8", "read_bmp8_grey"]

LETTER_A_FOREGROUND = 4282
_INFO_HEADER_SIZES = (40, 52, 56, 108, 124)  # BITMAPINFOHEADER and its V2..V5 extensions


def parse_bmp8(data: bytes, name: str = "<bytes>") -> tuple[np.ndarray, np.ndarray]:
    """Parse an uncompressed 8-bit palette BMP: (indices (h, w) uint8, top row first; palette
    (n, 3) uint8 RGB). Validates signature, sizes, planes, depth, compression and palette."""
    if len(data) < 54:
        raise ValueError(f"{name}: {len(data)} bytes is too short for a BMP header")
    if data[:2] != b"BM":
        raise ValueError(f"{name}: not a BMP file (signature {data[:2]!r})")
    file_size, _, offset = struct.unpack_from("<IIi", data, 2)
    if file_size != len(data):
        raise ValueError(f"{name}: header says {file_size} bytes, file has {len(data)} (truncated?)")
    (dib,) = struct.unpack_from("<I", data, 14)
    if dib not in _INFO_HEADER_SIZES:
        raise ValueError(f"{name}: unsupported DIB header size {dib} (need BITMAPINFOHEADER)")
    width, height, planes, bpp, comp, _, _, _, n_used, _ = struct.unpack_from("<iiHHIIiiII", data, 18)
    if planes != 1:
        raise ValueError(f"{name}: {planes} colour planes, expected 1")
    if bpp != 8:
        raise ValueError(f"{name}: {bpp} bits per pixel, only 8-bit palette images supported")
    if comp != 0:
        raise ValueError(f"{name}: compression {comp}, only uncompressed (BI_RGB=0) supported")
    if width <= 0 or height == 0:
        raise ValueError(f"{name}: bad dimensions {width} x {height}")
    n_colors = n_used or 256
    pal_start = 14 + dib
    if n_colors > 256 or pal_start + 4 * n_colors > offset:
        raise ValueError(f"{name}: palette of {n_colors} entries does not fit before offset {offset}")
    pal = np.frombuffer(data, np.uint8, 4 * n_colors, pal_start).reshape(n_colors, 4)
    palette = pal[:, 2::-1].copy()  # BGRA -> RGB
    h = abs(height)
    stride = (width + 3) // 4 * 4
    if offset + stride * h > len(data):
        raise ValueError(f"{name}: pixel data truncated ({len(data) - offset} < {stride * h} bytes)")
    rows = np.frombuffer(data, np.uint8, stride * h, offset).reshape(h, stride)[:, :width]
    if rows.size and rows.max() >= n_colors:
        raise ValueError(f"{name}: pixel index {rows.max()} outside palette of {n_colors}")
    idx = rows[::-1] if height > 0 else rows  # positive height = bottom-up rows
    return idx.copy(), palette


def read_bmp8_grey(path: str | os.PathLike) -> np.ndarray:
    """Grey levels (h, w) uint8 of an 8-bit BMP whose palette is grey (r = g = b)."""
    path = Path(path)
    idx, palette = parse_bmp8(path.read_bytes(), str(path))
    if not ((palette[:, 0] == palette[:, 1]) & (palette[:, 1] == palette[:, 2])).all():
        raise ValueError(f"{path}: palette is not grey")
    return palette[idx, 0]


def letter_a(
    binary: bool = True,
    *,
    data_dir: str | os.PathLike | None = None,
    mirror: str | os.PathLike | None = None,
) -> np.ndarray:
    """The 128 x 128 letter-A image, upright: +-1 int8 (``binary``) or grey levels uint8.

    Binarisation: +1 where grey > mean grey, else -1; checked to give 4282 foreground pixels.
    """
    grey = read_bmp8_grey(fetch("letterA", data_dir, mirror))
    if not binary:
        return grey
    x = np.where(grey > grey.mean(), 1, -1).astype(np.int8)
    n_fg = int((x == 1).sum())
    if n_fg != LETTER_A_FOREGROUND:
        raise ValueError(f"letter A: {n_fg} foreground pixels, expected {LETTER_A_FOREGROUND}")
    return x
