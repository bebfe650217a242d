"""``tokenize`` and ``run`` over many files on Ray Data (extra ``v22sdk[ray]``).

Both jobs list their inputs on the driver (:func:`~v22sdk.scale.inputs.list_items`), turn them into
a Ray Dataset and ``map_batches`` a stateful worker class over it with an actor pool of
``num_workers`` (``concurrency``): each actor loads the plugin registry once, through the same
``v22sdk`` entry points as the single-process CLI, so the tokens are bit-identical to
``v22sdk tokenize``'s. ``tokenize`` writes one ``.npz`` shard per batch of ``shard_size`` inputs;
``run`` keeps one engine (:class:`~v22sdk.engine.runner.Runner`) per actor. A bad input costs one
record in ``errors.json``, never the job. Ray Data draws its progress bars on stderr.

``ray.init`` joins the cluster named by ``$RAY_ADDRESS`` when set, otherwise starts a local one
with ``num_workers`` CPUs (and shuts it down afterwards).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ..errors import InputError, V22Error


def _ray(num_workers: int, progress: bool):
    try:
        import ray
    except ImportError:
        raise InputError("--backend ray", "Ray is not installed: pip install 'v22sdk[ray]'") from None
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if os.environ.get("RAY_ADDRESS"):
            ray.init(address=os.environ["RAY_ADDRESS"], **kwargs)
        else:
            ray.init(num_cpus=max(1, num_workers), **kwargs)
        started = True
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = progress
    ctx.print_on_execution_start = progress
    return ray, started


class _Tokenizer:
    """Ray actor body: the registry and modality instances live as long as the actor."""

    def __init__(self, out_dir: str, config: dict[str, Any]):
        self.out_dir, self.config = out_dir, config
        self.cache: dict[str, Any] = {}

    def __call__(self, batch):
        import pandas as pd

        from .shards import tokenize_rows

        status = tokenize_rows(batch.to_dict("records"), self.out_dir, self.config, cache=self.cache)
        return pd.DataFrame(status).astype({"shard": object, "error": object, "target": object})


def tokenize(
    source: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    modality: str | None = None,
    config: dict[str, Any] | None = None,
    num_workers: int = 2,
    shard_size: int = 256,
    progress: bool = True,
) -> dict[str, Any]:
    """Tokenize every input of ``source`` (folder, ``.jsonl`` or ``.txt`` list) into shards under ``out_dir``.

    ``config`` maps a modality name to its configuration (``{"vision": {"grid": 2}}``). Returns the
    manifest summary (inputs, tokenized, errors, tokens, seconds, workers).
    """
    from .inputs import list_items
    from .shards import write_manifest

    if num_workers < 1 or shard_size < 1:
        raise InputError("--workers/--shard-size", "must be at least 1")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if (out / "manifest.json").exists():
        raise InputError(str(out), "already holds a manifest.json; choose an empty output folder")
    start = time.perf_counter()
    items, errors = list_items(source, modality)
    status: list[dict[str, Any]] = []
    if items:
        ray, started = _ray(num_workers, progress)
        try:
            blocks = max(1, -(-len(items) // shard_size))
            # In-memory blocks, no all-to-all step: every CPU can go to the actors.
            ds = ray.data.from_items(items, override_num_blocks=blocks)
            ds = ds.map_batches(
                _Tokenizer,
                fn_constructor_kwargs={"out_dir": str(out), "config": config or {}},
                batch_size=shard_size,
                batch_format="pandas",
                compute=ray.data.ActorPoolStrategy(size=num_workers),
                num_cpus=1,
            )
            status = [dict(r) for r in ds.iter_rows()]
        finally:
            if started:
                ray.shutdown()
    return write_manifest(
        out,
        _clean(status),
        errors,
        {"workers": num_workers, "seconds": round(time.perf_counter() - start, 3), "backend": "ray"},
    )


def _clean(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Arrow/pandas give numpy scalars and NaN for missing values: back to plain JSON values."""
    out = []
    for r in rows:
        c = {}
        for k, v in r.items():
            if hasattr(v, "item"):
                v = v.item()
            if isinstance(v, float) and v != v:
                v = None
            c[k] = v
        c["ok"] = bool(c["ok"])
        out.append(c)
    return out


class _Engine:
    """Ray actor body: one loaded engine per actor."""

    def __init__(self, checkpoint: str | None, top: int):
        import torch

        from ..engine.runner import Runner

        torch.set_num_threads(1)
        self.runner, self.top = Runner(checkpoint), top

    def __call__(self, batch):
        import pandas as pd

        rows = []
        for row in batch.to_dict("records"):
            rec = {"idx": int(row["idx"]), "input": row["input"], "ok": False, "result": None, "error": None}
            try:
                result = self.runner.run(row["input"], row["modality"], top=self.top)
                rec.update(ok=True, result=json.dumps(result, ensure_ascii=False))
            except V22Error as exc:
                rec["error"] = f"{type(exc).__name__}: {exc}"
            except Exception as exc:
                rec["error"] = f"internal error: {type(exc).__name__}: {exc}"
            rows.append(rec)
        return pd.DataFrame(rows).astype({"result": object, "error": object})


def run(
    source: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    checkpoint: str | None = None,
    modality: str | None = None,
    num_workers: int = 2,
    batch_size: int = 32,
    top: int = 5,
    progress: bool = True,
) -> dict[str, Any]:
    """Batch inference: the engine on every input of ``source``; ``results.jsonl`` + ``errors.json``.

    Each of ``num_workers`` actors holds one engine loaded from ``checkpoint`` (default: the bundled
    one). ``results.jsonl`` holds one ``v22sdk run --json`` record per input, in input order.
    """
    from .inputs import list_items

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if (out / "results.jsonl").exists():
        raise InputError(str(out), "already holds results.jsonl; choose an empty output folder")
    if checkpoint is not None and not Path(checkpoint).is_file():
        raise InputError(str(checkpoint), "no such checkpoint")
    start = time.perf_counter()
    items, errors = list_items(source, modality)
    rows: list[dict[str, Any]] = []
    if items:
        ray, started = _ray(num_workers, progress)
        try:
            blocks = max(1, min(len(items), num_workers * 4))
            ds = ray.data.from_items(items, override_num_blocks=blocks)
            ds = ds.map_batches(
                _Engine,
                fn_constructor_kwargs={"checkpoint": checkpoint, "top": top},
                batch_size=batch_size,
                batch_format="pandas",
                compute=ray.data.ActorPoolStrategy(size=num_workers),
                num_cpus=1,
            )
            rows = sorted(_clean(list(ds.iter_rows())), key=lambda r: r["idx"])
        finally:
            if started:
                ray.shutdown()
    errors = list(errors) + [{"input": r["input"], "stage": "run", "error": r["error"]} for r in rows if not r["ok"]]
    with open(out / ".results.jsonl.tmp", "w", encoding="utf-8") as fh:
        for r in rows:
            if r["ok"]:
                fh.write(r["result"] + "\n")
    os.replace(out / ".results.jsonl.tmp", out / "results.jsonl")
    (out / "errors.json").write_text(json.dumps(errors, ensure_ascii=False, indent=1), encoding="utf-8")
    return {
        "inputs": len(items) + (len(errors) - sum(not r["ok"] for r in rows)),
        "ran": sum(r["ok"] for r in rows),
        "errors": len(errors),
        "workers": num_workers,
        "seconds": round(time.perf_counter() - start, 3),
        "backend": "ray",
    }
