"""``TieredMemory``: the built-in memory backend ``tiered`` (L1 device, L2 RAM, L3 SQLite).

Write path (write-through, Mooncake's "commit then publish"): a batch of turns is committed to
L3 in one durable transaction; only then is it published to L2 and L1 and its ids returned.

Read path, per query row (``sent_vec`` (B, 256) and its attribute set):

1. L1 (last ``l1_size`` written turns, scored on the engine's device). A best score
   ``>= hit_threshold`` is the answer.
2. Otherwise L2 (the ``l2_size`` most recently used turns): the better of L1's and L2's best; an
   answer if ``>= hit_threshold``.
3. Otherwise, when L3 holds turns that L2 does not, an exact scan of those; the best of all three
   is the answer, and an answer found only in L3 is *promoted*: its recency is bumped in L3
   (one small transaction) and it is inserted into L2, evicting L2's least recent turn.

The result is a function of the stored state only (every score is exact, ties go to the newer
id, and L2's content is rebuilt from L3's recency column), so a restart changes no answer.
``search(..., exhaustive=True)`` skips the thresholds (the exact best over every turn).
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # torch is imported where it is used, so registering the backend stays light
    import torch

from v22sdk.engine.memory_head import MEM_DIM, SENT_DIM, MemoryHead, Recall, TurnInfo
from v22sdk.errors import InputError, MemoryStoreError
from v22sdk.memory.paths import default_memory_path
from v22sdk.memory.ring import RingTier, _rows
from v22sdk.memory.scoring import square_sum, unit_row, unit_row_of, unit_rows
from v22sdk.memory.sqlite_tier import SQLiteTier, SQLTurnStore
from v22sdk.memory.turn import Turn, check_attrs, check_conversation

_NO_INFO = TurnInfo()  # frozen: one shared default, its conversation id known to be valid
_NO_TEXT = ("default", "", "", "")  # its (conversation, modality, digest, summary), all valid
_F32 = np.dtype(np.float32)
_Tensor = None  # torch.Tensor, once torch is imported
_load: Callable[..., bool] | None = None if _rows is None else _rows.load  # compiled row check (ring.ROWS)


def _array_of(x) -> np.ndarray | None:
    """``x`` as a numpy array without a copy: itself, or the array of a CPU tensor without grad;
    None for anything else (the general path of ``write`` then converts or refuses it)."""
    if type(x) is np.ndarray:
        return x
    global _Tensor
    if _Tensor is None:
        torch = sys.modules.get("torch")  # not imported: x is no tensor
        if torch is None:
            return None
        _Tensor = torch.Tensor
    if not isinstance(x, _Tensor):
        return None
    try:
        return x.numpy()
    except (RuntimeError, TypeError):  # on a device, needing grad, or no numpy dtype
        return None


def _one_row(x, dim: int) -> np.ndarray | None:
    """The only row of ``x``, a (1, ``dim``) float32 array or CPU tensor without grad, as an owned
    C-contiguous copy (the caller's buffer stays theirs); None for any other input, which the
    general path of ``write`` then converts or refuses. Values are not checked here."""
    x = _array_of(x)
    if x is None or x.shape != (1, dim) or x.dtype != _F32:
        return None
    return x[0].copy()


def _checked_info(sent: np.ndarray, mem: np.ndarray, attrs: frozenset[str], info: TurnInfo) -> tuple:
    """A one-turn write's ``(attrs, text)`` with its info checked (and mended for display) as the
    general path checks a Turn's fields; the Turn built for that is dropped."""
    check_conversation(info.conversation, "conversation")
    t = Turn.from_rows(sent, mem, attrs, info.conversation, info.modality, info.digest, info.summary)
    return t.attrs, (t.conversation, t.modality, t.digest, t.summary)


def _merge(ids_a, sc_a, ids_b, sc_b, k: int):
    """Row-wise top-k of two (B, k) result sets (higher score, then higher id); ids deduplicated."""
    ids = np.concatenate([ids_a, ids_b], axis=1)
    sc = np.concatenate([sc_a, sc_b], axis=1)
    out_i = np.full((len(ids), k), -1, np.int64)
    out_s = np.full((len(ids), k), -np.inf)
    for r in range(len(ids)):
        order = np.lexsort((-ids[r], -sc[r]))
        seen, j = set(), 0
        for o in order:
            if ids[r, o] < 0 or ids[r, o] in seen:
                continue
            seen.add(ids[r, o])
            out_i[r, j], out_s[r, j] = ids[r, o], sc[r, o]
            j += 1
            if j == k:
                break
    return out_i, out_s


class TieredMemory(MemoryHead):
    """The 3-tier semantic cache. ``path=None`` uses :func:`default_memory_path`."""

    name = "tiered"

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        l1_size: int = 50,
        l2_size: int = 10_000,
        device: str | torch.device = "cpu",
        hit_threshold: float = 0.9,
        synchronous: str = "FULL",
        check: str = "quick",
        scan_l3: bool = True,
        l3: SQLTurnStore | None = None,
        index=None,
    ):
        """``l3``: another L3 tier (e.g. ``PostgresTier``: a :class:`~v22sdk.memory.sqlite_tier.SQLTurnStore`)
        instead of SQLite at ``path``; it is owned (and closed) by this memory from then on.

        ``index``: how reads that L1/L2 do not answer search L3. ``None`` or ``"exhaustive"``
        (default): an exact scan of the store. ``"ivf"`` (or a
        :class:`~v22sdk.memory.index.AnnIndex`): an in-RAM candidate index built from the store at
        open and updated after every commit; cosine + Jaccard shortlists re-ranked by the exact
        score (recall < 1, measured in docs/memory.md). ``search(..., exhaustive=True)`` always
        scans exactly."""
        from v22sdk.memory.device_tier import DeviceTier
        from v22sdk.memory.index import make_index

        if l1_size < 1 or l2_size < l1_size:
            raise ValueError(f"need 1 <= l1_size <= l2_size, got {l1_size}, {l2_size}")
        self.hit_threshold = float(hit_threshold)
        # A read that L1/L2 do not answer scans L3 (~10 us per stored turn): off for a latency
        # bound of L2 size; exhaustive search always scans.
        self.scan_l3 = bool(scan_l3)
        self._lock = threading.RLock()  # L1/L2 are plain arrays: one reader/writer at a time
        # the rows a one-turn write is copied into (sent, units, mem), reused under the lock
        self._rows = (np.empty(SENT_DIM, np.float32), np.empty(SENT_DIM, np.float32), np.empty(MEM_DIM, np.float32))
        if l3 is None:
            self.path = os.fspath(path) if path is not None else str(default_memory_path())
            l3 = SQLiteTier(self.path, synchronous=synchronous, check=check)
        else:
            self.path = getattr(l3, "path", None) or str(path or "")
        self.l3 = l3
        try:
            self.index = make_index(index)
            self.l2 = RingTier(l2_size, self.l3.vocab)
            self.l1 = DeviceTier(l1_size, self.l3.vocab, device)
            self.rebuild()
        except BaseException:
            self.l3.close()
            raise

    # -- lifecycle ---------------------------------------------------------------------------

    def rebuild(self) -> None:
        """Refill L2 (most recently used) and L1 (most recently written) from L3."""
        self.l2.clear()
        self.l1.clear()
        self.l2.insert_block(*self.l3.recent_block(self.l2.capacity, by="touched"))
        self.l1.insert_block(*self.l3.recent_block(self.l1.capacity, by="id"))
        if self.index is not None:
            self.index.build_from(self.l3)

    def _index_catch_up(self) -> None:
        """Add to the index the turns other processes committed since it last looked."""
        if self.index is not None and self.l3.max_id() > self.index.hwm:
            for ids, units, masks in self.l3.iter_blocks(after=self.index.hwm):
                self.index.add(ids, units, masks)

    def to(self, device: str | torch.device) -> TieredMemory:
        self.l1.to(device)
        return self

    @property
    def device(self) -> torch.device:
        return self.l1.device

    def close(self) -> None:
        self.l3.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self.l3)

    # -- writes ------------------------------------------------------------------------------

    def write(self, sent_vec, mem_emb, attr_sets, info=None) -> list[int]:
        if len(attr_sets) == 1 and (info is None or (type(info) in (list, tuple) and len(info) == 1)):
            one = (self._write_one if _load is None else self._write_one_compiled)(
                sent_vec, mem_emb, attr_sets[0], None if info is None else info[0]
            )
            if one is not None:
                return one
        sent = self._host(sent_vec, SENT_DIM, "sent_vec")
        mem = self._host(mem_emb, MEM_DIM, "mem_emb")
        b = len(sent)
        if len(mem) != b or len(attr_sets) != b or (info is not None and len(info) != b):
            raise InputError(
                "memory.write",
                f"batch sizes differ: sent_vec {b}, mem_emb {len(mem)}, "
                f"attr_sets {len(attr_sets)}, info {None if info is None else len(info)}",
            )
        if info is None:
            infos: Sequence[TurnInfo] = (_NO_INFO,) * b
        else:
            infos = list(info)
            for i in infos:  # an id that cannot be stored or matched is the caller's input error
                check_conversation(i.conversation, "conversation")
        # _host returned owned, checked, read-only copies: their rows need no second check
        turns = [
            Turn.from_rows(
                sent[i],
                mem[i],
                frozenset(attr_sets[i]),
                infos[i].conversation,
                infos[i].modality,
                infos[i].digest,
                infos[i].summary,
            )
            for i in range(b)
        ]
        return [t.id for t in self.add_turns(turns)]

    def _write_one(self, sent_vec, mem_emb, attrs, info: TurnInfo | None) -> list[int] | None:
        """``write`` of one turn given as (1, D) float32 rows: no (1, D) arrays, no Turn, one check
        per value. None (nothing written) when the rows are of another kind, or hold a non-finite
        value: the general path converts them, or raises the error naming them."""
        sent = _one_row(sent_vec, SENT_DIM)
        if sent is None:
            return None
        ss = square_sum(sent)  # finite exactly when every value of sent is
        mem = _one_row(mem_emb, MEM_DIM)
        if mem is None or not math.isfinite(ss) or not np.isfinite(mem).all():
            return None
        attrs = frozenset(attrs)
        if info is None:
            check_attrs(attrs)
            text = _NO_TEXT
        else:
            attrs, text = _checked_info(sent, mem, attrs, info)
        with self._lock:
            return [self._commit_publish(sent, unit_row_of(sent, ss), mem, attrs, text)[0]]

    def _write_one_compiled(self, sent_vec, mem_emb, attrs, info: TurnInfo | None) -> list[int] | None:
        """:meth:`_write_one` with the rows checked, copied and unit-scaled by one compiled call
        (``_rows.load``) into this memory's own three rows, which the commit and the publishes
        then read (under the lock: the next write refills them)."""
        sent, mem = _array_of(sent_vec), _array_of(mem_emb)
        if sent is None or mem is None:
            return None
        with self._lock:
            s, u, m = self._rows
            if not _load(sent, mem, s, u, m):  # type: ignore[misc]  # write calls this only with _load
                return None
            attrs = frozenset(attrs)
            if info is None:
                check_attrs(attrs)
                text = _NO_TEXT
            else:
                attrs, text = _checked_info(s, m, attrs, info)
            # _commit_publish, one call less (every call on this path is paid cold, after an fsync)
            mask = self.l3.vocab.mask_known(attrs)
            id_, when, touched = self.l3.commit_one(s, m, attrs, text, mask)
            self._publish(id_, s, u, m, attrs, mask, when, touched, text)
            return [id_]

    def add_turns(self, turns: Sequence[Turn]) -> list[Turn]:
        """Commit turns to L3 (durable, one transaction), then publish them to L2 and L1 (and the
        index, if any)."""
        with self._lock:
            if len(turns) == 1:
                return self._add_one(turns[0])
            stored = self.l3.commit(turns)
            if not stored:
                return stored
            # The arrays of the new turns, made once for every tier they are published to.
            w = self.l3.vocab.words()
            ids = np.array([t.id for t in stored], np.int64)
            sent = np.stack([t.sent_vec for t in stored])
            mem = np.stack([t.mem_emb for t in stored])
            units = unit_rows(sent)
            masks = np.stack([self.l3.vocab.mask(t.attrs, w) for t in stored])
            block = (
                ids,
                sent,
                mem,
                masks,
                np.array([t.time for t in stored], np.float64),
                np.array([t.touched for t in stored], np.int64),
                [(t.conversation, t.modality, t.digest, t.summary) for t in stored],
            )
            self.l2.insert_block(*block, units=units)
            self.l1.insert_block(*block, units=units)
            if self.index is not None:
                if ids[0] != self.index.hwm + 1:  # another process wrote in between: read it too
                    self._index_catch_up()
                new = ids > self.index.hwm
                self.index.add(ids[new], units[new], masks[new])
            return stored

    def _add_one(self, turn: Turn) -> list[Turn]:
        """add_turns for one turn (the per-turn write): scalar publishes, no (1, D) arrays."""
        text = (turn.conversation, turn.modality, turn.digest, turn.summary)
        if turn.time:  # a turn that carries its time (an import) keeps it: the general commit
            t = self.l3.commit([turn])[0]
            self._publish(t.id, t.sent_vec, unit_row(t.sent_vec), t.mem_emb, t.attrs, None, t.time, t.touched, text)
            return [t]
        id_, when, touched = self._commit_publish(
            turn.sent_vec, unit_row(turn.sent_vec), turn.mem_emb, turn.attrs, text
        )
        return [turn.with_id(id_, when, touched)]

    def _commit_publish(self, sent, units, mem, attrs: frozenset[str], text: tuple) -> tuple[int, float, int]:
        """Commit one new turn to L3 (durable), then publish it to L2, L1 and the index; its
        ``(id, time, touched)``. Called with the lock held."""
        vocab = self.l3.vocab
        # What does not depend on the id is made before the commit, and published after it.
        mask = vocab.mask_known(attrs)  # None: the commit gives the new names their bits
        id_, when, touched = self.l3.commit_one(sent, mem, attrs, text, mask)
        self._publish(id_, sent, units, mem, attrs, mask, when, touched, text)
        return id_, when, touched

    def _publish(self, id_: int, sent, units, mem, attrs, mask: int | None, when: float, touched: int, text) -> None:
        """One committed turn into L2 and L1 (scalar inserts) and the index."""
        vocab = self.l3.vocab
        if mask is None:
            mask = vocab.mask_int(attrs)
        self.l2.insert_one(id_, sent, units, mem, mask, when, touched, text)
        self.l1.insert_one(id_, sent, units, mem, mask, when, touched, text)
        if self.index is not None:
            if id_ != self.index.hwm + 1:  # another process wrote in between: read it too
                self._index_catch_up()
            if id_ > self.index.hwm:
                self.index.add(np.array([id_], np.int64), units[None], vocab.mask(attrs)[None])

    # -- reads -------------------------------------------------------------------------------

    def _queries(self, sent_vec, attr_sets):
        q = self._host(sent_vec, SENT_DIM, "sent_vec")
        if len(attr_sets) != len(q):
            raise InputError("memory.read", f"{len(q)} query rows but {len(attr_sets)} attribute sets")
        vocab = self.l3.vocab
        qmasks = (
            np.stack([vocab.mask(frozenset(a)) for a in attr_sets])
            if len(q)
            else np.zeros((0, vocab.words()), np.uint64)
        )
        qcounts = np.array([len(frozenset(a)) for a in attr_sets], np.int32)
        return unit_rows(q), qmasks, qcounts

    def search(
        self, sent_vec, attr_sets: Sequence[frozenset[str]], k: int = 1, exhaustive: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ids (B, k) and float64 scores (B, k) per query (-1 / -inf where none)."""
        q, qm, qc = self._queries(sent_vec, attr_sets)
        with self._lock:
            return self._search(q, qm, qc, k, exhaustive)

    def _search(self, q, qm, qc, k: int, exhaustive: bool):
        b = len(q)
        tau = np.inf if exhaustive else self.hit_threshold
        ids, sc = (
            self.l1.search(q, qm, qc, k)
            if not exhaustive
            else (np.full((b, k), -1, np.int64), np.full((b, k), -np.inf))
        )
        todo = np.flatnonzero(sc[:, -1] < tau) if b else np.empty(0, int)
        if len(todo):
            i2, s2 = self.l2.search(q[todo], qm[todo], qc[todo], k)
            ids[todo], sc[todo] = _merge(ids[todo], sc[todo], i2, s2, k)
            todo = todo[sc[todo, -1] < tau]
        if len(todo) and self.index is not None and not exhaustive:
            self._index_catch_up()
            i3, s3 = self.index.search(q[todo], qm[todo], qc[todo], k)
            ids[todo], sc[todo] = _merge(ids[todo], sc[todo], i3, s3, k)
            self._promote([int(i) for i in np.unique(ids[todo]) if i >= 0 and not self.l2.contains(i)])
        elif len(todo) and (self.scan_l3 or exhaustive) and len(self.l3) > len(self.l2):
            i3, s3 = self.l3.search(q[todo], qm[todo], qc[todo], k, exclude=self.l2.id_array())
            ids[todo], sc[todo] = _merge(ids[todo], sc[todo], i3, s3, k)
            self._promote([int(i) for i in np.unique(ids[todo]) if i >= 0 and not self.l2.contains(i)])
        return ids, sc

    def _promote(self, turn_ids: list[int]) -> None:
        if not turn_ids:
            return
        turns = [t for t in self.l3.batched_get(turn_ids) if t is not None]
        recency = self.l3.touch([t.id for t in turns])
        self.l2.batched_put([t.with_id(t.id, t.time, r) for t, r in zip(turns, recency)])

    def read(self, sent_vec: torch.Tensor, attr_sets: Sequence[frozenset[str]]) -> Recall:
        import torch

        device = sent_vec.device if isinstance(sent_vec, torch.Tensor) else self.l1.device
        with self._lock:
            return self._recall(*self.search(sent_vec, attr_sets, k=1), device)

    def _recall(self, ids: np.ndarray, scores: np.ndarray, device: torch.device) -> Recall:
        import torch

        top = ids[:, 0]
        b = len(top)
        values = torch.zeros((b, MEM_DIM), dtype=torch.float32, device=device)
        in_l1 = [r for r in range(b) if top[r] >= 0 and self.l1.contains(top[r])]
        if in_l1:
            values[in_l1] = self.l1.values(top[in_l1]).to(device)
        rest = sorted(set(np.flatnonzero(top >= 0).tolist()) - set(in_l1))
        turns: dict[int, Turn] = {}  # turns read from L3 (held by neither L1 nor L2)
        rows = []
        for r in rest:
            i = int(top[r])
            s = self.l2.slot.get(i)
            rows.append(self.l2.mem[s] if s is not None else self._from_l3(i, turns).mem_emb)
        if rest:
            values[rest] = torch.from_numpy(np.stack(rows)).to(device)
        info: list[TurnInfo | None] = []
        times: list[float | None] = []
        out_ids: list[int | None] = []
        for r in range(b):
            i = int(top[r])
            if i < 0:
                info.append(None)
                times.append(None)
                out_ids.append(None)
                continue
            t = self._meta(i, turns)
            out_ids.append(i)
            info.append(TurnInfo(t[0], t[1], t[2], t[3]))
            times.append(t[4])
        found = torch.from_numpy(top >= 0).to(device)
        sc = torch.from_numpy(np.where(top >= 0, scores[:, 0], 0.0).astype(np.float32)).to(device)
        return Recall(values=values, found=found, scores=sc, ids=out_ids, info=info, times=times)

    def _meta(self, turn_id: int, cache: dict[int, Turn]) -> tuple[str, str, str, str, float]:
        for tier in (self.l1, self.l2):
            s = tier.slot.get(turn_id)
            if s is not None and (text := tier.text[s]) is not None:  # a held slot has its text
                return (*text, float(tier.times[s]))
        t = self._from_l3(turn_id, cache)
        return (t.conversation, t.modality, t.digest, t.summary, t.time)

    def _from_l3(self, turn_id: int, cache: dict[int, Turn]) -> Turn:
        """Turn ``turn_id`` from L3 (once per read: kept in ``cache``). It was found by this read's
        search: gone now means another process removed it in between."""
        t = cache.get(turn_id) or self.l3.get(turn_id)
        if t is None:
            raise MemoryStoreError(f"memory store {self.path}: turn {turn_id} was removed while it was being read")
        cache[turn_id] = t
        return t

    def get(self, turn_id: int) -> Turn | None:
        """A turn by id, L1 -> L2 -> L3."""
        return self.l1.get(turn_id) or self.l2.get(turn_id) or self.l3.get(turn_id)

    # -- helpers -----------------------------------------------------------------------------

    @staticmethod
    def _host(x, dim: int, what: str) -> np.ndarray:
        """``x`` as an owned, read-only (B, dim) float32 copy with finite values."""
        torch = sys.modules.get("torch")  # not imported: x is no tensor
        if torch is not None and isinstance(x, torch.Tensor):
            try:
                x = x.numpy()  # a view of a CPU tensor without grad (np.array below copies it)
            except (RuntimeError, TypeError):  # on a device, needing grad, or no numpy dtype
                x = x.detach().to("cpu", torch.float32).numpy()
        # a copy: the caller's buffer stays theirs
        arr = x.copy() if type(x) is np.ndarray and x.dtype == np.float32 else np.array(x, np.float32, order="C")
        if arr.ndim != 2 or arr.shape[1] != dim:
            raise InputError(f"memory {what}", f"expected shape (B, {dim}), got {tuple(arr.shape)}")
        if not np.isfinite(arr).all():
            raise InputError(f"memory {what}", "contains a non-finite value")
        arr.flags.writeable = False
        return arr

    def stats(self) -> dict:
        s = self.l3.stats()
        s.update(
            {
                "l1_turns": len(self.l1),
                "l1_capacity": self.l1.capacity,
                "l2_turns": len(self.l2),
                "l2_capacity": self.l2.capacity,
                "device": str(self.l1.device),
                "hit_threshold": self.hit_threshold,
                "index": "exhaustive" if self.index is None else self.index.kind,
            }
        )
        if self.index is not None:
            s.update({"index_turns": len(self.index), "index_bytes": self.index.nbytes()})
        return s
