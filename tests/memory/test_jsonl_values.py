"""A JSONL import line that json refuses with a plain ValueError (not a JSONDecodeError) is still
an InputError naming the line (mypy found that the message read ``e.msg``, which only
JSONDecodeError has: the import died with an AttributeError traceback)."""

from __future__ import annotations

import pytest

from v22sdk.errors import InputError
from v22sdk.memory.jsonl import read_jsonl


def test_an_over_long_integer_is_an_input_error_naming_the_line(tmp_path):
    path = tmp_path / "turns.jsonl"
    path.write_text('{"id": ' + "9" * 5000 + "}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"turns\.jsonl:1: not valid JSON \(Exceeds the limit"):
        list(read_jsonl(path))


def test_a_syntax_error_still_names_json_s_message(tmp_path):
    path = tmp_path / "turns.jsonl"
    path.write_text("{nope\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"turns\.jsonl:1: not valid JSON \(Expecting property name"):
        list(read_jsonl(path))
