"""The SQLite file format, read directly (no SQLite library): what salvage and the checks made
before opening a store need to see in a file that SQLite itself may refuse to read.

SQLite finds rows by walking its B-trees from the root pages down. When a file is cut short, or
its first page is zeroed, the interior pages of those trees are lost and SQLite reads nothing,
although most leaf pages (the pages that hold the rows) are still there. This module reads the
file the other way round, as SQLite's own ``.recover`` does: page by page.

* :class:`PageImage` is the newest committed version of every page: the database file overlaid
  with the committed frames of its ``-wal`` file (frames after the last commit, frames from an
  older WAL generation and frames whose checksum chain breaks are ignored, as SQLite ignores them).
  A file that is not a whole number of pages (cut short) is read up to its last byte; the missing
  part of its last page reads as zeros.
* :func:`cells` yields the records of one B-tree page (table leaves: ``(rowid, values)``; index
  pages: ``(None, values)``), following overflow chains, and skips any cell it cannot parse.
* :func:`free_pages` lists the pages on the freelist (left-over copies of deleted rows), when the
  header still says where it is.

Reference: https://www.sqlite.org/fileformat2.html (sections 1.3 header, 1.6 B-tree pages, 2.1
records, 4 WAL). Nothing here writes to any file; every function reads with ``os.pread``.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

MAGIC = b"SQLite format 3\x00"
WAL_MAGIC = (0x377F0682, 0x377F0683)  # checksums over little- / big-endian 32-bit words
TABLE_LEAF, TABLE_INTERIOR, INDEX_LEAF, INDEX_INTERIOR = 0x0D, 0x05, 0x0A, 0x02
#: Largest number of pages an overflow chain may have before it is taken for a loop.
_MAX_OVERFLOW = 1 << 16


@dataclass(frozen=True)
class Header:
    """The fields of the 100-byte database header that matter here (``valid``: the magic string
    is there and the page size is a power of two in [512, 65536])."""

    valid: bool
    page_size: int = 0
    reserved: int = 0
    pages: int = 0  # database size in pages, when the header says it reliably (else 0)
    freelist_trunk: int = 0
    freelist_pages: int = 0
    user_version: int = 0
    wal_mode: bool = False

    @staticmethod
    def parse(head: bytes) -> Header:
        if len(head) < 100 or not head.startswith(MAGIC):
            return Header(False)
        size = int.from_bytes(head[16:18], "big")
        size = 65536 if size == 1 else size
        if size < 512 or size & (size - 1):
            return Header(False)
        # The page count is valid only when written by the same change as the change counter.
        pages = int.from_bytes(head[28:32], "big") if head[24:28] == head[92:96] else 0
        return Header(
            True,
            size,
            head[20],
            pages,
            int.from_bytes(head[32:36], "big"),
            int.from_bytes(head[36:40], "big"),
            int.from_bytes(head[60:64], "big"),
            head[18] == 2 or head[19] == 2,
        )


def read_header(path: str) -> Header:
    """The header of the database file at ``path`` (``Header(False)`` if it has none)."""
    with open(path, "rb") as f:
        return Header.parse(f.read(100))


# -- the WAL ------------------------------------------------------------------------------------

_POWERS: dict[int, np.ndarray] = {}


def _powers(n: int) -> np.ndarray:
    """``M**k mod 2**32`` for k in [0, n), M = [[1, 1], [1, 2]]: the matrix of one checksum step."""
    if n not in _POWERS:
        out = np.empty((n, 2, 2), np.uint64)
        m: np.ndarray = np.eye(2, dtype=np.uint64)
        step = np.array([[1, 1], [1, 2]], np.uint64)
        for k in range(n):
            out[k] = m
            m = (step @ m) & 0xFFFFFFFF
        _POWERS[n] = out
    return _POWERS[n]


def wal_checksum(data: bytes, s0: int, s1: int, big_endian: bool) -> tuple[int, int]:
    """SQLite's WAL checksum of ``data`` (a multiple of 8 bytes) continued from ``(s0, s1)``.

    Each pair of 32-bit words (a, b) does ``s0 += a + s1; s1 += b + s0``: a linear map of
    (s0, s1), so n steps are ``M**n s + sum_i M**(n-1-i) c_i`` with ``c_i = (a, a + b)``, computed
    at once in uint64 (products and sums wrap modulo 2**64, which keeps the low 32 bits exact).
    """
    words = np.frombuffer(data, ">u4" if big_endian else "<u4").astype(np.uint64)
    a, b = words[0::2], words[1::2]
    n = len(a)
    p = _powers(n + 1)
    back = p[n - 1 :: -1] if n else p[:0]  # M**(n-1-i) for i = 0..n-1
    c1 = (a + b) & 0xFFFFFFFF
    t0 = int((back[:, 0, 0] * a + back[:, 0, 1] * c1).sum()) if n else 0
    t1 = int((back[:, 1, 0] * a + back[:, 1, 1] * c1).sum()) if n else 0
    mn = p[n]
    r0 = (int(mn[0, 0]) * s0 + int(mn[0, 1]) * s1 + t0) & 0xFFFFFFFF
    r1 = (int(mn[1, 0]) * s0 + int(mn[1, 1]) * s1 + t1) & 0xFFFFFFFF
    return r0, r1


@dataclass
class Wal:
    """The committed frames of a ``-wal`` file: page number -> file offset of its newest data."""

    page_size: int = 0
    frames: dict[int, int] = field(default_factory=dict)
    committed_pages: int = 0  # database size in pages after the last commit (0: no commit)
    frame_count: int = 0  # valid, committed frames read

    @staticmethod
    def read(path: str, page_size_hint: int = 0) -> Wal:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return Wal()
        try:
            return Wal._read(fd, os.fstat(fd).st_size, page_size_hint)
        finally:
            os.close(fd)

    @staticmethod
    def _read(fd: int, size: int, hint: int) -> Wal:
        head = os.pread(fd, 32, 0)
        if len(head) < 32:
            return Wal()
        magic, _version, page, _seq, salt1, salt2, c1, c2 = struct.unpack(">8I", head)
        if magic not in WAL_MAGIC or page < 512 or page > 65536 or page & (page - 1):
            return Wal()
        if hint and page != hint:
            return Wal()
        big = magic & 1 == 1
        s = wal_checksum(head[:24], 0, 0, big)
        if s != (c1, c2):
            return Wal()
        wal, pending = Wal(page), {}
        offset = 32
        while offset + 24 + page <= size:
            frame = os.pread(fd, 24 + page, offset)
            pgno, commit, f1, f2, k1, k2 = struct.unpack(">6I", frame[:24])
            if (f1, f2) != (salt1, salt2) or pgno == 0:
                break  # a frame of an older WAL generation: the log ends here
            s = wal_checksum(frame[:8] + frame[24:], s[0], s[1], big)
            if s != (k1, k2):
                break  # torn or damaged: this frame and every later one are not part of the log
            pending[pgno] = offset + 24
            if commit:
                wal.frames.update(pending)
                wal.frame_count += len(pending)
                pending = {}
                wal.committed_pages = commit
            offset += 24 + page
        return wal


# -- pages ------------------------------------------------------------------------------------


class PageImage:
    """The newest committed version of each page of the database ``path`` (plus ``path-wal``).

    ``page_size`` comes from the header, else from the WAL header, else ``default_page_size``.
    ``present`` is the number of pages the file still holds (a partial last page counts), and
    ``expected`` the number the header (or the WAL's last commit) says the database has.
    """

    def __init__(self, path: str, *, default_page_size: int = 4096, page_size: int | None = None, use_wal: bool = True):
        self.path = path
        self._fd: int | None = os.open(path, os.O_RDONLY)
        try:
            self.file_size = os.fstat(self._fd).st_size
            self.header = Header.parse(os.pread(self._fd, 100, 0))
            self.wal = Wal.read(path + "-wal") if use_wal else Wal()
            if page_size is None:
                page_size = self.header.page_size if self.header.valid else self.wal.page_size or default_page_size
            self.page_size = page_size
            if self.wal.page_size and self.wal.page_size != page_size:
                self.wal = Wal()  # a WAL for another page size cannot belong to this file
            self._wal_fd = os.open(path + "-wal", os.O_RDONLY) if self.wal.frames else None
        except BaseException:
            os.close(self._fd)
            raise
        self.usable = page_size - (self.header.reserved if self.header.valid else 0)
        self.bad_cells = 0
        self.present = -(-self.file_size // page_size)
        self.expected = max(self.wal.committed_pages, self.header.pages if self.header.valid else 0)
        self.count = max(self.present, self.expected, max(self.wal.frames, default=0))

    def close(self) -> None:
        for fd in (self._fd, self._wal_fd):
            if fd is not None:
                os.close(fd)
        self._fd = self._wal_fd = None

    def __enter__(self) -> PageImage:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def page(self, pgno: int) -> bytes | None:
        """Page ``pgno`` (1-based), zero-padded when the file ends inside it; None when absent."""
        fd, wal_fd = self._fd, self._wal_fd
        if fd is None:
            raise ValueError(f"{self.path}: page image is closed")
        if pgno < 1:
            return None
        at = self.wal.frames.get(pgno)
        if at is not None and wal_fd is not None:  # the WAL is open whenever it has frames
            return os.pread(wal_fd, self.page_size, at)
        data = os.pread(fd, self.page_size, (pgno - 1) * self.page_size)
        if not data:
            return None
        return data if len(data) == self.page_size else data.ljust(self.page_size, b"\0")

    def missing_pages(self) -> int:
        """Pages the database had (per its header or WAL) that neither file holds in full."""
        whole = self.file_size // self.page_size
        return sum(1 for p in range(whole + 1, self.expected + 1) if p not in self.wal.frames)


def free_pages(image: PageImage) -> set[int]:
    """Pages on the freelist, read from the header's trunk chain; empty when unreadable."""
    first = image.page(1)
    head = Header.parse(first[:100]) if first else Header(False)
    out: set[int] = set()
    if not head.valid:
        return out
    trunk, limit = head.freelist_trunk, head.freelist_pages
    while trunk and trunk not in out and len(out) <= limit:
        data = image.page(trunk)
        if data is None:
            break
        nxt, count = struct.unpack(">II", data[:8])
        if nxt > image.count or count > (image.usable - 8) // 4:
            break  # not a trunk page: a damaged pointer must not hide a live page
        leaves = struct.unpack(f">{count}I", data[8 : 8 + 4 * count])
        if any(p < 2 or p > image.count for p in leaves):
            break
        out.add(trunk)
        out.update(leaves)
        trunk = nxt
    return out


# -- cells and records --------------------------------------------------------------------------


def varint(b: bytes, i: int) -> tuple[int, int]:
    """The varint at ``b[i]`` and the offset after it."""
    v = 0
    for k in range(8):
        c = b[i + k]
        v = (v << 7) | (c & 0x7F)
        if c < 0x80:
            return v, i + k + 1
    return (v << 8) | b[i + 8], i + 9


_INT_SIZES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def record(payload: bytes) -> list:
    """The values of one record: None, int, float, str (UTF-8; invalid bytes raise) or bytes."""
    size, i = varint(payload, 0)
    if size > len(payload) or size < 1:
        raise ValueError("record header runs past the payload")
    types = []
    while i < size:
        t, i = varint(payload, i)
        types.append(t)
    out: list[int | float | str | bytes | None] = []
    at = size
    for t in types:
        if t == 0:
            out.append(None)
        elif t in _INT_SIZES:
            n = _INT_SIZES[t]
            if at + n > len(payload):
                raise ValueError("record body cut short")
            out.append(int.from_bytes(payload[at : at + n], "big", signed=True))
            at += n
        elif t == 7:
            if at + 8 > len(payload):
                raise ValueError("record body cut short")
            out.append(struct.unpack(">d", payload[at : at + 8])[0])
            at += 8
        elif t in (8, 9):
            out.append(t - 8)
        elif t >= 12:
            n = (t - 12) >> 1
            if at + n > len(payload):
                raise ValueError("record body cut short")
            chunk = payload[at : at + n]
            out.append(bytes(chunk) if t % 2 == 0 else chunk.decode("utf-8"))
            at += n
        else:
            raise ValueError(f"reserved serial type {t}")
    return out


def _local_size(p: int, usable: int, table: bool) -> int:
    """How many of a payload's ``p`` bytes a leaf cell holds on its own page."""
    x = usable - 35 if table else ((usable - 12) * 64 // 255) - 23
    if p <= x:
        return p
    m = ((usable - 12) * 32 // 255) - 23
    k = m + (p - m) % (usable - 4)
    return k if k <= x else m


def _payload(image: PageImage, data: bytes, at: int, p: int, table: bool) -> bytes:
    local = _local_size(p, image.usable, table)
    if at + local > image.usable:
        raise ValueError("cell runs past the page")
    if local == p:
        return data[at : at + p]
    parts = [data[at : at + local]]
    have = local
    nxt = int.from_bytes(data[at + local : at + local + 4], "big")
    for _ in range(_MAX_OVERFLOW):
        if have >= p:
            break
        page = image.page(nxt) if nxt else None
        if page is None:
            raise ValueError("overflow chain broken")
        take = min(p - have, image.usable - 4)
        parts.append(page[4 : 4 + take])
        have += take
        nxt = int.from_bytes(page[:4], "big")
    if have < p:
        raise ValueError("overflow chain too long")
    return b"".join(parts)


def page_kind(image: PageImage, pgno: int, data: bytes) -> int:
    """The B-tree page type byte (0 when ``data`` is not a B-tree page)."""
    kind = data[100 if pgno == 1 else 0]
    return kind if kind in (TABLE_LEAF, TABLE_INTERIOR, INDEX_LEAF, INDEX_INTERIOR) else 0


def cells(image: PageImage, pgno: int, data: bytes) -> Iterator[tuple[int | None, list | None]]:
    """The records of the leaf or index page ``pgno``: ``(rowid, values)`` on a table leaf,
    ``(None, values)`` on an index page. A cell that does not parse yields ``values = None`` (on a
    table leaf its rowid, when that much was readable) and counts in ``image.bad_cells``.
    Interior table pages hold no records and yield nothing."""
    base = 100 if pgno == 1 else 0
    kind = data[base]
    if kind not in (TABLE_LEAF, INDEX_LEAF, INDEX_INTERIOR):
        return
    head = 12 if kind == INDEX_INTERIOR else 8
    n = int.from_bytes(data[base + 3 : base + 5], "big")
    if base + head + 2 * n > image.usable:
        return
    for k in range(n):
        ptr = int.from_bytes(data[base + head + 2 * k : base + head + 2 * k + 2], "big")
        rowid = None
        try:
            if ptr < base + head + 2 * n or ptr >= image.usable:
                raise ValueError("cell pointer outside the page")
            at = ptr + (4 if kind == INDEX_INTERIOR else 0)
            p, at = varint(data, at)
            if kind == TABLE_LEAF:
                rowid, at = varint(data, at)
                if rowid >= 1 << 63:
                    rowid -= 1 << 64
            yield rowid, record(_payload(image, data, at, p, kind == TABLE_LEAF))
        except (ValueError, IndexError, UnicodeDecodeError, struct.error):
            image.bad_cells += 1
            yield rowid, None
