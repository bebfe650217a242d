"""v22sdk.memory: the 3-tier semantic memory (L1 device, L2 RAM, L3 SQLite), backend ``tiered``.

Importing this package is light (no torch): :class:`TieredMemory` (which implements the engine's
``MemoryHead``, so it needs torch) is loaded on first attribute access.
"""

from __future__ import annotations

from v22sdk.memory.paths import default_memory_path
from v22sdk.memory.recovery import salvage
from v22sdk.memory.sqlite_tier import SQLiteTier
from v22sdk.memory.tier import MemoryTier
from v22sdk.memory.turn import Turn

__all__ = ["TieredMemory", "MemoryTier", "SQLiteTier", "Turn", "salvage", "default_memory_path"]


def __getattr__(name: str):
    if name == "TieredMemory":
        from v22sdk.memory.tiered import TieredMemory

        return TieredMemory
    raise AttributeError(f"module 'v22sdk.memory' has no attribute {name!r}")
