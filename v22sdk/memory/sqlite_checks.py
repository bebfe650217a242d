"""What an SQLite memory store checks about itself, read without SQLite: below both the store
(:mod:`.sqlite_tier`, which runs these checks when it opens and writes) and the tools that repair a
damaged one (:mod:`.recovery`, which opens stores), so neither imports the other back.

* :func:`inspect_before_open` reads a file's header and schema page without SQLite, so a file
  that is not a memory store (another program's SQLite database) is refused *unmodified*:
  opening it with SQLite would switch it to WAL mode and could checkpoint its WAL.
* :class:`AckMark` keeps, in a small ``-ack`` file next to the store, the highest turn id ever
  acknowledged. Deleting the ``-wal`` file after a crash takes every turn committed since the
  last checkpoint with it, silently for SQLite; the store compares its id sequence with the mark
  when it opens and reports how many acknowledged turns are missing.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct
from dataclasses import dataclass

from v22sdk.errors import InputError
from v22sdk.memory import sqlite_file as sf

#: meta key: how many ids up to the id sequence the store does not hold (removed turns, and
#: turns lost before a salvage), so that "held = sequence - absent" is exact.
ABSENT_KEY = "absent_ids"


# -- before opening -----------------------------------------------------------------------------


@dataclass(frozen=True)
class FileFacts:
    """What :func:`inspect_before_open` found: the schema version and table names of the newest
    committed schema page (database file and WAL), read without SQLite."""

    user_version: int
    tables: tuple[str, ...]


def inspect_before_open(path: str) -> FileFacts | None:
    """The facts of the SQLite file ``path``; None when it is missing or empty. Raises
    :class:`InputError` when it is not an SQLite file at all. Reads only; writes nothing.

    When the database file's own header carries a schema version, its first page is read alone
    (one read: this runs on every open); otherwise the WAL is read too, since a new store's
    schema may not have been checkpointed yet.
    """
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        return None
    if size == 0:
        return None
    header = sf.read_header(path)
    if not header.valid:
        raise InputError(path, "not an SQLite database (bad header)")
    with sf.PageImage(path, use_wal=header.user_version == 0) as image:
        first = image.page(1)
        version = sf.Header.parse(first[:100]).user_version if first else 0
        tables = tuple(r[1] for r in table_rows(image, 1) if len(r) == 5 and r[0] == "table")
    return FileFacts(version, tables)


def table_rows(image: sf.PageImage, root: int, limit: int = 10_000) -> list[list]:
    """The records of the table B-tree at ``root`` (a small one: the schema), walked from the top."""
    out: list[list] = []
    stack = [root]
    seen: set[int] = set()
    while stack and len(seen) < limit:
        pgno = stack.pop()
        data = image.page(pgno)
        if pgno in seen or data is None:
            continue
        seen.add(pgno)
        base = 100 if pgno == 1 else 0
        kind = data[base]
        if kind == sf.TABLE_INTERIOR:
            n = int.from_bytes(data[base + 3 : base + 5], "big")
            stack.append(int.from_bytes(data[base + 8 : base + 12], "big"))
            for k in range(min(n, (image.usable - base - 12) // 2)):
                ptr = int.from_bytes(data[base + 12 + 2 * k : base + 14 + 2 * k], "big")
                stack.append(int.from_bytes(data[ptr : ptr + 4], "big"))
        elif kind == sf.TABLE_LEAF:
            out += [vals for _, vals in sf.cells(image, pgno, data) if vals is not None]
    return out


# -- the acknowledged high-water mark -----------------------------------------------------------


class AckMark:
    """The highest acknowledged turn id of the store at ``path``, kept in ``path-ack``.

    The file holds 24 bytes: a magic string, the id (uint64) and the store's creation time (the
    ``created`` row of its ``meta`` table, float64), so a mark left behind by a deleted store is
    not taken for the mark of a new store created under the same name. :meth:`advance` reads and
    raises the mark under an ``flock`` (so two writer processes keep the larger id), done after the
    commit is durable; it is not fsynced (a mark that lags after a power cut only undercounts).
    The first advance writes the file with ``pwrite``; later ones read and write its bytes through
    a shared memory map (the same page cache a ``read`` sees, so two system calls per turn, the
    ``flock`` pair, instead of four), as SQLite itself maps the store's ``-shm`` file.
    A mark that cannot be written (a read-only folder) is not kept: it is a detector, and its
    failure never fails a write.
    """

    MAGIC = b"V22ACK\x00\x01"
    _FORMAT = "<8sQd"

    def __init__(self, store_path: str, created: float | None):
        self.store_path = store_path
        self.created = created
        self._fd: int | None = None  # opened (created) by the first write, not by a reader
        self._map: mmap.mmap | None = None

    def read(self) -> int:
        """The mark (0 when there is none, or it belongs to another store)."""
        return read_ack(self.store_path, self.created)

    def advance(self, turn_id: int) -> None:
        try:
            if self._fd is None:
                self._fd = os.open(self.store_path + "-ack", os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                m = self._map
                if m is not None:  # _parse_ack(m[:24], created) < turn_id, without the copy
                    magic, mark, when = struct.unpack_from(self._FORMAT, m)
                    if magic != self.MAGIC or (self.created is not None and when != self.created) or mark < turn_id:
                        struct.pack_into(self._FORMAT, m, 0, self.MAGIC, turn_id, self.created or 0.0)
                    return
                if _parse_ack(os.pread(self._fd, 24, 0), self.created) < turn_id:
                    os.pwrite(self._fd, struct.pack(self._FORMAT, self.MAGIC, turn_id, self.created or 0.0), 0)
                if os.fstat(self._fd).st_size >= 24:  # mapped only once 24 bytes exist to map
                    self._map = mmap.mmap(self._fd, 24)
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        except (OSError, ValueError):  # ValueError: mmap refused the file
            pass

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _parse_ack(raw: bytes, created: float | None) -> int:
    if len(raw) != 24:
        return 0
    magic, mark, when = struct.unpack(AckMark._FORMAT, raw)
    if magic != AckMark.MAGIC or (created is not None and when != created):
        return 0
    return mark


def read_ack(store_path: str, created: float | None) -> int:
    """The acknowledged mark next to ``store_path`` for the store created at ``created`` (None:
    any store, when its creation time is unknown); 0 when absent or foreign."""
    try:
        with open(store_path + "-ack", "rb") as f:
            return _parse_ack(f.read(24), created)
    except OSError:
        return 0


def parse_created(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
