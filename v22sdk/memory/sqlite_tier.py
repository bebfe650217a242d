"""L3: every turn, durable, in one SQLite file (stdlib ``sqlite3``).

Durability promise: a write returns (is *acknowledged*) only after its transaction has committed
in WAL mode with ``synchronous=FULL``, i.e. after SQLite has fsynced the WAL. A write that fails
(disk full, I/O error, a lock held too long) raises :class:`MemoryStoreError` and leaves nothing
behind. Every row carries a CRC32 of its content, checked whenever the row is loaded, so damage
inside a row's bytes (which SQLite's structural ``quick_check`` cannot see) is also reported as
:class:`MemoryStoreCorrupt` naming the file. A damaged file is never opened as empty; the
readable turns can be copied into a new file with :func:`salvage`.

File format (``PRAGMA user_version = 1``; see ``docs/memory.md``): table ``turns`` (one row per
turn, vectors as little-endian float32 BLOBs), table ``attr_vocab`` (bit number of each slot name
used in the attribute masks) and table ``meta``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import tempfile
import threading
import time
import zlib
from typing import Callable, Iterator, Sequence

import numpy as np

from v22sdk.errors import InputError, MemoryStoreCorrupt, MemoryStoreError
from v22sdk.memory.scoring import (AttrVocab, blob_to_mask, int_to_blob, mask_to_blob, merge_topk, search_block,
                                   unit_rows)
from v22sdk.memory.tier import MemoryTier
from v22sdk.memory.turn import MEM_DIM, SENT_DIM, Turn

SCHEMA_VERSION = 1
PAGE_SIZE = 8192
SQLITE_HEADER = b"SQLite format 3\x00"
TURN_COLUMNS = "id, time, conversation, modality, digest, summary, attrs, attr_mask, sent_vec, mem_emb, touched, crc"

_SCHEMA = """
CREATE TABLE turns (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    time         REAL    NOT NULL,
    conversation TEXT    NOT NULL,
    modality     TEXT    NOT NULL,
    digest       TEXT    NOT NULL,
    summary      TEXT    NOT NULL,
    attrs        TEXT    NOT NULL,  -- JSON list of slot names, sorted
    attr_mask    BLOB    NOT NULL,  -- little-endian uint64 words over attr_vocab bits
    sent_vec     BLOB    NOT NULL,  -- 256 x float32 little-endian
    mem_emb      BLOB    NOT NULL,  -- 384 x float32 little-endian
    touched      INTEGER NOT NULL,  -- recency sequence: bumped on write and on promotion to L2
    crc          INTEGER NOT NULL   -- crc32 of the row's content, see row_crc()
) STRICT;
CREATE INDEX turns_touched ON turns(touched);
CREATE TABLE attr_vocab (bit INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE) STRICT;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
"""


def row_crc(time_: float, conversation: str, modality: str, digest: str, summary: str,
            attrs_json: str, sent: bytes, mem: bytes) -> int:
    head = "\x00".join((repr(float(time_)), conversation, modality, digest, summary, attrs_json))
    return zlib.crc32(mem, zlib.crc32(sent, zlib.crc32(head.encode("utf-8"))))


def _is_busy(err: sqlite3.Error) -> bool:
    msg = str(err).lower()
    return "locked" in msg or "busy" in msg


def _is_corruption(err: sqlite3.Error) -> bool:
    msg = str(err).lower()
    return "malformed" in msg or "not a database" in msg or "corrupt" in msg


class SQLTurnStore(MemoryTier):
    """What the SQL L3 tiers (SQLite here, PostgreSQL in :mod:`v22sdk.memory.postgres`) share.

    Both keep one ``turns`` table with the columns ``TURN_COLUMNS`` and a CRC per row; a subclass gives
    its parameter placeholder (``_P``), ``_query``, ``commit``, ``batched_remove`` and
    ``_refresh_vocab``, and gets the turn-level reads and writes below.
    """

    path: str
    _P = "?"

    def _query(self, sql: str, args=()) -> list[tuple]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _refresh_vocab(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def commit(self, turns: Sequence[Turn]) -> list[Turn]:  # pragma: no cover - abstract
        raise NotImplementedError

    def put(self, turn: Turn) -> None:
        self.commit([turn])

    def batched_put(self, turns: Sequence[Turn]) -> None:
        self.commit(turns)

    def remove(self, turn_id: int) -> bool:
        return self.batched_remove([turn_id])[0]

    def contains(self, turn_id: int) -> bool:
        return bool(self._query(f"SELECT 1 FROM turns WHERE id = {self._P}", (int(turn_id),)))

    def get(self, turn_id: int) -> Turn | None:
        rows = self._query(f"SELECT {TURN_COLUMNS} FROM turns WHERE id = {self._P}", (int(turn_id),))
        return self._turn(rows[0]) if rows else None

    def __len__(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM turns")[0][0])

    def max_id(self) -> int:
        return int(self._query("SELECT COALESCE(MAX(id), 0) FROM turns")[0][0])

    def recent(self, n: int, by: str = "touched") -> list[Turn]:
        """The ``n`` most recent turns by recency (``"touched"``) or by id, newest first."""
        col = {"touched": "touched", "id": "id"}[by]
        rows = self._query(f"SELECT {TURN_COLUMNS} FROM turns ORDER BY {col} DESC LIMIT {self._P}", (int(n),))
        self._refresh_vocab()
        return [self._turn(r) for r in rows]

    def recent_block(self, n: int, by: str = "touched") -> tuple:
        """The ``n`` most recent turns as arrays, OLDEST first, every row's checksum verified.

        Returns ``(ids (n,), sent (n, 256), mem (n, 384), masks (n, W), times (n,), touched (n,),
        text [(conversation, modality, digest, summary)] * n)``, the arguments of
        :meth:`RingTier.insert_block`. Builds no Turn objects: this is the restart path.
        """
        col = {"touched": "touched", "id": "id"}[by]
        rows = self._query(f"SELECT {TURN_COLUMNS} FROM turns ORDER BY {col} DESC LIMIT {self._P}", (int(n),))[::-1]
        self._refresh_vocab()
        words = self.vocab.words()
        sb, mb = 4 * SENT_DIM, 4 * MEM_DIM
        for (id_, when, conv, mod, digest, summary, attrs_json, _m, sent, mem, _t, crc) in rows:
            if len(sent) != sb or len(mem) != mb or crc != row_crc(
                    when, conv, mod, digest, summary, attrs_json, bytes(sent), bytes(mem)):
                raise MemoryStoreCorrupt(self.path, f"turn {id_} fails its checksum")
        k = len(rows)
        sent = np.frombuffer(b"".join(r[8] for r in rows), "<f4").astype(np.float32).reshape(k, SENT_DIM)
        mem = np.frombuffer(b"".join(r[9] for r in rows), "<f4").astype(np.float32).reshape(k, MEM_DIM)
        width = 8 * words  # mask blobs are trimmed on disk: pad each to full width, one join
        masks = np.frombuffer(b"".join(bytes(r[7][:width]).ljust(width, b"\0") for r in rows),
                              "<u8").astype(np.uint64).reshape(k, words)
        return (np.array([r[0] for r in rows], np.int64), sent, mem, masks,
                np.array([r[1] for r in rows], np.float64), np.array([r[10] for r in rows], np.int64),
                [(r[2], r[3], r[4], r[5]) for r in rows])

    def iter_blocks(self, chunk: int = 50_000, after: int = 0) -> Iterator[tuple]:
        """Every turn with id > ``after`` as arrays, in id order (keyset pages): ``(ids (n,) int64,
        unit sent_vecs (n, 256) float32, masks (n, W) uint64)``. What a candidate index is built
        from (v22sdk.memory.index); the vectors' lengths are checked, not the row checksums."""
        last = after
        while True:
            rows = self._query(f"SELECT id, sent_vec, attr_mask FROM turns WHERE id > {self._P} "
                               f"ORDER BY id LIMIT {self._P}", (last, chunk))
            if not rows:
                return
            last = rows[-1][0]
            self._refresh_vocab()
            words = self.vocab.words()
            try:
                vecs = np.frombuffer(b"".join(r[1] for r in rows), "<f4").reshape(len(rows), SENT_DIM)
            except ValueError as e:
                raise MemoryStoreCorrupt(self.path, "a sent_vec blob has the wrong length") from e
            width = 8 * words
            masks = np.frombuffer(b"".join(bytes(r[2][:width]).ljust(width, b"\0") for r in rows),
                                  "<u8").astype(np.uint64).reshape(len(rows), words)
            yield (np.fromiter((r[0] for r in rows), np.int64, len(rows)), unit_rows(vecs), masks)

    def iter_turns(self, chunk: int = 1000) -> Iterator[Turn]:
        """Every turn in id order (keyset pages: bounded memory)."""
        last = 0
        while True:
            rows = self._query(f"SELECT {TURN_COLUMNS} FROM turns WHERE id > {self._P} ORDER BY id LIMIT {self._P}",
                               (last, chunk))
            if not rows:
                return
            for r in rows:
                yield self._turn(r)
            last = rows[-1][0]

    def _turn(self, row: tuple) -> Turn:
        """A stored row as a Turn; a row failing its checksum raises MemoryStoreCorrupt."""
        (id_, when, conv, mod, digest, summary, attrs_json, _mask, sent, mem, touched, crc) = row
        sent, mem = bytes(sent), bytes(mem)  # PostgreSQL returns memoryview
        if len(sent) != 4 * SENT_DIM or len(mem) != 4 * MEM_DIM or crc != row_crc(
                when, conv, mod, digest, summary, attrs_json, sent, mem):
            raise MemoryStoreCorrupt(self.path, f"turn {id_} fails its checksum")
        try:
            attrs = frozenset(json.loads(attrs_json))
        except ValueError as e:
            raise MemoryStoreCorrupt(self.path, f"turn {id_} has unreadable attributes") from e
        return Turn(np.frombuffer(sent, "<f4").astype(np.float32), np.frombuffer(mem, "<f4").astype(np.float32),
                    attrs, id_, when, conv, mod, digest, summary, touched)


