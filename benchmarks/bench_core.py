"""Core benchmarks: CLI cold start and contract validation.

Targets (issue 2): ``v22sdk --help`` and ``v22sdk plugins list`` cold start ≤ 0.3 s median;
validating 100k tokens ≤ 50 ms. Run: ``.venv/bin/python benchmarks/bench_core.py``
(``--json results/benchmarks/bench_core.json`` also writes the figures there, for docs/benchmarks.md).

Each cold start is a fresh process that reads v22sdk's compiled modules from a bytecode cache in a
temporary folder (``PYTHONPYCACHEPREFIX``), written by one untimed warm-up run, as an installed
package has them (pip compiles at install; Python writes them on the first import), and the same
way ``bench_cold.py`` measures. Without it, an editable checkout under ``PYTHONDONTWRITEBYTECODE=1``
(as on the project's machines) recompiles every imported v22sdk module in every process, which is
what earlier runs of this script timed. The processes' memory store and caches are in the same
temporary folder, never the user's.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_cold import child_envs  # the same bytecode cache and data folders (benchmarks/ is on sys.path)

BIN = Path(sys.executable).with_name("v22sdk")


CPU: dict[str, float] = {}  # median CPU seconds (user + sys) of each cold start, by command


def cold_start(args: list[str], tmp: Path, repeat: int = 15) -> float:
    """Median wall seconds of ``repeat`` fresh processes; their median CPU seconds go to ``CPU``
    (on a loaded machine the wall time mostly measures the neighbours)."""
    env, warm_env = child_envs(tmp)
    # once untimed: the OS file cache and the bytecode cache
    subprocess.run([str(BIN), *args], capture_output=True, check=True, env=warm_env)
    times, cpu = [], []
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([str(BIN), *args], capture_output=True, check=True, env=env)
        times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    CPU[" ".join(args)] = statistics.median(cpu)
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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15, help="fresh processes per command (median)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as a result file here")
    args = ap.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    with tempfile.TemporaryDirectory(prefix="v22-bench-core-") as tmp_s:
        tmp = Path(tmp_s)
        rows = [
            (
                f"`v22sdk --help` cold start (median of {args.repeat})",
                cold_start(["--help"], tmp, args.repeat),
                0.3,
            ),
            (
                f"`v22sdk plugins list` cold start (median of {args.repeat})",
                cold_start(["plugins", "list"], tmp, args.repeat),
                0.3,
            ),
            ("contract validation of 100k tokens (median of 11)", validation(), 0.05),
        ]
    print(f"{'benchmark':55s} {'seconds':>9s} {'target':>8s}  ok")
    for name, value, target in rows:
        print(f"{name:55s} {value:9.4f} {target:8.3f}  {'yes' if value <= target else 'NO'}")
    if args.json:
        from v22sdk.evidence import write_result

        def fmt(s: float) -> str:
            return f"{s:.2f} s" if s >= 0.1 else f"{s * 1e3:.1f} ms"

        cpus = [CPU["--help"], CPU["plugins list"], None]

        def met(value: float, cpu: float | None, target: float) -> str:
            if cpu is None or value <= target:
                return "yes" if value <= target else "no"
            return "by CPU time only" if cpu <= target else "no"

        write_result(
            args.json,
            {"seconds": {name: value for name, value, _ in rows}, "cpu_seconds": CPU, "repeat": args.repeat},
            tables={
                "summary": {
                    "columns": ["measure", "figure", "target", "met"],
                    "align": "lrrl",
                    "rows": [
                        [
                            name,
                            fmt(value) + ("" if cpu is None else f" wall, {fmt(cpu)} CPU"),
                            f"≤ {fmt(target)}",
                            met(value, cpu, target),
                        ]
                        for (name, value, target), cpu in zip(rows, cpus)
                    ],
                }
            },
        )


if __name__ == "__main__":
    main()
