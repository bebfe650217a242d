"""The rule that decides whether a command-line argument is a file or a literal text
(v22sdk.inputs), as tables: a typo must never become input, a special file is never read."""

from __future__ import annotations

import io
import os
import re
import socket

import pytest

from v22sdk.errors import InputError
from v22sdk.inputs import check_regular_file, looks_like_path, read_stdin_text, resolve

EXTS = (".txt", ".md", ".png", ".wav")


@pytest.mark.parametrize(
    "arg",
    [
        "missing_notes.txt",
        "notes.docx",
        "data/a.wav",
        "a/b",
        "./x",
        "../x",
        "/abs/path",
        "~/notes",
        "my notes.txt",
        "report.PDF",
        "e.g",
        "docs/my notes.md",
    ],
)
def test_what_looks_like_a_path(arg):
    assert looks_like_path(arg, EXTS)


@pytest.mark.parametrize(
    "arg",
    [
        "今天天气很好。",
        "因为下雨，所以我们没有去公园。",
        "Hello world.",
        "I use Node.js",
        "pi is 3.14",
        "yes and/or no",
        "version 2.0",
        "...",
        "3.14",
        "a line\nwith notes.txt",
        "",
        "   ",
        "etc.",
    ],
)
def test_what_reads_as_text(arg):
    assert not looks_like_path(arg, EXTS)


@pytest.mark.parametrize("arg", ["missing_notes.txt", "notes/missing", "./x", "data/a.wav", "my notes.txt"])
def test_a_missing_path_is_an_error_not_text(arg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="no such file \\(to read the argument itself as text, give --text\\)") as e:
        resolve(arg, extensions=EXTS)
    assert e.value.source == arg
    got = resolve(arg, text=True, extensions=EXTS)  # said explicitly: it is the text
    assert not got.is_file and got.text == arg


def _special(kind: str, tmp_path):
    if kind == "fifo":
        os.mkfifo(tmp_path / "f")
        return str(tmp_path / "f"), "is a FIFO (named pipe), not a regular file"
    if kind == "dev_zero":
        return "/dev/zero", "is a character device, not a regular file"
    if kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(tmp_path / "s"))
        return str(tmp_path / "s"), "is a socket, not a regular file"
    (tmp_path / "d").mkdir()
    return str(tmp_path / "d"), "is a folder"


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "socket", "folder"])
def test_special_files_are_refused_never_read(kind, tmp_path):
    path, problem = _special(kind, tmp_path)
    for text_modality in (False, True):  # whatever the modality: never read, never taken as text
        with pytest.raises(InputError, match=re.escape(problem)):
            resolve(path, extensions=EXTS if text_modality else ())
    if kind != "folder":
        with pytest.raises(InputError, match=re.escape(problem)):
            check_regular_file(path)


def test_existing_files_and_texts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("hi")
    assert resolve("notes.txt", extensions=EXTS).path.name == "notes.txt"
    assert resolve("notes.txt", text=True).text == "notes.txt"
    assert resolve("x" * 5000).text == "x" * 5000  # longer than a file name may be
    assert resolve("a\x00b").text == "a\x00b"  # no file has a NUL in its name


def test_standard_input_is_text_bounded_and_utf8():
    assert read_stdin_text(100, io.BytesIO("\ufeff你好\n".encode())) == "你好\n"
    with pytest.raises(InputError, match="<stdin>: more than 4 bytes"):
        read_stdin_text(4, io.BytesIO(b"hello"))
    with pytest.raises(InputError, match="<stdin>: is not UTF-8 text \\(byte 0\\)"):
        read_stdin_text(10, io.BytesIO(b"\xff\xfe"))
    with pytest.raises(InputError, match="<stdin>: is empty"):
        read_stdin_text(10, io.BytesIO(b""))


def test_literal_is_the_text_of_a_text_input_only(tmp_path):
    assert resolve("hello there", text=True).literal == "hello there"
    f = tmp_path / "a.txt"
    f.write_text("x", encoding="utf-8")
    got = resolve(str(f))
    assert got.path is not None
    with pytest.raises(ValueError, match="a file input, not a text"):
        _ = got.literal
