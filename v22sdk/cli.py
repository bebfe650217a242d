"""The ``v22sdk`` command line.

Start-up stays light: this module imports click and the token contract only; rich, torch and the
heavier subsystems are imported inside the commands that need them. Every deliberate error
(:class:`~v22sdk.errors.V22Error`) becomes one line on stderr and the error's exit code; an
unexpected exception becomes one line too, and ``--debug`` shows its traceback.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import __version__
from ._options import parse_config
from .errors import InputError, V22Error
from .inputs import TEXT_SOURCE

if TYPE_CHECKING:
    from .modality import Sample

#: Subcommands that live in their own subsystem, imported only when used: name -> "module:attr".
LAZY_COMMANDS = {
    "train": "v22sdk.engine.cli:train",
    "eval": "v22sdk.engine.cli:eval_",
    "run": "v22sdk.engine.cli:run",
    "memory": "v22sdk.memory_command:memory",
    "new-plugin": "v22sdk.scaffold.cli:new_plugin",
    "specdec": "v22sdk.specdec.cli:specdec",
    "data": "v22sdk.engine.data.cli:data",
    "check-plugin": "v22sdk.testing.cli:check_plugin",
}

#: The first paragraph of each lazy command's help, so that ``v22sdk --help`` lists them without
#: importing their subsystems (tests/core/test_cli.py checks that each equals the command's own).
LAZY_HELP = {
    "train": "Train an engine on DATA (a .jsonl manifest, a .tsv of text pairs, or a folder of label-named folders).",
    "eval": "Exact match and character accuracy of CHECKPOINT, per modality, on held-out data.",
    "run": "Run the engine on INPUT (a file, or a text) and print its answer, confidence and top attributes.",
    "memory": "Inspect and maintain the durable 3-tier memory.",
    "new-plugin": "Generate an installable modality plugin package v22sdk-NAME.",
    "specdec": "Speculative-decoding lab: exact sampler and the RFC-hook experiments (1-5).",
    "data": "Build and check data sets for training and evaluation.",
    "check-plugin": "Run the contract kit on an installed modality plugin and report every check.",
}


class LazyGroup(click.Group):
    """A click group whose subsystem commands are imported on first use (not to list them)."""

    _listing = False

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._available_lazy()})

    def _available_lazy(self) -> list[str]:
        """The lazy commands whose module is installed, found without importing anything
        (``find_spec`` of ``v22sdk.engine.data.cli`` would import ``v22sdk.engine.data``, and with
        it numpy, into ``v22sdk --help``)."""
        here = Path(__file__).resolve().parent
        out = []
        for name, target in LAZY_COMMANDS.items():
            parts = target.split(":")[0].split(".")[1:]
            base = here.joinpath(*parts)
            if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
                out.append(name)
        return out

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is not None or name not in LAZY_COMMANDS:
            return command
        module, attr = LAZY_COMMANDS[name].split(":")
        if self._listing and name in LAZY_HELP and module not in sys.modules:
            return click.Command(name, help=LAZY_HELP[name])  # a stand-in that only lists itself
        if name == "run":
            _one_blas_thread_from_start()  # before its module imports numpy
        try:
            return getattr(importlib.import_module(module), attr)
        except Exception as exc:  # a broken subsystem must not take the other commands down
            problem = f"the '{name}' command could not be loaded: {type(exc).__name__}: {exc}"

            def broken() -> None:
                raise V22Error(problem)

            return click.Command(
                name,
                callback=broken,
                help=f"(unavailable: {problem})",
                context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
            )


def _one_blas_thread_from_start() -> None:
    """Start numpy's OpenBLAS with one thread, unless the user chose a count or numpy is loaded.

    Called by the commands that multiply no large matrices with numpy: ``run`` (as its module is
    loaded, ``LazyGroup.get_command``; it pins every pool to one thread anyway), ``tokenize``
    (tokenizers run their products on one BLAS thread for the bits, v22sdk.blas) and ``plugins
    list``. Each extra OpenBLAS thread spins CPU for nobody when numpy loads, more with more cores
    (``plugins list``'s cold start: benchmarks/bench_core.py). The environment variable is read when
    numpy's OpenBLAS loads, so this must run before numpy is imported; once numpy is loaded (a
    caller of :func:`main` in a Python process) nothing is changed.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, markup=False, emoji=False, highlight=False, no_color=bool(os.environ.get("NO_COLOR")))


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from .plugins import get_registry

    lines = [f"v22sdk {__version__}", "plugins:"]
    for info in sorted(get_registry().plugins.values(), key=lambda p: p.name):
        state = "" if info.ok else f"  BROKEN: {info.error}"
        lines.append(f"  {info.name} {info.version} ({info.dist}){state}")
    click.echo("\n".join(lines))
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version of v22sdk and of every plugin, and exit.",
)
@click.option("--strict", is_flag=True, help="A plugin that fails to load is fatal (V22SDK_STRICT_PLUGINS=1).")
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
@click.pass_context
def cli(ctx: click.Context, strict: bool, debug: bool) -> None:
    """Text, images and sound as one kind of 640-D token, run through one white-box engine.

    \b
    Examples:
      v22sdk plugins list
      v22sdk explain "因为下雨，所以我们没有去公园。"
      v22sdk tokenize photo.png --out tokens.npz
      v22sdk run --modality audio input.wav
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    if strict:
        os.environ["V22SDK_STRICT_PLUGINS"] = "1"
        from .plugins import reset_registry

        reset_registry()


# -- plugins ------------------------------------------------------------------------------------
@cli.group()
def plugins() -> None:
    """Inspect installed plugins."""


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
def plugins_list(as_json: bool) -> None:
    """List plugins, what each registers, and broken plugins with the reason."""
    _one_blas_thread_from_start()
    from .plugins import get_registry

    registry = get_registry()
    infos = sorted(registry.plugins.values(), key=lambda p: p.name)
    if as_json:
        click.echo(json.dumps([i.to_dict() for i in infos], indent=2, ensure_ascii=False))
        return
    rows = [("plugin", "distribution", "version", "provides", "status")]
    for info in infos:
        provides = "; ".join(
            f"{kind.replace('_', ' ')}: {', '.join(names)}" for kind, names in info.provides.items() if names
        )
        rows.append((info.name, info.dist, info.version, provides or "-", "ok" if info.ok else f"BROKEN: {info.error}"))
    click.echo(_columns(rows))  # plain columns: rich's import would be a sixth of this command's start-up


def _columns(rows: Sequence[Sequence[str]]) -> str:
    """Rows of cells as left-aligned columns, two spaces apart (the last column unpadded)."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join([*(c.ljust(w) for c, w in zip(r, widths)), r[-1]]).rstrip() for r in rows)


