"""Reliability of the L3 store: crashes, torn WAL, corruption + salvage, disk full, two writers.

Bounded: about 15 kills, a few dozen reopenings; the whole file runs in well under a minute.
"""

import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest
from _checks import acks, assert_rows_are_the_stream, assert_two_writers_union, finish
from _gen import make_turn

from v22sdk.errors import MemoryStoreCorrupt, MemoryStoreError
from v22sdk.memory import SQLiteTier, salvage

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WRITER = os.path.join(HERE, "_writer.py")
ENV = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}


def spawn(db, tag, count, fsize=None):
    args = [sys.executable, WRITER, db, tag, str(count)] + ([str(fsize)] if fsize else [])
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    assert p.stdout.readline().strip() == "READY", p.stderr.read()
    return p


def test_kill_9_during_writes_loses_no_acknowledged_turn(db):
    rng = random.Random(1234)
    acked, before = [], 0
    for _ in range(15):
        p = spawn(db, "t", 100_000)
        time.sleep(rng.uniform(0.0, 0.2))
        p.send_signal(signal.SIGKILL)
        out, _ = finish(p)
        assert p.returncode == -signal.SIGKILL
        now = acks(out)
        acked += now
        with SQLiteTier(db) as store:  # opening runs quick_check: raises if damaged
            assert store.integrity_check() == ["ok"]
            n = assert_rows_are_the_stream(store)  # gap-free ids, bit-identical vectors
        last = max([before] + [a for a, _ in now])
        assert all(a <= n for a, _ in acked)  # every acknowledged turn is there
        assert last <= n <= last + 1  # plus at most the one in flight when killed
        assert all(a == k for a, k in acked)
        before = n
    assert len(acked) > 15  # the writer did get turns acknowledged between kills


def _wal_snapshot(tmp_path, n):
    """A db + -wal pair holding ``n`` committed turns in the WAL (as from a stopped writer)."""
    src = str(tmp_path / "src.db")
    store = SQLiteTier(src)
    store._conn.execute("PRAGMA wal_autocheckpoint = 0")
    store.commit([make_turn(1, "t")])
    store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # turn 1 in the db file, WAL empty
    for k in range(2, n + 1):
        store.commit([make_turn(k, "t")])
    snap = tmp_path / "snap"
    snap.mkdir()
    shutil.copy(src, snap / "m.db")
    shutil.copy(src + "-wal", snap / "m.db-wal")
    store.close()
    return snap


def test_torn_wal_tail_reopens_to_a_clean_prefix(tmp_path):
    snap = _wal_snapshot(tmp_path, 30)
    wal_size = os.path.getsize(snap / "m.db-wal")
    rng = random.Random(5)
    cuts = sorted(rng.sample(range(32, wal_size), 12)) + [wal_size]
    seen = []
    for i, cut in enumerate(cuts):
        d = tmp_path / f"cut{i}"
        shutil.copytree(snap, d)
        with open(d / "m.db-wal", "r+b") as f:
            f.truncate(cut)
        with SQLiteTier(str(d / "m.db")) as store:
            seen.append(assert_rows_are_the_stream(store))
            assert store.integrity_check() == ["ok"]
    assert seen == sorted(seen) and seen[-1] == 30 and seen[0] >= 1
    assert len(set(seen)) > 5  # the cuts really landed in different transactions
    # A garbled byte in a frame invalidates that frame and everything after it: still a prefix.
    d = tmp_path / "flip"
    shutil.copytree(snap, d)
    with open(d / "m.db-wal", "r+b") as f:
        f.seek(wal_size - 1000)
        b = f.read(1)
        f.seek(wal_size - 1000)
        f.write(bytes([b[0] ^ 0xFF]))
    with SQLiteTier(str(d / "m.db")) as store:
        assert 1 <= assert_rows_are_the_stream(store) < 30


def _write_closed_store(db, n):
    with SQLiteTier(db) as store:
        store.commit([make_turn(k, "t") for k in range(1, n + 1)])
    assert not os.path.exists(db + "-wal") or os.path.getsize(db + "-wal") == 0


