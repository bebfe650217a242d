#!/usr/bin/env python
"""What ``v22sdk run --why`` costs per input: :meth:`Runner.explain_answer` beside :meth:`Runner.run`.

    python benchmarks/bench_why.py [--checkpoint C] [--reps N] [--out results/bench/why.json] [INPUT ...]

In one warm process with one thread, for each input: the median CPU time (``process_time``) over
``--reps`` calls of ``Runner.run`` (the peer: tokenize, engine, decode) and of
``Runner.explain_answer`` with each method, once as ``run --why`` does it (regions by occlusion
through the tokenizer for inputs of fewer than 4 tokens) and once without regions. CPU time,
because on a shared machine wall time mostly measures the neighbours; the load average is
recorded. Target: ``--why`` adds at most a few hundred milliseconds per input on CPU.
Default inputs: the bundled checkpoint's held-out examples (a handwritten 7, a spoken "seven", a
violin note) and a held-out text of the data suite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EXAMPLES = ROOT / "v22sdk" / "engine" / "data" / "examples"
INPUTS = [str(EXAMPLES / "seven.png"), str(EXAMPLES / "seven.wav"), str(EXAMPLES / "violin.wav"), "digit SEVEN"]
TARGET_MS = 300.0


def cpu_ms(fn, reps: int) -> tuple[float, float]:
    """Median and maximum CPU milliseconds of ``reps`` calls (after one warm-up call)."""
    fn()
    times = []
    for _ in range(reps):
        t = time.process_time()
        fn()
        times.append(1000 * (time.process_time() - t))
    return statistics.median(times), max(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="*", help="files or texts (default: the bundled examples and a text)")
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", default=None, help="also write a result file (v22sdk.evidence)")
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    import torch

    from v22sdk.engine.explain import DEFAULT_METHOD
    from v22sdk.engine.runner import Runner

    torch.set_num_threads(1)
    load_before = os.getloadavg()
    rows, data = [], []
    with Runner(args.checkpoint) as runner:
        for source in args.inputs or INPUTS:
            run_ms = cpu_ms(lambda: runner.run(source), args.reps)
            expl = runner.explain_answer(source)
            row = {
                "input": Path(source).name if Path(source).is_file() else source,
                "modality": expl["modality"],
                "tokens": expl["tokens_read"],
                "regions": len(expl.get("regions", {}).get("cells", [])),
                "run_ms": run_ms[0],
            }
            for method in ("ig", "occlusion"):
                row[f"{method}_ms"], row[f"{method}_max_ms"] = cpu_ms(
                    lambda: runner.explain_answer(source, method=method), args.reps
                )
                row[f"{method}_no_regions_ms"] = cpu_ms(
                    lambda: runner.explain_answer(source, method=method, regions=False), args.reps
                )[0]
            data.append(row)
            shown = row["input"] if len(row["input"]) <= 24 else row["input"][:23] + "…"
            default = row[f"{DEFAULT_METHOD}_ms"]
            rows.append(
                [
                    shown,
                    row["modality"],
                    str(row["tokens"]),
                    str(row["regions"]),
                    f"{row['run_ms']:.1f}",
                    f"{default:.0f}",
                    # no regions: no region pass ran (the two medians' difference is noise)
                    f"{default - row[f'{DEFAULT_METHOD}_no_regions_ms']:.0f}" if row["regions"] else "—",
                    f"{row['ig_ms']:.0f}",
                    f"{default / row['run_ms']:.0f}×",
                    "yes" if default <= TARGET_MS else "no",
                ]
            )
    load = [round(x, 2) for x in (*load_before, *os.getloadavg())]
    columns = [
        "input",
        "modality",
        "tokens",
        "regions",
        "run ms",
        f"--why ms ({DEFAULT_METHOD})",
        "of which regions",
        "--why --method ig ms",
        "--why / run",
        f"--why ≤ {TARGET_MS:.0f} ms",
    ]
    print(f"{os.cpu_count()} CPU(s), load average {load[:3]} before, {load[3:]} after; CPU ms, median of {args.reps}")
    print(" | ".join(columns))
    for r in rows:
        print(" | ".join(r))
    if args.out:
        from v22sdk.evidence import write_result

        write_result(
            args.out,
            {"inputs": data, "reps": args.reps, "target_ms": TARGET_MS, "loadavg_before_after": load},
            tables={"cost": {"columns": columns, "align": "llrrrrrrrl", "rows": rows}},
            name="why-cost",
        )
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
