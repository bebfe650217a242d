"""Core benchmarks: CLI cold start and contract validation.

Targets (issue 2): ``v22sdk --help`` and ``v22sdk plugins list`` cold start ≤ 0.3 s median;
validating 100k tokens ≤ 50 ms. Run: ``.venv/bin/python benchmarks/bench_core.py``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BIN = Path(sys.executable).with_name("v22sdk")


def cold_start(args: list[str], repeat: int = 15) -> float:
    subprocess.run([str(BIN), *args], capture_output=True, check=True)  # warm the OS file cache once
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([str(BIN), *args], capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def validation(n: int = 100_000, repeat: int = 11) -> float:
    from v22sdk import TokenBatch

    rng = np.random.default_rng(0)
    emb = rng.standard_normal((n, 256)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    attr = rng.uniform(-1, 1, (n, 384)).astype(np.float32)
    times = []
    for _ in range(repeat):
        e, a = emb.copy(), attr.copy()  # a batch freezes its arrays; validate fresh ones each time
        t0 = time.perf_counter()
        TokenBatch(e, a, "bench")
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    rows = [
        ("v22sdk --help cold start (median of 15)", cold_start(["--help"]), 0.3),
        ("v22sdk plugins list cold start (median of 15)", cold_start(["plugins", "list"]), 0.3),
        ("contract validation of 100k tokens (median of 11)", validation(), 0.05),
    ]
    print(f"{'benchmark':55s} {'seconds':>9s} {'target':>8s}  ok")
    for name, value, target in rows:
        print(f"{name:55s} {value:9.4f} {target:8.3f}  {'yes' if value <= target else 'NO'}")


if __name__ == "__main__":
    main()
