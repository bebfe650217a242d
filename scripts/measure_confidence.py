#!/usr/bin/env python
"""How honest is a checkpoint's confidence, and does it know what it does not know? Held-out figures.

    python scripts/measure_confidence.py --suite SUITE --ood OOD [--checkpoint CKPT] --out FILE
    python scripts/measure_confidence.py --plot docs/img/reliability.png --from FILE

Measured on inputs no choice was made on (the criterion, fixed before the run, is ``CRITERION``):

* **calibration** on the suite's test split: the expected calibration error (10 equal-width bins)
  of the raw and of the calibrated confidence, per modality and over all, with percentile
  bootstrap 95 % intervals (2,000 resamples); the reliability diagram's bins;
* **the open set**: the AUROC of the checkpoint's familiarity score between the test split
  (familiar) and each category of the out-of-distribution set's *test* half (unfamiliar), with
  bootstrap intervals; the share of each category called unfamiliar at the shipped threshold, and
  the share of the test split wrongly called unfamiliar (false alarms). For transparency the
  other candidate scores are measured the same way (they were not chosen: see
  ``scripts/train_default.py``);
* **real voices**: recorded people saying digits (English: Allison Smith for Asterisk; Mandarin:
  the two voices of gcin-voice), never heard in training (the suite's speech is espeak-ng):
  accuracy with Wilson intervals, and how many are called unfamiliar.

``--plot`` draws the reliability diagram from a result file (so the picture is the figures).
``--from-result FILE`` gives a result file the ``values`` the prose of docs/results.md quotes,
derived from the file's own ``data`` by :func:`doc_values` (nothing is measured again; the file
records the deriving command under ``values_provenance``). A measuring run writes them itself.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CRITERION = {
    "calibration_target": "expected calibration error of the calibrated confidence on the test split <= 0.05 "
    "(point estimate; the bootstrap 95 % interval is reported beside it)",
    "ece": "10 equal-width confidence bins; correctness = exact match of the decoded answer",
    "open_set": "AUROC of the shipped score, test split (familiar) vs each out-of-distribution test category; "
    "detection rate at the shipped threshold; false-alarm rate on the test split",
    "intervals": "percentile bootstrap, 2,000 resamples, seed 0 (ECE: examples; AUROC: each side); Wilson for "
    "proportions",
    "done_when": "a real photo and a spoken sentence are reported as unfamiliar: detection rate of the 'photo' and "
    "'speech_sentence' categories at the threshold, reported with its interval",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", type=Path)
    ap.add_argument("--ood", type=Path)
    ap.add_argument("--checkpoint", type=Path, default=None)
    ap.add_argument(
        "--train-manifest",
        type=Path,
        default=None,
        help="the manifest the checkpoint was trained on, if not the suite's (e.g. with storage "
        "copies): the other candidate scores are fitted on its train split, as the shipped one was",
    )
    ap.add_argument("--out", type=Path, default=None, help="result file (JSON, v22sdk.evidence)")
    ap.add_argument("--plot", type=Path, default=None, help="draw the reliability diagram (PNG) from --from")
    ap.add_argument("--from", dest="source", type=Path, default=None, help="the result file to plot")
    ap.add_argument(
        "--from-result",
        type=Path,
        default=None,
        help="add the values docs quote to this result file, derived from its data (no measurement)",
    )
    args = ap.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    if args.plot:
        plot(args.source or args.out, args.plot)
        return
    if args.from_result:
        from v22sdk.evidence import add_values, read_result

        add_values(args.from_result, doc_values(read_result(args.from_result)["data"]))
        print(f"added values to {args.from_result}")
        return
    if not (args.suite and args.ood):
        ap.error("--suite and --ood are needed to measure")
    measure(args)


def measure(args) -> None:
    import torch

    from v22sdk.engine.calibration import (
        ece_interval,
        expected_calibration_error,
        reliability,
        string_confidence,
        wilson_interval,
    )
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT
    from v22sdk.engine.ood import read_ood
    from v22sdk.engine.openset import CANDIDATES, auroc, auroc_interval, fit_scorer
    from v22sdk.engine.runner import Runner
    from v22sdk.evidence import write_result

    torch.set_num_threads(1)
    start = time.perf_counter()
    checkpoint = args.checkpoint or DEFAULT_CHECKPOINT
    runner = Runner(checkpoint)
    if runner.open_set is None or not runner.calibrated:
        raise SystemExit(f"{checkpoint} has no calibration or open-set statistics (train it with a val split)")
    suite_rows = [json.loads(x) for x in (args.suite / "suite.jsonl").read_text(encoding="utf-8").splitlines()]

    def tokenize(rows, base: Path | None):
        return [
            runner.tokenize(str(base / r["input"]) if base and r["modality"] != "text" else r["input"], r["modality"])
            for r in rows
        ]

    test_rows = [r for r in suite_rows if r["split"] == "test"]
    test_batches = tokenize(test_rows, args.suite)
    test = runner.features(test_batches)
    # what `run` adds to the score: an input below the checkpoint's fidelity floors is unfamiliar too
    test_below = np.array([bool(runner.below_floors(b)) for b in test_batches], dtype=bool)
    correct = np.array([d == r["target"] for d, r in zip(test["decoded"], test_rows)])
    ids, raw = string_confidence(test["logits"])
    cal = test["confidence"]
    mods = test["modalities"]
    print(f"test split: {len(test_rows)} examples tokenized and run ({time.perf_counter() - start:.0f} s)", flush=True)

    # -- calibration ---------------------------------------------------------------------------------
    calibration, cal_rows = {}, []
    for mod in sorted(set(mods)) + ["all"]:
        sel = np.array([mod in ("all", m) for m in mods])
        entry = {"n": int(sel.sum()), "accuracy": float(correct[sel].mean())}
        for kind, conf in (("raw", raw), ("calibrated", cal)):
            e = expected_calibration_error(conf[sel], correct[sel])
            lo, hi = ece_interval(conf[sel], correct[sel])
            entry[kind] = {"ece": e, "ece_ci95": [lo, hi], "mean_confidence": float(conf[sel].mean())}
        calibration[mod] = entry
        cal_rows.append(
            [
                mod,
                str(entry["n"]),
                f"{entry['accuracy']:.3f}",
                f"{entry['raw']['mean_confidence']:.3f}",
                f"{entry['raw']['ece']:.3f}",
                f"[{entry['raw']['ece_ci95'][0]:.3f}, {entry['raw']['ece_ci95'][1]:.3f}]",
                f"{entry['calibrated']['mean_confidence']:.3f}",
                f"{entry['calibrated']['ece']:.3f}",
                f"[{entry['calibrated']['ece_ci95'][0]:.3f}, {entry['calibrated']['ece_ci95'][1]:.3f}]",
            ]
        )
    diagram = {"raw": reliability(raw, correct), "calibrated": reliability(cal, correct)}

    # -- the open set ------------------------------------------------------------------------------------
    ood_rows = [r for r in read_ood(args.ood) if r["split"] == "test"]
    ood_batches = tokenize(ood_rows, None)
    ood = runner.features(ood_batches)
    ood_below = np.array([bool(runner.below_floors(b)) for b in ood_batches], dtype=bool)
    cats = sorted({r["category"] for r in ood_rows})
    shipped = runner.open_set
    test_scores, _ = shipped.score(test, mods)
    ood_scores, nearest = shipped.score(ood, ood["modalities"])
    thresholds = shipped.thresholds
    flagged_test = np.array([not shipped.familiar(s, m) for s, m in zip(test_scores, mods)])
    false_alarms = {}
    for mod in sorted(set(mods)) + ["all"]:
        sel = np.array([mod in ("all", m) for m in mods])
        k = int(flagged_test[sel].sum())
        false_alarms[mod] = {
            "n": int(sel.sum()),
            "flagged": k,
            "below_floors": int(test_below[sel].sum()),
            "flagged_by_run": int((flagged_test | test_below)[sel].sum()),
            "rate": k / int(sel.sum()),
            "ci95": list(wilson_interval(k, int(sel.sum()))),
        }
    open_set, os_rows = {}, []
    for cat in cats:
        idx = [i for i, r in enumerate(ood_rows) if r["category"] == cat]
        mod = ood_rows[idx[0]]["modality"]
        fam = test_scores[[i for i, m in enumerate(mods) if m == mod]]
        unf = ood_scores[idx]
        a = auroc(_finite(fam, unf)[0], _finite(fam, unf)[1])
        lo, hi = auroc_interval(*_finite(fam, unf))
        k = int(sum(not shipped.familiar(s, mod) for s in unf))
        dlo, dhi = wilson_interval(k, len(idx))
        by_run = int(sum((not shipped.familiar(ood_scores[i], mod)) or ood_below[i] for i in idx))
        below = int(ood_below[idx].sum())
        open_set[cat] = {
            "modality": mod,
            "n": len(idx),
            "auroc": a,
            "auroc_ci95": [lo, hi],
            "detected": k,
            "detection_rate": k / len(idx),
            "detection_ci95": [dlo, dhi],
            "below_floors": below,
            "detected_by_run": by_run,
            "detection_rate_by_run": by_run / len(idx),
            "nearest_labels": _top([nearest[i] for i in idx]),
        }
        os_rows.append(
            [
                cat,
                mod,
                str(len(idx)),
                f"{a:.3f}",
                f"[{lo:.3f}, {hi:.3f}]",
                f"{k / len(idx):.3f}",
                f"[{dlo:.3f}, {dhi:.3f}]",
                f"{by_run / len(idx):.3f} ({below} below a floor)",
            ]
        )
    # the other candidates, measured the same way (fitted on the train split, thresholds not needed)
    manifest = args.train_manifest or args.suite / "suite.jsonl"
    train_rows = [json.loads(x) for x in manifest.read_text(encoding="utf-8").splitlines()]
    train_rows = [r for r in train_rows if r["split"] == "train"]
    train = runner.features(tokenize(train_rows, manifest.parent))
    train_labels = [r["target"] for r in train_rows]
    others, other_rows = {}, []
    for name in CANDIDATES:
        scorer = fit_scorer(name, train, train_labels, train["modalities"])
        ts, _ = scorer.score(test, mods)
        os_, _ = scorer.score(ood, ood["modalities"])
        row = {}
        for cat in cats:
            idx = [i for i, r in enumerate(ood_rows) if r["category"] == cat]
            mod = ood_rows[idx[0]]["modality"]
            row[cat] = auroc(*_finite(ts[[i for i, m in enumerate(mods) if m == mod]], os_[idx]))
        row["mean"] = float(np.mean(list(row.values())))
        others[name] = row
        other_rows.append(
            [name + (" (shipped)" if name == shipped.method or _same(name, shipped) else ""), f"{row['mean']:.3f}"]
            + [f"{row[c]:.3f}" for c in cats]
        )

    # -- real voices -------------------------------------------------------------------------------------
    real_rows = read_ood(args.ood, "real_digits.jsonl")
    real = runner.judge(tokenize(real_rows, None))
    voices = {}
    for group in sorted({(r["language"], r["voice"]) for r in real_rows}) + [("all", "all")]:
        idx = [i for i, r in enumerate(real_rows) if group == ("all", "all") or (r["language"], r["voice"]) == group]
        k = sum(real[i]["decoded"] == real_rows[i]["target"] for i in idx)
        unf = sum(real[i]["familiar"] is False for i in idx)
        lo, hi = wilson_interval(k, len(idx))
        voices["/".join(group) if group != ("all", "all") else "all"] = {
            "n": len(idx),
            "correct": int(k),
            "accuracy": k / len(idx),
            "ci95": [lo, hi],
            "unfamiliar": int(unf),
            "answers": [f"{real_rows[i]['target']}→{real[i]['decoded'] or '∅'}" for i in idx],
        }
    voice_rows = [
        [
            g,
            str(v["n"]),
            f"{v['accuracy']:.3f}",
            f"[{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]",
            f"{v['unfamiliar']}/{v['n']}",
        ]
        for g, v in voices.items()
    ]

    summary = {
        "checkpoint": str(checkpoint),
        "method": shipped.method,
        "calibration": {
            "objective": runner.doc["calibration"].get("objective"),
            "temperature": runner.temperature,
            "per_modality": runner.temperatures,
        },
        "test_examples": len(test_rows),
        "ood_test_inputs": len(ood_rows),
        "ece_calibrated": calibration["all"]["calibrated"]["ece"],
        "ece_calibrated_ci95": calibration["all"]["calibrated"]["ece_ci95"],
        "ece_target_met": calibration["all"]["calibrated"]["ece"] <= 0.05,
        "mean_auroc": float(np.mean([v["auroc"] for v in open_set.values()])),
        "false_alarm_rate": false_alarms["all"]["rate"],
        "thresholds": thresholds,
        "seconds": round(time.perf_counter() - start, 1),
    }
    result = {
        "summary": summary,
        "calibration": calibration,
        "reliability": diagram,
        "open_set": open_set,
        "false_alarms": false_alarms,
        "other_scores_test_auroc": others,
        "real_voices": voices,
    }
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    if args.out:
        write_result(
            args.out,
            result,
            criterion=CRITERION,
            values=doc_values(result),
            tables={
                "calibration": {
                    "columns": [
                        "test split",
                        "n",
                        "accuracy",
                        "raw: mean conf.",
                        "raw: ECE",
                        "95 % CI",
                        "calibrated: mean conf.",
                        "calibrated: ECE",
                        "95 % CI",
                    ],
                    "align": "lrrrrrrrr",
                    "rows": cal_rows,
                },
                "open_set": {
                    "columns": [
                        "unfamiliar inputs (test half)",
                        "modality",
                        "n",
                        "AUROC",
                        "95 % CI",
                        "called unfamiliar",
                        "95 % CI",
                        "called unfamiliar by run (score or fidelity floor)",
                    ],
                    "align": "llrrrrrr",
                    "rows": os_rows,
                },
                "false_alarms": {
                    "columns": ["test split", "n", "called unfamiliar", "95 % CI"],
                    "align": "lrrr",
                    "rows": [
                        [m, str(v["n"]), f"{v['rate']:.3f}", f"[{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]"]
                        for m, v in false_alarms.items()
                    ],
                },
                "other_scores": {
                    "columns": ["score", "mean AUROC (test)"] + cats,
                    "align": "l" + "r" * (len(cats) + 1),
                    "rows": other_rows,
                },
                "real_voices": {
                    "columns": ["language/voice", "n", "accuracy", "95 % CI", "called unfamiliar"],
                    "align": "lrrrr",
                    "rows": voice_rows,
                },
            },
        )
        print(f"wrote {args.out}")


def _slug(name: str) -> str:
    """A score's name as a value name: ``knn(k=5, sent_vec)`` -> ``knn_k_5_sent_vec``."""
    import re

    return re.sub(r"[^\w.-]+", "_", name).strip("_")


