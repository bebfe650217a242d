"""Cross-modal transfer (the RFC's question 3): does one shared token space help?

    python scripts/eval_transfer.py                                  # the pre-registered run
    python scripts/eval_transfer.py --seeds 1 --k 5 --min-epochs 1 --min-steps 5 --out /tmp/t.json   # a smoke test
    python scripts/eval_transfer.py --only 3,4 --out t34.json       # some seeds per process, then:
    python scripts/eval_transfer.py --combine t012.json t34.json    # the analysis over all of them

For k handwritten scans per digit, the V22 engine is trained on the scans alone, and on the same
scans plus every speech and text training example of the suite (the spoken and written digits
have the same targets: 七 …). Both are scored on the suite's held-out handwriting. If one token
space and one engine let what is learnt from "seven" and 柒 carry over to a drawn 7, the second
condition should do better, most visibly with few scans.

The criterion below was fixed and committed before the run whose results are reported
(docs/results.md cites both commits). Nothing in it may change after the run.
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite_lab as lab  # noqa: E402

CRITERION = {
    "question": "RFC question 3: does one shared token space help? Does adding speech and text examples of the "
    "same digits to the training set raise the V22 engine's held-out handwriting accuracy?",
    "data": "the small suite built with seed s, for s = 0..4 (model seed = s); endpoint on its handwriting test "
    "split (120 scans: 12 per digit)",
    "conditions": {
        "images": "k handwriting training scans per digit (the first k of a seeded order, so the sets are nested)",
        "images+speech+text": "the same scans plus every speech and every text training example of the suite "
        "(420 clips of 21 voices, 210 strings); no instrument notes",
    },
    "k": [5, 10, 20, 42],
    "primary_k": 10,
    "engine": "V22, small preset, default switches",
    "training": "each condition trains for max(30 epochs, 600 optimiser steps) at batch 16; held-out handwriting "
    "val accuracy (60 scans) is measured every ceil(50 / steps per epoch) epochs and at the end, and "
    "the model (with its memory) of the best such point is kept (ties: the earliest)",
    "endpoint": "D = handwriting test exact match (images+speech+text) - (images), paired by seed",
    "decision": {
        "supported": "at k = 10 the 95 % t-interval of the mean of D over the 5 seeds (4 degrees of freedom) lies "
        "above 0 and the mean of D is at least +0.02",
        "contradicted": "at k = 10 the interval lies below 0 (the other modalities hurt)",
        "not detected": "otherwise; the interval is reported as the range of effects the data leave open",
    },
    "secondary": "k = 5, 20 and 42: D with its interval and the paired t-test p-value, Holm-adjusted over these "
    "three; logistic regression on the same tokens (mean, std, max; C from {0.01, 0.1, 1, 10} on the "
    "handwriting val scans) under the same two conditions as a control. Descriptive only: no claim "
    "rests on them unless the Holm-adjusted p < 0.05",
    "seeds": [0, 1, 2, 3, 4],
    "margin": 0.02,
}


def scan_order(data: lab.Loaded, seed: int) -> dict[str, list[int]]:
    """Handwriting training scans per digit in a seeded order (nested subsets for every k)."""
    from v22sdk.engine.data.suite.common import rng_for

    by_digit: dict[str, list[int]] = {}
    for i in data.where("train", ["handwriting"]):
        by_digit.setdefault(data.ds.examples[i].target, []).append(i)
    return {
        d: sorted(idx, key=lambda i: int(rng_for(seed, "transfer", data.records[i]["meta"]["index"]).integers(1 << 62)))
        for d, idx in by_digit.items()
    }


def train_selected(
    data: lab.Loaded,
    train_idx: list[int],
    select_idx: list[int],
    eval_idx: list[int],
    seed: int,
    min_epochs: int,
    min_steps: int,
) -> dict:
    """Train V22 (small) on ``train_idx``, keep the best point on ``select_idx``; answers on ``eval_idx``."""
    import time

    from v22sdk.engine.config import preset
    from v22sdk.engine.train import Trainer, predict
    from v22sdk.engine.vocab import OutputVocab

    batch = preset("small").batch_size
    per_epoch = math.ceil(len(train_idx) / batch)
    epochs = max(min_epochs, math.ceil(min_steps / per_epoch))
    every = max(1, math.ceil(50 / per_epoch))
    cfg = preset("small", seed=seed, epochs=epochs, stop_loss=0.0)
    split = {"train": sorted(train_idx), "val": sorted(select_idx), "test": sorted(eval_idx)}
    vocab = OutputVocab.build(data.targets(split["train"]))
    trainer = Trainer(cfg, data.ds, split, vocab)
    best = {"acc": -1.0}

    def on_epoch(rec: dict) -> None:
        if "val" in rec and rec["val"]["exact"] > best["acc"]:
            mem = trainer.model.memory
            best.update(
                acc=rec["val"]["exact"],
                epoch=rec["epoch"],
                state=copy.deepcopy(trainer.model.state_dict()),
                memory=copy.deepcopy(mem.state_dict()) if mem is not None else None,
            )

    start = time.process_time()
    trainer.fit(eval_every=every, on_epoch=on_epoch)
    trainer.model.load_state_dict(best["state"])
    if best["memory"] is not None:
        trainer.model.memory.load_state_dict(best["memory"])
    test = trainer.data["test"]
    preds: list[str] = []
    for s in range(0, test.size, 64):
        b = test.take(range(s, min(s + 64, test.size)))
        preds += predict(trainer.model, b["tokens"], b["mask"], vocab, b["attr_sets"], write_memory=False)[0]
    acc = float(np.mean([p == data.ds.examples[i].target for p, i in zip(preds, split["test"])]))
    return {
        "test_acc": acc,
        "val_acc": best["acc"],
        "best_epoch": best["epoch"],
        "epochs": epochs,
        "steps": epochs * per_epoch,
        "n_train": len(train_idx),
        "cpu_s": round(time.process_time() - start, 1),
    }


def lr_control(data: lab.Loaded, train_idx: list[int], select_idx: list[int], eval_idx: list[int], seed: int) -> dict:
    from v22sdk.engine.data.suite import baselines as bl

    feats = bl.token_features(data.ds.batches)
    y = np.array([ex.target for ex in data.ds.examples])
    predict, info = bl.fit_logistic(feats[train_idx], y[train_idx], feats[select_idx], y[select_idx], seed=seed)
    return {"test_acc": float(np.mean(predict(feats[eval_idx]) == y[eval_idx])), "C": info["C"]}


def decide(diffs: list[float]) -> tuple[str, tuple[float, float, float]]:
    mean, lo, hi = lab.t_interval(diffs)
    if lo > 0 and mean >= CRITERION["margin"]:
        return "supported", (mean, lo, hi)
    if hi < 0:
        return "contradicted", (mean, lo, hi)
    return "not detected", (mean, lo, hi)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=len(CRITERION["seeds"]))
    ap.add_argument("--k", default=",".join(map(str, CRITERION["k"])))
    ap.add_argument("--min-epochs", type=int, default=30)
    ap.add_argument("--min-steps", type=int, default=600, help="at least this many optimiser steps")
    ap.add_argument(
        "--size", default="small", choices=["tiny", "small"], help="small in the criterion (tiny: smoke tests)"
    )
    ap.add_argument("--work", type=Path, default=lab.DEFAULT_WORK)
    ap.add_argument("--out", type=Path, default=lab.ROOT / "results" / "engine" / "transfer.json")
    ap.add_argument("--only", default=None, help="run these seeds only (comma-separated), e.g. one group per process")
    ap.add_argument(
        "--combine",
        type=Path,
        nargs="+",
        default=None,
        metavar="RESULT",
        help="train nothing: merge the runs of these result files (same settings) into --out",
    )
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    ks = [int(k) for k in args.k.split(",")]
    if args.combine:
        runs, sources = combine(args.combine, args)
        return report(runs, ks, args, extra={"combined_from": sources})
    lab.one_thread()
    work = lab.use_work(args.work)
    runs: list[dict] = []
    for seed in [int(x) for x in args.only.split(",")] if args.only else range(args.seeds):
        data = lab.load(lab.suite(work, args.size, seed))
        order = scan_order(data, seed)
        others = data.where("train", ["speech", "text"])
        select, test = data.where("val", ["handwriting"]), data.where("test", ["handwriting"])
        for k in ks:
            images = sorted(i for idx in order.values() for i in idx[:k])
            for cond, train in (("images", images), ("images+speech+text", sorted(images + others))):
                r = train_selected(data, train, select, test, seed, args.min_epochs, args.min_steps)
                r["lr_control"] = lr_control(data, train, select, test, seed)
                runs.append({"seed": seed, "k": k, "condition": cond, **r})
                lab.log(
                    f"seed {seed} k {k} {cond}: test {r['test_acc']:.3f} (val {r['val_acc']:.3f} at epoch "
                    f"{r['best_epoch']}/{r['epochs']}), LR {r['lr_control']['test_acc']:.3f}, {r['cpu_s']} s CPU"
                )
        report(runs, ks, args)  # after every seed: a run stopped early leaves the seeds it finished
    return 0


def settings(args, ks: list[int]) -> dict:
    return {"size": args.size, "seeds": args.seeds, "k": ks, "min_epochs": args.min_epochs, "min_steps": args.min_steps}


def combine(paths: list[Path], args) -> tuple[list[dict], list[dict]]:
    """The runs of several result files of this script (seeds run in separate processes)."""
    from v22sdk.evidence import read_result

    runs: dict[tuple, dict] = {}
    sources = []
    want = {k: v for k, v in settings(args, [int(k) for k in args.k.split(",")]).items() if k not in ("seeds", "k")}
    for path in paths:
        doc = read_result(path)
        got = {k: v for k, v in doc["data"]["settings"].items() if k not in ("seeds", "k")}
        if got != want:
            raise SystemExit(f"{path}: settings {got}, expected {want}")
        for r in doc["data"]["runs"]:
            key = (r["seed"], r["k"], r["condition"])
            if key in runs and runs[key]["test_acc"] != r["test_acc"]:
                raise SystemExit(
                    f"{path}: seed {r['seed']} k {r['k']} {r['condition']} differs from another file's run"
                )
            runs.setdefault(key, r)
        sources.append(
            {
                "file": str(path),
                "seeds": sorted({r["seed"] for r in doc["data"]["runs"]}),
                "command": doc["provenance"].get("command"),
                "commit": doc["provenance"].get("commit"),
            }
        )
    return [runs[k] for k in sorted(runs)], sources


def report(runs: list[dict], ks: list[int], args, extra: dict | None = None) -> int:
    """The pre-registered analysis of ``runs`` (every seed present for every k), into ``args.out``."""
    from ablate_suite import holm, paired_p

    def acc(k, cond, key="test_acc"):
        rows = sorted((r for r in runs if r["k"] == k and r["condition"] == cond), key=lambda r: r["seed"])
        return [r[key] if key != "lr" else r["lr_control"]["test_acc"] for r in rows]

    diffs = {k: list(np.subtract(acc(k, "images+speech+text"), acc(k, "images"))) for k in ks}
    lr_diffs = {k: list(np.subtract(acc(k, "images+speech+text", "lr"), acc(k, "images", "lr"))) for k in ks}
    secondary = [k for k in ks if k != CRITERION["primary_k"]]
    adj = holm({k: paired_p(diffs[k]) for k in secondary}) if secondary else {}
    seeds = sorted({r["seed"] for r in runs})
    # the decision rule is for the pre-registered seeds; fewer (a run stopped by the clock) decide nothing
    verdicts = {
        k: decide(diffs[k]) if seeds == CRITERION["seeds"] else (f"none: {len(seeds)} of 5 seeds", None) for k in ks
    }
    rows = []
    for k in ks:
        role = "primary" if k == CRITERION["primary_k"] else f"secondary (Holm p {adj[k]:.3f})"
        rows.append(
            [
                str(k),
                role,
                lab.fmt_ci(acc(k, "images")),
                lab.fmt_ci(acc(k, "images+speech+text")),
                lab.fmt_ci(diffs[k], signed=True),
                verdicts[k][0] if k == CRITERION["primary_k"] else "—",
                lab.fmt_ci(lr_diffs[k], signed=True),
            ]
        )
    table = {
        "columns": [
            "scans per digit",
            "role",
            "V22, images",
            "V22, images+speech+text",
            "D (paired by seed)",
            "verdict",
            "LR control: D",
        ],
        "align": "llrrrlr",
        "rows": rows,
    }
    from v22sdk.evidence import markdown_table, write_result

    write_result(
        args.out,
        {
            "runs": runs,
            "diffs": {str(k): v for k, v in diffs.items()},
            "lr_diffs": {str(k): v for k, v in lr_diffs.items()},
            "holm": {str(k): v for k, v in adj.items()},
            "verdict": {str(k): v[0] for k, v in verdicts.items()},
            "seeds_run": sorted({r["seed"] for r in runs}),
            "settings": settings(args, ks),
            **(extra or {}),
        },
        tables={"transfer": table},
        criterion=CRITERION,
        name="transfer",
    )
    print(markdown_table(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
