#!/usr/bin/env python
"""Does the answer survive how a signal is stored? Agreement rates of a checkpoint over file variants.

    python scripts/measure_storage.py --suite SUITE [--checkpoint CKPT] [--split test] [--out FILE]

For every audio and vision example of the split, each variant of :mod:`v22sdk.engine.storage`
(8/16/24-bit and float WAV, FLAC, Ogg Vorbis, resampled to 16 / 22.05 / 44.1 kHz, 8-bit at 22.05 kHz,
stereo; JPEG at quality 95 and 90, WebP lossy and lossless, half and double size) is written with
the real encoder, tokenized from the file and answered by the checkpoint. The figures: the share
of examples whose answer is the same as for the suite's own file (agreement), the variant's
accuracy against the target, and the share the open-set score still calls familiar; Wilson 95 %
intervals. The criterion (fixed before the run) is ``CRITERION``.

A second table measures the tokens themselves on the examples: the mean and smallest cosine
between a variant's embedding and the original's, and the mean absolute change of the attributes.

``--from-result FILE`` gives a result file the ``values`` the prose of docs/results.md quotes,
derived from the file's own ``data`` by :func:`doc_values` (nothing is measured again; the file
records the deriving command under ``values_provenance``). A measuring run writes them itself.
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

CRITERION = {
    "what": "the same answer for the same content, whatever its storage",
    "target": "agreement >= 0.95 with the original file's answer for every variant of every modality "
    "(the 95 % Wilson lower bound is reported beside it)",
    "split": "the suite's test split (audio and vision examples); 'val' is used to decide whether training "
    "needs storage augmentation, 'test' only to report",
    "variants": "all of v22sdk.engine.storage.AUDIO_VARIANTS and IMAGE_VARIANTS except the references",
}


def read_signal(path: str, modality: str):
    if modality == "audio":
        import soundfile as sf

        x, rate = sf.read(path, dtype="float64", always_2d=False)
        return x, int(rate)
    import cv2

    img = cv2.imdecode(np.frombuffer(Path(path).read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    return img[:, :, ::-1].copy(), None


#: the variants docs/results.md groups in its prose: copies that keep every sample, and copies
#: that change the samples a little (resampled, stereo, JPEG, WebP, rescaled; Ogg and 8-bit apart)
LOSSLESS = ("audio/wav24", "audio/float", "audio/flac", "vision/webp_lossless")
NEAR = (
    "audio/r16k",
    "audio/r22k",
    "audio/r44k",
    "audio/stereo",
    "vision/jpeg95",
    "vision/jpeg90",
    "vision/webp",
    "vision/half",
    "vision/double",
)


#: An original answer at or above this confidence counts as confident in the description of changes.
CONFIDENT = 0.9


def describe_changes(d: dict[str, list]) -> dict:
    """What the answers a variant changed had been: descriptive figures beside the agreement (the
    criterion is the agreement alone). ``d`` holds per-example lists ``agree``, ``correct`` (the
    variant's answer is the target), ``ref_correct`` and ``ref_conf`` (the original's)."""
    from v22sdk.engine.calibration import wilson_interval

    agree = np.asarray(d["agree"], bool)
    correct = np.asarray(d["correct"], bool)
    ref_correct = np.asarray(d["ref_correct"], bool)
    ref_conf = np.asarray(d["ref_conf"], float)
    changed = ~agree
    kept_right = int((agree & ref_correct).sum())
    n_right = int(ref_correct.sum())
    lo, hi = wilson_interval(kept_right, n_right) if n_right else (float("nan"), float("nan"))
    return {
        "changed": int(changed.sum()),
        "changed_from_wrong": int((changed & ~ref_correct).sum()),
        "changed_to_right": int((changed & correct).sum()),
        "changed_confident": int((changed & (ref_conf >= CONFIDENT)).sum()),
        "changed_original_confidence_median": float(np.median(ref_conf[changed])) if changed.any() else None,
        "agreement_original_right": kept_right / n_right if n_right else float("nan"),
        "agreement_original_right_ci95": [lo, hi],
    }


def slots_moved_most(delta: np.ndarray, schema, k: int = 3) -> list[tuple[str, float]]:
    """The ``k`` named slots of ``schema`` with the largest mean |change| ``delta`` (the (384,)
    attribute block, averaged over tokens and inputs), largest first; slots that did not move are left out."""
    cols = np.asarray(schema.indices)
    vals = np.asarray(delta)[cols]
    order = np.argsort(-vals, kind="stable")[:k]
    return [(schema.names[i], round(float(vals[i]), 4)) for i in order if vals[i] > 0]


def change_cell(entry: dict) -> str:
    """The table's cell for a variant's changed answers: 'N: a / b / c', or '0'."""
    if not entry["changed"]:
        return "0"
    return (
        f"{entry['changed']}: {entry['changed_from_wrong']} / {entry['changed_to_right']} / "
        f"{entry['changed_confident']}"
    )


def doc_values(result: dict) -> dict[str, str]:
    """The single figures docs/results.md quotes in prose, from a run's figures (``data``)."""
    variants = result["variants"]
    out: dict[str, str] = {"examples": f"{result['summary']['examples']:,}"}
    for key, v in variants.items():
        k = key.replace("/", ".")
        lo, hi = v["agreement_ci95"]
        out[f"{k}.agreement"] = f"{v['agreement']:.3f}"
        out[f"{k}.agreement_ci"] = f"[{lo:.3f}, {hi:.3f}]"
        out[f"{k}.agreement_pct"] = f"{100 * v['agreement']:.1f} %"
        out[f"{k}.changed_pct"] = f"{100 * (1 - v['agreement']):.1f} %"
        out[f"{k}.accuracy"] = f"{v['accuracy']:.3f}"
        out[f"{k}.reference_accuracy"] = f"{v['reference_accuracy']:.3f}"
        out[f"{k}.cos_min"] = f"{v['token_min_cos_min']:.3f}"
        if "changed" in v:
            out[f"{k}.changed"] = str(v["changed"])
            out[f"{k}.changed_from_wrong"] = str(v["changed_from_wrong"])
            out[f"{k}.changed_to_right"] = str(v["changed_to_right"])
            out[f"{k}.changed_confident"] = str(v["changed_confident"])
            med = v["changed_original_confidence_median"]
            out[f"{k}.changed_confidence_median"] = "-" if med is None else f"{med:.2f}"
            lo, hi = v["agreement_original_right_ci95"]
            out[f"{k}.agreement_original_right"] = f"{v['agreement_original_right']:.3f}"
            out[f"{k}.agreement_original_right_ci"] = f"[{lo:.3f}, {hi:.3f}]"
    lossless = [variants[k] for k in LOSSLESS if k in variants]
    out["lossless.changed"] = str(sum(v["n"] - v["agree"] for v in lossless))
    out["lossless.n"] = f"{sum(v['n'] for v in lossless):,}"
    near = [variants[k] for k in NEAR if k in variants]
    if near:
        agree = [100 * v["agreement"] for v in near]
        out["near.agreement_range"] = f"{min(agree):.1f}–{max(agree):.1f} %"
        cos = [v["token_min_cos_mean"] for v in near + ([variants["audio/ogg"]] if "audio/ogg" in variants else [])]
        out["near_and_ogg.cos_range"] = f"{min(cos):.3f}–{max(cos):.3f}"
        kept = [100 * v["agreement_original_right"] for v in near if "agreement_original_right" in v]
        if kept:
            out["near.agreement_original_right_range"] = f"{min(kept):.1f}–{max(kept):.1f} %"
    return out


