"""Every command that takes inputs, with the real plugins: a missing path given as text, a
special file, junk that makes C libraries talk, and a full disk under `run --memory`.

Each call goes through the CLI's entry point in this process; ``capfd`` captures file
descriptors 1 and 2 themselves, so whatever a C library writes to the terminal is seen too.
"""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from v22sdk.cli import main

ROOT = Path(__file__).resolve().parents[2]
APPLE = ROOT / "v22sdk" / "engine" / "data" / "demo" / "images" / "apple_20.png"
SEVEN = ROOT / "v22sdk" / "engine" / "data" / "examples" / "seven.png"  # a held-out digit the default checkpoint reads


def cli(capfd, *args: str, stdin: bytes | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    out, err = capfd.readouterr()
    return exit_.value.code, out, err


def _commands(tmp_path):
    store = str(tmp_path / "mem.sqlite3")
    if not os.path.exists(store):
        from v22sdk.memory import SQLiteTier
        from v22sdk.memory.turn import Turn

        with SQLiteTier(store) as s:  # one turn, so that search has a store to search
            s.commit([Turn(np.ones(256, np.float32), np.ones(384, np.float32), frozenset(), summary="one")])
    return {
        "tokenize": ["tokenize"],
        "tokenize -m text": ["tokenize", "-m", "text"],
        "explain": ["explain"],
        "explain -m text": ["explain", "-m", "text"],
        "run": ["run", "--no-memory"],
        "run -m text": ["run", "--no-memory", "-m", "text"],
        "memory search": ["memory", "--memory", store, "search"],
    }


COMMANDS = ["tokenize", "tokenize -m text", "explain", "explain -m text", "run", "run -m text", "memory search"]


@pytest.fixture
def specials(tmp_path):
    os.mkfifo(tmp_path / "notes.fifo")
    (tmp_path / "folder").mkdir()
    return {
        "missing_notes.txt": ("missing_notes.txt", "no such file (to read the argument itself as text, give --text)"),
        "notes/missing": ("notes/missing", "no such file"),
        "fifo": (str(tmp_path / "notes.fifo"), "is a FIFO (named pipe), not a regular file"),
        "dev_zero": ("/dev/zero", "is a character device, not a regular file"),
        "folder": (str(tmp_path / "folder"), "is a folder"),
    }


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", ["missing_notes.txt", "notes/missing", "fifo", "dev_zero", "folder"])
def test_no_command_reads_a_missing_path_or_a_special_file_as_text(
    capfd, tmp_path, monkeypatch, specials, command, case
):
    monkeypatch.chdir(tmp_path)
    arg, problem = specials[case]
    code, out, err = cli(capfd, *_commands(tmp_path)[command], arg)
    assert code == 2 and out == "", (out, err)
    assert err == f"error: {arg}: {problem}" + err[len(f"error: {arg}: {problem}") :] and err.count("\n") == 1, err


@pytest.mark.parametrize("command", ["memory import", "train", "eval", "memory salvage"])
@pytest.mark.parametrize("case", ["fifo", "dev_zero"])
def test_commands_that_read_a_whole_file_refuse_special_files(capfd, tmp_path, monkeypatch, specials, command, case):
    """/dev/zero as training data was an internal MemoryError; as an import it never ended."""
    monkeypatch.chdir(tmp_path)
    arg, problem = specials[case]
    args = {
        "memory import": ["memory", "--memory", str(tmp_path / "m.db"), "import", arg],
        "train": ["train", arg, "-o", str(tmp_path / "x.pt")],
        "eval": ["eval", str(ROOT / "v22sdk" / "engine" / "data" / "default.pt"), arg],
        "memory salvage": ["memory", "salvage", arg, str(tmp_path / "o.db")],
    }[command]
    code, out, err = cli(capfd, *args)
    assert code == 2 and err.startswith(f"error: {arg}: {problem}") and err.count("\n") == 1, err
    assert not (tmp_path / "o.db").exists() and not (tmp_path / "x.pt").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_text_is_still_text_and_can_always_be_said_explicitly(capfd, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    args = _commands(tmp_path)[command]
    for text in ("今天天气很好。", "I use Node.js"):
        code, out, err = cli(capfd, *args, text)
        assert code == 0 and err == "", err
    code, out, err = cli(capfd, *args, "--text", "missing_notes.txt")
    assert code == 0 and err == "", err
    if command.startswith("tokenize"):
        assert "17" in out  # the 17 characters of the name: asked for
    code, out, err = cli(capfd, *args, "-", stdin="你好，世界\n".encode(), monkeypatch=monkeypatch)
    assert code == 0 and err == "", err


def test_stdin_and_text_flag_in_json(capfd, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capfd, "tokenize", "--json", "-", stdin=b"abc", monkeypatch=monkeypatch)
    assert code == 0 and '"source": "<stdin>"' in out
    code, out, err = cli(capfd, "tokenize", "-m", "audio", "--text", "hello")
    assert code == 2 and "the audio modality reads files, not text" in err


# -- C libraries' output is folded into the one error line ---------------------------------------


def _png_bad_crc() -> bytes:
    data = bytearray(APPLE.read_bytes())
    data[29] ^= 0xFF  # inside IHDR: its CRC no longer matches
    return bytes(data)


def _png_bad_idat() -> bytes:
    ihdr = struct.pack(">IIBBBBB", 64, 64, 8, 2, 0, 0, 0)
    chunk = lambda k, d: struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))  # noqa: E731
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", b"\x78\x9c garbage") + chunk(b"IEND", b"")


