"""The monotone maps shared by the feature modules (each slot's scaling is stated in :mod:`.slots`)."""

from __future__ import annotations

import numpy as np


def clip(x: float) -> float:
    """``x`` clipped to [-1, 1] as a Python float (``-0.0`` becomes ``0.0``, so explain prints 0)."""
    return float(min(1.0, max(-1.0, x))) + 0.0


def log_count(n: float) -> float:
    """Counts 0, 1, 3, 7, ..., 1023 → 0, 0.1, 0.2, ..., 1: sign(n)·log2(1 + |n|)/10, clipped."""
    return clip(np.sign(n) * np.log2(1.0 + abs(n)) / 10.0)
