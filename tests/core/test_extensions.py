"""Two installed plugins that read one file extension: content, the user's default, priority, ties.

The order is documented in v22sdk/plugins.py (and docs/writing-a-plugin.md, docs/cli.md)."""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from v22sdk import PluginError, Registry, UnknownNameError
from v22sdk.plugins import reset_registry

from .test_plugins import fake_dist

# Two plugins packaged as a stranger would: "grain" recognises its own files by a magic header;
# "pulse" declares a higher priority and rejects grain files. Both read ".smp".
PLUGIN = """
import attrs
import numpy as np
from v22sdk import AttributeSchema, Encoding, Modality, Sample, hookimpl

SCHEMA = AttributeSchema.build("audio", [("{name}.level", "mean level", "tanh(mean)")])


@attrs.frozen
class M(Modality):
    name = "{name}"
    extensions = (".smp",)
    priority = {priority}
    schema = SCHEMA

    @classmethod
    def sniff(cls, path, head):
        {sniff}

    def load(self, path):
        data = open(path, "rb").read().removeprefix(b"GRAIN").split()
        return Sample(np.array([float(v) for v in data]), {{}}, str(path))

    def encode(self, data):
        emb = np.zeros((1, 256), np.float32)
        emb[0, {axis}] = 1.0
        attr = np.zeros((1, 384), np.float32)
        attr[0, SCHEMA.indices[0]] = np.tanh(np.mean(data))
        return Encoding(emb, attr)


@hookimpl
def v22sdk_register_modalities():
    return M
"""
GRAIN = dict(name="grain", priority=0, axis=0, sniff="return True if head.startswith(b'GRAIN') else None")
PULSE = dict(name="pulse", priority=5, axis=1, sniff="return False if head.startswith(b'GRAIN') else None")


@pytest.fixture
def two(tmp_path, monkeypatch):
    """A registry of the two installed distributions, and two .smp files."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    fake_dist(site, "grain-dist", "fakeplug_grain", PLUGIN.format(**GRAIN), entry="grain")
    fake_dist(site, "pulse-dist", "fakeplug_pulse", PLUGIN.format(**PULSE), entry="pulse")
    monkeypatch.delenv("V22SDK_EXTENSIONS", raising=False)
    (tmp_path / "g.smp").write_bytes(b"GRAIN 1 2 3")
    (tmp_path / "p.smp").write_bytes(b"4 5 6")
    yield Registry(only=["grain", "pulse"]), tmp_path
    for name in [m for m in sys.modules if m.startswith("fakeplug_")]:
        del sys.modules[name]


def test_content_decides_when_the_other_plugin_rejects_the_file(two):
    r, d = two
    choice = r.resolve_path(d / "g.smp")
    assert (choice.modality, choice.reason, choice.others, choice.notice) == ("grain", "content", (), None)


def test_priority_decides_among_readers_that_accept_and_says_so(two):
    r, d = two
    choice = r.resolve_path(d / "p.smp")
    assert (choice.modality, choice.reason, choice.others) == ("pulse", "priority", ("grain",))
    assert choice.notice == (
        f"note: {d / 'p.smp'}: read as pulse (by plugin priority); grain also reads "
        f"'.smp' files: choose with --modality NAME or V22SDK_EXTENSIONS=.smp=NAME"
    )
    assert r.modality_for_path(d / "p.smp") == "pulse"


def test_the_users_default_beats_priority_but_not_a_rejection(two, monkeypatch):
    r, d = two
    monkeypatch.setenv("V22SDK_EXTENSIONS", " .SMP = grain ,.x=pulse")
    choice = r.resolve_path(d / "p.smp")
    assert (choice.modality, choice.reason, choice.notice) == ("grain", "setting", None)
    monkeypatch.setenv("V22SDK_EXTENSIONS", ".smp=pulse")
    assert r.resolve_path(d / "g.smp").modality == "grain"  # pulse rejects grain files
    assert r.resolve_path(d / "p.smp", defaults={".smp": "grain"}).modality == "grain"


def test_a_plugin_that_recognises_the_file_beats_priority(two):
    r, d = two
    (d / "both.smp").write_bytes(b"GRAIN 7")
    r2 = Registry(entry_points=False)
    for name in ("grain", "pulse"):
        r2.register(sys.modules[f"fakeplug_{name}"], name)
    pulse = r2.get_class("modalities", "pulse")
    pulse.sniff = classmethod(lambda cls, path, head: None)  # cannot tell, instead of rejecting
    try:
        choice = r2.resolve_path(d / "both.smp")
    finally:
        del pulse.sniff
    assert (choice.modality, choice.reason, choice.others) == ("grain", "content", ("pulse",))
    assert "read as grain (by its content); pulse also reads" in choice.notice


def test_bad_settings_are_typed_errors(two, monkeypatch):
    r, d = two
    monkeypatch.setenv("V22SDK_EXTENSIONS", "smp=grain")
    with pytest.raises(PluginError, match="V22SDK_EXTENSIONS: expected entries like '.png=vision', got 'smp=grain'"):
        r.resolve_path(d / "p.smp")
    monkeypatch.setenv("V22SDK_EXTENSIONS", ".smp=nosuch")
    with pytest.raises(UnknownNameError, match="'nosuch', which is not installed"):
        r.resolve_path(d / "p.smp")


def test_equal_priority_without_content_is_an_error_naming_both_ways_out(two):
    r, d = two
    pulse = r.get_class("modalities", "pulse")
    pulse.priority = 0
    try:
        with pytest.raises(
            UnknownNameError,
            match=r"several modalities read '.smp' files \(grain, pulse\) and "
            r"nothing decides.*--modality NAME or set V22SDK_EXTENSIONS=.smp=NAME",
        ):
            r.resolve_path(d / "p.smp")
    finally:
        pulse.priority = 5


def test_a_sniff_that_raises_cannot_tell(two):
    r, d = two
    grain = r.get_class("modalities", "grain")
    grain.sniff = classmethod(lambda cls, path, head: 1 / 0)
    try:
        assert r.resolve_path(d / "g.smp").modality == "grain"  # pulse still rejects it
        assert r.resolve_path(d / "p.smp").reason == "priority"
    finally:
        del grain.sniff


def test_cli_prints_one_notice_line_and_tokenizes(two):
    r, d = two
    from v22sdk.cli import cli

    reset_registry(lambda: r)
    try:
        runner = CliRunner()
        res = runner.invoke(cli, ["tokenize", str(d / "p.smp"), str(d / "g.smp"), "--json"])
        assert res.exit_code == 0, res.output
        notes = [line for line in res.stderr.splitlines() if line.startswith("note:")]
        assert notes == [r.resolve_path(d / "p.smp").notice]
        import json

        assert [b["modality"] for b in json.loads(res.stdout)] == ["pulse", "grain"]
        res = runner.invoke(cli, ["tokenize", str(d / "p.smp"), "--modality", "grain", "--json"])
        assert res.exit_code == 0 and "note:" not in res.stderr
        assert json.loads(res.stdout)[0]["modality"] == "grain"
    finally:
        reset_registry()
