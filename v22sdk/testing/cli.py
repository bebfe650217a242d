"""``v22sdk check-plugin NAME``: the contract kit on an installed plugin, from the command line.

For plugin authors who do not use pytest. Imported only when the command runs (``v22sdk --help``
stays fast): this module imports click at the top and the kit, rich and the registry inside the
command.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any

import click

_STYLE = {
    "passed": "green",
    "failed": "bold red",
    "xfailed": "yellow",
    "xpassed": "bold red",
    "skipped": "dim",
    "warned": "yellow",
}


def _modality(name: str, config: dict[str, Any]) -> tuple[Any, str]:
    """The modality instance and a line saying where its class comes from."""
    from ..errors import InputError, UnknownNameError
    from ..plugins import get_registry

    if ":" in name:  # module:Class, for a plugin that is not installed yet
        module, _, qualname = name.partition(":")
        try:
            obj: Any = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise UnknownNameError(f"cannot import {name}: {type(exc).__name__}: {exc}") from None
        cls, origin = obj, f"{module}.{qualname}"
    else:
        registry = get_registry()
        cls = registry.get_class("modalities", name)
        info = registry.provider("modalities", name)
        origin = f"{cls.__module__}.{cls.__qualname__} from {info.dist} {info.version}"
    try:
        instance = cls.from_config(config) if config else cls()
    except (TypeError, ValueError) as exc:
        raise InputError("--config", f"invalid configuration for {name}: {exc}") from None
    return instance, origin


def _expected(pairs: tuple[str, ...]) -> dict[str, str]:
    expected = {}
    for pair in pairs:
        check, sep, reason = pair.partition("=")
        if not sep or not check or not reason:
            raise click.BadParameter(f"expected CHECK=REASON, got {pair!r}", param_hint="--xfail")
        expected[check] = reason
    return expected


# its own help names: click caches a command's help option from the first context it meets, and
# this command is also invoked on its own (not only under the v22sdk group, which sets them)
@click.command("check-plugin", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("name")
@click.option(
    "--config",
    "-c",
    "config",
    multiple=True,
    metavar="KEY=VALUE",
    help="Modality configuration to check, e.g. -c grid=2 (repeatable).",
)
@click.option(
    "--max-examples", type=click.IntRange(min=1), default=None, help="Examples per property check (default 20)."
)
@click.option("--seed", type=int, default=None, help="Base seed of every check's example stream (default: random).")
@click.option("--derandomize", is_flag=True, help="Fixed examples, the same on every run (the default on CI).")
@click.option("--check", "only", multiple=True, metavar="CHECK", help="Run only this check (repeatable).")
@click.option("--xfail", multiple=True, metavar="CHECK=REASON", help="A check expected to fail, with the reason.")
@click.option(
    "--contract-version",
    type=click.IntRange(min=1),
    default=None,
    help="Run the checks of this contract version (default: the plugin's pin, else the newest).",
)
@click.option("--strict-warnings", is_flag=True, help="Quality warnings fail the run.")
@click.option(
    "--failures-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Save large falsifying inputs here (default: the system's temp folder).",
)
@click.option("--no-fresh-process", is_flag=True, help="Skip the comparison with a fresh Python process.")
@click.option("--list", "list_only", is_flag=True, help="List the checks that would run, and exit.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
def check_plugin(
    name: str,
    config: tuple[str, ...],
    max_examples: int | None,
    seed: int | None,
    derandomize: bool,
    only: tuple[str, ...],
    xfail: tuple[str, ...],
    contract_version: int | None,
    strict_warnings: bool,
    failures_dir: str | None,
    no_fresh_process: bool,
    list_only: bool,
    as_json: bool,
) -> None:
    """Run the contract kit on an installed modality plugin and report every check.

    NAME is a registered modality (see 'v22sdk plugins list') or module:Class. Exit code 0 when the
    plugin keeps the contract, 1 when a check fails, 2 for an unknown modality or bad options.

    \b
    Examples:
      v22sdk check-plugin hello
      v22sdk check-plugin vision -c grid=2 --max-examples 50
      v22sdk check-plugin hello --check check_files --seed 7 --json
      v22sdk check-plugin mypkg.modality:MyModality --xfail check_offsets="ms until #12"
    """
    from ..cli import parse_config
    from ._registry import resolve_version
    from .catalog import all_checks, list_checks

    modality, origin = _modality(name, parse_config(config))
    version = resolve_version(contract_version, modality)
    known = all_checks()
    unknown = sorted(set(only) - set(known))
    if unknown:
        raise click.BadParameter(
            f"unknown check(s) {', '.join(unknown)}; known: {', '.join(known)}", param_hint="--check"
        )
    expected = _expected(xfail)
    if list_only:
        selected = [c for c in list_checks(version) if not only or c in only]
        if as_json:
            click.echo(json.dumps({"modality": modality.name, "contract_version": version, "checks": selected}))
        else:
            click.echo("\n".join(f"{c}  ({getattr(known[c], 'level', 'error')})" for c in selected))
        return
    from ._settings import active, resolve
    from .report import check_modality

    def run() -> Any:
        try:
            # no example database: a command must not leave .hypothesis/ in the user's folder
            with active(resolve(database=None)):
                return check_modality(
                    modality,
                    expected,
                    contract_version=version,
                    max_examples=max_examples,
                    seed=seed,
                    derandomize=True if derandomize else None,
                    strict_warnings=strict_warnings,
                    failures_dir=failures_dir,
                    fresh_process=False if no_fresh_process else None,
                    checks=list(only) or None,
                )
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None

    if as_json:
        report = run()
        click.echo(json.dumps({**report.to_dict(), "class": origin}, ensure_ascii=False, indent=1))
        _exit(report)
        return
    err = _console(stderr=True)
    if err.is_interactive:
        with err.status(f"checking {modality.name} ..."):
            report = run()
    else:
        report = run()
    _print(report, origin)
    _exit(report)


def _exit(report: Any) -> None:
    """Exit code 1 when the report is not ok (ctx.exit works in click's standalone mode too)."""
    if not report.ok:
        click.get_current_context().exit(1)


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, markup=False, emoji=False, highlight=False, no_color=bool(os.environ.get("NO_COLOR")))


