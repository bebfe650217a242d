"""Every built-in tokenizer's output is bit-identical to the recorded fingerprints (tokens.py)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from .tokens import FILE

TOKENS = Path(__file__).with_name("tokens.py")


def _reference_kernel_env() -> dict[str, str]:
    """One BLAS thread, and on x86-64 with AVX2 the Haswell kernels the digests were recorded with
    (OpenBLAS reads OPENBLAS_CORETYPE when it loads, hence a fresh process)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    if platform.machine() in ("x86_64", "AMD64") and " avx2" in flags:
        env["OPENBLAS_CORETYPE"] = "Haswell"
    return env


def test_tokens_are_bit_identical_to_the_recorded_ones():
    recorded = json.loads(FILE.read_text())
    proc = subprocess.run([sys.executable, str(TOKENS), "--print"], env=_reference_kernel_env(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    now = json.loads(proc.stdout)
    assert sorted(now) == sorted(recorded)
    changed = sorted(k for k in recorded if now[k] != recorded[k])
    assert not changed, f"tokens changed for {len(changed)} input(s): {changed[:10]}"
