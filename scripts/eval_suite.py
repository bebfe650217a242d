"""Held-out accuracy per part of the data suite: the V22 engine, the baseline engine and classical
baselines, on identical splits, over several suite seeds.

    python scripts/eval_suite.py                                   # 5 seeds, small suites
    python scripts/eval_suite.py --seeds 2 --epochs 2 --out /tmp/x.json   # a quick look
    python scripts/eval_suite.py --only 3 --out s3.json        # one seed per process, then:
    python scripts/eval_suite.py --combine s0.json s3.json ...  # merged into the result file

Seed s builds the ``small`` suite with seed s (so the held-out voices, pitches, scans and strings
differ from seed to seed) and trains every model with seed s; intervals are t-based 95 %
intervals over the seeds, so they include the variation of the split. Methods:

* ``V22 engine`` and ``baseline engine``: the ``small`` preset trained on the train split of all
  four parts together (one output vocabulary) for ``--epochs`` epochs; exact match on the val
  split is measured every 5 epochs and the model of the best point is kept (so a late
  instability does not decide the figure); an answer is right when the decoded text equals the
  target;
* ``LR on tokens``: logistic regression on the mean, std and max over each input's 640-D tokens
  (1,920 features), trained on all four parts together (like the engines), C chosen on val;
* ``LR on tokens, per part``: the same, one model per part (the engines' label space is joint,
  this one's is not: a speech clip cannot be answered with an instrument);
* ``LR on raw signal, per part``: pixels (handwriting), MFCC statistics (speech, instruments),
  character 1–3-gram TF-IDF (text), one model per part, C chosen on val;
* ``1-NN on tokens``: the label of the most cosine-similar mean token of the training set (all
  parts), no training.

Writes a result file (v22sdk.evidence) with every seed's figures and two tables: accuracy per
part, and each method's paired difference to V22.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite_lab as lab  # noqa: E402

METHODS = (
    "V22 engine",
    "baseline engine",
    "LR on tokens",
    "LR on tokens, per part",
    "LR on raw signal, per part",
    "1-NN on tokens",
)
SELECT_EVERY = 5  # epochs between the engines' val measurements; the best point's model is kept
RAW = {
    "handwriting": "pixels (32×32 grey)",
    "speech": "MFCC statistics (80)",
    "instruments": "MFCC statistics (80)",
    "text": "char 1–3-gram TF-IDF",
}


def classical(data: lab.Loaded, seed: int) -> dict[str, dict]:
    """Predictions of the classical baselines on the test split: {method: {"pred": {i: label}, ...}}."""
    from v22sdk.engine.data.suite import baselines as bl

    train, val, test = data.split["train"], data.split["val"], data.split["test"]
    y = np.array([ex.target for ex in data.ds.examples])
    feats = bl.token_features(data.ds.batches)
    out: dict[str, dict] = {}
    predict, info = bl.fit_logistic(feats[train], y[train], feats[val], y[val], seed=seed)
    out["LR on tokens"] = {"pred": dict(zip(test, predict(feats[test]))), "C": info["C"]}
    per_part, raw = {}, {}
    per_part_c, raw_c = {}, {}
    for part in lab.PART_ORDER:
        tr, va, te = (data.where(s, [part]) for s in ("train", "val", "test"))
        if not te:
            continue
        predict, info = bl.fit_logistic(feats[tr], y[tr], feats[va], y[va], seed=seed)
        per_part.update(zip(te, predict(feats[te])))
        per_part_c[part] = info["C"]
        if part == "text":
            x = bl.char_ngram_features(
                [data.ds.examples[i].input for i in tr],
                {s: [data.ds.examples[i].input for i in idx] for s, idx in (("train", tr), ("val", va), ("test", te))},
            )
            xtr, xva, xte = x["train"], x["val"], x["test"]
        else:
            idx = tr + va + te
            paths = [data.ds.examples[i].input for i in idx]
            x = bl.pixel_features(paths) if part == "handwriting" else bl.mfcc_features(paths)
            xtr, xva, xte = x[: len(tr)], x[len(tr) : len(tr) + len(va)], x[len(tr) + len(va) :]
        predict, info = bl.fit_logistic(xtr, y[tr], xva, y[va], seed=seed)
        raw.update(zip(te, predict(xte)))
        raw_c[part] = info["C"]
    out["LR on tokens, per part"] = {"pred": per_part, "C": per_part_c}
    out["LR on raw signal, per part"] = {"pred": raw, "C": raw_c}
    mean = bl.mean_tokens(data.ds.batches)
    out["1-NN on tokens"] = {"pred": dict(zip(test, bl.nearest_neighbour(mean[train], y[train], mean[test])))}
    return out


def run_seed(work: Path, size: str, seed: int, epochs: int) -> dict:
    from v22sdk.engine.config import preset

    data = lab.load(lab.suite(work, size, seed))
    train, val, test = data.split["train"], data.split["val"], data.split["test"]
    runs: dict[str, dict] = {}
    for name, engine in (("V22 engine", "v22"), ("baseline engine", "baseline")):
        lab.log(f"seed {seed}: training the {engine} engine, {epochs} epochs on {len(train)} examples")
        ckpt = work / "models" / f"{engine}-{size}-{seed}.pt"
        runs[name] = lab.train_and_predict(
            data,
            train,
            preset("small", engine=engine, seed=seed, epochs=epochs),
            test,
            checkpoint=ckpt,
            val_idx=val,
            select_every=SELECT_EVERY,
        )
        runs[name]["checkpoint"] = str(ckpt.relative_to(work))
    lab.log(f"seed {seed}: classical baselines")
    runs.update(classical(data, seed))
    result = {
        "seed": seed,
        "n": {p: len(data.where("test", [p])) for p in lab.PART_ORDER},
        "n_train": len(train),
        "methods": {},
    }
    for name in METHODS:
        r = runs[name]
        result["methods"][name] = {
            "accuracy": lab.accuracy_by_part(data, r["pred"]),
            **{k: v for k, v in r.items() if k != "pred"},
        }
        lab.log(
            f"seed {seed}: {name}: "
            + ", ".join(f"{k} {v['acc']:.3f}" for k, v in result["methods"][name]["accuracy"].items())
        )
    return result


def tables(seeds: list[dict]) -> dict:
    cols = [*lab.PART_ORDER, "all"]

    def series(method: str, part: str) -> list[float]:
        return [s["methods"][method]["accuracy"][part]["acc"] for s in seeds]

    acc_rows = [[m, *[lab.fmt_ci(series(m, p)) for p in cols]] for m in METHODS]

    def n_range(values: list[int]) -> str:  # the split follows the seed: sizes may differ a little
        return str(min(values)) if min(values) == max(values) else f"{min(values)}–{max(values)}"

    acc_rows.append(
        [
            "held-out n per seed",
            *[n_range([s["n"][p] for s in seeds]) for p in lab.PART_ORDER],
            n_range([sum(s["n"].values()) for s in seeds]),
        ]
    )
    delta_rows = []
    for m in METHODS[1:]:
        delta_rows.append(
            [f"{m} − V22", *[lab.fmt_ci(np.subtract(series(m, p), series("V22 engine", p)), signed=True) for p in cols]]
        )
    return {
        "accuracy": {"columns": ["method", *cols], "align": "l" + "r" * len(cols), "rows": acc_rows},
        "delta": {
            "columns": ["difference (paired by seed)", *cols],
            "align": "l" + "r" * len(cols),
            "rows": delta_rows,
        },
    }


def result_data(args, seeds: list[dict], planned: list[int]) -> dict:
    done = [r["seed"] for r in seeds]
    return {
        "size": args.size,
        "epochs": args.epochs,
        "select_every": SELECT_EVERY,
        "seeds": done,
        "seeds_planned": planned,
        "complete": set(done) >= set(planned),
        "raw_features": RAW,
        "per_seed": seeds,
    }


def combine(paths: list[Path], size: str, epochs: int) -> tuple[list[dict], list[dict]]:
    """The seeds of several result files of this script (run one seed per process), by seed."""
    from v22sdk.evidence import read_result

    by_seed: dict[int, dict] = {}
    sources = []
    for path in paths:
        doc = read_result(path)
        d = doc["data"]
        if (d["size"], d["epochs"], d["select_every"]) != (size, epochs, SELECT_EVERY):
            raise SystemExit(
                f"{path}: size {d['size']}, {d['epochs']} epochs, selection every {d['select_every']}; "
                f"expected {size}, {epochs}, {SELECT_EVERY}"
            )
        for r in d["per_seed"]:
            seen = by_seed.get(r["seed"])
            if seen and any(seen["methods"][m]["accuracy"] != r["methods"][m]["accuracy"] for m in METHODS):
                raise SystemExit(f"{path}: seed {r['seed']} differs from another file's run of it")
            by_seed.setdefault(r["seed"], r)
        sources.append(
            {
                "file": str(path),
                "seeds": [r["seed"] for r in d["per_seed"]],
                "command": doc["provenance"].get("command"),
                "commit": doc["provenance"].get("commit"),
            }
        )
    return [by_seed[k] for k in sorted(by_seed)], sources


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--size", default="small", choices=["tiny", "small", "full"])
    ap.add_argument("--work", type=Path, default=lab.DEFAULT_WORK, help="suites, token cache, checkpoints")
    ap.add_argument("--out", type=Path, default=lab.ROOT / "results" / "engine" / "suite-accuracy.json")
    ap.add_argument("--only", default=None, help="run these seeds only (comma-separated), e.g. one per process")
    ap.add_argument(
        "--combine",
        type=Path,
        nargs="+",
        default=None,
        metavar="RESULT",
        help="train nothing: merge the seeds of these result files (same size and epochs) into --out",
    )
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    from v22sdk.evidence import markdown_table, write_result

    planned = list(range(args.seeds))
    if args.combine:
        seeds, sources = combine(args.combine, args.size, args.epochs)
        extra = {"combined_from": sources}
    else:
        lab.one_thread()
        work = lab.use_work(args.work)
        if args.only:
            planned = [int(x) for x in args.only.split(",")]
        seeds, extra = [], {}
        for s in planned:
            seeds.append(run_seed(work, args.size, s, args.epochs))
            # written after every seed: a run stopped early leaves the seeds it finished, and says so
            write_result(args.out, result_data(args, seeds, planned), tables=tables(seeds), name="suite-accuracy")
    if args.combine:
        write_result(args.out, result_data(args, seeds, planned) | extra, tables=tables(seeds), name="suite-accuracy")
    for t in tables(seeds).values():
        print(markdown_table(t))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
