"""The twin of typed_plugin.py with three type errors a plugin author could make; mypy must report
each one (scripts/ci_sdk.sh counts them), which proves the SDK's names reach mypy typed."""

from __future__ import annotations

import numpy as np

from v22sdk import AttributeSchema, Encoding, TokenBatch

SCHEMA = AttributeSchema.build("audio", [("wrong.level", "a level", "[-1, 1]")])


def wrong_encoding() -> Encoding:
    return Encoding(np.zeros((1, 256)), np.zeros((1, 384)), offsets=["time"])  # error 1: offsets is a dict


def wrong_length(batch: TokenBatch) -> str:
    return len(batch)  # error 2: int, not str


def wrong_slot() -> str:
    return SCHEMA.index("wrong.level")  # error 3: an int index, not a str