# -- tokenize / explain -------------------------------------------------------------------------
def _resolve_inputs(items: Sequence[str], modality: str | None, text: bool = False) -> list[tuple[str, Path | Sample]]:
    """Pair each CLI argument with its modality: a file, or a literal text (the rule of
    :mod:`v22sdk.inputs`: a missing path, a folder or a special file is an error)."""
    from .inputs import resolve
    from .modality import Sample
    from .plugins import get_registry

    registry = get_registry()
    if modality is not None:
        registry.get_class("modalities", modality)  # unknown name -> one-line error listing choices
    out: list[tuple[str, Path | Sample]] = []
    for item in items:
        got = resolve(item, text=text, extensions=registry.extensions())
        if got.path is not None:
            name = modality
            if name is None:  # several readers of one extension: content, the user's default, priority
                choice = registry.resolve_path(got.path)
                if choice.notice:
                    click.echo(choice.notice, err=True)
                name = choice.modality
            out.append((name, got.path))
            continue
        name = modality or "text"
        if (
            name not in registry.names("modalities")
            or getattr(registry.get_class("modalities", name).input_spec, "kind", "") != "text"
        ):
            if text or got.source != TEXT_SOURCE:
                raise InputError(
                    got.source if got.source != TEXT_SOURCE else item, f"the {name} modality reads files, not text"
                )
            raise InputError(item, f"no such file (the {name} modality reads files)" if modality else "no such file")
        out.append((name, Sample(got.literal, source=got.source)))
    return out


