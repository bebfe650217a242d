#!/usr/bin/env python
"""Count the parameters of every stage of the engine, for the ``full`` and ``small`` presets.

    python scripts/count_parameters.py --out results/engine/parameters.json

Builds each preset's model (V22 and the baseline) and counts the parameters of each of its
stages (``named_children`` of ``V22Model``). The output vocabulary's embeddings are a buffer, not
parameters, so the counts do not depend on its size. The upstream column is quoted from
``shared/reference/v22-upstream-spec.md`` §5.2 (upstream's own figures, not measured here).
Seconds of CPU; docs/engine.md renders its stage table from the result file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (stage, attribute of V22Model, module named in the doc, shapes) in the order of the graph
STAGES = [
    ("input projection", "input", "`InputProjection`", "(B,L,640) → (B,L,256)"),
    (
        "P7",
        "p7",
        "`P7CrossSentence`",
        "16 heads × 16-D, RMSNorm Q/K, K/V = vocabulary, 4 competing groups, loss-conditioned word/sentence gates",
    ),
    ("P3-L", "p3l", "`P3LAttributeLinkage`", "(B,L,384) → p3lf (B,128); 29 groups / 416 single-dim heads in `full`"),
    ("ABC'", "abc_prime", "`ABCPrime`", "(B,128) → (B,128), xavier gain 0.01, + abc_to_sent 128→256"),
    ("A", "stage_a", "`StageA`", "[attr ‖ state] (B,L,640) → 20 classes, ah (B,128)"),
    ("B", "stage_b", "`StageB`", "(B,640) → ct (B,384)"),
    ("C", "stage_c", "`StageC`", "ct → ac (B,48), ac/(‖ac‖+1)"),
    ("D", "stage_d", "`StageD`", "ct → 11 relation logits, rd unit (B,384)"),
    ("E", "stage_e", "`StageE` + a `MemoryHead`", "rd, sent_vec → me (B,384)"),
    ("gate", "gate", "`ThreeChannelGate`", "3 × 128 channels → 384 → 512 → 512 → 256, σ"),
    ("me_to_sent", "me_to_sent", "`Linear`", "384 → 256"),
    ("P6", "p6", "`P6Decoder`", "sent (B,256) → logits (B,P,V); P heads of 256×256, tied to the vocabulary"),
]

#: upstream's counts for the same stages (shared/reference/v22-upstream-spec.md §5.2), quoted
UPSTREAM = {
    "input": "163,840",
    "p7": "449,939",
    "p3l": "830,976",
    "abc_prime": "119,296",
    "stage_a": "216,084",
    "stage_b": "246,528",
    "stage_c": "51,408",
    "stage_d": "299,915",
    "stage_e": "295,680",
    "gate": "≈632,000",
    "me_to_sent": "98,304",
    "p6": "8,585,728",
    "total": "≈12.37M (incl. pixel/FFT embeds and MasterGate)",
}


def count() -> dict:
    """Per preset: the parameters of each V22 stage, the V22 total and the baseline's total."""
    import torch

    from v22sdk.engine.config import preset
    from v22sdk.engine.v22 import build_model, parameter_count

    out = {}
    for name in ("full", "small"):
        torch.manual_seed(0)
        vocab = torch.randn(16, 256)
        v22 = build_model(preset(name), vocab)
        children = dict(v22.named_children())
        stages = {attr: parameter_count(children[attr]) for _, attr, _, _ in STAGES}
        assert sum(stages.values()) == parameter_count(v22), "a stage of V22Model is missing from STAGES"
        out[name] = {
            "stages": stages,
            "v22_total": parameter_count(v22),
            "baseline_total": parameter_count(build_model(preset(name, engine="baseline"), vocab)),
        }
    return out


def table(data: dict) -> dict:
    rows = [
        [
            stage,
            module,
            shapes,
            f"{data['full']['stages'][attr]:,}",
            f"{data['small']['stages'][attr]:,}",
            UPSTREAM[attr],
        ]
        for stage, attr, module, shapes in STAGES
    ]
    rows.append(
        [
            "**V22 total**",
            "`V22Model`",
            "",
            f"**{data['full']['v22_total']:,}**",
            f"**{data['small']['v22_total']:,}**",
            UPSTREAM["total"],
        ]
    )
    rows.append(
        [
            "baseline",
            "`BaselineModel`",
            "projection + 2-layer transformer encoder + the same P6",
            f"{data['full']['baseline_total']:,}",
            f"{data['small']['baseline_total']:,}",
            "—",
        ]
    )
    return {
        "columns": [
            "stage",
            "module (`v22sdk/engine/stages.py`)",
            "shapes",
            "`full`",
            "`small`",
            "upstream (spec §5.2)",
        ],
        "align": "lllrrr",
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=None, help="result file (JSON, v22sdk.evidence)")
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin, write_result

    begin()  # the result file names the commit this run starts at
    data = count()
    for name, d in data.items():
        print(f"{name}: V22 {d['v22_total']:,}, baseline {d['baseline_total']:,}")
    if args.out:
        write_result(
            args.out,
            data,
            tables={"stages": table(data)},
            name="engine-parameters",
            values={f"{n}.{k}": f"{d[k]:,}" for n, d in data.items() for k in ("v22_total", "baseline_total")},
        )
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
