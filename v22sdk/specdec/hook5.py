"""RFC hook 5: is additive, near-zero-gain, unit-normalised injection a cold-start-safe way to give a
trained draft a new feature source, and is the source then worth having?

Per corpus: the hook-1 target (same training, seed 0) is frozen. Per seed, a base draft (arm
``rmsnorm``) is trained reading only the target's feature blocks ``base_layers``; then it is given
the further block ``new_layers`` in each way of :mod:`.expansion` (RFC additive with gain 0.01 and
unit normalisation, additive with the ordinary init, additive zero-initialised, concatenation
into a widened input map), and each expanded draft, plus the unchanged base draft (the control),
is fine-tuned for the same ``budget`` steps on the same batches. Analytic tau on the held-out test
contexts (common random numbers across everything at a seed) is measured before the change, at
step 0 after it, along the way (T = 1) and after the budget, at both temperatures. A draft trained
from scratch with all blocks for the base steps plus the budget is a reference for "retraining
the pipeline". Results go to ``results.json`` (:func:`v22sdk.evidence.write_result`, written after
every corpus) and ``report.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

EXPERIMENT = "hook5"

SAFE_LOSS = 0.01
WORTH_GAIN = 0.01

#: Fixed before the full run, in its own commit (docs/findings-hook5-cold-start-expansion.md cites it).
CRITERION: dict | None = {
    "question": "RFC hook 5: is additive injection with near-zero gain (0.01) and unit normalisation a "
    "cold-start-safe way to give a trained draft a new feature source, and is the source, added "
    "that way, worth having after a fixed fine-tuning budget?",
    "source": "the target's top block (layer 3, new_layers (2,)) given to an rmsnorm draft trained on block 1 "
    "(base_layers (0,)) for 1000 steps",
    "cold_start_safe": {
        "measure": "analytic tau on test contexts right after the change (step 0) minus the same draft's tau "
        "before it, paired over seeds",
        "rule": "the lower end of the paired 95% t-interval is above -1% of the before mean",
        "max_loss": SAFE_LOSS,
    },
    "worth_adding": {
        "measure": "tau after the fine-tuning budget (300 steps, all draft parameters, lr 3e-3 cosine, the same "
        "batches for every arm) minus tau of the unchanged draft fine-tuned the same way (control)",
        "rule": "paired 95% t-interval above 0 and mean gain >= +1%",
        "min_gain": WORTH_GAIN,
    },
    "supported": "the RFC method (rfc-additive) is cold-start-safe and worth adding in every corpus x temperature cell",
    "reported_for_every_method": "rfc-additive, additive (ordinary init), zero-additive (zero init), concat "
    "(widened input map): safe / worth per cell; rfc-additive against each after "
    "the budget; a draft trained from scratch with all blocks as a reference",
    "seeds": 5,
    "corpora": ["pydoc-topics", "tang-song-poems"],
    "temperatures": [0.0, 1.0],
}


@dataclass(frozen=True)
class Hook5Config:
    """Every knob of a run (stored with the results)."""

    corpora: tuple[str, ...] = ("pydoc-topics", "tang-song-poems")
    target_steps: int = 800
    target_batch: int = 32
    target_lr: float = 2e-3
    n_distill_seq: int = 384
    prefix: int = 16
    ctx_new: int = 32
    n_test_ctx: int = 256
    draft_arm: str = "rmsnorm"
    base_layers: tuple[int, ...] = (0,)
    new_layers: tuple[int, ...] = (2,)
    base_steps: int = 1000
    base_lr: float = 1e-2
    draft_batch: int = 64
    budget: int = 300
    finetune_lr: float = 3e-3
    curve: tuple[int, ...] = (30, 100)
    scratch_reference: bool = True
    seeds: int = 5
    gamma: int = 7
    temperatures: tuple[float, ...] = (0.0, 1.0)
    threads: int = 1


FULL = Hook5Config()
QUICK = Hook5Config(
    corpora=("pydoc-topics", "stdlib-source"),
    target_steps=20,
    target_batch=16,
    n_distill_seq=12,
    ctx_new=8,
    n_test_ctx=16,
    base_steps=10,
    draft_batch=16,
    budget=6,
    curve=(2,),
    seeds=2,
    gamma=3,
)


def _tkey(t: float) -> str:
    return f"T={t:g}"


def arms(cfg: Hook5Config) -> tuple[str, ...]:
    from v22sdk.specdec.expansion import METHODS

    return ("control",) + METHODS


def total_ticks(cfg: Hook5Config) -> int:
    """Progress units: optimisation steps."""
    per_seed = cfg.base_steps + len(arms(cfg)) * cfg.budget
    if cfg.scratch_reference:
        per_seed += cfg.base_steps + cfg.budget
    return (cfg.target_steps + cfg.seeds * per_seed) * len(cfg.corpora)


def run_experiment(
    cfg: Hook5Config, out_dir: Path, tick: Callable[[int], None] | None = None, say: Callable[[str], None] | None = None
) -> dict:
    """Run everything in ``cfg``; write ``results.json`` and ``report.md`` to ``out_dir``."""
    import torch  # noqa: F401  (loaded before the limit below, which covers loaded libraries only)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(cfg.threads):
        return _run(cfg, out_dir, tick or (lambda n: None), say or (lambda s: None))


def _run(cfg: Hook5Config, out_dir: Path, tick, say) -> dict:
    from copy import deepcopy

    import torch

    from v22sdk.specdec.corpus import CORPORA, load_corpus
    from v22sdk.specdec.expansion import METHODS, AdditiveExpansion, expand
    from v22sdk.specdec.metrics import analytic_tau
    from v22sdk.specdec.models import EagleDraftRunner, TargetConfig, TransformerTarget
    from v22sdk.specdec.train import (
        bits_per_char,
        build_distill_data,
        contexts_from,
        fit_draft,
        seed_everything,
        train_draft,
        train_target,
    )

    torch.set_num_threads(cfg.threads)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_start, c_start = time.time(), time.process_time()
    data: dict = {"experiment": EXPERIMENT, "config": asdict(cfg), "corpora": {}}

    for name in cfg.corpora:
        ci = CORPORA.index(name)
        corpus = load_corpus(name)
        tcfg = TargetConfig(vocab=corpus.vocab.size)
        say(f"[{name}] training target (vocab {tcfg.vocab})")
        model = train_target(
            corpus.train, tcfg, cfg.target_steps, cfg.target_batch, cfg.target_lr, seed=0, tick=lambda: tick(1)
        )
        target = TransformerTarget(model)
        res: dict = {
            "info": corpus.info(),
            "target": {
                "params": sum(p.numel() for p in model.parameters()),
                "test_bits_per_char": bits_per_char(model, corpus.test, 64, seed=2),
            },
        }
        say(f"[{name}] target test bits/char {res['target']['test_bits_per_char']:.3f}; building data")
        dd = build_distill_data(model, corpus.train, cfg.n_distill_seq, cfg.prefix, seed=10 + ci)
        test_ctx = contexts_from(model, corpus.test, cfg.n_test_ctx, cfg.prefix, cfg.ctx_new, seed=30 + ci)

        def tau(draft, seed: int) -> dict:
            runner = EagleDraftRunner(draft)
            return {
                _tkey(t): float(analytic_tau(target, runner, test_ctx, cfg.gamma, t, seed=2000 + 10 * seed)[0].mean())
                for t in cfg.temperatures
            }

        def tau_t1(draft, seed: int) -> float:
            return float(
                analytic_tau(target, EagleDraftRunner(draft), test_ctx, cfg.gamma, 1.0, seed=2000 + 10 * seed)[0].mean()
            )

        seeds = []
        for seed in range(cfg.seeds):
            say(f"[{name}] seed {seed}: base draft on blocks {cfg.base_layers}")
            base = train_draft(
                model,
                cfg.draft_arm,
                dd,
                gamma=cfg.gamma,
                steps=cfg.base_steps,
                batch=cfg.draft_batch,
                lr=cfg.base_lr,
                seed=seed,
                warmup=cfg.prefix,
                layers=cfg.base_layers,
                tick=lambda: tick(1),
            )
            row: dict = {"seed": seed, "before": tau(base, seed), "params": {"base": base.n_params()}, "arms": {}}
            for arm in ("control",) + METHODS:
                seed_everything(100 + seed)  # the same fresh parameters for every method at this seed
                draft = deepcopy(base) if arm == "control" else expand(base, arm, cfg.new_layers)
                rec: dict = {"params": draft.n_params(), "step0": tau(draft, seed), "curve_T1": {}}
                checkpoints = set(cfg.curve)

                def on_step(step, d, rec=rec, checkpoints=checkpoints):
                    if step in checkpoints:
                        rec["curve_T1"][str(step)] = tau_t1(d, seed)

                fit_draft(
                    draft,
                    dd,
                    gamma=cfg.gamma,
                    steps=cfg.budget,
                    batch=cfg.draft_batch,
                    lr=cfg.finetune_lr,
                    seed=1000 + seed,
                    tick=lambda: tick(1),
                    on_step=on_step,
                )
                rec["after"] = tau(draft, seed)
                if arm == "rfc-additive" and isinstance(draft, AdditiveExpansion):
                    rec["gain_after"] = float(draft.new_gain.detach())
                row["arms"][arm] = rec
                say(
                    f"[{name}] seed {seed} {arm}: tau T=1 before {row['before']['T=1']:.3f}, "
                    f"step 0 {rec['step0']['T=1']:.3f}, after {rec['after']['T=1']:.3f}"
                )
            if cfg.scratch_reference:
                scratch = train_draft(
                    model,
                    cfg.draft_arm,
                    dd,
                    gamma=cfg.gamma,
                    steps=cfg.base_steps + cfg.budget,
                    batch=cfg.draft_batch,
                    lr=cfg.base_lr,
                    seed=seed,
                    warmup=cfg.prefix,
                    layers=cfg.base_layers + cfg.new_layers,
                    tick=lambda: tick(1),
                )
                row["scratch"] = tau(scratch, seed)
            seeds.append(row)
            if len(seeds) >= min(2, cfg.seeds):
                # written after every seed from the second on (paired intervals need two), so a run
                # stopped part-way leaves its finished seeds; the verdict says "partial" until all are in
                res["seeds"] = seeds
                res["comparisons"] = _comparisons(seeds, cfg)
                data["corpora"][name] = res
                data["runtime_s"] = time.time() - t_start
                data["cpu_s"] = time.process_time() - c_start  # load-independent
                data["verdict"] = verdict(data)
                _write(data, out_dir)
    return data


def _comparisons(seeds: list[dict], cfg: Hook5Config) -> dict:
    """Paired differences over seeds, per temperature."""
    from v22sdk.specdec.expansion import METHODS
    from v22sdk.specdec.stats import paired_diff

    out: dict = {}
    for t in cfg.temperatures:
        k = _tkey(t)
        before = [s["before"][k] for s in seeds]
        after = {a: [s["arms"][a]["after"][k] for s in seeds] for a in ("control",) + METHODS}
        comp: dict = {}
        for m in METHODS:
            comp[f"step0 {m}-before"] = paired_diff([s["arms"][m]["step0"][k] for s in seeds], before).as_dict()
            comp[f"after {m}-control"] = paired_diff(after[m], after["control"]).as_dict()
        for m in METHODS[1:]:
            comp[f"after rfc-additive-{m}"] = paired_diff(after["rfc-additive"], after[m]).as_dict()
        comp["after control-before"] = paired_diff(after["control"], before).as_dict()
        if cfg.scratch_reference:
            scratch = [s["scratch"][k] for s in seeds]
            comp["scratch-control"] = paired_diff(scratch, after["control"]).as_dict()
            comp["scratch-rfc-additive"] = paired_diff(scratch, after["rfc-additive"]).as_dict()
        out[k] = comp
    return out


def cell_status(comp: dict, method: str) -> dict:
    """Whether ``method`` is cold-start-safe and worth adding in one cell's comparisons."""
    s0, af = comp[f"step0 {method}-before"], comp[f"after {method}-control"]
    return {
        "safe": s0["lo"] > -SAFE_LOSS * s0["mean_b"],
        "worth": af["lo"] > 0 and af["rel_gain"] >= WORTH_GAIN,
        "step0_rel": s0["rel_gain"],
        "step0_lo_rel": s0["lo"] / s0["mean_b"],
        "after_rel": af["rel_gain"],
        "after_lo_rel": af["lo"] / af["mean_b"],
        "after_hi_rel": af["hi"] / af["mean_b"],
    }


