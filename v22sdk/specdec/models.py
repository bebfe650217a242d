"""The experiment's models: a small causal char-level transformer target and EAGLE-style drafts.

The drafts differ only in how the injected target features are normalised (RFC hook 1):

=========  ==================================================================  =================
arm        injected feature ``u`` (``f`` = concat of target layer outputs)       extra parameters
=========  ==================================================================  =================
none       ``W f``                                                              0
rmsnorm    ``g * RMSNorm(W f)`` (DeepSpec's ``hidden_norm(fc(h))``)            ``d_draft`` gain
sphere     ``F.normalize(W f)`` (the RFC: unit sphere, no gain)                 0
perlayer   ``W concat_l(g_l * RMSNorm(f_l))`` (EAGLE-3.1 ``fc_norm``)           ``L * d_target``
nofeat     ``0`` (control P0: a draft that never sees target features)         ``-F * d_draft``
=========  ==================================================================  =================

Draft recurrence (one GRU layer; it shares the target's frozen token embedding, final LayerNorm
and LM head): ``h_j = GRU([e(x_j); u_j], h_{j-1})``, ``logits_j = head(ln_f(W_o h_j))``. It warms
up over the last ``warmup`` context tokens with their own target features, then drafts with the
last verified position's features held fixed (the target has not seen the drafted tokens).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

from v22sdk.specdec.errors import SpecDecError
from v22sdk.specdec.sampler import probs_from_logits

ARMS = ("none", "rmsnorm", "sphere", "perlayer", "nofeat")


@dataclass(frozen=True)
class TargetConfig:
    """Target transformer size. ``feature_layers`` are 1-based block outputs fed to drafts."""

    vocab: int = 97
    d: int = 96
    n_layer: int = 3
    n_head: int = 4
    block: int = 64
    feature_layers: tuple[int, ...] = (1, 2, 3)


class _Block(nn.Module):
    """Pre-LN transformer block: ``(B, T, d) -> (B, T, d)``, causal attention."""

    def __init__(self, d: int, n_head: int):
        super().__init__()
        self.n_head = n_head
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        qh, kh, vh = (z.view(b, t, self.n_head, d // self.n_head).transpose(1, 2) for z in (q, k, v))
        att = F.scaled_dot_product_attention(qh, kh, vh, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class CharTransformer(nn.Module):
    """Causal char LM: ``idx (B, T)`` -> ``logits (B, T, V)``, ``features (B, T, L*d)``."""

    def __init__(self, cfg: TargetConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab, cfg.d)
        self.pos_emb = nn.Embedding(cfg.block, cfg.d)
        self.blocks = nn.ModuleList(_Block(cfg.d, cfg.n_head) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d)
        self.head = nn.Linear(cfg.d, cfg.vocab, bias=False)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
                if isinstance(m, nn.Linear) and m.bias is not None:  # an Embedding has none
                    nn.init.zeros_(m.bias)

    def forward(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        t = idx.shape[1]
        if t > self.cfg.block:
            raise SpecDecError(f"sequence of length {t} exceeds the target's block size {self.cfg.block}")
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(t))
        feats = []
        for i, blk in enumerate(self.blocks, start=1):
            x = blk(x)
            if i in self.cfg.feature_layers:
                feats.append(x)
        return self.head(self.ln_f(x)), torch.cat(feats, dim=-1)

    def lm_head(self, h: torch.Tensor) -> torch.Tensor:
        """The frozen output path shared with drafts: ``(..., d) -> (..., V)``."""
        return self.head(self.ln_f(h))


class TransformerTarget:
    """:class:`~v22sdk.specdec.sampler.Target` over a frozen :class:`CharTransformer` (float64 probs)."""

    def __init__(self, model: CharTransformer):
        self.model = model.eval()
        self.vocab_size = model.cfg.vocab

    @torch.no_grad()
    def distributions(self, context: torch.Tensor, drafted: torch.Tensor, temperature: float) -> torch.Tensor:
        seq = torch.cat([context, drafted.to(context.dtype)], dim=1)[:, -self.model.cfg.block :]
        logits, _ = self.model(seq)
        return probs_from_logits(logits[:, -(drafted.shape[1] + 1) :].double(), temperature)


def _rms(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


class EagleDraft(nn.Module):
    """EAGLE-style draft head on top of a frozen target; ``arm`` picks the feature normalisation."""

    def __init__(
        self,
        target: CharTransformer,
        arm: str,
        d_draft: int = 96,
        warmup: int = 16,
        layers: tuple[int, ...] | None = None,
    ):
        super().__init__()
        if arm not in ARMS:
            raise SpecDecError(f"unknown draft arm {arm!r}; choose one of {', '.join(ARMS)}")
        self.arm, self.d_draft, self.warmup = arm, d_draft, warmup
        self._target = (target,)  # a tuple, so the frozen target is not registered as a submodule
        cfg = target.cfg
        n_all = len(cfg.feature_layers)
        if layers is not None and (not layers or any(not 0 <= i < n_all for i in layers)):
            raise SpecDecError(f"layers {layers!r} must index the target's {n_all} feature blocks")
        # which of the target's feature blocks (0-based, in feature_layers order) the draft reads
        self.layers = tuple(layers) if layers is not None else None
        n_feat = len(self.layers) if self.layers is not None else n_all
        if arm != "nofeat":
            self.fc = nn.Linear(n_feat * cfg.d, d_draft, bias=False)
        if arm == "rmsnorm":
            self.gain = nn.Parameter(torch.ones(d_draft))
        if arm == "perlayer":
            self.layer_gain = nn.Parameter(torch.ones(n_feat, cfg.d))
        self.gru = nn.GRU(cfg.d + d_draft, d_draft, batch_first=True)
        self.out = nn.Linear(d_draft, cfg.d)

    @property
    def target(self) -> CharTransformer:
        return self._target[0]

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    def select(self, feats: torch.Tensor, layers: tuple[int, ...] | None = None) -> torch.Tensor:
        """The blocks ``layers`` (default: the draft's own) of target features ``(..., L*d)``."""
        layers = self.layers if layers is None else layers
        if layers is None:
            return feats
        d = self.target.cfg.d
        return torch.cat([feats[..., i * d : (i + 1) * d] for i in layers], dim=-1)

    def inject(self, feats: torch.Tensor) -> torch.Tensor:
        """Target features ``(..., L*d)`` -> injected draft input ``u (..., d_draft)``."""
        feats = self.select(feats)
        if self.arm == "nofeat":
            return feats.new_zeros(feats.shape[:-1] + (self.d_draft,))
        if self.arm == "perlayer":
            parts = feats.unflatten(-1, (self.layer_gain.shape[0], -1))
            feats = (self.layer_gain * _rms(parts)).flatten(-2)
        u = self.fc(feats)
        if self.arm == "rmsnorm":
            return self.gain * _rms(u)
        if self.arm == "sphere":
            return F.normalize(u, dim=-1)
        return u

    def step_seq(self, tokens: torch.Tensor, u: torch.Tensor, h: torch.Tensor | None = None):
        """``tokens (B, S)``, ``u (B, S, d_draft)`` -> ``logits (B, S, V)``, GRU state ``(1, B, d_draft)``."""
        with torch.no_grad():
            e = self.target.tok_emb(tokens)
        y, h = self.gru(torch.cat([e, u], dim=-1), h)
        return self.target.lm_head(self.out(y)), h

    def train_logits(self, tokens: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        """Training-time test over windows ``tokens (B, S)``, ``feats (B, S, L*d)`` -> ``(B, S, V)``.

        Positions ``< warmup`` see their own features; later ones the features of position
        ``warmup - 1`` (the last verified one), exactly as when drafting.
        """
        fresh = feats[:, : self.warmup]
        stale = feats[:, self.warmup - 1 : self.warmup].expand(-1, tokens.shape[1] - self.warmup, -1)
        u = self.inject(torch.cat([fresh, stale], dim=1))
        return self.step_seq(tokens, u)[0]


class EagleDraftRunner:
    """:class:`~v22sdk.specdec.sampler.Draft` over a trained :class:`EagleDraft` (float64 q)."""

    def __init__(self, draft: EagleDraft):
        self.draft = draft.eval()
        self.vocab_size = draft.target.cfg.vocab

    @torch.no_grad()
    def begin(self, context: torch.Tensor) -> Any:
        tgt = self.draft.target
        ctx = context[:, -tgt.cfg.block :]
        _, feats = tgt(ctx)
        w = min(self.draft.warmup, ctx.shape[1])
        u = self.draft.inject(feats[:, -w:])
        logits, h = self.draft.step_seq(ctx[:, -w:], u)
        return h, logits[:, -1], u[:, -1:]

    def distribution(self, state: Any, temperature: float) -> torch.Tensor:
        return probs_from_logits(state[1].double(), temperature)

    @torch.no_grad()
    def advance(self, state: Any, tokens: torch.Tensor) -> Any:
        h, _, u_last = state
        logits, h = self.draft.step_seq(tokens.unsqueeze(1), u_last, h)
        return h, logits[:, -1], u_last
