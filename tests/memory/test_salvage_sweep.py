"""The hostile sweep's classes of damage to a memory store, as property and table tests.

* truncated anywhere, and zeroed anywhere (the header, the first page, any run of bytes), for
  stores of 10 to 3,000 turns here (20,000 in the slow run; 1,000,000 in
  ``scripts/salvage_sweep.py``): salvage recovers at least 99 % of the rows that the damaged file
  still holds whole, every one bit-identical, says how many turns the store held and how many
  were lost, and leaves the source untouched;
* the ``-wal`` file deleted (or cut anywhere) after a crash: opening says how many acknowledged
  turns are missing, salvage names exactly those ids;
* another program's SQLite file: refused, byte for byte unmodified, no companion file created;
* a row whose content is damaged: ``stats --full`` finds it, the quick check says it did not look.

"Rows the file still holds whole" is computed without parsing SQLite at all: each turn's vectors
are located in the intact file by their bytes, and a row counts when its cell (the 300 bytes
before its vectors, the vectors, and its page's first 16 bytes) lies in bytes left intact.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3

import pytest
from _gen import make_turn
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from v22sdk.errors import MemoryStoreCorrupt, MemoryStoreError
from v22sdk.memory import SQLiteTier, salvage

SIZES = (10, 300, 3000)
PAGE = 8192
_SETTINGS = settings(
    max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


class Store:
    """A checkpointed store of ``n`` turns: its bytes and where each turn's vectors lie in them."""

    def __init__(self, folder, n: int):
        self.n = n
        path = str(folder / f"s{n}.db")
        with SQLiteTier(path) as s:
            for a in range(0, n, 1000):
                s.commit([make_turn(k, "t") for k in range(a + 1, min(n, a + 1000) + 1)])
        with open(path, "rb") as f:
            self.data = f.read()
        self.ack = open(path + "-ack", "rb").read()
        self.spans = {}
        at = 0
        for k in range(1, n + 1):
            t = make_turn(k, "t")
            sent = t.sent_vec.astype("<f4").tobytes()
            found = self.data.find(sent, max(0, at - 4 * PAGE))
            if found < 0:
                found = self.data.find(sent)
            assert found > 0 and self.data[found + 1024 : found + 2560] == t.mem_emb.astype("<f4").tobytes()
            self.spans[k] = found
            at = found

    def whole(self, intact) -> set[int]:
        """Turns whose cell lies entirely in bytes for which ``intact(lo, hi)`` is true."""
        out = set()
        for k, s in self.spans.items():
            page = s // PAGE * PAGE
            if intact(page, page + 16) and intact(s - 300, s + 2560 + 16):
                out.add(k)
        return out


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stores")
    return {n: Store(folder, n) for n in SIZES}


def _digest(folder):
    return {f: hashlib.sha256((folder / f).read_bytes()).hexdigest() for f in sorted(os.listdir(folder))}


