#!/usr/bin/env python
"""What do the engine's stages contribute to the shipped checkpoint's answers? Inference-time knock-outs.

    python scripts/measure_knockouts.py --suite SUITE --out results/engine/knockouts.json
    python scripts/measure_knockouts.py --suite SUITE --experiment e-offset --out results/engine/knockouts-e-offset.json

``SUITE`` is the data suite the bundled checkpoint was trained on
(``v22sdk data build-suite SUITE --size full --seed 0``). Measured on its *test* split, which the
checkpoint never trained on and no choice was made on (the criterion, fixed before the run, is
``CRITERION``):

* **knock-outs**: the shipped weights unchanged, one part of the graph silenced at inference at a
  time (a forward hook replaces the module's output): stage E's output (``me`` and its recall
  score), ABC' (its output and its path into the sentence vector), P3-L's attribute links, the
  outputs of stages A and C, the gate (fixed to its mean over the validation split), all of these
  at once; and the memory filled with the training split's turns (as a user who ran every
  training input through ``v22sdk run``) instead of none. Per variant: exact match, how many
  answers changed, and the paired difference to the intact checkpoint;
* **nearest neighbour on raw tokens**: no training at all — each test input gets the target of
  the training-split input of its modality whose mean token (the tokenizers' own 640-D output,
  averaged over the input's tokens) is nearest by cosine. Beside it, the same with the 256-D
  embedding or the 384 attributes alone.

``--experiment e-offset`` is the follow-up the first run raised (criterion ``CRITERION_E_OFFSET``,
committed before its run): zeroing E's output changed many answers while zeroing A and C, which
changes E's input, changed none. Does E pass on something about the input, or a learned offset?
E's output is replaced by its mean over the validation split, the same vector for every input.

Tokens are cached in a temporary folder, never in the user's token cache.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: the knock-outs, in table order: name -> (module path, how its output is replaced) pairs
KNOCKOUTS = {
    "E output zeroed": [("stage_e", "zero")],
    "ABC' zeroed": [("abc_prime", "zero"), ("abc_prime.to_sent", "zero")],
    "P3-L zeroed": [("p3l", "zero_first")],
    "A and C outputs zeroed": [("stage_a", "zero"), ("stage_c", "zero")],
    "gate fixed (val mean)": [("gate", "val_mean")],
    "all of the above": [
        ("stage_e", "zero"),
        ("abc_prime", "zero"),
        ("abc_prime.to_sent", "zero"),
        ("p3l", "zero_first"),
        ("stage_a", "zero"),
        ("stage_c", "zero"),
        ("gate", "val_mean"),
    ],
}
MEMORY = "memory: the training split's turns"
NN_PRIMARY = "nearest neighbour, mean token (640-D)"
NN_SECONDARY = {
    "nearest neighbour, embedding only (256-D)": slice(0, 256),
    "nearest neighbour, attributes only (384)": slice(256, 640),
}

CRITERION = {
    "checkpoint": "the bundled v22sdk/engine/data/default.pt as shipped (its SHA-256 is recorded); weights unchanged",
    "data": "the data suite (--size full --seed 0) test split, every modality; the validation split only to fix "
    "the gate's constant; the training split only as the memory's turns and the nearest neighbour's bank",
    "measure": "exact match of the decoded answer with the target; answers changed against the intact checkpoint",
    "knockouts": "each alone, at inference, by replacing a module's output: "
    + "; ".join(f"{k}: {', '.join(f'{m} -> {how}' for m, how in v)}" for k, v in KNOCKOUTS.items())
    + f"; {MEMORY}: a TieredMemory in a temporary folder, every training-split input written as a turn "
    "(batches of 64, in manifest order) before the test split is read (no writes then). The intact "
    "checkpoint runs without memory, as 'v22sdk run --no-memory'",
    "nearest_neighbour": "primary: 1-NN by cosine on the mean 640-D token, within the input's modality, bank = the "
    "suite's training split (without the storage copies the checkpoint also trained on); "
    "secondary (not tested): the 256-D embedding and the 384 attributes alone",
    "test": "paired, per example: exact McNemar test (two-sided binomial on the discordant pairs) against the "
    "intact checkpoint; Holm-Bonferroni over the 7 knock-outs (all modalities together), and separately "
    "over the 3 modalities for the primary nearest neighbour against the checkpoint",
    "detected": "a difference is called detected only when its Holm-adjusted p < 0.05; otherwise 'not detected', "
    "with the 95 % interval of the accuracy difference saying how large a difference is not excluded",
    "intervals": "Wilson 95 % for proportions; percentile bootstrap over examples (2,000 resamples, seed 0) for "
    "paired accuracy differences",
}

CRITERION_E_OFFSET = {
    "question": "is stage E's contribution to the shipped checkpoint's answers an input-independent offset?",
    "checkpoint": CRITERION["checkpoint"],
    "data": "the data suite (--size full --seed 0): the validation split fixes the constant, the test split measures",
    "variant": "E's output me replaced by its mean over the validation split (one 256-D vector for every input), "
    "its recall score zeroed (it is zero without memory anyway); no memory, as the intact run",
    "measure": "exact match on the test split per modality and over all; answers changed against the intact "
    "checkpoint; cosine of each test input's me to the constant (how constant E's output is)",
    "test": "one comparison: exact McNemar test against the intact checkpoint, all modalities together",
    "verdict": "'an offset, for these answers' when the McNemar p >= 0.05 (no detectable difference; the 95 % "
    "interval of the accuracy difference says what is not excluded); 'input-dependent' when p < 0.05",
    "intervals": CRITERION["intervals"],
}


# -- statistics (pure; tested in tests/engine/test_knockouts.py) -----------------------------------------
def mcnemar_exact(a_right: np.ndarray, b_right: np.ndarray) -> float:
    """Two-sided exact McNemar p-value of paired right/wrong outcomes (binomial on the discordant pairs)."""
    from scipy.stats import binomtest

    a_right, b_right = np.asarray(a_right, bool), np.asarray(b_right, bool)
    b = int((a_right & ~b_right).sum())
    c = int((~a_right & b_right).sum())
    return 1.0 if b + c == 0 else float(binomtest(b, b + c, 0.5).pvalue)


def holm(pvalues: dict[str, float]) -> dict[str, float]:
    """Holm-Bonferroni adjusted p-values (monotone, capped at 1)."""
    order = sorted(pvalues, key=lambda k: pvalues[k])
    m, running, out = len(order), 0.0, {}
    for i, k in enumerate(order):
        running = max(running, min(1.0, (m - i) * pvalues[k]))
        out[k] = running
    return out


def paired_difference_interval(a_right, b_right, *, resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap 95 % interval of mean(b_right) - mean(a_right), resampling examples."""
    d = np.asarray(b_right, float) - np.asarray(a_right, float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(d), size=(resamples, len(d)))
    means = d[idx].mean(1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def nearest_neighbour(bank: np.ndarray, bank_labels, bank_mods, query: np.ndarray, query_mods) -> list[str]:
    """The label of each query's nearest bank row by cosine, within its modality."""

    def unit(x):
        x = np.asarray(x, np.float64)
        return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

    bank, query = unit(bank), unit(query)
    bank_labels, bank_mods = np.asarray(bank_labels, object), np.asarray(bank_mods, object)
    out: list[str] = [""] * len(query)
    for mod in sorted(set(query_mods)):
        qi = [i for i, m in enumerate(query_mods) if m == mod]
        bi = np.flatnonzero(bank_mods == mod)
        best = (query[qi] @ bank[bi].T).argmax(1)
        for i, j in zip(qi, best):
            out[i] = str(bank_labels[bi[j]])
    return out


# -- the knock-outs --------------------------------------------------------------------------------------
def _replace(how: str, constant=None):
    import torch

    def zero(out):
        if isinstance(out, tuple):
            return tuple(torch.zeros_like(o) for o in out)
        return torch.zeros_like(out)

    def hook(module, inputs, out):
        if how == "zero":
            return zero(out)
        if how == "zero_first":  # P3-L: (p3lf, ids, id_mask) -> the links zeroed, the ids kept
            return (torch.zeros_like(out[0]),) + tuple(out[1:])
        if how == "val_mean":
            return constant.to(out).expand_as(out).clone()
        raise ValueError(how)

    return hook


class knocked_out:
    """Context manager: the model with the named modules' outputs replaced (hooks removed on exit)."""

    def __init__(self, model, spec, gate_mean=None):
        self.model, self.spec, self.gate_mean, self.handles = model, spec, gate_mean, []

    def __enter__(self):
        for path, how in self.spec:
            module = self.model.get_submodule(path)
            self.handles.append(module.register_forward_hook(_replace(how, self.gate_mean)))
        return self.model

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()


def run_split(runner, batches, *, write_memory=False):
    """Decoded answers and gates of token batches (64 at a time)."""
    import torch

    from v22sdk.engine.canonical import engine_attr_set
    from v22sdk.engine.data import to_tensors
    from v22sdk.engine.train import decode, forward_eval

    decoded, gates = [], []
    with torch.no_grad():
        for start in range(0, len(batches), 64):
            chunk = batches[start : start + 64]
            tokens, mask = to_tensors(chunk, runner.cfg.max_len, runner.registry)
            sets = [engine_attr_set(b, runner.registry) for b in chunk]
            out = forward_eval(runner.model, tokens, mask, sets, write_memory=write_memory)
            decoded += decode(out["logits"], runner.vocab)[0]
            gates.append(out["gates"])
    return decoded, torch.cat(gates)


def mean_tokens(batches) -> np.ndarray:
    return np.stack([np.concatenate([b.emb, b.attr], 1).mean(0) for b in batches]).astype(np.float64)


def measure(args) -> None:
    import hashlib

    import torch

    from v22sdk.engine.calibration import wilson_interval
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT
    from v22sdk.engine.runner import Runner
    from v22sdk.evidence import write_result
    from v22sdk.memory import TieredMemory

    torch.set_num_threads(1)
    start = time.perf_counter()
    checkpoint = args.checkpoint or DEFAULT_CHECKPOINT
    runner = Runner(checkpoint)
    rows = [json.loads(x) for x in (args.suite / "suite.jsonl").read_text(encoding="utf-8").splitlines()]

    def tokenize(split):
        sel = [r for r in rows if r["split"] == split]
        return sel, [
            runner.tokenize(str(args.suite / r["input"]) if r["modality"] != "text" else r["input"], r["modality"])
            for r in sel
        ]

    test_rows, test = tokenize("test")
    val_rows, val = tokenize("val")
    train_rows, train = tokenize("train")
    print(
        f"tokenized {len(train)} train, {len(val)} val, {len(test)} test ({time.perf_counter() - start:.0f} s)",
        flush=True,
    )
    targets = [r["target"] for r in test_rows]
    mods = [r["modality"] for r in test_rows]
    groups = sorted(set(mods)) + ["all"]

    answers: dict[str, list[str]] = {}
    answers["intact"], _ = run_split(runner, test)
    _, val_gates = run_split(runner, val)
    gate_mean = val_gates.mean(0, keepdim=True)
    for name, spec in KNOCKOUTS.items():
        with knocked_out(runner.model, spec, gate_mean):
            answers[name], _ = run_split(runner, test)
        print(f"{name}: {sum(a == t for a, t in zip(answers[name], targets))}/{len(targets)} right", flush=True)
    with tempfile.TemporaryDirectory(prefix="knockout-memory-") as tmp:
        memory = TieredMemory(Path(tmp) / "memory.db")
        runner.model.stage_e.memory = memory
        try:
            run_split(runner, train, write_memory=True)
            answers[MEMORY], _ = run_split(runner, test)
            stored = len(memory)
        finally:
            runner.model.stage_e.memory = None
            memory.close()
    print(f"{MEMORY} ({stored} turns): {sum(a == t for a, t in zip(answers[MEMORY], targets))} right", flush=True)

    bank = mean_tokens(train)
    query = mean_tokens(test)
    bank_labels = [r["target"] for r in train_rows]
    bank_mods = [r["modality"] for r in train_rows]
    answers[NN_PRIMARY] = nearest_neighbour(bank, bank_labels, bank_mods, query, mods)
    for name, part in NN_SECONDARY.items():
        answers[name] = nearest_neighbour(bank[:, part], bank_labels, bank_mods, query[:, part], mods)

    right = {k: np.array([a == t for a, t in zip(v, targets)]) for k, v in answers.items()}
    sel = {g: np.array([g in ("all", m) for m in mods]) for g in groups}
    intact = right["intact"]
    p_knock = {k: mcnemar_exact(intact, right[k]) for k in list(KNOCKOUTS) + [MEMORY]}
    p_knock_holm = holm(p_knock)
    p_nn = {g: mcnemar_exact(intact[sel[g]], right[NN_PRIMARY][sel[g]]) for g in groups if g != "all"}
    p_nn_holm = holm(p_nn)

    variants = {}
    for k in answers:
        entry = {"accuracy": {}, "changed": {}}
        for g in groups:
            n, c = int(sel[g].sum()), int(right[k][sel[g]].sum())
            changed = int(sum(answers[k][i] != answers["intact"][i] for i in np.flatnonzero(sel[g])))
            entry["accuracy"][g] = {"n": n, "correct": c, "exact": c / n, "ci95": list(wilson_interval(c, n))}
            entry["changed"][g] = {
                "n": n,
                "changed": changed,
                "rate": changed / n,
                "ci95": list(wilson_interval(changed, n)),
            }
        if k != "intact":
            entry["delta_all"] = float(right[k].mean() - intact.mean())
            entry["delta_all_ci95"] = list(paired_difference_interval(intact, right[k]))
        if k in p_knock:
            entry["p"], entry["p_holm"] = p_knock[k], p_knock_holm[k]
            entry["detected"] = p_knock_holm[k] < 0.05
        if k == NN_PRIMARY:
            entry["by_modality"] = {
                g: {
                    "delta": float(right[k][sel[g]].mean() - intact[sel[g]].mean()),
                    "delta_ci95": list(paired_difference_interval(intact[sel[g]], right[k][sel[g]])),
                    "p": p_nn[g],
                    "p_holm": p_nn_holm[g],
                    "detected": p_nn_holm[g] < 0.05,
                }
                for g in groups
                if g != "all"
            }
        variants[k] = entry

    def acc(k, g):
        a = variants[k]["accuracy"][g]
        return f"{a['exact']:.3f}"

    knock_rows = []
    for k in ["intact"] + list(KNOCKOUTS) + [MEMORY]:
        v = variants[k]
        ch = v["changed"]["all"]
        knock_rows.append(
            [k]
            + [acc(k, g) for g in groups]
            + (
                ["—", "—", "—", "—"]
                if k == "intact"
                else [
                    f"{ch['changed']} ({ch['rate']:.1%})",
                    f"{v['delta_all']:+.3f}",
                    f"[{v['delta_all_ci95'][0]:+.3f}, {v['delta_all_ci95'][1]:+.3f}]",
                    f"{v['p_holm']:.3f}",
                ]
            )
        )
    nn_rows = []
    for k in ["intact", NN_PRIMARY] + list(NN_SECONDARY):
        label = "the shipped checkpoint (trained)" if k == "intact" else k
        nn_rows.append(
            [label]
            + [
                f"{acc(k, g)} [{variants[k]['accuracy'][g]['ci95'][0]:.3f}, "
                f"{variants[k]['accuracy'][g]['ci95'][1]:.3f}]"
                for g in groups
            ]
        )
    nn_test_rows = [
        [
            g,
            f"{variants[NN_PRIMARY]['by_modality'][g]['delta']:+.3f}",
            "[{:+.3f}, {:+.3f}]".format(*variants[NN_PRIMARY]["by_modality"][g]["delta_ci95"]),
            f"{variants[NN_PRIMARY]['by_modality'][g]['p_holm']:.3g}",
        ]
        for g in groups
        if g != "all"
    ]
    detected = [k for k in list(KNOCKOUTS) + [MEMORY] if variants[k]["detected"]]
    most = max(list(KNOCKOUTS) + [MEMORY], key=lambda k: variants[k]["changed"]["all"]["changed"])
    values = {
        "n_test": str(len(test_rows)),
        "detected": ", ".join(detected) if detected else "none",
        "most_changed": f"{most}: {variants[most]['changed']['all']['changed']} of {len(test_rows)}",
        "memory_turns": str(stored),
        "sha256": hashlib.sha256(Path(checkpoint).read_bytes()).hexdigest()[:12],
    }
    for k in list(KNOCKOUTS) + [MEMORY]:
        key = k.split(" ")[0].lower().replace("'", "p").replace(":", "")
        values[f"{key}.changed"] = str(variants[k]["changed"]["all"]["changed"])
    for g in groups:
        values[f"intact.{g}"] = acc("intact", g)
        values[f"nn.{g}"] = acc(NN_PRIMARY, g)
    summary = {
        "checkpoint": str(checkpoint),
        "sha256": hashlib.sha256(Path(checkpoint).read_bytes()).hexdigest(),
        "suite": str(args.suite),
        "n": {"train": len(train), "val": len(val), "test": len(test)},
        "memory_turns": stored,
        "seconds": round(time.perf_counter() - start, 1),
    }
    result = {"summary": summary, "variants": variants, "answers": answers, "targets": targets, "modalities": mods}
    print(
        json.dumps(
            {k: (variants[k]["accuracy"]["all"]["exact"], variants[k]["changed"]["all"]["changed"]) for k in variants},
            ensure_ascii=False,
            indent=1,
        )
    )
    if args.out:
        write_result(
            args.out,
            result,
            criterion=CRITERION,
            values=values,
            tables={
                "knockouts": {
                    "columns": ["variant (shipped weights)"]
                    + [f"exact: {g}" for g in groups]
                    + ["answers changed", "Δ exact (all)", "95 % CI", "Holm-adjusted p"],
                    "align": "l" + "r" * (len(groups) + 4),
                    "rows": knock_rows,
                },
                "nearest_neighbour": {
                    "columns": ["answers from"] + [f"exact: {g} [95 % CI]" for g in groups],
                    "align": "l" + "r" * len(groups),
                    "rows": nn_rows,
                },
                "nearest_neighbour_test": {
                    "columns": ["modality", "Δ exact, NN − checkpoint", "95 % CI", "Holm-adjusted p"],
                    "align": "lrrr",
                    "rows": nn_test_rows,
                },
            },
        )
        print(f"result file: {args.out}")


def measure_e_offset(args) -> None:
    import hashlib

    import torch

    from v22sdk.engine.calibration import wilson_interval
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT
    from v22sdk.engine.runner import Runner
    from v22sdk.evidence import write_result

    torch.set_num_threads(1)
    start = time.perf_counter()
    checkpoint = args.checkpoint or DEFAULT_CHECKPOINT
    runner = Runner(checkpoint)
    rows = [json.loads(x) for x in (args.suite / "suite.jsonl").read_text(encoding="utf-8").splitlines()]

    def tokenize(split):
        sel = [r for r in rows if r["split"] == split]
        return sel, [
            runner.tokenize(str(args.suite / r["input"]) if r["modality"] != "text" else r["input"], r["modality"])
            for r in sel
        ]

    test_rows, test = tokenize("test")
    _, val = tokenize("val")
    print(f"tokenized {len(val)} val, {len(test)} test ({time.perf_counter() - start:.0f} s)", flush=True)
    targets = [r["target"] for r in test_rows]
    mods = [r["modality"] for r in test_rows]
    groups = sorted(set(mods)) + ["all"]

    captured = []
    handle = runner.model.stage_e.register_forward_hook(lambda m, i, out: captured.append(out[0].detach()))
    try:
        run_split(runner, val)
        val_me = torch.cat(captured)
        captured.clear()
        intact, _ = run_split(runner, test)
        test_me = torch.cat(captured)
    finally:
        handle.remove()
    constant = val_me.mean(0, keepdim=True)

    def fixed(module, inputs, out):
        return constant.to(out[0]).expand_as(out[0]).clone(), torch.zeros_like(out[1])

    handle = runner.model.stage_e.register_forward_hook(fixed)
    try:
        offset, _ = run_split(runner, test)
    finally:
        handle.remove()
    cos = torch.nn.functional.cosine_similarity(test_me, constant.expand_as(test_me), dim=-1).numpy()
    right = {
        "intact": np.array([a == t for a, t in zip(intact, targets)]),
        "offset": np.array([a == t for a, t in zip(offset, targets)]),
    }
    p = mcnemar_exact(right["intact"], right["offset"])
    lo, hi = paired_difference_interval(right["intact"], right["offset"])
    per = {}
    table = []
    for g in groups:
        sel = np.array([g in ("all", m) for m in mods])
        n = int(sel.sum())
        changed = int(sum(intact[i] != offset[i] for i in np.flatnonzero(sel)))
        entry = {
            "n": n,
            "changed": changed,
            "cos_to_constant": {"mean": float(cos[sel].mean()), "min": float(cos[sel].min())},
        }
        for k in right:
            c = int(right[k][sel].sum())
            entry[k] = {"correct": c, "exact": c / n, "ci95": list(wilson_interval(c, n))}
        per[g] = entry
        table.append(
            [
                g,
                str(n),
                f"{entry['intact']['exact']:.3f}",
                f"{entry['offset']['exact']:.3f}",
                f"{changed}",
                f"{entry['cos_to_constant']['mean']:.3f} (min {entry['cos_to_constant']['min']:.3f})",
            ]
        )
    verdict = "an offset, for these answers" if p >= 0.05 else "input-dependent"
    values = {
        "verdict": verdict,
        "p": f"{p:.3g}",
        "delta": f"{right['offset'].mean() - right['intact'].mean():+.3f} [{lo:+.3f}, {hi:+.3f}]",
        "changed": str(per["all"]["changed"]),
        "n_test": str(len(test_rows)),
        "cos_mean": f"{per['all']['cos_to_constant']['mean']:.3f}",
    }
    summary = {
        "checkpoint": str(checkpoint),
        "sha256": hashlib.sha256(Path(checkpoint).read_bytes()).hexdigest(),
        "suite": str(args.suite),
        "p": p,
        "delta_ci95": [lo, hi],
        "verdict": verdict,
        "seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps({"summary": summary, "per": per}, ensure_ascii=False, indent=1))
    if args.out:
        write_result(
            args.out,
            {
                "summary": summary,
                "per_modality": per,
                "answers": {"intact": intact, "offset": offset},
                "targets": targets,
                "modalities": mods,
            },
            criterion=CRITERION_E_OFFSET,
            values=values,
            tables={
                "e_offset": {
                    "columns": [
                        "test split",
                        "n",
                        "exact: intact",
                        "exact: E fixed to its val mean",
                        "answers changed",
                        "cos(me, constant): mean (min)",
                    ],
                    "align": "lrrrrr",
                    "rows": table,
                }
            },
        )
        print(f"result file: {args.out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", type=Path, required=True, help="the data suite folder (suite.jsonl)")
    ap.add_argument("--checkpoint", type=Path, default=None, help="default: the bundled checkpoint")
    ap.add_argument("--out", type=Path, default=None, help="result file (JSON, v22sdk.evidence)")
    ap.add_argument(
        "--experiment",
        choices=["knockouts", "e-offset"],
        default="knockouts",
        help="knockouts: every knock-out and the nearest neighbour; e-offset: the follow-up on E",
    )
    args = ap.parse_args()
    from v22sdk.evidence import begin

    begin()  # the result file names the commit this run starts at
    if not (args.suite / "suite.jsonl").is_file():
        ap.error(f"{args.suite}: no suite.jsonl (v22sdk data build-suite {args.suite} --size full --seed 0)")
    with tempfile.TemporaryDirectory(prefix="knockouts-") as tmp:
        os.environ["V22SDK_CACHE"] = str(Path(tmp) / "cache")  # never the user's token cache
        measure(args) if args.experiment == "knockouts" else measure_e_offset(args)


if __name__ == "__main__":
    main()
