#!/usr/bin/env python
"""``v22sdk run`` latency: cold start (a fresh process, one input) and warm per-input latency.

    python benchmarks/bench_run.py [--checkpoint C] [--reps N] [--cold-reps N]

Cold start is a fresh ``v22sdk run INPUT --json`` process (the installed console script:
interpreter, imports, plugin registry, checkpoint load, tokenize, engine, print); target ≤ 3 s.
Each is measured as wall time and as CPU time (user + sys of the child, from ``getrusage``),
because on a shared, loaded machine the wall time mostly measures the neighbours. The peer,
measured in the same run the same way, is a bare ``python -c "import torch"``: the part of
every cold start that v22sdk cannot remove. Warm latency is the median over ``--reps`` calls of
:meth:`Runner.run` on one input in a loaded process (tokenize + engine + decode); target ≤ 50 ms
for the small preset on CPU. Inputs: one demo image, one demo sound and one text. Figures are
the median of ``--cold-reps`` fresh processes (and the minimum, the least disturbed one).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

DEMO = Path(__file__).resolve().parents[1] / "v22sdk" / "engine" / "data" / "demo"
INPUTS = [(str(DEMO / "images" / "apple_20.png"), None), (str(DEMO / "audio" / "tone_1900hz.wav"), None),
          ("你好吗？", "text")]


def _child(argv: list[str]) -> tuple[float, float]:
    """(wall s, user + sys CPU s) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cli() -> list[str]:
    script = Path(sys.executable).parent / "v22sdk"
    if script.is_file():
        return [str(script)]
    found = shutil.which("v22sdk")
    return [found] if found else [sys.executable, "-c", "from v22sdk.cli import main; main()"]


def cold(source: str, modality: str | None, checkpoint: str | None, reps: int) -> list[tuple[float, float]]:
    argv = _cli() + ["run", source, "--json"] + (["--modality", modality] if modality else []) \
        + (["--checkpoint", checkpoint] if checkpoint else [])
    return [_child(argv) for _ in range(reps)]


def _fmt(runs: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    return (f"{statistics.median(walls):>6.2f} {min(walls):>6.2f}  {statistics.median(cpus):>6.2f} {min(cpus):>6.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--reps", type=int, default=30, help="warm calls per input")
    ap.add_argument("--cold-reps", type=int, default=3, help="fresh processes per input")
    args = ap.parse_args()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{os.cpu_count()} CPU(s), load average {load}"
          + ("; PYTHONDONTWRITEBYTECODE is set: modules without a .pyc are compiled at every start"
             if os.environ.get("PYTHONDONTWRITEBYTECODE") else ""))
    peer = [_child([sys.executable, "-c", "import torch"]) for _ in range(args.cold_reps)]
    peer_wall = statistics.median(w for w, _ in peer)
    peer_cpu = statistics.median(c for _, c in peer)
    print(f"{'cold start, seconds':<28} {'wall':>6} {'(min)':>6}  {'CPU':>6} {'(min)':>6}  {'wall/peer':>9} {'CPU/peer':>8}")
    print(f"{'peer: python -c import torch':<28} {_fmt(peer)}")
    colds = {}
    for source, modality in INPUTS:
        runs = cold(source, modality, args.checkpoint, args.cold_reps)
        colds[source] = runs
        print(f"{'run ' + Path(source).name:<28} {_fmt(runs)}  "
              f"{statistics.median(w for w, _ in runs) / peer_wall:>9.2f} {statistics.median(c for _, c in runs) / peer_cpu:>8.2f}")

    import torch

    from v22sdk.engine.runner import Runner

    torch.set_num_threads(1)
    runner = Runner(args.checkpoint)
    print(f"\nwarm, checkpoint {runner.path.name} ({runner.cfg.engine}, preset {runner.cfg.preset})")
    print(f"{'input':<28} {'median ms':>10} {'p90 ms':>7}  output")
    for source, modality in INPUTS:
        runner.run(source, modality)
        times = []
        for _ in range(args.reps):
            t = time.perf_counter()
            r = runner.run(source, modality)
            times.append((time.perf_counter() - t) * 1e3)
        times.sort()
        print(f"{Path(source).name:<28} {statistics.median(times):>10.1f} {times[int(0.9 * len(times)) - 1]:>7.1f}"
              f"  {r['output']} ({r['confidence']:.2f})")


if __name__ == "__main__":
    main()
