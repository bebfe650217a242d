"""Deterministic turns for the memory tests (also imported by the writer subprocess)."""

from __future__ import annotations

import numpy as np

from v22sdk.memory.turn import Turn

NAMES = [f"lang.slot{i:02d}" for i in range(24)] + [f"vis.slot{i:02d}" for i in range(24)]


def make_turn(seq: int, tag: str = "t") -> Turn:
    """Turn number ``seq`` of stream ``tag``: vectors and attributes depend only on (tag, seq)."""
    rng = np.random.default_rng([seq, sum(map(ord, tag))])
    attrs = frozenset(rng.choice(NAMES, size=int(rng.integers(0, 6)), replace=False).tolist())
    return Turn(
        rng.standard_normal(256).astype(np.float32),
        rng.standard_normal(384).astype(np.float32),
        attrs,
        conversation=tag,
        modality="text",
        digest=f"{tag}-{seq}",
        summary=f"{tag} #{seq}",
    )