def verdict(data: dict) -> dict:
    """Apply :data:`CRITERION` to whatever corpora and temperatures ``data`` holds."""
    from v22sdk.specdec.expansion import METHODS

    status = {
        m: {
            f"{c}/{k}": cell_status(comp, m) for c, r in data["corpora"].items() for k, comp in r["comparisons"].items()
        }
        for m in METHODS
    }
    rfc = status["rfc-additive"]
    if not rfc:
        return {"text": "no results"}
    complete = (
        len(data["corpora"]) >= 2
        and all(len(r["comparisons"]) >= 2 for r in data["corpora"].values())
        and all(len(r["seeds"]) >= 5 for r in data["corpora"].values())
    )
    n = len(rfc)
    safe = sum(c["safe"] for c in rfc.values())
    worth = sum(c["worth"] for c in rfc.values())
    top = max(c["after_hi_rel"] for c in rfc.values())
    if safe == n and worth == n:
        text = (
            f"hook (5) {'SUPPORTED' if complete else 'PASSING SO FAR'}: the RFC's additive 0.01-gain, unit-normalised "
            f"injection is cold-start-safe (step-0 tau within {100 * SAFE_LOSS:.0f}%) and the new source beats "
            f"continued training by >= {100 * WORTH_GAIN:.0f}% after the budget, in all {n} cells"
        )
    elif safe == n and worth == 0:
        text = (
            f"NOT SUPPORTED: the RFC injection is cold-start-safe in all {n} cells, but the source added that way "
            f"does not beat continued training by >= {100 * WORTH_GAIN:.0f}% with an interval above 0 in any cell "
            f"(gains up to {100 * top:+.2f}% not excluded)"
        )
    elif safe < n:
        text = (
            f"NOT SUPPORTED: the RFC injection is not cold-start-safe in {n - safe} of {n} cells "
            f"(worth adding in {worth} of {n})"
        )
    else:
        text = (
            f"INCONSISTENT: the RFC injection is cold-start-safe in all {n} cells but worth adding in {worth} of "
            f"{n} only, so the pre-registered criterion fails"
        )
    others = "; ".join(
        f"{m}: safe {sum(c['safe'] for c in status[m].values())}/{n}, worth "
        f"{sum(c['worth'] for c in status[m].values())}/{n}"
        for m in METHODS
    )
    text += f". All methods (cells safe / worth adding): {others}"
    if not complete:
        text += " [partial run: fewer corpora, temperatures or seeds than pre-registered]"
    return {"text": text, "cells": status}


