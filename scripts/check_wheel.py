"""Check what a built v22sdk wheel holds, and print its size (run by scripts/ci_sdk.sh).

    python scripts/check_wheel.py dist/v22sdk-0.1.0-cp311-cp311-linux_x86_64.whl

Fails (exit 1, naming each problem) when the wheel lacks a file a user needs — the type marker,
the compiled memory scan and write rows, the built-in plugins and their data (lexicons, fixed projections), the default checkpoint, the bundled examples, the demo
data — or holds anything that is not the SDK (tests, benchmarks, scripts, results, docs, contrib).
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

#: files every wheel must hold
REQUIRED = (
    "v22sdk/py.typed",
    "v22sdk/__init__.py",
    "v22sdk/memory/_scan.pyi",
    "v22sdk/memory/_rows.pyi",
    "v22sdk/engine/data/default.pt",
    "v22sdk/engine/data/examples/seven.png",
    "v22sdk/engine/data/examples/seven.wav",
    "v22sdk/engine/data/examples/violin.wav",
    "v22sdk/engine/data/demo/demo.jsonl",
    "v22sdk_text/__init__.py",
    "v22sdk_text/data/lexicon_en.tsv",
    "v22sdk_text/data/lexicon_zh.tsv",
    "v22sdk_vision/__init__.py",
    "v22sdk_vision/data/projection.npy",
    "v22sdk_audio/__init__.py",
    "v22sdk_audio/data/projection.npy",
)
#: top-level names that must not be in a wheel
FORBIDDEN_TOP = ("tests", "benchmarks", "scripts", "results", "docs", "contrib", "plugins")


def problems(names: list[str]) -> list[str]:
    found = set(names)
    out = [f"missing {n}" for n in REQUIRED if n not in found]
    for ext, what in (("_scan", "the compiled scan"), ("_rows", "the compiled write rows")):
        if not any(n.startswith(f"v22sdk/memory/{ext}.") and n.endswith((".so", ".pyd")) for n in names):
            out.append(f"missing {what} v22sdk/memory/{ext}.*.so (setup.py builds it; was a C compiler found?)")
    tops = {n.split("/")[0] for n in names}
    out += [f"holds a top-level {t}/ (not part of the SDK)" for t in sorted(tops) if t in FORBIDDEN_TOP]
    out += [f"holds a test module {n}" for n in names if Path(n).name.startswith("test_") or "/tests/" in n]
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(argv[0])
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
    names = [i.filename for i in infos]
    bad = problems(names)
    summary = {
        "wheel": path.name,
        "bytes": path.stat().st_size,
        "MB": round(path.stat().st_size / 1e6, 2),
        "files": len(names),
        "uncompressed_MB": round(sum(i.file_size for i in infos) / 1e6, 2),
        "top_level": sorted({n.split("/")[0] for n in names}),
        "largest": sorted(((i.file_size, i.filename) for i in infos), reverse=True)[:3],
    }
    print(json.dumps(summary))
    for p in bad:
        print(f"error: {path.name}: {p}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
