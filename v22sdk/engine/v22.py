"""The V22 model: P7 → P3-L → ABC' → A, B, C, D, E → gate → P6 (spec §5.1), all stages always on.

``V22Model.forward(tokens (B, L, 640), mask (B, L)) → dict`` of every stage's output. The model
never looks at the modality: only at the token's two halves.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from .config import EngineConfig
from .stages import (
    ABCPrime,
    InputProjection,
    P3LAttributeLinkage,
    P6Decoder,
    P7CrossSentence,
    StageA,
    StageB,
    StageC,
    StageD,
    StageE,
    ThreeChannelGate,
    _xavier,
    masked_mean,
)


def positional_attr_sets(ids: torch.Tensor, mask: torch.Tensor) -> list[frozenset[str]]:
    """Attribute sets named by (slot, sign) when the caller gave none: ``{"attr[12]+", ...}``."""
    out = []
    for row, m in zip(ids.tolist(), mask.tolist()):
        out.append(frozenset(f"attr[{i // 2}]{'-' if i % 2 else '+'}" for i, ok in zip(row, m) if ok))
    return out


class V22Model(nn.Module):
    """The V22 engine. ``vocab_emb`` (V, 256) is the output vocabulary's fixed embedding matrix."""

    def __init__(self, cfg: EngineConfig, vocab_emb: torch.Tensor, memory=None):
        super().__init__()
        self.cfg = cfg.check()
        self.register_buffer("vocab_emb", vocab_emb.float().clone())
        # [accuracy, CE] of the last training batch: P7's gate input at training AND inference
        self.register_buffer("loss_state", torch.zeros(12))
        self.loss_state: torch.Tensor
        self.input = InputProjection()
        self.p7 = P7CrossSentence(cfg)
        self.p3l = P3LAttributeLinkage(cfg)
        self.abc_prime = ABCPrime(cfg)
        self.stage_a, self.stage_b, self.stage_c = StageA(cfg), StageB(cfg), StageC(cfg)
        self.stage_d, self.stage_e = StageD(cfg), StageE(cfg)
        self.me_to_sent = _xavier(nn.Linear(384, 256), 0.5)
        self.gate = ThreeChannelGate(cfg)
        self.p6 = P6Decoder(cfg)
        self.stage_e.memory = memory
        self.aux = 1.0  # the self-heal factor on the gate's abc/sent channels (training sets it)

    @property
    def memory(self):
        return self.stage_e.memory

    def stage_groups(self) -> dict[str, list[nn.Parameter]]:
        """Parameters by optimiser group (keys of ``cfg.lr_mult``)."""
        groups = {
            "input": self.input,
            "p7": self.p7,
            "p6": self.p6,
            "p3l": self.p3l,
            "abc_prime": self.abc_prime,
            "abc": nn.ModuleList([self.stage_a, self.stage_b, self.stage_c, self.stage_d, self.stage_e]),
            "gate": nn.ModuleList([self.gate, self.me_to_sent]),
        }
        return {k: list(m.parameters()) for k, m in groups.items()}

    def update_loss_state(self, accuracy: float, ce: float) -> None:
        self.loss_state.zero_()
        self.loss_state[0], self.loss_state[1] = float(accuracy), float(min(ce, 20.0))

    def forward(
        self, tokens: torch.Tensor, mask: torch.Tensor, attr_sets: Sequence[frozenset[str]] | None = None
    ) -> dict[str, torch.Tensor]:
        g = self.cfg.inject_gain
        attr = tokens[..., 256:]
        x = self.input(tokens)
        states, sent, word_gate = self.p7(x, mask, self.vocab_emb, self.loss_state)
        p3lf, ids, id_mask = self.p3l(attr, mask)
        abc_prime = self.abc_prime(p3lf)
        a_logits, ah = self.stage_a(attr, states, mask)
        attr_mean = masked_mean(attr, mask)
        ct = self.stage_b(ah, attr_mean, p3lf + g * abc_prime)
        ac = self.stage_c(ct)
        rel_logits, rd = self.stage_d(ct)
        if attr_sets is None and self.memory is not None:
            attr_sets = positional_attr_sets(ids, id_mask)
        me, recall_score = self.stage_e(rd, sent, attr_sets)
        gates = self.gate(self.abc_confidence(a_logits, ac, ct, recall_score), ac, sent, self.aux)
        sent_rich = sent + g * self.abc_prime.to_sent(abc_prime) + g * self.me_to_sent(me)
        logits = self.p6(sent_rich, gates, self.vocab_emb)
        return {
            "logits": logits,
            "a_logits": a_logits,
            "ct": ct,
            "ac": ac,
            "rel_logits": rel_logits,
            "rd": rd,
            "me": me,
            "sent_vec": sent,
            "word_gate": word_gate,
            "gates": gates,
            "attr_mean": attr_mean,
            "p3lf": p3lf,
        }

    @staticmethod
    def abc_confidence(a_logits, ac, ct, recall_score) -> torch.Tensor:
        """(B, 12) detached per-sample statistics of A, B, C, E: the gate's base channel.

        Upstream used batch statistics, which made one sample's output depend on its batch-mates.
        """
        with torch.no_grad():
            p = torch.softmax(a_logits, -1)
            ent = -(p * p.clamp_min(1e-9).log()).sum(-1)
            conf = torch.stack(
                [
                    p.max(-1).values,
                    ent,
                    p.argmax(-1).float() / a_logits.shape[-1],
                    ac.norm(dim=-1),
                    ac.std(-1),
                    ac.max(-1).values,
                    ct.norm(dim=-1) / 20.0,
                    ct.std(-1),
                    ac[:, :5].norm(dim=-1),
                    ac[:, 5:15].norm(dim=-1),
                    ac[:, 15:].norm(dim=-1),
                    recall_score,
                ],
                -1,
            )
        return conf.nan_to_num(0.0, 0.0, 0.0)


