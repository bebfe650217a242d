"""Are the engine's explanations (``v22sdk run --why``) faithful? Deletion curves, sanity checks and
completeness on held-out inputs; the figures of ``docs/explanations.md``.

    python scripts/explain_faithfulness.py                      # the default checkpoint, its test split
    python scripts/explain_faithfulness.py --checkpoint model.pt --data suite.jsonl --out results/explain/x.json
    python scripts/explain_faithfulness.py --figure-only results/explain/faithfulness.json --figure docs/img/x.png

For every held-out input the engine's answer is decoded and held fixed, and its attributions are
computed with both methods of :mod:`v22sdk.engine.explain` (integrated gradients, occlusion):

* **Deletion.** The top-k slots of a ranking are set to 0 in every token (tokens: set to the zero
  vector; image cells and sound stretches: removed from the input and re-tokenized) and the
  probability of the held answer is measured. Rankings: each method's (largest signed
  attribution first), plain attribute magnitude (slots: mean |value| over the input's tokens;
  tokens: Σ|attr| of the token; regions: how much removing the region changes the input's
  attributes, mean |Δattr|), and random orders. The area between two curves is the mean over
  the k grid of p_comparison(k) − p_method(k), per input; positive when the method's top parts
  matter more. Intervals: 95 % bootstrap over inputs.
* **Sanity checks** (Adebayo et al., 2018). The same inputs and held answers explained by an engine
  with re-initialised weights and by one trained on shuffled targets; Spearman's ρ per input
  between its attributions and the trained engine's.
* **Completeness** of integrated gradients, and the CPU time of each method.

The criterion (:data:`CRITERION`) was committed before the run whose results are committed.
Runs with one torch thread; the shuffled-target engine is trained here (``--shuffled-epochs``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: fixed before the run (pre-registration); the result file repeats it
CRITERION = {
    "inputs": "the checkpoint's held-out split (--split, default test; for another build of its data set, the split "
    "the manifest pins); --limit N keeps a seeded sample (seed 0) of "
    "N per part of the data set (the manifest's part field, else the modality), in split order",
    "answer": "the trained engine's decoded answer, held fixed for every model and variant",
    "score": "probability of the held answer as run reports it (product over its positions, <eos> included, of the "
    "softmax of the logits divided by the checkpoint's calibration temperature, 1 without; the "
    "comparison engines of the sanity checks use 1)",
    "k_slots": [1, 2, 3, 4, 6, 8, 12, 16, 24, 32],
    "k_tokens": [1, 2, 3, 4, 6, 8],
    "k_regions": [1, 2, 3, 4, 6, 8, 12, 16],
    "k_beyond_parts": "k larger than the input's number of parts deletes all of them",
    "random_orders": {"slots": 20, "tokens": 20, "regions": 10},
    "regions": "inputs with fewer than 4 tokens: image 6 x 6 cells filled with the image's mean value, sound "
    "stretches of >= 0.1 s (at most 16) silenced, re-tokenized by the input's plugin",
    "sanity_models": "re-initialised: the checkpoint's config built afresh with seed + 1; shuffled: trained with "
    "the checkpoint's config (--shuffled-epochs, default 150) on its train split with the targets "
    "permuted among the training examples (seed + 7), same vocabulary",
    "area": "per input, mean over the k grid (k >= 1) of p_comparison(k) - p_method(k)",
    "interval": "95 % percentile bootstrap of the mean over inputs, 10000 resamples, seed 0",
    "beats": "a ranking beats a comparison when the interval of the mean area lies above 0",
    "supported": "the chosen method beats random and magnitude for slots, and random for tokens and regions "
    "(levels with fewer than 5 inputs are reported, not judged)",
    "pick": "default method = larger mean slot area vs magnitude; if the 95 % interval of the paired "
    "difference (ig - occlusion) includes 0, the one with the smaller median CPU time",
    "sanity": "attributions differ from the re-initialised and the shuffled-target engine when the interval "
    "of the mean Spearman rho (signed attributions, per input, over >= 3 parts) has its upper end "
    "below 0.5",
    "completeness": "integrated gradients: |sum - delta f| <= 1 % |delta f| + 0.01 nats (explain.IG_TOLERANCE)",
}
LEVELS = ("slots", "tokens", "regions")
METHODS = ("ig", "occlusion")


@dataclasses.dataclass
class Case:
    """One held-out input, ready to be explained."""

    index: int
    modality: str
    part: str
    source: str
    batch: object
    schema: object
    plugin: object
    sample: object = None
    kind: str | None = None
    temperature: float = 1.0  # the checkpoint's calibration of this modality


# -- statistics ----------------------------------------------------------------------------------
def bootstrap(values, n: int = 10000, seed: int = 0) -> tuple[float, float, float]:
    """Mean and its 95 % percentile bootstrap interval."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, v.size, size=(n, v.size))].mean(1)
    return float(v.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def spearman(a, b) -> float | None:
    """Spearman's rho of two vectors (average ranks for ties); None when either is constant or short."""
    from scipy.stats import spearmanr

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size < 3 or np.all(a == a[0]) or np.all(b == b[0]):
        return None
    return float(spearmanr(a, b).statistic)


def order_desc(scores) -> list[int]:
    """Positions by score, largest first; ties keep position order."""
    return [int(i) for i in np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")]


def fmt_ci(m: float, lo: float, hi: float, digits: int = 3) -> str:
    if not np.isfinite(m):
        return "–"
    return f"{m:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


# -- loading ----------------------------------------------------------------------------------------
def example_parts(source, examples) -> list[str]:
    """The part of each example: a suite manifest's ``part`` field, else the example's modality."""
    source = Path(source)
    if source.suffix == ".jsonl":
        lines = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
        if len(lines) == len(examples) and all("part" in line for line in lines):
            return [str(line["part"]) for line in lines]
    return [ex.modality for ex in examples]


def held_out(indices, parts: list[str], limit: int | None, seed: int = 0) -> list[int]:
    """``indices`` (split order), or a seeded sample of at most ``limit`` per part, kept in split order."""
    if limit is None:
        return list(indices)
    rng = np.random.default_rng(seed)
    keep: set[int] = set()
    for part in sorted({parts[i] for i in indices}):
        mine = [i for i in indices if parts[i] == part]
        keep.update(mine if len(mine) <= limit else rng.choice(mine, size=limit, replace=False).tolist())
    return [i for i in indices if i in keep]


def load_cases(checkpoint, data, split: str, limit: int | None):
    from v22sdk.engine.data import load_dataset
    from v22sdk.engine.explain import region_kind
    from v22sdk.engine.pipeline import recorded_source
    from v22sdk.engine.runner import Runner

    runner = Runner(checkpoint)
    model, cfg, vocab, doc, registry = runner.model, runner.cfg, runner.vocab, runner.doc, runner.registry
    temperature = getattr(runner, "temperature_of", lambda modality: 1.0)
    info = doc.get("data", {})
    source = data or recorded_source(checkpoint, info)
    # the token cache only where V22SDK_CACHE names one (a run's own folder; never the user's default cache)
    ds = load_dataset(
        source,
        sample=info.get("sample"),
        seed=cfg.seed,
        cache=bool(os.environ.get("V22SDK_CACHE")),
        modality=info.get("modality"),
    )
    splits = data_splits(ds, doc, info, source, checkpoint)
    parts = example_parts(source, ds.examples) if info.get("sample") is None else [ex.modality for ex in ds.examples]
    cases = []
    for i in held_out(splits[split], parts, limit):
        ex, batch = ds.examples[i], ds.batches[i]
        plugin = registry.modality(ex.modality)
        case = Case(
            i,
            ex.modality,
            parts[i],
            ex.input,
            batch,
            type(plugin).schema,
            plugin,
            temperature=float(temperature(ex.modality)),
        )
        if ex.is_file:
            case.sample = plugin.load(ex.input)
            case.kind = region_kind(batch, case.sample.data)
        cases.append(case)
    return model, cfg, vocab, splits, ds, cases, str(source)


def data_splits(ds, doc, info, source, checkpoint) -> dict[str, list[int]]:
    """The checkpoint's recorded split of its data set; for another build of it (a data suite rebuilt
    here, or with augmented copies the checkpoint also trained on), the split each manifest line
    pins (``"split"``), which the checkpoint's training used."""
    if "identity" not in info or ds.identity == info["identity"]:
        return {k: list(v) for k, v in doc["split"].items()}
    pinned = [ex.split for ex in ds.examples]
    if any(p not in ("train", "val", "test") for p in pinned):
        raise SystemExit(
            f"{source} is not the data set {checkpoint} was trained on, and its lines do not pin "
            "their split: the held-out inputs are unknown"
        )
    print(f"note: {source} is another build of the checkpoint's data; using the split its manifest pins", flush=True)
    return {name: [i for i, p in enumerate(pinned) if p == name] for name in ("train", "val", "test")}


# -- attributions -------------------------------------------------------------------------------------
def setup(model, cfg, vocab, case, answer_ids=None):
    """(objective, x, n, active slots, answer) for one case and model (answer decoded unless given).
    The trained engine's answer is scored with the checkpoint's calibration; another engine's
    (``answer_ids`` given) without."""
    from v22sdk.engine.data import to_tensors
    from v22sdk.engine.explain import Objective, decode_answer, schema_attr_sets

    tokens, mask = to_tensors([case.batch], cfg.max_len)
    sets = schema_attr_sets(case.schema)
    temperature = case.temperature if answer_ids is None else 1.0
    answer = decode_answer(model, tokens, mask, vocab, sets(tokens), temperature) if answer_ids is None else None
    ids = answer.ids if answer is not None else answer_ids
    n = int(mask.sum())
    x = tokens[0]
    attr = x[:n, 256:].numpy()
    active = [int(s) for s in case.schema.indices if np.any(attr[:, s] != 0)]
    return Objective(model, mask, ids, sets, temperature=temperature), x, n, active, answer


def attributions(model, cfg, case, objective, x, n, active) -> dict:
    """Both methods' slot and token attributions, occlusion's region attributions, with CPU times."""
    from v22sdk.engine.explain import read_only, region_attribution, slot_attribution, token_attribution

    out: dict = {"cpu": {}, "completeness": {}}
    with read_only(model):
        for method in METHODS:
            t = time.process_time()
            out[("slots", method)], info_s = slot_attribution(objective, x, n, active, method)
            out[("tokens", method)], info_t = token_attribution(objective, x, n, method)
            out["cpu"][method] = time.process_time() - t
            if method == "ig":
                out["completeness"] = {"slots": info_s, "tokens": info_t}
        if case.kind:
            t = time.process_time()
            rows = region_attribution(objective, case.batch, cfg.max_len, case.plugin, case.sample, case.kind)
            out[("regions", "occlusion")] = np.array([r["attribution"] for r in rows])
            out["cpu"]["regions"] = time.process_time() - t
    return out


# -- deletion -------------------------------------------------------------------------------------------
def _grid(ks, parts: int) -> list[int]:
    """k = 0 (the input itself) then the k grid, capped at the number of parts."""
    return [0] + [min(k, parts) for k in ks]


def deletion(model, cfg, case, objective, x, n, active, attrs_, ks: dict, orders: dict, seed: int) -> dict:
    """Per level, per ranking: the held answer's probability after deleting the top-k parts (k grid)."""
    import torch

    from v22sdk.engine.data import to_tensors
    from v22sdk.engine.explain import cut_regions, occlude, read_only, tokenize_variants

    rng = np.random.default_rng(seed)
    attr = x[:n, 256:].numpy()
    curves: dict = {}
    with read_only(model):
        if active:
            mags = [float(np.abs(attr[:, s]).mean()) for s in active]
            rankings = {m: [order_desc(attrs_[("slots", m)])] for m in METHODS}
            rankings["magnitude"] = [order_desc(mags)]
            rankings["random"] = [list(rng.permutation(len(active))) for _ in range(orders["slots"])]
            grid = _grid(ks["slots"], len(active))
            variants = []
            for ords in rankings.values():
                for order in ords:
                    for k in grid:
                        v = x.clone()
                        v[:n, [256 + active[j] for j in order[:k]]] = 0
                        variants.append(v)
            curves["slots"] = _collect(objective.values(torch.stack(variants)), rankings, grid)
        if n >= 2:
            mags = np.abs(attr).sum(1)
            rankings = {m: [order_desc(attrs_[("tokens", m)])] for m in METHODS}
            rankings["magnitude"] = [order_desc(mags)]
            rankings["random"] = [list(rng.permutation(n)) for _ in range(orders["tokens"])]
            grid = _grid(ks["tokens"], n)
            variants = []
            for ords in rankings.values():
                for order in ords:
                    for k in grid:
                        v = x.clone()
                        v[list(order[:k])] = 0
                        variants.append(v)
            curves["tokens"] = _collect(objective.values(torch.stack(variants)), rankings, grid)
        if case.kind:
            regions = cut_regions(case.kind, case.sample.data, dict(case.sample.units))
            singles = tokenize_variants(
                case.plugin, case.sample, [occlude(case.kind, case.sample.data, [idx]) for idx, _ in regions]
            )
            base_attr = case.batch.attr.mean(0)
            change = [float(np.abs(b.attr.mean(0) - base_attr).mean()) for b in singles]
            rankings = {
                "occlusion": [order_desc(attrs_[("regions", "occlusion")])],
                "magnitude": [order_desc(change)],
                "random": [list(rng.permutation(len(regions))) for _ in range(orders["regions"])],
            }
            grid = _grid(ks["regions"], len(regions))
            arrays = [
                occlude(case.kind, case.sample.data, [regions[j][0] for j in order[:k]])
                for ords in rankings.values()
                for order in ords
                for k in grid
            ]
            tokens, masks = to_tensors(tokenize_variants(case.plugin, case.sample, arrays), cfg.max_len)
            curves["regions"] = _collect(objective.values(tokens, masks), rankings, grid)
    return curves


def _collect(f: np.ndarray, rankings: dict, grid: list[int]) -> dict:
    """Probabilities (exp f) of the variants, back into {ranking: mean curve over its orders}."""
    p = np.exp(f)
    out, at = {}, 0
    for name, ords in rankings.items():
        block = p[at : at + len(ords) * len(grid)].reshape(len(ords), len(grid))
        out[name] = block.mean(0).tolist()
        at += block.size
    return out


# -- comparison engines ---------------------------------------------------------------------------------
def reinitialised(cfg, vocab, seed: int):
    import torch

    from v22sdk.engine.v22 import build_model

    torch.manual_seed(seed)
    model = build_model(cfg, torch.from_numpy(vocab.embeddings))
    model.eval()
    return model


def shuffled_target_model(cfg, vocab, ds, splits, epochs: int, seed: int):
    """The engine trained as the checkpoint was, on its train split with the targets permuted among
    the training examples (same vocabulary, so the held answer's ids mean the same characters)."""
    from v22sdk.engine.train import Trainer

    train = list(splits["train"])
    perm = np.random.default_rng(seed).permutation(len(train))
    examples = list(ds.examples)
    for i, j in zip(train, perm):
        examples[i] = dataclasses.replace(ds.examples[i], target=ds.examples[train[j]].target)
    shuffled = dataclasses.replace(ds, examples=examples)
    held = list(splits.get("test", []))
    trainer = Trainer(cfg.replace(epochs=epochs), shuffled, {"train": train, **({"test": held} if held else {})}, vocab)
    trainer.fit()
    fit = {
        "epochs": trainer.history[-1]["epoch"] if trainer.history else 0,
        "train_exact_on_shuffled": trainer.evaluate("train")["all"]["exact"],
        "moved_targets": int(sum(ds.examples[i].target != examples[i].target for i in train)),
    }
    trainer.model.eval()
    return trainer.model, fit


def save_shuffled(args) -> dict:
    """--train-shuffled PATH: only train the shuffled-target engine (as :func:`run` would) and save its
    weights and fit, for a later run's ``--shuffled-model PATH``."""
    import torch

    from v22sdk.engine.checkpoint import save_checkpoint

    torch.set_num_threads(1)
    model, cfg, vocab, splits, ds, _, source = load_cases(args.checkpoint, args.data, args.split, 0)
    t = time.time()
    shuffled, fit = shuffled_target_model(cfg, vocab, ds, splits, args.shuffled_epochs, cfg.seed + 7)
    fit = {
        **fit,
        "seconds": round(time.time() - t, 1),
        "checkpoint": str(args.checkpoint),
        "data": source,
        "requested_epochs": args.shuffled_epochs,
    }
    # a checkpoint: the weights and the memory the engine wrote while training, as run() would keep them
    save_checkpoint(args.train_shuffled, shuffled, cfg, vocab, data={"shuffled_fit": fit})
    print(f"shuffled-target engine: {fit}; wrote {args.train_shuffled}", flush=True)
    return fit


def load_shuffled(path, cfg, vocab):
    """The shuffled-target engine saved by --train-shuffled (weights and memory), and its fit."""
    from v22sdk.engine.checkpoint import load_checkpoint

    model, saved_cfg, saved_vocab, doc = load_checkpoint(path, expect=cfg)
    if saved_vocab.chars != vocab.chars:
        raise SystemExit(f"{path} was trained with another output vocabulary than the checkpoint's")
    model.eval()
    return model, doc["data"]["shuffled_fit"]


# -- the run ------------------------------------------------------------------------------------------------
def run(args) -> dict:
    import torch

    torch.set_num_threads(1)
    model, cfg, vocab, splits, ds, cases, source = load_cases(args.checkpoint, args.data, args.split, args.limit)
    if not cases:
        raise SystemExit(f"the {args.split} split of {args.checkpoint} is empty")
    ks = {"slots": CRITERION["k_slots"], "tokens": CRITERION["k_tokens"], "regions": CRITERION["k_regions"]}
    orders = CRITERION["random_orders"]
    per_input = []
    trained = []
    t0 = time.time()
    for c, case in enumerate(cases):
        objective, x, n, active, answer = setup(model, cfg, vocab, case)
        a = attributions(model, cfg, case, objective, x, n, active)
        curves = deletion(model, cfg, case, objective, x, n, active, a, ks, orders, seed=c)
        trained.append((answer, a))
        per_input.append(
            {
                "index": case.index,
                "modality": case.modality,
                "part": case.part,
                "answer": answer.text,
                "log_prob": answer.log_prob,
                "tokens": n,
                "active_slots": len(active),
                "regions": len(a.get(("regions", "occlusion"), [])),
                "curves": curves,
                "completeness": a["completeness"],
                "cpu": a["cpu"],
            }
        )
        print(f"[{c + 1}/{len(cases)}] {case.part} {answer.text!r} ({time.time() - t0:.0f} s)", flush=True)
    sanity = {}
    t = time.time()
    if args.shuffled_model:  # trained by --train-shuffled in another process, in parallel: wait for it
        while not Path(args.shuffled_model).is_file():
            time.sleep(15)
        shuffled, fit = load_shuffled(args.shuffled_model, cfg, vocab)
    else:
        shuffled, fit = shuffled_target_model(cfg, vocab, ds, splits, args.shuffled_epochs, cfg.seed + 7)
    print(f"shuffled-target engine ready ({time.time() - t:.0f} s): {fit}", flush=True)
    for name, other in (("reinitialised", reinitialised(cfg, vocab, cfg.seed + 1)), ("shuffled", shuffled)):
        rows = []
        for case, (answer, a) in zip(cases, trained):
            objective, x, n, active, _ = setup(other, cfg, vocab, case, answer.ids)
            b = attributions(other, cfg, case, objective, x, n, active)
            row = {}
            for key in a:
                if isinstance(key, tuple) and key in b:
                    row[f"{key[0]}/{key[1]}"] = spearman(a[key], b[key])
            rows.append(row)
        sanity[name] = rows
        print(f"sanity: {name} done", flush=True)
    # how much each method merely follows plain magnitude (context for the sanity checks)
    follows = []
    for case, (answer, a) in zip(cases, trained):
        _, x, n, active, _ = setup(model, cfg, vocab, case, answer.ids)
        mags = [float(np.abs(x[:n, 256 + s].numpy()).mean()) for s in active]
        follows.append({m: spearman(a[("slots", m)], mags) for m in METHODS})
    return {
        "checkpoint": str(args.checkpoint),
        "data": source,
        "split": args.split,
        "engine": cfg.engine,
        "inputs": per_input,
        "sanity": sanity,
        "follows_magnitude": follows,
        "shuffled_fit": fit,
        "patch_grid": patch_grid_agreement(model, cfg, vocab, cases, trained),
        "ks": ks,
    }


def patch_grid_agreement(model, cfg, vocab, cases, trained) -> dict | None:
    """For image inputs of a checkpoint that reads one global token: does the answer stay the same when
    the vision plugin's 4 × 4 patch tokens are appended (the alternative to region occlusion)?"""
    import attrs

    from v22sdk.engine.data import to_tensors
    from v22sdk.engine.explain import decode_answer, read_only, schema_attr_sets

    same = total = 0
    for case, (answer, _) in zip(cases, trained):
        cls = type(case.plugin)
        if case.kind != "image" or not attrs.has(cls) or "grid" not in attrs.fields_dict(cls):
            continue
        batch = attrs.evolve(case.plugin, grid=4).tokenize(case.sample)
        tokens, mask = to_tensors([batch], cfg.max_len)
        with read_only(model):
            got = decode_answer(model, tokens, mask, vocab, schema_attr_sets(case.schema)(tokens))
        same += got.text == answer.text
        total += 1
    return {"grid": 4, "inputs": total, "same_answer": same} if total else None


# -- summary ------------------------------------------------------------------------------------------------
def summarise(data: dict) -> tuple[dict, dict]:
    """(summary figures, tables) from the per-input results."""
    inputs = data["inputs"]
    summary: dict = {"deletion": {}, "sanity": {}, "completeness": {}, "cost": {}}
    del_rows = []
    for level in LEVELS:
        have = [r for r in inputs if level in r["curves"]]
        if not have:
            continue
        grid_mean = {}
        for name in have[0]["curves"][level]:
            curves = np.array([r["curves"][level][name] for r in have])
            grid_mean[name] = {
                "mean": curves.mean(0).tolist(),
                "lo": [bootstrap(curves[:, j])[1] for j in range(curves.shape[1])],
                "hi": [bootstrap(curves[:, j])[2] for j in range(curves.shape[1])],
            }
        methods = [m for m in METHODS if m in have[0]["curves"][level]]
        areas = {}
        for m in methods:
            for vs in ("random", "magnitude"):
                per = [area(r["curves"][level][vs], r["curves"][level][m]) for r in have]
                mean, lo, hi = bootstrap(per)
                areas[f"{m} vs {vs}"] = {"mean": mean, "lo": lo, "hi": hi, "n": len(per), "beats": lo > 0}
                by_mod = {}
                for mod in sorted({r.get("part", r["modality"]) for r in have}):
                    sub = [a for a, r in zip(per, have) if r.get("part", r["modality"]) == mod]
                    bm, bl, bh = bootstrap(sub)
                    by_mod[mod] = {"mean": bm, "lo": bl, "hi": bh, "n": len(sub)}
                areas[f"{m} vs {vs}"]["by_modality"] = by_mod
                del_rows.append(
                    [
                        level,
                        m,
                        vs,
                        str(len(per)),
                        fmt_ci(mean, lo, hi),
                        ("beats" if lo > 0 else "not shown") if len(per) >= 5 else "too few inputs",
                    ]
                )
        if level == "slots" and all(m in methods for m in METHODS):
            diff = [area(r["curves"]["slots"]["occlusion"], r["curves"]["slots"]["ig"]) for r in have]
            summary["deletion"]["occlusion_minus_ig_slots"] = dict(zip(("mean", "lo", "hi"), bootstrap(diff)))
        summary["deletion"][level] = {"n": len(have), "curves": grid_mean, "areas": areas, "k": [0, *data["ks"][level]]}
    # sanity
    san_rows = []
    for name, rows in data["sanity"].items():
        keys = sorted({k for r in rows for k in r})
        summary["sanity"][name] = {}
        for key in keys:
            vals = [r[key] for r in rows if r.get(key) is not None]
            mean, lo, hi = bootstrap(vals)
            summary["sanity"][name][key] = {
                "mean": mean,
                "lo": lo,
                "hi": hi,
                "n": len(vals),
                "differs": bool(vals) and hi < 0.5,
            }
            level, method = key.split("/")
            san_rows.append(
                [
                    name,
                    level,
                    method,
                    str(len(vals)),
                    fmt_ci(mean, lo, hi, 2),
                    ("differs" if hi < 0.5 else "not shown") if vals else "–",
                ]
            )
    follow_rows = []
    for m in METHODS:
        vals = [r[m] for r in data["follows_magnitude"] if r.get(m) is not None]
        mean, lo, hi = bootstrap(vals)
        summary["sanity"].setdefault("follows_magnitude", {})[m] = {"mean": mean, "lo": lo, "hi": hi, "n": len(vals)}
        follow_rows.append(
            ["trained engine vs plain magnitude", "slots", m, str(len(vals)), fmt_ci(mean, lo, hi, 2), ""]
        )
    # completeness of integrated gradients
    comp_rows = []
    for path in ("slots", "tokens"):
        infos = [r["completeness"].get(path) for r in inputs if r["completeness"].get(path)]
        if not infos:
            continue
        rel = [abs(i["gap"]) / max(abs(i["f_input"] - i["f_baseline"]), 1e-12) for i in infos]
        gaps = [abs(i["gap"]) for i in infos]
        within = sum(i["within_tolerance"] for i in infos)
        # reporting only: what is left of the gap once the jump on leaving the baseline (measured on the
        # incomplete paths, explain.JUST_OFF_BASELINE) is counted: the rest of the path's completeness
        rest = [
            abs(i["gap"] + i.get("jump_off_baseline", 0.0)) / max(abs(i["f_input"] - i["f_baseline"]), 1e-12)
            for i in infos
        ]
        summary["completeness"][path] = {
            "n": len(infos),
            "within": within,
            "median_rel": float(np.median(rel)),
            "max_rel": float(np.max(rel)),
            "max_abs": float(np.max(gaps)),
            "median_rel_after_jump": float(np.median(rest)),
            "max_rel_after_jump": float(np.max(rest)),
            "median_intervals": float(np.median([i["steps"] for i in infos])),
            "max_intervals": int(np.max([i["steps"] for i in infos])),
        }
        comp_rows.append(
            [
                path,
                str(len(infos)),
                f"{within}/{len(infos)}",
                f"{100 * np.median(rel):.2f} %",
                f"{100 * np.max(rel):.2f} %",
                f"{np.max(gaps):.3f}",
                f"{100 * np.median(rest):.2f} % / {100 * np.max(rest):.2f} %",
                f"{np.median([i['steps'] for i in infos]):.0f} / {np.max([i['steps'] for i in infos])}",
            ]
        )
    # cost and the pick
    cost_rows = []
    for key in (*METHODS, "regions"):
        vals = [r["cpu"][key] for r in inputs if key in r["cpu"]]
        if vals:
            summary["cost"][key] = {
                "median_ms": 1000 * float(np.median(vals)),
                "max_ms": 1000 * float(np.max(vals)),
                "n": len(vals),
            }
            label = "regions (occlusion through the tokenizer)" if key == "regions" else f"{key}: slots + tokens"
            cost_rows.append([label, str(len(vals)), f"{1000 * np.median(vals):.0f}", f"{1000 * np.max(vals):.0f}"])
    summary["pick"] = pick(summary)
    tables = {
        "deletion": {
            "columns": ["level", "method", "vs", "inputs", "area, mean [95 % CI]", "verdict"],
            "align": "lllrll",
            "rows": del_rows,
        },
        "sanity": {
            "columns": ["compared with", "level", "method", "inputs", "Spearman ρ, mean [95 % CI]", "verdict"],
            "align": "lllrll",
            "rows": san_rows + follow_rows,
        },
        "completeness": {
            "columns": [
                "path",
                "inputs",
                "within tolerance",
                "median |gap|/|Δf|",
                "max |gap|/|Δf|",
                "max |gap| (nats)",
                "without the jump off the baseline: median / max",
                "intervals median / max",
            ],
            "align": "lrrrrrrr",
            "rows": comp_rows,
        },
        "cost": {"columns": ["method", "inputs", "median CPU ms", "max CPU ms"], "align": "lrrr", "rows": cost_rows},
        "by_modality": by_modality_table(summary),
        "pick": pick_table(summary),
    }
    return summary, tables


def area(comparison, method) -> float:
    """Mean over the k grid (k ≥ 1: the curves' first point is the input itself) of comparison − method."""
    return float(np.mean(np.asarray(comparison[1:]) - np.asarray(method[1:])))


def pick(summary: dict) -> dict:
    d = summary["deletion"].get("occlusion_minus_ig_slots")
    cost = summary["cost"]
    if d is None:
        return {"method": "ig", "why": "no slot deletion measured"}
    if d["lo"] > 0:
        return {"method": "ig", "why": "larger slot area vs magnitude (paired interval above 0)"}
    if d["hi"] < 0:
        return {"method": "occlusion", "why": "larger slot area vs magnitude (paired interval below 0)"}
    cheaper = min(METHODS, key=lambda m: cost.get(m, {}).get("median_ms", float("inf")))
    return {"method": cheaper, "why": "slot areas not distinguishable; the cheaper one"}


def pick_table(summary: dict) -> dict:
    """The default method and the figures the rule read."""
    d = summary["deletion"].get("occlusion_minus_ig_slots")
    paired = fmt_ci(d["mean"], d["lo"], d["hi"]) if d else "–"
    cost = summary["cost"]
    ms = {m: f"{cost[m]['median_ms']:.0f}" if m in cost else "–" for m in METHODS}
    p = summary["pick"]
    return {
        "columns": [
            "slots: p left by occlusion − p left by ig, mean [95 % CI]",
            "median CPU ms ig / occlusion",
            "default",
            "why",
        ],
        "align": "lrll",
        "rows": [[paired, f"{ms['ig']} / {ms['occlusion']}", p["method"], p["why"]]],
    }


def by_modality_table(summary: dict) -> dict:
    rows = []
    for level, d in summary["deletion"].items():
        if level not in LEVELS:
            continue
        for key, area in d["areas"].items():
            for mod, a in area["by_modality"].items():
                rows.append([level, key, mod, str(a["n"]), fmt_ci(a["mean"], a["lo"], a["hi"])])
    return {"columns": ["level", "ranking", "part", "inputs", "area, mean [95 % CI]"], "align": "lllrl", "rows": rows}


# -- figure ----------------------------------------------------------------------------------------------------
STYLE = {
    "ig": ("integrated gradients", "C0", "-"),
    "occlusion": ("occlusion", "C2", "-"),
    "magnitude": ("plain magnitude", "C1", "--"),
    "random": ("random", "0.5", ":"),
}


def figure(result_path, out) -> Path:
    """The deletion curves of a result file (mean probability of the held answer, 95 % bands)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from v22sdk._io import atomic_output

    doc = json.loads(Path(result_path).read_text(encoding="utf-8"))
    deletion = doc["data"]["summary"]["deletion"]
    levels = [lv for lv in LEVELS if lv in deletion]
    fig, axes = plt.subplots(1, len(levels), figsize=(4.2 * len(levels), 3.6), squeeze=False)
    titles = {
        "slots": "named slots set to 0",
        "tokens": "tokens set to 0",
        "regions": "image cells / sound stretches removed",
    }
    for ax, level in zip(axes[0], levels):
        d = deletion[level]
        ks = d["k"]
        xs = range(len(ks))  # evenly spaced: the grid is roughly geometric
        for name, c in d["curves"].items():
            label, colour, ls = STYLE[name]
            ax.plot(xs, c["mean"], ls, color=colour, label=label, marker="o", ms=3)
            ax.fill_between(xs, c["lo"], c["hi"], color=colour, alpha=0.15, lw=0)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([str(k) for k in ks], fontsize=7)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("k (top-k deleted)")
        ax.set_title(f"{titles[level]} (n={d['n']})", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("probability of the held answer")
    axes[0][0].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    try:
        with atomic_output(out, "wb") as fh:
            fig.savefig(fh, dpi=110, format="png")
    finally:
        plt.close(fig)
    return Path(out)


def main(argv=None) -> int:
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT))
    ap.add_argument("--data", default=None, help="the checkpoint's data set (default: the one it records)")
    ap.add_argument("--split", default="test", choices=["val", "test"])
    ap.add_argument("--limit", type=int, default=None, help="a seeded sample of at most N held-out inputs per part")
    ap.add_argument("--shuffled-epochs", type=int, default=150, help="epochs of the shuffled-target engine")
    ap.add_argument(
        "--train-shuffled",
        metavar="PATH",
        default=None,
        help="only train the shuffled-target engine and save it to PATH (then run with --shuffled-model)",
    )
    ap.add_argument(
        "--shuffled-model",
        metavar="PATH",
        default=None,
        help="the shuffled-target engine saved by --train-shuffled (same checkpoint and data)",
    )
    ap.add_argument("--out", default=str(ROOT / "results" / "explain" / "faithfulness.json"))
    ap.add_argument("--figure", default=None, help="also draw the deletion curves (PNG) from the result file")
    ap.add_argument("--figure-only", metavar="RESULT", default=None, help="only draw --figure from RESULT")
    args = ap.parse_args(argv)
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    if args.figure_only:
        if not args.figure:
            ap.error("--figure-only needs --figure OUT.png")
        print(figure(args.figure_only, args.figure))
        return 0
    if args.train_shuffled:
        save_shuffled(args)
        return 0
    from v22sdk.evidence import write_result

    data = run(args)
    summary, tables = summarise(data)
    data["summary"] = summary
    write_result(args.out, data, tables=tables, criterion=CRITERION, name="explanation-faithfulness")
    for name, table in tables.items():
        print(f"\n{name}")
        for row in table["rows"]:
            print("  " + " | ".join(row))
    print(f"\npick: {summary['pick']}")
    print(f"wrote {args.out}")
    if args.figure:
        print(figure(args.out, args.figure))
    return 0


if __name__ == "__main__":
    sys.exit(main())
