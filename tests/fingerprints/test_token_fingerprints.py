"""Every built-in tokenizer's output is bit-identical to the recorded fingerprints (tokens.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .tokens import FILE, reference_kernel_env

TOKENS = Path(__file__).with_name("tokens.py")


def test_tokens_are_bit_identical_to_the_recorded_ones():
    recorded = json.loads(FILE.read_text())
    proc = subprocess.run(
        [sys.executable, str(TOKENS), "--print"],
        env=reference_kernel_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    now = json.loads(proc.stdout)
    assert sorted(now) == sorted(recorded)
    changed = sorted(k for k in recorded if now[k] != recorded[k])
    assert not changed, f"tokens changed for {len(changed)} input(s): {changed[:10]}"