def _ci(pair, digits: int = 3, scale: float = 1.0) -> str:
    return f"[{pair[0] * scale:.{digits}f}, {pair[1] * scale:.{digits}f}]"


def doc_values(result: dict) -> dict[str, str]:
    """The single figures docs/results.md quotes in prose, from a run's figures (``data``)."""
    out: dict[str, str] = {}
    summary = result["summary"]
    out["test_examples"] = f"{summary['test_examples']:,}"
    out["ood_test_inputs"] = f"{summary['ood_test_inputs']:,}"
    out["temperature"] = f"{summary['calibration']['temperature']:.2f}"
    for m, c in result["calibration"].items():
        out[f"{m}.n"] = str(c["n"])
        out[f"{m}.accuracy"] = f"{c['accuracy']:.3f}"
        for kind in ("raw", "calibrated"):
            e = c[kind]
            out[f"{m}.{kind}.ece"] = f"{e['ece']:.3f}"
            out[f"{m}.{kind}.ece_ci"] = _ci(e["ece_ci95"])
            out[f"{m}.{kind}.ece_hi"] = f"{e['ece_ci95'][1]:.3f}"
            out[f"{m}.{kind}.mean_conf"] = f"{e['mean_confidence']:.3f}"
    # the raw confidence's middle bins (0.4-0.9): how often their answers were right
    mid = [r for r in result["reliability"]["raw"] if r["n"] and r["lo"] >= 0.4 - 1e-9 and r["hi"] <= 0.9 + 1e-9]
    if mid:
        acc = [r["accuracy"] for r in mid]
        out["raw_mid.accuracy_range"] = f"{100 * min(acc):.0f}–{100 * max(acc):.0f} %"
        out["raw_mid.below"] = f"{sum(r['accuracy'] < r['confidence'] for r in mid)} of {len(mid)}"
    for cat, v in result["open_set"].items():
        out[f"open_set.{cat}.detected"] = f"{v['detected']} of {v['n']}"
        out[f"open_set.{cat}.auroc"] = f"{v['auroc']:.3f}"
        if "detected_by_run" in v:
            out[f"open_set.{cat}.detected_by_run"] = f"{v['detected_by_run']} of {v['n']}"
            out[f"open_set.{cat}.below_floors"] = f"{v['below_floors']} of {v['n']}"
    for m, v in result["false_alarms"].items():
        out[f"false_alarms.{m}.rate"] = f"{100 * v['rate']:.1f} %"
        out[f"false_alarms.{m}.ci"] = _ci(v["ci95"], 1, 100)
    for score, aurocs in result["other_scores_test_auroc"].items():
        for cat, a in aurocs.items():
            out[f"other.{_slug(score)}.{cat}"] = f"{a:.3f}"
    for group, v in result["real_voices"].items():
        g = _slug(group.replace("/", "_"))
        out[f"voices.{g}.correct"] = f"{v['correct']} of {v['n']}"
        out[f"voices.{g}.accuracy"] = f"{v['accuracy']:.3f} {_ci(v['ci95'])}"
        out[f"voices.{g}.unfamiliar"] = f"{v['unfamiliar']} of the {v['n']}"
    return out


