"""L3 on PostgreSQL: one memory shared by many engine workers (backend ``postgres``).

:class:`PostgresTier` answers the same tier interface as :class:`~v22sdk.memory.sqlite_tier.SQLiteTier`
(``contains/get/put/remove``, batched forms, ``search``, ``commit``, ``touch``, ``recent_block``,
``iter_turns``), so :class:`PostgresMemory` is the ``tiered`` memory (L1 device, L2 RAM) with its
L3 on a server. It needs ``psycopg`` 3 and ``psycopg_pool`` (extra ``v22sdk[postgres]``); this
module imports them only when a tier is opened.

Durability promise (the same as SQLite's): a write returns only after its transaction has
COMMITted with ``synchronous_commit = on`` on the session, i.e. after the server has flushed its
WAL. A write that fails, at any statement or at COMMIT itself, raises :class:`MemoryStoreError`
and nothing of it is visible. A connection lost *before* COMMIT was sent (a stale pooled
connection, a cut mid-statement) rolled the transaction back on the server, so it is run again on
a fresh connection (twice at most) before an error is raised. If the connection breaks *during*
COMMIT the outcome is unknown to the client: it raises :class:`MemoryCommitInDoubt` (a
MemoryStoreError; "commit in doubt"), the write is
not acknowledged and not run again, and the turn may or may not be there, whole (at most that one
in-flight batch, exactly as with a killed SQLite writer). tests/scale/test_pg_conn_drop.py cuts
connections at each of these points through a TCP proxy.

Ids and recency are allocated from a counter row (``v22_counters``) locked inside the write
transaction, not from a sequence: a sequence hands out numbers outside transactions, so a failed
or killed writer would leave gaps and ids would not follow commit order. With the counter row,
ids are gap-free, increase in commit order across all workers (so "ties go to the newer id"
means the later commit), and a rolled-back write consumes nothing. The price is that writers are
serialised on that row for the length of their transaction (see docs/scaling.md).

Schema migrations: table ``v22_schema_migrations(version, description, applied_at)``; each
migration runs in its own transaction under a transaction-level advisory lock, so concurrent
workers opening a new database migrate it exactly once. A database whose newest migration is
newer than this code knows is refused (upgrade v22sdk), never written to.

Search (exact hybrid score ``0.6·cos + 0.4·Jaccard``):

* **fallback (no pgvector; what runs on Debian 12)**: the rows' ``sent_vec`` (256 float32, bytea)
  and attribute masks are streamed in id-ordered chunks over a binary cursor, inside one
  REPEATABLE READ snapshot, and scored with the same numpy code as the SQLite tier
  (:func:`~v22sdk.memory.scoring.search_block`), so the results are bit-identical to SQLite's on
  the same turns. Cost: 1 KiB per row crosses the wire per query batch.
* **pgvector present** (``CREATE EXTENSION vector`` allowed): migration 2 adds a ``vector(256)``
  column of unit rows and an HNSW index (``vector_cosine_ops``). ``search`` then lets the server
  rank rows by exact cosine (``ORDER BY sent_pgv <=> q`` with index scans disabled, so the order is
  exact) and fetches them in pages; it stops as soon as ``0.6·cos_next + 0.4`` (the best hybrid
  score any unseen row could reach) falls below the k-th best exact hybrid score found. The answer
  is therefore exact while only the head of the ranking crosses the wire. ``approximate=True``
  uses the HNSW index instead (recall < 1; not the default).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator, Sequence

import numpy as np

from v22sdk.errors import MemoryCommitInDoubt, MemoryStoreCorrupt, MemoryStoreError
from v22sdk.memory.scoring import (
    W_COS,
    W_JAC,
    AttrVocab,
    blob_to_mask,
    mask_to_blob,
    merge_topk,
    search_block,
    unit_rows,
)
from v22sdk.memory.sqlite_tier import TURN_COLUMNS, SQLTurnStore, row_crc
from v22sdk.memory.tiered import TieredMemory
from v22sdk.memory.turn import SENT_DIM, Turn

#: Environment variable holding the default connection string (``postgresql://user@host:port/db``).
ENV_DSN = "V22SDK_PG_DSN"
# Advisory lock key for migrations (any constant; "v22" in ASCII).
_MIGRATION_LOCK = 0x763232
# SQLSTATEs after which the whole transaction may simply be run again.
_RETRYABLE = {"40001", "40P01", "55P03"}  # serialization failure, deadlock, lock not available
# Times a transaction is run again after its connection was lost before COMMIT (see _run).
_RECONNECTS = 2

_V1 = [
    """CREATE TABLE turns (
        id           bigint           PRIMARY KEY,
        time         double precision NOT NULL,
        conversation text             NOT NULL,
        modality     text             NOT NULL,
        digest       text             NOT NULL,
        summary      text             NOT NULL,
        attrs        text             NOT NULL,  -- JSON list of slot names, sorted (as in SQLite)
        attr_mask    bytea            NOT NULL,  -- little-endian uint64 words over attr_vocab bits
        sent_vec     bytea            NOT NULL CHECK (length(sent_vec) = 1024),  -- 256 x float32 LE
        mem_emb      bytea            NOT NULL CHECK (length(mem_emb) = 1536),   -- 384 x float32 LE
        touched      bigint           NOT NULL,  -- recency: bumped on write and on promotion to L2
        crc          bigint           NOT NULL   -- crc32 of the content (sqlite_tier.row_crc)
    )""",
    "CREATE INDEX turns_touched ON turns (touched)",
    "CREATE TABLE attr_vocab (bit integer PRIMARY KEY, name text NOT NULL UNIQUE)",
    "CREATE TABLE v22_counters (name text PRIMARY KEY, value bigint NOT NULL)",
    "INSERT INTO v22_counters VALUES ('turn_id', 0), ('touched', 0)",
    "CREATE TABLE v22_meta (key text PRIMARY KEY, value text NOT NULL)",
]

#: version -> (description, statements). Migration 2 is applied only where pgvector exists.
MIGRATIONS: dict[int, tuple[str, list[str]]] = {
    1: ("turns, attribute vocabulary, id/recency counters", _V1),
    2: (
        "pgvector: unit sent_vec column and HNSW cosine index",
        [
            "ALTER TABLE turns ADD COLUMN sent_pgv vector(256)",
            "CREATE INDEX turns_sent_hnsw ON turns USING hnsw (sent_pgv vector_cosine_ops)",
        ],
    ),
}
SCHEMA_VERSION = max(MIGRATIONS)


def redact(dsn: str) -> str:
    """The DSN without its password (for messages and stats)."""
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        parts = conninfo_to_dict(dsn)
        if "password" in parts:
            parts["password"] = "***"
        return make_conninfo("", **parts)
    except Exception:  # a malformed DSN: show nothing secret
        return "<dsn>"


def _vec_literal(v: np.ndarray) -> str:
    """pgvector's text input form; repr of float32 -> float is exact enough to round-trip."""
    return "[" + ",".join(map(repr, v.astype(np.float64).tolist())) + "]"