class BaselineModel(nn.Module):
    """The plain baseline: 640→256 projection, a small transformer encoder, masked mean, the same P6.

    ``forward(tokens (B, L, 640), mask (B, L)) → {"logits": (B, P, V), "sent_vec": (B, 256)}``.
    """

    def __init__(self, cfg: EngineConfig, vocab_emb: torch.Tensor, memory=None):
        super().__init__()
        self.cfg = cfg.check()
        self.register_buffer("vocab_emb", vocab_emb.float().clone())
        self.register_buffer("loss_state", torch.zeros(12))
        self.loss_state: torch.Tensor
        self.input = InputProjection()
        self.pos_embed = nn.Parameter(torch.randn(cfg.max_len, 256) * 0.02)
        layer = nn.TransformerEncoderLayer(
            256, cfg.base_heads, cfg.base_ff, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, cfg.base_layers, enable_nested_tensor=False)
        self.p6 = P6Decoder(cfg)
        self.aux = 1.0

    memory = None

    def stage_groups(self) -> dict[str, list[nn.Parameter]]:
        return {
            "input": list(self.input.parameters()),
            "p6": list(self.p6.parameters()),
            "baseline": [self.pos_embed, *self.encoder.parameters()],
        }

    def update_loss_state(self, accuracy: float, ce: float) -> None:
        pass

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor, attr_sets=None) -> dict[str, torch.Tensor]:
        x = self.input(tokens) + self.pos_embed[: tokens.shape[1]]
        h = self.encoder(x, src_key_padding_mask=~mask)
        sent = masked_mean(h, mask)
        return {"logits": self.p6(sent, None, self.vocab_emb), "sent_vec": sent}


def build_model(cfg: EngineConfig, vocab_emb: torch.Tensor) -> nn.Module:
    """The model for ``cfg.engine`` (``v22`` with its memory backend, or ``baseline``)."""
    if cfg.engine == "baseline":
        return BaselineModel(cfg, vocab_emb)
    if cfg.engine != "v22":
        from ..plugins import get_registry

        spec = get_registry().get_class("engines", cfg.engine)
        return spec.build_model(cfg, vocab_emb)
    memory = None
    if cfg.memory:
        if cfg.memory_backend == "fifo":
            from .fifo import FifoMemory

            memory = FifoMemory(cfg.memory_capacity)
        else:
            from ..plugins import get_registry

            memory = get_registry().get_class("memory_backends", cfg.memory_backend)()
    return V22Model(cfg, vocab_emb, memory)


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
