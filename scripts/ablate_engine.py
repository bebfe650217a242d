"""Measure the engine's switches: each one flipped alone, on the bundled demo data, over seeds.

The RFC's claims are about switches of the V22 graph (spherical normalisation of the injected
representations, the injection gain, the vMF gate, the auxiliary losses, the memory head). This
script trains the `small` preset once per (variant, seed) on ``demo.jsonl`` for a fixed budget
of epochs and reports, on the data's fixed held-out split (unseen images, tones, sounds and text
pairs), exact match per modality and character accuracy, beside the training loss and how fast
it fell. The baseline engine is one more row. Every variant sees the same data, split, epochs and
seeds; only the named field differs.

    python scripts/ablate_engine.py                        # 9 variants x 5 seeds x 40 epochs
    python scripts/ablate_engine.py --json ablation.json   # also keep every run's figures
    python scripts/ablate_engine.py --variants default,no_spherical --seeds 2 --epochs 5

A budget well short of convergence is deliberate: at 150 epochs every variant solves the image
and sound tasks (docs/results.md), so only the speed of learning can tell the variants apart.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "v22sdk" / "engine" / "data" / "demo" / "demo.jsonl"

VARIANTS: dict[str, dict] = {
    "default": {},
    "no_spherical": {"spherical": False},
    "gain_0": {"inject_gain": 0.0},
    "gain_1": {"inject_gain": 1.0},
    "sigmoid_gate": {"gate": "sigmoid"},
    "no_aux_losses": {"loss_a": False, "loss_b": False, "loss_c": False, "loss_d": False},
    "no_loss_d": {"loss_d": False},
    "no_memory": {"memory": False},
    "baseline_engine": {"engine": "baseline"},
}
LOSS_MARKS = (1.0, 0.5)  # report the first epoch whose mean training loss falls below each


def run_one(data: Path, overrides: dict, seed: int, epochs: int, tmp: Path) -> dict:
    from v22sdk.engine.config import preset
    from v22sdk.engine.pipeline import train_engine

    cfg = preset("small", epochs=epochs, seed=seed, **overrides)
    losses: list[float] = []
    start = time.perf_counter()
    res = train_engine(data, cfg, tmp / "ablation.pt", on_epoch=lambda h: losses.append(float(h["loss"])))
    m = res["metrics"]
    test = m["test"]
    row = {"seed": seed, "seconds": round(time.perf_counter() - start, 2), "final_loss": losses[-1],
           "losses": losses, "test_n": test["all"]["n"], "test_exact": test["all"]["exact"],
           "test_char": test["all"]["char"],
           "safeguards": m["safeguards"]}
    for modality in ("vision", "audio", "text"):
        if modality in test:
            row[f"{modality}_exact"] = test[modality]["exact"]
            row[f"{modality}_char"] = test[modality]["char"]
    for mark in LOSS_MARKS:
        below = [i + 1 for i, loss in enumerate(losses) if loss < mark]
        row[f"epoch_below_{mark:g}"] = below[0] if below else None
    return row


def mean_sd(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return mean, sd


def paired(rows: list[dict], reference: list[dict], key: str) -> str:
    """Mean of the per-seed difference to the default variant, with a t-based 95 % interval."""
    diffs = [r[key] - d[key] for r, d in zip(rows, reference)]
    mean, sd = mean_sd(diffs)
    if len(diffs) < 2:
        return f"{mean:+.3f}"
    from scipy import stats

    half = stats.t.ppf(0.975, len(diffs) - 1) * sd / math.sqrt(len(diffs))
    return f"{mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}]"


def table(results: dict[str, list[dict]]) -> str:
    head = ("| variant | held-out exact, all | vision | audio | text char | Δ exact vs default (95 % CI) "
            "| final train loss | epoch loss < 1 | epoch loss < 0.5 | s/run |")
    lines = [head, "|" + "---|" * 10]
    reference = results.get("default")

    def cell(rows, key, fmt="{:.3f}"):
        vals = [r[key] for r in rows if r.get(key) is not None]
        if not vals:
            return "never" if key.startswith("epoch") else "—"
        mean, sd = mean_sd(vals)
        missing = len(rows) - len(vals)
        return (fmt.format(mean) + (f" ± {fmt.format(sd)}" if len(vals) > 1 else "")
                + (f" ({missing} never)" if missing else ""))

    for name, rows in results.items():
        delta = "—" if name == "default" or reference is None else paired(rows, reference, "test_exact")
        lines.append(f"| `{name}` | {cell(rows, 'test_exact')} | {cell(rows, 'vision_exact')} | "
                     f"{cell(rows, 'audio_exact')} | {cell(rows, 'text_char')} | {delta} | "
                     f"{cell(rows, 'final_loss')} | {cell(rows, 'epoch_below_1', '{:.1f}')} | "
                     f"{cell(rows, 'epoch_below_0.5', '{:.1f}')} | {cell(rows, 'seconds', '{:.1f}')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEMO, help="JSONL manifest with a held-out 'test' split")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, from: " + ", ".join(VARIANTS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--json", type=Path, default=None, help="write every run's figures here")
    args = ap.parse_args(argv)
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    if "default" in names:  # the reference row goes first, so the deltas can be computed
        names.remove("default")
        names.insert(0, "default")

    import torch

    torch.set_num_threads(1)
    results: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for seed in range(args.seeds):
                row = run_one(args.data, VARIANTS[name], seed, args.epochs, Path(tmp))
                results.setdefault(name, []).append(row)
                print(f"{name} seed {seed}: held-out exact {row['test_exact']:.3f}, "
                      f"final loss {row['final_loss']:.4f}, {row['seconds']:.1f} s", file=sys.stderr, flush=True)
    print(f"small preset, {args.epochs} epochs, seeds 0..{args.seeds - 1}, data {args.data.name}, "
          f"held-out n = {next(iter(results.values()))[0]['test_n']}; mean ± sd over seeds\n")
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps({"epochs": args.epochs, "seeds": args.seeds, "variants":
                                         {k: VARIANTS[k] for k in results}, "runs": results},
                                        ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