def _tokenize_all(items: Sequence[str], modality: str | None, config: dict[str, Any], text: bool = False):
    from ._startup import loading

    with loading():  # the plugins' imports: no collector passes over them (v22sdk._startup)
        resolved = _resolve_inputs(items, modality, text)
    return _tokenize_resolved(resolved, config)


def _tokenize_resolved(resolved: list[tuple[str, Any]], config: dict[str, Any]):
    import contextlib

    from ._startup import loading
    from .plugins import get_registry

    registry = get_registry()
    instances: dict[str, Any] = {}
    batches = []
    for name, item in resolved:
        first = name not in instances
        if first:
            try:
                instances[name] = registry.modality(name, **config)
            except InputError:
                raise
            except (TypeError, ValueError) as exc:  # an unknown key, or a value its validator refuses
                raise InputError("--config", f"invalid configuration for {name}: {exc}") from None
        m = instances[name]
        # a modality's first input imports what its tokenizer needs (scipy, OpenCV): collector off
        with loading() if first else contextlib.nullcontext():
            batches.append((m, m.tokenize_file(item) if isinstance(item, Path) else m.tokenize(item)))
    return batches


_modality_option = click.option(
    "--modality",
    "-m",
    default=None,
    metavar="NAME",
    help="Modality to use (default: from the file extension; literal text otherwise).",
)
_text_option = click.option(
    "--text",
    "as_text",
    is_flag=True,
    help="Read every INPUT as literal text, never as a file name ('-' reads standard input).",
)
_config_option = click.option(
    "--config",
    "-c",
    "config",
    multiple=True,
    metavar="KEY=VALUE",
    help="Modality configuration, e.g. -c grid=2 (repeatable).",
)


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@_modality_option
@_text_option
@_config_option
@click.option(
    "--out",
    type=click.Path(writable=True),
    help="Write all token batches to this .npz, or .parquet (one row per token, needs pyarrow: "
    "docs/tokens-as-data.md); with --backend ray: a folder of shards.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the tokens as JSON on stdout.")
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="ray: tokenize a folder or manifest in parallel on Ray Data (extra v22sdk[ray]).",
)
@click.option("--workers", default=2, show_default=True, help="With --backend ray: Ray actors.")
@click.option("--shard-size", default=256, show_default=True, help="With --backend ray: inputs per .npz shard.")
def tokenize(
    inputs: tuple[str, ...],
    modality: str | None,
    as_text: bool,
    config: tuple[str, ...],
    out: str | None,
    as_json: bool,
    backend: str,
    workers: int,
    shard_size: int,
) -> None:
    """Tokenize files (or literal text) with any installed modality.

    An INPUT that looks like a file name (a path separator or an extension) but does not exist
    is an error, not text: give --text to tokenize it as text, or '-' to read standard input.

    With --backend ray, INPUTS is one folder or manifest (.jsonl / .txt list) and --out a folder:
    sharded .npz outputs, manifest.json, and errors.json listing every input that failed.
    """
    _one_blas_thread_from_start()
    if backend == "ray":
        if len(inputs) != 1 or not out:
            raise click.UsageError("--backend ray takes one folder or manifest and --out FOLDER")
        from .scale.cli import dispatch_tokenize

        dispatch_tokenize(inputs[0], out, modality=modality, config=config, workers=workers, shard_size=shard_size)
        return
    if out and out.lower().endswith(".parquet"):
        from ._arrow import _pyarrow

        _pyarrow()  # a missing pyarrow is said before any tokenizing
    batches = _tokenize_all(inputs, modality, parse_config(config), as_text)
    if out:
        from .tabular import save_tokens

        save_tokens(out, [b for _, b in batches])
    if as_json:
        click.echo(json.dumps([b.to_dict() for _, b in batches], ensure_ascii=False))
        return
    rows = [("input", "modality", "tokens", "active slots")]
    rows += [(b.source or "-", b.modality, str(len(b)), str(len(m.schema.active_names(b)))) for m, b in batches]
    click.echo(_columns(rows))  # plain columns: rich's import is a tenth of a cold 'tokenize FILE'
    if out:
        click.echo(f"wrote {len(batches)} batch(es) to {out}", err=True)