def _salvage_checked(tmp_path, store: Store, data: bytes, reference: set[int], ack: bool = True):
    """Salvage ``data`` (the store's damaged bytes, with its -ack mark) and check the report."""
    work = tmp_path / f"w{len(os.listdir(tmp_path))}"
    work.mkdir()
    src = work / "src.db"
    src.write_bytes(data)
    if ack:
        (work / "src.db-ack").write_bytes(store.ack)
    before = _digest(work)
    out = tmp_path / f"{work.name}-out.db"
    try:
        report = salvage(str(src), str(out))
    except MemoryStoreError:
        raise
    except ValueError as exc:  # InputError: nothing recognisable left
        assert not reference, (exc, len(reference))
        assert not out.exists()
        return None, set()
    assert _digest(work) == before  # the source, its -ack and its folder untouched
    with SQLiteTier(str(out)) as s:
        rows = list(s.iter_turns())
        assert s.integrity_check() == ["ok"]
    got = {t.id for t in rows}
    for t in rows[:: max(1, len(rows) // 20)]:
        want = make_turn(t.id, "t")
        assert t.sent_vec.tobytes() == want.sent_vec.tobytes() and t.mem_emb.tobytes() == want.mem_emb.tobytes()
        assert t.digest == want.digest and t.attrs == want.attrs
    assert got <= set(range(1, store.n + 1))
    assert len(got & reference) >= 0.99 * len(reference), (len(got & reference), len(reference))
    assert report["recovered"] == len(got)
    if report["held"] is not None:
        assert report["held"] == store.n and report["lost"] == store.n - len(got)
        assert set(report["skipped_ids"]) == set(range(1, store.n + 1)) - got
    assert report["complete"] == (len(got) == store.n)
    return report, got


@_SETTINGS
@given(size=st.sampled_from(SIZES), frac=st.floats(0.0, 1.0))
@example(size=3000, frac=0.5)  # the sweep's case: recovered 0 of 3,000, "success"
@example(size=3000, frac=0.75)
@example(size=300, frac=0.0)
def test_a_store_cut_anywhere_gives_back_what_the_file_still_holds(stores, tmp_path, size, frac):
    store = stores[size]
    cut = int(len(store.data) * frac)
    reference = store.whole(lambda lo, hi: hi <= cut)
    report, got = _salvage_checked(tmp_path, store, store.data[:cut], reference)
    if report is not None and cut < len(store.data) and size > 10:
        assert report["missing_pages"] > 0 or report["lost"] > 0 or len(got) == size


@_SETTINGS
@given(size=st.sampled_from(SIZES), start=st.floats(0.0, 1.0), length=st.integers(1, 3 * PAGE))
@example(size=3000, start=0.0, length=100)  # the header zeroed: every row is intact
@example(size=3000, start=0.0, length=PAGE)  # the first page zeroed
@example(size=300, start=0.0, length=2 * PAGE)
def test_a_store_zeroed_anywhere_gives_back_every_intact_row(stores, tmp_path, size, start, length):
    store = stores[size]
    lo = int(len(store.data) * start)
    hi = min(len(store.data), lo + length)
    data = store.data[:lo] + bytes(hi - lo) + store.data[hi:]
    reference = store.whole(lambda a, b: b <= lo or a >= hi)
    report, got = _salvage_checked(tmp_path, store, data, reference)
    if lo == 0 and size == 3000:
        assert report["header"] == "rebuilt" and got == set(range(1, 3001))  # nothing but the header lost


def test_without_its_ack_mark_a_header_rebuilt_store_still_counts_from_its_sequence(stores, tmp_path):
    store = stores[300]
    data = bytes(100) + store.data[100:]
    report, got = _salvage_checked(tmp_path, store, data, set(range(1, 301)), ack=False)
    assert report["complete"] and report["held"] == 300 and report["header"] == "rebuilt"


@pytest.mark.parametrize(
    "page, damage",
    [
        (8192, "page size field says 4 KiB"),
        (8192, "page size field says 64 KiB"),
        (4096, "none"),
        (4096, "header zeroed"),
        (4096, "first page zeroed"),
    ],
)
def test_the_page_size_is_found_from_the_rows_when_the_header_cannot_be_trusted(tmp_path, monkeypatch, page, damage):
    """Stores written before 8 KiB pages have 4 KiB pages; a damaged header may state any size."""
    import v22sdk.memory.sqlite_tier as st

    monkeypatch.setattr(st, "PAGE_SIZE", page)  # the page size a new store is created with
    db = str(tmp_path / "p.db")
    with SQLiteTier(db) as s:
        s.commit([make_turn(k, "t") for k in range(1, 151)])
    monkeypatch.undo()
    data = bytearray(open(db, "rb").read())
    if damage.startswith("page size"):
        data[16:18] = (4096 if "4 KiB" in damage else 1).to_bytes(2, "big")
    elif damage == "header zeroed":
        data[:100] = bytes(100)
    elif damage == "first page zeroed":
        data[:page] = bytes(page)
    open(db, "wb").write(bytes(data))
    report = salvage(db, str(tmp_path / "o.db"))
    assert report["recovered"] == 150 and report["complete"] and report["held"] == 150
    assert report["header"] == ("ok" if damage == "none" else "rebuilt")


def test_salvage_counts_removed_turns_as_removed_not_lost(tmp_path):
    db = str(tmp_path / "r.db")
    with SQLiteTier(db) as s:
        s.commit([make_turn(k, "t") for k in range(1, 41)])
        s.batched_remove([3, 17, 40])
    report = salvage(db, str(tmp_path / "o.db"))
    assert report["complete"] and report["held"] == 37 and report["recovered"] == 37
    with SQLiteTier(str(tmp_path / "o.db")) as s:  # the new store goes on after id 40, not reusing it
        assert s.commit([make_turn(41, "t")])[0].id == 41
    again = salvage(str(tmp_path / "o.db"), str(tmp_path / "o2.db"))
    assert again["complete"] and again["held"] == 38


def test_pages_freed_by_removals_do_not_bring_removed_turns_back(tmp_path):
    db = str(tmp_path / "f.db")
    with SQLiteTier(db) as s:
        s.commit([make_turn(k, "t") for k in range(1, 401)])
        s._conn.execute("PRAGMA secure_delete = 0")  # Debian's SQLite zeroes deleted rows; others keep them
        s.batched_remove(list(range(50, 351)))  # whole leaf pages go to the free list
        s._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = open(db, "rb").read()
    assert int.from_bytes(data[36:40], "big") > 50  # free pages, still holding the old rows' bytes
    assert make_turn(200, "t").sent_vec.astype("<f4").tobytes() in data
    report = salvage(db, str(tmp_path / "o.db"))
    with SQLiteTier(str(tmp_path / "o.db")) as s:
        assert [t.id for t in s.iter_turns()] == list(range(1, 50)) + list(range(351, 401))
    assert report["complete"] and report["held"] == 99
    # a header whose free-list pointer is damaged (it names a live leaf page) hides no live row
    bad = bytearray(data)
    leaf = next(
        p
        for p in range(2, len(data) // PAGE)
        if data[p * PAGE] == 0x0D and int.from_bytes(data[p * PAGE + 3 : p * PAGE + 5], "big") > 0
    )
    bad[32:36] = (leaf + 1).to_bytes(4, "big")
    (tmp_path / "bad.db").write_bytes(bytes(bad))
    again = salvage(str(tmp_path / "bad.db"), str(tmp_path / "o2.db"))
    assert again["recovered"] >= 99


# -- the WAL --------------------------------------------------------------------------------------


def _crashed_with_wal(tmp_path, in_db: int, in_wal: int):
    """A store with ``in_db`` turns checkpointed and ``in_wal`` more only in its WAL, copied as a
    crash leaves it (db, -wal, -shm, -ack; no checkpoint at close)."""
    src = tmp_path / "live"
    src.mkdir()
    s = SQLiteTier(str(src / "m.db"))
    s._conn.execute("PRAGMA wal_autocheckpoint = 0")
    s.commit([make_turn(k, "t") for k in range(1, in_db + 1)])
    s._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for k in range(in_db + 1, in_db + in_wal + 1):
        s.commit([make_turn(k, "t")])
    crash = tmp_path / "crash"
    crash.mkdir()
    for suffix in ("", "-wal", "-shm", "-ack"):
        shutil.copy(str(src / "m.db") + suffix, str(crash / "m.db") + suffix)
    s.close()
    return crash


@pytest.mark.parametrize("in_db, in_wal", [(1, 12), (100, 50), (300, 1)])
def test_deleting_the_wal_after_a_crash_is_reported_with_the_count(tmp_path, capsys, in_db, in_wal):
    from v22sdk.cli import main

    crash = _crashed_with_wal(tmp_path, in_db, in_wal)
    full = salvage(str(crash / "m.db"), str(tmp_path / "full.db"))  # with its WAL: everything
    assert full["complete"] and full["recovered"] == in_db + in_wal and full["wal_frames"] > 0
    os.remove(crash / "m.db-wal")
    lost = f"ids {in_db + 1}-{in_db + in_wal}" if in_wal > 1 else f"id {in_db + 1}"
    with pytest.raises(MemoryStoreCorrupt, match=f"{in_wal} acknowledged turn\\(s\\) are missing \\({lost}\\)"):
        SQLiteTier(str(crash / "m.db"))
    with pytest.raises(SystemExit) as exit_:
        main(["memory", "--memory", str(crash / "m.db"), "stats"])
    err = capsys.readouterr().err
    assert exit_.value.code == 1 and f"{in_wal} acknowledged turn(s) are missing" in err and err.count("\n") == 1
    report = salvage(str(crash / "m.db"), str(tmp_path / "out.db"))
    assert report["recovered"] == in_db and report["held"] == in_db + in_wal and report["lost"] == in_wal
    assert report["skipped_ids"] == list(range(in_db + 1, in_db + in_wal + 1)) and not report["complete"]
    with SQLiteTier(str(tmp_path / "out.db")) as s:  # the salvaged store opens: the loss is on record
        assert len(s) == in_db and s.commit([make_turn(999, "t")])[0].id == in_db + in_wal + 1


@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frac=st.floats(0.0, 1.0))
def test_a_wal_cut_anywhere_salvages_to_its_committed_prefix(tmp_path_factory, frac):
    tmp = tmp_path_factory.mktemp("walcut")
    crash = _crashed_with_wal(tmp, 5, 30)
    wal = crash / "m.db-wal"
    cut = int(os.path.getsize(wal) * frac)
    with open(wal, "r+b") as f:
        f.truncate(cut)
    report = salvage(str(crash / "m.db"), str(tmp / "o.db"))
    with SQLiteTier(str(tmp / "o.db")) as s:
        ids = [t.id for t in s.iter_turns()]
    assert ids == list(range(1, len(ids) + 1)) and len(ids) >= 5  # a prefix: commits are whole
    assert report["held"] == 35 and report["lost"] == 35 - len(ids)  # the ack mark knows of all 35


# -- foreign files ----------------------------------------------------------------------------------


def _foreign(path, kind):
    c = sqlite3.connect(path)
    if kind == "wal_only":
        c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA wal_autocheckpoint = 0")
    c.execute("CREATE TABLE notes (x TEXT)")
    c.execute("INSERT INTO notes VALUES ('keep me')")
    if kind == "user_version_1":
        c.execute("PRAGMA user_version = 1")
    if kind == "newer":
        c.execute("PRAGMA user_version = 7")
    c.commit()
    return c  # kept open for "wal_only", so its WAL is not checkpointed away


@pytest.mark.parametrize(
    "kind, problem",
    [
        ("rollback", "not a v22sdk memory store \\(tables: notes\\)"),
        ("wal_only", "not a v22sdk memory store \\(tables: notes\\)"),
        ("user_version_1", "not a v22sdk memory store \\(tables: notes\\)"),
        ("newer", "schema version 7; this v22sdk reads up to 1: upgrade v22sdk"),
    ],
)
def test_a_foreign_sqlite_file_is_refused_unmodified(tmp_path, kind, problem):
    folder = tmp_path / "f"
    folder.mkdir()
    path = folder / "other.db"
    conn = _foreign(str(path), kind)
    if kind == "wal_only":  # a snapshot as the other program leaves it while running
        snap = tmp_path / "snap"
        snap.mkdir()
        for f in os.listdir(folder):
            shutil.copy(folder / f, snap / f)
        folder, path = snap, snap / "other.db"
    conn.close()
    before = _digest(folder)
    with pytest.raises(MemoryStoreError, match=problem):
        SQLiteTier(str(path))
    from v22sdk.memory import TieredMemory

    with pytest.raises(MemoryStoreError, match=problem):
        TieredMemory(str(path))
    assert _digest(folder) == before  # not switched to WAL, no -shm, -wal or -ack created


# -- the full check ------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["sent_vec", "mem_emb", "summary"])
def test_stats_full_verifies_every_row_and_says_which_check_ran(tmp_path, capsys, where):
    from v22sdk.cli import main

    db = str(tmp_path / "m.db")
    with SQLiteTier(db) as s:
        s.commit([make_turn(k, "t") for k in range(1, 31)])
    t = make_turn(12, "t")
    needle = {
        "sent_vec": t.sent_vec.astype("<f4").tobytes()[:64],
        "mem_emb": t.mem_emb.astype("<f4").tobytes()[:64],
        "summary": b"t #12",
    }[where]
    data = bytearray(open(db, "rb").read())
    at = data.index(needle) + 2
    data[at] ^= 0x01
    open(db, "wb").write(bytes(data))
    main_args = ["memory", "--memory", db, "stats", "--json"]
    with pytest.raises(SystemExit) as quick:
        main(main_args)
    out = capsys.readouterr()
    assert quick.value.code == 0 and json.loads(out.out)["check"].startswith("quick: quick_check ok")
    with pytest.raises(SystemExit) as full:
        main(main_args + ["--full"])
    err = capsys.readouterr().err
    assert full.value.code == 1 and "1 of 30 turns fail their checksum (ids 12)" in err and err.count("\n") == 1
    with SQLiteTier(str(tmp_path / "ok.db")) as s:
        s.commit([make_turn(1, "t")])
    with pytest.raises(SystemExit) as ok:
        main(["memory", "--memory", str(tmp_path / "ok.db"), "stats", "--full", "--json"])
    out = capsys.readouterr().out
    assert ok.value.code == 0 and json.loads(out)["check"] == "full: integrity_check ok, 1 row checksums ok"