def _pct(d: dict) -> str:
    return f"{100 * d['rel_gain']:+.2f}% [{100 * d['lo'] / d['mean_b']:+.2f}, {100 * d['hi'] / d['mean_b']:+.2f}]"


def _mean_sd(vals: list[float], digits: int = 3) -> str:
    a = np.asarray(vals, dtype=float)
    sd = a.std(ddof=1) if len(a) > 1 else 0.0
    return f"{a.mean():.{digits}f} ± {sd:.{digits}f}"


def tables(data: dict) -> dict:
    """The result tables (string cells) that the docs embed and the report prints."""
    from v22sdk.specdec.expansion import METHODS

    tau_rows, diff_rows, curve_rows, ref_rows = [], [], [], []
    for name, r in data["corpora"].items():
        seeds = r["seeds"]
        for k, comp in r["comparisons"].items():
            tau_rows.append([name, k, "base (before the change)", "–", _mean_sd([s["before"][k] for s in seeds])])
            for a in ("control",) + METHODS:
                step0 = "= before" if a == "control" else _mean_sd([s["arms"][a]["step0"][k] for s in seeds])
                tau_rows.append([name, k, a, step0, _mean_sd([s["arms"][a]["after"][k] for s in seeds])])
            if "scratch" in seeds[0]:
                tau_rows.append(
                    [
                        name,
                        k,
                        "scratch (all blocks, base + budget steps)",
                        "–",
                        _mean_sd([s["scratch"][k] for s in seeds]),
                    ]
                )
            for m in METHODS:
                diff_rows.append([name, k, m, _pct(comp[f"step0 {m}-before"]), _pct(comp[f"after {m}-control"])])
            ref_rows.append(
                [
                    name,
                    k,
                    _pct(comp["after control-before"]),
                    *[_pct(comp[f"after rfc-additive-{m}"]) for m in METHODS[1:]],
                    _pct(comp["scratch-control"]) if "scratch-control" in comp else "–",
                ]
            )
        for a in ("control",) + METHODS:
            steps = sorted({int(x) for s in seeds for x in s["arms"][a]["curve_T1"]})
            pts = [_mean_sd([s["arms"][a]["step0"]["T=1"] if a != "control" else s["before"]["T=1"] for s in seeds])]
            pts += [_mean_sd([s["arms"][a]["curve_T1"][str(x)] for s in seeds]) for x in steps]
            pts.append(_mean_sd([s["arms"][a]["after"]["T=1"] for s in seeds]))
            curve_rows.append([name, a, " → ".join(pts)])
    cfg = data["config"]
    steps_txt = " → ".join(["0", *[str(c) for c in cfg["curve"]], str(cfg["budget"])])
    return {
        "tau": {
            "columns": ["corpus", "T", "draft", "τ at step 0 (mean ± sd)", f"τ after {cfg['budget']} steps"],
            "align": "lllrr",
            "rows": tau_rows,
        },
        "criterion_cells": {
            "columns": [
                "corpus",
                "T",
                "method",
                "step 0 vs before, paired 95% CI",
                "after budget vs control, paired 95% CI",
            ],
            "align": "lllrr",
            "rows": diff_rows,
        },
        "references": {
            "columns": [
                "corpus",
                "T",
                "control vs before",
                *[f"rfc-additive vs {m}" for m in METHODS[1:]],
                "scratch vs control",
            ],
            "align": "ll" + "r" * (len(METHODS) + 1),
            "rows": ref_rows,
        },
        "curve": {
            "columns": ["corpus", "draft", f"τ at T = 1 after steps {steps_txt}"],
            "align": "lll",
            "rows": curve_rows,
        },
    }


