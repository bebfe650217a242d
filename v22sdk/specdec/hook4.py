"""RFC hook 4 / section 6 question 3: cross-modal drafting with the unified 640-D token ("visual
context can modulate draft token confidence").

A small target (:class:`~v22sdk.specdec.crossmodal.CondLM`) writes captions of real handwritten
and spoken digits from the data suite, reading the input only through its 640-D tokens; it is
trained on the suite's train split and frozen. Three drafts of one architecture and parameter
count are distilled from it with the same batches per seed and differ only in the features they
get for the input: ``unified`` (the same 640-D tokens), ``text`` (zeros: text only) and
``specific`` (a modality-specific encoder's features: ink pixels or MFCCs, same shape). On the
test split, captions are sampled from the target and analytic tau (:func:`~v22sdk.specdec.metrics.analytic_tau`)
is measured at every ``stride``-th caption position, both temperatures, paired over seeds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

EXPERIMENT = "hook4"
ARMS = ("unified", "text", "specific")
PARTS = ("handwriting", "speech")
MIN_GAIN = 0.05

#: Fixed before the full run, in its own commit (docs/findings-hook3-4.md cites it).
CRITERION: dict | None = {
    "question": "RFC section 6 question 3 / section 7 hook 4: does a draft that reads the non-text input's unified "
    "640-D tokens propose better for a target that writes text about that input, than a text-only "
    "draft of the same size; and how does it compare with a modality-specific encoder's features?",
    "measure": "analytic tau (gamma = 5) of distilled drafts against the frozen target, pooled over contexts = "
    "BOS + the first k characters (k = 0, 5, 10, ...) of captions the target sampled (T = 1) for the "
    "suite's test inputs, at T = 0 and T = 1",
    "primary": f"unified - text-only: paired 95% t-interval over seeds above 0 and relative gain >= {100 * MIN_GAIN:.0f}%",
    "cells": "every part (handwriting images, speech recordings) x temperature (T = 0 and T = 1)",
    "supported": "the primary holds in every cell",
    "inconsistent": "it holds in some cells only",
    "not_supported": "it holds in no cell",
    "reported_either_way": "unified - modality-specific (ink pixels for images, MFCCs for speech), paired 95% "
    "intervals; a direction is claimed only where the interval excludes 0",
    "seeds": 5,
    "data": "v22sdk data suite, size small, seed 0, parts handwriting + speech; target and drafts trained on its train "
    "split, every figure on its test split (speech test voices never heard in training)",
}


@dataclass(frozen=True)
class Hook4Config:
    """Every knob of a run (stored with the results). ``corpora`` is unused (the CLI's option)."""

    corpora: tuple[str, ...] = ()
    suite_size: str = "small"
    suite_seed: int = 0
    limit: int | None = None
    max_len: int = 64
    target_d: int = 96
    target_layers: int = 3
    target_steps: int = 800
    target_batch: int = 32
    target_lr: float = 2e-3
    draft_d: int = 48
    draft_layers: int = 2
    draft_steps: int = 300
    draft_batch: int = 32
    draft_lr: float = 3e-3
    seeds: int = 5
    gamma: int = 5
    temperatures: tuple[float, ...] = (0.0, 1.0)
    stride: int = 5
    threads: int = 1


FULL = Hook4Config()
QUICK = Hook4Config(
    suite_size="tiny",
    limit=6,
    target_d=32,
    target_layers=1,
    target_steps=20,
    target_batch=8,
    draft_d=16,
    draft_layers=1,
    draft_steps=6,
    draft_batch=8,
    seeds=2,
    gamma=3,
    stride=8,
)


def _tkey(t: float) -> str:
    return f"T={t:g}"


def total_ticks(cfg: Hook4Config) -> int:
    return cfg.target_steps + cfg.seeds * len(ARMS) * (cfg.draft_steps + len(cfg.temperatures))


def _encode_caption(text: str, max_len: int) -> tuple[np.ndarray, int]:
    """``"\\n" + text + "\\n"`` as ids padded with ``\\n`` to ``max_len + 1``, and its length."""
    from v22sdk.specdec.corpus import ASCII_VOCAB

    ids = ASCII_VOCAB.encode("\n" + text + "\n")
    n = len(ids)
    if n > max_len + 1:
        from v22sdk.specdec.errors import SpecDecError

        raise SpecDecError(f"caption {text!r} is longer than {max_len - 1} characters")
    return np.concatenate([ids, np.zeros(max_len + 1 - n, dtype=np.int64)]), n


class _Norm:
    """Per-dimension z-scores fitted on the training inputs, clipped to +-5."""

    def __init__(self, x: np.ndarray):
        flat = x.reshape(-1, x.shape[-1])
        self.mu, self.sd = flat.mean(0), flat.std(0) + 1e-6

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return np.clip((x - self.mu) / self.sd, -5, 5).astype(np.float32)


def _batch(rng, examples, feats, cfg):
    """A training batch: rows, caption ids (B, max_len + 1), loss mask (B, max_len)."""
    from v22sdk.specdec.crossmodal import TEMPLATES, caption, props_only

    rows = rng.integers(0, len(examples), size=cfg.target_batch if feats is None else cfg.draft_batch)
    ids, mask = [], []
    for r in rows:
        e = examples[r]
        tpl = int(rng.integers(0, len(TEMPLATES[e.part])))
        a, n = _encode_caption(caption(e.part, props_only(e.props), tpl), cfg.max_len)
        ids.append(a)
        mask.append(np.arange(cfg.max_len) < n - 1)
    return rows, np.stack(ids), np.stack(mask)


def _train_target(cfg, examples, unified, tick):
    import torch
    import torch.nn.functional as F

    from v22sdk.specdec.corpus import ASCII_VOCAB
    from v22sdk.specdec.crossmodal import CondLM
    from v22sdk.specdec.train import _cosine_lr, seed_everything

    seed_everything(0)
    model = CondLM(ASCII_VOCAB.size, cfg.max_len, cfg.target_d, cfg.target_layers)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.target_lr, weight_decay=0.01, betas=(0.9, 0.98))
    rng = np.random.default_rng(0)
    for step in range(cfg.target_steps):
        for grp in opt.param_groups:
            grp["lr"] = _cosine_lr(step, cfg.target_steps, cfg.target_lr, warmup=max(cfg.target_steps // 20, 1))
        rows, ids, mask = _batch(rng, examples, None, cfg)
        ids, mask = torch.from_numpy(ids), torch.from_numpy(mask)
        logits = model(torch.from_numpy(unified[rows]), ids[:, :-1])
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none")
        loss = (ce * mask.reshape(-1)).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        tick(1)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def _train_draft(cfg, target, examples, unified, feats, seed: int, tick):
    """Distil a draft reading ``feats`` from the frozen target (soft cross-entropy on real captions)."""
    import torch

    from v22sdk.specdec.corpus import ASCII_VOCAB
    from v22sdk.specdec.crossmodal import CondLM
    from v22sdk.specdec.train import _cosine_lr, seed_everything

    seed_everything(seed)
    draft = CondLM(ASCII_VOCAB.size, cfg.max_len, cfg.draft_d, cfg.draft_layers)
    opt = torch.optim.AdamW(draft.parameters(), lr=cfg.draft_lr, weight_decay=0.01, betas=(0.9, 0.98))
    rng = np.random.default_rng(1000 + seed)
    draft.train()
    for step in range(cfg.draft_steps):
        for grp in opt.param_groups:
            grp["lr"] = _cosine_lr(step, cfg.draft_steps, cfg.draft_lr, warmup=max(cfg.draft_steps // 20, 1))
        rows, ids, mask = _batch(rng, examples, feats, cfg)
        ids, mask = torch.from_numpy(ids[:, :-1]), torch.from_numpy(mask)
        with torch.no_grad():
            p = torch.softmax(target(torch.from_numpy(unified[rows]), ids), dim=-1)
        logq = torch.log_softmax(draft(torch.from_numpy(feats[rows]), ids), dim=-1)
        ce = -(p * logq).sum(-1)
        loss = (ce * mask).sum() / mask.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(draft.parameters(), 1.0)
        opt.step()
        tick(1)
    return draft.eval()


def _generate(target, feats, n_max: int, temperature: float, seed: int):
    """Captions sampled from the target: ``(B, n_max + 1)`` ids from BOS, and each one's length
    up to and including its EOS (``n_max + 1`` when it has none)."""
    import torch

    from v22sdk.specdec.sampler import probs_from_logits, sample_from

    g = torch.Generator().manual_seed(seed)
    seq = torch.zeros((feats.shape[0], 1), dtype=torch.int64)
    with torch.no_grad():
        for _ in range(n_max):
            p = probs_from_logits(target(feats, seq)[:, -1].double(), temperature)
            nxt = sample_from(p, torch.rand(seq.shape[0], generator=g, dtype=torch.float64))
            seq = torch.cat([seq, nxt.unsqueeze(1)], dim=1)
    ids = seq.numpy()
    lengths = np.array([1 + (int(np.argmax(r[1:] == 0)) + 1 if (r[1:] == 0).any() else n_max) for r in ids])
    return seq, lengths


def _digit_named(text: str, digit: int) -> bool:
    """The caption names ``digit`` (its word or numeral) and no other digit."""
    import re

    from v22sdk.specdec.crossmodal import WORDS

    found = {i for i, w in enumerate(WORDS) if re.search(rf"\b{w}\b", text)}
    found |= {int(c) for c in re.findall(r"\d", text)}
    return found == {digit}


def run_experiment(
    cfg: Hook4Config, out_dir: Path, tick: Callable[[int], None] | None = None, say: Callable[[str], None] | None = None
) -> dict:
    """Run everything in ``cfg``; write ``results.json`` and ``report.md`` to ``out_dir``."""
    import scipy.stats  # noqa: F401
    import torch  # noqa: F401
    from threadpoolctl import threadpool_limits

    with threadpool_limits(cfg.threads):
        return _run(cfg, out_dir, tick, say)


def _run(cfg: Hook4Config, out_dir: Path, tick, say) -> dict:
    import torch

    from v22sdk.specdec.corpus import ASCII_VOCAB
    from v22sdk.specdec.crossmodal import CondDraftRunner, CondTarget, load_examples
    from v22sdk.specdec.metrics import analytic_tau

    torch.set_num_threads(cfg.threads)
    tick = tick or (lambda n: None)
    say = say or (lambda s: None)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_start = time.time()
    say(f"building the data suite ({cfg.suite_size}: handwriting, speech) and tokenizing")
    c0 = time.process_time()
    examples, meta = load_examples(cfg.suite_size, cfg.suite_seed, cfg.limit)
    meta["featurise_cpu_s"] = time.process_time() - c0
    train = [e for e in examples if e.split == "train"]
    test = [e for e in examples if e.split == "test"]
    uni_norm = _Norm(np.stack([e.unified for e in train]))
    spe_norm = _Norm(np.stack([e.specific for e in train]))
    feats_train = {
        "unified": uni_norm(np.stack([e.unified for e in train])),
        "specific": spe_norm(np.stack([e.specific for e in train])),
    }
    feats_train["text"] = np.zeros_like(feats_train["unified"])
    feats_test = {
        "unified": uni_norm(np.stack([e.unified for e in test])),
        "specific": spe_norm(np.stack([e.specific for e in test])),
    }
    feats_test["text"] = np.zeros_like(feats_test["unified"])
    say(f"{len(train)} training and {len(test)} test inputs; training the target")
    model = _train_target(cfg, train, feats_train["unified"], tick)
    target = CondTarget(model)
    data: dict = {"experiment": EXPERIMENT, "config": asdict(cfg), "data": meta, "target": {"params": model.n_params()}}

    # the target's own captions of the test inputs: greedy (does it name the digit?) and sampled
    uni_t = torch.from_numpy(feats_test["unified"])
    greedy, glen = _generate(model, uni_t, cfg.max_len - 1, 0.0, seed=0)
    names = [
        _digit_named(ASCII_VOCAB.decode(greedy[i, 1 : glen[i] - 1].tolist()), e.props["digit"])
        for i, e in enumerate(test)
    ]
    data["target"]["names_digit_greedy"] = {
        p: float(np.mean([n for n, e in zip(names, test) if e.part == p])) for p in PARTS
    }
    data["target"]["greedy_examples"] = [
        ASCII_VOCAB.decode(greedy[i, 1 : glen[i] - 1].tolist()) for i in range(min(6, len(test)))
    ]
    sampled, slen = _generate(model, uni_t, cfg.max_len - 1, 1.0, seed=1)
    # evaluation contexts: BOS + the first k sampled characters, k = 0, stride, ... with room for a round
    groups = []
    for k in range(0, cfg.max_len, cfg.stride):
        rows = np.flatnonzero(slen >= 1 + k + cfg.gamma)
        if len(rows):
            groups.append((k, rows))
    part_of = np.array([e.part for e in test])
    data["contexts"] = {
        "n": int(sum(len(r) for _, r in groups)),
        "per_part": {p: int(sum(np.sum(part_of[r] == p) for _, r in groups)) for p in PARTS},
        "positions": [k for k, _ in groups],
    }
    seeds = []
    params = {}
    for seed in range(cfg.seeds):
        per: dict = {}
        for arm in ARMS:
            say(f"seed {seed}: distilling the {arm} draft")
            draft = _train_draft(cfg, model, train, feats_train["unified"], feats_train[arm], seed, tick)
            params[arm] = draft.n_params()
            runner = CondDraftRunner(draft)
            per[arm] = {}
            for ti, temp in enumerate(cfg.temperatures):
                taus = np.zeros(len(test) * 0 + sum(len(r) for _, r in groups))
                part_list: list[str] = []
                k_list: list[int] = []
                off = 0
                for gi, (k, rows) in enumerate(groups):
                    ctx = sampled[rows, : 1 + k]
                    target.feats = uni_t[rows]
                    runner.feats = torch.from_numpy(feats_test[arm][rows])
                    tau, _ = analytic_tau(target, runner, ctx, cfg.gamma, temp, seed=5000 + 100 * seed + 10 * ti + gi)
                    taus[off : off + len(rows)] = tau.numpy()
                    part_list += part_of[rows].tolist()
                    k_list += [k] * len(rows)
                    off += len(rows)
                parts, ks = np.array(part_list), np.array(k_list)
                per[arm][_tkey(temp)] = {
                    "tau": float(taus.mean()),
                    "by_part": {p: float(taus[parts == p].mean()) for p in PARTS},
                    "by_position": {str(k): float(taus[ks == k].mean()) for k, _ in groups},
                }
                tick(1)
        seeds.append({"seed": seed, **per})
        say(f"seed {seed}: tau T=1 " + "; ".join(f"{a} {per[a][_tkey(cfg.temperatures[-1])]['tau']:.3f}" for a in ARMS))
        data["draft_params"] = params
        data["seeds"] = seeds
        data["comparisons"] = _comparisons(seeds, cfg)
        data["runtime_s"] = time.time() - t_start
        data["verdict"] = verdict(data)
        _write(data, out_dir)
    return data


def _comparisons(seeds, cfg) -> dict:
    from v22sdk.specdec.stats import paired_diff

    out: dict = {}
    if len(seeds) < 2:
        return out
    for temp in cfg.temperatures:
        k = _tkey(temp)
        for cell in ("all",) + PARTS:

            def v(arm):
                return [s[arm][k]["tau"] if cell == "all" else s[arm][k]["by_part"][cell] for s in seeds]

            out[f"{k}/{cell}"] = {
                "unified-text": paired_diff(v("unified"), v("text")).as_dict(),
                "unified-specific": paired_diff(v("unified"), v("specific")).as_dict(),
                "specific-text": paired_diff(v("specific"), v("text")).as_dict(),
            }
    return out


def verdict(data: dict) -> dict:
    """Apply the pre-registered criterion: unified beats text-only in every part x temperature."""
    cells = {}
    for key, comp in data.get("comparisons", {}).items():
        if key.endswith("/all"):
            continue
        d, s = comp["unified-text"], comp["unified-specific"]
        cells[key] = {
            "passes": d["lo"] > 0 and d["rel_gain"] >= MIN_GAIN,
            "rel_gain": d["rel_gain"],
            "lo_rel": d["lo"] / d["mean_b"],
            "hi_rel": d["hi"] / d["mean_b"],
            "vs_specific": s["rel_gain"],
            "vs_specific_lo": s["lo"] / s["mean_b"],
            "vs_specific_hi": s["hi"] / s["mean_b"],
        }
    if not cells:
        return {"text": "no results", "cells": {}}
    complete = len(data.get("seeds", [])) >= 5 and len(data["config"]["temperatures"]) >= 2
    n_pass = sum(c["passes"] for c in cells.values())
    if n_pass == len(cells):
        text = (
            f"hook (4) {'SUPPORTED' if complete else 'PASSING SO FAR'}: the unified-token draft beats the "
            f"text-only draft by >= {100 * MIN_GAIN:.0f}% tau (paired 95% interval above 0) in all "
            f"{len(cells)} modality x temperature cells"
        )
    elif n_pass:
        text = (
            f"INCONSISTENT: the unified-token draft beats the text-only draft by >= {100 * MIN_GAIN:.0f}% in "
            f"{n_pass} of {len(cells)} cells only"
        )
    else:
        text = f"NOT SUPPORTED: in no cell does the unified-token draft beat the text-only draft by >= {100 * MIN_GAIN:.0f}%"
    text += ". Unified - text-only: " + "; ".join(
        f"{k} {100 * c['rel_gain']:+.1f}% [{100 * c['lo_rel']:+.1f}, {100 * c['hi_rel']:+.1f}]"
        for k, c in cells.items()
    )

    def side(c):
        if c["vs_specific_lo"] > 0:
            return "unified better"
        if c["vs_specific_hi"] < 0:
            return "modality-specific better"
        return "no difference detected"

    text += ". Unified - modality-specific (reported either way): " + "; ".join(
        f"{k} {100 * c['vs_specific']:+.1f}% [{100 * c['vs_specific_lo']:+.1f}, {100 * c['vs_specific_hi']:+.1f}] "
        f"({side(c)})"
        for k, c in cells.items()
    )
    if not complete:
        text += " [partial run: fewer seeds or temperatures than pre-registered]"
    return {"text": text, "cells": cells}


def _mean_sd(vals, digits: int = 3) -> str:
    a = np.asarray(vals, dtype=float)
    sd = a.std(ddof=1) if len(a) > 1 else 0.0
    return f"{a.mean():.{digits}f} ± {sd:.{digits}f}"


def _pct(d: dict) -> str:
    if d["lo"] is None or d["hi"] is None:
        return f"{100 * d['rel_gain']:+.1f}% (no spread)"
    return (
        f"{d['diff']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}] "
        f"({100 * d['rel_gain']:+.1f}% [{100 * d['lo'] / d['mean_b']:+.1f}, {100 * d['hi'] / d['mean_b']:+.1f}])"
    )


def tables(data: dict) -> dict:
    cfg = data["config"]
    seeds = data.get("seeds", [])
    tau_rows, diff_rows, pos_rows = [], [], []
    for temp in cfg["temperatures"]:
        k = _tkey(temp)
        for cell in ("all",) + PARTS:
            if seeds:
                tau_rows.append(
                    [
                        k,
                        cell,
                        *[
                            _mean_sd([s[a][k]["tau"] if cell == "all" else s[a][k]["by_part"][cell] for s in seeds])
                            for a in ARMS
                        ],
                    ]
                )
            comp = data.get("comparisons", {}).get(f"{k}/{cell}")
            if comp:
                diff_rows.append(
                    [k, cell, _pct(comp["unified-text"]), _pct(comp["unified-specific"]), _pct(comp["specific-text"])]
                )
        if seeds:
            for pos in data["contexts"]["positions"]:
                pos_rows.append(
                    [k, str(pos), *[f"{np.mean([s[a][k]['by_position'][str(pos)] for s in seeds]):.3f}" for a in ARMS]]
                )
    d, t = data["data"], data["target"]
    setup_rows = [
        [
            p,
            str(d["counts"][f"{p}/train"]),
            str(d["counts"][f"{p}/test"]),
            f"{d['tokens_per_input'][p]:.1f}",
            f"{t['names_digit_greedy'][p]:.3f}",
            str(data["contexts"]["per_part"][p]),
        ]
        for p in PARTS
    ]
    return {
        "setup": {
            "columns": [
                "part",
                "train inputs",
                "test inputs",
                "640-D tokens / input",
                "target's greedy caption names the right digit",
                "evaluation contexts",
            ],
            "align": "lrrrrr",
            "rows": setup_rows,
        },
        "tau": {
            "columns": ["T", "test inputs", "unified 640-D tokens", "text only", "modality-specific features"],
            "align": "llrrr",
            "rows": tau_rows,
        },
        "diffs": {
            "columns": [
                "T",
                "test inputs",
                "unified − text only, 95% CI (relative)",
                "unified − modality-specific",
                "modality-specific − text only",
            ],
            "align": "llrrr",
            "rows": diff_rows,
        },
        "positions": {"columns": ["T", "caption position", *ARMS], "align": "lrrrr", "rows": pos_rows},
    }


def render_report(doc: dict) -> str:
    from v22sdk.evidence import markdown_table

    data = doc.get("data", doc)
    cfg = data["config"]
    lines = [
        f"# Speculative-decoding hook-(4) experiment: suite {cfg['suite_size']}, gamma={cfg['gamma']}, "
        f"seeds={cfg['seeds']}, target params {data['target']['params']:,}, draft params "
        f"{', '.join(f'{a} {n:,}' for a, n in data.get('draft_params', {}).items())}, "
        f"runtime {data.get('runtime_s', 0):.0f} s",
        "",
    ]
    for tname, table in tables(data).items():
        lines += [f"## {tname}", "", markdown_table(table)]
    lines += ["Target's greedy captions (first test inputs): " + " | ".join(data["target"]["greedy_examples"]), ""]
    lines += ["## Verdict (pre-registered criterion)", "", data["verdict"]["text"], ""]
    return "\n".join(lines)


def _finite(x):
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def _write(data: dict, out_dir: Path) -> None:
    from v22sdk.evidence import read_result, write_result

    data = _finite(data)
    doc = write_result(
        out_dir / "results.json", data, tables=tables(data), name=f"specdec-{EXPERIMENT}", criterion=CRITERION
    )
    (out_dir / "report.md").write_text(render_report(read_result(doc)))