def _leaf_pages(db):
    with open(db, "rb") as f:
        data = f.read()
    page = int.from_bytes(data[16:18], "big")
    return page, [i for i in range(1, len(data) // page) if data[i * page] == 0x0D]


def test_corrupt_page_raises_naming_the_file_and_salvage_recovers_the_rest(tmp_path, db):
    _write_closed_store(db, 60)
    page, leaves = _leaf_pages(db)
    victim = leaves[len(leaves) // 2]
    with open(db, "r+b") as f:
        f.seek(victim * page)
        f.write(b"\xff" * 12)  # invalid page type and header
    with pytest.raises(MemoryStoreCorrupt) as err:
        SQLiteTier(db)
    assert db in str(err.value) and "salvage" in str(err.value)
    from v22sdk.memory import TieredMemory

    with pytest.raises(MemoryStoreCorrupt):
        TieredMemory(db)
    size_before = os.path.getsize(db)
    out = str(tmp_path / "salvaged.db")
    report = salvage(db, out)
    assert os.path.getsize(db) == size_before  # the source is kept as it was
    with SQLiteTier(out) as store:
        rows = list(store.iter_turns())
        assert store.integrity_check() == ["ok"]
    assert 55 <= len(rows) < 60 and report["recovered"] == len(rows)
    for t in rows:  # every salvaged turn is bit-identical to what was written, same id
        want = make_turn(t.id, "t")
        assert t.sent_vec.tobytes() == want.sent_vec.tobytes() and t.digest == want.digest
    with pytest.raises(MemoryStoreError, match="already exists"):
        salvage(db, out)


def test_damaged_row_content_is_caught_by_its_checksum(tmp_path, db):
    _write_closed_store(db, 20)
    want = make_turn(7, "t").sent_vec.tobytes()
    with open(db, "r+b") as f:
        data = f.read()
        at = data.index(want)
        f.seek(at + 100)
        f.write(b"\x00\x00\x80\x7f")  # one float becomes +inf: structure intact, content wrong
    SQLiteTier(db).close()  # quick_check cannot see it ...
    with pytest.raises(MemoryStoreCorrupt, match="turn 7 fails its checksum"):
        SQLiteTier(db).get(7)  # ... the row checksum does
    from v22sdk.memory import TieredMemory

    with pytest.raises(MemoryStoreCorrupt, match="memory.sqlite3"):
        TieredMemory(db)  # rebuilding L2 reads every recent row
    report = salvage(db, str(tmp_path / "s.db"))
    assert report["recovered"] == 19 and report["skipped_ids"] == [7]


def test_not_a_database_is_corrupt_not_empty(db):
    with open(db, "wb") as f:
        f.write(b"this is not a memory store" * 100)
    with pytest.raises(MemoryStoreCorrupt, match="not an SQLite database"):
        SQLiteTier(db)
    with open(db, "rb") as f:
        assert f.read(4) == b"this"  # untouched


def test_disk_full_write_raises_is_not_acknowledged_nor_visible(db):
    """SQLite's own full-disk path, via PRAGMA max_page_count (SQLITE_FULL)."""
    store = SQLiteTier(db)
    store.commit([make_turn(k, "t") for k in range(1, 6)])
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(MemoryStoreError, match="full"):
        store.commit([make_turn(6, "t"), make_turn(7, "t")])
    assert len(store) == 5 and store.max_id() == 5
    store.close()
    with SQLiteTier(db) as store:  # a new connection: no page limit, nothing of the failed batch
        assert assert_rows_are_the_stream(store) == 5
        assert store.commit([make_turn(6, "t")])[0].id == 6  # no gap left by the failure
        assert store.integrity_check() == ["ok"]


def test_file_size_limit_in_a_writer_process(db):
    """A real OS error (EFBIG from RLIMIT_FSIZE) in the middle of writing."""
    _write_closed_store(db, 3)
    limit = os.path.getsize(db) + 60_000
    p = spawn(db, "t", 10_000, fsize=limit)
    out, err = finish(p, 60)
    assert p.returncode == 3, err
    fails = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    assert len(fails) == 1 and "nothing was stored" in fails[0]
    failed_k = int(fails[0].split()[1])
    acked = acks(out)
    with SQLiteTier(db) as store:
        n = assert_rows_are_the_stream(store)
        assert n == 3 + len(acked) == failed_k - 1  # every ACK kept; the failed turn absent
        assert store.integrity_check() == ["ok"]


def test_two_writer_processes_union_survives(db):
    SQLiteTier(db).close()
    a, b = spawn(db, "A", 120), spawn(db, "B", 120)
    (oa, ea), (ob, eb) = finish(a), finish(b)
    assert a.returncode == 0 and b.returncode == 0, ea + eb
    assert "locked" not in ea + eb
    with SQLiteTier(db) as store:
        assert_two_writers_union(store, oa, ob)


def test_salvage_reads_a_hot_wal(tmp_path):
    """Salvage of a copy taken while a writer was live (hot WAL, no -shm) keeps every commit."""
    snap = _wal_snapshot(tmp_path, 12)
    report = salvage(str(snap / "m.db"), str(tmp_path / "out.db"))
    assert report["recovered"] == 12 and report["skipped_ids"] == []
    with SQLiteTier(str(tmp_path / "out.db")) as store:
        assert assert_rows_are_the_stream(store) == 12
