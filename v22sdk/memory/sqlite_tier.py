"""L3: every turn, durable, in one SQLite file (stdlib ``sqlite3``).

Durability promise: a write returns (is *acknowledged*) only after its transaction has committed
in WAL mode with ``synchronous=FULL``, i.e. after SQLite has fsynced the WAL. A write that fails
(disk full, I/O error, a lock held too long) raises :class:`MemoryStoreError` and leaves nothing
behind. Every row carries a CRC32 of its content, checked whenever the row is loaded, so damage
inside a row's bytes (which SQLite's structural ``quick_check`` cannot see) is also reported as
:class:`MemoryStoreCorrupt` naming the file. A damaged file is never opened as empty; the
readable turns can be copied into a new file with :func:`v22sdk.memory.recovery.salvage`.

File format (``PRAGMA user_version = 1``; see ``docs/memory.md``): table ``turns`` (one row per
turn, vectors as little-endian float32 BLOBs), table ``attr_vocab`` (bit number of each slot name
used in the attribute masks) and table ``meta``.
"""

from __future__ import annotations

import abc
import json
import json.encoder
import os
import random
import sqlite3
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from v22sdk.errors import InputError, MemoryStoreCorrupt, MemoryStoreError
from v22sdk.memory.scoring import AttrVocab, blob_to_mask, int_to_blob, merge_topk, search_block, unit_rows
from v22sdk.memory.sqlite_checks import ABSENT_KEY, AckMark, inspect_before_open, parse_created
from v22sdk.memory.tier import MemoryTier
from v22sdk.memory.turn import MEM_DIM, SENT_DIM, Turn

SCHEMA_VERSION = 1
PAGE_SIZE = 8192
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


def row_crc(
    time_: float, conversation: str, modality: str, digest: str, summary: str, attrs_json: str, sent: bytes, mem: bytes
) -> int:
    head = "\x00".join((repr(float(time_)), conversation, modality, digest, summary, attrs_json))
    return zlib.crc32(mem, zlib.crc32(sent, zlib.crc32(head.encode("utf-8"))))


_INSERT = (
    "INSERT INTO turns (time, conversation, modality, digest, summary, attrs, attr_mask, sent_vec, "
    "mem_emb, touched, crc) VALUES (?,?,?,?,?,?,?,?,?,(SELECT COALESCE(MAX(touched), 0) + 1 FROM turns),?) "
    "RETURNING id, touched"
)
_quote = json.encoder.encode_basestring  # json's own string quoting (ensure_ascii=False)


def _attrs_json(names: list[str]) -> str:
    """``json.dumps(names, ensure_ascii=False)`` for a list of strings, the same text, without
    building an encoder per call (the per-turn write path)."""
    return "[" + ", ".join(map(_quote, names)) + "]"


_LITTLE = sys.byteorder == "little"


