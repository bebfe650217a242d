"""``v22sdk check-plugin``: the kit from the command line, for authors who do not use pytest."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from v22sdk.cli import cli

from .broken import NonUnitEmb

pytest.importorskip("v22sdk_hello", reason="pip install -e contrib/v22sdk-hello")
FAST = ["--max-examples", "5", "--no-fresh-process", "--derandomize"]


def run(*args: str):
    return CliRunner().invoke(cli, ["check-plugin", *args], catch_exceptions=False)


def test_an_installed_plugin_passes_with_a_table_and_exit_code_0():
    result = run("hello", *FAST)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(
        "v22sdk contract v2 — modality 'hello' (v22sdk_hello.modality.HelloModality from v22sdk-hello"
    )
    assert any(line.split()[:2] == ["check_unit_norm_emb", "passed"] for line in lines)
    assert any(line.split()[:2] == ["check_fresh_process", "skipped"] for line in lines)
    assert "18 ran: 18 passed, 0 failed" in result.output and "5 examples per check, derandomized" in result.output


def test_json_report_and_a_failing_plugin_exit_1():
    result = run(f"{NonUnitEmb.__module__}:NonUnitEmb", *FAST, "--json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["ok"] is False and data["broken_rules"] == ["check_unit_norm_emb"]
    assert data["class"].endswith("NonUnitEmb") and data["settings"]["max_examples"] == 5
    failed = [r for r in data["results"] if r["status"] == "failed"]
    assert [r["name"] for r in failed] == ["check_unit_norm_emb"] and "must be 1 ± 0.0001" in failed[0]["reason"]


def test_text_report_of_a_failure_has_the_reason_and_reproduction():
    result = run(f"{NonUnitEmb.__module__}:NonUnitEmb", *FAST, "--check", "check_unit_norm_emb")
    assert result.exit_code == 1
    assert "check_unit_norm_emb (failed)" in result.output and "reproduce:" in result.output
    assert "broken rules: check_unit_norm_emb" in result.output


def test_expected_failure_config_and_selection():
    result = run(
        f"{NonUnitEmb.__module__}:NonUnitEmb",
        *FAST,
        "--check",
        "check_unit_norm_emb",
        "--xfail",
        "check_unit_norm_emb=raw counts (#1)",
        "-c",
        "max_words=8",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [r["status"] for r in data["results"]] == ["xfailed"]
    assert data["results"][0]["reason"].startswith("raw counts (#1) (failed:")
    listing = run("hello", "--list", "--contract-version", "1")
    assert listing.exit_code == 0 and listing.output.splitlines()[0] == "check_schema  (error)"
    assert len(listing.output.splitlines()) == 11


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "unknown modality 'nope'"),
        (["hello", "--check", "check_nope"], "unknown check(s) check_nope"),
        (["hello", "--xfail", "check_finite"], "expected CHECK=REASON"),
        (["hello", "-c", "frame_seconds=99"], "invalid configuration for hello"),
        (["nosuchmodule:Thing"], "cannot import nosuchmodule:Thing"),
    ],
)
def test_bad_arguments_are_one_line_errors_with_exit_code_2(args, message):
    out = subprocess.run(
        [sys.executable, "-c", "from v22sdk.cli import main; main()", "check-plugin", *args],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2, out.stderr
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_the_command_keeps_no_example_database(tmp_path):
    """Even under a hypothesis profile that keeps an example database (hypothesis' default keeps one
    in .hypothesis/ of the current folder), the command runs without one: it leaves nothing in the
    user's folder (a failure is replayed from its printed reproduction instead)."""
    from hypothesis import settings
    from hypothesis.database import DirectoryBasedExampleDatabase

    outer = settings.get_current_profile_name()
    settings.register_profile("with-db", database=DirectoryBasedExampleDatabase(tmp_path / "db"), derandomize=False)
    settings.load_profile("with-db")
    try:
        result = run(
            f"{NonUnitEmb.__module__}:Nondeterministic",
            "--max-examples",
            "5",
            "--no-fresh-process",
            "--check",
            "check_determinism",
            "--failures-dir",
            str(tmp_path / "f"),
            "--json",
        )
    finally:
        settings.load_profile(outer)
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert data["broken_rules"] == ["check_determinism"]
    assert data["settings"]["database"] is None and data["settings"]["derandomize"] is False
    assert not (tmp_path / "db").exists()


def test_minus_h_is_help_however_the_command_was_first_used():
    from v22sdk.testing.cli import check_plugin

    alone = CliRunner().invoke(check_plugin, ["-h"], prog_name="check-plugin")
    assert alone.exit_code == 0 and "-h, --help" in alone.output
    assert "-h, --help" in run("--help").output


def test_the_command_is_listed_without_importing_the_kit():
    code = (
        "import sys; from click.testing import CliRunner; from v22sdk.cli import cli; "
        "out = CliRunner().invoke(cli, ['--help']).output; "
        "kit = [m for m in sys.modules if m.startswith('v22sdk.testing.')]; "
        "print('check-plugin' in out, kit == ['v22sdk.testing.cli'] or kit == [], 'hypothesis' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # --help imports the command's module for its one-line help: click only, no checks, no hypothesis
    assert out.split() == ["True", "True", "False"]
