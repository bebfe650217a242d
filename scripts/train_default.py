#!/usr/bin/env python
"""Retrain the bundled default checkpoint (``v22sdk/engine/data/default.pt``) on the data suite.

    python scripts/train_default.py --out results/engine/default-checkpoint.json

The one command that makes the shipped checkpoint. In a work folder (``--work``, default a
temporary one; ``--suite`` / ``--ood`` reuse folders built before) it:

1. builds the data suite (``v22sdk data build-suite``, ``--size full``, seed 0) and the set of
   real out-of-distribution inputs (:mod:`v22sdk.engine.ood`);
2. with ``--augment``, adds stored-differently copies of the training split's sounds and images
   (:mod:`v22sdk.engine.storage`; the validation and test splits stay as built);
3. trains V22 (``small`` preset, seed 0) on the suite's training split; the validation split is
   the calibration split; the checkpoint is stored in float16 and reloaded, and everything after
   this step uses the reloaded (shipped) weights;
4. chooses how to calibrate (:func:`~v22sdk.engine.calibration.choose_calibration`: 5-fold
   cross-validated log loss on the validation split) and which open-set score to ship
   (:func:`~v22sdk.engine.openset.choose_scorer`: mean AUROC over the out-of-distribution set's
   *dev* categories against the validation split), fits both, sets each modality's threshold at
   the 95 % quantile of its validation scores, and saves the checkpoint;
5. measures the held-out accuracy on the test split (per modality, Wilson 95 % intervals) and
   writes everything, with the criterion below, to the result file.

The test split and the out-of-distribution *test* inputs play no part in any choice; they are
measured by ``scripts/measure_confidence.py`` and ``scripts/measure_storage.py``.
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

#: fixed before the checkpoint is trained (pre-registration; the result file repeats it)
CRITERION = {
    "model": "V22, small preset, seed 0, up to 30 epochs, trained on the data suite's train split (size full, "
    "seed 0); the state with the best val exact match (evaluated every 2 epochs) is kept (a run on the "
    "small suite diverged at epoch 89: CE 0.2 -> 125)",
    "augmentation": "one stored-differently copy of each training sound (8-bit, Ogg Vorbis, 16/22.05/44.1 kHz, "
    "8-bit 22.05 kHz, stereo) and image (JPEG 90, WebP 90, half, double size), drawn with seed 0; "
    "decided before training: the slots that describe storage (aud.clip.source_rate: speech is "
    "22.05 kHz and instruments 32 kHz in the suite) separate the suite's parts, a shortcut only "
    "such copies take away",
    "calibration_split": "the suite's val split (pinned by the builder: unseen voices, pitches, scans, strings)",
    "calibration_choice": "among temperature scaling fitted globally on the string objective ('global'), "
    "globally on the token objective ('token'), and per modality ('per_modality'): "
    "the lowest 5-fold cross-validated log loss of the printed confidence on the val split",
    "open_set_choice": "among msp, energy, mahalanobis(sent_vec), relative mahalanobis(sent_vec), "
    "mahalanobis(tokens), knn(k=5, sent_vec): the highest mean AUROC over the "
    "out-of-distribution set's dev categories, each against the val examples of its modality",
    "threshold": "per modality, the 0.95 quantile of the val split's scores (5 % false alarms by construction)",
    "never_used_for_choices": "the test split and the out-of-distribution test inputs",
}

#: added to CRITERION when ``--always-audio`` is given (the 8-bit follow-up, pre-registered with its
#: decision rule in scripts/decide_8bit_retrain.py before the candidate was trained)
CRITERION_ALWAYS = (
    "besides the drawn copy, every training sound is also stored as each of these variants "
    "(a drawn variant is not repeated): {names}; added 2026-12-01 because the shipped checkpoint's "
    "8-bit agreement on the test split (0.897-0.907) missed the 0.95 target"
)

AUGMENT_AUDIO = ("wav8", "ogg", "r16k", "r22k", "r44k", "wav8_22k", "stereo")
AUGMENT_VISION = ("jpeg90", "webp", "half", "double")


def augment(suite: Path, out: Path, per_example: int, seed: int = 0, always_audio: tuple[str, ...] = ()) -> Path:
    """A manifest of the suite plus ``per_example`` stored-differently copies of each training
    sound and image (variants drawn with ``seed``), and a copy of each sound in every variant of
    ``always_audio`` not drawn for it, written under ``out``; returns its path."""
    import soundfile as sf

    from v22sdk.engine.storage import write_audio_variant, write_image_variant

    rows = [json.loads(line) for line in (suite / "suite.jsonl").read_text(encoding="utf-8").splitlines()]
    out.mkdir(parents=True, exist_ok=True)
    extra = []
    rng = np.random.default_rng(seed)
    for k, r in enumerate(rows):
        if r["split"] != "train" or r["modality"] not in ("audio", "vision"):
            continue
        src = suite / r["input"]
        names = AUGMENT_AUDIO if r["modality"] == "audio" else AUGMENT_VISION
        drawn = [str(n) for n in rng.choice(names, size=per_example, replace=False)]
        if r["modality"] == "audio":
            drawn += [n for n in always_audio if n not in drawn]
        for name in drawn:
            stem = out / f"{k}_{name}"
            if r["modality"] == "audio":
                x, rate = sf.read(str(src), dtype="float64")
                f = write_audio_variant(str(name), x, rate, stem)
            else:
                import cv2

                img = cv2.imdecode(np.frombuffer(src.read_bytes(), np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
                f = write_image_variant(str(name), img, stem)
            extra.append(
                {
                    **{k2: v for k2, v in r.items() if k2 not in ("sha256",)},
                    "input": str(f.resolve()),
                    "variant": str(name),
                }
            )
    manifest = out / "augmented.jsonl"
    lines = [
        {**r, "input": str((suite / r["input"]).resolve()) if r["modality"] != "text" else r["input"]} for r in rows
    ] + extra
    manifest.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
    return manifest


def doc_values(result: dict) -> dict[str, str]:
    """The single figures docs/results.md quotes in prose, from a run's figures (``data``);
    ``--from-result`` adds them to a result file written before this function existed."""
    summary, cal = result["summary"], result["calibration"]
    out = {
        "checkpoint_mb": f"{summary['bytes'] / 1e6:.2f} MB",
        "epochs": str(summary["epochs"]),
        "best_epoch": str(summary["best_epoch"]),
        "val_n": f"{cal['n']:,}",
        "temperature": f"{cal['temperature']:.2f}",
        **{f"temperature.{m}": f"{t:.2f}" for m, t in (cal.get("per_modality") or {}).items()},
        "calibration": cal.get("objective", "global"),
        "dev_inputs": f"{sum(result['open_set']['dev_counts'].values()):,}",
    }
    for part, c in summary["suite"]["counts"].items():
        out[f"{part}.val_n"] = str(c["by_split"]["val"])
    for part, v in result["test_accuracy_by_part"].items():
        out[f"{part}.exact"] = f"{v['exact']:.3f}"
    return out


def exact_by(groups: list[str], correct: list[bool], total: str | None = None) -> dict[str, dict]:
    """Exact match per group (sorted), and over every example as ``total`` when given: n, correct,
    the share and its Wilson 95 % interval."""
    from v22sdk.engine.calibration import wilson_interval

    out = {}
    for g in sorted(set(groups)) + ([total] if total else []):
        rows = [i for i, x in enumerate(groups) if g in (total, x)]
        k = int(sum(correct[i] for i in rows))
        out[g] = {"n": len(rows), "correct": k, "exact": k / len(rows), "ci95": list(wilson_interval(k, len(rows)))}
    return out


def resave(path: Path, model, cfg, vocab, metrics: dict, **changes) -> None:
    """Save the checkpoint at ``path`` again (float16) with ``model``'s weights, ``metrics`` merged
    into its metrics and ``changes`` (calibration=, open_set=) replacing what it held."""
    from v22sdk.engine.checkpoint import read_checkpoint, save_checkpoint

    full = read_checkpoint(path)
    full["metrics"].update(metrics)
    keep = {k: full[k] for k in ("calibration", "open_set") if k not in changes}
    save_checkpoint(
        path,
        model,
        cfg,
        vocab,
        split=full["split"],
        data=full["data"],
        metrics=full["metrics"],
        history=full["history"],
        storage="float16",
        **keep,
        **changes,
    )


def main() -> None:
    import torch

    from v22sdk.engine.calibration import (
        choose_calibration,
        expected_calibration_error,
        fit_calibration,
    )
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT, load_checkpoint
    from v22sdk.engine.config import preset
    from v22sdk.engine.data.suite import build_suite, read_suite_info
    from v22sdk.engine.ood import build_ood, read_ood
    from v22sdk.engine.openset import CANDIDATES, choose_scorer, fit_scorer
    from v22sdk.engine.pipeline import split_features, train_engine
    from v22sdk.engine.runner import Runner
    from v22sdk.engine.train import Split
    from v22sdk.evidence import write_result

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=None, help="work folder (default: a temporary one)")
    ap.add_argument("--suite", type=Path, default=None, help="a suite built before (skips building it)")
    ap.add_argument("--ood", type=Path, default=None, help="an out-of-distribution set built before")
    ap.add_argument("--size", default="full", choices=["tiny", "small", "full"])
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument(
        "--augment",
        type=int,
        default=1,
        metavar="N",
        help="N stored-differently copies of each training sound and image (0: none)",
    )
    ap.add_argument(
        "--always-audio",
        default="",
        metavar="V1,V2",
        help="also store every training sound as each of these variants (v22sdk.engine.storage.AUDIO_VARIANTS)",
    )
    ap.add_argument(
        "--seed",
        type=int,
        default=0,
        help="the engine's seed (initialisation, batch order); the suite and the copies drawn stay seed 0",
    )
    ap.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT, help="where to write the checkpoint")
    ap.add_argument("--out", type=Path, default=None, help="result file (JSON, v22sdk.evidence)")
    ap.add_argument(
        "--from-result",
        type=Path,
        default=None,
        help="add the values docs quote to this result file, derived from its data (no training)",
    )
    args = ap.parse_args()
    from v22sdk.evidence import add_values, begin, read_result

    begin()  # the result file names the commit this run starts at
    if args.from_result:
        add_values(args.from_result, doc_values(read_result(args.from_result)["data"]))
        print(f"added values to {args.from_result}")
        return

    from v22sdk.engine.storage import AUDIO_VARIANTS

    always = tuple(v for v in args.always_audio.split(",") if v)
    unknown = [v for v in always if v not in AUDIO_VARIANTS]
    if unknown:
        ap.error(f"--always-audio: unknown variant(s) {', '.join(unknown)}; known: {', '.join(AUDIO_VARIANTS)}")
    criterion = CRITERION if args.seed == 0 else {**CRITERION, "seed": f"{args.seed} (not 0): a seed-paired comparison"}
    criterion = (
        {**criterion, "augmentation_always": CRITERION_ALWAYS.format(names=", ".join(always))} if always else criterion
    )

    torch.set_num_threads(1)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        suite = args.suite or build_suite(work / "suite", size=args.size, seed=0, log=print).parent
        ood = args.ood or build_ood(work / "ood", seed=0, log=print).parent
        info = read_suite_info(suite)
        manifest = (
            augment(suite, work / "augmented", args.augment, always_audio=always)
            if args.augment or always
            else suite / "suite.jsonl"
        )
        sources = [
            {"part": part, "name": s.get("name"), "version": s.get("version"), "licence": s.get("licence")}
            for part, s in info["sources"].items()
        ]
        cfg = preset("small", epochs=args.epochs, seed=args.seed)
        res = train_engine(
            manifest,
            cfg,
            args.checkpoint,
            storage="float16",
            sources=sources,
            log_path=work / "train-log.jsonl",
            keep_best=True,
            eval_every=2,
            on_epoch=lambda h: print(
                f"epoch {h['epoch']}: loss {h['loss']:.4g}"
                + (f", val exact {h['val']['exact']:.3f}" if "val" in h else ""),
                flush=True,
            ),
        )
        train_seconds = time.perf_counter() - start

        # -- everything below uses the weights as shipped (float16, reloaded) -------------------------
        model, cfg, vocab, doc = load_checkpoint(args.checkpoint)
        ds, split = res["dataset"], res["split"]
        data = {name: Split(ds, idx, cfg, vocab) for name, idx in split.items()}
        val = split_features(model, data["val"], vocab)
        cal_method, cal_losses = choose_calibration(val["logits"], val["correct"], val["targets"], val["modalities"])
        fitted = fit_calibration(cal_method, val["logits"], val["correct"], val["targets"], val["modalities"])
        raw_val = val["confidence"]
        val = split_features(model, data["val"], vocab, fitted)
        train = split_features(model, data["train"], vocab, fitted)
        # the dev half of the out-of-distribution set, through the same tokenizers and forward pass
        dev_rows = [r for r in read_ood(ood) if r["split"] == "dev"]
        runner = Runner(args.checkpoint)
        runner.temperature, runner.temperatures = fitted["temperature"], fitted.get("per_modality", {})
        dev = runner.features([runner.tokenize(r["input"], r["modality"]) for r in dev_rows])
        best, table = choose_scorer(train, val, dev, [r["category"] for r in dev_rows])
        scorer = fit_scorer(best, train, train["labels"], train["modalities"])
        val_scores, _ = scorer.score(val, val["modalities"])
        scorer.set_thresholds(val_scores, val["modalities"])
        correct = np.array(val["correct"])
        calibration = {
            "method": "temperature",
            "objective": cal_method,
            **fitted,
            "split": "val",
            "n": int(len(correct)),
            "val_accuracy": float(correct.mean()),
            "val_ece_before": expected_calibration_error(raw_val, correct),
            "val_ece_after": expected_calibration_error(val["confidence"], correct),
        }
        resave(
            args.checkpoint,
            model,
            cfg,
            vocab,
            {"calibration": {k: v for k, v in calibration.items() if k != "method"}},
            calibration=calibration,
            open_set=scorer.to_state(),
        )

        if args.checkpoint.stat().st_size > 10 * 1024 * 1024:
            raise SystemExit(
                f"{args.checkpoint} is {args.checkpoint.stat().st_size / 1e6:.1f} MB: over the 10 MB budget"
            )

        # -- held-out accuracy of the shipped checkpoint -------------------------------------------------
        test = split_features(model, data["test"], vocab, fitted)
        acc = exact_by(test["modalities"], test["correct"], total="all")
        acc_rows = [
            [mod, str(v["n"]), f"{v['exact']:.3f}", f"[{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]"]
            for mod, v in acc.items()
        ]
        lines = [json.loads(line) for line in Path(manifest).read_text(encoding="utf-8").splitlines()]
        by_part = exact_by([lines[i]["part"] for i in split["test"]], test["correct"])
        # the shipped (float16) weights' figures, for 'run --knows' (the trainer recorded the float32 ones)
        resave(
            args.checkpoint,
            model,
            cfg,
            vocab,
            {"test_shipped": {mod: {"exact": v["exact"], "n": v["n"]} for mod, v in acc.items()}},
        )
        m = res["metrics"]
        summary = {
            "checkpoint": str(
                args.checkpoint.relative_to(ROOT) if args.checkpoint.is_relative_to(ROOT) else args.checkpoint
            ),
            "bytes": args.checkpoint.stat().st_size,
            "parameters": m["parameters"],
            "epochs": m["epochs"],
            "final_loss": m["final_loss"],
            "stopped_early": m["stopped_early"],
            "safeguards": m["safeguards"],
            "best_epoch": m.get("best_epoch"),
            "suite": {"size": info["size"], "seed": info["seed"], "n": info["n"], "counts": info["counts"]},
            "seed": args.seed,
            "augment": args.augment,
            "always_audio": list(always),
            "train_examples": len(split["train"]),
            "train_seconds": round(train_seconds, 1),
            "seconds": round(time.perf_counter() - start, 1),
        }
        result = {
            "summary": summary,
            "test_accuracy": acc,
            "test_accuracy_by_part": by_part,
            "calibration": calibration,
            "calibration_cv_log_loss": cal_losses,
            "open_set": {
                "chosen": best,
                "thresholds": scorer.thresholds,
                "dev_auroc": table,
                "dev_counts": {
                    c: sum(r["category"] == c for r in dev_rows) for c in sorted({r["category"] for r in dev_rows})
                },
            },
        }
        print(json.dumps(result, ensure_ascii=False, indent=1))
        if args.out:
            cats = sorted(next(iter(table.values())).keys() - {"mean"})
            write_result(
                args.out,
                result,
                criterion=criterion,
                values=doc_values(result),
                tables={
                    "accuracy": {
                        "columns": ["test split", "n", "exact match", "95 % CI (Wilson)"],
                        "align": "lrrr",
                        "rows": acc_rows
                        + [
                            [
                                f"{p} (part)",
                                str(v["n"]),
                                f"{v['exact']:.3f}",
                                f"[{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]",
                            ]
                            for p, v in by_part.items()
                        ],
                    },
                    "calibration_choice": {
                        "columns": ["method", "5-fold CV log loss (val)"],
                        "align": "lr",
                        "rows": [
                            [k + (" (chosen)" if k == cal_method else ""), f"{v:.4f}"] for k, v in cal_losses.items()
                        ],
                    },
                    "open_set_choice": {
                        "columns": ["score", "mean AUROC (dev)"] + cats,
                        "align": "l" + "r" * (len(cats) + 1),
                        "rows": [
                            [n + (" (chosen)" if n == best else ""), f"{table[n]['mean']:.3f}"]
                            + [f"{table[n][c]:.3f}" for c in cats]
                            for n in CANDIDATES
                        ],
                    },
                },
            )
            print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
