"""The stored unit of memory: one :class:`Turn` per input the engine has seen.

A turn holds its id (assigned by the L3 store on commit, ``0`` before), its write time (Unix
seconds), the conversation it belongs to, the input's modality, the batch ``sent_vec`` (256
float32), the memory embedding (384 float32), the attribute set (names of the slots active in its
tokens), the input's digest and a short human-readable summary.

This module imports numpy only (no torch), so the CLI and the L3 store stay light.
"""

from __future__ import annotations

import math
import re
import time as _time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from v22sdk._paths import LONE_SURROGATE, display
from v22sdk.errors import InputError

SENT_DIM = 256
MEM_DIM = 384

#: Latest accepted turn time: a day past the clock, so a store can be copied between machines
#: whose clocks differ a little, while a time in the far future (1e15 s) is refused.
FUTURE_SLACK_S = 86400.0

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def shown(value: str, limit: int = 60) -> str:
    """A short, printable, quoted form of ``value`` for error messages (``repr`` escapes lone
    surrogates and control characters, so the message itself can always be printed)."""
    return repr(value) if len(value) <= limit else repr(value[:limit]) + "..."


def check_conversation(value: object, source: str = "conversation") -> str:
    """``value`` as a conversation id; :class:`InputError` when it is not a string or holds text
    that cannot be stored (lone surrogates, i.e. bytes that are not UTF-8) or control characters
    (NUL, newline, escape ...). Ids are compared exactly, so they are refused rather than mended."""
    if not isinstance(value, str):
        raise InputError(source, f"must be a string, not {type(value).__name__}")
    if LONE_SURROGATE.search(value):
        raise InputError(f"{source} {shown(value)}", "is not valid UTF-8 text")
    if _CONTROL.search(value):
        raise InputError(f"{source} {shown(value)}", "contains a control character")
    return value


