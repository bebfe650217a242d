"""L2: the most recently used turns in preallocated numpy ring buffers, searched exactly.

Arrays (``C`` = capacity, ``W`` = mask words): ``ids`` (C,) int64 (-1 = empty slot), ``sent``
(C, 256) float32 as stored, ``units`` (C, 256) float32 unit rows for the cosine, ``mem`` (C, 384)
float32, ``masks`` (C, W) uint64 (column-major), ``counts`` (C,) int32, ``times`` (C,) float64,
``touched`` (C,) int64, plus a Python list of the text fields; attribute names are decoded from
the masks when a turn is read back. Eviction is FIFO over insertion, and turns are inserted in
recency order (write or promotion), so after a restart the ring rebuilt from the ``touched``
column of L3 holds exactly the same turns.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from v22sdk.memory.scoring import (
    COS_SLACK,
    MARGIN,
    W_COS,
    W_JAC,
    AttrVocab,
    exact_scores,
    matvec,
    pick_topk,
    prune,
    unit_row,
    unit_rows,
)
from v22sdk.memory.tier import MemoryTier
from v22sdk.memory.turn import MEM_DIM, SENT_DIM, Turn

_compiled: Any
try:  # the compiled top-1 scan (setup.py builds it; without it, the same scan in numpy). By name:
    # an import checker that knows only .py files would read "from v22sdk.memory import _scan" as
    # an import of the package (which imports this module); the extension itself imports nothing.
    _compiled = importlib.import_module("v22sdk.memory._scan")
except ImportError:  # pragma: no cover - depends on the install
    _compiled = None


def _usable(ext: Any) -> Any:
    """``ext`` when it computes this score (its weights are scoring's), else None: a stale build
    leaves the numpy path, which reads scoring's weights."""
    ok = ext is not None and (getattr(ext, "W_COS", None), getattr(ext, "W_JAC", None)) == (W_COS, W_JAC)
    return ext if ok and isinstance(getattr(ext, "MAX_WORDS", None), int) else None


_compiled = _usable(_compiled)
#: which scan a single-query top-1 read of L2 runs: "compiled" (v22sdk/memory/_scan.c) or "numpy"
SCAN = "numpy" if _compiled is None else "compiled"
_MAX_WORDS = 0 if _compiled is None else _compiled.MAX_WORDS  # its limit on mask words

_rows: Any
try:  # the per-turn write's row work (v22sdk/memory/_rows.c; without it, numpy), by name as above
    _rows = importlib.import_module("v22sdk.memory._rows")
except ImportError:  # pragma: no cover - depends on the install
    _rows = None
if _rows is not None and (getattr(_rows, "SENT_DIM", None), getattr(_rows, "MEM_DIM", None)) != (SENT_DIM, MEM_DIM):
    _rows = None  # a stale build, for rows of other widths: numpy
#: how a write of one turn checks its rows and fills a ring's slot: "compiled"
#: (v22sdk/memory/_rows.c) or "numpy"
ROWS = "numpy" if _rows is None else "compiled"


class RingTier(MemoryTier):
    """A fixed-capacity FIFO of turns with exact hybrid search (numpy; a single-query top-1 read
    by the compiled scan where it is built)."""

    level = "L2"
    #: whether a single-query top-1 read may run the compiled scan (L1 scores on its device instead)
    compiled_scan = True
    #: whether a copy of the rows lives elsewhere too (L1's on a GPU): insert_one then calls _mirror
    mirrored = False

    def __init__(self, capacity: int, vocab: AttrVocab):
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        self.vocab = vocab
        c, w = self.capacity, vocab.words()
        self.ids = np.full(c, -1, np.int64)
        self.sent = np.zeros((c, SENT_DIM), np.float32)
        self.units = np.zeros((c, SENT_DIM), np.float32)
        self.mem = np.zeros((c, MEM_DIM), np.float32)
        self.masks = np.zeros((c, w), np.uint64, order="F")  # columns contiguous: see fast_scores
        self.counts = np.zeros(c, np.int32)
        self.times = np.zeros(c, np.float64)
        self.touched = np.zeros(c, np.int64)
        self.text: list[tuple[str, str, str, str] | None] = [None] * c
        self.slot: dict[int, int] = {}
        self.head = 0  # next slot to write
        self.filled = 0  # slots [0, filled) have been written at least once
        self.holes = 0  # removed slots not yet overwritten
        self._view: Any = None  # the compiled writer of these arrays (_rows.Ring), made at first use

    def __len__(self) -> int:
        return len(self.slot)

    def _ensure_words(self) -> None:
        w = self.vocab.words()
        if w > self.masks.shape[1]:  # vocabulary outgrew the masks: widen (rare)
            wider = np.zeros((self.capacity, w), np.uint64, order="F")
            wider[:, : self.masks.shape[1]] = self.masks
            self.masks = wider

    # -- writes ------------------------------------------------------------------------------

    def put(self, turn: Turn) -> None:
        self.batched_put([turn])

    def batched_put(self, turns: Sequence[Turn]) -> None:
        """Insert turns (which carry ids) in the given order, evicting the oldest when full."""
        self._insert(turns)

    def _insert(self, turns: Sequence[Turn]) -> np.ndarray:
        """Insert turns not yet held; return the slots written."""
        turns = [t for t in turns if t.id not in self.slot][-self.capacity :]
        if not turns:
            return np.empty(0, np.int64)
        self._ensure_words()
        w = self.masks.shape[1]
        return self.insert_block(
            np.array([t.id for t in turns], np.int64),
            np.stack([t.sent_vec for t in turns]),
            np.stack([t.mem_emb for t in turns]),
            np.stack([self.vocab.mask(t.attrs, w) for t in turns]),
            np.array([t.time for t in turns]),
            np.array([t.touched for t in turns], np.int64),
            [(t.conversation, t.modality, t.digest, t.summary) for t in turns],
        )

    def insert_block(
        self,
        ids: np.ndarray,
        sent: np.ndarray,
        mem: np.ndarray,
        masks: np.ndarray,
        times: np.ndarray,
        touched: np.ndarray,
        text: list[tuple],
        units: np.ndarray | None = None,
    ) -> np.ndarray:
        """Bulk insert of n new turns as arrays (ids not held yet), oldest first; the last
        ``capacity`` are kept. Shapes: (n,), (n, 256), (n, 384), (n, W'), (n,), (n,), n tuples;
        ``units``: ``unit_rows(sent)`` when the caller has it already."""
        if len(ids) == 1 and self.capacity > 1:
            return self._insert_one(ids, sent, mem, masks, times, touched, text, units)
        if len(ids) > self.capacity:
            cut = len(ids) - self.capacity
            ids, sent, mem, masks, times, touched, text = (
                ids[cut:],
                sent[cut:],
                mem[cut:],
                masks[cut:],
                times[cut:],
                touched[cut:],
                text[cut:],
            )
        n = len(ids)
        if n == 0:
            return np.empty(0, np.int64)
        self._ensure_words()
        w = self.masks.shape[1]
        slots = (self.head + np.arange(n)) % self.capacity
        old = self.ids[slots]
        for o in old[old >= 0].tolist():
            del self.slot[o]
        self.holes -= int(np.count_nonzero((old < 0) & (slots < self.filled)))
        self.sent[slots] = sent
        self.units[slots] = unit_rows(sent) if units is None else units[-n:]
        self.mem[slots] = mem
        self.masks[slots] = 0
        self.masks[slots, : min(w, masks.shape[1])] = masks[:, :w]
        self.counts[slots] = np.bitwise_count(self.masks[slots]).sum(axis=1, dtype=np.int32)
        self.ids[slots] = ids
        self.times[slots] = times
        self.touched[slots] = touched
        for s, i, tx in zip(slots.tolist(), ids.tolist(), text):
            self.text[s] = tx
            self.slot[i] = s
        self.head = int((self.head + n) % self.capacity)
        self.filled = min(self.capacity, self.filled + n)
        if self.mirrored:
            self._mirror_block(slots)
        return slots

    def _insert_one(self, ids, sent, mem, masks, times, touched, text, units) -> np.ndarray:
        """insert_block for one turn (arrays of length 1), by :meth:`insert_one` (which mirrors it)."""
        row = np.ascontiguousarray(masks[0], "<u8")
        s = RingTier.insert_one(
            self,
            int(ids[0]),
            sent[0],
            unit_row(sent[0]) if units is None else units[0],
            mem[0],
            int.from_bytes(row.tobytes(), "little"),
            float(times[0]),
            int(touched[0]),
            text[0],
        )
        return np.array([s], np.int64)

    def insert_one(
        self,
        turn_id: int,
        sent: np.ndarray,
        units: np.ndarray,
        mem: np.ndarray,
        mask: int,
        time: float,
        touched: int,
        text: tuple,
    ) -> int:
        """Insert one new turn (id not held yet) with scalar indexing: the per-turn write path.
        ``sent``, ``units``, ``mem``: its rows (C-contiguous float32); ``mask``: its attribute
        mask as a Python int (:meth:`AttrVocab.mask_int`). Returns the slot written."""
        w = self.masks.shape[1]
        if mask >> (64 * w):  # the vocabulary outgrew the masks: widen (rare)
            self._ensure_words()
            w = self.masks.shape[1]
            mask &= (1 << (64 * w)) - 1  # bits past the vocabulary are not names
        if _rows is not None:  # all of what follows, in one compiled call
            view = self._view
            if view is None or view.masks is not self.masks:  # first write, or wider masks
                view = self._view = _rows.Ring(
                    self.sent, self.units, self.mem, self.masks, self.counts, self.ids, self.times, self.touched
                )
            s = view.insert(self, turn_id, sent, units, mem, mask.to_bytes(8 * w, "little"), time, touched, text)
            if self.mirrored:
                self._mirror(s)
            return s
        s = self.head
        old = int(self.ids[s])
        if old >= 0:
            del self.slot[old]
        elif s < self.filled:
            self.holes -= 1
        self.sent[s] = sent
        self.units[s] = units
        self.mem[s] = mem
        if w == 1:
            self.masks[s, 0] = mask
        else:
            self.masks[s] = np.frombuffer(mask.to_bytes(8 * w, "little"), "<u8")
        self.counts[s] = mask.bit_count()
        self.ids[s] = turn_id
        self.times[s] = time
        self.touched[s] = touched
        self.text[s] = text
        self.slot[turn_id] = s
        self.head = s + 1 if s + 1 < self.capacity else 0
        if self.filled < self.capacity:
            self.filled += 1
        if self.mirrored:
            self._mirror(s)
        return s

    def _mirror(self, s: int) -> None:
        """Copy slot ``s``, just written by :meth:`insert_one`, where a subclass keeps its copy."""

    def _mirror_block(self, slots: np.ndarray) -> None:
        """:meth:`_mirror` of the slots :meth:`insert_block` wrote."""

    def remove(self, turn_id: int) -> bool:
        s = self.slot.pop(int(turn_id), None)
        if s is None:
            return False
        self.ids[s] = -1
        self.holes += 1
        return True

    # -- reads -------------------------------------------------------------------------------

    def contains(self, turn_id: int) -> bool:
        return int(turn_id) in self.slot

    def get(self, turn_id: int) -> Turn | None:
        s = self.slot.get(int(turn_id))
        if s is None:
            return None
        text = self.text[s]
        assert text is not None, s  # a slot in self.slot holds a turn
        conv, mod, digest, summary = text
        attrs = self.vocab.names_of(self.masks[s])  # masks hold every name (vocab covers all)
        return Turn(
            self.sent[s].copy(),
            self.mem[s].copy(),
            attrs,
            int(self.ids[s]),
            float(self.times[s]),
            conv,
            mod,
            digest,
            summary,
            int(self.touched[s]),
        )

    def id_array(self) -> np.ndarray:
        """Sorted ids held (for excluding them from an L3 scan)."""
        return np.sort(self.ids[: self.filled][self.ids[: self.filled] >= 0])

    def _fast(self, queries: np.ndarray, n: int) -> np.ndarray:
        """float32 cosines (B, n) of the first pass; L1 overrides this to run on its device."""
        if len(queries) == 1:  # matrix-vector: the common single-query read
            return matvec(self.units[:n], queries[0])[None]
        return queries @ self.units[:n].T

    def _top1_compiled(self, query: np.ndarray, qmask: np.ndarray, qcount: int, n: int) -> tuple[int, float]:
        """``(id, score)`` of the exact hybrid top-1 of rows ``[0, n)`` (no holes) by the compiled
        scan: what :func:`prune`, :func:`exact_scores` and :func:`pick_topk` give, score bits
        included (the tests hold both paths to that). ``query``: 256 float32 values, ``qmask``:
        the ring's number of mask words, both C-contiguous."""
        out: tuple[int, float] = _compiled.top1(
            self.units,
            self.masks.T,  # (W, C), C-contiguous: row i's word w at w * C + i
            1,
            self.capacity,
            self.counts,
            self.ids,
            n,
            query,
            qmask,
            qcount,
            MARGIN,
            COS_SLACK,
        )
        return out

    def search(self, queries, qmasks, qcounts, k: int = 1):
        b, n = len(queries), self.filled
        if k == 1 and b == 1 and n > 8 and not self.holes and self.compiled_scan and _compiled is not None:
            # the common read (one query, top-1, no holes: len(self.slot) == n) in one compiled call
            self._ensure_words()
            w = self.masks.shape[1]
            if (
                w <= _MAX_WORDS
                and self.masks.flags.f_contiguous
                and qmasks.shape == (1, w)
                and qmasks.dtype == np.uint64
                and qmasks.flags.c_contiguous
                and queries.dtype == np.float32
                and queries.flags.c_contiguous
            ):
                best, score = self._top1_compiled(queries, qmasks, int(qcounts[0]), n)
                return np.array([[best]], np.int64), np.array([[score]])
        out_ids = np.full((b, k), -1, np.int64)
        out_sc = np.full((b, k), -np.inf)
        if len(self.slot) == 0:
            return out_ids, out_sc
        self._ensure_words()
        w = self.masks.shape[1]
        if qmasks.shape[1] == w and qmasks.dtype == np.uint64:
            qm = qmasks
        else:
            qm = np.zeros((b, w), np.uint64)
            qm[:, : min(w, qmasks.shape[1])] = qmasks[:, :w]
        cos = self._fast(np.ascontiguousarray(queries, np.float32), n)  # (B, n)
        ids, masks, counts = self.ids[:n], self.masks[:n], self.counts[:n]
        kk = min(k, len(self.slot))
        valid = (ids >= 0) if self.holes else None
        for q in range(b):
            qc = int(qcounts[q])
            cand = prune(cos[q], masks, counts, qm[q], qc, kk, valid=valid)
            exact = exact_scores(self.units[cand], masks[cand], counts[cand], queries[q], qm[q], qc)
            sel, sc = pick_topk(ids[cand], exact, kk)
            out_ids[q, : len(sel)], out_sc[q, : len(sel)] = ids[cand][sel], sc
        return out_ids, out_sc

    def clear(self) -> None:
        self.__init__(self.capacity, self.vocab)  # type: ignore[misc]  # reset in place (callers hold this object)
