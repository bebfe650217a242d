"""`v22sdk run` with the real plugins, the bundled checkpoint and the durable memory, end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# a held-out handwritten 7 (the suite's test split) that the bundled checkpoint reads as 七
SEVEN = ROOT / "v22sdk" / "engine" / "data" / "examples" / "seven.png"


def v22sdk(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from v22sdk.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def run_json(*args: str, **kw) -> dict:
    r = v22sdk("run", "--json", *args, **kw)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_each_run_is_a_turn_and_the_next_run_recalls_it_across_processes(tmp_path):
    store = tmp_path / "mem.sqlite3"
    first = run_json("--memory", str(store), str(SEVEN))
    assert first["output"] == "七" and first["modality"] == "vision"
    assert first["memory"] == {"path": str(store), "turn": 1, "recall": None, "best_score": None, "hit_threshold": 0.9}
    second = run_json("--memory", str(store), str(SEVEN))  # a new process: the memory persisted
    rec = second["memory"]["recall"]
    assert second["memory"]["turn"] == 2
    assert rec["turn"] == 1 and rec["summary"] == "七 <- seven.png" and rec["modality"] == "vision"
    assert rec["score"] == pytest.approx(1.0, abs=1e-4)  # same input: cosine 1, Jaccard 1
    assert 0 <= rec["seconds_ago"] < 300
    text = v22sdk("run", "--memory", str(store), str(SEVEN))
    assert "memory: recalled turn 2 '七 <- seven.png', score 1.000" in text.stdout
    assert "stored as turn 3" in text.stdout
    stats = v22sdk("memory", "--memory", str(store), "stats")
    assert stats.returncode == 0 and "turns             3" in stats.stdout


def test_a_recall_below_the_hit_threshold_is_not_shown(tmp_path):
    """Stage E always finds *some* past turn; one that is not similar (a picture for a text) is
    reported as "no similar past turn" with its score, never as a recall."""
    store = tmp_path / "mem.sqlite3"
    run_json("--memory", str(store), str(SEVEN))
    other = run_json("--memory", str(store), "你好吗？")
    mem = other["memory"]
    assert mem["recall"] is None and mem["best_score"] is not None and mem["best_score"] < mem["hit_threshold"] == 0.9
    text = v22sdk("run", "--memory", str(store), "早上好")
    assert "memory: no similar past turn (best score" in text.stdout and "< hit threshold 0.90" in text.stdout


def test_memory_search_encodes_any_input_with_the_engine(tmp_path):
    store = tmp_path / "mem.sqlite3"
    run_json("--memory", str(store), str(SEVEN))
    run_json("--memory", str(store), "你好吗？")
    found = v22sdk("memory", "--memory", str(store), "search", str(SEVEN))
    assert found.returncode == 0, found.stderr
    lines = found.stdout.strip().splitlines()
    assert "七 <- seven.png" in lines[0] and "score 1.0000" in lines[0]
    assert "你好吗？" in lines[1]


def test_no_memory_and_default_location(tmp_path):
    r = run_json("--no-memory", str(SEVEN))
    assert r["memory"] is None and r["output"] == "七"
    store = tmp_path / "env.sqlite3"
    r = run_json(str(SEVEN), env={"V22SDK_MEMORY": str(store)})
    assert r["memory"]["path"] == str(store) and store.exists()


def test_bad_inputs_are_one_line_errors(tmp_path):
    for args, needle in [
        (["run", "--memory", str(tmp_path / "m.sqlite3"), str(tmp_path / "missing.png")], "no such file"),
        (["run", "--no-memory", "--checkpoint", str(tmp_path / "none.pt"), str(SEVEN)], "none.pt"),
    ]:
        r = v22sdk(*args)
        assert r.returncode != 0 and needle in r.stderr
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    corrupt = tmp_path / "corrupt.sqlite3"
    corrupt.write_bytes(b"this is not a database" * 100)
    r = v22sdk("run", "--memory", str(corrupt), str(SEVEN))
    assert r.returncode == 1 and "corrupt" in r.stderr and str(corrupt) in r.stderr
    assert corrupt.read_bytes() == b"this is not a database" * 100  # never loaded as empty, never touched


def test_an_argument_that_is_not_utf8_is_run_and_remembered_escaped(tmp_path):
    store = str(tmp_path / "m.sqlite3")
    text = os.fsdecode(b"ab\xffcd")  # what Python makes of a shell argument with a stray byte
    out = run_json("--memory", store, text)
    assert out["tokens"] == 5
    r = v22sdk("memory", "--memory", store, "export", "--jsonl")
    assert r.returncode == 0 and "ab\\\\xffcd" in r.stdout  # the summary shows the byte, escaped
    r = v22sdk("run", "--memory", store, "--conversation", os.fsdecode(b"c\xff"), "hi")
    assert r.returncode == 2 and "not valid UTF-8" in r.stderr and r.stderr.count("\n") == 1
