"""Hostile inputs to the memory layer: truncated or foreign stores given to salvage, text that is
not UTF-8, impossible times and numbers in imports, awkward ``--out`` targets. Each must end in a
typed error naming the input (or be stored safely), never an internal error or lost data."""

import json
import os
import sqlite3
import stat
import threading
import warnings

import numpy as np
import pytest
from _gen import make_turn
from click.testing import CliRunner

from v22sdk.errors import InputError
from v22sdk.memory import SQLiteTier, salvage
from v22sdk.memory.cli import memory
from v22sdk.memory.jsonl import import_jsonl, turn_to_record
from v22sdk.memory.turn import Turn

N = 120  # ~3 turns per 8 KiB page: about 40 leaf pages


@pytest.fixture(scope="module")
def store_bytes(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("src") / "m.db")
    with SQLiteTier(path) as s:
        s.commit([make_turn(k, "t") for k in range(1, N + 1)])
    with open(path, "rb") as f:
        return f.read()


def _check_rows(path):
    with SQLiteTier(path) as s:
        rows = list(s.iter_turns())
        assert s.integrity_check() == ["ok"]
    for t in rows:
        want = make_turn(t.id, "t")
        assert t.sent_vec.tobytes() == want.sent_vec.tobytes() and t.digest == want.digest
    return [t.id for t in rows]


# -- 1. salvage of truncated and foreign files --------------------------------------------------


@pytest.mark.parametrize("cut", ["three_quarters", "page_boundary"])
def test_salvage_of_a_truncated_store_recovers_what_survived(tmp_path, store_bytes, cut):
    page = int.from_bytes(store_bytes[16:18], "big")
    size = len(store_bytes) * 3 // 4 if cut == "three_quarters" else (len(store_bytes) // page * 2 // 3) * page
    src = tmp_path / "cut.db"
    src.write_bytes(store_bytes[:size])
    before = sorted(os.listdir(tmp_path))
    report = salvage(str(src), str(tmp_path / "out.db"))
    ids = _check_rows(str(tmp_path / "out.db"))
    assert report["recovered"] == len(ids) >= N // 2  # not 0, as SQLite alone would give
    assert ids == list(range(1, len(ids) + 1))  # a truncation loses the newest rows only
    # unreadable = exactly the ids that were stored and are lost (not a fixed 4096)
    assert report["skipped_ids"] == list(range(len(ids) + 1, N + 1))
    assert src.read_bytes() == store_bytes[:size]  # source untouched, nothing written beside it
    assert sorted(os.listdir(tmp_path)) == sorted(before + ["out.db"])


