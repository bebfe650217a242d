"""max_chars: a text too long to hold as tokens is refused before it is allocated (or read)."""

from __future__ import annotations

import pytest
from v22sdk_text import TextModality

from v22sdk import InputError


def test_a_text_over_the_bound_is_refused_naming_the_size():
    m = TextModality(max_chars=10)
    assert len(m.tokenize("0123456789")) == 10
    with pytest.raises(InputError, match=r"<text>: holds 11 characters, more than max_chars=10"):
        m.tokenize("0123456789a")
    # NFC first: 10 characters written as 20 code points (e + combining acute) fit
    assert len(m.tokenize("e\u0301" * 10)) == 10


def test_a_file_over_the_bound_is_refused_by_size_before_it_is_read(tmp_path, monkeypatch):
    big = tmp_path / "big.txt"
    big.write_text("a" * 41, encoding="utf-8")
    m = TextModality(max_chars=10)
    import v22sdk_text.textio as textio

    monkeypatch.setattr(textio.Path, "read_bytes", lambda self: pytest.fail("read a file over the bound"))
    with pytest.raises(InputError, match=r"big.txt: is 41 bytes, more than max_chars=10"):
        m.tokenize_file(big)


def test_an_error_in_a_file_s_content_names_the_file(tmp_path):
    f = tmp_path / "eleven.txt"
    f.write_text("a" * 11, encoding="utf-8")
    with pytest.raises(InputError, match=r"eleven.txt: holds 11 characters"):
        TextModality(max_chars=10).tokenize_file(f)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "10"])
def test_the_bound_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match="max_chars must be a positive integer"):
        TextModality(max_chars=bad)