def _jpeg_cut_scan() -> bytes:
    import cv2

    ok, enc = cv2.imencode(".jpg", np.random.default_rng(0).integers(0, 255, (64, 64, 3), np.uint8))
    buf = enc.tobytes()
    sos = buf.rfind(b"\xff\xda")
    return buf[: sos + 40] + b"\xff\xd9"  # scan data cut, end marker kept: libjpeg warns and fills


def _tiff_bad_ifd() -> bytes:
    return b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 3) + bytes(36) + b"\0\0\0\0"


JUNK = {
    "png_bad_crc.png": ("vision", _png_bad_crc),
    "png_bad_idat.png": ("vision", _png_bad_idat),
    "jpeg_cut_scan.jpg": ("vision", _jpeg_cut_scan),
    "tiff_bad_ifd.tif": ("vision", _tiff_bad_ifd),
    "mpeg_sync.wav": ("audio", lambda: b"\xff\xfb\x90\x00" + bytes(range(256)) * 20),
    "id3_junk.wav": ("audio", lambda: b"ID3\x03\x00\x00\x00\x00\x00\x10" + bytes(range(256)) * 20),
    "flac_junk.flac": ("audio", lambda: b"fLaC" + bytes(range(200))),
    "ogg_junk.ogg": ("audio", lambda: b"OggS" + bytes(range(200))),
    "depth_bad_idat.png": (
        "depth",
        lambda: _png_bad_idat().replace(
            struct.pack(">IIBBBBB", 64, 64, 8, 2, 0, 0, 0), struct.pack(">IIBBBBB", 64, 64, 16, 0, 0, 0, 0)
        ),
    ),
}


@pytest.mark.parametrize("name", list(JUNK))
def test_junk_files_give_one_line_and_nothing_else_on_the_terminal(capfd, tmp_path, name):
    modality, make = JUNK[name]
    data = make()
    if name == "depth_bad_idat.png":  # the IHDR CRC must match its new content
        body = data[12:29]
        data = data[:29] + struct.pack(">I", zlib.crc32(body)) + data[33:]
    path = tmp_path / name
    path.write_bytes(data)
    code, out, err = cli(capfd, "tokenize", "-m", modality, str(path))
    assert out == "" and err.count("\n") == 1 and err.startswith(f"error: {path}: "), err
    assert code == 2
    for noise in ("libpng error", "Duh", "Premature end", "TIFFRead", "Illegal Audio-MPEG-Header"):
        if noise in err:  # a library's words may appear, but only inside the one line
            assert "[decoder said: " in err


def test_a_successful_decode_prints_nothing_even_when_a_library_warns(capfd, tmp_path):
    import cv2

    img = np.full((32, 32, 3), 128, np.uint8)
    ok, enc = cv2.imencode(".png", img)
    data = bytearray(enc.tobytes())
    # an sRGB chunk with an invalid rendering intent: libpng warns and decodes
    srgb = b"sRGB" + b"\x07"
    chunk = struct.pack(">I", 1) + srgb + struct.pack(">I", zlib.crc32(srgb))
    data = bytes(data[:33]) + chunk + bytes(data[33:])
    (tmp_path / "warn.png").write_bytes(data)
    code, out, err = cli(capfd, "tokenize", "-m", "vision", str(tmp_path / "warn.png"))
    assert code == 0 and err == ""


# -- run --memory on a full disk --------------------------------------------------------------------

_FULL_DISK_RUN = """
import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from v22sdk.cli import main
main(sys.argv[2:])
"""

_CRASHED_WRITER = """
import os, sys
sys.path.insert(0, sys.argv[2])
from _gen import make_turn
from v22sdk.memory.sqlite_tier import SQLiteTier
s = SQLiteTier(sys.argv[1])
s._conn.execute("PRAGMA wal_autocheckpoint = 0")
for k in range(1, 31):
    s.commit([make_turn(k, "t")])
os._exit(0)  # as a crash: the WAL keeps its frames, nothing is checkpointed
"""


@pytest.mark.parametrize("as_json", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_run_on_a_full_disk_prints_its_answer_says_it_was_not_stored_and_exits_4(tmp_path, as_json):
    store = tmp_path / "mem.sqlite3"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(
        [sys.executable, "-c", _CRASHED_WRITER, str(store), str(ROOT / "tests" / "memory")],
        check=True,
        env=env,
        timeout=120,
    )
    wal = os.path.getsize(str(store) + "-wal")
    limit = max(wal, os.path.getsize(store), 32768) + 100  # the WAL cannot grow: the disk is "full"
    args = ["run", "--memory", str(store), str(SEVEN)] + (["--json"] if as_json else [])
    r = subprocess.run(
        [sys.executable, "-c", _FULL_DISK_RUN, str(limit), *args], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 4, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: the answer was not stored in memory: ")
    assert "nothing was stored" in r.stderr or "full" in r.stderr or "disk" in r.stderr, r.stderr
    if as_json:
        import json

        result = json.loads(r.stdout)
        assert result["output"] == "七" and result["memory"]["stored"] is False
    else:
        assert r.stdout.startswith("七    confidence") and "this turn was NOT stored" in r.stdout
    from v22sdk.memory import SQLiteTier

    with SQLiteTier(str(store)) as s:  # the store is intact, without the turn
        assert len(s) == 30
