"""Measure the engine's switches: each one flipped alone, on the bundled demo data, over seeds.

The RFC's claims are about switches of the V22 graph (spherical normalisation of the injected
representations, the injection gain, the vMF gate, the auxiliary losses, the memory head). This
script trains the `small` preset once per (variant, seed) on ``demo.jsonl`` for a fixed budget
of epochs and reports, on one held-out split (unseen images, tones, sounds and text pairs), exact
match per modality and character accuracy, beside the training loss and how fast it fell. The
baseline engine is one more row. Every variant sees the same data, split, epochs and seeds; only
the named field differs.

The split is the same for every seed: the manifest pins images and sounds to train/test, and the
text pairs it leaves free are pinned here to the split seed 0 gives them (``train_engine`` would
otherwise re-draw them with each training seed).

The criterion (fixed in ``CRITERION`` before the run): each variant is compared with ``default``
on held-out exact match by a paired t-test over seeds (two-sided); with 8 comparisons the p-values
are adjusted by Holm–Bonferroni, and a difference counts as detected only when its adjusted p is
below 0.05. The table gives each Δ with its unadjusted 95 % interval and the Bonferroni
(simultaneous) 95 % interval, which is what an interval that accounts for all 8 comparisons looks like.

    python scripts/ablate_engine.py --json results/engine/ablation.json   # 9 variants x 5 seeds x 40 epochs
    python scripts/ablate_engine.py --variants default,no_spherical --seeds 2 --epochs 5

Tokens are cached in a temporary folder (never the user's token cache).

A budget well short of convergence is deliberate: at 150 epochs every variant solves the image
and sound tasks (docs/results.md), so only the speed of learning can tell the variants apart.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
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
CRITERION = {
    "reference": "default",
    "measure": "held-out exact match (all modalities), per seed",
    "test": "paired t-test over seeds, two-sided, against the default variant",
    "correction": "Holm-Bonferroni over all comparisons made (8 with every variant)",
    "alpha": 0.05,
    "detected": "Holm-adjusted p < alpha",
    "intervals": "unadjusted t 95 % interval, and Bonferroni simultaneous 95 % interval",
    "split": "the manifest's pinned split; free (text) examples pinned to make_split(seed 0) for every seed",
    "stuck": "a run whose final training loss is >= STUCK_LOSS (near ln of the vocabulary size: no learning)",
}
STUCK_LOSS = 4.0


def pin_split(data: Path, tmp: Path) -> Path:
    """A copy of ``data``'s folder whose manifest pins every example to the split that seed 0
    gives it, so every training seed is evaluated on the same held-out examples."""
    from v22sdk.engine.data import make_split, read_examples

    copy = tmp / "data"
    shutil.copytree(data.parent, copy)
    lines = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    examples = read_examples(data)
    assert len(examples) == len(lines), "one example per manifest line"
    split = make_split(examples, 0)
    where = {i: name for name, idx in split.items() for i in idx}
    for i, rec in enumerate(lines):
        if rec.get("split") not in (None, where[i]):
            raise ValueError(f"{data}: line {i + 1} is pinned to {rec['split']!r}, make_split says {where[i]!r}")
        rec["split"] = where[i]
    pinned = copy / data.name
    pinned.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
    return pinned


def run_one(data: Path, overrides: dict, seed: int, epochs: int, tmp: Path) -> dict:
    from v22sdk.engine.config import preset
    from v22sdk.engine.pipeline import train_engine

    cfg = preset("small", epochs=epochs, seed=seed, **overrides)
    losses: list[float] = []
    start = time.perf_counter()
    res = train_engine(data, cfg, tmp / "ablation.pt", on_epoch=lambda h: losses.append(float(h["loss"])))
    m = res["metrics"]
    test = m["test"]
    row = {
        "seed": seed,
        "seconds": round(time.perf_counter() - start, 2),
        "final_loss": losses[-1],
        "losses": losses,
        "test_n": test["all"]["n"],
        "test_exact": test["all"]["exact"],
        "test_char": test["all"]["char"],
        "test_indices": res["split"]["test"],
        "safeguards": m["safeguards"],
    }
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


def paired(rows: list[dict], reference: list[dict], key: str, m: int = 1) -> dict:
    """Per-seed difference to the reference: mean, t 95 % interval, Bonferroni interval over ``m``
    comparisons, two-sided paired t-test p-value (``None`` below 2 seeds)."""
    diffs = [r[key] - d[key] for r, d in zip(rows, reference)]
    mean, sd = mean_sd(diffs)
    n = len(diffs)
    out = {"n": n, "mean": mean, "sd": sd, "lo": None, "hi": None, "lo_bonf": None, "hi_bonf": None, "p": None}
    if n < 2:
        return out
    from scipy import stats

    se = sd / math.sqrt(n)
    half = stats.t.ppf(0.975, n - 1) * se
    half_b = stats.t.ppf(1 - 0.025 / m, n - 1) * se
    if se > 0:
        p = float(2 * stats.t.sf(abs(mean) / se, n - 1))
    else:  # every seed gave the same difference
        p = 1.0 if mean == 0 else 0.0
    out.update(lo=mean - half, hi=mean + half, lo_bonf=mean - half_b, hi_bonf=mean + half_b, p=p)
    return out


def holm(pvalues: dict[str, float]) -> dict[str, float]:
    """Holm–Bonferroni adjusted p-values (step-down; monotone; capped at 1)."""
    order = sorted(pvalues, key=pvalues.get)
    m, running, out = len(order), 0.0, {}
    for i, name in enumerate(order):
        running = max(running, min(1.0, (m - i) * pvalues[name]))
        out[name] = running
    return out


def comparisons(results: dict[str, list[dict]], key: str = "test_exact") -> dict[str, dict]:
    """Every variant against ``default`` on ``key``, Holm-adjusted over the comparisons made."""
    reference = results.get("default")
    names = [n for n in results if n != "default"]
    if reference is None or not names:
        return {}
    out = {n: paired(results[n], reference, key, m=len(names)) for n in names}
    tested = {n: c["p"] for n, c in out.items() if c["p"] is not None}
    for n, p in holm(tested).items():
        out[n]["p_holm"] = p
        out[n]["detected"] = p < CRITERION["alpha"]
    return out


def _interval(lo, hi) -> str:
    return f"[{lo:+.3f}, {hi:+.3f}]" if lo is not None else "—"


def _p(p) -> str:
    return "—" if p is None else ("< 0.001" if p < 0.001 else f"{p:.3f}")


COLUMNS = [
    "variant",
    "held-out exact, all",
    "vision",
    "audio",
    "text char",
    "Δ exact vs default",
    "95 % CI",
    "Holm-adjusted p",
    "simultaneous 95 % CI (Bonferroni)",
    "final train loss",
    "epoch loss < 1",
    "epoch loss < 0.5",
    "s/run",
]


def table_rows(results: dict[str, list[dict]], comps: dict[str, dict]) -> list[list[str]]:

    def cell(rows, key, fmt="{:.3f}"):
        vals = [r[key] for r in rows if r.get(key) is not None]
        if not vals:
            return "never" if key.startswith("epoch") else "—"
        mean, sd = mean_sd(vals)
        missing = len(rows) - len(vals)
        return (
            fmt.format(mean)
            + (f" ± {fmt.format(sd)}" if len(vals) > 1 else "")
            + (f" ({missing} never)" if missing else "")
        )

    out = []
    for name, rows in results.items():
        c = comps.get(name)
        delta = (
            ["—"] * 4
            if c is None
            else [
                f"{c['mean']:+.3f}",
                _interval(c["lo"], c["hi"]),
                _p(c.get("p_holm")),
                _interval(c["lo_bonf"], c["hi_bonf"]),
            ]
        )
        out.append(
            [
                f"`{name}`",
                cell(rows, "test_exact"),
                cell(rows, "vision_exact"),
                cell(rows, "audio_exact"),
                cell(rows, "text_char"),
                *delta,
                cell(rows, "final_loss"),
                cell(rows, "epoch_below_1", "{:.1f}"),
                cell(rows, "epoch_below_0.5", "{:.1f}"),
                cell(rows, "seconds", "{:.1f}"),
            ]
        )
    return out


def table(results: dict[str, list[dict]], comps: dict[str, dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in table_rows(results, comps)]
    return "\n".join(lines)


def values(results: dict[str, list[dict]], comps: dict[str, dict]) -> dict[str, str]:
    """The single figures docs/results.md quotes in its prose."""
    out: dict[str, str] = {}
    n_seeds = len(next(iter(results.values())))
    out["seeds"] = str(n_seeds)
    out["comparisons"] = str(len(comps))
    out["detected"] = ", ".join(f"`{n}`" for n, c in comps.items() if c.get("detected")) or "none"
    for name, rows in results.items():
        mean, sd = mean_sd([r["test_exact"] for r in rows])
        out[f"{name}.exact"] = f"{mean:.2f} ± {sd:.2f}"
        out[f"{name}.stuck"] = str(sum(r["final_loss"] >= STUCK_LOSS for r in rows))
        out[f"{name}.ce_spikes"] = ", ".join(str(r["safeguards"].get("spikes", 0)) for r in rows)
        if name in comps:
            c = comps[name]
            out[f"{name}.delta"] = f"{c['mean']:+.3f} {_interval(c['lo'], c['hi'])}"
            out[f"{name}.p_holm"] = _p(c.get("p_holm"))
            out[f"{name}.delta_bonf"] = f"{c['mean']:+.3f} {_interval(c['lo_bonf'], c['hi_bonf'])}"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEMO, help="JSONL manifest with a held-out 'test' split")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, from: " + ", ".join(VARIANTS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument(
        "--json",
        type=Path,
        default=None,
        help="write every run's figures and the table here (a result file, v22sdk.evidence)",
    )
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
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
    saved_cache = os.environ.get("V22SDK_CACHE")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["V22SDK_CACHE"] = str(Path(tmp) / "cache")  # shared by the runs, never the user's cache
        try:
            data = pin_split(args.data, Path(tmp))
            for name in names:
                for seed in range(args.seeds):
                    row = run_one(data, VARIANTS[name], seed, args.epochs, Path(tmp))
                    results.setdefault(name, []).append(row)
                    print(
                        f"{name} seed {seed}: held-out exact {row['test_exact']:.3f}, "
                        f"final loss {row['final_loss']:.4f}, {row['seconds']:.1f} s",
                        file=sys.stderr,
                        flush=True,
                    )
        finally:
            if saved_cache is None:
                os.environ.pop("V22SDK_CACHE", None)
            else:
                os.environ["V22SDK_CACHE"] = saved_cache
    first = next(iter(results.values()))[0]
    assert all(r["test_indices"] == first["test_indices"] for rows in results.values() for r in rows), (
        "every run must be evaluated on the same held-out examples"
    )
    comps = comparisons(results)
    print(
        f"small preset, {args.epochs} epochs, seeds 0..{args.seeds - 1}, data {args.data.name}, "
        f"held-out n = {first['test_n']} (the same for every seed); mean ± sd over seeds; "
        f"p-values Holm-adjusted over {len(comps)} comparisons\n"
    )
    print(table(results, comps))
    if args.json:
        from v22sdk.evidence import write_result

        write_result(
            args.json,
            {
                "epochs": args.epochs,
                "seeds": args.seeds,
                "data": args.data.name,
                "variants": {k: VARIANTS[k] for k in results},
                "comparisons": comps,
                "runs": results,
            },
            criterion=CRITERION | {"stuck_loss": STUCK_LOSS},
            tables={
                "ablation": {
                    "columns": COLUMNS,
                    "align": "l" + "r" * (len(COLUMNS) - 1),
                    "rows": table_rows(results, comps),
                }
            },
            values=values(results, comps),
            command=None if argv is None else ["python", "scripts/ablate_engine.py", *argv],
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
