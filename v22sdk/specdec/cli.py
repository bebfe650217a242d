"""``v22sdk specdec``: run one of the lab's experiments (:mod:`.experiments`) and print its report.

Importing this module is cheap (click only); torch is imported inside the commands.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

DEFAULT_OUT = "specdec-results"


# the main group's help options, set here too: click caches a command's help option, so a group
# first invoked on its own (tests) would otherwise lose ``-h`` in docs/cli.md (see engine/cli.py)
@click.group("specdec", context_settings={"help_option_names": ["-h", "--help"]})
def specdec() -> None:
    """Speculative-decoding lab: exact sampler and the RFC-hook experiments (1-5)."""


def _experiment_names() -> list[str]:
    from v22sdk.specdec.experiments import EXPERIMENTS

    return list(EXPERIMENTS)


def _corpus_names() -> list[str]:
    from v22sdk.specdec.corpus import CORPORA

    return list(CORPORA)


@specdec.command("run")
@click.option(
    "--experiment",
    type=click.Choice(_experiment_names()),
    default="hook1",
    show_default=True,
    help="Which experiment: hook1 spherical normalisation, hook2 attribute verification signal, "
    "hook3 memory recall instead of a long context, hook4 cross-modal drafting with 640-D tokens, "
    "hook5 cold-start-safe expansion.",
)
@click.option("--quick", is_flag=True, help="Smoke-test sizes (seconds to minutes instead of about an hour).")
@click.option("--seeds", type=click.IntRange(2, 50), default=None, help="Training seeds per arm (full: 5).")
@click.option(
    "--corpus",
    "corpora",
    multiple=True,
    type=click.Choice(_corpus_names()),
    help="Corpus to run (repeatable; default: the experiment's own list).",
)
@click.option(
    "--threads",
    type=click.IntRange(1, 64),
    default=None,
    help="torch threads (default 1: faster than 2 on a shared 2-core machine).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for results.json and report.md  [default: specdec-results for hook1, "
    "specdec-results-<experiment> otherwise].",
)
def run_cmd(
    experiment: str, quick: bool, seeds: int | None, corpora: tuple[str, ...], threads: int | None, out_dir: Path | None
) -> None:
    """Train, measure and apply the experiment's pre-registered criterion."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from v22sdk.evidence import begin
    from v22sdk.specdec.experiments import get, with_overrides

    begin()  # results.json names the commit this run starts at, not the one it ends at
    exp = get(experiment)
    mod = exp.load()
    out_dir = out_dir if out_dir is not None else Path(exp.default_out)
    cfg = with_overrides(mod.QUICK if quick else mod.FULL, seeds=seeds, corpora=corpora or None, threads=threads)
    console = Console(stderr=True)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} steps"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console) as bar:
        task = bar.add_task(experiment, total=mod.total_ticks(cfg))

        def say(s: str) -> None:
            bar.update(task, description=escape(s[:60]))
            console.log(s, markup=False)

        results = mod.run_experiment(cfg, out_dir, tick=lambda n: bar.advance(task, n), say=say)
    click.echo((out_dir / "report.md").read_text())
    runtime = results.get("runtime_s", results.get("data", {}).get("runtime_s", 0))
    click.echo(f"results: {out_dir / 'results.json'}  ({runtime:.0f} s)")


@specdec.command("combine")
@click.argument("parts", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for the joined results.json and report.md.",
)
def combine_cmd(parts: tuple[Path, ...], out_dir: Path) -> None:
    """Join results files of one experiment run per corpus (hooks 2, 3 and 5) and re-apply its criterion."""
    from v22sdk.specdec.experiments import combine

    combine(parts, out_dir)
    click.echo((out_dir / "report.md").read_text())
    click.echo(f"results: {out_dir / 'results.json'}")


@specdec.command("report")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(DEFAULT_OUT),
    show_default=True,
    help="Folder holding results.json.",
)
def report_cmd(out_dir: Path) -> None:
    """Print the Markdown report of a finished (or partial) run."""
    from v22sdk.errors import InputError
    from v22sdk.inputs import check_regular_file
    from v22sdk.specdec.errors import ResultsError
    from v22sdk.specdec.experiments import DEFAULT, experiment_of, get

    path = out_dir / "results.json"
    if not path.exists():
        raise ResultsError(str(path), "not found; run 'v22sdk specdec run' first")
    try:
        check_regular_file(path)
        raw = path.read_bytes()
    except InputError as exc:
        raise ResultsError(str(path), exc.problem) from None
    except OSError as exc:
        raise ResultsError(str(path), f"unreadable: {exc.strerror or exc}") from None
    try:
        results = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ResultsError(
            str(path),
            f"unreadable: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
            f"{exc.start}), not a specdec results file",
        ) from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ResultsError(str(path), f"unreadable: invalid JSON ({exc})") from None
    try:
        if not isinstance(results, dict):
            raise TypeError("not an object")
        name = experiment_of(results)
        if name == DEFAULT and "provenance" in results and "data" in results:
            # hook 1's report reads the bare figures of its result file (v22sdk.evidence; older runs
            # wrote them bare); the other experiments' reports read the whole result file
            results = results["data"]
        click.echo(get(name).load().render_report(results))
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        raise ResultsError(str(path), f"not a specdec results file ({type(exc).__name__}: {exc})") from None


if __name__ == "__main__":
    # Standalone use; under ``v22sdk specdec`` the main CLI does this conversion itself.
    import sys

    from v22sdk.errors import V22Error

    try:
        specdec(standalone_mode=False)
    except V22Error as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        sys.exit(1)
