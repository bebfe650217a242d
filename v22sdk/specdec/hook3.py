"""RFC hook 3: the 3-tier memory as a long-context path for a draft ("compresses O(N) context into
O(1) retrieval").

Per corpus: a causal char transformer target is trained on long windows (``W x max(multiples)``
characters plus a round) and frozen. Four drafts of one architecture and parameter count
(:class:`~v22sdk.specdec.longctx.ViewDraft`, trained from scratch on the corpus's train split with
the same batches per seed) differ only in what they read (:mod:`.longctx`): ``window`` (the last
``W`` characters), ``memory`` (the window plus the passage the project's memory recalls with its
hybrid ``0.6 cos + 0.4 Jaccard`` score, written as the document is read), ``cosine`` (the same
recall ranked by cosine alone) and ``full`` (the whole document so far). Held-out documents are
cut from the validation and test splits (nothing is tuned, so both are held out); at positions
``t = W x m`` for each multiple ``m`` the drafts propose ``gamma`` tokens against the target,
which reads the whole document, and analytic tau (:func:`~v22sdk.specdec.metrics.analytic_tau`,
unbiased for the exact sampler's expected tokens per target call) is recorded, paired over seeds.
The draft's memory and compute per token are reported for each arm and length.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

EXPERIMENT = "hook3"
ARMS = ("window", "memory", "cosine", "full")
MIN_SHARE = 0.5
MIN_GAP = 0.02

#: Fixed before the full run, in its own commit (docs/findings-hook3-4.md cites it).
CRITERION: dict | None = {
    "question": "RFC section 7 hook 3: can the 3-tier memory (hybrid 0.6 cos + 0.4 Jaccard recall, written as the "
    "document is read) stand in for a long context in a draft, i.e. recover most of what a full-context "
    "draft gains over a short-window draft of the same size?",
    "measure": "analytic tau (expected tokens per target call, bonus included, gamma = 7) of drafts (a) window, "
    "(b) window + hybrid memory recall, (c) full context, (d) window + cosine-only recall, against a "
    "target that reads the whole document; held-out documents at 16x the window (W = 8, 128 chars)",
    "gap": "(c) - (a), paired over seeds; a cell is testable only if its 95% t-interval is above 0 and it is at least "
    f"{100 * MIN_GAP:.0f}% of (a)",
    "primary": f"(b) recovers more than {MIN_SHARE:.0%} of the gap: the per-seed contrast (b) - (a) - {MIN_SHARE} * "
    "((c) - (a)) has a paired 95% t-interval above 0",
    "cells": "every corpus x temperature (T = 0 and T = 1) at 16x the window",
    "supported": "every cell testable and passing",
    "inconsistent": "some cells pass, others do not (an untestable cell does not pass)",
    "not_supported": "no cell passes; 'recovers significantly less' is said where the contrast's interval is below 0",
    "untestable": "no cell has a gap: the claim cannot be tested on these data",
    "secondary": "(b) - (d), the Jaccard term: a direction is claimed only where its paired 95% interval excludes 0; "
    "1x and 4x and the costs are reported, not judged",
    "seeds": 5,
    "corpora": ["stdlib-source", "tang-song-poems"],
    "splits": "target and drafts trained on the train split; held-out documents from the validation + test splits "
    "(nothing is tuned on them)",
}


@dataclass(frozen=True)
class Hook3Config:
    """Every knob of a run (stored with the results)."""

    corpora: tuple[str, ...] = ("stdlib-source", "tang-song-poems")
    window: int = 8
    stride: int = 4
    key: int = 8
    value: int = 8
    multiples: tuple[int, ...] = (1, 4, 16)
    target_d: int = 96
    target_layers: int = 3
    target_steps: int = 300
    target_batch: int = 16
    target_lr: float = 2e-3
    draft_d: int = 48
    draft_layers: int = 2
    draft_steps: int = 250
    draft_batch: int = 16
    draft_lr: float = 3e-3
    n_train_docs: int = 128
    n_test_docs: int = 32
    seeds: int = 5
    gamma: int = 7
    temperatures: tuple[float, ...] = (0.0, 1.0)
    cost_reps: int = 30
    threads: int = 1

    @property
    def doc_len(self) -> int:
        return self.window * max(self.multiples)


FULL = Hook3Config()
QUICK = Hook3Config(
    window=8,
    stride=4,
    key=8,
    value=8,
    multiples=(1, 2, 4),
    target_d=32,
    target_layers=1,
    target_steps=15,
    target_batch=8,
    draft_d=32,
    draft_layers=1,
    draft_steps=6,
    draft_batch=8,
    n_train_docs=6,
    n_test_docs=6,
    seeds=2,
    gamma=3,
    cost_reps=2,
)


def _tkey(t: float) -> str:
    return f"T={t:g}"


def _mkey(m: int) -> str:
    return f"{m}x"


def total_ticks(cfg: Hook3Config) -> int:
    per = (
        cfg.target_steps
        + cfg.n_train_docs
        + cfg.n_test_docs
        + cfg.seeds * len(ARMS) * (cfg.draft_steps + len(cfg.temperatures) * len(cfg.multiples))
    )
    return per * len(cfg.corpora)


def _spans(ids: np.ndarray, n: int, length: int, rng: np.random.Generator | None) -> np.ndarray:
    """``n`` spans of ``length``: random starts (``rng``) or evenly spaced ones (``rng=None``)."""
    from v22sdk.specdec.errors import SpecDecError

    if len(ids) < length + 1:
        raise SpecDecError(f"a split of {len(ids)} characters is shorter than a {length}-character document")
    if rng is None:
        starts = np.linspace(0, len(ids) - length, n).round().astype(np.int64)
    else:
        starts = rng.integers(0, len(ids) - length, size=n)
    return np.stack([ids[s : s + length] for s in starts]).astype(np.int64)


def _train_draft(cfg, arm: str, vocab: int, docs, positions, passages, seed: int, tick):
    """One draft of ``arm`` on the training documents; the batches depend on the seed only."""
    import torch
    import torch.nn.functional as F

    from v22sdk.specdec.longctx import ViewDraft
    from v22sdk.specdec.train import _cosine_lr, seed_everything

    seed_everything(seed)
    draft = ViewDraft(vocab, cfg.doc_len + cfg.gamma, d=cfg.draft_d, n_layer=cfg.draft_layers)
    opt = torch.optim.AdamW(draft.parameters(), lr=cfg.draft_lr, weight_decay=0.01, betas=(0.9, 0.98))
    rng = np.random.default_rng(seed)
    docs_t = torch.from_numpy(docs)
    w, g = cfg.window, cfg.gamma
    draft.train()
    for step in range(cfg.draft_steps):
        for grp in opt.param_groups:
            grp["lr"] = _cosine_lr(step, cfg.draft_steps, cfg.draft_lr, warmup=max(cfg.draft_steps // 20, 1))
        rows = rng.integers(0, len(docs), size=cfg.draft_batch)
        k = int(rng.integers(0, len(positions)))  # one position per batch: rectangular full-view batches
        t = int(positions[k])
        r = torch.from_numpy(rows)[:, None]
        idx = torch.arange(t - w, t + g)
        x, y = docs_t[r, idx], docs_t[r, idx + 1]  # the window and the round: every arm predicts these
        if arm == "full":
            prefix = docs_t[rows, : t - w]
            logits = draft(torch.cat([prefix, x], dim=1), torch.ones(len(rows), t + g, dtype=torch.int64))
            logits = logits[:, t - w :]
        elif arm == "window":
            logits = draft(x, torch.ones_like(x))
        else:
            rec = torch.from_numpy(passages[arm][rows, k])
            seg = torch.cat([torch.zeros_like(rec), torch.ones_like(x)], dim=1)
            logits = draft(torch.cat([rec, x], dim=1), seg)[:, rec.shape[1] :]
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(draft.parameters(), 1.0)
        opt.step()
        tick(1)
    return draft.eval()


def _ci(x) -> tuple[float, float, float]:
    """Mean and 95% t-interval of per-seed values ``x``."""
    from scipy import stats

    x = np.asarray(x, dtype=float)
    m = float(x.mean())
    if len(x) < 2:
        return m, -math.inf, math.inf
    half = float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return m, m - half, m + half


def share_interval(a, b, c) -> dict:
    """Share of the gap ``c - a`` that ``b`` recovers, paired over seeds: the point estimate
    ``mean(b - a) / mean(c - a)``, the contrast ``(b - a) - MIN_SHARE (c - a)`` with its 95%
    t-interval, and Fieller's 95% set: the shares ``s`` for which the contrast ``(b - a) - s (c - a)``
    has a t-interval containing 0. It is an interval when the gap itself is clearly non-zero;
    otherwise it is unbounded (``share_lo`` / ``share_hi`` ``None``)."""
    from scipy import stats

    a, b, c = (np.asarray(v, dtype=float) for v in (a, b, c))
    gap, gain = c - a, b - a
    n = len(a)
    share = float(gain.mean() / gap.mean()) if gap.mean() != 0 else math.nan
    con = _ci(gain - MIN_SHARE * gap)
    lo = hi = None
    empty = False
    if n >= 2:
        q = float(stats.t.ppf(0.975, n - 1)) ** 2 / n
        cov = np.cov(np.stack([gain, gap]), ddof=1)
        mg, mG = gain.mean(), gap.mean()
        qa = mG * mG - q * cov[1, 1]
        qb = -2 * mg * mG + 2 * q * cov[0, 1]
        qc = mg * mg - q * cov[0, 0]
        disc = qb * qb - 4 * qa * qc
        if qa > 0:
            if disc < 0:
                empty = True
            else:
                r = math.sqrt(disc)
                lo, hi = float((-qb - r) / (2 * qa)), float((-qb + r) / (2 * qa))
    return {
        "share": share,
        "contrast": {"mean": con[0], "lo": con[1], "hi": con[2]},
        "share_lo": lo,
        "share_hi": hi,
        "empty": empty,
    }


def _measure_view_ms(draft, view: str, contexts, passages, window: int, reps: int) -> float:
    """Median CPU ms for the draft to read its view once (batch 1; the lab's draft has no KV cache)."""
    import torch

    from v22sdk.specdec.costs import _time_ms
    from v22sdk.specdec.longctx import view_input

    ctx = contexts[:1]
    rec = passages[:1] if passages is not None else None
    idx, seg = view_input(view, ctx, rec, window)
    with torch.no_grad():
        return _time_ms(lambda: draft(idx, seg), reps)


def run_experiment(
    cfg: Hook3Config, out_dir: Path, tick: Callable[[int], None] | None = None, say: Callable[[str], None] | None = None
) -> dict:
    """Run everything in ``cfg``; write ``results.json`` and ``report.md`` to ``out_dir``."""
    import scipy.stats  # noqa: F401
    import torch  # noqa: F401
    from threadpoolctl import threadpool_limits

    with threadpool_limits(cfg.threads):
        return _run(cfg, out_dir, tick, say)


def _run(cfg: Hook3Config, out_dir: Path, tick, say) -> dict:
    import torch

    from v22sdk.specdec.corpus import CORPORA, load_corpus
    from v22sdk.specdec.longctx import DocumentMemory, Geometry, KeyEncoder, ViewDraftRunner, recalls_for
    from v22sdk.specdec.metrics import analytic_tau
    from v22sdk.specdec.models import TargetConfig, TransformerTarget
    from v22sdk.specdec.train import bits_per_char, train_target

    torch.set_num_threads(cfg.threads)
    tick = tick or (lambda n: None)
    say = say or (lambda s: None)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_start = time.time()
    data: dict = {"experiment": EXPERIMENT, "config": asdict(cfg), "corpora": {}}
    geo = Geometry(cfg.window, cfg.stride, cfg.key, cfg.value)
    L, g = cfg.doc_len, cfg.gamma
    eval_pos = [cfg.window * m for m in cfg.multiples]
    train_pos = list(range(cfg.window, L + 1, cfg.stride))

    for name in cfg.corpora:
        ci = CORPORA.index(name)
        corpus = load_corpus(name)
        V = corpus.vocab.size
        tcfg = TargetConfig(
            vocab=V, d=cfg.target_d, n_layer=cfg.target_layers, block=L + g + 1, feature_layers=(cfg.target_layers,)
        )
        say(f"[{name}] training target (vocab {V}, block {tcfg.block})")
        c0 = time.process_time()
        model = train_target(
            corpus.train, tcfg, cfg.target_steps, cfg.target_batch, cfg.target_lr, seed=0, tick=lambda: tick(1)
        )
        target = TransformerTarget(model)
        held = np.concatenate([corpus.val, corpus.test])
        res: dict = {
            "info": corpus.info(),
            "target": {
                "params": sum(p.numel() for p in model.parameters()),
                "block": tcfg.block,
                "train_cpu_s": time.process_time() - c0,
                "heldout_bits_per_char": bits_per_char(model, held, 64, seed=2),
            },
        }
        say(f"[{name}] target held-out bits/char {res['target']['heldout_bits_per_char']:.3f}; memory recalls")
        train_docs = _spans(corpus.train, cfg.n_train_docs, L + g + 1, np.random.default_rng(20 + ci))
        test_docs = _spans(held, cfg.n_test_docs, L, None)
        encoder = KeyEncoder(corpus.vocab)
        memory = DocumentMemory(geo, encoder)
        c0 = time.process_time()
        train_pass, _ = recalls_for(memory, train_docs, train_pos, pad=V, tick=tick)
        test_pass, test_ends = recalls_for(memory, test_docs, eval_pos, pad=V, tick=tick)
        st = memory.stats
        res["memory"] = {
            "documents": st.documents,
            "writes": st.writes,
            "queries": st.queries,
            "hits": st.hits,
            "recall_cpu_s": time.process_time() - c0,
            "encode_calls": encoder.calls,
            "encode_lookups": encoder.lookups,
            "encode_ms": 1000 * encoder.cpu_s / max(encoder.calls, 1),
            "write_ms": 1000 * st.write_cpu_s / max(st.writes, 1),
            "search_ms": 1000 * st.search_cpu_s / max(st.queries, 1),
            "store_bytes_per_doc": float(np.mean(st.store_bytes)) if st.store_bytes else 0.0,
            "turns_per_doc": len(geo.turn_ends(L + g + 1)),
            "retrieval": _retrieval_quality(test_docs, test_ends, eval_pos, geo, cfg),
        }
        contexts = {t: torch.from_numpy(test_docs[:, :t]) for t in eval_pos}
        seeds = []
        costs: dict = {}
        for seed in range(cfg.seeds):
            per: dict = {}
            for arm in ARMS:
                say(f"[{name}] seed {seed}: training the {arm} draft")
                draft = _train_draft(cfg, arm, V, train_docs, train_pos, train_pass, seed, tick)
                runner = ViewDraftRunner(draft, arm, cfg.window)
                per[arm] = {}
                for ti, temp in enumerate(cfg.temperatures):
                    for mi, t in enumerate(eval_pos):
                        runner.recalled = (
                            torch.from_numpy(test_pass[arm][:, mi]) if arm in ("memory", "cosine") else None
                        )
                        tau, alpha = analytic_tau(
                            target, runner, contexts[t], g, temp, seed=9000 + 100 * seed + 10 * ti + mi
                        )
                        per[arm][f"{_tkey(temp)}/{_mkey(cfg.multiples[mi])}"] = {
                            "tau": float(tau.mean()),
                            "alpha": alpha.mean(0).tolist(),
                        }
                        tick(1)
                if seed == 0:
                    costs[arm] = {"params": draft.n_params(), "view_ms": {}}
                    for mi, t in enumerate(eval_pos):
                        rec = torch.from_numpy(test_pass[arm][:, mi]) if arm in ("memory", "cosine") else None
                        costs[arm]["view_ms"][_mkey(cfg.multiples[mi])] = _measure_view_ms(
                            draft, arm, contexts[t], rec, cfg.window, cfg.cost_reps
                        )
            seeds.append({"seed": seed, **per})
            say(
                f"[{name}] seed {seed}: tau "
                + "; ".join(
                    f"{a} {per[a][f'{_tkey(cfg.temperatures[-1])}/{_mkey(cfg.multiples[-1])}']['tau']:.3f}"
                    for a in ARMS
                )
            )
            res["seeds"] = seeds
            res["costs"] = _cost_model(cfg, geo, costs, res["memory"])
            res["comparisons"] = _comparisons(seeds, cfg)
            data["corpora"][name] = res
            data["runtime_s"] = time.time() - t_start
            data["verdict"] = verdict(data)
            _write(data, out_dir)
    return data


def _retrieval_quality(docs, ends, positions, geo, cfg, n: int = 6) -> dict:
    """Per multiple: share of queries that recalled a turn, and share whose recalled passage holds
    the document's true next ``n`` characters somewhere (text a copying draft could use), for each
    view; for comparison the same share for the whole document so far (what the full view holds)."""
    out: dict = {}
    for mi, t in enumerate(positions):
        row: dict = {}
        measurable = t + n <= docs.shape[1]
        nxt = [docs[i, t : t + n].tobytes() for i in range(len(docs))] if measurable else None

        def holds(i, lo, hi):
            if not measurable or lo < 0:
                return False
            return nxt[i] in b"".join(docs[i, k : k + n].tobytes() for k in range(lo, max(hi - n + 1, lo)))

        for view in ("memory", "cosine"):
            j = ends[view][:, mi]
            row[view] = {
                "found": float(np.mean(j >= 0)),
                "holds_next": float(
                    np.mean([holds(i, jj - geo.key, jj + geo.value) if jj >= 0 else False for i, jj in enumerate(j)])
                ),
            }
        row["full_holds_next"] = float(np.mean([holds(i, 0, t) for i in range(len(docs))]))
        row["window_holds_next"] = float(np.mean([holds(i, t - cfg.window, t) for i in range(len(docs))]))
        row["same_turn"] = float(np.mean(ends["memory"][:, mi] == ends["cosine"][:, mi]))
        row["measurable"] = measurable
        out[_mkey(cfg.multiples[mi])] = row
    return out


def _cost_model(cfg, geo, measured: dict, mem: dict) -> dict:
    """Per arm and multiple: tokens the draft attends to at its first drafted token, the KV cache a
    cached implementation would hold (float32, K and V per layer), attention multiply-adds per
    drafted token, the measured time to read the view once, and for the memory arms the store."""
    out: dict = {}
    for arm in ARMS:
        rows = {}
        for m in cfg.multiples:
            t = cfg.window * m
            n_att = t if arm == "full" else cfg.window + (geo.recall_len if arm in ("memory", "cosine") else 0)
            turns = len(geo.turn_ends(t)) if arm in ("memory", "cosine") else 0
            row = {
                "tokens_attended": n_att,
                "kv_bytes": 2 * cfg.draft_layers * cfg.draft_d * n_att * 4,
                "attention_macs_per_token": 2 * cfg.draft_layers * cfg.draft_d * n_att,
                "view_ms": measured.get(arm, {}).get("view_ms", {}).get(_mkey(m)),
                "store_turns": turns,
                "store_vector_bytes": turns * (256 + 384) * 4,
            }
            if arm in ("memory", "cosine"):
                row["retrieval_ms_per_query"] = mem["encode_ms"] + mem["search_ms"]
                row["write_ms_per_turn"] = mem["encode_ms"] + mem["write_ms"]
            rows[_mkey(m)] = row
        out[arm] = {"params": measured.get(arm, {}).get("params"), "by_length": rows}
    return out


def _comparisons(seeds: list[dict], cfg: Hook3Config) -> dict:
    from v22sdk.specdec.stats import paired_diff

    out: dict = {}
    if len(seeds) < 2:
        return out
    for temp in cfg.temperatures:
        for m in cfg.multiples:
            k = f"{_tkey(temp)}/{_mkey(m)}"
            v = {a: [s[a][k]["tau"] for s in seeds] for a in ARMS}
            out[k] = {
                "full-window": paired_diff(v["full"], v["window"]).as_dict(),
                "memory-window": paired_diff(v["memory"], v["window"]).as_dict(),
                "cosine-window": paired_diff(v["cosine"], v["window"]).as_dict(),
                "memory-cosine": paired_diff(v["memory"], v["cosine"]).as_dict(),
                "share": share_interval(v["window"], v["memory"], v["full"]),
            }
    return out


def verdict(data: dict) -> dict:
    """Apply the pre-registered criterion to the longest documents of every corpus and temperature."""
    cells = {}
    for name, r in data["corpora"].items():
        cfg = data["config"]
        m = max(cfg["multiples"])
        for temp in cfg["temperatures"]:
            comp = r.get("comparisons", {}).get(f"{_tkey(temp)}/{_mkey(m)}")
            if comp is None:
                continue
            gap, sh = comp["full-window"], comp["share"]
            testable = gap["lo"] > 0 and gap["rel_gain"] >= MIN_GAP
            cells[f"{name}/{_tkey(temp)}"] = {
                "testable": testable,
                "passes": testable and sh["contrast"]["lo"] > 0,
                "falls_short": testable and sh["contrast"]["hi"] < 0,
                "gap": gap["diff"],
                "gap_rel": gap["rel_gain"],
                "gap_lo": gap["lo"],
                "share": sh["share"],
                "share_lo": sh["share_lo"],
                "share_hi": sh["share_hi"],
                "jaccard": comp["memory-cosine"]["diff"],
                "jaccard_lo": comp["memory-cosine"]["lo"],
                "jaccard_hi": comp["memory-cosine"]["hi"],
            }
    if not cells:
        return {"text": "no results", "cells": {}}
    cfg = data["config"]
    complete = (
        set(data["corpora"]) >= set(CRITERION["corpora"] if CRITERION else cfg["corpora"])
        and all(
            len(r.get("seeds", [])) >= (CRITERION or {}).get("seeds", cfg["seeds"]) for r in data["corpora"].values()
        )
        and len(cfg["temperatures"]) >= 2
    )
    testable = [k for k, c in cells.items() if c["testable"]]
    passing = [k for k in testable if cells[k]["passes"]]
    short = [k for k in testable if cells[k]["falls_short"]]

    def fmt_share(k, c):
        lo = "−∞" if c["share_lo"] is None else f"{c['share_lo']:.2f}"
        hi = "+∞" if c["share_hi"] is None else f"{c['share_hi']:.2f}"
        return (
            f"{k}: {c['share']:.2f} [{lo}, {hi}]"
            if c["share"] is not None and math.isfinite(c["share"])
            else f"{k}: – (no gap)"
        )

    shares = "; ".join(fmt_share(k, c) for k, c in cells.items())
    if not testable:
        text = (
            f"UNTESTABLE: in no cell does the full-context draft beat the window-only draft by >= "
            f"{100 * MIN_GAP:.0f}% with an interval above 0, so there is no gap for memory to recover"
        )
    elif len(passing) == len(cells):
        text = (
            f"hook (3) SUPPORTED: memory recall recovers more than {MIN_SHARE:.0%} of the window-to-full gap "
            f"(contrast interval above 0) in all {len(cells)} cells"
        )
    elif passing:
        text = (
            f"INCONSISTENT: memory recall recovers more than {MIN_SHARE:.0%} of the gap in {len(passing)} of "
            f"{len(cells)} cells only ({', '.join(passing)}), so the pre-registered criterion fails"
        )
    else:
        text = (
            f"NOT SUPPORTED: in no cell does memory recall recover more than {MIN_SHARE:.0%} of the gap with "
            f"an interval above 0" + (f"; it recovers significantly less in {', '.join(short)}" if short else "")
        )
    untest = [k for k in cells if k not in testable]
    if untest and testable:
        text += f" (no gap detected in {', '.join(untest)}: untestable there, which fails the criterion)"
    text += f". Shares of the gap recovered (95% set): {shares}"
    jac = [f"{k} {c['jaccard']:+.3f} [{c['jaccard_lo']:+.3f}, {c['jaccard_hi']:+.3f}]" for k, c in cells.items()]
    text += ". Hybrid minus cosine-only recall, tau: " + "; ".join(jac)
    if not complete:
        text += " [partial run: fewer corpora, temperatures or seeds than pre-registered]"
    return {"text": text, "cells": cells}


def _mean_sd(vals, digits: int = 3) -> str:
    a = np.asarray(vals, dtype=float)
    sd = a.std(ddof=1) if len(a) > 1 else 0.0
    return f"{a.mean():.{digits}f} ± {sd:.{digits}f}"


def _fmt_diff(d: dict) -> str:
    if d["lo"] is None or d["hi"] is None:
        return f"{d['diff']:+.3f} (no spread)"
    return f"{d['diff']:+.3f} [{d['lo']:+.3f}, {d['hi']:+.3f}]"


def _fmt_share(sh: dict) -> str:
    if sh["share"] is None:
        return "– (no gap)"
    if sh["empty"]:
        return f"{sh['share']:.2f} (no 95% set on the grid)"
    lo = "−∞" if sh["share_lo"] is None else f"{sh['share_lo']:.2f}"
    hi = "+∞" if sh["share_hi"] is None else f"{sh['share_hi']:.2f}"
    return f"{sh['share']:.2f} [{lo}, {hi}]"


def _kb(b: float) -> str:
    return f"{b / 1024:.1f}"


def tables(data: dict) -> dict:
    """The result tables (string cells) that the docs embed and the report prints."""
    cfg = data["config"]
    tau_rows, rec_rows, cost_rows, ret_rows, setup_rows = [], [], [], [], []
    for name, r in data["corpora"].items():
        mem = r["memory"]
        setup_rows.append(
            [
                name,
                str(r["info"]["vocab_size"]),
                f"{r['target']['params']:,}",
                f"{r['target']['heldout_bits_per_char']:.2f}",
                f"{r['costs']['window']['params']:,}" if r.get("costs") else "–",
                f"{mem['turns_per_doc']}",
                f"{mem['encode_ms']:.1f}",
                f"{mem['write_ms']:.2f}",
                f"{mem['search_ms']:.2f}",
                _kb(mem["store_bytes_per_doc"]),
            ]
        )
        seeds = r.get("seeds", [])
        for temp in cfg["temperatures"]:
            for m in cfg["multiples"]:
                k = f"{_tkey(temp)}/{_mkey(m)}"
                if seeds:
                    tau_rows.append(
                        [name, _tkey(temp), _mkey(m), *[_mean_sd([s[a][k]["tau"] for s in seeds]) for a in ARMS]]
                    )
                comp = r.get("comparisons", {}).get(k)
                if comp:
                    rec_rows.append(
                        [
                            name,
                            _tkey(temp),
                            _mkey(m),
                            _fmt_diff(comp["full-window"]),
                            _fmt_diff(comp["memory-window"]),
                            _fmt_diff(comp["cosine-window"]),
                            _fmt_share(comp["share"]),
                            _fmt_diff(
                                {
                                    "diff": comp["share"]["contrast"]["mean"],
                                    "lo": comp["share"]["contrast"]["lo"],
                                    "hi": comp["share"]["contrast"]["hi"],
                                }
                            ),
                            _fmt_diff(comp["memory-cosine"]),
                        ]
                    )
        for m in cfg["multiples"]:
            q = mem["retrieval"][_mkey(m)]
            shares = (
                [
                    f"{q['window_holds_next']:.3f}",
                    f"{q['memory']['holds_next']:.3f}",
                    f"{q['cosine']['holds_next']:.3f}",
                    f"{q['full_holds_next']:.3f}",
                ]
                if q.get("measurable", True)
                else ["– (document ends at t)"] * 4
            )
            ret_rows.append([name, _mkey(m), f"{q['memory']['found']:.2f}", *shares, f"{q['same_turn']:.2f}"])
        for arm in ARMS:
            for m in cfg["multiples"]:
                c = r.get("costs", {}).get(arm, {}).get("by_length", {}).get(_mkey(m))
                if not c:
                    continue
                cost_rows.append(
                    [
                        name,
                        arm,
                        _mkey(m),
                        str(c["tokens_attended"]),
                        _kb(c["kv_bytes"]),
                        f"{c['attention_macs_per_token']:,}",
                        "–" if c["view_ms"] is None else f"{c['view_ms']:.2f}",
                        str(c["store_turns"]) if arm in ("memory", "cosine") else "–",
                        _kb(c["store_vector_bytes"]) if arm in ("memory", "cosine") else "–",
                        f"{c['retrieval_ms_per_query']:.1f}" if "retrieval_ms_per_query" in c else "–",
                        f"{c['write_ms_per_turn']:.1f}" if "write_ms_per_turn" in c else "–",
                    ]
                )
    return {
        "setup": {
            "columns": [
                "corpus",
                "vocab",
                "target params",
                "target held-out bits/char",
                "draft params (each arm)",
                "memory turns / training document",
                "key encoding, ms",
                "memory write, ms",
                "memory search, ms",
                "SQLite store / document, KiB",
            ],
            "align": "lrrrrrrrrr",
            "rows": setup_rows,
        },
        "tau": {
            "columns": [
                "corpus",
                "T",
                "document / window",
                "(a) window",
                "(b) window + memory (hybrid)",
                "(d) window + memory (cosine)",
                "(c) full context",
            ],
            "align": "lllrrrr",
            "rows": tau_rows,
        },
        "recovery": {
            "columns": [
                "corpus",
                "T",
                "document / window",
                "(c) − (a), 95% CI",
                "(b) − (a)",
                "(d) − (a)",
                "share of gap recovered by (b) [95% set]",
                f"(b) − (a) − {MIN_SHARE:g}·((c) − (a))",
                "(b) − (d): Jaccard term",
            ],
            "align": "lllrrrrrr",
            "rows": rec_rows,
        },
        "retrieval": {
            "columns": [
                "corpus",
                "document / window",
                "queries that recalled a turn",
                "true next 6 chars occur in: the window",
                "the hybrid recall",
                "the cosine recall",
                "the document so far",
                "hybrid and cosine recalled the same turn",
            ],
            "align": "llrrrrrr",
            "rows": ret_rows,
        },
        "costs": {
            "columns": [
                "corpus",
                "arm",
                "document / window",
                "tokens attended",
                "KV cache, KiB",
                "attention MACs / drafted token",
                "read the view once, ms (batch 1, CPU)",
                "memory turns",
                "memory vectors, KiB",
                "retrieval / query, ms",
                "write / turn, ms",
            ],
            "align": "lllrrrrrrrr",
            "rows": cost_rows,
        },
    }


def render_report(doc: dict) -> str:
    """Markdown tables of a hook-3 results file (what ``v22sdk specdec report`` prints)."""
    from v22sdk.evidence import markdown_table

    data = doc.get("data", doc)
    cfg = data["config"]
    lines = [
        f"# Speculative-decoding hook-(3) experiment: window {cfg['window']}, documents up to "
        f"{cfg['window'] * max(cfg['multiples'])} characters, gamma={cfg['gamma']}, seeds={cfg['seeds']}, "
        f"{cfg['n_test_docs']} held-out documents, runtime {data.get('runtime_s', 0):.0f} s",
        "",
    ]
    for tname, table in tables(data).items():
        lines += [f"## {tname}", "", markdown_table(table)]
    lines += ["## Verdict (pre-registered criterion)", "", data["verdict"]["text"], ""]
    return "\n".join(lines)


def _finite(x):
    """``x`` with every non-finite float replaced by ``None`` (JSON has no NaN or infinity)."""
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
