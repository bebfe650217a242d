#!/usr/bin/env python
"""``v22sdk run`` latency: cold start (a fresh process, one input) and warm per-input latency.

    python benchmarks/bench_run.py [--checkpoint C] [--reps N]

Cold start is the wall time of ``python -c '<run one input>'`` in a new process (interpreter,
imports, plugin registry, checkpoint load, tokenize, engine, print); target ≤ 3 s. Warm latency
is the median over ``--reps`` calls of :meth:`Runner.run` on one input in a loaded process
(tokenize + engine + decode); target ≤ 50 ms for the small preset on CPU. Inputs: one demo image,
one demo sound and one text.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

DEMO = Path(__file__).resolve().parents[1] / "v22sdk" / "engine" / "data" / "demo"
INPUTS = [(str(DEMO / "images" / "apple_20.png"), None), (str(DEMO / "audio" / "tone_1900hz.wav"), None),
          ("你好吗？", "text")]


def cold(source: str, modality: str | None, checkpoint: str | None) -> float:
    args = [source] + (["--modality", modality] if modality else []) + (["--checkpoint", checkpoint] if checkpoint else [])
    code = f"from v22sdk.engine.cli import run; run({args!r}, standalone_mode=False)"
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    import torch

    from v22sdk.engine.runner import Runner

    torch.set_num_threads(1)
    runner = Runner(args.checkpoint)
    print(f"checkpoint {runner.path} ({runner.cfg.engine}, preset {runner.cfg.preset})")
    print(f"{'input':<28} {'cold s':>7} {'warm ms (median)':>17} {'p90 ms':>7}  output")
    for source, modality in INPUTS:
        c = min(cold(source, modality, args.checkpoint) for _ in range(2))
        runner.run(source, modality)
        times = []
        for _ in range(args.reps):
            t = time.perf_counter()
            r = runner.run(source, modality)
            times.append((time.perf_counter() - t) * 1e3)
        times.sort()
        print(f"{Path(source).name:<28} {c:>7.2f} {statistics.median(times):>17.1f} {times[int(0.9 * len(times)) - 1]:>7.1f}"
              f"  {r['output']} ({r['confidence']:.2f})")


if __name__ == "__main__":
    main()
