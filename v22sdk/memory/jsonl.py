"""JSONL interchange: one JSON record per turn (upstream's "each turn persisted as JSON").

Record fields: ``id`` (int, informative: import assigns new ids), ``time`` (Unix seconds),
``conversation``, ``modality``, ``digest``, ``summary`` (strings), ``attrs`` (sorted list of slot
names), ``sent_vec`` (256 numbers), ``mem_emb`` (384 numbers). Vectors are written as the float64
value of each float32 (``repr`` is exact), so ``float32(float(text)) == original`` bit for bit.

Import validates the whole file before it writes anything (bad line -> :class:`InputError`
naming ``FILE:LINE``), then commits in batches of ``batch`` turns (one transaction each). It
refuses: a line that is not UTF-8 (a binary file), not JSON, or holds a lone surrogate escape
(``"\\ud800"``) in a conversation id or slot name; a missing field; vectors of the wrong length or
with values that are not finite float32 (``1e308``); a ``time`` that is not a number in
``[0, now + 1 day]``; a conversation id with control characters. Lone surrogates in ``summary``,
``digest`` and ``modality`` (display text) are stored as backslash escapes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import IO

import numpy as np

from v22sdk.errors import InputError
from v22sdk.memory.sqlite_tier import SQLiteTier
from v22sdk.memory.turn import Turn, check_conversation, check_time

F32_MAX = float(np.finfo(np.float32).max)

FIELDS = ("id", "time", "conversation", "modality", "digest", "summary", "attrs", "sent_vec", "mem_emb")


def turn_to_record(t: Turn) -> dict:
    return {
        "id": t.id,
        "time": t.time,
        "conversation": t.conversation,
        "modality": t.modality,
        "digest": t.digest,
        "summary": t.summary,
        "attrs": sorted(t.attrs),
        "sent_vec": t.sent_vec.astype(np.float64).tolist(),
        "mem_emb": t.mem_emb.astype(np.float64).tolist(),
    }


def record_to_turn(rec: object, where: str) -> Turn:
    if not isinstance(rec, dict):
        raise InputError(where, "a record must be a JSON object")
    missing = [f for f in FIELDS if f not in rec]
    if missing:
        raise InputError(where, f"missing field(s): {', '.join(missing)}")
    if not isinstance(rec["attrs"], list) or not all(isinstance(a, str) for a in rec["attrs"]):
        raise InputError(where, "'attrs' must be a list of slot names")
    vecs = [_vector(rec[key], key, where) for key in ("sent_vec", "mem_emb")]
    try:
        when = check_time(rec["time"], "'time'")
        conversation = check_conversation(rec["conversation"], "'conversation'")
        return Turn(
            vecs[0],
            vecs[1],
            frozenset(rec["attrs"]),
            time=when,
            conversation=conversation,
            modality=rec["modality"],
            digest=rec["digest"],
            summary=rec["summary"],
        )
    except InputError as e:
        raise InputError(where, f"{e.source}: {e.problem}") from e
    except (TypeError, ValueError) as e:
        raise InputError(where, str(e)) from e


def _vector(v: object, key: str, where: str) -> np.ndarray:
    """A JSON list of numbers as float32; InputError unless every value fits a finite float32.

    Checked in float64 before the cast, so 1e308 is reported, not turned into inf with a warning.
    """
    if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        raise InputError(where, f"'{key}' must be a list of numbers")
    try:
        arr = np.array(v, np.float64)
    except OverflowError:  # an integer beyond float64
        raise InputError(where, f"'{key}' holds a number too large for float32") from None
    bad = ~(np.abs(arr) <= F32_MAX)  # also catches NaN and inf (json accepts NaN, Infinity)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(where, f"'{key}'[{i}] = {float(arr[i])!r} is not a finite float32")
    return arr.astype(np.float32)


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
        f = open(path, "rb")  # decoded line by line, so a bad byte is reported with its line
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror}") from e
    with f:
        for lineno, raw in enumerate(f, 1):
            where = f"{path}:{lineno}"
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")  # a leading BOM is fine
            except UnicodeDecodeError as e:
                raise InputError(
                    where,
                    f"not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1}); is this a JSONL export?",
                ) from None
            if not line.strip():
                continue
            if "\0" in line:
                raise InputError(where, "contains a NUL byte; is this a JSONL export?")
            try:
                rec = json.loads(line)
            except ValueError as e:  # JSONDecodeError has .msg; an over-long integer is a plain ValueError
                raise InputError(where, f"not valid JSON ({getattr(e, 'msg', e)})") from e
            except RecursionError:
                raise InputError(where, "not valid JSON (nested too deeply)") from None
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
