"""Inference-time knock-outs of the V22 stages, and a nearest neighbour on the raw tokens.

    python scripts/knockout_engine.py --seeds 5   # the suite models that scripts/eval_suite.py saved

For each checkpoint, every held-out input is answered by the intact model and then with one
stage knocked out at a time (v22sdk.engine.knockout: zeroing E, ABC', P3-L, the A/C outputs,
fixing the gate to its mean over the training inputs, clearing the memory), then with all of them
at once. Reported: how many answers changed, and held-out exact match. The stages' maths is not
touched (forward hooks), nothing is retrained. Beside them, 1-NN on the mean raw token (cosine,
training inputs as the reference set, no training at all).

Checkpoints: the V22 models that ``scripts/eval_suite.py`` saved under the work folder
(``models/v22-small-<seed>.pt``, one per suite seed, each evaluated on its suite's test split).
``--demo CHECKPOINT`` adds one more checkpoint trained on a data file it records (the old demo
checkpoint of ``demo.jsonl``; the shipped default checkpoint, trained on an augmented full suite,
has its own knock-out measurement under issue 20).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite_lab as lab  # noqa: E402

ROWS = ("E", "ABC'", "P3-L", "A/C", "gate", "memory", "all six")


def knockouts(checkpoint: Path, source: Path | None = None) -> dict:
    """Answers of one checkpoint on its held-out split, intact and knocked out, and 1-NN's."""
    import torch

    from v22sdk.engine.checkpoint import load_checkpoint
    from v22sdk.engine.data import load_dataset
    from v22sdk.engine.data.suite import baselines as bl
    from v22sdk.engine.knockout import KNOCKOUTS, knocked_out, mean_gate
    from v22sdk.engine.train import Split, predict

    model, cfg, vocab, doc = load_checkpoint(checkpoint)
    info = doc.get("data", {})
    if source is None:
        source = Path(info["source"])
        if not source.exists() and info.get("source_rel"):
            source = checkpoint.resolve().parent / info["source_rel"]
    ds = load_dataset(source, sample=info.get("sample"), seed=cfg.seed)
    if info.get("identity") and ds.identity != info["identity"]:
        raise SystemExit(f"{source} is not the data {checkpoint} was trained on")
    held = sorted(doc["split"]["test"])
    train = sorted(doc["split"]["train"])
    groups = group_of(source, ds)
    data, train_data = Split(ds, held, cfg, vocab), Split(ds, train, cfg, vocab)
    gold = [ds.examples[i].target for i in held]
    memory_state = model.memory.state_dict() if model.memory is not None else None

    def answers(names) -> list[str]:
        if memory_state is not None:  # every pass starts from the checkpoint's memory
            model.memory.load_state_dict(memory_state)
        out: list[str] = []
        with knocked_out(model, names, gate_value=gate):
            for s in range(0, data.size, 64):
                b = data.take(range(s, min(s + 64, data.size)))
                out += predict(model, b["tokens"], b["mask"], vocab, b["attr_sets"], write_memory=False)[0]
        return out

    with torch.no_grad():
        gate = mean_gate(model, train_data.tokens, train_data.mask)
    intact = answers([])
    result = {
        "checkpoint": str(checkpoint),
        "sha256": hashlib.sha256(checkpoint.read_bytes()).hexdigest(),
        "n": len(held),
        "groups": sorted(set(groups[i] for i in held)),
        "intact": score(intact, gold, [groups[i] for i in held]),
        "knockouts": {},
    }
    for row in ROWS:
        names = list(KNOCKOUTS) if row == "all six" else [row]
        got = answers(names)
        result["knockouts"][row] = {
            "changed": sum(a != b for a, b in zip(got, intact)),
            **score(got, gold, [groups[i] for i in held]),
        }
    mean = bl.mean_tokens(ds.batches)
    y = np.array([ex.target for ex in ds.examples])
    nn = bl.nearest_neighbour(mean[train], y[train], mean[held])
    result["nearest_neighbour"] = score(list(nn), gold, [groups[i] for i in held])
    return result


def group_of(source: Path, ds) -> dict[int, str]:
    """Each example's part (suite) or modality (other data)."""
    import json

    if source.suffix == ".jsonl":
        recs = {
            n: json.loads(line)
            for n, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1)
            if line.strip()
        }
        if all("part" in recs[ex.line] for ex in ds.examples):
            return {i: recs[ex.line]["part"] for i, ex in enumerate(ds.examples)}
    return {i: ex.modality for i, ex in enumerate(ds.examples)}