class SQLiteTier(SQLTurnStore):
    """Every turn on disk. Thread-safe (one connection behind a lock); many processes may share
    the file (WAL, ``busy_timeout`` plus a retry loop, so no lock error escapes).

    ``check``: ``"quick"`` runs ``PRAGMA quick_check`` on open (default), ``"none"`` skips it.
    ``synchronous``: ``"FULL"`` (default: durable against power loss) or ``"NORMAL"`` (durable
    against process crashes only).
    """

    level = "L3"

    def __init__(self, path: str | os.PathLike, *, check: str = "quick",
                 synchronous: str = "FULL", lock_timeout_s: float = 30.0):
        self.path = os.fspath(path)
        self.lock_timeout_s = lock_timeout_s
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self.vocab = AttrVocab()
        self._check_header()
        parent = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(parent, exist_ok=True)
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=lock_timeout_s)
        except (OSError, sqlite3.Error) as e:
            raise MemoryStoreError(f"memory store {self.path}: cannot open: {e}") from e
        self._conn = conn
        try:
            self._setup(check, synchronous)
        except sqlite3.DatabaseError as e:
            self.close()
            if _is_corruption(e):
                raise MemoryStoreCorrupt(self.path, str(e)) from e
            raise MemoryStoreError(f"memory store {self.path}: cannot open: {e}") from e
        except BaseException:
            self.close()
            raise

    # -- opening ---------------------------------------------------------------------------

    def _check_header(self) -> None:
        # A non-empty file that is not SQLite must not be silently reinitialised.
        try:
            with open(self.path, "rb") as f:
                head = f.read(16)
        except FileNotFoundError:
            return
        except OSError as e:
            raise MemoryStoreError(f"memory store {self.path}: cannot read: {e}") from e
        if head and head != SQLITE_HEADER:
            raise MemoryStoreCorrupt(self.path, "not an SQLite database (bad header)")

    def _setup(self, check: str, synchronous: str) -> None:
        c = self._conn
        c.execute(f"PRAGMA busy_timeout = {int(self.lock_timeout_s * 1000)}")
        # A turn is ~2.7 KB: 4 KiB pages would hold one each and waste a third of the file.
        # (Only takes effect on a new, empty file, before WAL mode is set.)
        c.execute(f"PRAGMA page_size = {PAGE_SIZE}")
        mode = self._retry(lambda: c.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        if str(mode).lower() != "wal":
            raise MemoryStoreError(f"memory store {self.path}: cannot enable WAL (got {mode})")
        if synchronous.upper() not in ("FULL", "NORMAL"):
            raise MemoryStoreError(f"synchronous must be FULL or NORMAL, not {synchronous!r}")
        c.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        if check == "quick":
            res = [r[0] for r in self._retry(lambda: c.execute("PRAGMA quick_check").fetchall())]
            if res != ["ok"]:
                raise MemoryStoreCorrupt(self.path, "quick_check: " + "; ".join(res[:3]))
        elif check != "none":
            raise MemoryStoreError(f"check must be 'quick' or 'none', not {check!r}")
        version = c.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            self._transaction(self._create_schema)
            version = c.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise MemoryStoreError(
                f"memory store {self.path} has schema version {version}; this v22sdk reads up to "
                f"{SCHEMA_VERSION}: upgrade v22sdk")
        if version != SCHEMA_VERSION:
            raise MemoryStoreCorrupt(self.path, f"unknown schema version {version}")
        self._load_vocab()

    def _create_schema(self, c: sqlite3.Connection) -> None:
        if c.execute("PRAGMA user_version").fetchone()[0] != 0:
            return  # another process created it while we waited for the lock
        tables = c.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
        if tables:
            raise MemoryStoreError(
                f"{self.path} is an SQLite database but not a v22sdk memory store "
                f"(tables: {', '.join(t[0] for t in tables[:5])})")
        # Statement by statement: executescript() would COMMIT the open transaction first.
        for stmt in (s.strip() for s in _SCHEMA.split(";")):
            if stmt:
                c.execute(stmt)
        c.execute("INSERT INTO meta VALUES ('created', ?)", (repr(time.time()),))
        c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _load_vocab(self) -> None:
        rows = self._conn.execute("SELECT bit, name FROM attr_vocab ORDER BY bit").fetchall()
        if [r[0] for r in rows] != list(range(len(rows))):
            raise MemoryStoreCorrupt(self.path, "attribute vocabulary has gaps")
        # In place: L1/L2 share this object.
        self.vocab.__init__([r[1] for r in rows])

    # -- transactions ------------------------------------------------------------------------

    def _retry(self, fn: Callable):
        """Run ``fn`` again while another connection holds a lock, up to ``lock_timeout_s``."""
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.002
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as e:
                if not _is_busy(e) or time.monotonic() > deadline:
                    raise
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 0.1)

    def _transaction(self, body: Callable[[sqlite3.Connection], object]):
        """``BEGIN IMMEDIATE; body; COMMIT`` with retry on lock; rolled back on any error."""
        c = self._require()

        def attempt():
            c.execute("BEGIN IMMEDIATE")
            try:
                out = body(c)
                c.execute("COMMIT")
                return out
            except BaseException:
                if c.in_transaction:
                    try:
                        c.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                raise

        with self._lock:
            return self._retry(attempt)

    def _require(self) -> sqlite3.Connection:
        if self._conn is None:
            raise MemoryStoreError(f"memory store {self.path} is closed")
        return self._conn

    def _fail(self, what: str, err: sqlite3.Error) -> MemoryStoreError:
        if _is_corruption(err):
            return MemoryStoreCorrupt(self.path, f"{what}: {err}")
        return MemoryStoreError(f"memory store {self.path}: {what} failed, nothing was stored: {err}")

    # -- writes ------------------------------------------------------------------------------

    def commit(self, turns: Sequence[Turn]) -> list[Turn]:
        """Store ``turns`` in ONE transaction; return them with ids, times and recency assigned.

        Returns only after the commit is durable. On any failure nothing of the batch is stored
        and :class:`MemoryStoreError` is raised. Turns with ``time == 0`` get the current time.
        """
        if not turns:
            return []
        now = time.time()

        # Names this process knows keep their bits (bits are never renumbered), so the vocabulary
        # on disk needs reading only when a turn brings a name this process has not seen.
        unknown = any(a not in self.vocab.bits for t in turns for a in t.attrs)

        def body(c: sqlite3.Connection) -> list[Turn]:
            if unknown:
                self._sync_vocab(c, turns)
            out = []
            mask_int = self.vocab.mask_int
            for t in turns:
                when = t.time or now
                attrs_json = json.dumps(sorted(t.attrs), ensure_ascii=False)
                sent, mem = np.asarray(t.sent_vec, "<f4").tobytes(), np.asarray(t.mem_emb, "<f4").tobytes()
                crc = row_crc(when, t.conversation, t.modality, t.digest, t.summary, attrs_json,
                              sent, mem)
                # recency = max + 1, computed by the INSERT itself (one statement per turn, as a
                # bare INSERT; the transaction's write lock makes it race-free)
                (id_, touched), = c.execute(
                    "INSERT INTO turns (time, conversation, modality, digest, summary, attrs, "
                    "attr_mask, sent_vec, mem_emb, touched, crc) VALUES (?,?,?,?,?,?,?,?,?,"
                    "(SELECT COALESCE(MAX(touched), 0) + 1 FROM turns),?) RETURNING id, touched",
                    (when, t.conversation, t.modality, t.digest, t.summary, attrs_json,
                     int_to_blob(mask_int(t.attrs)), sent, mem, crc)).fetchall()
                out.append(t.with_id(id_, when, touched))
            return out

        try:
            return self._transaction(body)
        except sqlite3.Error as e:
            self._load_vocab_quietly()
            raise self._fail(f"writing {len(turns)} turn(s)", e) from e

    def _sync_vocab(self, c: sqlite3.Connection, turns: Sequence[Turn]) -> None:
        """Inside the write transaction: adopt bits other processes assigned, add new names."""
        known = c.execute("SELECT COUNT(*) FROM attr_vocab").fetchone()[0]
        if known != len(self.vocab):
            for bit, name in c.execute("SELECT bit, name FROM attr_vocab WHERE bit >= ? ORDER BY bit",
                                       (len(self.vocab),)):
                if self.vocab.add(name) != bit:
                    raise MemoryStoreCorrupt(self.path, "attribute vocabulary out of order")
        new = sorted({a for t in turns for a in t.attrs} - self.vocab.bits.keys())
        for name in new:
            c.execute("INSERT INTO attr_vocab VALUES (?, ?)", (self.vocab.add(name), name))

    def _load_vocab_quietly(self) -> None:
        # After a rolled-back write, names added in memory may not exist on disk: reload.
        try:
            with self._lock:
                self._load_vocab()
        except (sqlite3.Error, MemoryStoreError):
            pass

    def batched_remove(self, turn_ids) -> list[bool]:
        ids = [int(i) for i in turn_ids]
        try:
            return self._transaction(
                lambda c: [c.execute("DELETE FROM turns WHERE id = ?", (i,)).rowcount > 0 for i in ids])
        except sqlite3.Error as e:
            raise self._fail("removing turns", e) from e

    def touch(self, turn_ids: Sequence[int]) -> list[int]:
        """Mark turns as just used (promotion into L2); returns their new recency values."""
        def body(c):
            top = c.execute("SELECT COALESCE(MAX(touched), 0) FROM turns").fetchone()[0]
            out = []
            for i in turn_ids:
                top += 1
                c.execute("UPDATE turns SET touched = ? WHERE id = ?", (top, int(i)))
                out.append(top)
            return out
        try:
            return self._transaction(body)
        except sqlite3.Error as e:
            raise self._fail("recording a promotion", e) from e

    # -- reads -------------------------------------------------------------------------------

    def _query(self, sql: str, args=()) -> list[tuple]:
        c = self._require()
        try:
            with self._lock:
                return self._retry(lambda: c.execute(sql, args).fetchall())
        except sqlite3.Error as e:
            raise self._fail("reading", e) from e

    def batched_get(self, turn_ids) -> list[Turn | None]:
        ids = [int(i) for i in turn_ids]
        found: dict[int, Turn] = {}
        for s in range(0, len(ids), 500):
            part = ids[s:s + 500]
            rows = self._query(f"SELECT {TURN_COLUMNS} FROM turns WHERE id IN ({','.join('?' * len(part))})",
                               part)
            found.update((r[0], self._turn(r)) for r in rows)
        return [found.get(i) for i in ids]

    def _refresh_vocab(self) -> None:
        n = self._query("SELECT COUNT(*) FROM attr_vocab")[0][0]
        if n != len(self.vocab):
            with self._lock:
                self._load_vocab()

    def search(self, queries, qmasks, qcounts, k: int = 1, exclude: np.ndarray | None = None,
               chunk: int = 8192):
        """Exact top-k over every row not in ``exclude`` (sorted int64 ids): a chunked scan."""
        self._refresh_vocab()
        words = max(qmasks.shape[1], self.vocab.words())
        qmasks = np.pad(qmasks, ((0, 0), (0, words - qmasks.shape[1])))
        b = len(queries)
        best_ids = np.full((b, k), -1, np.int64)
        best_sc = np.full((b, k), -np.inf)
        last = 0
        while True:
            rows = self._query("SELECT id, sent_vec, attr_mask FROM turns WHERE id > ? ORDER BY id "
                               "LIMIT ?", (last, chunk))
            if not rows:
                break
            last = rows[-1][0]
            ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
            keep = np.ones(len(rows), bool) if exclude is None else ~np.isin(ids, exclude)
            if not keep.any():
                continue
            sel = np.flatnonzero(keep)
            try:
                vecs = np.frombuffer(b"".join(rows[i][1] for i in sel), "<f4").reshape(len(sel), SENT_DIM)
            except ValueError as e:
                raise MemoryStoreCorrupt(self.path, "a sent_vec blob has the wrong length") from e
            units = unit_rows(vecs)
            masks = np.asfortranarray(np.stack([blob_to_mask(rows[i][2], words) for i in sel]))
            counts = np.bitwise_count(masks).sum(axis=1, dtype=np.int32)
            ids = ids[sel]
            for q in range(b):
                cid, csc = search_block(ids, units, masks, counts, queries[q], qmasks[q],
                                        int(qcounts[q]), k)
                best_ids[q], best_sc[q] = merge_topk(best_ids[q], best_sc[q], cid, csc, k)
        return best_ids, best_sc

    # -- maintenance -------------------------------------------------------------------------

    def integrity_check(self) -> list[str]:
        return [r[0] for r in self._query("PRAGMA integrity_check")]

    def stats(self) -> dict:
        n, first, last, convs = self._query(
            "SELECT COUNT(*), MIN(time), MAX(time), COUNT(DISTINCT conversation) FROM turns")[0]
        size = sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))
        return {"path": self.path, "turns": n, "first_time": first, "last_time": last,
                "conversations": convs, "attribute_names": len(self.vocab), "bytes_on_disk": size,
                "schema_version": SCHEMA_VERSION}

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None


