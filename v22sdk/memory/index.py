"""Candidate indexes for the tiers that outgrow a scan: approximate shortlists, exact answers.

A memory read asks for the turn with the best hybrid score ``0.6 * cos + 0.4 * Jaccard``. An
exhaustive scan costs about 0.1 us per stored turn (memory bandwidth: 1 KiB of ``sent_vec`` per
turn), i.e. 100 ms at a million turns. :class:`AnnIndex` answers in about a millisecond instead:

1. **Cosine shortlist** from an approximate nearest-neighbour index (FAISS
   ``IndexIVFScalarQuantizer`` with 8-bit codes, or ``IndexIVFFlat`` with ``codes="flat"``; inner
   product on unit rows; chosen by measurement, see docs/memory.md): the ``shortlist`` turns of
   highest cosine, approximately. Its cosines only rank; every score is computed again exactly.
2. **Jaccard shortlist**, needed because the ``0.4 * Jaccard`` term can lift a turn that is far
   in cosine above every turn of the cosine shortlist. Let ``best`` be the best exact hybrid score
   found in step 1 and ``c_K`` the lowest cosine of the shortlist. A turn outside the shortlist has
   (as far as the ANN index ranked correctly) ``cos <= c_K``, so it can only beat ``best`` when its
   Jaccard is at least ``t = (best - 0.6 * c_K) / 0.4``. Jaccard ``>= t`` implies sharing at least
   ``m = ceil(t * |A|)`` of the query's names ``A``, hence (prefix filtering, as in set-similarity
   joins) at least one of the ``|A| - m + 1`` *rarest* names of ``A``: the union of those names'
   posting lists (an inverted index over attribute bits) holds every such turn. When ``t > 1``
   (the usual case for a near-duplicate query) nothing is read at all.
3. **Exact re-rank** of both shortlists by the same float64 hybrid score as the exhaustive path
   (:func:`~v22sdk.memory.scoring.exact_scores`, ties to the newer id), so a score returned here is
   bit-identical to the exhaustive one for the same turn; the answer differs only when the ANN
   index misranks cosines (measured as recall@1 against the exhaustive scan).

The index is **derived data**: it is built from the durable store (:meth:`AnnIndex.build_from`)
and updated after each durable commit; it is never written to disk and never the only copy.
It keeps, per turn id, the unit ``sent_vec`` (float32, for the exact re-rank), the attribute
mask and its popcount, plus FAISS's codes of the vectors (256 bytes a turn with 8-bit codes, 1 KiB
flat) and the posting lists; see :meth:`AnnIndex.nbytes`.

``faiss-cpu`` is an optional dependency (``pip install 'v22sdk[index]'``); without it asking for an
index raises :class:`~v22sdk.errors.MemoryStoreError` naming the package.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from typing import Any

import numpy as np

from v22sdk.errors import InputError, MemoryStoreError
from v22sdk.memory.scoring import MARGIN, W_COS, W_JAC, exact_scores, pick_topk, unit_rows
from v22sdk.memory.turn import SENT_DIM

#: What a cosine of 8-bit codes may be off by, added to the "strict" bound (measured on the
#: workload: at most 0.006 at 1M turns, 0.0025 at 10k).
SQ8_SLACK = 0.01

# The per-turn count of shared names reads the prefix's lists and this many more of the rarest
# (not the most common lists, the bulk of the postings): a turn holding m names is under enough of
# them, and the few turns that are get their masks read. Measured at 1M turns (fresh inputs, p50
# CPU at load 6-7): all lists 4.0 ms, +1 2.6, +2 2.2, +3 2.8, +4 3.0.
COUNT_RAREST = 2

#: How the IVF index stores the vectors it scans (``AnnIndex(codes=...)``): 8-bit scalar-quantised
#: codes or float32.
CODES = ("sq8", "flat")

#: Index kinds accepted by ``TieredMemory(index=...)`` and the CLI's ``--index``.
INDEX_KINDS = ("exhaustive", "ivf")


def _faiss():
    try:
        import faiss
    except ImportError as e:
        raise MemoryStoreError(
            f"the approximate memory index needs faiss-cpu (pip install 'v22sdk[index]'): {e}"
        ) from e
    return faiss


class _Postings:
    """Inverted index: for each attribute bit, the turn ids that have it (growable int64 arrays)."""

    def __init__(self) -> None:
        self.lists: list[np.ndarray] = []
        self.sizes: list[int] = []

    def _ensure(self, bits: int) -> None:
        while len(self.lists) < bits:
            self.lists.append(np.empty(16, np.int64))
            self.sizes.append(0)

    def add(self, ids: np.ndarray, masks: np.ndarray) -> None:
        """Append ``ids`` (n,) under every bit set in ``masks`` (n, W)."""
        if not len(ids):
            return
        bits = np.unpackbits(np.ascontiguousarray(masks, "<u8").view(np.uint8), axis=1, bitorder="little")
        rows, cols = np.nonzero(bits)
        if not len(cols):
            return
        self._ensure(int(cols.max()) + 1)
        order = np.argsort(cols, kind="stable")  # rows stay in id order within a bit
        cols, rows = cols[order], rows[order]
        starts = np.flatnonzero(np.r_[True, cols[1:] != cols[:-1]])
        ends = np.r_[starts[1:], len(cols)]
        for s, e in zip(starts.tolist(), ends.tolist()):
            b = int(cols[s])
            new = ids[rows[s:e]]
            size, arr = self.sizes[b], self.lists[b]
            if size + len(new) > len(arr):
                grown = np.empty(max(2 * len(arr), size + len(new)), np.int64)
                grown[:size] = arr[:size]
                self.lists[b] = arr = grown
            arr[size : size + len(new)] = new
            self.sizes[b] = size + len(new)

    def keep(self, alive: np.ndarray) -> None:
        """Drop from every list the ids that are not ``alive`` (order kept)."""
        for b, (arr, size) in enumerate(zip(self.lists, self.sizes)):
            ids = arr[:size]
            kept = ids[alive[ids]]
            arr[: len(kept)] = kept
            self.sizes[b] = len(kept)

    def get(self, bit: int) -> np.ndarray:
        return self.lists[bit][: self.sizes[bit]] if bit < len(self.lists) else np.empty(0, np.int64)

    def size(self, bit: int) -> int:
        return self.sizes[bit] if bit < len(self.sizes) else 0

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.lists)


class AnnIndex:
    """Approximate candidate index with exact hybrid re-ranking (see the module docstring).

    ``nlist``: IVF cells (default ``4 * sqrt(n)`` at build time, at most 2,048 and ``n / 39``);
    ``nprobe``: cells visited per query; ``shortlist``: cosine candidates re-ranked per query;
    ``codes``: how FAISS stores the vectors it scans, ``"sq8"`` (a byte per dimension: a quarter of
    the memory read per query; default) or ``"flat"`` (float32);
    ``jaccard``: whether step 2 (the Jaccard shortlist) runs; ``max_postings``: the most posting
    entries step 2 merges and verifies for one query (default: 4,000, or n / 16 when at most 3
    names must be read); beyond, it counts every turn's shared names at once (a byte per turn,
    incremented along the query's rarest posting lists, see ``COUNT_RAREST``; exact too, a fixed
    cost of about one pass over the turns). Thread-safe.
    """

    kind = "ivf"

    def __init__(
        self,
        *,
        nlist: int | None = None,
        nprobe: int = 8,
        shortlist: int = 64,
        jaccard: bool = True,
        bound: str = "robust",
        max_postings: int | None = None,
        seed: int = 0,
        codes: str = "sq8",
    ):
        if nprobe < 1 or shortlist < 1:
            raise InputError("memory index", f"nprobe and shortlist must be >= 1, got {nprobe}, {shortlist}")
        self.nlist, self.nprobe, self.shortlist = nlist, int(nprobe), int(shortlist)
        if bound not in ("robust", "strict"):
            raise InputError("memory index", f"bound must be 'robust' or 'strict', not {bound!r}")
        self.jaccard, self.bound = bool(jaccard), bound
        self.max_postings, self.seed = max_postings, int(seed)
        if codes not in CODES:
            raise InputError("memory index", f"codes must be one of {', '.join(CODES)}, not {codes!r}")
        self.codes = codes
        self._lock = threading.RLock()
        self._reset(0, 1)
        self.stats = {"queries": 0, "jaccard_reads": 0, "jaccard_candidates": 0, "count_scans": 0}

    def _reset(self, capacity: int, words: int) -> None:
        self.ivf: Any = None  # a faiss IndexIVFScalarQuantizer (or IndexIVFFlat) once built
        self.units = np.zeros((capacity, SENT_DIM), np.float32)  # row = turn id
        self.masks = np.zeros((capacity, words), np.uint64)  # rows: gathered per candidate
        self.counts = np.zeros(capacity, np.int32)
        self.alive = np.zeros(capacity, bool)
        self.postings = _Postings()
        self._tally: np.ndarray | None = None  # scratch counts of shared names (see _jaccard_candidates)
        # lists beyond the prefix that the per-turn count reads (None: all, exact counts)
        self._count_rarest: int | None = COUNT_RAREST
        self.n = 0
        self.hwm = 0  # highest turn id added
        self.removed = 0  # removed turns still listed in the posting lists (dropped in bulk)

    def __len__(self) -> int:
        return self.n

    # -- building ------------------------------------------------------------------------------

    def _grow(self, top_id: int, words: int) -> None:
        cap, w = len(self.alive), self.masks.shape[1]
        if top_id < cap and words <= w:
            return
        new_cap = max(top_id + 1, 2 * cap if top_id >= cap else cap, 1024)
        new_w = max(words, w)

        def grow(a, shape, order="C"):
            out = np.zeros(shape, a.dtype, order=order)
            out[tuple(slice(0, s) for s in a.shape)] = a
            return out

        self.units = grow(self.units, (new_cap, SENT_DIM))
        self.masks = grow(self.masks, (new_cap, new_w))
        self.counts = grow(self.counts, (new_cap,))
        self.alive = grow(self.alive, (new_cap,))

    def build(self, ids: np.ndarray, units: np.ndarray, masks: np.ndarray) -> None:
        """(Re)build from arrays: ids (n,) int64 > 0, unit rows (n, 256) float32, masks (n, W)."""
        faiss = _faiss()
        with self._lock:
            n = len(ids)
            self._reset(0, max(1, masks.shape[1]))
            # FAISS wants >= 39 training points per cell: fewer cells for a small store
            nlist = self.nlist or int(max(1, min(2048, 4 * math.sqrt(max(n, 1)), n // 39)))
            self._nlist_used = nlist
            quant = faiss.IndexFlatIP(SENT_DIM)
            if self.codes == "sq8":
                ivf = faiss.IndexIVFScalarQuantizer(
                    quant, SENT_DIM, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
                )
            else:
                ivf = faiss.IndexIVFFlat(quant, SENT_DIM, nlist, faiss.METRIC_INNER_PRODUCT)
            ivf.cp.seed = self.seed
            ivf.cp.niter = 10  # k-means iterations: the build must stay under a minute at 1M turns
            sample = (
                units
                if n <= 40 * nlist
                else units[np.sort(np.random.default_rng(self.seed).choice(n, 40 * nlist, replace=False))]
            )
            if len(sample) < nlist:  # too few turns to train on: train on them plus random directions
                pad = unit_rows(np.random.default_rng(self.seed).standard_normal((nlist - len(sample), SENT_DIM)))
                sample = np.concatenate([sample, pad]) if len(sample) else pad
            ivf.train(np.ascontiguousarray(sample, np.float32))
            ivf.nprobe = min(self.nprobe, nlist)
            self._quant = quant  # FAISS does not own the quantizer made from Python
            self.ivf = ivf
            self.add(ids, units, masks)

    def build_from(self, store, chunk: int = 50_000) -> None:
        """(Re)build from every turn of an L3 store (anything with ``iter_blocks``)."""
        ids, units, masks = [], [], []
        for block in store.iter_blocks(chunk):
            ids.append(block[0])
            units.append(block[1])
            masks.append(block[2])
        words = max([m.shape[1] for m in masks] + [1])
        masks = [np.pad(m, ((0, 0), (0, words - m.shape[1]))) for m in masks]
        if ids:
            self.build(np.concatenate(ids), np.concatenate(units), np.concatenate(masks))
        else:
            self.build(np.empty(0, np.int64), np.empty((0, SENT_DIM), np.float32), np.zeros((0, 1), np.uint64))

    def add(self, ids: np.ndarray, units: np.ndarray, masks: np.ndarray) -> None:
        """Add turns (ids not held yet; unit rows; masks over the store's vocabulary)."""
        if self.ivf is None:
            raise MemoryStoreError("memory index: add() before build()")
        ids = np.asarray(ids, np.int64)
        if not len(ids):
            return
        with self._lock:
            fresh = ~self.alive[ids[ids < len(self.alive)]]
            if ids.min() < 1 or not fresh.all():
                raise MemoryStoreError("memory index: turn ids must be new and positive")
            if self.removed and ids.min() <= self.hwm:  # a removed id may come back: list it once
                self._drop_removed()
            self._grow(int(ids.max()), masks.shape[1])
            units = np.ascontiguousarray(units, np.float32)
            self.units[ids] = units
            self.masks[ids] = 0
            self.masks[ids, : masks.shape[1]] = masks
            self.counts[ids] = np.bitwise_count(masks).sum(axis=1, dtype=np.int32)
            self.alive[ids] = True
            self.ivf.add_with_ids(units, ids)
            self.postings.add(ids, masks)
            self.n += len(ids)
            self.hwm = max(self.hwm, int(ids.max()))

    def remove(self, ids: Iterable[int]) -> int:
        ids = np.unique(np.array([i for i in ids if 0 < i < len(self.alive)], np.int64))
        with self._lock:
            ids = ids[self.alive[ids]]
            if len(ids):
                self.alive[ids] = False
                self.ivf.remove_ids(ids)
                self.n -= len(ids)
                self.removed += len(ids)
                if 4 * self.removed > self.n + self.removed:  # over a quarter of the listed ids: amortised
                    self._drop_removed()
            return len(ids)

    def _drop_removed(self) -> None:
        self.postings.keep(self.alive)
        self.removed = 0

    def nbytes(self) -> int:
        """Bytes held: our arrays, the posting lists and FAISS's inverted lists and centroids."""
        own = self.units.nbytes + self.masks.nbytes + self.counts.nbytes + self.alive.nbytes
        own += self._tally.nbytes if self._tally is not None else len(self.alive)  # a byte per turn, once used
        ivf = 0
        if self.ivf is not None:  # codes and ids in the inverted lists, the centroids
            ivf = self.ivf.ntotal * (self.ivf.code_size + 8) + self._nlist_used * 4 * SENT_DIM
        return own + self.postings.nbytes() + ivf

    # -- searching -----------------------------------------------------------------------------

    def search(
        self,
        queries: np.ndarray,
        qmasks: np.ndarray,
        qcounts: np.ndarray,
        k: int = 1,
        exclude: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ids (B, k) and exact float64 hybrid scores (B, k), as ``MemoryTier.search``.

        ``exclude``: sorted ids to leave out (the turns L2 already scored)."""
        b = len(queries)
        out_ids = np.full((b, k), -1, np.int64)
        out_sc = np.full((b, k), -np.inf)
        with self._lock:
            if self.n == 0 or b == 0:
                return out_ids, out_sc
            w = self.masks.shape[1]
            qm = np.zeros((b, w), np.uint64)
            qm[:, : min(w, qmasks.shape[1])] = qmasks[:, :w]
            queries = np.ascontiguousarray(queries, np.float32)
            kk = min(self.n, max(k, self.shortlist))
            cos, cand = self.ivf.search(queries, kk)
            for q in range(b):
                out_ids[q], out_sc[q] = self._one(queries[q], qm[q], int(qcounts[q]), k, cos[q], cand[q], exclude)
            self.stats["queries"] += b
        return out_ids, out_sc

    def _rerank(self, ids, qunit, qmask, qcount):
        return exact_scores(self.units[ids], self.masks[ids], self.counts[ids], qunit, qmask, qcount)

    def _shortlist_bound(self, qunit, cos, found, units) -> float:
        """A bound on the cosine of the turns outside the shortlist: the shortlist's highest
        ("robust") or lowest ("strict") cosine, from the exact cosines when FAISS's are those of
        8-bit codes (off by up to a few thousandths); 1 when fewer turns were probed than asked
        (nothing bounds the rest)."""
        if not found.all():
            return 1.0
        if self.codes == "flat" or not len(units):
            return float(cos[0] if self.bound == "robust" else cos[found][-1]) + MARGIN
        exact = units @ qunit
        if self.bound == "robust":
            return max(float(cos[0]), float(exact.max())) + MARGIN
        return float(cos[found][-1]) + SQ8_SLACK + MARGIN

    def _one(self, qunit, qmask, qcount, k, cos, cand, exclude):
        found = cand >= 0
        ids = cand[found]
        if exclude is not None and len(exclude):
            ids = ids[~np.isin(ids, exclude)]
        out_i = np.full(k, -1, np.int64)
        out_s = np.full(k, -np.inf)
        units = self.units[ids]  # gathered once: the re-rank and the bound read them
        sc = exact_scores(units, self.masks[ids], self.counts[ids], qunit, qmask, qcount)
        if self.jaccard and qcount > 0 and len(ids):
            # Cosine of turns outside the shortlist: at most the shortlist's lowest if the ANN
            # ranked exactly ("strict"); an ANN misses some of the highest too, so by default the
            # bound is the shortlist's highest cosine ("robust").
            c_k = self._shortlist_bound(qunit, cos, found, units)
            kth = np.sort(sc)[::-1][k - 1] if len(sc) >= k else -np.inf
            need = (kth - W_COS * c_k) / W_JAC - MARGIN
            if need <= 1.0:
                more = self._jaccard_candidates(qmask, qcount, need)
                if len(more):
                    more = np.setdiff1d(more, ids, assume_unique=True)
                    if exclude is not None and len(exclude):
                        more = more[~np.isin(more, exclude)]
                    if len(more):
                        ids = np.concatenate([ids, more])
                        sc = np.concatenate([sc, self._rerank(more, qunit, qmask, qcount)])
        if len(ids):
            sel, top = pick_topk(ids, sc, k)
            out_i[: len(sel)], out_s[: len(sel)] = ids[sel], top
        return out_i, out_s

    def _jaccard_candidates(self, qmask: np.ndarray, qcount: int, need: float) -> np.ndarray:
        """Every live turn whose Jaccard with the query can be >= ``need`` (a superset)."""
        bits = np.flatnonzero(np.unpackbits(qmask.astype("<u8").view(np.uint8), bitorder="little"))
        if need <= 0:
            m = 1
        else:
            m = math.ceil(need * qcount - 1e-9)  # shared names needed
        if m > len(bits):
            return np.empty(0, np.int64)  # not even a turn holding every known query name reaches it
        self.stats["jaccard_reads"] += 1
        sizes = np.array([self.postings.size(int(x)) for x in bits])
        order = np.argsort(sizes, kind="stable")
        # Measured at 100k and 1M turns: a long prefix (a low threshold, fresh inputs) is cheaper
        # to count from 4,000 postings on; a prefix of <= 3 names (a near-duplicate query) keeps
        # few turns after the length filter, so merging stays cheaper up to n / 16 postings.
        if self.max_postings is not None:
            limit = self.max_postings
        else:
            limit = 4_000 if len(bits) - m + 1 > 3 else max(4_000, len(self.alive) // 16)
        if sizes[order[: len(bits) - m + 1]].sum() > limit:
            # Many postings to merge: count, for every turn at once, how many of the query's rarest
            # names it holds (see COUNT_RAREST), then |A ∩ B| exactly from the masks of the turns
            # that can still hold m names.
            self.stats["count_scans"] += 1
            if len(bits) < 256:
                # one byte per turn, kept between queries (under the lock) and zeroed after use:
                # a scattered increment per posting list (ids are unique within a list) costs
                # about half of a bincount, which allocates and scans 8 bytes per turn
                r = len(bits) if self._count_rarest is None else min(len(bits), len(bits) - m + 1 + self._count_rarest)
                tally = self._tally_array()
                try:
                    for x in bits[order[:r]]:
                        tally[self.postings.get(int(x))] += np.uint8(1)
                    # a turn holding m names is under at least m - (len(bits) - r) of the r rarest lists
                    cand = np.flatnonzero(tally >= m - (len(bits) - r))  # one pass; few survive it
                    held = tally[cand].astype(np.int64)
                finally:
                    tally.fill(0)
                keep = self.alive[cand]
                if r < len(bits):
                    # it shares at most held + (len(bits) - r) names (those of the unread lists), so
                    # J <= s / (|A| + |B| - s): the counts drop most before any mask is read
                    most = held + (len(bits) - r)
                    keep &= most * (1.0 + need) >= need * (qcount + self.counts[cand]) - 1e-9
                cand = cand[keep]
                if r < len(bits):
                    shared = np.bitwise_count(self.masks[cand] & qmask).sum(axis=1, dtype=np.int64)
                else:
                    shared = held[keep]
            else:
                inter = np.bincount(
                    np.concatenate([self.postings.get(int(x)) for x in bits]), minlength=len(self.alive)
                )
                cand = np.flatnonzero(inter >= m)
                cand = cand[self.alive[cand]]
                shared = inter[cand]
            union = self.counts[cand] + np.int64(qcount) - shared
            out = cand[shared.astype(np.float64) >= need * union].astype(np.int64)
        else:
            cand = self._merge_prefix(bits, sizes, order, m)
            # length filter: J >= need needs need * |A| <= |B| <= |A| / need (cheaper than the
            # masks); duplicates (a turn under several prefix names) are dropped after it
            c = self.counts[cand]
            keep = (c >= m) & self.alive[cand]
            if need > 0:
                keep &= c <= qcount / need + 1e-9
            cand = np.unique(cand[keep])
            inter = np.bitwise_count(self.masks[cand] & qmask).sum(axis=1, dtype=np.int32)
            union = self.counts[cand] + np.int32(qcount) - inter
            out = cand[inter.astype(np.float64) >= need * union]
        self.stats["jaccard_candidates"] += len(out)
        return out

    def _tally_array(self) -> np.ndarray:
        """One zeroed byte per turn id, kept between queries (used under the lock, zeroed after)."""
        if self._tally is None or len(self._tally) != len(self.alive):
            self._tally = np.zeros(len(self.alive), np.uint8)
        return self._tally

    def _merge_prefix(self, bits: np.ndarray, sizes: np.ndarray, order: np.ndarray, m: int) -> np.ndarray:
        """The turns under the ``len(bits) - m + 1`` rarest names (prefix filtering), fewer when
        the next rarest lists are short: a turn holding ``m`` of the query's names misses at most
        ``e = len(bits) - m`` of them, so it is under at least ``r - e`` of the ``r`` rarest lists.
        Counting that with a byte per turn (a scattered increment per list, ids unique within a
        list) drops most prefix turns before their masks are read (measured at 1M turns: a
        near-duplicate's 2 rarest names list about 10,000 turns; under 2 of the 3 rarest, a few).
        May repeat a turn; every turn holding ``m`` names is in it."""
        p = len(bits) - m + 1
        lists = [self.postings.get(int(x)) for x in bits[order[:p]]]
        psum = sum(len(x) for x in lists)
        r = p
        while r < len(bits) and r < p + 2 and sizes[order[r]] <= 2 * psum:
            lists.append(self.postings.get(int(bits[order[r]])))
            r += 1
        cand = np.concatenate(lists[:p])
        if r == p or psum < 1_000 or len(bits) >= 256:
            return cand
        tally = self._tally_array()
        try:
            for x in lists:
                tally[x] += np.uint8(1)
            return cand[tally[cand] >= r - p + 1]
        finally:
            tally.fill(0)


def make_index(spec, **kw) -> AnnIndex | None:
    """``None``/``"exhaustive"`` -> None (exact scans); ``"ivf"`` -> :class:`AnnIndex`; an index
    object is returned as it is."""
    if spec is None or spec == "exhaustive":
        return None
    if isinstance(spec, AnnIndex):
        return spec
    if spec == "ivf":
        return AnnIndex(**kw)
    raise InputError("memory index", f"unknown index {spec!r}; choose one of {', '.join(INDEX_KINDS)}")
