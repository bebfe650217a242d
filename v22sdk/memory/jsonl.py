"""JSONL interchange: one JSON record per turn (upstream's "each turn persisted as JSON").

Record fields: ``id`` (int, informative: import assigns new ids), ``time`` (Unix seconds),
``conversation``, ``modality``, ``digest``, ``summary`` (strings), ``attrs`` (sorted list of slot
names), ``sent_vec`` (256 numbers), ``mem_emb`` (384 numbers). Vectors are written as the float64
value of each float32 (``repr`` is exact), so ``float32(float(text)) == original`` bit for bit.

Import validates the whole file before it writes anything (bad line -> :class:`InputError`
naming ``FILE:LINE``), then commits in batches of ``batch`` turns (one transaction each).
"""

from __future__ import annotations

import json
import os
from typing import IO, Iterator

import numpy as np

from v22sdk.errors import InputError
from v22sdk.memory.sqlite_tier import SQLiteTier
from v22sdk.memory.turn import Turn

FIELDS = ("id", "time", "conversation", "modality", "digest", "summary", "attrs", "sent_vec", "mem_emb")


def turn_to_record(t: Turn) -> dict:
    return {"id": t.id, "time": t.time, "conversation": t.conversation, "modality": t.modality,
            "digest": t.digest, "summary": t.summary, "attrs": sorted(t.attrs),
            "sent_vec": t.sent_vec.astype(np.float64).tolist(),
            "mem_emb": t.mem_emb.astype(np.float64).tolist()}


def record_to_turn(rec: object, where: str) -> Turn:
    if not isinstance(rec, dict):
        raise InputError(where, "a record must be a JSON object")
    missing = [f for f in FIELDS if f not in rec]
    if missing:
        raise InputError(where, f"missing field(s): {', '.join(missing)}")
    if not isinstance(rec["attrs"], list):
        raise InputError(where, "'attrs' must be a list of slot names")
    for key in ("sent_vec", "mem_emb"):
        v = rec[key]
        if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                              for x in v):
            raise InputError(where, f"'{key}' must be a list of numbers")
    try:
        return Turn(np.array(rec["sent_vec"], np.float32), np.array(rec["mem_emb"], np.float32),
                    frozenset(rec["attrs"]), time=float(rec["time"]),
                    conversation=rec["conversation"], modality=rec["modality"],
                    digest=rec["digest"], summary=rec["summary"])
    except InputError as e:
        raise InputError(where, f"{e.source}: {e.problem}") from e
    except (TypeError, ValueError) as e:
        raise InputError(where, str(e)) from e


def export_jsonl(store: SQLiteTier, out: IO[str]) -> int:
    """Write every turn of ``store`` to ``out`` in id order; returns the count."""
    n = 0
    for t in store.iter_turns():
        out.write(json.dumps(turn_to_record(t), ensure_ascii=False, allow_nan=False))
        out.write("\n")
        n += 1
    return n


def read_jsonl(path: str | os.PathLike) -> Iterator[Turn]:
    """Parse and validate each non-empty line of ``path`` (streaming)."""
    path = os.fspath(path)
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror}") from e
    with f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise InputError(where, f"not valid JSON ({e.msg})") from e
            yield record_to_turn(rec, where)


def import_jsonl(store: SQLiteTier, path: str | os.PathLike, batch: int = 1000) -> int:
    """Validate the whole file, then append its turns to ``store`` (new ids); returns the count."""
    total = sum(1 for _ in read_jsonl(path))  # validation pass: nothing written if a line is bad
    done, chunk = 0, []
    for t in read_jsonl(path):
        chunk.append(t)
        if len(chunk) == batch:
            done += len(store.commit(chunk))
            chunk = []
    if chunk:
        done += len(store.commit(chunk))
    assert done == total
    return done