def _offset_label(batch, i: int) -> str:
    off = batch.offsets
    if "char" in off:
        return f"char {int(off['char'][i])}"
    if "time" in off:
        t0, t1 = off["time"][i]
        return f"{t0:.2f}-{t1:.2f} s"
    if "box" in off:
        return "box " + ",".join(str(int(v)) for v in off["box"][i])
    return "-"


@cli.command()
@click.argument("input")
@_modality_option
@_text_option
@_config_option
@click.option(
    "--top", "-k", default=8, show_default=True, type=click.IntRange(min=1), help="Named values shown per token."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")
def explain(input: str, modality: str | None, as_text: bool, config: tuple[str, ...], top: int, as_json: bool) -> None:
    """Show, per token, the named attributes that fired."""
    [(name, item)] = _resolve_inputs([input], modality, as_text)
    [(m, batch)] = _tokenize_resolved([(name, item)], parse_config(config))
    explained = m.schema.explain(batch, top=top)
    text = None
    if "char" in batch.offsets and not isinstance(item, Path):
        import unicodedata

        text = unicodedata.normalize("NFC", item.data)
    rows: list[dict[str, Any]] = []
    for i, named in enumerate(explained):
        label = text[int(batch.offsets["char"][i])] if text is not None else _offset_label(batch, i)
        rows.append({"token": i, "at": label, "attributes": dict(named)})
    if as_json:
        click.echo(json.dumps({"modality": batch.modality, "source": batch.source, "tokens": rows}, ensure_ascii=False))
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for col in ("#", "token", "named attributes"):
        table.add_column(col)
    for row in rows:
        attrs_text = "  ".join(f"{k}={v:+.2f}" for k, v in row["attributes"].items()) or "-"
        table.add_row(str(row["token"]), row["at"], attrs_text)
    _console().print(table)


# -- entry point --------------------------------------------------------------------------------
def _one_line(exc: click.ClickException) -> str:
    """click's message on one line; a usage error names the command whose --help explains it."""
    message = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        message += f" (see '{ctx.command_path} --help')"
    return message


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> None:
    """Run the CLI; errors become one line on stderr and a non-zero exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        rv = cli.main(args=args, prog_name="v22sdk", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(f"error: {_one_line(exc)}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except V22Error as exc:
        if debug:
            raise
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:  # `v22sdk memory export --jsonl | head -1`: the reader left, not an error
        _silence_stdout()
        sys.exit(141)  # 128 + SIGPIPE, as a shell reports a command killed by the signal
    except OSError as exc:  # the environment, not a bug: a full disk, a closed terminal, no permission
        if debug:
            raise
        where = exc.filename if exc.filename is not None else "output"
        click.echo(f"error: {where}: {exc.strerror or exc}", err=True)
        sys.exit(1)
    except Exception as exc:  # the last line of defence: one line, never a traceback
        if debug:
            raise
        click.echo(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)", err=True)
        sys.exit(1)
    sys.exit(rv if isinstance(rv, int) else 0)


__all__ = ["cli", "main"]
