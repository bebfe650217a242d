"""Deterministic turns for the scale tests (also imported by the writer subprocess): the very
generator of the memory tests, so both backends are tested on the same turns."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))

from _gen import NAMES, make_turn  # noqa: E402

__all__ = ["NAMES", "make_turn"]
