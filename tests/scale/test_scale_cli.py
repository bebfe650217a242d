"""The scale CLI's argument errors are typed one-liners (no Ray, no torch started)."""

import pytest
from click.testing import CliRunner

from v22sdk.cli import cli
from v22sdk.errors import InputError
from v22sdk.scale.cli import _config


def test_config_needs_a_modality():
    with pytest.raises(InputError, match="needs --modality"):
        _config(["grid=2"], None)
    assert _config(["grid=2", "name=x"], "vision") == {"vision": {"grid": 2, "name": "x"}}


def test_nproc_must_be_positive(tmp_path):
    data = tmp_path / "d.tsv"
    data.write_text("a\tb\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["train", str(data), "--nproc", "0"])
    assert r.exit_code == 2 and "--nproc" in r.output and "0 is not in the range x>=1" in r.output


def test_list_items_reports_unreadable_inputs(tmp_path):
    from v22sdk.scale.inputs import list_items

    (tmp_path / "a.txt").write_text("hi", encoding="utf-8")
    (tmp_path / "b.unknownext").write_text("?")
    items, errors = list_items(tmp_path)
    assert [i["modality"] for i in items] == ["text"]
    assert errors[0]["stage"] == "resolve" and "b.unknownext" in errors[0]["input"]
    with pytest.raises(InputError, match="no such folder"):
        list_items(tmp_path / "missing")


def test_a_file_name_that_is_not_utf8_is_reported_not_fatal(tmp_path):
    import json
    import os

    from v22sdk.scale.inputs import list_items

    (tmp_path / "a.txt").write_text("hi", encoding="utf-8")
    with open(os.path.join(os.fsencode(tmp_path), b"b\xffad.txt"), "w") as fh:
        fh.write("ho")
    items, errors = list_items(tmp_path)
    assert [os.path.basename(i["input"]) for i in items] == ["a.txt"]
    [err] = errors
    assert err["input"].endswith("b\\xffad.txt") and "not valid UTF-8" in err["error"]
    json.dumps(errors, ensure_ascii=False).encode("utf-8")  # the errors manifest can be written