def score(pred: list[str], gold: list[str], groups: list[str]) -> dict:
    out = {
        "exact": float(np.mean([p == g for p, g in zip(pred, gold)])),
        "right": sum(p == g for p, g in zip(pred, gold)),
    }
    for grp in sorted(set(groups)):
        sel = [k for k, g in enumerate(groups) if g == grp]
        out[grp] = float(np.mean([pred[k] == gold[k] for k in sel]))
    return out


def tables(demo: dict | None, suite: list[dict]) -> dict:
    out = {}
    if demo:
        rows = [["intact", "—", f"{demo['intact']['right']}/{demo['n']}"]]
        for r in ROWS:
            k = demo["knockouts"][r]
            rows.append([f"knock out {r}", f"{k['changed']}/{demo['n']}", f"{k['right']}/{demo['n']}"])
        nn = demo["nearest_neighbour"]
        rows.append(["1-NN on raw tokens (no training)", "—", f"{nn['right']}/{demo['n']}"])
        out["demo"] = {
            "columns": ["demo checkpoint, held-out inputs", "answers changed", "right"],
            "align": "lrr",
            "rows": rows,
        }
    if suite:
        parts = [p for p in lab.PART_ORDER if p in suite[0]["intact"]]

        def cell(values):
            return lab.fmt_ci(values)

        rows = [
            [
                "intact",
                "—",
                *[cell([s["intact"][p] for s in suite]) for p in parts],
                cell([s["intact"]["exact"] for s in suite]),
            ]
        ]
        for r in ROWS:
            changed = [s["knockouts"][r]["changed"] / s["n"] for s in suite]
            rows.append(
                [
                    f"knock out {r}",
                    cell(changed),
                    *[cell([s["knockouts"][r][p] for s in suite]) for p in parts],
                    cell([s["knockouts"][r]["exact"] for s in suite]),
                ]
            )
        rows.append(
            [
                "1-NN on raw tokens (no training)",
                "—",
                *[cell([s["nearest_neighbour"][p] for s in suite]) for p in parts],
                cell([s["nearest_neighbour"]["exact"] for s in suite]),
            ]
        )
        seeds = ", ".join(str(s["seed"]) for s in suite)
        held = "–".join(sorted({str(min(s["n"] for s in suite)), str(max(s["n"] for s in suite))}, key=int))
        out["suite"] = {
            "columns": [
                f"suite models (seeds {seeds}; {held} held-out each)",
                "share of answers changed",
                *parts,
                "all",
            ],
            "align": "l" + "r" * (len(parts) + 2),
            "rows": rows,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--demo",
        type=Path,
        default=None,
        help="also a checkpoint trained on a data file it records (e.g. the old demo checkpoint)",
    )
    ap.add_argument("--work", type=Path, default=lab.DEFAULT_WORK, help="eval_suite.py's work folder")
    ap.add_argument("--size", default="small")
    ap.add_argument("--seeds", type=int, default=5, help="suite models to read (models/v22-<size>-<seed>.pt)")
    ap.add_argument("--only", default=None, help="these seeds' models only (comma-separated)")
    ap.add_argument("--out", type=Path, default=lab.ROOT / "results" / "engine" / "suite-knockouts.json")
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    lab.one_thread()
    work = lab.use_work(args.work)
    demo = knockouts(args.demo) if args.demo else None
    suite = []
    for seed in [int(x) for x in args.only.split(",")] if args.only else range(args.seeds):
        ckpt = work / "models" / f"v22-{args.size}-{seed}.pt"
        if not ckpt.is_file():
            raise SystemExit(f"{ckpt} is missing: run scripts/eval_suite.py first")
        lab.log(f"knock-outs on {ckpt.name}")
        suite.append({"seed": seed, **knockouts(ckpt)})
    from v22sdk.evidence import markdown_table, write_result

    t = tables(demo, suite)
    write_result(
        args.out,
        {"demo": demo, "suite": suite, "seeds": [s["seed"] for s in suite], "rows": list(ROWS)},
        tables=t,
        name="suite-knockouts",
    )
    for table in t.values():
        print(markdown_table(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
