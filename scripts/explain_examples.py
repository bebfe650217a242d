"""The worked examples of docs/explanations.md: ``run --why`` on held-out inputs, pictures and figures.

    python scripts/explain_examples.py                       # the bundled checkpoint, its bundled examples
    python scripts/explain_examples.py --checkpoint model.pt --data suite/suite.jsonl --prefix why-suite

By default: the bundled checkpoint's held-out example files (``v22sdk/engine/data/examples``: a
handwritten 7, a spoken "seven", a violin note) and a held-out text of the data suite's test split
(``EXAMPLE_TEXT``), so every picture can be redone with ``v22sdk run --why FILE --plot out.png``.
With ``--data``: the first held-out input (the checkpoint's test split; for another build of its
data, the split the manifest pins) of each part of the data set (the manifest's ``part`` field
where it has one, else each modality). Explains the engine's answer as ``v22sdk run --why --plot``
does, and writes one picture per input (``docs/img/PREFIX-PART.png``) and a result file with
what the docs quote (answer, confidence, top slots, strongest parts). Nothing is written to the
user's memory (no memory is read or written, like ``--no-memory``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from explain_faithfulness import example_parts  # noqa: E402  (one reading of a suite's parts)

#: a text of the data suite's test split (``v22sdk data build-suite OUT --size full --seed 0``), never trained on
EXAMPLE_TEXT = "digit SEVEN"


def bundled_examples() -> list[tuple[str, str, str, str]]:
    """(part, input, modality, target) of the bundled checkpoint's held-out examples (examples/README.md)."""
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT

    folder = DEFAULT_CHECKPOINT.parent / "examples"
    return [
        ("handwriting", str(folder / "seven.png"), "vision", "七"),
        ("speech", str(folder / "seven.wav"), "audio", "七"),
        ("instruments", str(folder / "violin.wav"), "audio", "小提琴"),
        ("text", EXAMPLE_TEXT, "text", "七"),
    ]


def held_out_inputs(checkpoint, data, split: str) -> list[tuple[str, str, str, str]]:
    """(part, input, modality, target) of the first ``split`` example of each part."""
    from v22sdk.engine.checkpoint import read_checkpoint
    from v22sdk.engine.data import read_examples
    from v22sdk.engine.pipeline import recorded_source

    doc = read_checkpoint(checkpoint)
    info = doc.get("data", {})
    if info.get("sample") is not None:
        raise SystemExit(f"{checkpoint} was trained on a sample of its data: give the held-out inputs by hand")
    source = Path(data or recorded_source(checkpoint, info))
    examples = read_examples(source, modality=info.get("modality"))
    parts = example_parts(source, examples)
    indices = doc["split"][split]
    if info.get("source") and Path(info["source"]).resolve() != source.resolve():
        # another build of the checkpoint's data (rebuilt, or without the augmented copies): the split the
        # manifest pins, as explain_faithfulness reads it
        pinned = [getattr(ex, "split", None) for ex in examples]
        if any(p not in ("train", "val", "test") for p in pinned):
            raise SystemExit(
                f"{source} is not the data {checkpoint} was trained on, and its lines do not pin their split"
            )
        indices = [i for i, p in enumerate(pinned) if p == split]
    chosen: dict[str, tuple[str, str, str, str]] = {}
    for i in indices:
        ex = examples[i]
        chosen.setdefault(parts[i], (parts[i], ex.input, ex.modality, ex.target))
    return list(chosen.values())


def main(argv=None) -> int:
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT))
    ap.add_argument("--data", default=None, help="the checkpoint's data set (default: the one it records)")
    ap.add_argument("--split", default="test", choices=["val", "test"])
    ap.add_argument("--method", default=None, choices=["ig", "occlusion"])
    ap.add_argument("--img-dir", default=str(ROOT / "docs" / "img"))
    ap.add_argument("--prefix", default="why")
    ap.add_argument("--out", default=str(ROOT / "results" / "explain" / "examples.json"))
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    import torch

    from v22sdk.engine.explain_view import write_plot
    from v22sdk.engine.runner import Runner
    from v22sdk.evidence import write_result

    torch.set_num_threads(1)
    rows, data = [], []
    chosen = held_out_inputs(args.checkpoint, args.data, args.split) if args.data else bundled_examples()
    with Runner(args.checkpoint) as runner:
        for part, source, modality, target in chosen:
            expl = runner.explain_answer(source, modality, method=args.method)
            picture = Path(args.img_dir) / f"{args.prefix}-{part}.png"
            sample = runner.registry.modality(modality).load(source) if Path(source).is_file() else None
            write_plot(expl, picture, data=sample.data if sample else None, units=dict(sample.units) if sample else {})
            parts = sorted(expl.get("regions", {}).get("cells") or expl["tokens"], key=lambda c: -c["attribution"])
            where = [
                c.get("at") or (f"box {c['box']}" if "box" in c else f"{c['time'][0]:.2f}-{c['time'][1]:.2f} s")
                for c in parts[:3]
            ]
            top = [f"{s['name']} {s['attribution']:+.3g}" for s in expl["slots"][: args.top]]
            shown = Path(source).name if Path(source).is_file() else source
            data.append(
                {
                    "part": part,
                    "input": str(source),
                    "target": target,
                    "picture": str(picture.relative_to(ROOT))
                    if picture.resolve().is_relative_to(ROOT)
                    else str(picture),
                    "explanation": expl,
                }
            )
            answer = expl["decoded"] if expl.get("familiar") is not False else f"{expl['decoded']} (unfamiliar)"
            rows.append([part, shown, target, answer, f"{expl['confidence']:.3f}", ", ".join(top), "; ".join(where)])
            print(f"{part}: {shown} → {answer!r} ({expl['confidence']:.3f}); {', '.join(top)}", flush=True)
    write_result(
        args.out,
        {"checkpoint": args.checkpoint, "method": args.method, "examples": data},
        tables={
            "examples": {
                "columns": [
                    "part",
                    "input",
                    "target",
                    "answer",
                    "confidence",
                    f"top {args.top} slots (attribution, nats)",
                    "strongest parts",
                ],
                "rows": rows,
            }
        },
        name="explanation-examples",
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