def test_salvage_cli_reports_real_counts(tmp_path, store_bytes):
    src = tmp_path / "cut.db"
    src.write_bytes(store_bytes[: len(store_bytes) * 3 // 4])
    res = CliRunner().invoke(memory, ["salvage", str(src), str(tmp_path / "o.db")])
    assert getattr(res.exception, "exit_code", 0) == 5, res.output  # turns were lost: not a success
    got = int(res.output.split("recovered ")[1].split()[0])
    assert got > 0 and f"recovered {got} of {N} turns" in res.output
    assert f"{N - got} lost (ids {got + 1}, {got + 2}," in res.output


@pytest.mark.parametrize("content", [b"hello\n", b"", b"PK\x03\x04" + bytes(5000)])
def test_salvage_refuses_a_file_that_is_not_a_store(tmp_path, content):
    src = tmp_path / "x.db"
    src.write_bytes(content)
    with pytest.raises(InputError, match="x.db: .*nothing to salvage"):
        salvage(str(src), str(tmp_path / "o.db"))
    assert not (tmp_path / "o.db").exists() and src.read_bytes() == content
    res = CliRunner().invoke(memory, ["salvage", str(src), str(tmp_path / "o.db")])
    assert res.exit_code != 0 and not (tmp_path / "o.db").exists()


def test_salvage_refuses_an_sqlite_file_without_turns(tmp_path):
    src = str(tmp_path / "other.db")
    with sqlite3.connect(src) as c:
        c.execute("CREATE TABLE t (x)")
    with pytest.raises(InputError, match="without a 'turns' table"):
        salvage(src, str(tmp_path / "o.db"))
    assert not (tmp_path / "o.db").exists()


# -- 2. text that is not UTF-8 ------------------------------------------------------------------


def test_undecodable_display_text_is_stored_escaped(db):
    # '\udcff' is how Python carries the byte 0xff of argv ($'ab\xffcd'); '\ud800' from JSON.
    t = Turn(
        make_turn(1).sent_vec, make_turn(1).mem_emb, summary="ab\udcffcd <- x", digest="d\ud800", modality="te\udcffxt"
    )
    with SQLiteTier(db) as s:
        [stored] = s.commit([t])
        got = s.get(stored.id)
    assert got.summary == "ab\\xffcd <- x" and got.digest == "d\\ud800" and got.modality == "te\\xffxt"
    assert Turn(t.sent_vec, t.mem_emb, summary="naïve ✓").summary == "naïve ✓"  # valid text kept


def test_conversation_that_is_not_text_is_an_input_error(db):
    from v22sdk.engine.memory_head import TurnInfo
    from v22sdk.memory import TieredMemory

    t = make_turn(1)
    with pytest.raises(InputError, match="conversation 'c\\\\udcff': is not valid UTF-8"):
        Turn(t.sent_vec, t.mem_emb, conversation="c\udcff")
    with TieredMemory(db, l1_size=2, l2_size=4) as m:
        for bad in ("c\udcff", "a\x00b", "x\ny"):
            with pytest.raises(InputError, match="conversation"):
                m.write(t.sent_vec[None], t.mem_emb[None], [frozenset()], [TurnInfo(conversation=bad)])
        [i] = m.write(
            t.sent_vec[None], t.mem_emb[None], [frozenset()], [TurnInfo(conversation="ok", summary="out <- ab\udcffcd")]
        )
        assert m.get(i).summary == "out <- ab\\xffcd" and len(m) == 1


def _record(**change):
    rec = turn_to_record(make_turn(3).with_id(3, 1_700_000_000.0, 3))
    rec.update(change)
    return json.dumps(rec)


def _import_fails(tmp_path, data: bytes, match: str, name="in.jsonl"):
    f = tmp_path / name
    f.write_bytes(data)
    target = str(tmp_path / "t.db")
    with SQLiteTier(target) as s:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e.g. numpy's overflow RuntimeWarning
            with pytest.raises(InputError, match=match):
                import_jsonl(s, f)
        assert len(s) == 0  # nothing written


def test_import_of_non_utf8_binary_and_surrogate_input(tmp_path):
    good = _record().encode() + b"\n"
    _import_fails(tmp_path, good + b'{"summary": "\xff"}\n', r"in.jsonl:2: not UTF-8 text \(byte 0xff")
    _import_fails(tmp_path, b"\x89PNG\r\n\x1a\n" + bytes(range(256)), r"some.png:1: not UTF-8", name="some.png")
    _import_fails(
        tmp_path,
        good + _record(conversation="\ud800").encode() + b"\n",
        r"in.jsonl:2: 'conversation' '\\ud800': is not valid UTF-8",
    )
    _import_fails(tmp_path, _record(attrs=["ok", "\udfff"]).encode() + b"\n", r"in.jsonl:1: .*attrs")
    _import_fails(tmp_path, _record(conversation="a\u0000b").encode() + b"\n", r"in.jsonl:1: .*control character")
    # a lone surrogate in display text is stored (escaped); a leading BOM is accepted
    f = tmp_path / "ok.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + _record(summary="s\ud800").encode() + b"\n")
    with SQLiteTier(str(tmp_path / "ok.db")) as s:
        assert import_jsonl(s, f) == 1 and s.get(1).summary == "s\\ud800"


def test_cli_import_of_a_binary_file_is_a_one_line_input_error(tmp_path, capsys):
    from v22sdk.cli import main

    png = tmp_path / "some.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    with pytest.raises(SystemExit) as exc:
        main(["memory", "--memory", str(tmp_path / "m.db"), "import", str(png)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "some.png:1: not UTF-8 text" in err and err.count("\n") == 1


# -- 3./4. impossible times and numbers ---------------------------------------------------------


@pytest.mark.parametrize(
    "when, match",
    [
        (-1.0, "outside"),
        (-1e20, "outside"),
        (1e15, "outside"),
        pytest.param(10**400, "too large", id="int_1e400"),
        ("1700000000", "must be a number"),
        (True, "must be a number"),
        (None, "must be a number"),
    ],
)
def test_import_rejects_impossible_times(tmp_path, when, match):
    _import_fails(tmp_path, _record(time=when).encode() + b"\n", rf"in.jsonl:1: 'time'.*{match}")


@pytest.mark.parametrize(
    "value",
    ["1e308", "-1e39", "NaN", "Infinity", "1" + "0" * 400],
    ids=["1e308", "-1e39", "NaN", "Infinity", "int_1e400"],
)
def test_import_rejects_values_beyond_float32_without_warnings(tmp_path, value):
    vec = json.loads(_record())["sent_vec"]
    line = _record().replace(json.dumps(vec), "[" + ", ".join([value] + [repr(v) for v in vec[1:]]) + "]")
    assert line != _record()
    _import_fails(tmp_path, line.encode() + b"\n", r"in.jsonl:1: 'sent_vec'.* (not a finite|too large for) float32")


def test_stats_shows_any_stored_time(tmp_path):
    db = str(tmp_path / "m.db")
    with SQLiteTier(db) as s:
        s.commit([make_turn(1), make_turn(2)])
        s._conn.execute("UPDATE turns SET time = -1e20 WHERE id = 1")  # written by an older version
        s._conn.execute("UPDATE turns SET time = 1e300 WHERE id = 2")
    res = CliRunner().invoke(memory, ["--memory", db, "stats"])
    assert res.exit_code == 0, res.output
    assert "-1e+20 (not a valid time)" in res.output and "1e+300 (not a valid time)" in res.output


def test_search_query_file_with_bad_values_is_an_input_error(tmp_path):
    db = str(tmp_path / "m.db")
    SQLiteTier(db).close()
    for name, body in [
        ("big.json", '{"sent_vec": [1e308' + ", 0" * 255 + "]}"),
        ("str.json", '{"sent_vec": ["a"]}'),
        ("attrs.json", '{"sent_vec": [0], "attrs": 5}'),
    ]:
        (tmp_path / name).write_text(body)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res = CliRunner().invoke(memory, ["--memory", db, "search", str(tmp_path / name)])
        assert isinstance(res.exception, InputError) and name in str(res.exception), res.output
    np.save(tmp_path / "s.npy", np.array(["x"] * 256))
    res = CliRunner().invoke(memory, ["--memory", db, "search", str(tmp_path / "s.npy")])
    assert isinstance(res.exception, InputError), res.output


# -- 5. export targets --------------------------------------------------------------------------


@pytest.fixture
def small(tmp_path):
    db = str(tmp_path / "m.db")
    with SQLiteTier(db) as s:
        s.commit([make_turn(k) for k in range(1, 6)])
    return db


def test_export_errors_name_the_path_given(tmp_path, small):
    res = CliRunner().invoke(memory, ["--memory", small, "export", "--out", "/nonexistent-h17/x.jsonl"])
    assert isinstance(res.exception, InputError)
    assert str(res.exception).startswith("/nonexistent-h17/x.jsonl:") and ".export-" not in str(res.exception)
    before = open(small, "rb").read()
    res = CliRunner().invoke(memory, ["--memory", small, "export", "--out", small])
    assert isinstance(res.exception, InputError) and "memory store itself" in str(res.exception)
    assert open(small, "rb").read() == before and len(SQLiteTier(small)) == 5


def test_export_new_file_permissions_and_failure_keeps_old_file(tmp_path, small, monkeypatch):
    out = tmp_path / "e.jsonl"
    res = CliRunner().invoke(memory, ["--memory", small, "export", "--out", str(out)])
    assert res.exit_code == 0 and len(out.read_text().splitlines()) == 5
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask  # not mkstemp's 0600
    out.write_text("old\n")
    import v22sdk.memory.jsonl as jsonl

    def half(store, f):
        f.write('{"id": 1, "partial')
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(jsonl, "export_jsonl", half)
    res = CliRunner().invoke(memory, ["--memory", small, "export", "--out", str(out)])
    assert res.exit_code != 0 and str(out) in str(res.exception) and "No space" in str(res.exception)
    assert out.read_text() == "old\n"  # the old file kept whole
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_export_into_a_fifo_writes_through(tmp_path, small):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    res = CliRunner().invoke(memory, ["--memory", small, "export", "--out", str(fifo)])
    reader.join(10)
    if reader.is_alive():  # nothing was written through the FIFO: release the blocked reader
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
    assert res.exit_code == 0, res.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still a FIFO, not replaced by a plain file
    assert len(got[0].decode().splitlines()) == 5