def _same(name: str, scorer) -> bool:
    return name == scorer.method


def _finite(a, b):
    """Both score arrays with +inf (a modality the scorer never saw) replaced by a value above every finite one."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    both = np.concatenate([a, b])
    top = both[np.isfinite(both)].max() + 1.0 if np.isfinite(both).any() else 0.0
    return np.where(np.isfinite(a), a, top), np.where(np.isfinite(b), b, top)


def _top(labels, n: int = 3) -> list[list]:
    from collections import Counter

    return [[k, v] for k, v in Counter(str(x) for x in labels).most_common(n)]


def plot(source: Path, out: Path) -> None:
    """The reliability diagram (raw and calibrated confidence, test split) from a result file."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from v22sdk.evidence import read_result

    doc = read_result(source)
    data = doc["data"]
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.2), sharey=True)
    for ax, kind in zip(axes, ("raw", "calibrated")):
        rows = [r for r in data["reliability"][kind] if r["n"]]
        centres = [(r["lo"] + r["hi"]) / 2 for r in rows]
        ax.bar(centres, [r["accuracy"] for r in rows], width=0.09, color="#4c72b0", alpha=0.8, label="accuracy")
        ax.plot([0, 1], [0, 1], "--", color="grey", lw=1, label="perfect calibration")
        ax.plot(
            centres,
            [r["confidence"] for r in rows],
            "D",
            color="#dd8452",
            ms=5,
            label="mean confidence of the bin (the gap to the bar: miscalibration)",
        )
        for c, r in zip(centres, rows):
            ax.text(c, 0.02, str(r["n"]), ha="center", fontsize=7, color="white" if r["accuracy"] > 0.1 else "black")
        e = data["calibration"]["all"][kind]
        ax.set_title(f"{kind}: ECE {e['ece']:.3f} [{e['ece_ci95'][0]:.3f}, {e['ece_ci95'][1]:.3f}]")
        ax.set_xlabel("confidence")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
    axes[0].set_ylabel("accuracy (exact match)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    n = data["calibration"]["all"]["n"]
    fig.suptitle(
        f"Reliability of the default checkpoint on the suite's test split ({n} examples; bar labels: examples per bin)",
        fontsize=9,
    )
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"wrote {out} from {source}")


if __name__ == "__main__":
    main()
