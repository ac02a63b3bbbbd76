"""The shared Poisson-thinning minibatch sampler (Yuan & Wang 2024 App. C, Alg. 8/9; Zhang & De Sa 2019
Alg. 4).

Goal: independent counts s_i ~ Poisson(rate_i) with rate_i = a_i + phi_i, 0 <= phi_i <= b_i, at cost
O(sum_i (a_i + b_i)) instead of O(N). Draw B ~ Poisson(Lambda), Lambda = sum_i (a_i + b_i); draw B
candidate indices i.i.d. from p_i ∝ a_i + b_i (alias table built once); keep candidate i with probability
(a_i + phi_i) / (a_i + b_i). Kept candidates, with repetition, are the multiset {i: s_i times}.

Families call :func:`draw_candidates` and then evaluate phi only on the candidates (that is the
minibatch: its size B is the "batch size" every table reports) and :func:`keep` to thin them.
Randomness: B from the chain's Generator, then one counter-based stream per draw
(:mod:`samplers.streams`): uniform ``b`` of the stream picks candidate b's alias slot, uniform
``B + b`` is its thinning coin (:func:`coin`), so the hot loops make no Generator call.
PoissonMH: a_i = lambda M_i / L, b_i = M_i. TunaMH: a_i = lambda c_i / C, b_i = c_i M(theta, theta').

Tall-data kernels keep the alias table *inside* their packed data rows (:func:`table_rows`,
:func:`draw_from_rows`): slot j of the table is datum j, so the draw reads the line of row j that holds
(prob_j, alias_j), and since the alias is taken rarely (4 % of draws on the truncated Gaussian) the row the
candidate then evaluates is usually the one already fetched. Same draws, bit for bit, as
:func:`draw_candidates` on the same table (docs/performance.md §7.1).
"""

from __future__ import annotations

import mmap

import numpy as np
from numba import njit

from samplers.alias import alias_slot, build_alias, slot_and_coin
from samplers.hotloop import prefetch1, prefetch2, prefetch2_l2, prefetch_row
from samplers.streams import counter, new_stream, uniform, uniform_at

# tables smaller than this (entries) stay in L2 and use the one-pass draw
ALIAS_PREFETCH_MIN = 1 << 15
# columns of a candidate row (:func:`table_rows`), counted from p = number of data columns:
# the bound a_i (M_i for the PoissonMH family, c_i for TunaMH), shift_i, the alias table's prob_i and
# alias_i (an int stored as float64: exact below 2^53), then y_i where the target has responses
ROW_A, ROW_SHIFT, ROW_PROB, ROW_ALIAS, ROW_Y = 0, 1, 2, 3, 4
# the candidate pipeline (:func:`open_candidates`): while candidate b is evaluated, b + RESOLVE_AHEAD is
# resolved to its datum and b + SLOT_AHEAD draws its slot and prefetches that row. 48 / 12 against 24 / 8,
# on a Zen 5 VM: TG growth 1e4 -> 1e6 1.55 against 1.67 (PoissonMH) and 1.30 against 1.49 (TunaMH), with no
# in-cache cost; 128 / 32 slows the in-cache candidate by 12 %. The rows are prefetched into L2
# (:func:`samplers.hotloop.prefetch_row`; PoissonMH's growth there 1.43-1.46 against 1.56-1.60 into L1).
# docs/performance.md §7.2. A hint only: draws, order and chains are the same for any depth and level.
SLOT_AHEAD = 48
RESOLVE_AHEAD = 12
_LINE = 64  # bytes
_HUGE = 2 << 20  # bytes: a transparent huge page
# cap on a draw's Poisson rate Lambda (the expected number of candidates B): far above any useful minibatch
# (N <= ~1e7 data), far below where the int64 count or its buffers overflow (Lambda ~ 9e18). A rate that is
# NaN, inf, negative or above the cap (huge lam_mult / chi) is an error, not a draw (:func:`check_rate`)
RATE_CAP = 1e12


@njit(cache=True)
def draw_candidates(prob: np.ndarray, alias: np.ndarray, Lam: float, rng, buf: np.ndarray):
    """B ~ Poisson(Lam) alias draws written to ``buf[:B]``; returns ``(B, buf, st)``.

    ``st`` is the draw's uniform stream (:func:`samplers.streams.new_stream`): uniform b picked
    candidate b (:func:`samplers.alias.alias_slot`), uniforms ``B + b`` are left for the thinning coins
    (:func:`coin`). ``buf`` is reused across iterations and only regrown (doubling) when B exceeds it,
    so the steady state allocates nothing. Tables of >= ``ALIAS_PREFETCH_MIN`` entries use two passes
    with the same result: pass 1 stores ``v = u n`` (as float64 bits in ``buf``) and prefetches the
    table slot ``floor(v)``, pass 2 resolves slot and coin (N = 1e6: 16 MB of table, latency hidden)."""
    B, buf, st = _open_draw(Lam, rng, buf)
    n = prob.shape[0]
    if n < ALIAS_PREFETCH_MIN:
        for b in range(B):
            buf[b] = alias_slot(prob, alias, 0, n, uniform(st, b))
        return B, buf, st
    fb = buf[:B].view(np.float64)
    for b in range(B):
        v = uniform(st, b) * n
        fb[b] = v
        j = int(v)
        if j < n:
            prefetch1(prob, j)
            prefetch1(alias, j)
    for b in range(B):
        j, c = slot_and_coin(fb[b], n)
        buf[b] = j if c < prob[j] else alias[j]
    return B, buf, st


