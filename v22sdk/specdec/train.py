"""Training of the frozen target and of the drafts, and the target-generated distillation data.

Like DeepSpec, drafts learn from the *target's own* continuations: held-out-free prefixes from
the train split, continued by the frozen target at temperature 1, with the target's hidden
features and next-token distributions cached once and shared by every arm and seed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from v22sdk.specdec.models import CharTransformer, EagleDraft, TargetConfig
from v22sdk.specdec.sampler import sample_from

Progress = Callable[[], None]


def seed_everything(seed: int) -> None:
    """Seed torch and numpy's legacy global RNG (code here uses explicit generators too)."""
    torch.manual_seed(seed)
    np.random.seed(seed)


def _windows(ids: np.ndarray, n: int, length: int, rng: np.random.Generator) -> torch.Tensor:
    starts = rng.integers(0, len(ids) - length, size=n)
    return torch.from_numpy(ids[starts[:, None] + np.arange(length)])


def _cosine_lr(step: int, total: int, lr: float, warmup: int) -> float:
    if step < warmup:
        return lr * (step + 1) / warmup
    return 0.1 * lr + 0.9 * lr * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(total - warmup, 1)))


def train_target(
    train_ids: np.ndarray, cfg: TargetConfig, steps: int, batch: int, lr: float, seed: int, tick: Progress | None = None
) -> CharTransformer:
    """Train the char transformer on random windows of ``train_ids``; returns it frozen (eval, no grad)."""
    seed_everything(seed)
    rng = np.random.default_rng(seed)
    model = CharTransformer(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.98))
    for step in range(steps):
        for grp in opt.param_groups:
            grp["lr"] = _cosine_lr(step, steps, lr, warmup=max(steps // 20, 1))
        win = _windows(train_ids, batch, cfg.block + 1, rng)
        logits, _ = model(win[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, cfg.vocab), win[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if tick:
            tick()
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


@torch.no_grad()
def bits_per_char(model: CharTransformer, ids: np.ndarray, n_windows: int, seed: int) -> float:
    """Held-out cross-entropy in bits per character over ``n_windows`` random full-block windows."""
    win = _windows(ids, n_windows, model.cfg.block + 1, np.random.default_rng(seed))
    logits, _ = model(win[:, :-1])
    ce = F.cross_entropy(logits.reshape(-1, model.cfg.vocab), win[:, 1:].reshape(-1))
    return float(ce) / math.log(2)


@torch.no_grad()
def continue_with_target(model: CharTransformer, prefixes: torch.Tensor, n_new: int, seed: int) -> torch.Tensor:
    """Ancestral sampling at temperature 1: ``prefixes (N, P)`` -> ``(N, P + n_new)``."""
    g = torch.Generator().manual_seed(seed)
    seq = prefixes
    for _ in range(n_new):
        logits, _ = model(seq[:, -model.cfg.block :])
        probs = torch.softmax(logits[:, -1].double(), dim=-1)
        nxt = sample_from(probs, torch.rand(seq.shape[0], generator=g, dtype=torch.float64))
        seq = torch.cat([seq, nxt.unsqueeze(1)], dim=1)
    return seq


def contexts_from(model: CharTransformer, ids: np.ndarray, n: int, prefix: int, n_new: int, seed: int) -> torch.Tensor:
    """``n`` contexts: ``prefix`` real characters of ``ids`` continued by ``n_new`` target samples."""
    pre = _windows(ids, n, prefix, np.random.default_rng(seed))
    return continue_with_target(model, pre, n_new, seed + 1)


@dataclass
class DistillData:
    """Cached target outputs over target-generated sequences.

    ``tokens (N, T)`` int64, ``feats (N, T, L*d)`` float32 target features, ``probs (N, T, V)``
    float32 target next-token distributions at temperature 1 (row ``j`` predicts token ``j+1``).
    """

    tokens: torch.Tensor
    feats: torch.Tensor
    probs: torch.Tensor


@torch.no_grad()
def build_distill_data(
    model: CharTransformer, train_ids: np.ndarray, n_seq: int, prefix: int, seed: int
) -> DistillData:
    """Generate ``n_seq`` full-block sequences from train-split prefixes and cache the target's outputs."""
    seqs = contexts_from(model, train_ids, n_seq, prefix, model.cfg.block - prefix, seed)
    feats, probs = [], []
    for chunk in seqs.split(256):
        logits, f = model(chunk)
        feats.append(f)
        probs.append(torch.softmax(logits, dim=-1))
    return DistillData(tokens=seqs, feats=torch.cat(feats), probs=torch.cat(probs))


def train_draft(
    target: CharTransformer,
    arm: str,
    data: DistillData,
    *,
    gamma: int,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    warmup: int = 16,
    tick: Progress | None = None,
    layers: tuple[int, ...] | None = None,
) -> EagleDraft:
    """Distil one draft arm on ``data`` with soft cross-entropy to the target distribution.

    Loss = mean over the ``gamma`` drafting positions + 0.5 x mean over the warm-up positions,
    identical for every arm. The seed fixes the initialisation and the window order, so arms with
    the same seed see the same batches (paired comparison).
    """
    seed_everything(seed)
    draft = EagleDraft(target, arm, d_draft=target.cfg.d, warmup=warmup, layers=layers)
    return fit_draft(draft, data, gamma=gamma, steps=steps, batch=batch, lr=lr, seed=seed, tick=tick)


def fit_draft(
    draft: EagleDraft,
    data: DistillData,
    *,
    gamma: int,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    tick: Progress | None = None,
    on_step: Callable[[int, EagleDraft], None] | None = None,
) -> EagleDraft:
    """Train ``draft`` (all its trainable parameters, a fresh AdamW) on ``data`` for ``steps`` steps;
    the loss of :func:`train_draft`. ``on_step(step, draft)`` runs before step ``step`` (0-based) and
    once more after the last one (``step == steps``); the draft is in eval mode there and in train
    mode again afterwards."""
    warmup = draft.warmup
    opt = torch.optim.AdamW([p for p in draft.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
    rng = np.random.default_rng(seed)
    length = warmup + gamma - 1  # inputs; row j predicts token j + 1
    n_seq, t_len = data.tokens.shape
    draft.train()
    for step in range(steps):
        if on_step is not None:
            on_step(step, draft.eval())
            draft.train()
        for grp in opt.param_groups:
            grp["lr"] = _cosine_lr(step, steps, lr, warmup=max(steps // 20, 1))
        rows = torch.from_numpy(rng.integers(0, n_seq, size=batch))
        starts = torch.from_numpy(rng.integers(0, t_len - length, size=batch))
        idx = starts[:, None] + torch.arange(length)
        tokens = data.tokens[rows[:, None], idx]
        feats = data.feats[rows[:, None], idx]
        p = data.probs[rows[:, None], idx]
        logq = torch.log_softmax(draft.train_logits(tokens, feats), dim=-1)
        ce = -(p * logq).sum(-1)  # (B, S)
        loss = ce[:, warmup - 1 :].mean() + 0.5 * ce[:, : warmup - 1].mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(draft.parameters(), 1.0)
        opt.step()
        if tick:
            tick()
    if on_step is not None:
        on_step(steps, draft.eval())
    return draft.eval()
