"""Shared pieces of the experiments on the data suite (scripts/eval_suite.py, eval_transfer.py,
knockout_engine.py, ablate_engine.py --suite): build or reuse a suite, load it with its parts,
train an engine on a subset and predict, score by part, and the statistics of the tables.

Everything is written under one work folder (default ``runs/suite-lab``, git-ignored): the built
suites, the token cache (``V22SDK_CACHE`` is pointed there, never at the user's cache) and the
checkpoints the knock-out script reuses.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WORK = ROOT / "runs" / "suite-lab"
PART_ORDER = ("handwriting", "speech", "instruments", "text")


def use_work(work: Path) -> Path:
    """Create the work folder and point the token cache into it (before anything tokenizes)."""
    work.mkdir(parents=True, exist_ok=True)
    os.environ["V22SDK_CACHE"] = str(work / "cache")
    return work


def one_thread() -> None:
    """One thread everywhere (a shared 2-core machine)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:
        pass
    import torch

    torch.set_num_threads(1)


def suite(work: Path, size: str, seed: int) -> Path:
    """The manifest of the suite (size, seed) under ``work``, built when absent or damaged."""
    from v22sdk.engine.data.suite import build_suite, verify_suite

    folder = work / f"suite-{size}-{seed}"
    if (folder / "suite.jsonl").is_file() and not verify_suite(folder):
        return folder / "suite.jsonl"
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    log(f"building suite {size} seed {seed}")
    return build_suite(folder, size=size, seed=seed)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


@dataclass
class Loaded:
    """A tokenized suite: the Dataset, its pinned split, each example's part and manifest record."""

    manifest: Path
    ds: Any
    split: dict[str, list[int]]
    parts: np.ndarray
    records: list[dict]

    def targets(self, idx: Sequence[int]) -> list[str]:
        return [self.ds.examples[i].target for i in idx]

    def where(self, split: str, parts: Sequence[str] | None = None) -> list[int]:
        return [i for i in self.split[split] if parts is None or self.parts[i] in parts]


def load(manifest: Path) -> Loaded:
    from v22sdk.engine.data import load_dataset, make_split

    ds = load_dataset(manifest)
    records = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_line = {n: rec for n, rec in enumerate(records, 1)}
    recs = [by_line[ex.line] for ex in ds.examples]
    split = make_split(ds.examples, 0)  # every example is pinned: the seed does not matter
    assert all(ex.split for ex in ds.examples), "a suite pins every split"
    return Loaded(manifest, ds, split, np.array([r["part"] for r in recs]), recs)


def train_and_predict(
    data: Loaded,
    train_idx: Sequence[int],
    cfg,
    eval_idx: Sequence[int],
    *,
    checkpoint: Path | None = None,
    val_idx: Sequence[int] = (),
    select_every: int | None = None,
) -> dict[str, Any]:
    """Train an engine (``cfg``) on ``train_idx``; decoded answers for ``eval_idx``.

    The output vocabulary comes from the training targets. ``select_every``: measure exact match
    on ``val_idx`` every that many epochs (and at the end) and keep the model (with its memory)
    of the best point, ties to the earliest; otherwise the model of the last epoch is used.
    ``checkpoint``: also save the model used there (with its split), for the knock-out script."""
    import copy

    from v22sdk.engine.train import Trainer, predict
    from v22sdk.engine.vocab import OutputVocab

    split = {"train": sorted(train_idx), "val": sorted(val_idx), "test": sorted(eval_idx)}
    vocab = OutputVocab.build(data.targets(split["train"]))
    start = time.process_time()
    trainer = Trainer(cfg, data.ds, split, vocab)
    best: dict[str, Any] = {"acc": -1.0, "epoch": None}
    curve: list[tuple[int, float]] = []

    def on_epoch(rec: dict) -> None:
        if select_every and "val" in rec:
            curve.append((rec["epoch"], round(rec["val"]["exact"], 4)))
            if rec["val"]["exact"] > best["acc"]:
                mem = trainer.model.memory
                best.update(
                    acc=rec["val"]["exact"],
                    epoch=rec["epoch"],
                    state=copy.deepcopy(trainer.model.state_dict()),
                    memory=copy.deepcopy(mem.state_dict()) if mem is not None else None,
                )

    trainer.fit(eval_every=select_every or 10**9, on_epoch=on_epoch)
    if select_every and best["epoch"] is not None:
        trainer.model.load_state_dict(best["state"])
        if best["memory"] is not None:
            trainer.model.memory.load_state_dict(best["memory"])
    seconds = time.process_time() - start
    test = trainer.data["test"]
    preds: list[str] = []
    for s in range(0, test.size, 64):
        b = test.take(range(s, min(s + 64, test.size)))
        preds += predict(trainer.model, b["tokens"], b["mask"], vocab, b["attr_sets"], write_memory=False)[0]
    if checkpoint is not None:
        from v22sdk.engine.checkpoint import save_checkpoint

        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        save_checkpoint(
            checkpoint,
            trainer.model,
            cfg,
            vocab,
            split=split,
            data={"source": str(data.manifest), "identity": data.ds.identity, "n": len(data.ds.examples)},
        )
    last = trainer.history[-1] if trainer.history else {}
    worst_lb = max((h.get("lb", 0.0) for h in trainer.history), default=0.0)
    return {
        "pred": dict(zip(split["test"], preds)),
        "cpu_s": round(seconds, 1),
        "epochs": last.get("epoch"),
        "final_loss": last.get("loss"),
        "final_ce": last.get("ce"),
        "spikes": trainer.spikes,
        "rollbacks": trainer.rollbacks,
        "ac_alarms": trainer.ac_alarms,
        "epochs_lb_at_clamp": sum(1 for h in trainer.history if h.get("lb", 0.0) >= 9.99),
        "max_epoch_lb": worst_lb,
        "selected_epoch": best["epoch"],
        "val_curve": curve,
    }


def accuracy_by_part(data: Loaded, pred: dict[int, str]) -> dict[str, dict[str, float]]:
    """Exact-match accuracy per part (and ``all``) over the indices of ``pred``."""
    out: dict[str, list[bool]] = {}
    for i, p in pred.items():
        ok = p == data.ds.examples[i].target
        out.setdefault(str(data.parts[i]), []).append(ok)
        out.setdefault("all", []).append(ok)
    return {k: {"acc": float(np.mean(v)), "n": len(v)} for k, v in out.items()}


# -- statistics -----------------------------------------------------------------------------------
def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean and the t-based confidence interval of the mean (half-width 0 for one value)."""
    v = np.asarray(values, dtype=float)
    mean = float(v.mean())
    if len(v) < 2:
        return mean, mean, mean
    from scipy import stats

    half = float(stats.t.ppf(0.5 + level / 2, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v)))
    return mean, mean - half, mean + half


def fmt_ci(values: Sequence[float], signed: bool = False, digits: int = 3) -> str:
    """ "mean [low, high]": the 95 % t-interval, clipped to the range the values can take
    (accuracies [0, 1]; differences of accuracies, ``signed``, [-1, 1])."""
    mean, lo, hi = t_interval(values)
    lo, hi = max(lo, -1.0 if signed else 0.0), min(hi, 1.0)
    f = f"{{:+.{digits}f}}" if signed else f"{{:.{digits}f}}"
    return f"{f.format(mean)} [{f.format(lo)}, {f.format(hi)}]"
