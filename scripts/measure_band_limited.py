#!/usr/bin/env python
"""Band-limited sounds: what the checkpoint answers for telephone-band copies, and what `run` says.

    python scripts/measure_band_limited.py --suite SUITE [--checkpoint CKPT] [--split test] [--out FILE]

Every sound of the split is resampled to each rate of ``RATES`` (8 kHz: telephone; 11.025 and
12 kHz), written as a 16-bit WAV and answered by the checkpoint. Such a copy keeps nothing above
half its rate, and the shipped checkpoint was trained on 16 kHz and up. Per rate and part: the
accuracy, the mean confidence, the share answered wrong while the open-set score alone calls it
familiar, and the same share for what ``run`` reports (score or fidelity floor,
:mod:`v22sdk.engine.fidelity`), and the share of right answers that ``run`` withholds. The
criterion, fixed before the run, is ``CRITERION``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RATES = (8_000, 11_025, 12_000)

CRITERION = {
    "what": "band-limited copies (resampled to 8, 11.025 and 12 kHz, 16-bit WAV) of the split's sounds",
    "rule": "the fidelity floors (v22sdk.engine.fidelity, committed in b8f67d7 before this run): an input whose "
    "aud.clip.source_rate lies below the lowest the checkpoint's training inputs had is unfamiliar",
    "reported": "accuracy and mean confidence; the share answered wrong while called familiar by the score alone "
    "and by run (score or floor); the share of right answers run withholds; Wilson 95 % intervals",
    "expected": "by construction run calls every copy below 16 kHz unfamiliar; what is measured is how much the "
    "score alone misses and what the floor withholds",
    "probe_before": "on the validation split at 8 kHz, before the rule was written: accuracy 0.642, called "
    "familiar by the score 0.887, wrong and familiar 0.321 (speech accuracy 0.49, instruments 0.97)",
    "split": "test, reported only; nothing is chosen on it",
}


def _share(es: list[dict], pred) -> tuple[float, list[float], int]:
    """(share, Wilson 95 % interval, count) of the entries ``es`` for which ``pred`` holds."""
    from v22sdk.engine.calibration import wilson_interval

    k = sum(1 for e in es if pred(e))
    return k / len(es), list(wilson_interval(k, len(es))), k


def main() -> None:
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", type=Path, required=True)
    ap.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT)
    ap.add_argument("--split", default="test", choices=["val", "test"])
    ap.add_argument("--limit", type=int, default=None, help="at most N sounds (quick runs)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    from v22sdk.evidence import begin, write_result

    begin()
    import soundfile as sf
    import torch

    from v22sdk.engine.runner import Runner
    from v22sdk.engine.storage import resample

    torch.set_num_threads(1)
    rows = [json.loads(x) for x in (args.suite / "suite.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["split"] == args.split and r["modality"] == "audio"][: args.limit]
    runner = Runner(args.checkpoint)
    start = time.perf_counter()
    rec: dict[int, list[dict]] = {rate: [] for rate in RATES}
    with tempfile.TemporaryDirectory() as tmp:
        for k, r in enumerate(rows):
            x, rate = sf.read(str(args.suite / r["input"]), dtype="float64")
            batches = [runner.tokenize(str(args.suite / r["input"]), "audio")]
            for new in RATES:
                f = Path(tmp) / f"{k}_{new}.wav"
                sf.write(f, resample(x, int(rate), new), new, subtype="PCM_16")
                batches.append(runner.tokenize(str(f), "audio"))
                f.unlink()
            answers = runner.judge(batches)
            ref = answers[0]
            for new, a in zip(RATES, answers[1:]):
                score_familiar = (
                    None
                    if a["open_set"] is None
                    else a["open_set"]["score"] is not None
                    and (a["open_set"]["threshold"] is None or a["open_set"]["score"] <= a["open_set"]["threshold"])
                )
                rec[new].append(
                    {
                        "part": r.get("part") or r["input"].split("/")[0],
                        "right": a["decoded"] == r["target"],
                        "ref_right": ref["decoded"] == r["target"],
                        "confidence": float(a["confidence"]),
                        "score_familiar": bool(score_familiar),
                        "run_familiar": a["familiar"] is not False,
                        "below_floors": bool(a["below_floors"]),
                    }
                )
    data, table = {}, []
    for new in RATES:
        for part in ["all", *sorted({e["part"] for e in rec[new]})]:
            es = [e for e in rec[new] if part in ("all", e["part"])]
            n = len(es)

            acc = _share(es, lambda e: e["right"])
            wrong_score = _share(es, lambda e: not e["right"] and e["score_familiar"])
            wrong_run = _share(es, lambda e: not e["right"] and e["run_familiar"])
            withheld = _share(es, lambda e: e["right"] and not e["run_familiar"])
            entry = {
                "rate": new,
                "part": part,
                "n": n,
                "accuracy": acc[0],
                "accuracy_ci95": acc[1],
                "reference_accuracy": float(np.mean([e["ref_right"] for e in es])),
                "mean_confidence": float(np.mean([e["confidence"] for e in es])),
                "score_familiar": float(np.mean([e["score_familiar"] for e in es])),
                "below_floors": float(np.mean([e["below_floors"] for e in es])),
                "wrong_familiar_by_score": wrong_score[0],
                "wrong_familiar_by_score_ci95": wrong_score[1],
                "wrong_familiar_by_run": wrong_run[0],
                "wrong_familiar_by_run_ci95": wrong_run[1],
                "right_withheld_by_run": withheld[0],
                "right_withheld_by_run_ci95": withheld[1],
            }
            data[f"{new}/{part}"] = entry

            def ci(v):
                return f"[{v[0]:.3f}, {v[1]:.3f}]"

            table.append(
                [
                    f"{new / 1000:g} kHz",
                    part,
                    str(n),
                    f"{entry['accuracy']:.3f} {ci(entry['accuracy_ci95'])} (original {entry['reference_accuracy']:.3f})",
                    f"{entry['mean_confidence']:.3f}",
                    f"{entry['wrong_familiar_by_score']:.3f} {ci(entry['wrong_familiar_by_score_ci95'])}",
                    f"{entry['wrong_familiar_by_run']:.3f} {ci(entry['wrong_familiar_by_run_ci95'])}",
                    f"{entry['right_withheld_by_run']:.3f}",
                ]
            )
    summary = {"split": args.split, "sounds": len(rows), "seconds": round(time.perf_counter() - start, 1)}
    print(json.dumps(summary))
    for row in table:
        print(" | ".join(row))
    if args.out:
        values = {}
        for key, e in data.items():
            k = key.replace("/", ".")
            values[f"{k}.accuracy"] = f"{e['accuracy']:.3f}"
            values[f"{k}.mean_confidence"] = f"{e['mean_confidence']:.2f}"
            values[f"{k}.score_familiar_pct"] = f"{100 * e['score_familiar']:.0f} %"
            values[f"{k}.wrong_familiar_by_score_pct"] = f"{100 * e['wrong_familiar_by_score']:.0f} %"
            values[f"{k}.wrong_familiar_by_run_pct"] = f"{100 * e['wrong_familiar_by_run']:.0f} %"
            values[f"{k}.right_withheld_pct"] = f"{100 * e['right_withheld_by_run']:.0f} %"
        write_result(
            args.out,
            {"summary": summary, "rates": data},
            criterion=CRITERION,
            values=values,
            tables={
                "band_limited": {
                    "columns": [
                        "copy",
                        "part",
                        "n",
                        "accuracy (95 % CI)",
                        "mean confidence",
                        "wrong and familiar: score alone",
                        "wrong and familiar: run (score or floor)",
                        "right but withheld by run",
                    ],
                    "align": "llrrrrrr",
                    "rows": table,
                }
            },
        )
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
