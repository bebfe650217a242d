#!/usr/bin/env python
"""Does a checkpoint trained with 8-bit copies of every training sound replace the shipped one?

The shipped checkpoint answers 8-bit copies of the test split's sounds the same as the originals
on 0.907 (8-bit) and 0.897 (8-bit at 22.05 kHz) of them, under the 0.95 target of
``scripts/measure_storage.py``. Its training saw one stored-differently copy per sound, drawn from
seven variants, so only about two sounds in seven had an 8-bit copy. The follow-up, fixed here
before the candidate is trained (``CRITERION``):

    python scripts/train_default.py --suite SUITE --ood OOD --always-audio wav8,wav8_22k \\
        --checkpoint CANDIDATE.pt --out CANDIDATE.json
    python scripts/measure_storage.py --suite SUITE --split val --out SHIPPED-VAL.json
    python scripts/measure_storage.py --suite SUITE --split val --checkpoint CANDIDATE.pt --out CANDIDATE-VAL.json
    python scripts/decide_8bit_retrain.py --shipped-storage SHIPPED-VAL.json \\
        --candidate-storage CANDIDATE-VAL.json --candidate CANDIDATE.pt --out results/engine/retrain-8bit.json

Only the validation split is read for the decision (:func:`decide`); the test split is measured
again, for the report, after it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: fixed on 2026-12-01 before the candidate was trained or any validation figure of it was seen
CRITERION = {
    "question": "does training with an 8-bit copy of every training sound lift the agreement of 8-bit "
    "copies with the original's answer, without costing accuracy?",
    "candidate": "scripts/train_default.py --augment 1 --always-audio wav8,wav8_22k: the shipped recipe "
    "(V22, small preset, seed 0, up to 30 epochs, the best val exact match kept, one drawn stored copy "
    "of each training sound and image) plus an 8-bit and an 8-bit 22.05 kHz copy of every training sound",
    "decided_on": "the suite's val split only: scripts/measure_storage.py --split val for both checkpoints, "
    "and each checkpoint's own val exact match (all modalities, recorded by the trainer); "
    "the test split decides nothing",
    "replace_if": "all of: (1) the candidate's val agreement on audio/wav8 and on audio/wav8_22k each "
    "exceeds the shipped checkpoint's; (2) its val exact match is at least the shipped one's minus 0.01; "
    "(3) no variant whose val agreement is >= 0.95 with the shipped checkpoint falls below 0.95",
    "otherwise": "the shipped checkpoint stays; the candidate's figures are reported as a follow-up",
    "after_replacing": "the measurements that read the shipped checkpoint (its test accuracy, calibration and "
    "open set, storage agreement on the test split, knock-outs) are run again on it",
}

EIGHT_BIT = ("audio/wav8", "audio/wav8_22k")


def decide(shipped: dict, candidate: dict, shipped_val_exact: float, candidate_val_exact: float) -> dict:
    """The rule of ``CRITERION``: ``shipped`` / ``candidate`` are the ``variants`` of two
    measure_storage result files (``{"audio/wav8": {"agreement": ...}, ...}``) on the val split."""
    reasons = []
    for key in EIGHT_BIT:
        if not candidate[key]["agreement"] > shipped[key]["agreement"]:
            reasons.append(
                f"{key}: candidate {candidate[key]['agreement']:.3f} does not exceed {shipped[key]['agreement']:.3f}"
            )
    if candidate_val_exact < shipped_val_exact - 0.01:
        reasons.append(f"val exact match {candidate_val_exact:.3f} < {shipped_val_exact:.3f} - 0.01")
    for key, s in shipped.items():
        if key not in candidate:
            reasons.append(f"{key}: not measured for the candidate")
        elif s["agreement"] >= 0.95 > candidate[key]["agreement"]:
            reasons.append(f"{key}: falls below 0.95 ({s['agreement']:.3f} -> {candidate[key]['agreement']:.3f})")
    return {"replace": not reasons, "reasons": reasons}


def main() -> None:
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT, read_checkpoint
    from v22sdk.evidence import begin, read_result, write_result

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shipped-storage", type=Path, required=True, help="measure_storage --split val, shipped")
    ap.add_argument("--candidate-storage", type=Path, required=True, help="measure_storage --split val, candidate")
    ap.add_argument("--shipped", type=Path, default=DEFAULT_CHECKPOINT, help="the shipped checkpoint")
    ap.add_argument("--candidate", type=Path, required=True, help="the candidate checkpoint")
    ap.add_argument("--out", type=Path, default=None, help="result file (JSON, v22sdk.evidence)")
    args = ap.parse_args()
    begin()
    stores = {}
    for name, path in (("shipped", args.shipped_storage), ("candidate", args.candidate_storage)):
        data = read_result(path)["data"]
        if data["summary"]["split"] != "val":
            ap.error(f"{path}: measured on the {data['summary']['split']} split; the decision reads val only")
        stores[name] = data["variants"]
    exact = {
        name: float(read_checkpoint(p)["metrics"]["val"]["all"]["exact"])
        for name, p in (("shipped", args.shipped), ("candidate", args.candidate))
    }
    verdict = decide(stores["shipped"], stores["candidate"], exact["shipped"], exact["candidate"])
    keys = sorted(stores["shipped"])
    rows = [
        [k, f"{stores['shipped'][k]['agreement']:.3f}", f"{stores['candidate'][k]['agreement']:.3f}"]
        for k in keys
        if k in stores["candidate"]
    ]
    rows.append(["val exact match (all)", f"{exact['shipped']:.3f}", f"{exact['candidate']:.3f}"])
    print(
        ("REPLACE" if verdict["replace"] else "KEEP the shipped checkpoint")
        + "".join(f"\n  - {r}" for r in verdict["reasons"])
    )
    for row in rows:
        print(" | ".join(row))
    if args.out:
        write_result(
            args.out,
            {
                "verdict": verdict,
                "val_exact": exact,
                "val_agreement": {n: {k: v["agreement"] for k, v in s.items()} for n, s in stores.items()},
            },
            criterion=CRITERION,
            values={"verdict": "replaced" if verdict["replace"] else "kept"},
            tables={
                "val": {
                    "columns": ["variant (val split)", "shipped", "candidate"],
                    "align": "lrr",
                    "rows": rows,
                }
            },
        )
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
