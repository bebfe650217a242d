"""The memory read-write head interface used by stage E of the V22 engine.

Stage E reads the memory with the batch's ``sent_vec`` (and the attribute sets of the inputs),
fuses what it recalls into its memory embedding as a *detached prior*, and writes each new turn
back. Any memory backend (the in-RAM FIFO below, the tiered SQLite cache of ``v22sdk.memory``,
a third-party one registered through ``v22sdk_register_memory_backends``) implements
:class:`MemoryHead`.

This module does not import torch, so registering a backend stays cheap; implementations do.
Shapes: ``B`` is the batch size; ``sent_vec`` is ``(B, 256)``; memory embeddings are ``(B, 384)``.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # torch is imported by implementations, not by this interface module
    import torch

SENT_DIM = 256
MEM_DIM = 384


@dataclass(frozen=True)
class TurnInfo:
    """What a turn is, besides its vectors: stored with it, shown when it is recalled."""

    conversation: str = "default"
    modality: str = ""
    digest: str = ""  # hex digest of the input (sha256 of the file bytes or text)
    summary: str = ""  # short human-readable text: decoded output, source name


@dataclass(frozen=True)
class Recall:
    """The result of one batched read.

    ``values`` (B, 384) holds the recalled memory embeddings (zeros where nothing was found),
    detached from any graph; ``found`` (B,) is a bool mask; ``scores`` (B,) the hybrid scores;
    ``ids`` the recalled turn ids (``None`` where nothing was found); ``info`` their TurnInfo;
    ``times`` their write times (Unix seconds, ``None`` where nothing was found).
    """

    values: Any  # torch.Tensor (B, 384)
    found: Any  # torch.Tensor (B,) bool
    scores: Any  # torch.Tensor (B,) float
    ids: list[int | None] = field(default_factory=list)
    info: list[TurnInfo | None] = field(default_factory=list)
    times: list[float | None] = field(default_factory=list)


class MemoryHead(abc.ABC):
    """A memory that stage E reads before it fuses and writes after it fuses."""

    #: Name under which the backend is registered (``--memory-backend NAME``).
    name: str = ""

    @abc.abstractmethod
    def read(self, sent_vec: torch.Tensor, attr_sets: Sequence[frozenset[str]]) -> Recall:
        """Return the best stored turn for each row of ``sent_vec`` (B, 256)."""

    @abc.abstractmethod
    def write(
        self,
        sent_vec: torch.Tensor,
        mem_emb: torch.Tensor,
        attr_sets: Sequence[frozenset[str]],
        info: Sequence[TurnInfo] | None = None,
    ) -> list[int]:
        """Store one turn per row; return the new turn ids once they are durable."""

    def __len__(self) -> int:  # pragma: no cover - trivial default
        return 0

    def close(self) -> None:  # noqa: B027  (optional hook: a default that releases nothing)
        """Release files and connections. Idempotent."""
