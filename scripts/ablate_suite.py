"""The V22 switches ablation of scripts/ablate_engine.py, re-run on the data suite, by part.

    python scripts/ablate_suite.py                       # 9 variants x 5 seeds, small suites
    python scripts/ablate_suite.py --variants default,no_memory --seeds 2 --epochs 2 --out /tmp/a.json

The variants are ablate_engine.py's own (``VARIANTS``: each flips one EngineConfig field, plus
the baseline engine), so both scripts measure the same switches; this one trains on the suite
instead of the demo data and scores every part of its held-out split (handwriting, speech,
instruments, text). Seed s uses the ``small`` suite built with seed s and trains with seed s, so
the intervals include the variation of the split. Δ is the per-seed paired difference to
``default`` in held-out exact match over all parts, with its t-based 95 % interval, and the
p-value of the paired t-test adjusted by Holm over the 8 comparisons with ``default``.

The epoch budget is short of convergence on purpose, as on the demo data (and to keep the 45 runs
near half an hour of CPU on a 2-core machine): it measures what each switch does to learning at a
fixed budget, not the best accuracy a variant can reach (scripts/eval_suite.py trains longer).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite_lab as lab  # noqa: E402


def variants() -> dict[str, dict]:
    spec = importlib.util.spec_from_file_location("ablate_engine", Path(__file__).resolve().parent / "ablate_engine.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.VARIANTS)


def holm(pvalues: dict[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values (monotone, capped at 1)."""
    order = sorted(pvalues, key=pvalues.get)
    m, running, out = len(order), 0.0, {}
    for rank, name in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[name]))
        out[name] = running
    return out


def paired_p(diffs: list[float]) -> float:
    """Two-sided paired t-test p-value of mean(diffs) = 0 (1.0 when every difference is 0)."""
    d = np.asarray(diffs, dtype=float)
    if len(d) < 2 or np.allclose(d, d[0]) and d[0] == 0:
        return 1.0
    sd = d.std(ddof=1)
    if sd == 0:
        return 0.0
    from scipy import stats

    t = d.mean() / (sd / math.sqrt(len(d)))
    return float(2 * stats.t.sf(abs(t), len(d) - 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    all_variants = variants()
    ap.add_argument(
        "--variants", default=",".join(all_variants), help="comma-separated, from: " + ", ".join(all_variants)
    )
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--size", default="small", choices=["tiny", "small", "full"])
    ap.add_argument("--work", type=Path, default=lab.DEFAULT_WORK)
    ap.add_argument("--out", type=Path, default=lab.ROOT / "results" / "engine" / "suite-ablation.json")
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in all_variants]
    if unknown:
        ap.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(all_variants)}")
    if "default" in names:
        names.remove("default")
    names.insert(0, "default")
    lab.one_thread()
    work = lab.use_work(args.work)
    from v22sdk.engine.config import preset

    runs: dict[str, list[dict]] = {n: [] for n in names}
    for seed in range(args.seeds):
        data = lab.load(lab.suite(work, args.size, seed))
        for name in names:
            cfg = preset("small", seed=seed, epochs=args.epochs, **all_variants[name])
            r = lab.train_and_predict(data, data.split["train"], cfg, data.split["test"], val_idx=data.split["val"])
            acc = lab.accuracy_by_part(data, r["pred"])
            runs[name].append({"seed": seed, "accuracy": acc, **{k: v for k, v in r.items() if k != "pred"}})
            lab.log(
                f"seed {seed} {name}: all {acc['all']['acc']:.3f}, loss {r['final_loss']:.3f}, "
                f"{r['spikes']} spikes, {r['cpu_s']} s CPU"
            )
        # written after every seed: a run stopped early leaves the seeds it finished, and says so
        write(args, names, all_variants, runs, seed + 1)
    return 0


def write(args, names: list[str], all_variants: dict, runs: dict[str, list[dict]], done: int) -> None:
    cols = [*lab.PART_ORDER, "all"]

    def series(name, part):
        return [r["accuracy"][part]["acc"] for r in runs[name]]

    p = {n: paired_p(list(np.subtract(series(n, "all"), series("default", "all")))) for n in names[1:]}
    adj = holm(p) if p else {}
    rows = []
    for n in names:
        delta = (
            "—" if n == "default" else lab.fmt_ci(np.subtract(series(n, "all"), series("default", "all")), signed=True)
        )
        rows.append(
            [
                f"`{n}`",
                *[lab.fmt_ci(series(n, c)) for c in cols],
                delta,
                "—" if n == "default" else f"{adj[n]:.3f}",
                f"{np.mean([r['final_loss'] for r in runs[n]]):.3f}",
                str(sum(r["spikes"] for r in runs[n])),
                f"{np.mean([r['cpu_s'] for r in runs[n]]):.0f}",
            ]
        )
    table = {
        "columns": ["variant", *cols, "Δ all vs default", "Holm p", "final train loss", "CE spikes", "CPU s/run"],
        "align": "l" + "r" * (len(cols) + 5),
        "rows": rows,
    }
    from v22sdk.evidence import markdown_table, write_result

    write_result(
        args.out,
        {
            "size": args.size,
            "epochs": args.epochs,
            "seeds": list(range(done)),
            "seeds_planned": list(range(args.seeds)),
            "complete": done == args.seeds,
            "variants": {n: all_variants[n] for n in names},
            "runs": runs,
            "p_paired_t": p,
            "p_holm": adj,
        },
        tables={"ablation": table},
        name="suite-ablation",
    )
    print(markdown_table(table), flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
