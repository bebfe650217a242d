"""The tier interface, in the shape of LMCache's storage backends.

Every tier (L1 on the engine's device, L2 in RAM, L3 on disk, or a third-party one such as a
Postgres tier) answers the same questions by turn id: ``contains``, ``get``, ``put``, ``remove``,
their batched forms, and ``close``; and one semantic question, ``search``: the exact top-k turns
by hybrid score. Keys are turn ids (ints assigned by L3 at commit).
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self from Python 3.11

import numpy as np

from v22sdk.memory.turn import Turn


class MemoryTier(abc.ABC):
    """One level of the memory cache."""

    #: Short name shown in stats ("L1", "L2", "L3").
    level: str = ""

    @abc.abstractmethod
    def contains(self, turn_id: int) -> bool:
        """Whether the tier holds turn ``turn_id``."""

    @abc.abstractmethod
    def get(self, turn_id: int) -> Turn | None:
        """The turn with this id, or ``None`` when the tier does not hold it."""

    @abc.abstractmethod
    def put(self, turn: Turn) -> None:
        """Store a turn that already carries its id (cache tiers may evict to make room)."""

    @abc.abstractmethod
    def remove(self, turn_id: int) -> bool:
        """Drop a turn; returns whether it was there."""

    @abc.abstractmethod
    def search(
        self, queries: np.ndarray, qmasks: np.ndarray, qcounts: np.ndarray, k: int = 1
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-``k`` per query.

        ``queries`` (B, 256) float32 unit rows, ``qmasks`` (B, W) uint64 attribute masks,
        ``qcounts`` (B,) popcounts. Returns ``ids`` (B, k) int64 (``-1`` where fewer rows) and
        ``scores`` (B, k) float64 (``-inf`` there), best first, ties to the newer id.
        """

    @abc.abstractmethod
    def __len__(self) -> int: ...

    def batched_contains(self, turn_ids: Iterable[int]) -> list[bool]:
        return [self.contains(i) for i in turn_ids]

    def batched_get(self, turn_ids: Iterable[int]) -> list[Turn | None]:
        return [self.get(i) for i in turn_ids]

    def batched_put(self, turns: Sequence[Turn]) -> None:
        for t in turns:
            self.put(t)

    def batched_remove(self, turn_ids: Iterable[int]) -> list[bool]:
        return [self.remove(i) for i in turn_ids]

    def close(self) -> None:  # noqa: B027  (optional hook: a default that releases nothing)
        """Release resources. Idempotent."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
