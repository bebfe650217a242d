"""Write docs/cli.md: the prose below plus the --help text of every command, taken from the CLI.

Run after changing a command: ``.venv/bin/python scripts/gen_cli_docs.py``. A test checks that
docs/cli.md matches, so the reference cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.testing import CliRunner

from v22sdk.cli import cli

OUT = Path(__file__).resolve().parents[1] / "docs" / "cli.md"

INTRO = """# The `v22sdk` command line

Data goes to stdout, diagnostics and progress to stderr. `--json` (where offered) prints one
JSON document on stdout and nothing else. `NO_COLOR` is honoured.

## Errors and exit codes

Every error is one line on stderr, never a traceback (`v22sdk --debug ...` shows it):

| exit code | meaning |
|---:|---|
| 0 | success |
| 1 | a runtime error: a contract violation, a bad or damaged checkpoint, a memory store error (`MemoryCommitInDoubt` when a write's outcome is unknown), an output that cannot be written (`OutputError`: a full disk, a file-size limit), a missing external tool (`MissingDependency`, e.g. espeak-ng for `data build-suite`), an internal error; also a closed pipe (`... \\| head`), which prints nothing |
| 2 | bad input or usage: unreadable, empty or malformed input, missing units, unknown modality/engine/backend name, bad options |
| 3 | a plugin failed to load (only with `--strict` / `V22SDK_STRICT_PLUGINS=1`) |
| 130 | interrupted |

## Environment

| variable | effect |
|---|---|
| `V22SDK_LOAD_PLUGINS=a,b` | load only the named plugin entry points (empty: none) |
| `V22SDK_DISABLE_PLUGINS=a,b` | skip the named plugin entry points |
| `V22SDK_STRICT_PLUGINS=1` | a plugin that fails to import or register is fatal |
| `NO_COLOR` | no colour in tables |

## Inputs

`tokenize`, `explain` and `run` take file paths; the modality comes from the file extension
unless `--modality` is given. An argument that is not an existing file is tokenized as literal
text when the `text` modality is installed and the argument has no known file extension, so
`v22sdk explain "因为下雨，所以我们没有去公园。"` works and `v22sdk run missing.wav` is an error.

## Commands
"""


def _walk(command: click.Command, path: list[str]):
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=path[-1])
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _walk(sub, [*path, name])


def render() -> str:
    runner = CliRunner()
    parts = [INTRO]
    for path, _command in _walk(cli, ["v22sdk"]):
        result = runner.invoke(cli, [*path[1:], "--help"], prog_name="v22sdk", terminal_width=100)
        parts += [f"### `{' '.join(path)}`", "", "```text", result.output.rstrip(), "```", ""]
    return "\n".join(parts)


def main() -> int:
    OUT.write_text(render())
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    sys.exit(main())
