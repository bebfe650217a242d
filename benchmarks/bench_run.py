#!/usr/bin/env python
"""``v22sdk run`` latency: cold start (a fresh process, one input) and warm per-input latency.

    python benchmarks/bench_run.py [--checkpoint C] [--reps N] [--cold-reps N] [--json PATH]

Cold start is a fresh ``v22sdk run INPUT --json`` process (the installed console script:
interpreter, imports, plugin registry, checkpoint load, tokenize, engine, print); target ≤ 3 s.
Each is measured as wall time and as CPU time (user + sys of the child, from ``getrusage``),
because on a shared, loaded machine the wall time mostly measures the neighbours. The peer,
measured in the same run the same way, is a bare ``python -c "import torch"``: the part of
every cold start that v22sdk cannot remove. Warm latency is the median over ``--reps`` calls of
:meth:`Runner.run` on one input in a loaded process (tokenize + engine + decode); target ≤ 50 ms
for the small preset on CPU. Inputs: one demo image, one demo sound and one text. Figures are
the median of ``--cold-reps`` fresh processes (and the minimum, the least disturbed one).

The cold runs write their turns to a memory store in a temporary folder (``--memory``, and
``V22SDK_MEMORY`` / ``V22SDK_CACHE`` pointed there too), never to the user's: a cold start opens
and writes the memory as a user's run does, and the folder is removed at the end.
``--json results/benchmarks/bench_run.json`` also writes the figures there, for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEMO = Path(__file__).resolve().parents[1] / "v22sdk" / "engine" / "data" / "demo"
INPUTS = [
    (str(DEMO / "images" / "apple_20.png"), None),
    (str(DEMO / "audio" / "tone_1900hz.wav"), None),
    ("你好吗？", "text"),
]


def _child(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall s, user + sys CPU s) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cli() -> list[str]:
    script = Path(sys.executable).parent / "v22sdk"
    if script.is_file():
        return [str(script)]
    found = shutil.which("v22sdk")
    return [found] if found else [sys.executable, "-c", "from v22sdk.cli import main; main()"]


def cold(
    source: str, modality: str | None, checkpoint: str | None, reps: int, scratch: Path
) -> list[tuple[float, float]]:
    """``reps`` fresh ``v22sdk run`` processes, their memory and token cache inside ``scratch``."""
    argv = (
        _cli()
        + ["run", source, "--json", "--memory", str(scratch / "memory.sqlite3")]
        + (["--modality", modality] if modality else [])
        + (["--checkpoint", checkpoint] if checkpoint else [])
    )
    env = {**os.environ, "V22SDK_MEMORY": str(scratch / "memory.sqlite3"), "V22SDK_CACHE": str(scratch / "cache")}
    return [_child(argv, env) for _ in range(reps)]


def _fmt(runs: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    return f"{statistics.median(walls):>6.2f} {min(walls):>6.2f}  {statistics.median(cpus):>6.2f} {min(cpus):>6.2f}"


def _label(source: str) -> str:
    return {".png": "image", ".wav": "sound"}.get(Path(source).suffix, "text")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--reps", type=int, default=30, help="warm calls per input")
    ap.add_argument("--cold-reps", type=int, default=3, help="fresh processes per input")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as a result file here")
    args = ap.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"{os.cpu_count()} CPU(s), load average {load}"
        + (
            "; PYTHONDONTWRITEBYTECODE is set: modules without a .pyc are compiled at every start"
            if os.environ.get("PYTHONDONTWRITEBYTECODE")
            else ""
        )
    )
    peer = [_child([sys.executable, "-c", "import torch"]) for _ in range(args.cold_reps)]
    peer_wall = statistics.median(w for w, _ in peer)
    peer_cpu = statistics.median(c for _, c in peer)
    print(
        f"{'cold start, seconds':<28} {'wall':>6} {'(min)':>6}  {'CPU':>6} {'(min)':>6}  {'wall/peer':>9} {'CPU/peer':>8}"
    )
    print(f"{'peer: python -c import torch':<28} {_fmt(peer)}")
    colds = {}
    with tempfile.TemporaryDirectory(prefix="bench-run-") as scratch:
        for source, modality in INPUTS:
            colds[source] = cold(source, modality, args.checkpoint, args.cold_reps, Path(scratch))
    for source, _modality in INPUTS:
        runs = colds[source]
        print(
            f"{'run ' + Path(source).name:<28} {_fmt(runs)}  "
            f"{statistics.median(w for w, _ in runs) / peer_wall:>9.2f} {statistics.median(c for _, c in runs) / peer_cpu:>8.2f}"
        )

    import torch

    from v22sdk.engine.runner import Runner

    torch.set_num_threads(1)
    runner = Runner(args.checkpoint)
    print(f"\nwarm, checkpoint {runner.path.name} ({runner.cfg.engine}, preset {runner.cfg.preset})")
    print(f"{'input':<28} {'median ms':>10} {'p90 ms':>7}  output")
    warm = {}
    for source, modality in INPUTS:
        runner.run(source, modality)
        times = []
        for _ in range(args.reps):
            t = time.perf_counter()
            r = runner.run(source, modality)
            times.append((time.perf_counter() - t) * 1e3)
        times.sort()
        warm[source] = times
        print(
            f"{Path(source).name:<28} {statistics.median(times):>10.1f} {times[int(0.9 * len(times)) - 1]:>7.1f}"
            f"  {r['output']} ({r['confidence']:.2f})"
        )
    if args.json:
        from v22sdk.evidence import write_result

        med = statistics.median
        cold_cells = ", ".join(f"{med(w for w, _ in colds[s]):.2f} s {_label(s)}" for s, _ in INPUTS)
        warm_cells = ", ".join(f"{med(warm[s]):.1f} ms {_label(s)}" for s, _ in INPUTS)
        cold_ok = all(med(w for w, _ in colds[s]) <= 3 for s, _ in INPUTS)
        warm_ok = all(med(warm[s]) <= 50 for s, _ in INPUTS)
        write_result(
            args.json,
            {
                "checkpoint": str(runner.path.name),
                "cold_reps": args.cold_reps,
                "reps": args.reps,
                "peer_import_torch": {"wall_s": [w for w, _ in peer], "cpu_s": [c for _, c in peer]},
                "cold": {
                    _label(s): {"wall_s": [w for w, _ in colds[s]], "cpu_s": [c for _, c in colds[s]]}
                    for s, _ in INPUTS
                },
                "warm_ms": {_label(s): warm[s] for s, _ in INPUTS},
            },
            tables={
                "summary": {
                    "columns": ["measure", "figure", "target", "met"],
                    "align": "lrrl",
                    "rows": [
                        [
                            f"`v22sdk run` cold start, a fresh process (median of {args.cold_reps} wall)",
                            cold_cells,
                            "≤ 3 s",
                            "yes" if cold_ok else "no",
                        ],
                        [
                            "the same, CPU time (user + sys)",
                            ", ".join(f"{med(c for _, c in colds[s]):.2f} s {_label(s)}" for s, _ in INPUTS),
                            "—",
                            "—",
                        ],
                        [
                            'the peer: `python -c "import torch"` (same run)',
                            f"{peer_wall:.2f} s wall, {peer_cpu:.2f} s CPU",
                            "—",
                            "—",
                        ],
                        [
                            f"`v22sdk run` warm, per input (median of {args.reps})",
                            warm_cells,
                            "≤ 50 ms",
                            "yes" if warm_ok else "no",
                        ],
                    ],
                }
            },
        )


if __name__ == "__main__":
    main()
