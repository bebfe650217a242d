"""CPU time of one full contract-kit run per plugin configuration (every built-in and contrib plugin).

    python benchmarks/kit_time.py --write results/kit/kit-time.json

Each configuration runs in its own Python process (imports included, as in a CI job that checks one
plugin) with ``check_modality(modality, derandomize=True)``: the kit's defaults on a CI machine,
20 examples per check, the fresh-process comparison on. CPU time is user + system of that process
and of the fresh process it starts; wall time is printed too (it depends on the machine's load,
which is recorded). The target of issue 17 is about a minute per configuration on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFIGS = [
    ("text", {}),
    ("vision", {}),
    ("vision", {"grid": 2}),
    ("audio", {}),
    ("hello", {}),
    ("hello", {"frame_seconds": 0.2}),
    ("depth", {}),
    ("imu", {}),
]

WORKER = """
import json, resource, sys, time
def cpu():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime
from v22sdk import get_registry
from v22sdk.testing import check_modality
name, config = sys.argv[1], json.loads(sys.argv[2])
modality = get_registry().get_class("modalities", name)(**config)
c, w = cpu(), time.perf_counter()
report = check_modality(modality, derandomize=True)
print("KIT-TIME " + json.dumps({"ok": report.ok, "failed": report.failed, "warned": report.warned,
      "kit_cpu_seconds": round(cpu() - c, 2), "kit_wall_seconds": round(time.perf_counter() - w, 2),
      "checks": len(report.ran)}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", default=None, metavar="PATH")
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    rows, data = [], []
    for name, config in CONFIGS:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", WORKER, name, json.dumps(config)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        total_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        line = [x for x in proc.stdout.splitlines() if x.startswith("KIT-TIME ")]
        if proc.returncode != 0 or not line:
            print(f"{name} {config}: failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return 1
        entry = {
            "modality": name,
            "config": config,
            **json.loads(line[-1][len("KIT-TIME ") :]),
            "process_cpu_seconds": round(total_cpu, 2),
            "process_wall_seconds": round(time.perf_counter() - start, 2),
        }
        data.append(entry)
        label = name + (f"({', '.join(f'{k}={v!r}' for k, v in config.items())})" if config else "")
        print(
            f"{label:28s} ok={entry['ok']} kit {entry['kit_cpu_seconds']:6.1f} s CPU "
            f"({entry['kit_wall_seconds']:.1f} s wall), with imports {entry['process_cpu_seconds']:6.1f} s CPU",
            flush=True,
        )
        rows.append(
            [
                label,
                "yes" if entry["ok"] else "no",
                str(entry["checks"]),
                f"{entry['kit_cpu_seconds']:.1f}",
                f"{entry['process_cpu_seconds']:.1f}",
                f"{entry['kit_wall_seconds']:.0f}",
            ]
        )
    worst = max(e["process_cpu_seconds"] for e in data)
    print(f"slowest configuration: {worst:.1f} s CPU with imports")
    if args.write:
        from v22sdk.evidence import write_result

        write_result(
            args.write,
            {"configurations": data, "max_process_cpu_seconds": worst},
            tables={
                "time": {
                    "columns": [
                        "configuration",
                        "ok",
                        "checks",
                        "kit CPU s",
                        "CPU s with imports",
                        "wall s (loaded machine)",
                    ],
                    "align": "lcrrrr",
                    "rows": rows,
                }
            },
            criterion={"target": "about 60 CPU seconds per plugin configuration on 2 cores (issue 17)"},
        )
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
