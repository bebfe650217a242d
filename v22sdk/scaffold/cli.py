"""The ``v22sdk new-plugin`` click command (attached to the main CLI group by v22sdk.cli)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("new-plugin", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("name")
@click.option(
    "--zone",
    type=click.Choice(["vision", "audio", "language"]),
    default="vision",
    show_default=True,
    help="Attribute zone the plugin writes: vision (spatial), audio (temporal), language (symbolic).",
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Directory in which to create v22sdk-NAME/.",
)
def new_plugin(name: str, zone: str, directory: Path) -> None:
    """Generate an installable modality plugin package v22sdk-NAME.

    The package holds a working tokenizer for the zone's kind of input, its named slots, a
    hypothesis strategy of valid inputs, a test file running the contract kit and
    examples/make_manifest.py (a seeded toy data set to train on with v22sdk train).

    Example: v22sdk new-plugin thermal --zone vision --dir ./plugins
    """
    from ..plugins import get_registry
    from .generate import ScaffoldError, generate, names_for

    names_for(name)  # a bad name is refused before the registry is loaded
    registry = get_registry()
    if name in registry.names("modalities"):
        dist = registry.provider("modalities", name).dist
        raise ScaffoldError(
            f"a modality named {name!r} is already installed (from {dist}); two plugins "
            "cannot register one name, so choose another"
        )
    root = generate(name, zone, directory)  # ScaffoldError: one line, exit 2, via the CLI's entry point
    click.echo(f"created {root}")
    click.echo("next steps:")
    click.echo(f"  pip install -e {root}")
    click.echo(f"  pytest {root / 'tests'}")
    click.echo("  python -c \"from v22sdk import Registry; print(Registry().names('modalities'))\"")
    click.echo(f"  python {root / 'examples' / 'make_manifest.py'} data/{name}   # a toy data set to train on")