def _page_layout(path: str) -> tuple[int, int, int]:
    """``(page_size, pages_in_header, file_size)`` of an SQLite file; InputError when ``path`` is
    not one (empty, another format), MemoryStoreError when its header is damaged beyond use."""
    with open(path, "rb") as f:
        head = f.read(100)
        size = os.fstat(f.fileno()).st_size
    if not head:
        raise InputError(path, "the file is empty: not a memory store, nothing to salvage")
    if not head.startswith(SQLITE_HEADER):
        raise InputError(path, "not an SQLite database (bad header): not a memory store, "
                               "nothing to salvage")
    if len(head) < 100:
        raise MemoryStoreError(f"{path}: only {len(head)} bytes, the SQLite header is cut short; "
                               "nothing can be salvaged")
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    if page < 512 or page & (page - 1):
        raise MemoryStoreError(f"{path}: the SQLite header gives an invalid page size {page}; "
                               "nothing can be salvaged")
    # The header's page count is only valid when written by the same change as its counter.
    pages = int.from_bytes(head[28:32], "big") if head[24:28] == head[92:96] else 0
    return page, pages, size


def salvage(src: str | os.PathLike, dst: str | os.PathLike) -> dict:
    """Copy every readable, checksum-valid turn of ``src`` into a NEW store ``dst``.

    ``src`` is never modified, nor is anything written next to it: it (with its WAL, if any) is
    copied to a temporary folder next to ``dst``, so salvage needs free space for one copy. A file
    cut short (a truncated copy, a full disk) is padded there with zero bytes to its header's page
    count, so SQLite reads every page that survived (it refuses a file that is not a whole number
    of pages and would recover nothing). Rows are read in id ranges; a range that SQLite cannot read is retried one id at a
    time, so one damaged page costs only its own rows. ``dst`` is written under a temporary name
    and appears only when complete. Ids are kept.

    Returns ``{"recovered": n, "skipped_ids": [...], "unreadable_ranges": m, "padded_bytes": p}``:
    ``skipped_ids`` are ids known to have been stored (listed by the ``turns_touched`` index, or
    at most the highest id ever assigned when the index is unreadable) whose rows could not be read
    or fail their checksum. A file that is not an SQLite v22sdk store raises InputError; one whose
    schema cannot be read, MemoryStoreError.
    """
    src, dst = os.fspath(src), os.fspath(dst)
    if os.path.exists(dst):
        raise MemoryStoreError(f"salvage target {dst} already exists; choose a new file")
    if not os.path.exists(src):
        raise MemoryStoreError(f"salvage source {src} does not exist")
    folder = os.path.dirname(os.path.abspath(dst))
    try:
        page, pages, size = _page_layout(src)
        os.makedirs(folder, exist_ok=True)
        work = tempfile.mkdtemp(dir=folder, prefix=".salvage-")
    except OSError as e:
        raise MemoryStoreError(f"salvage of {src} into {dst}: {e.strerror or e}") from e
    try:
        want = max(pages * page, -(-size // page) * page)
        read_from = os.path.join(work, "source.db")
        try:
            shutil.copyfile(src, read_from)
            if os.path.exists(src + "-wal"):  # a hot WAL holds committed turns
                shutil.copyfile(src + "-wal", read_from + "-wal")
            if want != size:  # cut short: pad to whole pages (sparse, costs no disk)
                os.truncate(read_from, want)
        except OSError as e:
            raise MemoryStoreError(f"salvage of {src}: cannot copy it next to {dst}: "
                                   f"{e.strerror or e}") from e
        recovered, skipped, bad_ranges = _read_salvageable(src, read_from)
        tmp_dst = os.path.join(work, "salvaged.db")
        out = SQLiteTier(tmp_dst)
        try:
            out._transaction(lambda c: _insert_with_ids(out, c, recovered))
        except sqlite3.Error as e:
            raise MemoryStoreError(f"salvage into {dst} failed: {e}") from e
        finally:
            out.close()
        try:
            os.link(tmp_dst, dst)  # never replaces a file that appeared meanwhile
        except FileExistsError:
            raise MemoryStoreError(f"salvage target {dst} already exists; choose a new file") from None
        except OSError:
            os.replace(tmp_dst, dst)  # a file system without hard links
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"recovered": len(recovered), "skipped_ids": skipped, "unreadable_ranges": bad_ranges,
            "padded_bytes": want - size}


def _read_salvageable(src: str, path: str) -> tuple[list[Turn], list[int], int]:
    """The readable turns of the SQLite file ``path`` (the source ``src``, or its padded copy),
    the ids known to be stored but unreadable, and the number of id ranges that failed."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as e:
        raise MemoryStoreError(f"cannot open {src} for salvage: {e}") from e
    reader = SQLiteTier.__new__(SQLiteTier)  # reuse row decoding without the checks of open()
    reader.path, reader._conn, reader._lock = src, conn, threading.RLock()
    reader.lock_timeout_s = 5.0

    def one(sql: str, args=()):
        try:
            return conn.execute(sql, args).fetchall()
        except sqlite3.Error:
            return None

    def rows_in(lo: int, hi: int) -> list[tuple]:
        return conn.execute(f"SELECT {TURN_COLUMNS} FROM turns WHERE id >= ? AND id < ? ORDER BY id",
                            (lo, hi)).fetchall()

    try:
        tables = one("SELECT name FROM sqlite_master WHERE type = 'table'")
        if tables is None:
            raise MemoryStoreError(f"{src}: the SQLite schema is unreadable; nothing can be salvaged")
        if "turns" not in {t[0] for t in tables}:
            raise InputError(src, "an SQLite database without a 'turns' table: not a v22sdk "
                                  "memory store, nothing to salvage")
        seq = one("SELECT seq FROM sqlite_sequence WHERE name = 'turns'")
        top = int(seq[0][0]) if seq else 0
        # The recency index lists every stored id on pages of its own: when it reads whole,
        # it tells exactly which ids are lost (gaps left by removed turns are not).
        listed = one("SELECT id FROM turns INDEXED BY turns_touched WHERE touched > -1")
        known = {int(r[0]) for r in listed} if listed is not None else None
        if known:
            top = max(top, max(known))
        recovered: list[Turn] = []
        failed: list[int] = []
        bad_rows: list[int] = []
        bad_ranges = 0
        lo, step, quiet = 1, 256, 0
        # Past the highest known id keep looking for readable rows (the counter itself may be
        # lost) until 16 ranges in a row hold none; failures there are not counted as turns.
        while lo <= top or quiet < 16:
            hi = lo + step
            try:
                got = rows_in(lo, hi)
            except sqlite3.Error:
                bad_ranges += 1
                got = []
                for i in range(lo, hi):
                    try:
                        got += rows_in(i, i + 1)
                    except sqlite3.Error:
                        failed.append(i)
            for r in got:
                try:
                    recovered.append(reader._turn(r))
                except (MemoryStoreCorrupt, InputError, TypeError, ValueError):
                    bad_rows.append(int(r[0]))
            if lo > top:
                quiet = 0 if got else quiet + 1
                if got:
                    top = max(top, int(got[-1][0]))
            lo = hi
    finally:
        conn.close()
    if known is not None:
        lost = known - {t.id for t in recovered}
    else:
        lost = {i for i in failed if i <= top} | set(bad_rows)
    return recovered, sorted(lost), bad_ranges


def _insert_with_ids(tier: SQLiteTier, c: sqlite3.Connection, turns: Sequence[Turn]) -> None:
    """Insert turns keeping their ids, times and recency (salvage and import-with-ids)."""
    tier._sync_vocab(c, turns)
    words = tier.vocab.words()
    for t in turns:
        attrs_json = json.dumps(sorted(t.attrs), ensure_ascii=False)
        sent, mem = t.sent_vec.astype("<f4").tobytes(), t.mem_emb.astype("<f4").tobytes()
        c.execute(f"INSERT INTO turns ({TURN_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                  (t.id, t.time, t.conversation, t.modality, t.digest, t.summary, attrs_json,
                   mask_to_blob(tier.vocab.mask(t.attrs, words)), sent, mem, t.touched,
                   row_crc(t.time, t.conversation, t.modality, t.digest, t.summary, attrs_json,
                           sent, mem)))
