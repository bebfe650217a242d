#!/usr/bin/env python
"""How close the text modality's character embeddings come to each other: |cos| over all pairs.

    python scripts/measure_text_embedding.py --out results/text/embedding-cosines.json

The embedding of a character is a fixed unit vector of its code point (``v22sdk_text.embedding``,
integer hashing: the vectors are bit-identical on every machine, so the figures are too). This
takes 3,500 CJK ideographs from U+4E00, printable ASCII, hiragana, Arabic letters and 80 emoji,
and reports the mean, 99th and 99.99th percentiles and the maximum of |cos| over every pair of
distinct characters, beside the mean expected of independent random directions in 256-D,
sqrt(2/π)/16. Seconds of CPU.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: the code points compared (ranges, end exclusive) and what they are
RANGES = [
    (0x4E00, 0x4E00 + 3500, "CJK"),
    (0x21, 0x7F, "ASCII"),
    (0x3041, 0x3097, "hiragana"),
    (0x0627, 0x064B, "Arabic"),
    (0x1F600, 0x1F650, "emoji"),
]


def measure() -> dict:
    from v22sdk_text.embedding import code_point_vectors

    cps = np.concatenate([np.arange(a, b) for a, b, _ in RANGES])
    v = code_point_vectors(cps).astype(np.float64)
    c = np.abs(v @ v.T)[np.triu_indices(len(v), 1)]
    return {
        "code_points": int(len(v)),
        "pairs": int(c.size),
        "mean": float(c.mean()),
        "p99": float(np.percentile(c, 99)),
        "p99_99": float(np.percentile(c, 99.99)),
        "max": float(c.max()),
        "independent_mean": math.sqrt(2 / math.pi) / 16,
        "ranges": [[f"U+{a:04X}", f"U+{b - 1:04X}", what] for a, b, what in RANGES],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=None, help="result file (JSON, v22sdk.evidence)")
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin, write_result

    begin()  # the result file names the commit this run starts at
    d = measure()
    print(
        f"|cos| over {d['pairs']:,} pairs of {d['code_points']:,} code points: mean {d['mean']:.4f}, "
        f"p99 {d['p99']:.4f}, p99.99 {d['p99_99']:.4f}, max {d['max']:.4f}"
    )
    if args.out:
        write_result(
            args.out,
            d,
            name="text-embedding-cosines",
            tables={
                "cos": {
                    "columns": ["mean", "p99", "p99.99", "max"],
                    "align": "rrrr",
                    "rows": [[f"{d[k]:.4f}" for k in ("mean", "p99", "p99_99", "max")]],
                }
            },
            values={
                "pairs": f"{d['pairs']:,}",
                "code_points": f"{d['code_points']:,}",
                "independent_mean": f"{d['independent_mean']:.4f}",
            },
        )
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
