"""Parsing of command-line values shared by the CLI layers (no click, no torch).

It sits at the bottom of the layering so that both the main CLI and the scale-out commands use
one parser without importing each other.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .errors import InputError


def parse_config(pairs: Sequence[str]) -> dict[str, Any]:
    """``-c KEY=VALUE`` pairs as a dict; a VALUE that parses as JSON (2, true, [1]) is typed."""
    config: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError("--config", f"expected KEY=VALUE, got {pair!r}")
        try:
            config[key] = json.loads(value)
        except json.JSONDecodeError:
            config[key] = value
    return config