@njit(cache=True, inline="always")
def _open_draw(Lam: float, rng, buf: np.ndarray):
    """``B ~ Poisson(Lam)``, the draw's uniform stream, and ``buf`` regrown (doubling) if B exceeds it.
    ValueError if ``Lam`` is not in ``[0, RATE_CAP]`` (one comparison a draw: same draws otherwise)."""
    B = draw_count(Lam, rng)
    st = new_stream(rng)
    if B > buf.shape[0]:
        buf = np.empty(2 * B, dtype=np.int64)
    return B, buf, st


@njit(cache=True, _nrt=True)
def draw_count(Lam: float, rng) -> int:
    """``B ~ Poisson(Lam)`` from the chain's Generator, ValueError if ``Lam`` is not in ``[0, RATE_CAP]``.
    Compiled with Numba's reference counting even when called from a core compiled without it
    (:data:`samplers.hotloop.NO_REFCOUNT`): Numba's Poisson sampler builds a list on its slow path."""
    if not (Lam >= 0.0 and Lam <= RATE_CAP):
        raise ValueError(
            "Poisson minibatch rate (expected batch size) is NaN, negative or above RATE_CAP = 1e12: "
            "lower lam_mult / chi (or the step)"
        )
    return rng.poisson(Lam)


@njit(cache=True)
def draw_from_rows(rows: np.ndarray, p: int, Lam: float, rng, buf: np.ndarray):
    """:func:`draw_candidates` with the alias table in columns ``p + ROW_PROB``, ``p + ROW_ALIAS`` of the
    candidate rows (:func:`table_rows`): the same B, candidates and stream, bit for bit, all at once.
    It is the kernels' candidate pipeline (:func:`open_candidates`, :func:`stage_at`,
    :func:`resolve_slot`) without the evaluation: each slot's (prob, alias) line prefetched ``SLOT_AHEAD``
    draws ahead."""
    cp = p + ROW_PROB
    B, buf, fb, st = open_candidates(rows, cp, rows, True, Lam, rng, buf)
    zs, _, gam = pipeline_counters(st, B)
    n = rows.shape[0]
    for b in range(B):
        if b + SLOT_AHEAD < B:
            prefetch2(rows, stage_at(fb, zs, b + SLOT_AHEAD, n), cp)
        zs += gam
        if b + RESOLVE_AHEAD < B:
            buf[b + RESOLVE_AHEAD] = resolve_slot(rows, cp, fb, b + RESOLVE_AHEAD)
    return B, buf, st


@njit(cache=True)
def stage_at(fb, z, c: int, n: int) -> int:
    """Pipeline stage 1 of candidate c (:func:`open_candidates`): ``v = u_c n`` from the uniform at counter
    ``z`` (= :func:`samplers.streams.counter` of c: the loops carry it, :func:`pipeline_counters`), stored
    in ``fb[c]`` (the float64 view of the candidate buffer) for :func:`resolve_slot`; returns the alias
    slot ``floor(v)``, whose row the caller prefetches. Small enough for LLVM to inline it into the loops
    (no Numba ``inline``: that would add reference counting on ``fb``)."""
    v = uniform_at(z) * n
    fb[c] = v
    return slot_and_coin(v, n)[0]


@njit(cache=True)
def stage_slot(fb, st, c: int, n: int) -> int:
    """:func:`stage_at` of candidate c from the stream ``st`` (the counter computed, not carried)."""
    return stage_at(fb, counter(st, c), c, n)


@njit(cache=True, inline="always")
def pipeline_counters(st, B: int):
    """``(zs, zc, gamma)`` for a candidate loop over b = 0, ..., B - 1 that carries its counters
    (:func:`samplers.streams.counter`): ``zs`` the counter of the slot uniform of candidate
    ``SLOT_AHEAD`` (the first the loop stages), ``zc`` that of candidate 0's thinning coin (uniform B);
    the loop adds ``gamma`` to each after every candidate. The same uniforms as :func:`stage_slot` and
    :func:`keep`, bit for bit, with one add per uniform instead of a multiply and two adds (and no
    reload of the stream: docs/performance.md §7.3)."""
    return counter(st, SLOT_AHEAD), counter(st, B), st[1]


