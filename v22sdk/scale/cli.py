"""Click commands of the scale-out paths, for the main CLI to dispatch to.

* ``v22sdk tokenize DIR --backend ray --out OUTDIR`` (sharded .npz + manifest);
* ``v22sdk run DIR --backend ray --out OUTDIR`` (batch inference, engine held by actors);
* ``v22sdk train DATA --nproc N`` (torch.distributed.run with N ranks).

Each is a plain function (``dispatch_tokenize``, ``dispatch_run``, ``dispatch_train``) that the
existing commands call when ``--backend ray`` / ``--nproc N > 1`` is given, so there is one
command per job. Nothing here imports Ray or torch at module import.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import click

from .._options import parse_config
from ..errors import InputError


def _config(pairs: Sequence[str], modality: str | None) -> dict[str, Any]:
    """``-c KEY=VALUE`` pairs as ``{modality: {key: value}}`` (requires ``--modality``)."""
    if not pairs:
        return {}
    if modality is None:
        raise InputError("--config", "with --backend ray, --config needs --modality (one configuration per modality)")
    out = parse_config(pairs)
    return {modality: out}


def dispatch_tokenize(
    source: str,
    out: str,
    *,
    modality: str | None = None,
    config: Sequence[str] = (),
    workers: int = 2,
    shard_size: int = 256,
    progress: bool | None = None,
) -> dict[str, Any]:
    from .ray_jobs import tokenize

    summary = tokenize(
        source,
        out,
        modality=modality,
        config=_config(config, modality),
        num_workers=workers,
        shard_size=shard_size,
        progress=sys.stderr.isatty() if progress is None else progress,
    )
    click.echo(json.dumps(summary, ensure_ascii=False))
    if summary["errors"]:
        click.echo(f"{summary['errors']} input(s) could not be tokenized: see {out}/errors.json", err=True)
    return summary


def dispatch_run(
    source: str,
    out: str,
    *,
    checkpoint: str | None = None,
    modality: str | None = None,
    workers: int = 2,
    batch_size: int = 32,
    top: int = 5,
    progress: bool | None = None,
) -> dict[str, Any]:
    from .ray_jobs import run

    summary = run(
        source,
        out,
        checkpoint=checkpoint,
        modality=modality,
        num_workers=workers,
        batch_size=batch_size,
        top=top,
        progress=sys.stderr.isatty() if progress is None else progress,
    )
    click.echo(json.dumps(summary, ensure_ascii=False))
    if summary["errors"]:
        click.echo(f"{summary['errors']} input(s) failed: see {out}/errors.json", err=True)
    return summary


def dispatch_train(
    nproc: int,
    data: str,
    *,
    out: str,
    engine: str = "v22",
    preset_name: str = "small",
    epochs: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    sets: Sequence[str] = (),
    val_frac: float = 0.1,
    test_frac: float = 0.1,
    log_path: str | None = None,
    threads: int = 1,
) -> None:
    """Run ``python -m torch.distributed.run --nproc_per_node nproc -m v22sdk.scale.ddp ...``."""
    from .ddp import launch

    if nproc < 1:
        raise InputError("--nproc", "must be at least 1")
    argv = [
        data,
        "--out",
        out,
        "--engine",
        engine,
        "--preset",
        preset_name,
        "--seed",
        str(seed),
        "--val-frac",
        str(val_frac),
        "--test-frac",
        str(test_frac),
        "--threads",
        str(threads),
    ]
    argv += ["--epochs", str(epochs)] if epochs is not None else []
    argv += ["--sample", str(sample)] if sample is not None else []
    argv += ["--log", log_path] if log_path else []
    for s in sets:
        argv += ["--set", s]
    rc = launch(nproc, argv)
    if rc != 0:
        raise click.exceptions.Exit(rc)
