"""JSONL export/import (exact float32 round trip) and the ``memory`` click group."""

import json

import numpy as np
import pytest
from _gen import make_turn
from click.testing import CliRunner

from v22sdk.errors import InputError
from v22sdk.memory import SQLiteTier
from v22sdk.memory.cli import make_memory_group, memory
from v22sdk.memory.jsonl import export_jsonl, import_jsonl


@pytest.fixture
def filled(db):
    with SQLiteTier(db) as s:
        s.commit([make_turn(k, "t") for k in range(1, 26)])
    return db


def test_jsonl_round_trip_is_bit_exact(filled, tmp_path):
    out = tmp_path / "m.jsonl"
    with SQLiteTier(filled) as s, open(out, "w") as f:
        assert export_jsonl(s, f) == 25
        originals = list(s.iter_turns())
    lines = out.read_text().splitlines()
    assert len(lines) == 25 and json.loads(lines[0])["summary"] == "t #1"
    with SQLiteTier(str(tmp_path / "copy.db")) as c:
        assert import_jsonl(c, out, batch=10) == 25
        for a, b in zip(originals, c.iter_turns()):
            assert a.same_content(b)  # vectors bit-identical, same ids (empty target), time kept


def test_import_validates_everything_before_writing(tmp_path, filled):
    out = tmp_path / "bad.jsonl"
    with SQLiteTier(filled) as s, open(out, "w") as f:
        export_jsonl(s, f)
    lines = out.read_text().splitlines()
    rec = json.loads(lines[20])
    rec["sent_vec"] = rec["sent_vec"][:100]
    lines[20] = json.dumps(rec)
    out.write_text("\n".join(lines) + "\n")
    target = str(tmp_path / "t.db")
    with SQLiteTier(target) as t:
        with pytest.raises(InputError, match=r"bad.jsonl:21.*shape \(256,\)"):
            import_jsonl(t, out)
        assert len(t) == 0
    (tmp_path / "x.jsonl").write_text("{not json\n")
    with SQLiteTier(target) as t, pytest.raises(InputError, match="x.jsonl:1: not valid JSON"):
        import_jsonl(t, tmp_path / "x.jsonl")


def test_cli_stats_export_import_search_salvage(filled, tmp_path):
    r = CliRunner()
    res = r.invoke(memory, ["--memory", filled, "stats", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["turns"] == 25
    out = str(tmp_path / "e.jsonl")
    res = r.invoke(memory, ["--memory", filled, "export", "--jsonl", "--out", out])
    assert res.exit_code == 0 and len(open(out).read().splitlines()) == 25
    other = str(tmp_path / "o.db")
    res = r.invoke(memory, ["--memory", other, "import", out])
    assert res.exit_code == 0 and "imported 25 turns" in res.output
    q = tmp_path / "q.json"
    t9 = make_turn(9, "t")
    q.write_text(json.dumps({"sent_vec": t9.sent_vec.tolist(), "attrs": sorted(t9.attrs)}))
    res = r.invoke(memory, ["--memory", other, "search", str(q), "-k", "2"])
    assert res.exit_code == 0 and "1. turn 9  score 1.0000" in res.output, res.output
    np.save(tmp_path / "q.npy", t9.sent_vec)
    res = r.invoke(memory, ["--memory", other, "search", str(tmp_path / "q.npy")])
    assert "1. turn 9  score 0.6" in res.output  # no attributes given: cos part only
    res = r.invoke(memory, ["salvage", filled, str(tmp_path / "s.db")])
    assert res.exit_code == 0 and "recovered 25 of 25 turns" in res.output and "none lost" in res.output


def _cli(args, capsys) -> tuple[int, str]:
    """Run ``v22sdk ARGS`` through the real entry point; its exit code and stderr."""
    from v22sdk.cli import main

    with pytest.raises(SystemExit) as exc:
        main(args)
    return exc.value.code, capsys.readouterr().err


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 50)
    code, err = _cli(["memory", "--memory", str(bad), "stats"], capsys)
    assert code == 1 and err.startswith("error: memory store") and "is corrupt" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    code, err = _cli(["memory", "--memory", str(tmp_path / "none.db"), "stats"], capsys)
    assert code == 1 and "does not exist" in err and err.count("\n") == 1
    q = tmp_path / "q.json"
    q.write_text('{"sent_vec": [1, 2]}')
    good = str(tmp_path / "g.db")
    SQLiteTier(good).close()
    code, err = _cli(["memory", "--memory", good, "search", str(q)], capsys)
    assert code == 2 and "256 finite numbers" in err and err.count("\n") == 1  # bad input: exit 2
    code, err = _cli(["memory", "--memory", good, "search"], capsys)  # usage error, still one line
    assert code == 2 and err == "error: Missing argument 'QUERY_INPUT'. (see 'v22sdk memory search --help')\n"


def test_search_hook_uses_the_encoder(filled):
    t3 = make_turn(3, "t")
    grp = make_memory_group(encode_query=lambda s: (t3.sent_vec, t3.attrs) if s == "hello" else None)
    res = CliRunner().invoke(grp, ["--memory", filled, "search", "hello", "-k", "1"])
    assert res.exit_code == 0 and "1. turn 3" in res.output, res.output


def test_cli_import_is_light():
    import subprocess
    import sys

    code = "import sys, v22sdk.memory.cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
