#!/usr/bin/env python
"""Give a trained checkpoint its fidelity floors, from the very training inputs it was trained on.

    python scripts/fit_fidelity_floors.py --suite SUITE --work DIR [--checkpoint CKPT] [--out FILE]

Checkpoints trained since :mod:`v22sdk.engine.fidelity` existed carry, per modality, the lowest
value of each fidelity slot over their training split (``data["fidelity_floors"]``, written by
``train_engine``). This adds them to one trained before: it rebuilds the training manifest the
way ``scripts/train_default.py`` built it (the suite plus its stored-differently copies, the
recipe read from ``results/engine/default-checkpoint.json``), refuses to go on unless the rebuilt
data set's identity is the one the checkpoint recorded (every input's bytes, target and split),
tokenizes the training split's inputs of the modalities that declare fidelity slots, and saves
the checkpoint again with the floors and nothing else changed (the weights are compared bit for
bit after the save). The result file records the floors, the identity and the source sample
rates the training inputs had.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CRITERION = {
    "what": "the lowest value of each fidelity slot over the shipped checkpoint's training inputs",
    "rule": "fixed in v22sdk.engine.fidelity before any figure was measured with it: an input below a floor is "
    "unfamiliar; a value above the training range is not judged",
    "guard": "the rebuilt training manifest must have the identity the checkpoint recorded (with Ogg Vorbis copies, "
    "whose stream serial numbers are random, its example count, modalities and split size), else nothing is written",
}


def _train_default():
    spec = importlib.util.spec_from_file_location("train_default", ROOT / "scripts" / "train_default.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def recipe(result: Path) -> tuple[int, tuple[str, ...]]:
    """(copies per example, always-audio variants) of the training command a result file records."""
    from v22sdk.evidence import read_result

    argv = shlex.split(read_result(result)["provenance"]["command"])
    per, always = 1, ()
    for i, a in enumerate(argv):
        if a == "--augment":
            per = int(argv[i + 1])
        if a == "--always-audio":
            always = tuple(v for v in argv[i + 1].split(",") if v)
    return per, always


def main() -> None:
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", type=Path, required=True, help="the data suite the checkpoint was trained on")
    ap.add_argument("--work", type=Path, required=True, help="a scratch folder for the rebuilt copies")
    ap.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT)
    ap.add_argument("--recipe", type=Path, default=ROOT / "results" / "engine" / "default-checkpoint.json")
    ap.add_argument("--out", type=Path, default=None, help="result file (JSON, v22sdk.evidence)")
    args = ap.parse_args()
    from v22sdk.evidence import begin, write_result

    begin()
    import soundfile as sf
    import torch

    from v22sdk.engine.checkpoint import load_checkpoint, read_checkpoint, save_checkpoint
    from v22sdk.engine.data import content_digest, examples_identity, read_examples
    from v22sdk.engine.fidelity import fidelity_slots, fit_floors
    from v22sdk.plugins import get_registry

    registry = get_registry()
    per, always = recipe(args.recipe)
    manifest = _train_default().augment(args.suite, args.work / "augmented", per, always_audio=always)
    examples = read_examples(manifest, registry)
    identity = examples_identity(examples, [content_digest(ex) for ex in examples])
    doc = read_checkpoint(args.checkpoint)
    recorded = doc.get("data") or {}
    # libsndfile writes a random stream serial number into every Ogg Vorbis file (bytes 14-17 of each
    # page, and so its CRC): two builds of one copy decode to the same samples but differ in those
    # bytes, so with Ogg copies in the recipe the identity cannot be rebuilt. What must match then:
    # every other input, which the count, the modalities and the split's size stand in for.
    ogg = sum(1 for ex in examples if ex.input.endswith(".ogg"))
    n_split = sum(len(v) for v in doc["split"].values())
    problems = []
    if identity != recorded.get("identity") and not ogg:
        problems.append(f"identity {identity}, the checkpoint recorded {recorded.get('identity')}")
    if len(examples) != recorded.get("n") or n_split != len(examples):
        problems.append(f"{len(examples)} examples, the checkpoint recorded {recorded.get('n')} (split: {n_split})")
    if sorted({ex.modality for ex in examples}) != sorted(recorded.get("modalities") or []):
        problems.append("other modalities than the checkpoint recorded")
    if problems:
        raise SystemExit(f"the rebuilt training data ({manifest}) is not the checkpoint's: {'; '.join(problems)}")
    train = [examples[i] for i in doc["split"]["train"]]
    judged = [ex for ex in train if fidelity_slots(registry, ex.modality)]
    batches = [registry.modality(ex.modality).tokenize_file(ex.input) for ex in judged]
    floors = fit_floors(batches, registry)
    rates = sorted({int(sf.info(ex.input).samplerate) for ex in judged if ex.modality == "audio"})

    model, cfg, vocab, _ = load_checkpoint(args.checkpoint)
    before = {k: v.clone() for k, v in doc["state"].items()}
    data = {**doc["data"], "fidelity_floors": floors}
    save_checkpoint(
        args.checkpoint,
        model,
        cfg,
        vocab,
        split=doc["split"],
        data=data,
        metrics=doc["metrics"],
        history=doc["history"],
        storage=doc["storage"],
        calibration=doc["calibration"],
        open_set=doc["open_set"],
    )
    after = read_checkpoint(args.checkpoint)
    same = set(before) == set(after["state"]) and all(
        before[k].dtype == after["state"][k].dtype and torch.equal(before[k], after["state"][k]) for k in before
    )
    if not same:
        raise SystemExit(f"{args.checkpoint}: the weights changed on saving again; restore it from git")

    def same_tree(a, b) -> bool:
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            return (
                isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
            )
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(same_tree(a[k], b[k]) for k in a)
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b))
        return a == b

    changed = [k for k in doc if k not in ("state", "data") and not same_tree(doc[k], after.get(k))]
    if changed or not same_tree({**doc["data"], "fidelity_floors": floors}, after["data"]):
        raise SystemExit(
            f"{args.checkpoint}: {', '.join(changed) or 'data'} changed on saving again; restore it from git"
        )

    summary = {
        "checkpoint": str(args.checkpoint),
        "identity_recorded": recorded.get("identity"),
        "identity_rebuilt": identity,
        "ogg_copies": ogg,
        "training_inputs": len(train),
        "judged_inputs": len(judged),
        "floors": floors,
        "training_source_rates_hz": rates,
        "weights_unchanged": True,
    }
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    if args.out:
        rows = [[m, slot, f"{low:+.4f}"] for m, fl in floors.items() for slot, low in fl.items()]
        write_result(
            args.out,
            summary,
            criterion=CRITERION,
            values={
                "floors.audio.source_rate": f"{floors['audio']['aud.clip.source_rate']:+.3f}",
                "rates": ", ".join(f"{r:,} Hz" for r in rates),
                "lowest_rate": f"{min(rates):,} Hz",
                "judged": f"{len(judged):,}",
            },
            tables={"floors": {"columns": ["modality", "slot", "floor"], "align": "llr", "rows": rows}},
        )
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
