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
| 3 | a plugin failed to load (only with `--strict` / `V22SDK_STRICT_PLUGINS=1`), or a plugin engine's forward pass lacks an output that training reads (`EngineOutputError`, e.g. no `sent_vec`) |
| 4 | `run`: the answer was computed and printed, but could not be stored in the memory (a full disk, a damaged store): it is not a turn, and the error line says why (`AnswerNotStored`) |
| 5 | `memory salvage`: the new store was written with every turn that could be recovered, but fewer than the damaged store held (`SalvageIncomplete`); the summary line on stdout says how many were lost |
| 130 | interrupted |

## Environment

| variable | effect |
|---|---|
| `V22SDK_LOAD_PLUGINS=a,b` | load only the named plugin entry points (empty: none) |
| `V22SDK_DISABLE_PLUGINS=a,b` | skip the named plugin entry points |
| `V22SDK_STRICT_PLUGINS=1` | a plugin that fails to import or register is fatal |
| `V22SDK_EXTENSIONS=.png=vision,.npy=depth` | your default modality per file extension, where several installed modalities read it |
| `V22SDK_DECODE_BUDGET_MB=512` | memory (MiB) that reading and tokenizing one file may take; a file whose header says it needs more is refused before it is decoded (`docs/writing-a-plugin.md`, "Decoding files") |
| `NO_COLOR` | no colour in tables |
| `OPENBLAS_NUM_THREADS` | numpy's BLAS threads. Unset, `run`, `tokenize` and `plugins list` start it with one thread (they multiply no large matrices with numpy, and each idle OpenBLAS thread spins CPU as numpy loads); set it to choose another count |

## Inputs

`tokenize`, `explain`, `run` and `memory search` take inputs that are files or literal texts.
One rule decides which (`v22sdk/inputs.py`), so that a typo never becomes input:

| the argument | is read as |
|---|---|
| with `--text` | the text itself, whatever exists on disk |
| `-` | standard input, as UTF-8 text (`echo 你好 \\| v22sdk run -`) |
| an existing regular file | that file; the modality comes from its extension unless `--modality` is given |
| an existing folder, FIFO, device (`/dev/zero`) or socket | an error (exit 2): `fifo: is a FIFO (named pipe), not a regular file` |
| a missing path: starts with `/`, `./`, `../` or `~`; has no white space and a `/`; or ends in a file extension (a dot and 1-8 letters or digits, one a letter) with no white space, or one an installed modality reads (`my notes.txt`) | an error (exit 2): `missing_notes.txt: no such file (to read the argument itself as text, give --text)`, also with `-m text` |
| anything else | literal text: `v22sdk explain "因为下雨，所以我们没有去公园。"`, `v22sdk run "pi is 3.14"` |

Manifests (`.jsonl` lines `{"input": ...}` for `train`, `eval` and `--backend ray`) follow the
same rule relative to the manifest's folder: a text input that looks like a path but names no file
is an error naming the line, unless the line says `"literal": true`. Files that commands read
whole (`train`/`eval` DATA, `memory import`) must be regular files too.

When several installed modalities read one extension (the contrib depth plugin and the built-in
vision both read `.png`), the file's content decides where it can: each plugin may look at the
file's first bytes and reject it (a colour PNG is no depth map) or recognise it (a 16-bit grey PNG
is one). Then your default for the extension (`V22SDK_EXTENSIONS`), then the plugins' priority
(built-in modalities rank above others, so installing a plugin never takes a built-in's files
unless their content says they are the plugin's). An automatic choice among readers that all
accept the file prints one line on stderr, e.g. `note: d.png: read as depth (by its content);
vision also reads '.png' files: choose with --modality NAME or V22SDK_EXTENSIONS=.png=NAME`; a tie
is an error asking for `--modality`. `v22sdk run` first prefers the one reader the checkpoint was
trained on.

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
