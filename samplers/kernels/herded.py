"""Herded Gibbs (Chen et al. 2016, Alg. 1 and §2, §4.3) on a discrete factor graph.

State ``(idx, x, W, seen, hkeys, fill)``:

* ``idx`` (:class:`HerdIndex`): neighbour lists N(i) (variables sharing a factor with i) with
  mixed-radix multipliers, so the neighbour configuration x_N(i) has integer code
  ``c = sum_j x_j * mul_j``; ``off[i]`` is the first key of variable i (``key = off[i] + c``).
  Storage ``DENSE``: slot = key (or ``key_map[key]`` for the shared variant); ``HASHED``: an
  open-addressing table (linear probing) of fixed capacity ``hkeys.shape[0]`` maps key -> slot.
* ``W[slot, :K]`` the herding weights of one (variable, neighbour configuration) pair. Binary
  variables use the scalar weight ``W[slot, 0]`` exactly as Alg. 1 (x_i = 1 iff w > 0, then
  w += pi(X_i=1 | x_N(i)) - x_i); K > 2 uses the vector rule of §2/§4.4 (x_i = argmax_k w_k, ties to
  the smallest k, then w += p(.|x_N(i)) - e_{x_i}). For K = 2 the vector rule with w_s = (w1-w0)/2
  is the scalar rule, and the vector initialisation w = p matches the scalar one w = pi - 1/2.
* ``seen[slot]``: weights are initialised lazily at the first visit of their configuration. With
  ``init = INIT_MID`` this equals initialising every weight up front at pi - 1/2 (inside Lemma 1's
  invariant interval (pi-1, pi]); ``INIT_RANDOM`` draws w = pi - U, U ~ U[0,1) (binary) or
  w = p + (U - 1/2)/K (vector) from ``rng`` in order of first visits.

The shared variant (§4.3, "herded Gibbs - shared") keys weights by the *distinct value of the full
conditional* instead of the neighbour configuration: ``key_map`` sends every configuration code
to the slot of its conditional's group (for the uniform-J Ising model: the number of +1
neighbours). Fixed (systematic) scan 0..n-1; one iteration = one sweep; the sample is the state at
the end of each sweep (Def. 1). ``n_evals`` per sweep = factor evaluations.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from samplers.targets.factor_graph import FactorGraph, conditional_logits, factor_value

DENSE, HASHED = 0, 1
INIT_MID, INIT_RANDOM = 0, 1
HASH_FULL = -1


class HerdIndex(NamedTuple):
    nb_ptr: np.ndarray  # (n+1,) CSR over neighbours
    nb_var: np.ndarray
    nb_mul: np.ndarray  # mixed-radix multipliers
    off: np.ndarray  # (n,) first key of each variable
    key_map: np.ndarray  # dense key -> slot (shared variant) or empty
    mode: int  # DENSE | HASHED
    comp: np.ndarray  # (n,) connected component of each variable (for best-sample tracking)
    fac_comp: np.ndarray  # (F,) component of each factor
    n_comp: int


# ----------------------------------------------------------------------------- helpers (njit)
@njit(cache=True)
def conditional_probs(fg: FactorGraph, x: np.ndarray, i: int, logits: np.ndarray, p: np.ndarray) -> int:
    """p[:K] = pi(X_i = . | x_-i) (softmax of the conditional logits); returns factor evaluations."""
    ne = conditional_logits(fg, x, i, logits)
    K = fg.card[i]
    m = logits[0]
    for v in range(1, K):
        if logits[v] > m:
            m = logits[v]
    z = 0.0
    for v in range(K):
        p[v] = np.exp(logits[v] - m)
        z += p[v]
    for v in range(K):
        p[v] = p[v] / z
    return ne


@njit(cache=True)
def neighbour_code(idx: HerdIndex, x: np.ndarray, i: int) -> int:
    c = 0
    for k in range(idx.nb_ptr[i], idx.nb_ptr[i + 1]):
        c += x[idx.nb_var[k]] * idx.nb_mul[k]
    return c


@njit(cache=True)
def _hash_slot(hkeys: np.ndarray, fill: np.ndarray, key: int) -> int:
    cap = hkeys.shape[0]
    h = (key * 0x9E3779B97F4A7C15) & 0x7FFFFFFFFFFFFFFF
    s = h & (cap - 1)
    for _ in range(cap):
        k = hkeys[s]
        if k == key:
            return s
        if k == -1:
            if 2 * (fill[0] + 1) > cap:  # keep load factor <= 1/2
                return HASH_FULL
            hkeys[s] = key
            fill[0] += 1
            return s
        s = (s + 1) & (cap - 1)
    return HASH_FULL


@njit(cache=True)
def weight_slot(idx: HerdIndex, x: np.ndarray, i: int, hkeys: np.ndarray, fill: np.ndarray) -> int:
    key = idx.off[i] + neighbour_code(idx, x, i)
    if idx.mode == DENSE:
        if idx.key_map.shape[0] > 0:
            return idx.key_map[key]
        return key
    return _hash_slot(hkeys, fill, key)


@njit(cache=True)
def component_energies(fg: FactorGraph, fac_comp: np.ndarray, x: np.ndarray, out: np.ndarray) -> int:
    """out[c] = sum of the factors of component c at x; returns factor evaluations."""
    out[:] = 0.0
    F = fg.M.shape[0]
    for f in range(F):
        out[fac_comp[f]] += factor_value(fg, f, x)
    return F


@njit(cache=True)
def track_best(fg: FactorGraph, idx: HerdIndex, x, best_x, best_e, e_buf) -> int:
    """Keep, per connected component, the highest-probability state seen so far."""
    ne = component_energies(fg, idx.fac_comp, x, e_buf)
    for c in range(idx.n_comp):
        if e_buf[c] > best_e[c]:
            best_e[c] = e_buf[c]
    for i in range(fg.n):
        c = idx.comp[i]
        if e_buf[c] == best_e[c]:
            best_x[i] = x[i]
    return ne


# ----------------------------------------------------------------------------- kernel
@njit(cache=True)
def herded_gibbs_init(fg: FactorGraph, x0: np.ndarray, n_slots: int, capacity: int):
    """Explicit state (x, W, seen, hkeys, fill, best_x, best_e) for ``n_slots`` weight slots."""
    x = x0.copy()
    K = fg.card.max()
    W = np.zeros((n_slots, K))
    seen = np.zeros(n_slots, dtype=np.bool_)
    hkeys = np.full(max(capacity, 1), -1, dtype=np.int64)
    fill = np.zeros(1, dtype=np.int64)
    best_x = x0.copy()
    return x, W, seen, hkeys, fill, best_x


@njit(cache=True, inline="always")
def herd_weight(W, seen, s, p, K, rng, init) -> int:
    """Alg. 1 steps 3-5 on weight slot ``s`` (initialised on first use): the new value argmax_v W[s, v]
    (binary: the sign of the one stored weight), then W[s] += p - e_value. Inlined into update and sweep."""
    if not seen[s]:
        seen[s] = True
        if K == 2:
            W[s, 0] = p[1] - (rng.random() if init == INIT_RANDOM else 0.5)
        else:
            for v in range(K):
                W[s, v] = p[v] + ((rng.random() - 0.5) / K if init == INIT_RANDOM else 0.0)
    if K == 2:
        w = W[s, 0]
        xi = 1 if w > 0 else 0
        W[s, 0] = w + p[1] - xi
        return xi
    xi = 0
    for v in range(1, K):
        if W[s, v] > W[s, xi]:
            xi = v
    for v in range(K):
        W[s, v] += p[v]
    W[s, xi] -= 1.0
    return xi


@njit(cache=True)
def herded_gibbs_step(
    fg: FactorGraph, idx: HerdIndex, x, W, seen, hkeys, fill, i: int, init: int, rng, logits, p
) -> int:
    """Alg. 1 steps 2-5 for node ``i``; returns the factor evaluations, or HASH_FULL."""
    ne = conditional_probs(fg, x, i, logits, p)
    s = weight_slot(idx, x, i, hkeys, fill)
    if s == HASH_FULL:
        return HASH_FULL
    x[i] = herd_weight(W, seen, s, p, fg.card[i], rng, init)
    return ne


@njit(cache=True)
def herded_gibbs_sweep(
    fg: FactorGraph, idx: HerdIndex, x, W, seen, hkeys, fill, init: int, rng, logits, p
) -> int:
    """One sweep 0..n-1 of :func:`herded_gibbs_step` written out on the arrays (read once): the same
    arithmetic in the same order, without two NamedTuples' reference counts per variable (~2 us a
    variable on a chain CRF before, a test ties it to the step bit for bit). Returns the factor
    evaluations, or HASH_FULL (the state is then that of the step that failed)."""
    card = fg.card
    var_ptr = fg.var_ptr
    var_fac = fg.var_fac
    fac_ptr = fg.fac_ptr
    fac_vars = fg.fac_vars
    fac_stride = fg.fac_stride
    tab_ptr = fg.tab_ptr
    tables = fg.tables
    nb_ptr = idx.nb_ptr
    nb_var = idx.nb_var
    nb_mul = idx.nb_mul
    off = idx.off
    key_map = idx.key_map
    dense = idx.mode == DENSE
    shared = key_map.shape[0] > 0
    ne = 0
    for i in range(fg.n):
        K = card[i]
        # conditional_probs: logits as conditional_logits, then the softmax
        for v in range(K):
            logits[v] = 0.0
        for k in range(var_ptr[i], var_ptr[i + 1]):
            f = var_fac[k]
            base = tab_ptr[f]
            stride = 0
            for q in range(fac_ptr[f], fac_ptr[f + 1]):
                var = fac_vars[q]
                if var == i:
                    stride = fac_stride[q]
                else:
                    base += x[var] * fac_stride[q]
            for v in range(K):
                logits[v] += tables[base + v * stride]
        ne += K * (var_ptr[i + 1] - var_ptr[i])
        m = logits[0]
        for v in range(1, K):
            if logits[v] > m:
                m = logits[v]
        z = 0.0
        for v in range(K):
            p[v] = np.exp(logits[v] - m)
            z += p[v]
        for v in range(K):
            p[v] = p[v] / z
        # weight_slot
        key = off[i]
        for k in range(nb_ptr[i], nb_ptr[i + 1]):
            key += x[nb_var[k]] * nb_mul[k]
        if dense:
            s = key_map[key] if shared else key
        else:
            s = _hash_slot(hkeys, fill, key)
            if s == HASH_FULL:
                return HASH_FULL
        x[i] = herd_weight(W, seen, s, p, K, rng, init)
    return ne


@njit(cache=True)
def herded_gibbs_sample(
    fg: FactorGraph,
    idx: HerdIndex,
    x,
    W,
    seen,
    hkeys,
    fill,
    best_x,
    n_iter: int,
    init: int,
    track: bool,
    rng,
    thin: int,
):
    """``n_iter`` sweeps in the fixed order 0..n-1; rows of ``samples`` = state after each
    ``thin``-th sweep. ``status`` (extra trace) is 0, or -1 if the hash table filled up (the chain
    stops there). With ``track`` the best-energy state per component is kept in ``best_x``."""
    samples = np.empty((n_iter // thin, fg.n), dtype=np.int64)
    acc = np.ones(n_iter, dtype=np.bool_)
    nev = np.zeros(n_iter, dtype=np.int64)
    status = np.zeros(n_iter, dtype=np.int64)
    K = fg.card.max()
    logits = np.empty(K)
    p = np.empty(K)
    best_e = np.full(idx.n_comp, -np.inf)
    e_buf = np.empty(idx.n_comp)
    if track:
        track_best(fg, idx, best_x, best_x, best_e, e_buf)
    for it in range(n_iter):
        ne = herded_gibbs_sweep(fg, idx, x, W, seen, hkeys, fill, init, rng, logits, p)
        if ne == HASH_FULL:
            status[it:] = HASH_FULL
            return samples, acc, nev, status
        if track:
            ne += track_best(fg, idx, x, best_x, best_e, e_buf)
        nev[it] = ne
        if (it + 1) % thin == 0:
            samples[(it + 1) // thin - 1] = x
    return samples, acc, nev, status


# ----------------------------------------------------------------------------- index builders
@njit(cache=True)
def _neighbour_csr(fg: FactorGraph):
    """CSR (nb_ptr, nb_var) of N(i) = sorted variables sharing at least one factor with i."""
    n = fg.n
    stamp = np.full(n, -1, dtype=np.int64)
    cnt = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        stamp[i] = i
        for k in range(fg.var_ptr[i], fg.var_ptr[i + 1]):
            f = fg.var_fac[k]
            for q in range(fg.fac_ptr[f], fg.fac_ptr[f + 1]):
                v = fg.fac_vars[q]
                if stamp[v] != i:
                    stamp[v] = i
                    cnt[i + 1] += 1
    nb_ptr = np.cumsum(cnt)
    nb_var = np.empty(nb_ptr[n], dtype=np.int64)
    stamp[:] = -1
    for i in range(n):
        stamp[i] = i
        pos = nb_ptr[i]
        for k in range(fg.var_ptr[i], fg.var_ptr[i + 1]):
            f = fg.var_fac[k]
            for q in range(fg.fac_ptr[f], fg.fac_ptr[f + 1]):
                v = fg.fac_vars[q]
                if stamp[v] != i:
                    stamp[v] = i
                    nb_var[pos] = v
                    pos += 1
        nb_var[nb_ptr[i] : nb_ptr[i + 1]] = np.sort(nb_var[nb_ptr[i] : nb_ptr[i + 1]])
    return nb_ptr, nb_var


@njit(cache=True)
def _mixed_radix(card, nb_ptr, nb_var):
    """Multipliers (last neighbour fastest), per-variable key offsets and the total key count;
    returns total = -1 if some neighbourhood has more than 2^60 configurations."""
    n = nb_ptr.shape[0] - 1
    nb_mul = np.empty(nb_var.shape[0], dtype=np.int64)
    off = np.zeros(n, dtype=np.int64)
    total = 0
    for i in range(n):
        C = 1
        for k in range(nb_ptr[i + 1] - 1, nb_ptr[i] - 1, -1):
            nb_mul[k] = C
            C *= card[nb_var[k]]
            if C > (1 << 60):
                return nb_mul, off, -1
        off[i] = total
        total += C
        if total > (1 << 61):
            return nb_mul, off, -1
    return nb_mul, off, total


def neighbours(fg: FactorGraph) -> list[np.ndarray]:
    """N(i): sorted variables sharing at least one factor with i."""
    ptr, var = _neighbour_csr(fg)
    return [var[ptr[i] : ptr[i + 1]].copy() for i in range(fg.n)]


@njit(cache=True)
def _components(fg: FactorGraph):
    """Union-find over factors: (comp per variable (0..C-1 in order of first appearance),
    comp per factor, C)."""
    n = fg.n
    parent = np.arange(n)
    F = fg.M.shape[0]
    for f in range(F):
        a = fg.fac_vars[fg.fac_ptr[f]]
        for q in range(fg.fac_ptr[f] + 1, fg.fac_ptr[f + 1]):
            b = fg.fac_vars[q]
            ra = a
            while parent[ra] != ra:
                parent[ra] = parent[parent[ra]]
                ra = parent[ra]
            rb = b
            while parent[rb] != rb:
                parent[rb] = parent[parent[rb]]
                rb = parent[rb]
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    label = np.full(n, -1, dtype=np.int64)
    comp = np.empty(n, dtype=np.int64)
    C = 0
    for i in range(n):
        r = i
        while parent[r] != r:
            r = parent[r]
        if label[r] < 0:
            label[r] = C
            C += 1
        comp[i] = label[r]
    fac_comp = np.empty(F, dtype=np.int64)
    for f in range(F):
        fac_comp[f] = comp[fg.fac_vars[fg.fac_ptr[f]]]
    return comp, fac_comp, C


def components(fg: FactorGraph) -> tuple[np.ndarray, np.ndarray, int]:
    """Connected components of the factor graph: (comp per variable, comp per factor, count)."""
    comp, fac_comp, C = _components(fg)
    return comp, fac_comp, int(C)


@njit(cache=True)
def _group_conditionals(fg: FactorGraph, nb_ptr, nb_var, nb_mul, off, n_keys, tol):
    """key_map for the shared variant: configurations of N(i) whose full conditionals agree
    (logit differences within ``tol``) share one slot. Returns (key_map, n_slots)."""
    key_map = np.empty(n_keys, dtype=np.int64)
    K = fg.card.max()
    logits = np.empty(K)
    x = np.zeros(fg.n, dtype=np.int64)
    n_slots = 0
    for i in range(fg.n):
        Ki = fg.card[i]
        deg = nb_ptr[i + 1] - nb_ptr[i]
        C = 1
        for k in range(nb_ptr[i], nb_ptr[i + 1]):
            C *= fg.card[nb_var[k]]
        rep = np.empty((C, Ki))
        rep_slot = np.empty(C, dtype=np.int64)
        n_rep = 0
        for c in range(C):
            rem = c
            for k in range(nb_ptr[i + 1] - 1, nb_ptr[i] - 1, -1):
                j = nb_var[k]
                x[j] = (rem // nb_mul[k]) % fg.card[j]
            conditional_logits(fg, x, i, logits)
            found = -1
            for r in range(n_rep):
                ok = True
                for v in range(1, Ki):
                    d = logits[v] - logits[0]
                    if abs(d - rep[r, v]) > tol * (1.0 + abs(d)):
                        ok = False
                        break
                if ok:
                    found = r
                    break
            if found < 0:
                for v in range(1, Ki):
                    rep[n_rep, v] = logits[v] - logits[0]
                rep_slot[n_rep] = n_slots
                n_slots += 1
                found = n_rep
                n_rep += 1
            key_map[off[i] + c] = rep_slot[found]
        _ = deg
    return key_map, n_slots


def build_index(
    fg: FactorGraph,
    shared: bool = False,
    storage: str = "auto",
    max_dense: int = 1 << 24,
    capacity: int | None = None,
) -> tuple[HerdIndex, int, int]:
    """Index + (number of weight slots, hash capacity) for ``herded_gibbs_init``.

    ``storage``: "dense" (one slot per (i, x_N(i))), "hashed" (slots created on first visit), or
    "auto" (dense when sum_i prod_{j in N(i)} card_j * max card <= ``max_dense`` weights).
    ``shared`` (dense only) groups configurations by the value of their full conditional.
    """
    if storage not in ("auto", "dense", "hashed"):
        raise ValueError(f"storage must be 'auto', 'dense' or 'hashed', got {storage!r}")
    card = fg.card
    nb_ptr_a, nb_var_a = _neighbour_csr(fg)
    nb_mul_a, off, total = _mixed_radix(card, nb_ptr_a, nb_var_a)
    if total < 0:
        raise ValueError("neighbourhoods too large to index (> 2^60 configurations)")
    total = int(total)
    K = int(card.max())
    comp, fac_comp, n_comp = components(fg)
    mode = DENSE
    if storage == "hashed" or (storage == "auto" and total * K > max_dense):
        mode = HASHED
    key_map = np.zeros(0, dtype=np.int64)
    if shared:
        if mode == HASHED:
            raise ValueError("the shared variant needs dense storage (enumerates configurations)")
        if np.any(np.diff(np.append(off, total)) > 4096):
            raise ValueError("shared variant: a variable has > 4096 neighbour configurations")
        key_map, n_slots = _group_conditionals(fg, nb_ptr_a, nb_var_a, nb_mul_a, off, total, 1e-9)
        cap = 1
    elif mode == DENSE:
        n_slots, cap = total, 1
    else:
        want = capacity if capacity is not None else min(total, 64 * fg.n)
        if want < 1:
            raise ValueError("capacity must be >= 1")
        cap = 1 << int(np.ceil(np.log2(2 * want)))
        n_slots = cap
    idx = HerdIndex(nb_ptr_a, nb_var_a, nb_mul_a, off, key_map, mode, comp, fac_comp, n_comp)
    return idx, int(n_slots), int(cap)
