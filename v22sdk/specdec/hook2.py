"""RFC hook 2 / question 2: does the attribute stack carry a verification signal beyond the draft's
own confidence, and does a scheduler that uses it emit more tokens per unit of cost?

Per corpus: the hook-1 target (same training, seed 0) is frozen; ``seeds`` drafts of the
DeepSpec status-quo arm (``rmsnorm``) are distilled at a fixed learning rate. Per seed and
temperature, one fixed-gamma round of the exact sampler runs on each held-out *validation* and
*test* context (same uniforms for everything compared at that seed). Every position the target
judged gives a row: rejected or not, the draft's signals (max q, entropy, top-2 margin of its
temperature-1 distribution) and the 384 attributes of the drafted character in its context (text
plugin). Logistic models on (a) the signals, (b) the attributes, (c) both are fitted on
validation rows and scored by AUROC (and calibration) on test rows.

Schedulers: fixed gamma, the best fixed length on validation, the confidence scheduler (max q
threshold), the cumulative logistic scheduler on the signals, and the same with attributes
(:mod:`.verification`). Thresholds are tuned on validation rounds (tokens per ms), then each
scheduler really runs on the test contexts with the test uniforms, and its tokens per measured
millisecond (target passes + draft steps; a second figure adds the plugin calls) are compared,
paired over seeds. Results go to ``results.json`` (:func:`v22sdk.evidence.write_result`, written
after every corpus) and ``report.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

EXPERIMENT = "hook2"
SCHEDULERS = ("fixed", "fixed-best", "confidence", "logistic-signals", "logistic-attributes")
MODELS = ("signals", "attributes", "both")
CUM_GRID = tuple(np.round(np.linspace(0.02, 0.98, 49), 2).tolist())
CONF_GRID = tuple(np.round(np.linspace(0.0, 0.95, 20), 2).tolist())

MIN_AUROC_GAIN = 0.02
MIN_SCHEDULER_GAIN = 0.02
SCHEDULER_BASELINES = ("fixed", "fixed-best", "confidence", "logistic-signals")

#: Fixed before the full run, in its own commit (docs/findings-hook2-verification-signal.md cites it).
CRITERION: dict | None = {
    "question": "RFC section 6 question 2 / hook 2: does the text plugin's attribute stack carry a signal "
    "about rejection beyond the draft's own confidence, and does a scheduler that uses it emit "
    "more tokens per unit of cost?",
    "primary": {
        "measure": "AUROC for rejection on held-out test positions of model (c) draft signals + 384 attributes "
        "minus model (a) draft signals alone (max q, entropy, top-2 margin of the draft's T=1 "
        "distribution); both L2 logistic models fitted on validation positions only",
        "min_gain": MIN_AUROC_GAIN,
        "interval": "paired 95% t-interval over the draft seeds; its lower end must be above 0",
        "cells": "every corpus x temperature (T = 0 and T = 1)",
        "supported": "min_gain and interval hold in every cell",
        "inconsistent": "they hold in some cells only",
        "not_detected": "they hold in no cell; the verdict quotes the largest gain the intervals leave open",
    },
    "scheduling": {
        "measure": "tokens emitted per ms of measured CPU cost (one target pass per round + draft steps), "
        "test rounds; thresholds and the best fixed length chosen on validation rounds",
        "compared": "logistic-attributes scheduler against each of " + ", ".join(SCHEDULER_BASELINES),
        "min_relative_gain": MIN_SCHEDULER_GAIN,
        "interval": "paired 95% t-interval over seeds; its lower end must be above 0",
        "cells": "every corpus x temperature, against every baseline",
        "also_reported": "the same with the text-plugin calls the attribute scheduler makes added to its cost",
    },
    "seeds": 5,
    "corpora": ["pydoc-topics", "tang-song-poems"],
    "splits": "targets and drafts trained on train splits; models and thresholds fitted on validation-split "
    "contexts; every reported figure on test-split contexts",
}


@dataclass(frozen=True)
class Hook2Config:
    """Every knob of a run (stored with the results)."""

    corpora: tuple[str, ...] = ("pydoc-topics", "tang-song-poems")
    target_steps: int = 800
    target_batch: int = 32
    target_lr: float = 2e-3
    n_distill_seq: int = 384
    prefix: int = 16
    ctx_new: int = 32
    draft_arm: str = "rmsnorm"
    draft_steps: int = 1000
    draft_batch: int = 64
    draft_lr: float = 1e-2
    seeds: int = 5
    gamma: int = 7
    temperatures: tuple[float, ...] = (0.0, 1.0)
    n_val_ctx: int = 1024
    n_test_ctx: int = 1024
    cost_reps: int = 200
    threads: int = 1


FULL = Hook2Config()
QUICK = Hook2Config(
    target_steps=40,
    target_batch=16,
    n_distill_seq=12,
    ctx_new=8,
    draft_steps=15,
    draft_batch=16,
    seeds=2,
    gamma=3,
    n_val_ctx=32,
    n_test_ctx=32,
    cost_reps=3,
)


def _tkey(t: float) -> str:
    return f"T={t:g}"


def total_ticks(cfg: Hook2Config) -> int:
    """Progress units: optimisation steps, plus one per context evaluated (val and test)."""
    per_corpus = (
        cfg.target_steps
        + cfg.seeds * cfg.draft_steps
        + cfg.seeds * len(cfg.temperatures) * (cfg.n_val_ctx + cfg.n_test_ctx)
    )
    return per_corpus * len(cfg.corpora)


def _position_attrs(attributes, contexts, rec, judged_mask) -> np.ndarray:
    """(B, G, 384) attributes of drafted token i in ``context + drafted[:i+1]``, for every position
    a scheduler may inspect (all but the last) or the target judged; zeros elsewhere."""
    from v22sdk.specdec.attributes import ATTR_DIM

    bsz, g = rec.drafted.shape
    need = judged_mask.copy()
    need[:, : g - 1] = True
    ctx = contexts.numpy()
    drafted = rec.drafted.numpy()
    where = np.argwhere(need)
    rows = [np.concatenate([ctx[b], drafted[b, : i + 1]]) for b, i in where]
    out = np.zeros((bsz, g, ATTR_DIM), dtype=np.float32)
    out[where[:, 0], where[:, 1]] = attributes.last(rows)
    return out


def _positions(rec, attrs) -> dict:
    from v22sdk.specdec.verification import judged

    mask, rejected = judged(rec)
    rows = np.nonzero(mask)[0]
    sig = rec.signals.numpy()
    return {
        "signals": sig[mask],
        "attributes": attrs[mask],
        "rejected": rejected[mask].astype(np.float64),
        "groups": rows,
    }


def _model_inputs(pos: dict, which: str) -> np.ndarray:
    if which == "signals":
        return pos["signals"]
    if which == "attributes":
        return pos["attributes"]
    return np.concatenate([pos["signals"], pos["attributes"]], axis=1)


def _tokens_per_ms(emitted, lengths, steps, costs, with_attrs: bool) -> float:
    lookups = np.maximum(np.asarray(steps) - 1, 0) if with_attrs else None
    return float(np.sum(emitted) / np.sum(costs.round_cost(lengths, steps, lookups)))


def _evaluate_seed(
    cfg, target, runner, attributes, costs, val_ctx, test_ctx, seed: int, t: float, tick: Callable[[int], None]
) -> dict:
    """Everything measured for one draft seed at one temperature."""
    import torch

    from v22sdk.specdec.errors import SpecDecError
    from v22sdk.specdec.sampler import ConfidenceRoundScheduler, scheduled_round_batch
    from v22sdk.specdec.verification import (
        SIGNAL_NAMES,
        AcceptanceScheduler,
        FixedLengthScheduler,
        auroc,
        cut_round,
        ece,
        fit_logistic,
        judged,
        past_features,
        stop_lengths_confidence,
        stop_lengths_cumulative,
    )

    gamma = cfg.gamma
    ti = cfg.temperatures.index(t)
    gen_seed = {"val": 7000 + 100 * seed + ti, "test": 8000 + 100 * seed + ti}
    recs, attrs, pos = {}, {}, {}
    for split, ctx in (("val", val_ctx), ("test", test_ctx)):
        recs[split] = scheduled_round_batch(
            target, runner, ctx, gamma, t, torch.Generator().manual_seed(gen_seed[split])
        )
        attrs[split] = _position_attrs(attributes, ctx, recs[split], judged(recs[split])[0])
        pos[split] = _positions(recs[split], attrs[split])
        tick(ctx.shape[0])

    out: dict = {
        "n_positions": {s: int(len(pos[s]["rejected"])) for s in pos},
        "reject_rate": {s: float(pos[s]["rejected"].mean()) for s in pos},
        "tau_fixed": float(recs["test"].emitted.double().mean()),
    }
    models, auc, cal, l2 = {}, {}, {}, {}
    y_val, y_test = pos["val"]["rejected"], pos["test"]["rejected"]
    for split, y in (("validation", y_val), ("test", y_test)):
        if len(np.unique(y)) < 2:
            raise SpecDecError(
                f"seed {seed}, T={t:g}: every judged {split} position was "
                f"{'rejected' if y.mean() else 'accepted'} ({len(y)} positions); AUROC needs both "
                "kinds: train longer or use more contexts"
            )
    for which in MODELS:
        m = fit_logistic(_model_inputs(pos["val"], which), y_val, groups=pos["val"]["groups"])
        pred = m.predict(_model_inputs(pos["test"], which))
        models[which] = m
        auc[which] = auroc(pred, y_test)
        cal[which] = ece(pred, y_test)
        l2[which] = m.l2
    sig_t = pos["test"]["signals"]
    out["auroc"] = auc
    out["auroc_raw"] = {
        "1-max_q": auroc(-sig_t[:, 0], y_test),
        "entropy": auroc(sig_t[:, 1], y_test),
        "-margin": auroc(-sig_t[:, 2], y_test),
    }
    out["ece"] = cal
    out["l2"] = l2
    both = models["both"]
    out["coef_attributes"] = _attribute_coefs(both, n_signals=3)
    out["coef_signals"] = {SIGNAL_NAMES[i]: float(c) for i, c in zip(np.flatnonzero(both.keep), both.coef) if i < 3}

    # --- schedulers: tune on validation by cutting the fixed round, then run for real on test
    def per_position(rec, a, model_past) -> tuple[np.ndarray, np.ndarray]:
        sig = rec.signals.numpy()
        a_next = 1.0 - models["signals"].predict(sig)
        if model_past is None:
            return a_next, a_next
        return 1.0 - model_past.predict(past_features(sig, a)), a_next

    val = recs["val"]
    n_acc_val = val.n_accepted.numpy()

    def val_score(lengths):
        emitted, steps = cut_round(n_acc_val, lengths, gamma)
        return _tokens_per_ms(emitted, lengths, steps, costs, with_attrs=False)

    bsz_val = n_acc_val.shape[0]
    choice: dict = {}
    choice["fixed"] = gamma
    choice["fixed-best"] = max(range(1, gamma + 1), key=lambda g: (val_score(np.full(bsz_val, g)), -g))
    choice["confidence"] = max(
        CONF_GRID, key=lambda th: val_score(stop_lengths_confidence(val.signals.numpy()[..., 0], th))
    )
    a_sig = per_position(val, None, None)
    a_att = per_position(val, attrs["val"], models["both"])
    choice["logistic-signals"] = max(CUM_GRID, key=lambda th: val_score(stop_lengths_cumulative(*a_sig, th)))
    choice["logistic-attributes"] = max(CUM_GRID, key=lambda th: val_score(stop_lengths_cumulative(*a_att, th)))

    schedulers = {
        "fixed": None,
        "fixed-best": FixedLengthScheduler(choice["fixed-best"]),
        "confidence": ConfidenceRoundScheduler(choice["confidence"]),
        "logistic-signals": AcceptanceScheduler(models["signals"], models["signals"], choice["logistic-signals"]),
        "logistic-attributes": AcceptanceScheduler(
            models["signals"], models["both"], choice["logistic-attributes"], attributes=attributes
        ),
    }
    test_fixed = recs["test"]
    a_sig_t = per_position(test_fixed, None, None)
    a_att_t = per_position(test_fixed, attrs["test"], models["both"])
    predicted = {
        "fixed": np.full(test_ctx.shape[0], gamma),
        "fixed-best": np.full(test_ctx.shape[0], choice["fixed-best"]),
        "confidence": stop_lengths_confidence(test_fixed.signals.numpy()[..., 0], choice["confidence"]),
        "logistic-signals": stop_lengths_cumulative(*a_sig_t, choice["logistic-signals"]),
        "logistic-attributes": stop_lengths_cumulative(*a_att_t, choice["logistic-attributes"]),
    }
    sched_out = {}
    for name, sched in schedulers.items():
        rec = (
            test_fixed
            if sched is None
            else scheduled_round_batch(
                target, runner, test_ctx, gamma, t, torch.Generator().manual_seed(gen_seed["test"]), sched
            )
        )
        lengths, steps, emitted = rec.lengths.numpy(), rec.draft_steps.numpy(), rec.emitted.numpy()
        cut_emitted, _ = cut_round(test_fixed.n_accepted.numpy(), predicted[name], gamma)
        uses_attrs = name == "logistic-attributes"
        sched_out[name] = {
            "setting": choice[name],
            "tau": float(emitted.mean()),
            "proposed": float(lengths.mean()),
            "draft_steps": float(steps.mean()),
            "tokens_per_ms": _tokens_per_ms(emitted, lengths, steps, costs, with_attrs=False),
            "tokens_per_ms_with_attributes": _tokens_per_ms(emitted, lengths, steps, costs, with_attrs=uses_attrs),
            # the real run against the fixed round cut where the rule says: must agree exactly
            "mismatched_rounds": int(np.sum((lengths != predicted[name]) | (emitted != cut_emitted))),
        }
    out["schedulers"] = sched_out
    return out


def _attribute_coefs(model, n_signals: int) -> dict[int, float]:
    """Standardised coefficients of the attribute columns of a 'both' model, by attribute index."""
    kept = np.flatnonzero(model.keep)
    return {int(i - n_signals): float(c) for i, c in zip(kept, model.coef) if i >= n_signals}


def run_experiment(
    cfg: Hook2Config, out_dir: Path, tick: Callable[[int], None] | None = None, say: Callable[[str], None] | None = None
) -> dict:
    """Run everything in ``cfg``; write ``results.json`` and ``report.md`` to ``out_dir``."""
    import scipy.optimize  # noqa: F401  (loaded before the limit below, which covers loaded libraries only)
    import scipy.stats  # noqa: F401
    import torch  # noqa: F401
    from threadpoolctl import threadpool_limits

    # BLAS threads too: scipy's L-BFGS on two contended threads is ~20x slower than on one
    with threadpool_limits(cfg.threads):
        return _run(cfg, out_dir, tick, say)


def _run(cfg: Hook2Config, out_dir: Path, tick, say) -> dict:
    import torch

    from v22sdk.specdec.attributes import ContextAttributes
    from v22sdk.specdec.corpus import CORPORA, load_corpus
    from v22sdk.specdec.costs import measure_costs
    from v22sdk.specdec.models import EagleDraftRunner, TargetConfig, TransformerTarget
    from v22sdk.specdec.train import bits_per_char, build_distill_data, contexts_from, train_draft, train_target

    torch.set_num_threads(cfg.threads)
    tick = tick or (lambda n: None)
    say = say or (lambda s: None)
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
        data_d = build_distill_data(model, corpus.train, cfg.n_distill_seq, cfg.prefix, seed=10 + ci)
        val_ctx = contexts_from(model, corpus.val, cfg.n_val_ctx, cfg.prefix, cfg.ctx_new, seed=40 + ci)
        test_ctx = contexts_from(model, corpus.test, cfg.n_test_ctx, cfg.prefix, cfg.ctx_new, seed=50 + ci)
        attributes = ContextAttributes(corpus.vocab)
        seeds = []
        costs = None
        for seed in range(cfg.seeds):
            say(f"[{name}] seed {seed}: training draft")
            d = train_draft(
                model,
                cfg.draft_arm,
                data_d,
                gamma=cfg.gamma,
                steps=cfg.draft_steps,
                batch=cfg.draft_batch,
                lr=cfg.draft_lr,
                seed=seed,
                warmup=cfg.prefix,
                tick=lambda: tick(1),
            )
            runner = EagleDraftRunner(d)
            if costs is None:
                costs = measure_costs(target, runner, test_ctx, cfg.gamma, reps=cfg.cost_reps, attributes=attributes)
                res["costs_ms"] = costs.as_dict()
                res["draft"] = {"arm": cfg.draft_arm, "lr": cfg.draft_lr, "params": d.n_params()}
            per_t = {}
            for t in cfg.temperatures:
                say(f"[{name}] seed {seed} {_tkey(t)}: rounds, attributes, models, schedulers")
                per_t[_tkey(t)] = _evaluate_seed(
                    cfg, target, runner, attributes, costs, val_ctx, test_ctx, seed, t, tick
                )
            seeds.append({"seed": seed, **per_t})
            say(
                f"[{name}] seed {seed}: AUROC "
                + "; ".join(f"{k} " + "/".join(f"{per_t[k]['auroc'][m]:.3f}" for m in MODELS) for k in per_t)
            )
            if len(seeds) >= min(2, cfg.seeds):
                # written after every seed from the second on (paired intervals need two), so a run
                # stopped part-way leaves its finished seeds; the verdict says "partial" until all are in
                res["seeds"] = seeds
                res["attribute_plugin"] = {"lookups": attributes.lookups, "calls": attributes.calls}
                res["comparisons"] = _comparisons(seeds, cfg)
                res["top_slots"] = _top_slots(seeds, cfg, attributes)
                data["corpora"][name] = res
                data["runtime_s"] = time.time() - t_start
                data["cpu_s"] = time.process_time() - c_start  # load-independent
                data["verdict"] = verdict(data)
                _write(data, out_dir)
    return data


def _comparisons(seeds: list[dict], cfg: Hook2Config) -> dict:
    """Paired differences over seeds, per temperature."""
    from v22sdk.specdec.stats import paired_diff

    out: dict = {}
    for t in cfg.temperatures:
        k = _tkey(t)
        auc = {m: [s[k]["auroc"][m] for s in seeds] for m in MODELS}
        comp = {
            "auroc both-signals": paired_diff(auc["both"], auc["signals"]).as_dict(),
            "auroc attributes-signals": paired_diff(auc["attributes"], auc["signals"]).as_dict(),
            "auroc both-attributes": paired_diff(auc["both"], auc["attributes"]).as_dict(),
        }
        for metric in ("tokens_per_ms", "tokens_per_ms_with_attributes"):
            vals = {n: [s[k]["schedulers"][n][metric] for s in seeds] for n in SCHEDULERS}
            for base in SCHEDULERS[:-1]:
                comp[f"{metric} logistic-attributes-{base}"] = paired_diff(
                    vals["logistic-attributes"], vals[base]
                ).as_dict()
        out[k] = comp
    return out


def _top_slots(seeds: list[dict], cfg: Hook2Config, attributes, n: int = 8) -> dict:
    """Attribute slots with the largest mean |standardised coefficient| in model (c), per temperature."""
    out = {}
    for t in cfg.temperatures:
        k = _tkey(t)
        acc: dict[int, list[float]] = {}
        for s in seeds:
            for idx, c in s[k]["coef_attributes"].items():
                acc.setdefault(int(idx), []).append(c)
        mean = {i: float(np.sum(v) / len(seeds)) for i, v in acc.items()}
        top = sorted(mean, key=lambda i: -abs(mean[i]))[:n]
        out[k] = [
            {"index": i, "slot": attributes.slot_name(i), "mean_coef": mean[i], "seeds_present": len(acc[i])}
            for i in top
        ]
    return out


def verdict(data: dict) -> dict:
    """Apply :data:`CRITERION` to whatever corpora and temperatures ``data`` holds."""
    cells, sched = {}, {}
    for name, r in data["corpora"].items():
        for k, comp in r["comparisons"].items():
            d = comp["auroc both-signals"]
            cells[f"{name}/{k}"] = {
                "passes": d["diff"] >= MIN_AUROC_GAIN and d["lo"] > 0,
                "diff": d["diff"],
                "lo": d["lo"],
                "hi": d["hi"],
            }
            for base in SCHEDULER_BASELINES:
                d = comp[f"tokens_per_ms logistic-attributes-{base}"]
                sched[f"{name}/{k} vs {base}"] = {
                    "passes": d["rel_gain"] >= MIN_SCHEDULER_GAIN and d["lo"] > 0,
                    "rel_gain": d["rel_gain"],
                    "lo_rel": d["lo"] / d["mean_b"],
                    "hi_rel": d["hi"] / d["mean_b"],
                }
    if not cells:
        return {"text": "no results"}
    complete = (
        len(data["corpora"]) >= 2
        and all(len(r["comparisons"]) >= 2 for r in data["corpora"].values())
        and all(len(r["seeds"]) >= 5 for r in data["corpora"].values())
    )
    n_pass = sum(c["passes"] for c in cells.values())
    top = max(c["hi"] for c in cells.values())
    detected = [k for k, c in cells.items() if c["lo"] > 0 and not c["passes"]]
    if n_pass == len(cells):
        text = (
            f"hook (2) {'SUPPORTED' if complete else 'PASSING SO FAR'}: attributes raise the AUROC of rejection "
            f"prediction by >= {MIN_AUROC_GAIN} over the draft's own signals, paired 95% intervals above 0, "
            f"in all {len(cells)} cells"
        )
    elif n_pass:
        text = (
            f"INCONSISTENT: attributes beat the draft's own signals by >= {MIN_AUROC_GAIN} AUROC in {n_pass} of "
            f"{len(cells)} cells only, so the pre-registered criterion fails"
        )
    else:
        text = (
            f"NOT DETECTED: in no cell do attributes add >= {MIN_AUROC_GAIN} AUROC to the draft's own signals "
            f"with an interval above 0; the intervals leave open gains up to {top:+.3f}"
        )
        if detected:
            text += f" (a smaller gain, interval above 0, in {', '.join(detected)})"
    s_pass = sum(c["passes"] for c in sched.values())
    text += (
        f". Scheduling: the attribute scheduler beats the baseline by >= {100 * MIN_SCHEDULER_GAIN:.0f}% "
        f"tokens per ms with an interval above 0 in {s_pass} of {len(sched)} (cell, baseline) pairs"
        f"{' (criterion met)' if s_pass == len(sched) and complete else ' (criterion not met)'}"
    )
    if not complete:
        text += " [partial run: fewer corpora, temperatures or seeds than pre-registered]"
    return {"text": text, "cells": cells, "scheduling": sched}


def _fmt_diff(d: dict, pct: bool = False) -> str:
    if pct:
        return f"{100 * d['rel_gain']:+.1f}% [{100 * d['lo'] / d['mean_b']:+.1f}, {100 * d['hi'] / d['mean_b']:+.1f}]"
    return f"{d['diff']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]"


def _mean_sd(vals: list[float], digits: int = 3) -> str:
    a = np.asarray(vals, dtype=float)
    sd = a.std(ddof=1) if len(a) > 1 else 0.0
    return f"{a.mean():.{digits}f} ± {sd:.{digits}f}"


def tables(data: dict) -> dict:
    """The result tables (string cells) that the docs embed and the report prints."""
    auc_rows, sched_rows, diff_rows, cost_rows, slot_rows, cal_rows = [], [], [], [], [], []
    for name, r in data["corpora"].items():
        c = r["costs_ms"]
        cost_rows.append(
            [
                name,
                str(r["info"]["vocab_size"]),
                f"{r['target']['test_bits_per_char']:.2f}",
                f"{c['target_ms'][0]:.2f}–{c['target_ms'][-1]:.2f}",
                f"{c['draft_step_ms']:.3f}",
                f"{c['draft_to_target']:.2f}",
                f"{c['attribute_ms']:.2f}",
            ]
        )
        for k, comp in r["comparisons"].items():
            seeds = r["seeds"]
            auc_rows.append(
                [
                    name,
                    k,
                    str(int(np.mean([s[k]["n_positions"]["test"] for s in seeds]))),
                    f"{np.mean([s[k]['reject_rate']['test'] for s in seeds]):.3f}",
                    *[_mean_sd([s[k]["auroc"][m] for s in seeds]) for m in MODELS],
                    _fmt_diff(comp["auroc both-signals"]),
                    _fmt_diff(comp["auroc attributes-signals"]),
                ]
            )
            cal_rows.append(
                [
                    name,
                    k,
                    *[_mean_sd([s[k]["ece"][m] for s in seeds]) for m in MODELS],
                    _mean_sd([s[k]["auroc_raw"]["1-max_q"] for s in seeds]),
                    _mean_sd([s[k]["auroc_raw"]["entropy"] for s in seeds]),
                ]
            )
            for sname in SCHEDULERS:
                v = [s[k]["schedulers"][sname] for s in seeds]
                setting = ", ".join(sorted({f"{x['setting']:g}" for x in v}))
                sched_rows.append(
                    [
                        name,
                        k,
                        sname,
                        setting,
                        _mean_sd([x["tau"] for x in v], 2),
                        _mean_sd([x["draft_steps"] for x in v], 2),
                        _mean_sd([x["tokens_per_ms"] for x in v], 3),
                        _mean_sd([x["tokens_per_ms_with_attributes"] for x in v], 3),
                        str(sum(x["mismatched_rounds"] for x in v)),
                    ]
                )
            for base in SCHEDULERS[:-1]:
                diff_rows.append(
                    [
                        name,
                        k,
                        base,
                        _fmt_diff(comp[f"tokens_per_ms logistic-attributes-{base}"], pct=True),
                        _fmt_diff(comp[f"tokens_per_ms_with_attributes logistic-attributes-{base}"], pct=True),
                    ]
                )
        for k, top in r["top_slots"].items():
            slot_rows.append([name, k, ", ".join(f"{x['slot']} ({x['mean_coef']:+.2f})" for x in top[:6])])
    return {
        "auroc": {
            "columns": [
                "corpus",
                "T",
                "test positions / seed",
                "rejection rate",
                "AUROC (a) signals",
                "AUROC (b) attributes",
                "AUROC (c) both",
                "(c) − (a), 95% CI",
                "(b) − (a), 95% CI",
            ],
            "align": "llrrrrrrr",
            "rows": auc_rows,
        },
        "calibration": {
            "columns": ["corpus", "T", "ECE (a)", "ECE (b)", "ECE (c)", "AUROC 1 − max q (raw)", "AUROC entropy (raw)"],
            "align": "llrrrrr",
            "rows": cal_rows,
        },
        "schedulers": {
            "columns": [
                "corpus",
                "T",
                "scheduler",
                "setting (val-tuned)",
                "τ",
                "draft steps / round",
                "tokens / ms",
                "tokens / ms incl. attribute calls",
                "rounds ≠ cut fixed round",
            ],
            "align": "lllrrrrrr",
            "rows": sched_rows,
        },
        "scheduler_diffs": {
            "columns": ["corpus", "T", "attribute scheduler vs", "tokens / ms, paired 95% CI", "incl. attribute calls"],
            "align": "lllrr",
            "rows": diff_rows,
        },
        "costs": {
            "columns": [
                "corpus",
                "vocab",
                "target test bits/char",
                "target pass (g = 0…γ), ms",
                "draft step, ms",
                "draft / target",
                "attribute call, ms",
            ],
            "align": "lrrrrrr",
            "rows": cost_rows,
        },
        "slots": {
            "columns": ["corpus", "T", "largest mean standardised coefficients in (c) (+ = more rejection)"],
            "align": "lll",
            "rows": slot_rows,
        },
    }


def render_report(doc: dict) -> str:
    """Markdown tables of a hook-2 results file (what ``v22sdk specdec report`` prints)."""
    from v22sdk.evidence import markdown_table

    data = doc.get("data", doc)
    cfg = data["config"]
    lines = [
        f"# Speculative-decoding hook-(2) experiment: {len(data['corpora'])} corpus/corpora, gamma={cfg['gamma']}, "
        f"seeds={cfg['seeds']}, {cfg['n_val_ctx']} val / {cfg['n_test_ctx']} test contexts, "
        f"runtime {data.get('runtime_s', 0):.0f} s" + (f" (CPU {data['cpu_s']:.0f} s)" if "cpu_s" in data else ""),
        "",
    ]
    for tname, table in tables(data).items():
        lines += [f"## {tname}", "", markdown_table(table)]
    lines += ["## Verdict (pre-registered criterion)", "", data["verdict"]["text"], ""]
    return "\n".join(lines)


def _write(data: dict, out_dir: Path) -> None:
    from v22sdk.evidence import write_result

    doc = write_result(
        out_dir / "results.json", data, tables=tables(data), name=f"specdec-{EXPERIMENT}", criterion=CRITERION
    )
    from v22sdk.evidence import read_result

    (out_dir / "report.md").write_text(render_report(read_result(doc)))