def main() -> None:
    from v22sdk.engine.calibration import wilson_interval
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT
    from v22sdk.engine.runner import Runner
    from v22sdk.engine.storage import AUDIO_VARIANTS, IMAGE_VARIANTS, write_audio_variant, write_image_variant
    from v22sdk.evidence import write_result

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", type=Path, default=None, help="a data suite folder (v22sdk data build-suite)")
    ap.add_argument("--checkpoint", type=Path, default=DEFAULT_CHECKPOINT)
    ap.add_argument("--split", default="test", choices=["val", "test"])
    ap.add_argument("--limit", type=int, default=None, help="at most N examples per modality (quick runs)")
    ap.add_argument("--out", type=Path, default=None, help="result file (JSON, v22sdk.evidence)")
    ap.add_argument(
        "--from-result",
        type=Path,
        default=None,
        help="add the values docs quote to this result file, derived from its data (no measurement)",
    )
    args = ap.parse_args()
    from v22sdk.evidence import add_values, begin, read_result

    begin()  # the result file names the commit this run starts at
    if args.from_result:
        add_values(args.from_result, doc_values(read_result(args.from_result)["data"]))
        print(f"added values to {args.from_result}")
        return
    if args.suite is None:
        ap.error("--suite is needed to measure")

    import torch

    torch.set_num_threads(1)
    rows = [json.loads(line) for line in (args.suite / "suite.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["split"] == args.split and r["modality"] in ("audio", "vision")]
    if args.limit:
        rows = [r for m in ("vision", "audio") for r in [x for x in rows if x["modality"] == m][: args.limit]]
    runner = Runner(args.checkpoint)
    start = time.perf_counter()
    per: dict[tuple[str, str], dict[str, list]] = {}
    tokens_stats: dict[tuple[str, str], dict[str, list]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, r in enumerate(rows):
            path = str(args.suite / r["input"])
            modality = r["modality"]
            ref_batch = runner.tokenize(path, modality)
            signal, rate = read_signal(path, modality)
            variants = AUDIO_VARIANTS if modality == "audio" else IMAGE_VARIANTS
            names = [n for n in variants if n not in ("wav16", "png")]
            if modality == "audio" and signal.ndim == 1:
                names = [n for n in names if n != "mono"]
            batches = [ref_batch]
            for name in names:
                stem = Path(tmp) / f"{k}_{name}"
                f = (
                    write_audio_variant(name, signal, rate, stem)
                    if modality == "audio"
                    else write_image_variant(name, signal, stem)
                )
                batches.append(runner.tokenize(str(f), modality))
                f.unlink()
            answers = runner.judge(batches)
            ref = answers[0]
            for name, batch, ans in zip(names, batches[1:], answers[1:]):
                d = per.setdefault(
                    (modality, name), {"agree": [], "correct": [], "familiar": [], "ref_correct": [], "ref_conf": []}
                )
                d["agree"].append(ans["decoded"] == ref["decoded"])
                d["ref_conf"].append(float(ref["confidence"]))
                d["correct"].append(ans["decoded"] == r["target"])
                d["ref_correct"].append(ref["decoded"] == r["target"])
                d["familiar"].append(ans["familiar"])
                n = min(len(batch), len(ref_batch))
                t = tokens_stats.setdefault((modality, name), {"cos": [], "attr": [], "slot": []})
                t["cos"].append(float((batch.emb[:n] * ref_batch.emb[:n]).sum(1).min()))
                t["attr"].append(float(np.abs(batch.attr[:n] - ref_batch.attr[:n]).mean(0).sum() / 128))
                t["slot"].append(np.abs(batch.attr[:n] - ref_batch.attr[:n]).mean(0))
            if (k + 1) % 50 == 0:
                print(f"{k + 1}/{len(rows)} examples, {time.perf_counter() - start:.0f} s", flush=True)

    data, table, tok_table = {}, [], []
    for (modality, name), d in per.items():
        n = len(d["agree"])
        agree = int(sum(d["agree"]))
        lo, hi = wilson_interval(agree, n)
        fam = [f for f in d["familiar"] if f is not None]
        changes = describe_changes(d)
        entry = {
            "modality": modality,
            "variant": name,
            "n": n,
            "agree": agree,
            "agreement": agree / n,
            "agreement_ci95": [lo, hi],
            "accuracy": float(np.mean(d["correct"])),
            "reference_accuracy": float(np.mean(d["ref_correct"])),
            "familiar": (float(np.mean(fam)) if fam else None),
            "token_min_cos_mean": float(np.mean(tokens_stats[(modality, name)]["cos"])),
            "token_min_cos_min": float(np.min(tokens_stats[(modality, name)]["cos"])),
            "attr_change_mean": float(np.mean(tokens_stats[(modality, name)]["attr"])),
            "slots_moved_most": slots_moved_most(
                np.mean(tokens_stats[(modality, name)]["slot"], axis=0),
                runner.registry.get_class("modalities", modality).schema,
            ),
            **changes,
        }
        data[f"{modality}/{name}"] = entry
        describe = (AUDIO_VARIANTS if modality == "audio" else IMAGE_VARIANTS)[name].describe
        table.append(
            [
                modality,
                name,
                describe,
                str(n),
                f"{entry['agreement']:.3f}",
                f"[{lo:.3f}, {hi:.3f}]",
                f"{entry['accuracy']:.3f} (original {entry['reference_accuracy']:.3f})",
                "-" if entry["familiar"] is None else f"{entry['familiar']:.3f}",
                change_cell(entry),
                "{:.3f} [{:.3f}, {:.3f}]".format(
                    entry["agreement_original_right"], *entry["agreement_original_right_ci95"]
                ),
            ]
        )
        tok_table.append(
            [
                modality,
                name,
                f"{entry['token_min_cos_mean']:.4f}",
                f"{entry['token_min_cos_min']:.4f}",
                f"{entry['attr_change_mean']:.4f}",
                ", ".join(f"{slot} {delta:.3f}" for slot, delta in entry["slots_moved_most"]) or "-",
            ]
        )
    worst = min(data.values(), key=lambda e: e["agreement"])
    summary = {
        "examples": len(rows),
        "split": args.split,
        "checkpoint": str(args.checkpoint),
        "suite": str(args.suite),
        "min_agreement": worst["agreement"],
        "min_agreement_variant": f"{worst['modality']}/{worst['variant']}",
        "target_met": all(e["agreement"] >= 0.95 for e in data.values()),
        "seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    for row in table:
        print(" | ".join(row))
    if args.out:
        result = {"summary": summary, "variants": data}
        write_result(
            args.out,
            result,
            criterion=CRITERION,
            values=doc_values(result),
            tables={
                "agreement": {
                    "columns": [
                        "modality",
                        "variant",
                        "stored as",
                        "n",
                        "agreement",
                        "95 % CI",
                        "accuracy",
                        "familiar",
                        "changed: from a wrong answer / to the right one / original confidence ≥ 0.9",
                        "agreement where the original is right (95 % CI)",
                    ],
                    "align": "lllrrrrrrr",
                    "rows": table,
                },
                "tokens": {
                    "columns": [
                        "modality",
                        "variant",
                        "emb cos (mean of per-input minimum)",
                        "emb cos (smallest)",
                        "mean |Δ attr| per slot",
                        "slots that move most (mean |Δ|)",
                    ],
                    "align": "llrrrl",
                    "rows": tok_table,
                },
            },
        )
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
