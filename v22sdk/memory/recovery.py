"""Checking and recovering an SQLite memory store: when turns may have been lost, and after it was
damaged.

The checks a store runs on itself when it opens (the header read without SQLite, the acknowledged
mark of :class:`~.sqlite_checks.AckMark`) live in :mod:`.sqlite_checks`, below both modules.

* :func:`salvage` copies every turn the file still holds into a new store. It does not ask
  SQLite to walk its B-trees (that fails when interior pages or the first page are lost): it reads
  every page of the file and of its WAL (:mod:`.sqlite_file`), decodes each row of the known
  ``turns`` schema and keeps it only when its own checksum (:func:`~.sqlite_tier.row_crc`)
  verifies. It then counts what the store held, from the id sequence, the acknowledged mark, the
  recency index and the count of removed ids, and says how many turns were lost.
* :func:`full_check` verifies every row's checksum and SQLite's full ``integrity_check``.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from typing import Literal

from v22sdk.errors import InputError, MemoryStoreError
from v22sdk.inputs import check_regular_file
from v22sdk.memory import sqlite_file as sf
from v22sdk.memory.scoring import mask_to_blob
from v22sdk.memory.sqlite_checks import ABSENT_KEY, parse_created, read_ack, table_rows
from v22sdk.memory.sqlite_tier import PAGE_SIZE, TURN_COLUMNS, SQLiteTier, row_crc
from v22sdk.memory.turn import MEM_DIM, SENT_DIM

# -- full check ---------------------------------------------------------------------------------


def full_check(store) -> dict:
    """SQLite's ``integrity_check`` plus every row's checksum: ``{"integrity_check": [...],
    "rows_checked": n, "bad_ids": [...]}`` (``bad_ids``: rows whose content fails its checksum)."""
    integrity = store.integrity_check()
    bad, n, last = [], 0, 0
    while True:
        rows = store._query(f"SELECT {TURN_COLUMNS} FROM turns WHERE id > ? ORDER BY id LIMIT 2000", (last,))
        if not rows:
            break
        for id_, when, conv, mod, digest, summary, attrs, _m, sent, mem, _t, crc in rows:
            n += 1
            ok = (
                isinstance(sent, bytes)
                and isinstance(mem, bytes)
                and len(sent) == 4 * SENT_DIM
                and len(mem) == 4 * MEM_DIM
                and crc == row_crc(when, conv, mod, digest, summary, attrs, sent, mem)
            )
            if not ok:
                bad.append(int(id_))
        last = rows[-1][0]
    return {"integrity_check": integrity, "rows_checked": n, "bad_ids": bad}


# -- salvage ------------------------------------------------------------------------------------


@dataclass
class _Scan:
    """What one pass over the pages found."""

    recovered: set[int] = field(default_factory=set)
    damaged: set[int] = field(default_factory=set)
    listed: set[int] = field(default_factory=set)
    sequence: int | None = None
    absent: int = 0
    created: float | None = None
    pages_read: int = 0


def _turn_row(rowid: int, vals: list) -> tuple[int, tuple] | Literal[False] | None:
    """``(id, row values for INSERT)`` of a turns record whose checksum verifies; ``False`` for a
    turns-shaped record that fails it; None for a record of another table."""
    if len(vals) != 12 or vals[0] is not None:
        return None
    when, conv, mod, digest, summary, attrs, mask, sent, mem, touched, crc = vals[1:]
    if not (
        isinstance(when, (int, float))
        and all(isinstance(v, str) for v in (conv, mod, digest, summary, attrs))
        and all(isinstance(v, bytes) for v in (mask, sent, mem))
        and isinstance(touched, int)
        and isinstance(crc, int)
    ):
        return None
    when = float(when)  # SQLite may keep a whole-number REAL as an integer on disk
    if (
        len(sent) != 4 * SENT_DIM
        or len(mem) != 4 * MEM_DIM
        or crc != row_crc(when, conv, mod, digest, summary, attrs, sent, mem)
    ):
        return False
    try:
        names = json.loads(attrs)
    except ValueError:
        return False
    if not isinstance(names, list) or not all(isinstance(a, str) for a in names):
        return False
    return rowid, (rowid, when, conv, mod, digest, summary, attrs, names, sent, mem, touched, crc)


def _rows_under(path: str, size: int, limit: int = 8 << 20) -> int:
    """Verified turn rows in the first ``limit`` bytes of ``path`` read with pages of ``size``."""
    found = 0
    with sf.PageImage(path, page_size=size) as image:
        for pgno in range(1, min(image.count, limit // size) + 1):
            data = image.page(pgno)
            if data is None or sf.page_kind(image, pgno, data) != sf.TABLE_LEAF:
                continue
            found += sum(
                1
                for rowid, vals in sf.cells(image, pgno, data)
                if rowid is not None and vals is not None and _turn_row(rowid, vals)
            )
    return found


def _page_size(path: str, header: sf.Header) -> tuple[int | None, bool]:
    """The page size to read ``path`` with, and whether the header's is trusted. A store is
    written with 8 KiB pages: a header saying so is kept; any other size (older stores have 4 KiB
    pages, and a damaged header any), or none, is checked by the rows it decodes (the true size
    decodes the most: a smaller one cuts the cells beyond its end, a larger one skips every
    other page)."""
    if header.valid and header.page_size == PAGE_SIZE:
        return None, True
    wal = sf.Wal.read(path + "-wal").page_size
    if wal and not header.valid:
        return wal, False
    candidates = [PAGE_SIZE, 4096, 16384, 32768, 65536, 2048, 1024, 512]
    if header.valid:
        candidates.insert(0, header.page_size)
    counts = {size: _rows_under(path, size) for size in dict.fromkeys(candidates)}
    best = max(counts, key=lambda k: counts[k])  # first of the largest: the header's, then 8 KiB
    if header.valid and counts[best] <= counts[header.page_size]:
        return None, True
    return best, False


def _scan_into(image: sf.PageImage, sink, batch: int = 2000) -> _Scan:
    """Read every page of ``image`` (except free pages); pass verified turn rows to ``sink`` in
    batches and collect the facts used to count what the store held."""
    scan = _Scan()
    free = sf.free_pages(image)
    pending = []
    for pgno in range(1, image.count + 1):
        if pgno in free:
            continue
        data = image.page(pgno)
        if data is None:
            continue
        kind = sf.page_kind(image, pgno, data)
        if not kind:
            continue
        scan.pages_read += 1
        for rowid, vals in sf.cells(image, pgno, data):
            if kind != sf.TABLE_LEAF:
                if vals is not None and len(vals) == 2 and all(type(v) is int for v in vals):
                    scan.listed.add(vals[1])  # an entry (touched, id) of the recency index
                continue
            if vals is None or rowid is None:  # a table leaf's cell has a rowid when it parsed
                if rowid is not None and rowid > 0:
                    scan.damaged.add(rowid)
                continue
            got = _turn_row(rowid, vals)
            if got:
                scan.recovered.add(got[0])
                pending.append(got[1])
                if len(pending) >= batch:
                    sink(pending)
                    pending = []
            elif got is False:
                scan.damaged.add(rowid)
            elif len(vals) == 2 and vals[0] == "turns" and isinstance(vals[1], int):
                scan.sequence = max(scan.sequence or 0, vals[1])  # sqlite_sequence
            elif len(vals) == 2 and vals[0] == ABSENT_KEY and isinstance(vals[1], str):
                scan.absent = max(scan.absent, int(vals[1]) if vals[1].isdigit() else 0)
            elif len(vals) == 2 and vals[0] == "created":
                scan.created = parse_created(vals[1])
    if pending:
        sink(pending)
    return scan


class _Writer:
    """Inserts salvaged rows into a new store, ids kept; a row seen twice (an old copy of its
    page) keeps its highest recency, which is the only column that ever changes."""

    def __init__(self, tier):
        self.tier = tier

    def __call__(self, rows) -> None:
        tier = self.tier

        def body(c: sqlite3.Connection) -> None:
            for name in sorted({a for r in rows for a in r[7]} - tier.vocab.bits.keys()):
                c.execute("INSERT INTO attr_vocab VALUES (?, ?)", (tier.vocab.add(name), name))
            words = tier.vocab.words()
            c.executemany(
                "INSERT INTO turns (id, time, conversation, modality, digest, summary, attrs, attr_mask, "
                "sent_vec, mem_emb, touched, crc) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT(id) DO UPDATE SET touched = max(touched, excluded.touched)",
                [
                    (i, w, cv, md, dg, sm, at, mask_to_blob(tier.vocab.mask(names, words)), s, m, t, k)
                    for (i, w, cv, md, dg, sm, at, names, s, m, t, k) in rows
                ],
            )

        tier._transaction(body)


def salvage(src: str | os.PathLike, dst: str | os.PathLike) -> dict:
    """Copy every turn that ``src`` (and its ``-wal``) still holds, each verified by its own
    checksum, into a NEW store ``dst``; count what ``src`` held and what was lost.

    ``src`` is only read. ``dst`` is written under a temporary name next to it and appears only
    when complete; ids, times and recency are kept, and ``dst``'s id sequence continues after the
    highest id ``src`` ever assigned (a lost turn's id is never given to a new turn).

    Returns a dict: ``recovered`` (turns copied), ``held`` (turns the store held: its id sequence
    or acknowledged mark, less the ids it had removed; None when neither survived), ``lost``
    (``held - recovered``, or the turns known lost when ``held`` is unknown), ``complete`` (True
    only when nothing is known or suspected lost), ``skipped_ids`` (ids known to have been stored
    and not recovered: listed by the recency index, failing their checksum, or acknowledged past
    the sequence), ``damaged_rows``, ``header`` (``"ok"`` or ``"rebuilt"`` when the header was
    lost and the page size was found from the rows), ``pages`` / ``missing_pages`` (the file's
    pages and those its header says are gone, a file cut short) and ``wal_frames``.

    A file holding no SQLite header and no turn row raises :class:`InputError` ("nothing to
    salvage"); an SQLite file whose schema has no ``turns`` table, too.
    """
    src, dst = os.fspath(src), os.fspath(dst)
    if os.path.lexists(dst):
        raise MemoryStoreError(f"salvage target {dst} already exists; choose a new file")
    if not os.path.exists(src):
        raise MemoryStoreError(f"salvage source {src} does not exist")
    check_regular_file(src)  # a FIFO or a device is no store
    try:
        size = os.path.getsize(src)
    except OSError as e:
        raise MemoryStoreError(f"salvage source {src}: {e.strerror or e}") from None
    if size == 0:
        raise InputError(src, "the file is empty: not a memory store, nothing to salvage")
    header = sf.read_header(src)
    page_size, header_ok = _page_size(src, header)
    if header.valid:
        with sf.PageImage(src) as image:
            tables = {r[1] for r in table_rows(image, 1) if len(r) == 5 and r[0] == "table"}
        if tables and "turns" not in tables:
            raise InputError(
                src, "an SQLite database without a 'turns' table: not a v22sdk memory store, nothing to salvage"
            )
    folder = os.path.dirname(os.path.abspath(dst))
    try:
        os.makedirs(folder, exist_ok=True)
        work = tempfile.mkdtemp(dir=folder, prefix=".salvage-")
    except OSError as e:
        raise MemoryStoreError(f"salvage of {src} into {dst}: {e.strerror or e}") from e
    try:
        tmp_dst = os.path.join(work, "salvaged.db")
        out = SQLiteTier(tmp_dst)
        try:
            with sf.PageImage(src, page_size=page_size) as image:
                scan = _scan_into(image, _Writer(out))
                facts = {
                    "pages": image.present,
                    "missing_pages": image.missing_pages(),
                    "wal_frames": image.wal.frame_count,
                    "bad_cells": image.bad_cells,
                }
            if not scan.recovered and not header.valid and not scan.damaged:
                raise InputError(
                    src,
                    "not an SQLite database (bad header) and no turn rows found: "
                    "not a memory store, nothing to salvage",
                )
            report = _account(src, scan, facts, header_ok)
            _finish(out, scan, report)
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
    return report


def _account(src: str, scan: _Scan, facts: dict, header_ok: bool) -> dict:
    """How many turns the store held and which of them were lost.

    Ids are assigned in sequence and never reused, so the store held ``top - absent`` turns,
    where ``top`` is the highest id it ever assigned (its ``sqlite_sequence`` row or the
    acknowledged mark, whichever is higher) and ``absent`` the ids it removed. Without removals
    the lost ids are exactly those up to ``top`` not recovered; with removals, the ids known
    lost are those the recency index lists, that fail their checksum, or that were acknowledged
    past the sequence. With neither the sequence row nor the mark, the count is unknown.
    """
    mark = read_ack(src, scan.created)
    seen_top = max(max(scan.recovered, default=0), max(scan.listed, default=0))
    top_known = max(scan.sequence or 0, mark)
    top = max(top_known, seen_top)
    known = (
        scan.listed | {i for i in scan.damaged if i <= top} | set(range((scan.sequence or 0) + 1, mark + 1))
    ) - scan.recovered
    recovered = len(scan.recovered)
    if top_known and not scan.absent:
        held = top
        lost_ids = set(range(1, top + 1)) - scan.recovered
    elif top_known:
        held = max(top - scan.absent, recovered + len(known))
        lost_ids = known
    else:
        held, lost_ids = None, known
    lost = held - recovered if held is not None else len(lost_ids)
    complete = lost == 0 and (held is not None or facts["missing_pages"] == 0)
    return {
        "recovered": recovered,
        "held": held,
        "lost": lost,
        "complete": complete,
        "skipped_ids": sorted(lost_ids),
        "damaged_rows": len(scan.damaged - scan.recovered),
        "header": "ok" if header_ok else "rebuilt",
        "top_id": top,
        **facts,
    }


def _finish(out, scan: _Scan, report: dict) -> None:
    """Continue the new store's id sequence after the old one's and record the ids it lacks."""
    top = report["top_id"]
    absent = top - report["recovered"]

    def body(c: sqlite3.Connection) -> None:
        if c.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'turns'", (top,)).rowcount == 0:
            c.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('turns', ?)", (top,))
        if absent:
            c.execute(
                "INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (ABSENT_KEY, str(absent)),
            )

    out._transaction(body)
