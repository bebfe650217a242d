"""Sharded token output: ``shard-<first>-<last>.npz`` files + ``manifest.json`` + ``errors.json``.

Each shard is a :func:`v22sdk.contract.save_batches` file (one :class:`TokenBatch` per input, in
item order), written to a temp name and renamed, so a shard that exists is complete. The manifest
(``format: v22sdk.shards``) lists every shard with, per input, its item index, source, modality,
token count and target (when the manifest had one); ``errors.json`` lists every input that could
not be tokenized with the reason. :func:`load_shards` reads it all back (the loader the engine's
training data path can call).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..contract import TokenBatch, load_batches, save_batches
from ..errors import InputError, V22Error

FORMAT = "v22sdk.shards"
VERSION = 1


def _modalities(registry, config: dict[str, Any], cache: dict[str, Any], name: str):
    if name not in cache:
        cache[name] = registry.modality(name, **config.get(name, {}))
    return cache[name]


def tokenize_rows(
    rows: Sequence[dict[str, Any]],
    out_dir: str | os.PathLike,
    config: dict[str, Any] | None = None,
    registry=None,
    cache: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Tokenize ``rows`` (items of :func:`~v22sdk.scale.inputs.list_items`) into ONE shard.

    Returns one status record per row: ``{idx, input, modality, ok, shard, tokens, error}``. A
    row that fails (any :class:`V22Error`, or an unexpected exception from a plugin) is recorded
    with its error and the others are still written.
    """
    from ..plugins import get_registry

    registry = registry or get_registry()
    cache = {} if cache is None else cache
    config = config or {}
    good: list[TokenBatch] = []
    status: list[dict[str, Any]] = []
    for row in rows:
        rec = {
            "idx": int(row["idx"]),
            "input": row["input"],
            "modality": row["modality"],
            "target": row.get("target"),
            "ok": False,
            "shard": None,
            "tokens": 0,
            "error": None,
        }
        try:
            m = _modalities(registry, config, cache, row["modality"])
            batch = m.tokenize_file(row["input"]) if row["is_file"] else m.tokenize(row["input"])
            good.append(batch)
            rec.update(ok=True, tokens=len(batch))
        except V22Error as exc:
            rec["error"] = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # a plugin bug must cost one file, not the job
            rec["error"] = f"internal error in the {row['modality']} plugin: {type(exc).__name__}: {exc}"
        status.append(rec)
    if good:
        ids = [r["idx"] for r in status]
        name = f"shard-{min(ids):08d}-{max(ids):08d}.npz"
        out = Path(out_dir) / name
        tmp = out.with_name(f".{name}.{os.getpid()}.tmp")
        save_batches(tmp, good)
        os.replace(tmp, out)
        for r in status:
            if r["ok"]:
                r["shard"] = name
    return status


def write_manifest(
    out_dir: str | os.PathLike,
    status: Iterable[dict[str, Any]],
    errors: Sequence[dict[str, Any]],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``manifest.json`` and ``errors.json`` from the per-row status records; returns the summary."""
    out_dir = Path(out_dir)
    status = sorted(status, key=lambda r: r["idx"])
    shards: dict[str, list[dict[str, Any]]] = {}
    for r in status:
        if r["ok"]:
            item = {"idx": r["idx"], "source": r["input"], "modality": r["modality"], "tokens": r["tokens"]}
            if r.get("target") is not None:
                item["target"] = r["target"]
            shards.setdefault(r["shard"], []).append(item)
    all_errors = list(errors) + [
        {"input": r["input"], "stage": "tokenize", "error": r["error"]} for r in status if not r["ok"]
    ]
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "shards": [{"file": f, "items": items} for f, items in sorted(shards.items())],
        "inputs": len(status) + len(errors),
        "tokenized": sum(r["ok"] for r in status),
        "errors": len(all_errors),
        "tokens": sum(r["tokens"] for r in status),
        **(extra or {}),
    }
    for name, doc in (("manifest.json", manifest), ("errors.json", all_errors)):
        tmp = out_dir / f".{name}.tmp"
        tmp.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, out_dir / name)
    return {k: v for k, v in manifest.items() if k != "shards"}


def load_shards(out_dir: str | os.PathLike) -> tuple[list[TokenBatch], list[dict[str, Any]]]:
    """Every tokenized input of a sharded output, in item order: ``(batches, items)``.

    ``items[i]`` is the manifest record (idx, source, modality, tokens, [target]) of ``batches[i]``.
    A missing or damaged shard, or a shard whose batches disagree with the manifest, raises
    :class:`InputError` naming the file.
    """
    out_dir = Path(out_dir)
    path = out_dir / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(str(path), f"cannot read the shard manifest: {exc}") from None
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise InputError(str(path), f"not a {FORMAT} v{VERSION} manifest")
    pairs: list[Any] = []
    for shard in manifest["shards"]:
        batches = load_batches(out_dir / shard["file"])
        if len(batches) != len(shard["items"]) or any(
            len(b) != it["tokens"] or b.modality != it["modality"] for b, it in zip(batches, shard["items"])
        ):
            raise InputError(str(out_dir / shard["file"]), "shard does not match its manifest entry")
        pairs += zip(batches, shard["items"])
    pairs.sort(key=lambda p: p[1]["idx"])
    return [b for b, _ in pairs], [it for _, it in pairs]