def render_report(doc: dict) -> str:
    """Markdown tables of a hook-5 results file (what ``v22sdk specdec report`` prints)."""
    from v22sdk.evidence import markdown_table

    data = doc.get("data", doc)
    cfg = data["config"]
    lines = [
        f"# Speculative-decoding hook-(5) experiment: {len(data['corpora'])} corpus/corpora, gamma={cfg['gamma']}, "
        f"seeds={cfg['seeds']}, base blocks {cfg['base_layers']} + new {cfg['new_layers']}, "
        f"budget {cfg['budget']} steps, runtime {data.get('runtime_s', 0):.0f} s"
        + (f" (CPU {data['cpu_s']:.0f} s)" if "cpu_s" in data else ""),
        "",
    ]
    for tname, table in tables(data).items():
        lines += [f"## {tname}", "", markdown_table(table)]
    lines += ["## Verdict (pre-registered criterion)", "", data["verdict"]["text"], ""]
    return "\n".join(lines)


def _write(data: dict, out_dir: Path) -> None:
    from v22sdk.evidence import read_result, write_result

    path = write_result(
        out_dir / "results.json", data, tables=tables(data), name=f"specdec-{EXPERIMENT}", criterion=CRITERION
    )
    (out_dir / "report.md").write_text(render_report(read_result(path)))