@njit(cache=True)
def resolve_slot(rows, cp: int, fb, c: int) -> int:
    """Candidate c's datum (the draw of :func:`draw_from_rows`; ``cp`` = the rows' prob column): slot and
    coin from ``v = fb[c]`` stored by :func:`stage_at`, the alias if the coin says so, whose row is then
    prefetched (first, middle and last line: a fixed three prefetches keep this small enough for LLVM to
    inline it into the loops). The caller then overwrites ``fb[c]`` with the datum (``buf[c]``)."""
    n = rows.shape[0]
    j, u = slot_and_coin(fb[c], n)
    if u < rows[j, cp]:
        return j
    i = int(rows[j, cp + ROW_ALIAS - ROW_PROB])
    w = rows.shape[1]
    prefetch2_l2(rows, i, 0)
    prefetch2_l2(rows, i, w // 2)
    prefetch2_l2(rows, i, w - 1)
    return i


@njit(cache=True)
def open_candidates(rows: np.ndarray, cp: int, X: np.ndarray, pk: bool, Lam: float, rng, buf: np.ndarray):
    """Open the candidate pipeline of one Alg. 8/9 draw on the candidate rows (:func:`table_rows`; ``cp``:
    their prob column, p + ROW_PROB for p data columns; ``pk``: whether the kernel reads the data from the
    rows, else from X): B ~ Poisson(Lam), the draw's stream and the pipeline's prologue. Returns
    ``(B, buf, fb, st)``, ``fb`` the float64 view of ``buf``. The kernel takes its counters
    ``zs, zc, gam = pipeline_counters(st, B)``; in its loop over b = 0, 1, ..., B - 1 it then, before it
    reads candidate b's datum ``uint64(buf[b])`` (unsigned: no negative-index wraparound code), prefetches
    the row of ``stage_at(fb, zs, b + SLOT_AHEAD, n)`` while that index is < B, adds ``gam`` to ``zs``, and
    stores ``resolve_slot(rows, cp, fb, b + RESOLVE_AHEAD)`` in ``buf[b + RESOLVE_AHEAD]`` (prefetching
    that row from X unless ``pk``) while that index is < B: eight lines, as in
    :func:`samplers.kernels.poisson_mh.poisson_counts_ratio`; its thinning coin is
    ``keep_at(zc, ...)``, then ``zc += gam``.

    The same B, candidates, order and stream as :func:`draw_from_rows`, bit for bit, in one pass: while
    candidate b is evaluated, candidate b + RESOLVE_AHEAD is resolved to its datum (its slot's line is in
    cache) and candidate b + SLOT_AHEAD draws its slot and prefetches that row, which it evaluates in the
    ~96 % of draws that keep the slot. Stage 1 stores ``v = u n`` in the buffer entry the datum later
    takes, so each uniform is computed once (recomputing it at the resolve costs ~2 ns per candidate).
    Each row is fetched once, well ahead (a two-pass draw fetches the alias line in pass 1 and the rest of
    the row again in the evaluation): docs/performance.md §7.2. Written out in each loop
    because a jitted helper holding it is not inlined by LLVM (a call per candidate doubled the cost) and
    Numba's ``inline="always"`` adds reference counting on the arrays per candidate."""
    if cp < 0 or cp + ROW_ALIAS - ROW_PROB >= rows.shape[1]:
        raise ValueError("open_candidates: the prob / alias columns lie outside the candidate rows")
    B, buf, st = _open_draw(Lam, rng, buf)
    fb = buf.view(np.float64)
    prime_candidates(rows, cp, X, pk, B, st, buf, fb)
    return B, buf, fb, st


@njit(cache=True)
def prime_candidates(
    rows: np.ndarray, cp: int, X: np.ndarray, pk: bool, B: int, st, buf: np.ndarray, fb: np.ndarray
):
    """The prologue of the candidate pipeline (:func:`open_candidates`) for a drawn ``B`` and stream ``st``:
    candidates 0 .. SLOT_AHEAD - 1 staged (rows prefetched), 0 .. RESOLVE_AHEAD - 1 resolved into ``buf``
    (``fb`` its float64 view, ``buf`` at least B long). Allocates nothing, so the kernels' cores compiled
    without reference counting (:data:`samplers.hotloop.NO_REFCOUNT`) call it directly."""
    n = rows.shape[0]
    for c in range(min(B, SLOT_AHEAD)):
        prefetch_row(rows, stage_slot(fb, st, c, n))
    for c in range(min(B, RESOLVE_AHEAD)):
        buf[c] = resolve_slot(rows, cp, fb, c)
        if not pk:
            prefetch_row(X, buf[c])


@njit(cache=True, inline="always")
def coin(st, B: int, b: int) -> float:
    """Candidate b's thinning uniform: uniform ``B + b`` of the draw's stream."""
    return uniform(st, B + b)


@njit(cache=True, inline="always")
def keep_at(z, a_i: float, phi: float, b_i: float) -> bool:
    """Thinning coin at counter ``z`` (candidate b's: ``counter(st, B + b)``, carried by the hot loops,
    :func:`pipeline_counters`): keep with probability (a_i + phi) / (a_i + b_i)."""
    return uniform_at(z) * (a_i + b_i) < a_i + phi


@njit(cache=True, inline="always")
def keep(st, B: int, b: int, a_i: float, phi: float, b_i: float) -> bool:
    """Thinning coin of candidate b: keep with probability (a_i + phi) / (a_i + b_i)."""
    return keep_at(counter(st, B + b), a_i, phi, b_i)


def check_rate(Lam: float, what: str) -> None:
    """ValueError unless the Poisson rate ``Lam`` (``what``: the hyperparameters it comes from) is finite,
    >= 0 and at most ``RATE_CAP`` (checked once at setup; :func:`_open_draw` checks every draw)."""
    if not (0.0 <= Lam <= RATE_CAP):
        raise ValueError(
            f"Poisson minibatch rate {Lam!r} (expected batch size) is not finite or exceeds "
            f"RATE_CAP = {RATE_CAP:g}: lower {what}"
        )


def candidate_buffer(Lam: float) -> np.ndarray:
    """Initial candidate buffer sized for Poisson(Lam) with ample headroom."""
    check_rate(Lam, "the rate")
    return np.empty(int(Lam + 10.0 * np.sqrt(Lam + 1.0) + 64), dtype=np.int64)


def alias_for(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Alias table for p_i ∝ weights (validated)."""
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError(
            "minibatch weights must be a non-empty, finite, non-negative vector with a positive sum"
        )
    return build_alias(w)


def table_rows(X: np.ndarray, y: np.ndarray | None, a: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Candidate rows of a tall-data kernel: ``rows[i] = [x_i, a_i, shift_i, prob_i, alias_i, y_i]``
    (columns ``ROW_*`` from p = ``X.shape[1]``; the y column only when ``y`` is given), where
    (prob, alias) is the alias table of p_i ∝ a_i (:func:`alias_for`). Width rounded up to whole 64-byte
    lines and the first row 64-byte aligned, so a row is ``width / 8`` cache lines (d = 20 truncated
    Gaussian: 24 doubles = 3 lines; d = 10 robust regression: 16 = 2).

    Why: at N = 1e6 a candidate's cost is its random memory reads (docs/performance.md §7.1):
    separate arrays cost five lines per candidate (x_i, M_i, shift_i, prob_j, alias_j), these rows three
    plus three more in the rare alias case."""
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    prob, alias = alias_for(a)
    has_y = y is not None
    width = -(-(p + ROW_Y + int(has_y)) // 8) * 8
    rows = _aligned_zeros(n * width).reshape(n, width)
    rows[:, :p] = X
    rows[:, p + ROW_A] = a
    rows[:, p + ROW_SHIFT] = shift
    rows[:, p + ROW_PROB] = prob
    rows[:, p + ROW_ALIAS] = alias
    if has_y:
        rows[:, p + ROW_Y] = y
    return rows


def _aligned_zeros(n: int) -> np.ndarray:
    """``n`` float64 zeros starting on a 64-byte line; blocks of >= 2 MB start on a 2 MB boundary of a
    private anonymous mapping advised ``MADV_HUGEPAGE`` where the OS offers it (Linux; a hint without
    semantic effect). Why: the N = 1e5 TG rows (19 MB) on 4 KB pages cost a TLB miss per candidate in
    the draw and again in the evaluation; on huge pages TG PoissonMH at N = 1e5 ran ~10 % faster
    (docs/performance.md §7.1; no change at N = 1e6, where the DRAM latency dominates)."""
    nbytes = 8 * n
    if nbytes >= _HUGE and hasattr(mmap, "MADV_HUGEPAGE") and hasattr(mmap, "MAP_ANONYMOUS"):
        m = mmap.mmap(-1, (nbytes // _HUGE + 2) * _HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        try:
            m.madvise(mmap.MADV_HUGEPAGE)
        except OSError:  # THP disabled: the mapping still works on 4 KB pages
            pass
        buf = np.frombuffer(m, dtype=np.float64)  # zero-filled; the array keeps the mapping alive
        off = (-buf.ctypes.data % _HUGE) // 8
        return buf[off : off + n]
    raw = np.zeros(n + _LINE // 8, dtype=np.float64)
    off = (-raw.ctypes.data % _LINE) // 8
    return raw[off : off + n]