def _blob(vec: np.ndarray):
    """A vector's column value: little-endian float32 bytes. A float32 C-contiguous array on a
    little-endian machine already is them, and sqlite3 and zlib read it through the buffer protocol
    (no copy); anything else is converted."""
    if _LITTLE and vec.dtype == np.float32 and vec.flags.c_contiguous:
        return vec
    return np.asarray(vec, "<f4").tobytes()


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
    #: the slot names' bits in the attribute masks (shared in place with the L1 and L2 tiers)
    vocab: AttrVocab
    _P = "?"

    def _query(self, sql: str, args=()) -> list[tuple]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _refresh_vocab(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def commit(self, turns: Sequence[Turn]) -> list[Turn]:  # pragma: no cover - abstract
        raise NotImplementedError

    def commit_one(
        self, sent: np.ndarray, mem: np.ndarray, attrs: frozenset[str], text: tuple, mask: int | None = None
    ) -> tuple[int, float, int]:
        """``commit`` of one new turn given as its fields, checked already (what
        :meth:`Turn.from_rows` takes: float32 rows (256,) and (384,) with finite values, owned by
        the caller, who reuses them once this returns, so a store copies what it keeps; ``text`` =
        (conversation, modality, digest, summary)); returns the ``(id, time, touched)`` assigned.
        ``mask``: ``vocab.mask_int(attrs)`` when every name is known, else None. The per-turn
        write path of :class:`~v22sdk.memory.tiered.TieredMemory`; a store may override it to skip
        building the Turn."""
        t = self.commit([Turn.from_rows(sent, mem, attrs, *text)])[0]
        return t.id, t.time, t.touched

    def touch(self, turn_ids: Sequence[int]) -> list[int]:  # pragma: no cover - abstract
        """Mark turns as just used (promotion into L2); returns their new recency values."""
        raise NotImplementedError

    def stats(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    @abc.abstractmethod
    def search(
        self,
        queries: np.ndarray,
        qmasks: np.ndarray,
        qcounts: np.ndarray,
        k: int = 1,
        exclude: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`MemoryTier.search` over every row whose id is not in ``exclude`` (sorted int64
        ids: the turns a cache tier above already holds)."""

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
        for id_, when, conv, mod, digest, summary, attrs_json, _m, sent, mem, _t, crc in rows:
            if (
                len(sent) != sb
                or len(mem) != mb
                or crc != row_crc(when, conv, mod, digest, summary, attrs_json, bytes(sent), bytes(mem))
            ):
                raise MemoryStoreCorrupt(self.path, f"turn {id_} fails its checksum")
        k = len(rows)
        sent = np.frombuffer(b"".join(r[8] for r in rows), "<f4").astype(np.float32).reshape(k, SENT_DIM)
        mem = np.frombuffer(b"".join(r[9] for r in rows), "<f4").astype(np.float32).reshape(k, MEM_DIM)
        width = 8 * words  # mask blobs are trimmed on disk: pad each to full width, one join
        masks = (
            np.frombuffer(b"".join(bytes(r[7][:width]).ljust(width, b"\0") for r in rows), "<u8")
            .astype(np.uint64)
            .reshape(k, words)
        )
        return (
            np.array([r[0] for r in rows], np.int64),
            sent,
            mem,
            masks,
            np.array([r[1] for r in rows], np.float64),
            np.array([r[10] for r in rows], np.int64),
            [(r[2], r[3], r[4], r[5]) for r in rows],
        )

    def iter_blocks(self, chunk: int = 50_000, after: int = 0) -> Iterator[tuple]:
        """Every turn with id > ``after`` as arrays, in id order (keyset pages): ``(ids (n,) int64,
        unit sent_vecs (n, 256) float32, masks (n, W) uint64)``. What a candidate index is built
        from (v22sdk.memory.index); the vectors' lengths are checked, not the row checksums."""
        last = after
        while True:
            rows = self._query(
                f"SELECT id, sent_vec, attr_mask FROM turns WHERE id > {self._P} ORDER BY id LIMIT {self._P}",
                (last, chunk),
            )
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
            masks = (
                np.frombuffer(b"".join(bytes(r[2][:width]).ljust(width, b"\0") for r in rows), "<u8")
                .astype(np.uint64)
                .reshape(len(rows), words)
            )
            yield (np.fromiter((r[0] for r in rows), np.int64, len(rows)), unit_rows(vecs), masks)

    def iter_turns(self, chunk: int = 1000) -> Iterator[Turn]:
        """Every turn in id order (keyset pages: bounded memory)."""
        last = 0
        while True:
            rows = self._query(
                f"SELECT {TURN_COLUMNS} FROM turns WHERE id > {self._P} ORDER BY id LIMIT {self._P}", (last, chunk)
            )
            if not rows:
                return
            for r in rows:
                yield self._turn(r)
            last = rows[-1][0]

    def _turn(self, row: tuple) -> Turn:
        """A stored row as a Turn; a row failing its checksum raises MemoryStoreCorrupt."""
        (id_, when, conv, mod, digest, summary, attrs_json, _mask, sent, mem, touched, crc) = row
        sent, mem = bytes(sent), bytes(mem)  # PostgreSQL returns memoryview
        if (
            len(sent) != 4 * SENT_DIM
            or len(mem) != 4 * MEM_DIM
            or crc != row_crc(when, conv, mod, digest, summary, attrs_json, sent, mem)
        ):
            raise MemoryStoreCorrupt(self.path, f"turn {id_} fails its checksum")
        try:
            attrs = frozenset(json.loads(attrs_json))
        except ValueError as e:
            raise MemoryStoreCorrupt(self.path, f"turn {id_} has unreadable attributes") from e
        return Turn(
            np.frombuffer(sent, "<f4").astype(np.float32),
            np.frombuffer(mem, "<f4").astype(np.float32),
            attrs,
            id_,
            when,
            conv,
            mod,
            digest,
            summary,
            touched,
        )


class SQLiteTier(SQLTurnStore):
    """Every turn on disk. Thread-safe (one connection behind a lock); many processes may share
    the file (WAL, ``busy_timeout`` plus a retry loop, so no lock error escapes).

    ``check``: ``"quick"`` runs ``PRAGMA quick_check`` on open (default), ``"none"`` skips it.
    ``synchronous``: ``"FULL"`` (default: durable against power loss) or ``"NORMAL"`` (durable
    against process crashes only).
    """

    level = "L3"

    def __init__(
        self, path: str | os.PathLike, *, check: str = "quick", synchronous: str = "FULL", lock_timeout_s: float = 30.0
    ):
        self.path = os.fspath(path)
        self.lock_timeout_s = lock_timeout_s
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._ack: AckMark | None = None
        self.vocab = AttrVocab()
        self._check_header()
        parent = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(parent, exist_ok=True)
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=lock_timeout_s)
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
        # Read-only, before SQLite touches the file: a non-empty file that is not SQLite must
        # not be reinitialised, and another program's SQLite database must not be switched to
        # WAL mode (nor its WAL checkpointed) only to be refused afterwards.
        try:
            facts = inspect_before_open(self.path)
        except InputError as e:
            raise MemoryStoreCorrupt(self.path, e.problem) from None
        except OSError as e:
            raise MemoryStoreError(f"memory store {self.path}: cannot read: {e.strerror or e}") from e
        if facts is None:
            return
        if facts.user_version > SCHEMA_VERSION:
            raise MemoryStoreError(
                f"memory store {self.path} has schema version {facts.user_version}; this v22sdk reads up to "
                f"{SCHEMA_VERSION}: upgrade v22sdk"
            )
        if facts.user_version == SCHEMA_VERSION and not facts.tables:
            raise MemoryStoreCorrupt(self.path, "its schema page is unreadable")
        if facts.tables and "turns" not in facts.tables:
            raise MemoryStoreError(
                f"{self.path} is an SQLite database but not a v22sdk memory store "
                f"(tables: {', '.join(facts.tables[:5])}); it was left unmodified"
            )

    def _setup(self, check: str, synchronous: str) -> None:
        c = self._require()
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
                f"{SCHEMA_VERSION}: upgrade v22sdk"
            )
        if version != SCHEMA_VERSION:
            raise MemoryStoreCorrupt(self.path, f"unknown schema version {version}")
        self._load_vocab()
        self._check_acknowledged()

    def _check_acknowledged(self) -> None:
        """MemoryStoreCorrupt when turns acknowledged earlier are missing (see AckMark)."""
        c = self._require()
        created = c.execute("SELECT value FROM meta WHERE key = 'created'").fetchone()
        ack = self._ack = AckMark(self.path, parse_created(created[0]) if created else None)
        row = c.execute("SELECT seq FROM sqlite_sequence WHERE name = 'turns'").fetchone()
        seq = int(row[0]) if row else 0
        mark = ack.read()
        if mark > seq:
            lost = f"id {mark}" if mark == seq + 1 else f"ids {seq + 1}-{mark}"
            raise MemoryStoreCorrupt(
                self.path,
                f"{mark - seq} acknowledged turn(s) are missing ({lost}): the store's -wal "
                "file was deleted or lost after a crash, or an older copy of the file was restored",
            )

    def _create_schema(self, c: sqlite3.Connection) -> None:
        if c.execute("PRAGMA user_version").fetchone()[0] != 0:
            return  # another process created it while we waited for the lock
        tables = c.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
        if tables:
            raise MemoryStoreError(
                f"{self.path} is an SQLite database but not a v22sdk memory store "
                f"(tables: {', '.join(t[0] for t in tables[:5])})"
            )
        # Statement by statement: executescript() would COMMIT the open transaction first.
        for stmt in (s.strip() for s in _SCHEMA.split(";")):
            if stmt:
                c.execute(stmt)
        c.execute("INSERT INTO meta VALUES ('created', ?)", (repr(time.time()),))
        c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _load_vocab(self) -> None:
        rows = self._require().execute("SELECT bit, name FROM attr_vocab ORDER BY bit").fetchall()
        if [r[0] for r in rows] != list(range(len(rows))):
            raise MemoryStoreCorrupt(self.path, "attribute vocabulary has gaps")
        # In place: L1/L2 share this object.
        self.vocab.__init__([r[1] for r in rows])  # type: ignore[misc]  # in place

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
        c = self._require()
        now = time.time()
        # Names this process knows keep their bits (bits are never renumbered), so the vocabulary
        # on disk needs reading only when a turn brings a name this process has not seen.
        bits = self.vocab.bits.keys()
        unknown = not all(bits >= t.attrs for t in turns)
        # Each row's values but its mask (a new name's bit is assigned inside the transaction),
        # prepared before the write lock is taken.
        rows = []
        for t in turns:
            when = t.time or now
            attrs_json = _attrs_json(sorted(t.attrs))
            sent, mem = _blob(t.sent_vec), _blob(t.mem_emb)
            rows.append(
                [
                    when,
                    t.conversation,
                    t.modality,
                    t.digest,
                    t.summary,
                    attrs_json,
                    None,
                    sent,
                    mem,
                    row_crc(when, t.conversation, t.modality, t.digest, t.summary, attrs_json, sent, mem),
                ]
            )
        try:
            if len(rows) == 1 and not unknown and not c.in_transaction:
                rows[0][6] = int_to_blob(self.vocab.mask_int(turns[0].attrs))
                id_, touched = self._insert_alone(c, rows[0])
                stored = [turns[0].with_id(id_, rows[0][0], touched)]
            else:
                assigned = self._transaction(lambda c: self._insert_rows(c, turns, rows, unknown))
                stored = [t.with_id(id_, r[0], touched) for t, r, ((id_, touched),) in zip(turns, rows, assigned)]
        except sqlite3.Error as e:
            self._load_vocab_quietly()
            raise self._fail(f"writing {len(turns)} turn(s)", e) from e
        if self._ack is not None:
            self._ack.advance(stored[-1].id)
        return stored

    def _insert_alone(self, c: sqlite3.Connection, row) -> tuple[int, int]:
        """The per-turn write: one INSERT in autocommit mode is its own transaction (what BEGIN
        IMMEDIATE + INSERT + COMMIT do, in one statement); it has committed, the WAL fsynced
        (synchronous=FULL), when fetchall() has run the statement to its end. Returns the row's
        (id, touched); sqlite3.Error on failure (nothing stored)."""
        with self._lock:
            try:  # the first attempt without the retry loop's frames: the common case
                ((id_, touched),) = c.execute(_INSERT, row).fetchall()
            except sqlite3.OperationalError as e:
                id_, touched = self._insert_after(e, c, row)
        return id_, touched

    def _insert_after(self, err: sqlite3.OperationalError, c: sqlite3.Connection, row) -> tuple[int, int]:
        """The INSERT of :meth:`_insert_alone` again, after its first attempt failed with ``err``:
        retried while another connection holds the lock; any other error is raised."""
        if not _is_busy(err):
            raise err
        ((id_, touched),) = self._retry(lambda: c.execute(_INSERT, row).fetchall())
        return id_, touched

    def commit_one(
        self, sent: np.ndarray, mem: np.ndarray, attrs: frozenset[str], text: tuple, mask: int | None = None
    ) -> tuple[int, float, int]:
        """:meth:`SQLTurnStore.commit_one` without a Turn: the row's values straight from the
        fields, one autocommit INSERT (as :meth:`commit` of one turn whose names are known)."""
        c = self._conn
        # closed (the general path says so), or a new name (the transaction that assigns its bit)
        if c is None or mask is None or c.in_transaction:
            return super().commit_one(sent, mem, attrs, text, mask)
        when = time.time()
        conv, mod, digest, summary = text
        attrs_json = _attrs_json(sorted(attrs))
        sb, mb = _blob(sent), _blob(mem)
        row = (
            when,
            conv,
            mod,
            digest,
            summary,
            attrs_json,
            int_to_blob(mask),
            sb,
            mb,
            row_crc(when, conv, mod, digest, summary, attrs_json, sb, mb),
        )
        try:  # _insert_alone, inline: every call on the per-turn write is paid cold, after an fsync
            with self._lock:
                try:
                    ((id_, touched),) = c.execute(_INSERT, row).fetchall()
                except sqlite3.OperationalError as e:
                    id_, touched = self._insert_after(e, c, row)
        except sqlite3.Error as e:
            self._load_vocab_quietly()
            raise self._fail("writing 1 turn(s)", e) from e
        if self._ack is not None:
            self._ack.advance(id_)
        return id_, when, touched

    def _insert_rows(
        self, c: sqlite3.Connection, turns: Sequence[Turn], rows: list[list], unknown: bool
    ) -> list[list[tuple]]:
        """Inside the write transaction: the masks, then one INSERT per turn (recency = max + 1,
        computed by the INSERT itself; the write lock makes it race-free). Returns each INSERT's
        ``[(id, touched)]``."""
        if unknown:
            self._sync_vocab(c, turns)
        mask_int = self.vocab.mask_int
        out = []
        for t, row in zip(turns, rows):
            row[6] = int_to_blob(mask_int(t.attrs))
            out.append(c.execute(_INSERT, row).fetchall())
        return out

    def _sync_vocab(self, c: sqlite3.Connection, turns: Sequence[Turn]) -> None:
        """Inside the write transaction: adopt bits other processes assigned, add new names."""
        known = c.execute("SELECT COUNT(*) FROM attr_vocab").fetchone()[0]
        if known != len(self.vocab):
            for bit, name in c.execute(
                "SELECT bit, name FROM attr_vocab WHERE bit >= ? ORDER BY bit", (len(self.vocab),)
            ):
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

        def body(c: sqlite3.Connection) -> list[bool]:
            done = [c.execute("DELETE FROM turns WHERE id = ?", (i,)).rowcount > 0 for i in ids]
            if any(done):  # so that salvage can tell a removed turn from a lost one
                c.execute(
                    "INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                    "value = CAST(CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER) AS TEXT)",
                    (ABSENT_KEY, str(sum(done))),
                )
            return done

        try:
            return self._transaction(body)
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
            part = ids[s : s + 500]
            rows = self._query(f"SELECT {TURN_COLUMNS} FROM turns WHERE id IN ({','.join('?' * len(part))})", part)
            found.update((r[0], self._turn(r)) for r in rows)
        return [found.get(i) for i in ids]

    def _refresh_vocab(self) -> None:
        n = self._query("SELECT COUNT(*) FROM attr_vocab")[0][0]
        if n != len(self.vocab):
            with self._lock:
                self._load_vocab()

    def search(self, queries, qmasks, qcounts, k: int = 1, exclude: np.ndarray | None = None, chunk: int = 8192):
        """Exact top-k over every row not in ``exclude`` (sorted int64 ids): a chunked scan."""
        self._refresh_vocab()
        words = max(qmasks.shape[1], self.vocab.words())
        qmasks = np.pad(qmasks, ((0, 0), (0, words - qmasks.shape[1])))
        b = len(queries)
        best_ids = np.full((b, k), -1, np.int64)
        best_sc = np.full((b, k), -np.inf)
        last = 0
        while True:
            rows = self._query(
                "SELECT id, sent_vec, attr_mask FROM turns WHERE id > ? ORDER BY id LIMIT ?", (last, chunk)
            )
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
                cid, csc = search_block(ids, units, masks, counts, queries[q], qmasks[q], int(qcounts[q]), k)
                best_ids[q], best_sc[q] = merge_topk(best_ids[q], best_sc[q], cid, csc, k)
        return best_ids, best_sc

    # -- maintenance -------------------------------------------------------------------------

    def integrity_check(self) -> list[str]:
        return [r[0] for r in self._query("PRAGMA integrity_check")]

    def stats(self) -> dict:
        n, first, last, convs = self._query(
            "SELECT COUNT(*), MIN(time), MAX(time), COUNT(DISTINCT conversation) FROM turns"
        )[0]
        size = sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))
        return {
            "path": self.path,
            "turns": n,
            "first_time": first,
            "last_time": last,
            "conversations": convs,
            "attribute_names": len(self.vocab),
            "bytes_on_disk": size,
            "schema_version": SCHEMA_VERSION,
        }

    def close(self) -> None:
        with self._lock:
            if self._ack is not None:
                self._ack.close()
                self._ack = None
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None