class PostgresTier(SQLTurnStore):
    """Every turn in a PostgreSQL database, shared by any number of processes.

    ``dsn``: a libpq connection string or URI (default: ``$V22SDK_PG_DSN``). ``pool_size``: the
    most connections this process opens (a ``psycopg_pool.ConnectionPool``). ``use_pgvector``:
    ``"auto"`` (use it when ``CREATE EXTENSION vector`` succeeds), ``True`` (require it) or
    ``False`` (never). Thread-safe.
    """

    level = "L3"
    _P = "%s"

    def __init__(
        self,
        dsn: str | None = None,
        *,
        pool_size: int = 4,
        use_pgvector: str | bool = "auto",
        timeout_s: float = 30.0,
        retries: int = 5,
    ):
        dsn = dsn or os.environ.get(ENV_DSN)
        if not dsn:
            raise MemoryStoreError(f"postgres memory: no DSN given and ${ENV_DSN} is not set")
        try:
            import psycopg  # noqa: F401
            from psycopg_pool import ConnectionPool
        except ImportError as e:
            raise MemoryStoreError(
                f"postgres memory needs psycopg 3 and psycopg_pool (pip install 'v22sdk[postgres]'): {e}"
            ) from e
        self.dsn = dsn
        self.path = redact(dsn)  # what messages and stats show
        self.timeout_s = timeout_s
        self.retries = retries
        self.vocab = AttrVocab()
        self._lock = threading.RLock()  # guards self.vocab (shared in place with L1/L2)
        self._pool = None
        try:
            self._pool = ConnectionPool(
                dsn,
                min_size=1,
                max_size=max(1, pool_size),
                timeout=timeout_s,
                configure=self._configure,
                open=True,
                name="v22sdk-memory",
            )
            self._pool.wait(timeout=timeout_s)
            self.pgvector = self._migrate(use_pgvector)
            self._load_vocab()
        except MemoryStoreError:
            self.close()
            raise
        except Exception as e:
            self.close()
            raise MemoryStoreError(f"memory store {self.path}: cannot open: {_first_line(e)}") from e

    # -- connections -------------------------------------------------------------------------

    @staticmethod
    def _configure(conn) -> None:
        # Explicit, so that a server or role default of "off" cannot weaken the promise.
        conn.execute("SET synchronous_commit = on")
        conn.execute("SET idle_in_transaction_session_timeout = '60s'")
        conn.commit()

    def _require(self):
        if self._pool is None:
            raise MemoryStoreError(f"memory store {self.path} is closed")
        return self._pool

    def _run(self, body, *, write: bool, what: str, isolation: str | None = None):
        """Run ``body(conn)`` in one transaction; returns only after COMMIT succeeded.

        Run again: on serialization failure/deadlock, and (at most ``_RECONNECTS`` times) when the
        connection was lost before COMMIT was sent. Then the server rolls the transaction back
        (nothing stored, no id used), so a fresh connection may run it again; this is what makes a
        pooled connection that went stale (network blip, server restart) invisible to the caller.
        A connection lost *during* COMMIT is never run again (the outcome is unknown).
        Any other error -> :class:`MemoryStoreError`.
        """
        import psycopg
        from psycopg.pq import ConnStatus

        pool = self._require()
        attempt = reconnects = 0
        lost_before = ""  # the first connection loss that was retried, for the final message
        while True:
            attempt += 1
            committing = lost = False
            try:
                with pool.connection(timeout=self.timeout_s) as conn:
                    if isolation:
                        conn.isolation_level = isolation
                    try:
                        with conn.cursor() as cur:
                            out = body(cur)
                        committing = True
                        conn.commit()  # raises if COMMIT fails: then nothing was stored
                        return out
                    except BaseException:
                        lost = conn.pgconn.status == ConnStatus.BAD
                        if not conn.closed and not committing:
                            try:
                                conn.rollback()
                            except Exception:  # a broken connection: the pool discards it
                                pass
                        raise
                    finally:
                        if isolation and not conn.closed:
                            try:
                                conn.isolation_level = None
                            except Exception:
                                pass
            except psycopg.Error as e:
                code = getattr(e, "sqlstate", None)
                if code in _RETRYABLE and attempt <= self.retries:
                    time.sleep(0.005 * attempt)
                    continue
                if lost and not committing and reconnects < _RECONNECTS:
                    reconnects += 1
                    lost_before = lost_before or f" (after a lost connection: {_first_line(e)})"
                    try:
                        pool.check()  # discard the pool's other dead connections too, not one per call
                    except Exception:  # e.g. the pool was closed meanwhile: the next attempt says so
                        pass
                    continue
                if write and committing and isinstance(e, psycopg.OperationalError):
                    raise MemoryCommitInDoubt(
                        f"memory store {self.path}: {what}: the connection broke during COMMIT, so its outcome "
                        f"is unknown (commit in doubt): the write was NOT acknowledged and may or may not "
                        f"have been stored: {_first_line(e)}"
                    ) from e
                verb = "nothing was stored" if write else "read failed"
                raise MemoryStoreError(
                    f"memory store {self.path}: {what} failed, {verb}: {_first_line(e)}{lost_before}"
                ) from e
            except Exception as e:  # pool timeout, closed pool
                if isinstance(e, (MemoryStoreError, MemoryStoreCorrupt)):
                    raise
                verb = ", nothing was stored" if write else ""
                raise MemoryStoreError(
                    f"memory store {self.path}: {what} failed{verb}: {_first_line(e)}{lost_before}"
                ) from e

    # -- schema ------------------------------------------------------------------------------

    def _migrate(self, use_pgvector) -> bool:
        """Apply missing migrations; returns whether the pgvector path is active."""
        import psycopg

        def applied(cur) -> list[int]:
            cur.execute("SELECT version FROM v22_schema_migrations ORDER BY version")
            return [r[0] for r in cur.fetchall()]

        def step(cur):
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            cur.execute("""CREATE TABLE IF NOT EXISTS v22_schema_migrations (
                               version integer PRIMARY KEY, description text NOT NULL,
                               applied_at timestamptz NOT NULL DEFAULT now())""")
            done = applied(cur)
            if done and max(done) > SCHEMA_VERSION:
                raise MemoryStoreError(
                    f"memory store {self.path} has schema version {max(done)}; this v22sdk knows up to "
                    f"{SCHEMA_VERSION}: upgrade v22sdk"
                )
            if 1 not in done:
                cur.execute("SELECT to_regclass('turns')")
                if cur.fetchone()[0] is not None:
                    raise MemoryStoreError(f"{self.path} has a 'turns' table that is not a v22sdk memory store")
                self._apply(cur, 1)
                cur.execute("INSERT INTO v22_meta VALUES ('created', %s)", (repr(time.time()),))
            return done

        done = self._run(step, write=True, what="migrating the schema")
        if 2 in done:
            return use_pgvector is not False
        if use_pgvector is False:
            return False

        def vector_step(cur):
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            if 2 in applied(cur):
                return True
            cur.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            if cur.fetchone() is None:
                return False
            cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
            # Migration 2's column first, the rows written before the extension existed backfilled
            # (client-side: bytea -> unit vector, in batches), then its HNSW index: building the
            # graph once over the filled column is far cheaper than updating it row by row.
            add_column, add_index = MIGRATIONS[2][1]
            cur.execute(add_column)
            last = 0
            while True:
                cur.execute("SELECT id, sent_vec FROM turns WHERE id > %s ORDER BY id LIMIT 5000", (last,))
                rows = cur.fetchall()
                if not rows:
                    break
                last = rows[-1][0]
                units = unit_rows(np.stack([np.frombuffer(sent, "<f4") for _, sent in rows]))
                cur.executemany(
                    "UPDATE turns SET sent_pgv = %s::vector WHERE id = %s",
                    [(_vec_literal(u), id_) for (id_, _), u in zip(rows, units)],
                )
            cur.execute(add_index)
            cur.execute(
                "INSERT INTO v22_schema_migrations (version, description) VALUES (%s, %s)", (2, MIGRATIONS[2][0])
            )
            return True

        try:
            ok = self._run(vector_step, write=True, what="installing pgvector")
        except MemoryStoreError as e:
            if use_pgvector is True:
                raise
            if isinstance(e.__cause__, psycopg.Error):
                return False  # e.g. no privilege to CREATE EXTENSION: the exact fallback runs
            raise
        if use_pgvector is True and not ok:
            raise MemoryStoreError(f"memory store {self.path}: the server has no pgvector extension")
        return ok

    @staticmethod
    def _apply(cur, version: int) -> None:
        desc, statements = MIGRATIONS[version]
        for stmt in statements:
            cur.execute(stmt)
        cur.execute("INSERT INTO v22_schema_migrations (version, description) VALUES (%s, %s)", (version, desc))

    def migrations(self) -> list[tuple[int, str]]:
        """Applied migrations, oldest first: ``[(version, description)]``."""

        def body(cur):
            cur.execute("SELECT version, description FROM v22_schema_migrations ORDER BY version")
            return [tuple(r) for r in cur.fetchall()]

        return self._run(body, write=False, what="reading migrations")

    # -- vocabulary --------------------------------------------------------------------------

    def _load_vocab(self) -> None:
        def body(cur):
            cur.execute("SELECT bit, name FROM attr_vocab ORDER BY bit")
            return cur.fetchall()

        rows = self._run(body, write=False, what="reading the attribute vocabulary")
        if [r[0] for r in rows] != list(range(len(rows))):
            raise MemoryStoreCorrupt(self.path, "attribute vocabulary has gaps")
        with self._lock:
            self.vocab.__init__([r[1] for r in rows])  # type: ignore[misc]  # in place: L1/L2 share this object

    def _refresh_vocab(self) -> None:
        def body(cur):
            cur.execute("SELECT count(*) FROM attr_vocab")
            return cur.fetchone()[0]

        if self._run(body, write=False, what="reading the attribute vocabulary") != len(self.vocab):
            self._load_vocab()

    def _sync_vocab(self, cur, turns: Sequence[Turn]) -> AttrVocab:
        """Inside the write transaction (after the counter lock): the vocabulary including every
        name of ``turns``, new names inserted. Returns a copy; ``self.vocab`` is updated after commit."""
        cur.execute("SELECT bit, name FROM attr_vocab WHERE bit >= %s ORDER BY bit", (len(self.vocab),))
        with self._lock:
            vocab = AttrVocab(self.vocab.names)
        for bit, name in cur.fetchall():
            if vocab.add(name) != bit:
                raise MemoryStoreCorrupt(self.path, "attribute vocabulary out of order")
        for name in sorted({a for t in turns for a in t.attrs} - vocab.bits.keys()):
            cur.execute("INSERT INTO attr_vocab VALUES (%s, %s)", (vocab.add(name), name))
        return vocab

    def _adopt(self, vocab: AttrVocab) -> None:
        with self._lock:
            for name in vocab.names[len(self.vocab) :]:
                self.vocab.add(name)

    # -- writes ------------------------------------------------------------------------------

    def commit(self, turns: Sequence[Turn]) -> list[Turn]:
        """Store ``turns`` in ONE transaction; return them with ids, times and recency assigned.

        Returns only after COMMIT succeeded (durable on the server). On any failure nothing of the
        batch is stored and :class:`MemoryStoreError` is raised.
        """
        turns = list(turns)
        if not turns:
            return []
        now = time.time()
        n = len(turns)

        def body(cur):
            # The counter rows serialise writers: ids gap-free and in commit order.
            cur.execute(
                "UPDATE v22_counters SET value = value + %s WHERE name IN ('turn_id', 'touched') RETURNING name, value",
                (n,),
            )
            top = dict(cur.fetchall())
            vocab = self._sync_vocab(cur, turns)
            words = vocab.words()
            first_id, first_touch = top["turn_id"] - n + 1, top["touched"] - n + 1
            rows, out = [], []
            for j, t in enumerate(turns):
                when = t.time or now
                attrs_json = json.dumps(sorted(t.attrs), ensure_ascii=False)
                sent, mem = t.sent_vec.astype("<f4").tobytes(), t.mem_emb.astype("<f4").tobytes()
                crc = row_crc(when, t.conversation, t.modality, t.digest, t.summary, attrs_json, sent, mem)
                rows.append(
                    (
                        first_id + j,
                        when,
                        t.conversation,
                        t.modality,
                        t.digest,
                        t.summary,
                        attrs_json,
                        mask_to_blob(vocab.mask(t.attrs, words)),
                        sent,
                        mem,
                        first_touch + j,
                        crc,
                    )
                )
                out.append(t.with_id(first_id + j, when, first_touch + j))
            cur.executemany(f"INSERT INTO turns ({TURN_COLUMNS}) VALUES ({','.join(['%s'] * 12)})", rows)
            if self.pgvector:
                units = unit_rows(np.stack([t.sent_vec for t in turns]))
                cur.executemany(
                    "UPDATE turns SET sent_pgv = %s::vector WHERE id = %s",
                    [(_vec_literal(u), first_id + j) for j, u in enumerate(units)],
                )
            return out, vocab

        out, vocab = self._run(body, write=True, what=f"writing {n} turn(s)")
        self._adopt(vocab)  # only names that are now committed
        return out

    def batched_remove(self, turn_ids) -> list[bool]:
        ids = [int(i) for i in turn_ids]

        def body(cur):
            out = []
            for i in ids:
                cur.execute("DELETE FROM turns WHERE id = %s", (i,))
                out.append(cur.rowcount > 0)
            return out

        return self._run(body, write=True, what="removing turns")

    def touch(self, turn_ids: Sequence[int]) -> list[int]:
        """Mark turns as just used (promotion into L2); returns their new recency values."""
        ids = [int(i) for i in turn_ids]
        if not ids:
            return []

        def body(cur):
            cur.execute(
                "UPDATE v22_counters SET value = value + %s WHERE name = 'touched' RETURNING value", (len(ids),)
            )
            first = cur.fetchone()[0] - len(ids) + 1
            cur.executemany("UPDATE turns SET touched = %s WHERE id = %s", [(first + j, i) for j, i in enumerate(ids)])
            return [first + j for j in range(len(ids))]

        return self._run(body, write=True, what="recording a promotion")

    # -- reads -------------------------------------------------------------------------------

    def _query(self, sql: str, args=(), what: str = "reading") -> list[tuple]:
        def body(cur):
            cur.execute(sql, args)
            return cur.fetchall()

        return self._run(body, write=False, what=what)

    def batched_get(self, turn_ids) -> list[Turn | None]:
        ids = [int(i) for i in turn_ids]
        rows = self._query(f"SELECT {TURN_COLUMNS} FROM turns WHERE id = ANY(%s)", (ids,)) if ids else []
        found = {r[0]: self._turn(r) for r in rows}
        return [found.get(i) for i in ids]

    def count_where(self, conversation: str) -> int:
        return int(self._query("SELECT count(*) FROM turns WHERE conversation = %s", (conversation,))[0][0])

    def search(
        self,
        queries,
        qmasks,
        qcounts,
        k: int = 1,
        exclude: np.ndarray | None = None,
        chunk: int = 8192,
        approximate: bool = False,
    ):
        """Exact top-k over every row not in ``exclude`` (see the module docstring for the paths)."""
        self._refresh_vocab()
        words = max(qmasks.shape[1], self.vocab.words())
        qmasks = np.pad(qmasks, ((0, 0), (0, words - qmasks.shape[1])))
        if self.pgvector and len(queries):
            return self._search_pgvector(queries, qmasks, qcounts, k, exclude, words, approximate)
        return self._search_scan(queries, qmasks, qcounts, k, exclude, words, chunk)

    def _decode_block(self, rows, exclude, words):
        ids = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        keep = np.ones(len(rows), bool) if exclude is None else ~np.isin(ids, exclude)
        sel = np.flatnonzero(keep)
        if not len(sel):
            return None
        try:
            vecs = np.frombuffer(b"".join(rows[i][1] for i in sel), "<f4").reshape(len(sel), SENT_DIM)
        except ValueError as e:
            raise MemoryStoreCorrupt(self.path, "a sent_vec value has the wrong length") from e
        masks = np.asfortranarray(np.stack([blob_to_mask(bytes(rows[i][2]), words) for i in sel]))
        return ids[sel], unit_rows(vecs), masks, np.bitwise_count(masks).sum(axis=1, dtype=np.int32)

    def _search_scan(self, queries, qmasks, qcounts, k, exclude, words, chunk):
        b = len(queries)
        best_ids = np.full((b, k), -1, np.int64)
        best_sc = np.full((b, k), -np.inf)

        def body(cur):
            last = 0
            while True:  # keyset pages inside one snapshot: a consistent view of the table
                cur.execute(
                    "SELECT id, sent_vec, attr_mask FROM turns WHERE id > %s ORDER BY id LIMIT %s",
                    (last, chunk),
                    binary=True,
                )
                rows = cur.fetchall()
                if not rows:
                    return
                last = rows[-1][0]
                block = self._decode_block(rows, exclude, words)
                if block is None:
                    continue
                ids, units, masks, counts = block
                for q in range(b):
                    cid, csc = search_block(ids, units, masks, counts, queries[q], qmasks[q], int(qcounts[q]), k)
                    best_ids[q], best_sc[q] = merge_topk(best_ids[q], best_sc[q], cid, csc, k)

        if b:
            self._run(body, write=False, what="searching", isolation=_repeatable_read())
        return best_ids, best_sc

    def _search_pgvector(self, queries, qmasks, qcounts, k, exclude, words, approximate, page: int = 256):
        b = len(queries)
        best_ids = np.full((b, k), -1, np.int64)
        best_sc = np.full((b, k), -np.inf)

        def body(cur):
            if not approximate:  # an exact ranking: sequential scan + sort, not the HNSW graph
                cur.execute("SET LOCAL enable_indexscan = off")
            else:  # the graph search keeps ef_search candidates: at least one page of them
                cur.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(1000, int(page)))}")
            for q in range(b):
                lit = _vec_literal(queries[q])
                offset = 0
                while True:
                    # (pgvector's index scan serves ORDER BY distance alone: no id tie-break there;
                    # the exact re-rank below breaks ties)
                    order = "sent_pgv <=> %s::vector" + ("" if approximate else ", id DESC")
                    cur.execute(
                        f"SELECT id, sent_vec, attr_mask, 1 - (sent_pgv <=> %s::vector) AS cos FROM turns "
                        f"ORDER BY {order} LIMIT %s OFFSET %s",
                        (lit, lit, page, offset),
                        binary=True,
                    )
                    rows = cur.fetchall()
                    if not rows:
                        break
                    offset += len(rows)
                    block = self._decode_block(rows, exclude, words)
                    if block is not None:
                        ids, units, masks, counts = block
                        cid, csc = search_block(ids, units, masks, counts, queries[q], qmasks[q], int(qcounts[q]), k)
                        best_ids[q], best_sc[q] = merge_topk(best_ids[q], best_sc[q], cid, csc, k)
                    # Unseen rows have cos <= the last one seen (up to float error): stop when even a
                    # perfect Jaccard could not lift them to the k-th best.
                    bound = W_COS * (float(rows[-1][3]) + 1e-4) + W_JAC
                    if len(rows) < page or (best_ids[q, -1] >= 0 and bound < best_sc[q, -1]) or approximate:
                        break

        self._run(body, write=False, what="searching", isolation=_repeatable_read())
        return best_ids, best_sc

    # -- maintenance -------------------------------------------------------------------------

    def integrity_check(self) -> list[str]:
        """Checks the server cannot do for us: the counters cover every id, every checksum holds."""
        problems = []
        ((top_id,),) = self._query("SELECT value FROM v22_counters WHERE name = 'turn_id'")
        if self.max_id() > top_id:
            problems.append(f"turn id counter {top_id} is behind max(id) {self.max_id()}")
        for t in self._iter_checked():
            if t is not None:
                problems.append(t)
        return problems or ["ok"]

    def _iter_checked(self) -> Iterator[str | None]:
        try:
            for _ in self.iter_turns():
                pass
        except MemoryStoreCorrupt as e:
            yield str(e)

    def stats(self) -> dict:
        n, first, last, convs = self._query(
            "SELECT count(*), min(time), max(time), count(DISTINCT conversation) FROM turns"
        )[0]
        size = self._query("SELECT pg_total_relation_size('turns')")[0][0]
        return {
            "path": self.path,
            "turns": int(n),
            "first_time": first,
            "last_time": last,
            "conversations": int(convs),
            "attribute_names": len(self.vocab),
            "bytes_on_disk": int(size),
            "schema_version": max(v for v, _ in self.migrations()),
            "search": "pgvector" if self.pgvector else "exact client-side scan",
        }

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


def _repeatable_read():
    from psycopg import IsolationLevel

    return IsolationLevel.REPEATABLE_READ


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


class PostgresMemory(TieredMemory):
    """The ``tiered`` memory (L1 device, L2 RAM) with L3 on PostgreSQL, shared by many workers.

    Each worker keeps its own L1/L2; every read that L1/L2 do not answer above the hit
    threshold scans L3, which holds every worker's turns. ``dsn=None`` reads ``$V22SDK_PG_DSN``.
    """

    name = "postgres"

    def __init__(
        self,
        dsn: str | None = None,
        *,
        l1_size: int = 50,
        l2_size: int = 10_000,
        device="cpu",
        hit_threshold: float = 0.9,
        scan_l3: bool = True,
        pool_size: int = 4,
        use_pgvector: str | bool = "auto",
    ):
        super().__init__(
            l1_size=l1_size,
            l2_size=l2_size,
            device=device,
            hit_threshold=hit_threshold,
            scan_l3=scan_l3,
            l3=PostgresTier(dsn, pool_size=pool_size, use_pgvector=use_pgvector),
        )
