"""Every built-in tokenizer's output is bit-identical to the recorded fingerprints (tokens.py)."""

from __future__ import annotations

import json

from .tokens import FILE, compute


def test_tokens_are_bit_identical_to_the_recorded_ones():
    recorded = json.loads(FILE.read_text())
    now = compute()
    assert sorted(now) == sorted(recorded)
    changed = sorted(k for k in recorded if now[k] != recorded[k])
    assert not changed, f"tokens changed for {len(changed)} input(s): {changed[:10]}"
