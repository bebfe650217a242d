"""Attribute bitmasks and the hybrid score ``0.6 * cos + 0.4 * Jaccard``.

Attribute sets are stored as bitmasks over a vocabulary of slot names (``AttrVocab``), one row of
``W`` uint64 words per turn, so that Jaccard over 10,000 turns is two ``bitwise_and``/``or``
and one ``np.bitwise_count`` rather than 10,000 Python set operations. The vocabulary is
persisted by the L3 store (bit numbers never change once assigned).

Scores are made reproducible in two passes: a fast float32 pass (BLAS matmul) over all rows finds
the candidates within ``MARGIN`` of the best, and an exact pass rescales only those candidates in
float64 with a row-wise reduction whose order does not depend on where a row sits in an array.
The returned score is the float64 one; ties break on the higher id (the newer turn). The result is
therefore the same whatever the ring layout (live vs. rebuilt after a restart) or batch size.
"""

from __future__ import annotations

import math

import numpy as np

W_COS = 0.6
W_JAC = 0.4
# Larger than the float32 rounding error of a 256-term dot product of unit vectors (< 2e-5).
MARGIN = 1e-4


class AttrVocab:
    """Stable map from slot name to bit number (assigned in first-seen order, never reused)."""

    def __init__(self, names: list[str] | None = None):
        self.names: list[str] = []
        self.bits: dict[str, int] = {}
        for n in names or []:
            self.add(n)

    def __len__(self) -> int:
        return len(self.names)

    def add(self, name: str) -> int:
        bit = self.bits.get(name)
        if bit is None:
            bit = len(self.names)
            self.names.append(name)
            self.bits[name] = bit
        return bit

    def words(self) -> int:
        """uint64 words needed per mask (at least 1)."""
        return max(1, (len(self.names) + 63) // 64)

    def mask_int(self, attrs) -> int:
        """The mask of ``attrs`` as a Python int (bit ``b`` = name number ``b``); unknown names
        are ignored. Python ints make the one-turn write path cheap (no numpy per name)."""
        bits, v = self.bits, 0
        for name in attrs:
            bit = bits.get(name)
            if bit is not None:
                v |= 1 << bit
        return v

    def mask_known(self, attrs) -> int | None:
        """:meth:`mask_int` of ``attrs`` when every name has a bit, else None (one pass)."""
        bits, v = self.bits, 0
        for name in attrs:
            bit = bits.get(name)
            if bit is None:
                return None
            v |= 1 << bit
        return v

    def mask(self, attrs: frozenset[str], words: int | None = None) -> np.ndarray:
        """``(W,)`` uint64 mask of ``attrs``; names not in the vocabulary are ignored."""
        w = words or self.words()
        v = self.mask_int(attrs) & ((1 << (64 * w)) - 1)
        return np.frombuffer(v.to_bytes(8 * w, "little"), "<u8").astype(np.uint64)

    def names_of(self, mask: np.ndarray) -> frozenset[str]:
        # a copy when needed: a row of the rings' column-major masks is strided once W > 1
        mask = np.ascontiguousarray(mask, "<u8")
        bits = np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little"))
        return frozenset(self.names[b] for b in bits if b < len(self.names))


def mask_to_blob(mask: np.ndarray) -> bytes:
    """Little-endian bytes of a mask with trailing zero words dropped (compact on disk)."""
    nz = np.flatnonzero(mask)
    n = int(nz[-1]) + 1 if nz.size else 0
    return mask[:n].astype("<u8").tobytes()


def int_to_blob(v: int) -> bytes:
    """:func:`mask_to_blob` of the mask held as a Python int (:meth:`AttrVocab.mask_int`)."""
    return v.to_bytes(8 * ((v.bit_length() + 63) // 64), "little")


def blob_to_mask(blob: bytes, words: int) -> np.ndarray:
    m = np.frombuffer(blob, dtype="<u8").astype(np.uint64)
    out = np.zeros(words, dtype=np.uint64)
    out[: min(words, m.size)] = m[:words]
    return out


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` (N, D) scaled to unit L2 norm in float64, returned as float32.

    The norm is a row-wise reduction, so a row's result does not depend on the batch it came in.
    Zero rows stay zero (cosine 0 against everything).
    """
    x64 = np.array(x, dtype=np.float64)  # a copy, divided in place
    n = np.sqrt((x64 * x64).sum(axis=-1, keepdims=True))
    zero = n == 0
    if zero.any():
        n[zero] = 1.0  # 0 / 1 = 0: zero rows stay zero
    x64 /= n
    return x64.astype(np.float32)


def unit_row(x: np.ndarray) -> np.ndarray:
    """``unit_rows(x[None])[0]`` for one float32 row ``x`` (D,), bit for bit, in four numpy calls
    instead of eight (the per-turn write path): the float64 squares are summed by the same pairwise
    reduction, the division is done in float64 and rounded to float32 once, as there."""
    return unit_row_of(x, square_sum(x))


def square_sum(x: np.ndarray) -> float:
    """The float64 sum of squares of a float32 row, as :func:`unit_row` takes it. Finite exactly
    when every value of ``x`` is (a float32's square cannot overflow float64, nor can 2**24 of
    them), so it doubles as the row's finiteness check on the write path."""
    x64 = x.astype(np.float64)  # exact: a float32's square is exact in float64, as in unit_rows
    return float(np.add.reduce(np.square(x64, out=x64)))


def unit_row_of(x: np.ndarray, ss: float) -> np.ndarray:
    """:func:`unit_row` of ``x`` given its :func:`square_sum` ``ss`` (finite)."""
    if ss == 0.0:
        return np.zeros(len(x), np.float32)
    return np.divide(x, math.sqrt(ss), out=np.empty(len(x), np.float32), dtype=np.float64, casting="unsafe")


def jaccard(masks: np.ndarray, counts: np.ndarray, qmask: np.ndarray, qcount: int) -> np.ndarray:
    """Jaccard of each row mask (N, W) with ``qmask`` (W,), float64 (N,). J(empty, empty) = 0."""
    inter = np.bitwise_count(masks & qmask).sum(axis=1, dtype=np.int64)
    union = counts.astype(np.int64) + qcount - inter
    return np.divide(inter, union, out=np.zeros(len(inter), dtype=np.float64), where=union > 0)


def _faiss_inner_products():
    """FAISS's SIMD kernel for many inner products with one vector (``fvec_inner_products_ny``,
    what its exact index runs), or None without faiss-cpu (an optional dependency)."""
    try:
        import faiss
    except ImportError:
        return None
    fn = getattr(faiss, "fvec_inner_products_ny", None)
    if fn is None:
        return None

    def ip(units: np.ndarray, q: np.ndarray) -> np.ndarray:
        units = np.ascontiguousarray(units, np.float32)
        q = np.ascontiguousarray(q, np.float32)
        out = np.empty(len(units), np.float32)
        fn(faiss.swig_ptr(out), faiss.swig_ptr(q), faiss.swig_ptr(units), units.shape[1], len(units))
        return out

    return ip


_FAISS_IP = None
_FAISS_IP_LOADED = False


def matvec(units: np.ndarray, q: np.ndarray) -> np.ndarray:
    """float32 ``units @ q`` for (N, 256) x (256,), by the fastest route measured here.

    FAISS's inner-product kernel when faiss-cpu is installed (an optional dependency): measured here
    as fast as BLAS on 10k cache-warm rows, 1.3-1.4x faster cache-cold and from 100k rows on.
    Without it: up to 16k rows, BLAS on 2,048-row blocks (1.3-1.5x faster than one BLAS call on
    10k rows), above, ``einsum``'s SIMD loop (about 2x faster than BLAS gemv there). The values
    differ from BLAS's in the last float32 bits only: they select candidates, which are then
    re-scored exactly (see :func:`exact_scores`).
    """
    global _FAISS_IP, _FAISS_IP_LOADED
    n = len(units)
    if n > 256:
        if not _FAISS_IP_LOADED:
            _FAISS_IP, _FAISS_IP_LOADED = _faiss_inner_products(), True
        if _FAISS_IP is not None and units.flags.c_contiguous:
            return _FAISS_IP(units, q)
    if n > 16_384:
        return np.einsum("ij,j->i", units, q)
    out = np.empty(n, np.float32)
    for s in range(0, n, 2048):
        np.matmul(units[s : s + 2048], q, out=out[s : s + 2048])
    return out


def fast_scores(cos: np.ndarray, masks: np.ndarray, counts: np.ndarray, qmask: np.ndarray, qcount: int) -> np.ndarray:
    """float32 hybrid scores (N,) of one query, for candidate selection only.

    ``cos`` (N,) float32 cosines; ``masks`` (N, W) uint64, best stored column-major (Fortran
    order) because only the query's non-zero words are read, each as one contiguous column.
    """
    if len(cos) <= 512:  # a few rows: whole rows at once (a fixed number of numpy calls)
        inter = np.bitwise_count(masks & qmask).sum(axis=1, dtype=np.int32)
        if qcount == 0:
            return np.float32(W_COS) * cos
    else:
        words = np.flatnonzero(qmask)
        if words.size == 0:  # no known attribute in the query: Jaccard is 0 for every row
            return np.float32(W_COS) * cos
        inter = np.bitwise_count(masks[:, words[0]] & qmask[words[0]]).astype(np.int32)
        for w in words[1:]:
            inter += np.bitwise_count(masks[:, w] & qmask[w])
    union = counts + np.int32(qcount) - inter  # > 0: the query has at least one bit
    jac = inter.astype(np.float32)
    jac /= union.astype(np.float32)
    jac *= np.float32(W_JAC)
    jac += np.float32(W_COS) * cos
    return jac


def candidates(fast: np.ndarray, k: int) -> np.ndarray:
    """Indices of every row whose fast score is within MARGIN of the k-th best."""
    n = len(fast)
    if k >= n:
        return np.arange(n)
    kth = fast.max() if k == 1 else np.partition(fast, n - k)[n - k]
    return np.flatnonzero(fast >= kth - np.float32(MARGIN))


# Cosines within this of the best seed the floor (at most SEED_ROWS of them): measured on the
# workload's fresh inputs, the hybrid winner sits within 0.1 of the best cosine.
SEED_BAND = 0.1
SEED_ROWS = 32
# A top-1 search whose best cosine's row leaves at most this many rows able to reach it scores just
# those; beyond, the general path (seeds, popcount bound) runs.
TOP1_ROWS = 64
# ... and beyond this many, the floor is first raised with the fast scores of their best cosines
# (measured at 1M rows: fresh inputs leave up to 70k rows by the first floor).
RAISE_ROWS = 4096
# Slack of a cosine threshold derived from a float32 bound (its rounding is < 1e-6): rows within
# it are kept, so the threshold only ever keeps more rows than the bound would.
COS_SLACK = 1e-5


def _faiss_hammings():
    """FAISS's Hamming distances of one code with many (``hammings``, SIMD popcounts), or None."""
    try:
        import faiss
    except ImportError:
        return None
    fn = getattr(faiss, "hammings", None)
    if fn is None:
        return None

    def ham(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
        """``rows`` (r, W) uint64 C-contiguous, ``q`` (W,) uint64: int32 popcounts of ``rows ^ q``."""
        out = np.empty(len(rows), np.int32)
        fn(
            faiss.swig_ptr(np.ascontiguousarray(q).view(np.uint8)),
            faiss.swig_ptr(rows.view(np.uint8)),
            1,
            len(rows),
            8 * rows.shape[1],
            faiss.swig_ptr(out),
        )
        return out

    return ham


_FAISS_HAM = None
_FAISS_HAM_LOADED = False
# Rows from which FAISS's Hamming kernel counts intersections (below, numpy's whole-row popcount:
# fewer calls; above, FAISS: about 10x less time per row)
HAMMING_ROWS = 128


def _intersections(
    masks: np.ndarray, rows: np.ndarray, qmask: np.ndarray, counts: np.ndarray | None = None
) -> np.ndarray:
    """int32 ``|row mask & qmask|`` of ``masks[rows]``. ``counts``: ``counts[rows]`` (popcounts of the
    rows), which lets FAISS's Hamming kernel count them: ``|A & B| = (|A| + |B| - |A ^ B|) / 2``."""
    global _FAISS_HAM, _FAISS_HAM_LOADED
    if len(rows) <= HAMMING_ROWS:
        return np.bitwise_count(masks[rows] & qmask).sum(axis=1, dtype=np.int32)
    if counts is not None:
        if not _FAISS_HAM_LOADED:
            _FAISS_HAM, _FAISS_HAM_LOADED = _faiss_hammings(), True
        if _FAISS_HAM is not None:
            ham = _FAISS_HAM(masks[rows], qmask)
            ham -= counts
            ham -= np.int32(np.bitwise_count(qmask).sum())
            ham //= np.int32(-2)
            return ham
    words = np.flatnonzero(qmask)
    if words.size == 0:
        return np.zeros(len(rows), np.int32)
    inter = np.bitwise_count(masks[:, words[0]].take(rows) & qmask[words[0]]).astype(np.int32)
    for w in words[1:]:
        inter += np.bitwise_count(masks[:, w].take(rows) & qmask[w])
    return inter


def _fast_rows(
    cos: np.ndarray, masks: np.ndarray, counts: np.ndarray, rows: np.ndarray, qmask: np.ndarray, qcount: int
) -> np.ndarray:
    """``fast_scores(cos[rows], masks[rows], counts[rows], ...)``, bit for bit, reading only the
    words of ``masks`` it needs."""
    c = cos[rows]
    if qcount == 0:
        return np.float32(W_COS) * c
    cnt = counts[rows]
    inter = _intersections(masks, rows, qmask, cnt)
    union = cnt + np.int32(qcount) - inter
    jac = inter.astype(np.float32)
    jac /= union.astype(np.float32)
    jac *= np.float32(W_JAC)
    jac += np.float32(W_COS) * c
    return jac


def _top1_rows(
    cos: np.ndarray, masks: np.ndarray, counts: np.ndarray, qmask: np.ndarray, qcount: int
) -> tuple[np.ndarray, float]:
    """Rows that can be the top-1 candidate, and the floor they were kept by: the hybrid score of
    the row of best cosine, computed with Python numbers (a handful of numpy calls: a single-query
    read is dominated by their fixed cost, cache-cold above all), less ``MARGIN`` and 1e-6 (its
    float64 value is within 1e-6 of its float32 fast score), so every row within ``MARGIN`` of the
    best fast score is kept."""
    top = int(cos.argmax())
    c = float(cos[top])
    if qcount > 0:
        row = int.from_bytes(masks[top].tobytes(), "little")
        inter = (row & int.from_bytes(qmask.tobytes(), "little")).bit_count()
        floor = W_COS * c + W_JAC * (inter / (int(counts[top]) + qcount - inter)) - MARGIN - 1e-6
    else:
        floor = W_COS * c - MARGIN - 1e-6
    return np.flatnonzero(cos >= _cos_floor(floor, 1.0 if qcount > 0 else 0.0)), floor


def _count_bound(cos: np.ndarray, counts: np.ndarray, rows: np.ndarray, qcount: int) -> np.ndarray:
    """float32 ``0.6 * cos + 0.4 * min(|A|, |B|) / max(|A|, |B|)`` of ``rows`` (``qcount`` > 0): at
    least their fast score (Jaccard <= that ratio; the same float32 operations)."""
    c = counts[rows]
    jub = np.minimum(c, np.int32(qcount)).astype(np.float32)
    jub /= np.maximum(c, np.int32(qcount)).astype(np.float32)  # >= qcount > 0
    jub *= np.float32(W_JAC)
    jub += np.float32(W_COS) * cos[rows]
    return jub


def _kth(fast: np.ndarray, k: int) -> np.float32:
    return fast.max() if k == 1 else np.partition(fast, len(fast) - k)[len(fast) - k]


def _cos_floor(floor: float, jmax: float) -> float:
    """A cosine below which ``0.6 * cos + 0.4 * jmax`` (in float32) stays under ``floor``."""
    return (float(floor) - W_JAC * jmax) / W_COS - COS_SLACK


def prune(
    cos: np.ndarray,
    masks: np.ndarray,
    counts: np.ndarray,
    qmask: np.ndarray,
    qcount: int,
    k: int,
    valid: np.ndarray | None = None,
) -> np.ndarray:
    """Indices of the rows :func:`candidates` would pick from ``fast_scores`` of every row, computing
    the Jaccard term only for rows that can reach the top ``k``.

    A row's fast score is at most ``0.6 * cos + 0.4`` and at most ``0.6 * cos + 0.4 * min(|A|, |B|)
    / max(|A|, |B|)`` (same float32 operations, so the bound holds after rounding too). The fast
    scores of a few rows of highest cosine (the seeds) give a k-th best that the true k-th best is
    at least, less ``MARGIN``: the floor. Rows whose bound stays under it are dropped, first by one
    comparison of the cosines with the floor turned into a cosine (with a slack that keeps every
    row the bound keeps), then by the popcount bound on the survivors; only the rest get their
    Jaccard computed. Every row within ``MARGIN`` of the k-th best fast score is at or above the
    floor, so the candidates, and so every answer, are the same as without pruning.
    ``valid``: rows that may be returned (the others are ignored).
    """
    n = len(cos)
    if k == 1 and valid is None and n > 8:
        rows, floor = _top1_rows(cos, masks, counts, qmask, qcount)
        if len(rows) == 1:  # only the row of best cosine can reach its score (a near-duplicate)
            return rows
        if len(rows) > RAISE_ROWS:  # a weak floor: raise it with the SEED_ROWS best cosines there
            c = cos[rows]
            top = np.argpartition(c, len(c) - SEED_ROWS)[len(c) - SEED_ROWS :]
            floor = max(floor, float(_fast_rows(cos, masks, counts, rows[top], qmask, qcount).max()) - MARGIN)
            rows = rows[c >= _cos_floor(floor, 1.0 if qcount > 0 else 0.0)]
        if qcount > 0 and len(rows) > TOP1_ROWS:
            rows = rows[_count_bound(cos, counts, rows, qcount) >= floor]
        return _pick(rows, _fast_rows(cos, masks, counts, rows, qmask, qcount), 1, None)
    if valid is not None:
        cos = np.where(valid, cos, np.float32(-np.inf))
    m = k + 7
    if m >= n:
        rows = np.arange(n)
    else:
        # seeds: the rows within SEED_BAND of the best cosine (at least k, at most SEED_ROWS + k),
        # found with a comparison rather than a partition of every row
        top = cos.max()
        edge = top - np.float32(SEED_BAND)
        seed = np.flatnonzero(cos >= edge)
        whole = True  # the seeds are every row at or above edge
        if len(seed) < k:
            seed, whole = np.argpartition(cos, n - m)[n - m :], False
        elif len(seed) > SEED_ROWS + k:
            s = cos[seed]
            seed, whole = seed[np.argpartition(s, len(s) - SEED_ROWS - k)[len(s) - SEED_ROWS - k :]], False
        seed_fast = _fast_rows(cos, masks, counts, seed, qmask, qcount)
        floor = _kth(seed_fast, k) - np.float32(MARGIN)
        if not np.isfinite(floor):  # fewer valid rows than seeds: nothing to prune with
            rows = np.arange(n)
        else:
            c_min = _cos_floor(floor, 1.0 if qcount > 0 else 0.0)
            if whole and c_min >= edge:
                # every row that can reach the floor is a seed, scored already (the usual case for
                # a near-duplicate): its candidates are those of the seeds
                return _pick(seed, seed_fast, k, valid)
            rows = np.flatnonzero(cos >= c_min)
            if qcount > 0 and len(rows) > len(seed):
                rows = rows[_count_bound(cos, counts, rows, qcount) >= floor]
    return _pick(rows, _fast_rows(cos, masks, counts, rows, qmask, qcount), k, valid)


def _pick(rows: np.ndarray, fast: np.ndarray, k: int, valid: np.ndarray | None) -> np.ndarray:
    """The candidates among ``rows`` (a superset of the rows at or above the floor)."""
    if valid is not None:
        keep = valid[rows]
        rows, fast = rows[keep], fast[keep]
    return rows[candidates(fast, k)]


def exact_scores(
    units: np.ndarray, masks: np.ndarray, counts: np.ndarray, qunit: np.ndarray, qmask: np.ndarray, qcount: int
) -> np.ndarray:
    """float64 hybrid scores (n,) of a few rows, independent of their position (row-wise sum)."""
    if len(units) == 1:  # the usual single candidate: the same float64 operations, fewer numpy calls
        cos = float((units[0].astype(np.float64) * qunit.astype(np.float64)).sum())
        if qcount <= 0:
            return np.array([W_COS * cos + W_JAC * 0.0])
        inter = (int.from_bytes(masks[0].tobytes(), "little") & int.from_bytes(qmask.tobytes(), "little")).bit_count()
        return np.array([W_COS * cos + W_JAC * (inter / (int(counts[0]) + qcount - inter))])
    cos = (units.astype(np.float64) * qunit.astype(np.float64)).sum(axis=1)
    if qcount > 0:  # union >= |query| > 0: jaccard()'s division, without its guard
        inter = np.bitwise_count(masks & qmask).sum(axis=1, dtype=np.int64)
        return W_COS * cos + W_JAC * (inter / (counts.astype(np.int64) + qcount - inter))
    return W_COS * cos + W_JAC * jaccard(masks, counts, qmask, qcount)


def pick_topk(ids: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices into ``ids``/``scores`` of the top ``k``: higher score first, then higher id."""
    if len(scores) == 1:  # the usual single candidate
        return np.zeros(1, np.intp), scores[:1].copy()
    order = np.lexsort((-ids.astype(np.int64), -scores))
    return order[:k], scores[order[:k]]


def merge_topk(
    best_ids: np.ndarray, best_sc: np.ndarray, ids: np.ndarray, scores: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The running top-``k`` (``best_ids``, ``best_sc``) merged with one block's candidates, in the
    same order as :func:`pick_topk` (higher score first, then higher id)."""
    all_ids, all_sc = np.concatenate([best_ids, ids]), np.concatenate([best_sc, scores])
    sel, top = pick_topk(all_ids, all_sc, k)
    return all_ids[sel], top


def search_block(
    ids: np.ndarray,
    units: np.ndarray,
    masks: np.ndarray,
    counts: np.ndarray,
    qunit: np.ndarray,
    qmask: np.ndarray,
    qcount: int,
    k: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-``k`` of one query over a block of rows.

    ``ids`` (N,) int64, ``units`` (N, 256) float32 unit rows, ``masks`` (N, W) uint64, ``counts``
    (N,) int32 popcounts; ``qunit`` (256,) float32 unit, ``qmask`` (W,) uint64. Returns
    ``(ids (k',), scores (k',) float64)``, ``k' = min(k, N)``.
    """
    n = len(ids)
    if n == 0:
        return np.empty(0, np.int64), np.empty(0, np.float64)
    cand = prune(matvec(units, qunit), masks, counts, qmask, qcount, k)
    exact = exact_scores(units[cand], masks[cand], counts[cand], qunit, qmask, qcount)
    sel, sc = pick_topk(ids[cand], exact, k)
    return ids[cand][sel], sc