def check_time(value: object, source: str = "time", now: float | None = None) -> float:
    """``value`` as a turn time in Unix seconds; :class:`InputError` unless it is a real number in
    ``[0, now + FUTURE_SLACK_S]`` (``0`` means "the time of writing")."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(source, f"must be a number of Unix seconds, not {type(value).__name__}")
    try:
        t = float(value)
    except OverflowError:
        raise InputError(source, "is too large a number") from None
    if not math.isfinite(t):
        raise InputError(source, f"not finite: {t!r}")
    latest = (_time.time() if now is None else now) + FUTURE_SLACK_S
    if not 0.0 <= t <= latest:
        raise InputError(source, f"{t!r} is outside [0, now + 1 day] (Unix seconds)")
    return t


def as_vector(value: Any, dim: int, what: str) -> np.ndarray:
    """Return ``value`` as a read-only C-contiguous float32 array of shape ``(dim,)``.

    Raises :class:`InputError` naming ``what`` when the shape is wrong or a value is not finite.
    """
    arr = np.ascontiguousarray(np.asarray(value, dtype=np.float32))
    if arr.shape != (dim,):
        raise InputError(what, f"expected shape ({dim},), got {tuple(arr.shape)}")
    if not np.isfinite(arr).all():
        raise InputError(what, "contains a non-finite value (NaN or inf)")
    if arr.flags.writeable:
        arr = arr.copy()
        arr.flags.writeable = False
    return arr


def check_attrs(attrs: Any) -> None:
    """:class:`InputError` unless ``attrs`` is a collection of non-empty slot names that can be
    stored (no lone surrogates). On the per-turn write path: one join checks every name is a string
    (it raises otherwise) and, when any name is not ASCII, one regex search over it finds a lone
    surrogate in any of them."""
    try:
        joined = None if isinstance(attrs, str) else "".join(attrs)
    except TypeError:
        joined = None
    if joined is None or "" in attrs:
        raise InputError("turn.attrs", "must be a set of non-empty slot names")
    if not joined.isascii() and LONE_SURROGATE.search(joined):  # isascii: O(1), no regex to run
        bad = [a for a in attrs if LONE_SURROGATE.search(a)]
        raise InputError(f"turn.attrs {shown(bad[0])}", "is not valid UTF-8 text")


@dataclass(frozen=True, eq=False)
class Turn:
    """One remembered turn. Vectors are validated and frozen on construction."""

    sent_vec: np.ndarray  # (256,) float32
    mem_emb: np.ndarray  # (384,) float32
    attrs: frozenset[str] = frozenset()
    id: int = 0
    time: float = 0.0  # Unix seconds
    conversation: str = "default"
    modality: str = ""
    digest: str = ""
    summary: str = ""
    # Recency sequence used to rebuild L2 exactly (bumped on write and on promotion); L3-owned.
    touched: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sent_vec", as_vector(self.sent_vec, SENT_DIM, "turn.sent_vec"))
        object.__setattr__(self, "mem_emb", as_vector(self.mem_emb, MEM_DIM, "turn.mem_emb"))
        self._check_fields()

    @classmethod
    def from_rows(
        cls,
        sent_vec: np.ndarray,
        mem_emb: np.ndarray,
        attrs: frozenset[str],
        conversation: str = "default",
        modality: str = "",
        digest: str = "",
        summary: str = "",
    ) -> Turn:
        """A new turn from vectors the caller has checked already: read-only float32 rows of
        shapes (256,) and (384,) with finite values, owned by no one else (``TieredMemory.write``
        validates a whole batch at once). Every other field is checked as by the constructor."""
        t = object.__new__(cls)
        t.__dict__.update(
            sent_vec=sent_vec,
            mem_emb=mem_emb,
            attrs=attrs,
            id=0,
            time=0.0,
            conversation=conversation,
            modality=modality,
            digest=digest,
            summary=summary,
            touched=0,
        )
        t._check_fields()
        return t

    def _check_fields(self) -> None:
        attrs = self.attrs
        check_attrs(attrs)
        if type(attrs) is not frozenset:
            object.__setattr__(self, "attrs", frozenset(attrs))
        try:
            finite = math.isfinite(float(self.time))
        except (TypeError, ValueError, OverflowError):
            finite = False
        if not finite:
            raise InputError("turn.time", f"not a finite number: {self.time!r}")
        conv, mod, digest, summary = self.conversation, self.modality, self.digest, self.summary
        if not (
            isinstance(conv, str) and isinstance(mod, str) and isinstance(digest, str) and isinstance(summary, str)
        ):
            for name in ("conversation", "modality", "digest", "summary"):
                if not isinstance(getattr(self, name), str):
                    raise InputError(f"turn.{name}", "must be a string")
        # A conversation id is matched exactly: one that cannot be stored is refused. The other
        # strings are for display: undecodable bytes are kept as visible escapes.
        if LONE_SURROGATE.search(conv):
            raise InputError(f"turn.conversation {shown(conv)}", "is not valid UTF-8 text")
        if LONE_SURROGATE.search(mod + digest + summary):
            for name in ("modality", "digest", "summary"):
                object.__setattr__(self, name, display(getattr(self, name)))

    def same_content(self, other: Turn) -> bool:
        """True when both turns hold bit-identical vectors and equal metadata (ids included)."""
        return (
            self.id == other.id
            and self.time == other.time
            and self.conversation == other.conversation
            and self.modality == other.modality
            and self.digest == other.digest
            and self.summary == other.summary
            and self.attrs == other.attrs
            and self.sent_vec.tobytes() == other.sent_vec.tobytes()
            and self.mem_emb.tobytes() == other.mem_emb.tobytes()
        )

    def with_id(self, id_: int, time: float, touched: int) -> Turn:
        """A copy carrying the id, time and recency the store assigned at commit (the fields are
        already validated, so they are copied, not checked again: this is on the write path)."""
        t = object.__new__(Turn)
        t.__dict__.update(self.__dict__)
        t.__dict__.update(id=int(id_), time=float(time), touched=int(touched))
        return t
