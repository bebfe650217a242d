import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from v22sdk import load_batches

from .test_plugins import GOOD, fake_dist

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args, site=None, env=None):
    e = {**os.environ, **(env or {})}
    paths = [str(ROOT)] + ([str(site)] if site else [])
    e["PYTHONPATH"] = os.pathsep.join(paths + [e.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-c", "from v22sdk.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env=e,
        timeout=120,
    )


@pytest.fixture
def site(tmp_path):
    fake_dist(tmp_path, "ramp-dist", "fakeplug_good", GOOD, entry="ramp")
    fake_dist(tmp_path, "bad-dist", "fakeplug_bad", "raise RuntimeError('boom at import')", entry="bad")
    return tmp_path


def test_help_does_not_import_torch():
    r = run_cli("--help")
    assert r.returncode == 0 and "tokenize" in r.stdout
    code = (
        "import sys; from v22sdk.cli import cli; from click.testing import CliRunner; "
        "CliRunner().invoke(cli, ['--help']); print('torch' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert out.stdout.strip() == "False"


def test_help_imports_neither_numpy_nor_a_subsystem():
    """`v22sdk --help` lists the lazy commands from LAZY_HELP: no numpy, no engine, no plugins."""
    code = (
        "import sys; from v22sdk.cli import cli; from click.testing import CliRunner; "
        "r = CliRunner().invoke(cli, ['--help']); assert r.exit_code == 0, r.output; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'attr', 'attrs', 'pluggy', 'rich', 'torch', 'scipy') or m.startswith('v22sdk.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    # v22sdk.inputs (main's one rule for file or text) is standard library only
    assert out.stdout.strip() == "['v22sdk._options', 'v22sdk.cli', 'v22sdk.errors', 'v22sdk.inputs']", out.stderr


def test_lazy_help_is_each_commands_own_first_paragraph():
    import click

    from v22sdk.cli import LAZY_COMMANDS, LAZY_HELP, cli

    assert set(LAZY_HELP) == set(LAZY_COMMANDS)
    ctx = click.Context(cli)
    for name in LAZY_COMMANDS:
        real = cli.get_command(ctx, name)
        first = " ".join(real.help.split("\n\n")[0].split())
        assert LAZY_HELP[name] == first, name


def test_broken_plugin_is_listed_and_other_commands_work(site, tmp_path):
    r = run_cli("plugins", "list", "--json", site=site)
    assert r.returncode == 0, r.stderr
    plugins = {p["name"]: p for p in json.loads(r.stdout)}
    assert plugins["bad"]["ok"] is False and "boom at import" in plugins["bad"]["error"]
    assert plugins["ramp"]["modalities"] == ["ramp"] and plugins["ramp"]["dist"] == "ramp-dist"
    r = run_cli("plugins", "list", site=site)
    assert "BROKEN" in r.stdout and "boom" in r.stdout
    data = tmp_path / "x.ramp"
    data.write_text(" ".join(map(str, range(20))))
    out = tmp_path / "t.npz"
    r = run_cli("tokenize", str(data), "--out", str(out), site=site)
    assert r.returncode == 0, r.stderr
    [b] = load_batches(out)
    assert b.modality == "ramp" and len(b) == 3
    r = run_cli("--version", site=site)
    assert "ramp-dist" in r.stdout and "BROKEN" in r.stdout


def test_strict_makes_a_broken_plugin_fatal_in_one_line(site):
    r = run_cli("--strict", "plugins", "list", site=site)
    assert r.returncode == 3
    assert r.stderr.count("\n") == 1 and "boom at import" in r.stderr and "Traceback" not in r.stderr


def test_bad_input_is_one_line_and_nonzero(site, tmp_path):
    bad = tmp_path / "junk.ramp"
    bad.write_text("1 two")
    for args, code, needle in [
        (["tokenize", str(bad)], 2, "junk.ramp"),
        (["tokenize", str(tmp_path / "missing.ramp")], 2, "no such file"),
        (["tokenize", "--modality", "nope", str(bad)], 2, "unknown modality 'nope'"),
        (["explain", str(tmp_path)], 2, "directory"),
        (["tokenize", "-m", "ramp", "-c", "window", str(bad)], 2, "KEY=VALUE"),
        # usage errors too: one line naming the command's --help, not click's three-line block
        (["tokenize"], 2, "Missing argument 'INPUTS...'. (see 'v22sdk tokenize --help')"),
        (["no-such-command"], 2, "No such command 'no-such-command'. (see 'v22sdk --help')"),
        (["explain", "--top", "many", str(bad)], 2, "'many' is not a valid integer"),
    ]:
        r = run_cli(*args, site=site)
        assert r.returncode == code, (args, r.stderr)
        assert needle in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_tokenize_json_and_explain(site, tmp_path):
    data = tmp_path / "x.ramp"
    data.write_text(" ".join(map(str, np.linspace(-1, 1, 16))))
    r = run_cli("tokenize", str(data), "--json", "-c", "window=4", site=site)
    [doc] = json.loads(r.stdout)
    assert doc["modality"] == "ramp" and len(doc["emb"]) == 4
    r = run_cli("explain", str(data), "--json", "--top", "1", site=site)
    out = json.loads(r.stdout)
    assert len(out["tokens"]) == 2 and list(out["tokens"][0]["attributes"]) == ["ramp.level"]
    assert out["tokens"][1]["at"] == "0.08-0.16 s"


def test_a_subsystem_that_fails_to_import_is_one_line_and_others_still_work(tmp_path, monkeypatch, capsys):
    from v22sdk import cli as cli_module

    (tmp_path / "fakesub_boom.py").write_text("raise RuntimeError('subsystem exploded')")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(cli_module.LAZY_COMMANDS, "boom", "fakesub_boom:cmd")
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main(["boom", "--anything"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "subsystem exploded" in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main(["--help"])
    assert exit_info.value.code == 0 and "unavailable" in capsys.readouterr().out


def test_built_in_plugins_register_through_entry_points_without_torch():
    code = (
        "import sys, json; from v22sdk import get_registry; r = get_registry(); "
        "print(json.dumps([r.names(k) for k in ('modalities', 'engines', 'memory_backends')] + "
        "[[b.name for b in r.broken], 'torch' in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    modalities, engines, memories, broken, torch_loaded = json.loads(out.stdout)
    assert {"text", "vision", "audio"} <= set(modalities)
    assert engines == ["baseline", "v22"] and {"fifo", "tiered"} <= set(memories)
    assert broken == [] and torch_loaded is False


def test_a_text_longer_than_a_file_name_is_text_not_an_internal_error(tmp_path):
    # Path.is_file() raises ENAMETOOLONG for such a string; it must be tokenized as text
    text = "今天天气很好。" * 40
    r = run_cli("explain", text, "--top", "1", "--json")
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["tokens"]) == len(text)
    r = run_cli("tokenize", "--modality", "vision", text)
    assert r.returncode == 2 and "no such file" in r.stderr and r.stderr.count("\n") == 1


def test_empty_arguments_and_bad_modality_config_are_one_line_input_errors(tmp_path):
    for args, needle in [
        (["explain", ""], "an empty argument: give a file or a non-empty text"),
        (["tokenize", "-m", "text", "-c", "max_chars=0", "hi"], "--config: invalid configuration for text"),
        (["explain", "--top", "-3", "hi"], "-3 is not in the range x>=1"),
    ]:
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert needle in r.stderr and r.stderr.count("\n") == 1


def test_output_failures_are_one_line_and_a_closed_pipe_is_quiet(tmp_path, monkeypatch, capsys):
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            r = subprocess.run(
                [sys.executable, "-c", "from v22sdk.cli import main; main()", "explain", "hello"],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                timeout=120,
            )
        assert r.returncode == 1 and r.stderr == "error: output: No space left on device\n"
    # the reader of a pipe went away (`| head -1`): exit quietly, no "error:" line (click itself
    # pacifies stdout and exits 1 for a pipe closed inside a command; main() gives 141 after it)
    from v22sdk import cli as cli_module

    class ClosedPipe(io.StringIO):
        def write(self, _text):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    with pytest.raises(SystemExit) as exc:
        cli_module.main(["explain", "hello", "--json"])
    monkeypatch.undo()
    assert exc.value.code in (1, 141) and capsys.readouterr().err == ""
    keep = tmp_path / "keep.npz"
    assert run_cli("tokenize", "first", "--out", str(keep)).returncode == 0
    before = keep.read_bytes()
    r = run_cli("tokenize", "second", "--out", str(tmp_path / "nodir" / "x.npz"))
    assert r.returncode == 2 and "does not exist" in r.stderr and r.stderr.count("\n") == 1
    r = run_cli("tokenize", "second", "--out", str(tmp_path))
    assert r.returncode == 2 and "is a folder" in r.stderr
    assert keep.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["keep.npz"]
