"""``v22sdk data``: build and check the real multimodal data suite (``v22sdk.engine.data.suite``).

The suite's modules (scikit-learn, OpenCV, soundfile) are imported inside the commands, so
``v22sdk --help`` stays fast.
"""

from __future__ import annotations

import json

import click


@click.group()
def data() -> None:
    """Build and check data sets for training and evaluation."""


@data.command("build-suite")
@click.argument("out", type=click.Path(file_okay=False))
@click.option(
    "--size",
    type=click.Choice(["tiny", "small", "full"]),
    default="small",
    show_default=True,
    help="tiny: ~210 examples (tests); small: ~1,800 (experiments on 2 CPU cores); full: ~5,700.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**32 - 1),
    default=0,
    show_default=True,
    help="Seeds every choice: splits, which examples a size keeps, voices' speed and pitch.",
)
@click.option(
    "--parts", default="handwriting,speech,instruments,text", show_default=True, help="Comma-separated parts to build."
)
@click.option(
    "--soundfont",
    type=click.Path(dir_okay=False),
    default=None,
    help="FluidR3_GM.sf2, if not in /usr/share/sounds/sf2.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the suite's suite.json instead of a summary.")
def build_suite_command(out: str, size: str, seed: int, parts: str, soundfont: str | None, as_json: bool) -> None:
    """Build the real multimodal data suite into the new folder OUT, with no download.

    \b
    handwriting  scikit-learn's 1,797 scanned digits (PNG), split stratified by digit
    speech       digits 0-9 spoken in English and Mandarin by espeak-ng (WAV), split by voice
    instruments  notes of 8 instruments from FluidR3_GM.sf2 via fluidsynth (WAV), split by pitch
    text         digits written many ways (7, 七, 柒, seven, "the number seven", 第七)

    Targets share one label space: a digit is its Chinese numeral (七), an instrument its Chinese
    name (钢琴). OUT/suite.jsonl is what 'v22sdk train' reads (splits pinned); OUT/suite.json
    records each source's version, licence and SHA-256. Needs espeak-ng, fluidsynth,
    fluid-soundfont-gm (Debian) and scikit-learn.

    \b
    Example:
      v22sdk data build-suite suite --size small
      v22sdk train suite/suite.jsonl -o suite.pt
    """
    from .suite import build_suite, read_suite_info

    manifest = build_suite(
        out,
        size=size,
        seed=seed,
        parts=[p.strip() for p in parts.split(",") if p.strip()],
        soundfont=soundfont,
        log=lambda line: click.echo(line, err=True),
    )
    info = read_suite_info(manifest.parent)
    if as_json:
        click.echo(json.dumps(info, ensure_ascii=False, indent=1))
        return
    click.echo(
        f"{manifest}  ({info['n']} examples, {info['files']['n']} files, "
        f"{info['files']['bytes'] / 1e6:.1f} MB; size {size}, seed {seed})"
    )
    click.echo(f"{'part':<12} {'train':>6} {'val':>6} {'test':>6}  split by")
    for part, c in info["counts"].items():
        s = c["by_split"]
        click.echo(f"{part:<12} {s['train']:>6} {s['val']:>6} {s['test']:>6}  {info['sources'][part]['split_by']}")


@data.command("verify-suite")
@click.argument("folder", type=click.Path(file_okay=False, exists=True))
def verify_suite_command(folder: str) -> None:
    """Check that a built suite is intact: every file and manifest has the SHA-256 recorded when it
    was built. Exit code 1 (with the first problems listed) when not."""
    from .suite import SuiteError, read_suite_info, verify_suite

    problems = verify_suite(folder)
    if problems:
        shown = "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")
        raise SuiteError(f"{folder}: {len(problems)} problem(s): {shown}")
    info = read_suite_info(folder)
    click.echo(f"{folder}: intact ({info['n']} examples, {info['files']['n']} files checked)")