def _print(report: Any, origin: str) -> None:
    from rich.table import Table
    from rich.text import Text

    out = _console()
    verdict = "OK" if report.ok else "FAILED"
    out.print(
        Text(f"v22sdk contract v{report.contract_version} — modality {report.modality!r} ({origin}): ")
        + Text(verdict, style="bold green" if report.ok else "bold red"),
        soft_wrap=True,
    )
    table = Table(box=None, pad_edge=False)
    for column, justify in (("check", "left"), ("status", "left"), ("seconds", "right"), ("detail", "left")):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for r in report.results:
        first = r.reason.splitlines()[0] if r.reason else ""
        if r.rule and r.rule != r.name and r.status in ("failed", "xfailed"):
            first = first if first.startswith("[rule") else f"[rule {r.rule}] {first}"
        table.add_row(r.name, Text(r.status, style=_STYLE.get(r.status, "")), f"{r.seconds:.2f}", first)
    out.print(table)
    for r in report.results:
        if r.status in ("failed", "xpassed", "warned") and r.reason:
            out.print(Text(f"\n{r.name} ({r.status})", style=_STYLE.get(r.status, "")))
            out.print(r.reason, soft_wrap=True)
            if r.traceback:
                out.print("  the plugin's traceback:")
                out.print("\n".join(f"    {line}" for line in r.traceback.splitlines()), soft_wrap=True)
    c = report.counts()
    s = report.settings
    how = "derandomized" if s.get("derandomize") else f"seed {s.get('seed')} (rerun with --seed {s.get('seed')})"
    out.print(
        f"\n{c['ran']} ran: {c['passed']} passed, {c['failed']} failed, {c['xfailed']} xfailed, "
        f"{c['xpassed']} xpassed, {c['warned']} warned; {c['skipped']} skipped; "
        f"{s.get('max_examples')} examples per check, {how}",
        soft_wrap=True,
    )
    if report.broken_rules:
        out.print(f"broken rules: {', '.join(report.broken_rules)}", soft_wrap=True)
    sys.stdout.flush()
