"""The stages of the V22 graph (spec §5), each an ``nn.Module`` whose docstring gives its shapes.

Notation: ``B`` batch, ``L`` input tokens, ``V`` output vocabulary, ``P`` P6 output positions,
``K`` active attribute ids per sample, ``H`` heads. Every stage runs at training and at inference.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import EngineConfig


def _xavier(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.xavier_uniform_(layer.weight, gain=gain)
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)
    return layer


def mlp(sizes: list[int], gain: float = 0.5, last_act: bool = False) -> nn.Sequential:
    """Linear layers with GELU between them (and after the last one if ``last_act``)."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(_xavier(nn.Linear(a, b), gain))
        if i < len(sizes) - 2 or last_act:
            layers.append(nn.GELU())
    return nn.Sequential(*layers)


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``x`` (B, L, D) over the tokens where ``mask`` (B, L) is True → (B, D)."""
    m = mask.to(x.dtype).unsqueeze(-1)
    return (x * m).sum(1) / m.sum(1).clamp_min(1.0)


class RMSNorm(nn.Module):
    """Root-mean-square normalisation over the last axis, with a learned scale."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class InputProjection(nn.Module):
    """640 → 256 (no bias): where a token's embedding and its attributes first meet.

    (B, L, 640) → (B, L, 256).
    """

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(640, 256, bias=False)
        nn.init.orthogonal_(self.proj.weight)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.proj(tokens)


def sinusoidal(length: int, dim: int) -> torch.Tensor:
    """(length, dim) sinusoidal position table. Computed in numpy: under a meta-device context
    (fast checkpoint loading) torch factory calls would import torch's reference ops (~2 s)."""
    import numpy as np

    pos = np.arange(length, dtype=np.float64)[:, None]
    freq = np.exp(np.arange(0, dim, 2, dtype=np.float64) * (-math.log(10000.0) / dim))
    pe = np.zeros((length, dim), dtype=np.float32)
    pe[:, 0::2] = np.sin(pos * freq)
    pe[:, 1::2] = np.cos(pos * freq)
    return torch.from_numpy(pe)


#: torch's CPU flash-attention op (returns the log-sum-exp too); None on a torch without it.
_FLASH_CPU = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)


def attention_lse(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None, scale: float, *, fused: bool = True
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q·kᵀ·scale + bias) @ v and the log-sum-exp of each row.

    q (..., Lq, d), k (..., Lk, d), v (..., Lk, dv), bias broadcastable to (..., Lq, Lk) or None
    → out (..., Lq, dv), lse (..., Lq). On CPU (``fused``) this is torch's fused flash-attention
    kernel, which never holds the (..., Lq, Lk) score tensor: for P3-L's 416 single-dimension
    heads that tensor was 109 MB per batch, and the passes over it (mostly page faults on fresh
    memory) were three quarters of a ``full`` training step. Same maths as the explicit path below
    (used off CPU, for float64, and as the tests' reference); results agree to float rounding.
    """
    if fused and q.device.type == "cpu" and _FLASH_CPU is not None and q.dtype == torch.float32:
        mask = None if bias is None else bias.to(q.dtype)
        out, lse = _FLASH_CPU(q.contiguous(), k.contiguous(), v.contiguous(), attn_mask=mask, scale=scale)
        return out, lse
    s = (q @ k.transpose(-1, -2)) * scale
    if bias is not None:
        s = s + bias
    return torch.softmax(s, dim=-1) @ v, torch.logsumexp(s, dim=-1)


def set_fused(model: nn.Module, fused: bool) -> nn.Module:
    """Switch every stage of ``model`` between its fused kernels (default) and the explicit
    reference formulation (same maths; the tests compare them, the benchmark counts FLOPs on it)."""
    for module in model.modules():
        if hasattr(module, "fused"):
            module.fused = fused  # type: ignore[assignment]  # torch types attributes as Tensor | Module
    return model


class P7CrossSentence(nn.Module):
    """P7: attention from the input tokens to the output vocabulary, with loss-conditioned gates.

    Inputs: ``x`` (B, L, 256), ``mask`` (B, L) bool, ``vocab`` (V, 256) (the vocabulary's fixed
    embeddings: keys and values), ``loss_vec`` (12,) (previous batch's [accuracy, CE, 0…]).
    Queries are RMS-normalised per head (16 heads × 16-D), keys too ("RMSNorm Q/K"). Heads compete
    within ``p7_groups`` groups; the word gate comes from the loss vector through explore → meta.
    Outputs: ``states`` (B, L, 256) = x + gated word output (our residual), ``sent_vec`` (B, 256)
    (not normalised), ``word_gate`` (256,).
    """

    def __init__(self, cfg: EngineConfig):
        super().__init__()
        h, d, g = cfg.p7_heads, cfg.p7_head_dim, cfg.p7_groups
        self.h, self.d, self.g = h, d, g
        self.max_len = cfg.max_len
        self.register_buffer("pe", sinusoidal(cfg.max_len, 256), persistent=False)
        self.pos_weight = nn.Parameter(torch.ones(()))
        self.pos_embed = nn.Parameter(torch.randn(cfg.max_len, 256) * 0.02)
        self.q_proj = _xavier(nn.Linear(256, h * d, bias=False), 0.5)
        self.k_proj = _xavier(nn.Linear(256, h * d, bias=False), 0.5)
        self.q_norm, self.k_norm = RMSNorm(d), RMSNorm(d)
        self.v_heads = nn.Parameter(torch.randn(h, d, 256) * 0.02)
        self.temperature = nn.Parameter(torch.ones(()))
        self.group_bias = nn.Parameter(torch.eye(g, d) * 0.5)
        self.out_proj = _xavier(nn.Linear(g * d, 256), 0.1)
        self.explore_net = mlp([12, 48, 64, 64], gain=0.5)
        self.explore_state = nn.Parameter(torch.zeros(64))
        self.meta_state = nn.Parameter(torch.zeros(128))
        self.meta_word_gate = mlp([192, 96, 256], gain=0.5)
        self.sharpness = nn.Parameter(torch.ones(()))
        self.sent_pos_w = nn.Parameter(torch.ones(cfg.max_len))
        self.sent_proj = _xavier(nn.Linear(256, 256), 0.5)
        self.meta_sent_mod = _xavier(nn.Linear(192, 256), 0.1)
        self.meta_sent_gate = _xavier(nn.Linear(192, 256), 0.1)
        self.fused = True  # fused attention kernel (False: the explicit reference formulation)

    def reset_buffers(self) -> None:
        """Recompute the (non-persistent) sinusoidal table, e.g. after building on the meta device."""
        self.pe = sinusoidal(self.max_len, 256).to(self.pos_embed.device)

    def _vocab_kv(self, vocab: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The vocabulary's keys and values (H, V, d): functions of the parameters only."""
        k = self.k_norm(self.k_proj(vocab).view(-1, self.h, self.d)).transpose(0, 1)  # (H,V,d)
        v = torch.einsum("vm,hdm->hvd", vocab, self.v_heads)  # (H,V,d)
        return k, v

    def _meta(self, loss_vec: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(word_gate (256,), sentence modulation (256,), meta (192,)): functions of the parameters
        and the loss vector only."""
        explore = self.explore_net(loss_vec) + self.explore_state
        meta = torch.cat([self.meta_state, explore])  # (192,)
        word_gate = torch.sigmoid(self.meta_word_gate(meta) * self.sharpness)  # (256,)
        sent_mod = self.meta_sent_mod(meta) * torch.sigmoid(self.meta_sent_gate(meta) * self.sharpness)
        return word_gate, sent_mod, meta

    def _constant(self, name: str, fn, *inputs: torch.Tensor):
        """``fn(*inputs)``, kept between inference calls (eval mode, no gradients: what ``run`` does)
        while the inputs and every parameter of this module are unchanged (same storage, same
        version counter: an optimiser step or a state-dict load bumps it). At batch 1 these
        parameter-only terms were 7.4 of the 16.1 MFLOP of a call (benchmarks/bench_infer.py)."""
        if self.training or torch.is_grad_enabled():
            return fn(*inputs)
        try:
            key = tuple((t.data_ptr(), t._version) for t in (*inputs, *self.parameters()))
        except RuntimeError:  # inference-mode tensors have no version counter: no cache
            return fn(*inputs)
        cache = self.__dict__.setdefault("_inference_cache", {})
        hit = cache.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        out = fn(*inputs)
        cache[name] = (key, out)
        return out

    def forward(self, x: torch.Tensor, mask: torch.Tensor, vocab: torch.Tensor, loss_vec: torch.Tensor):
        b, n, _ = x.shape
        x = x + self.pe[:n] * self.pos_weight + self.pos_embed[:n]
        q = self.q_norm(self.q_proj(x).view(b, n, self.h, self.d)).transpose(1, 2)  # (B,H,L,d)
        k, v = self._constant("kv", self._vocab_kv, vocab)
        scale = (F.softplus(self.temperature) + 0.1) / math.sqrt(self.d)
        if self.fused:
            # every query of a head, whatever its sample, attends over the same vocabulary keys:
            # one (1, H, B·L, d) fused attention, never holding the (B, H, L, V) scores. The learned
            # scale multiplies q (so that it keeps its gradient) instead of the scores.
            qs = (q * scale).transpose(0, 1).reshape(1, self.h, b * n, self.d)
            out = attention_lse(qs, k.unsqueeze(0), v.unsqueeze(0), None, 1.0)[0]
            out = out.view(self.h, b, n, self.d).transpose(0, 1)  # (B,H,L,d)
        else:  # the reference formulation (tests check that both agree)
            attn = torch.softmax(torch.einsum("bhld,hvd->bhlv", q, k) * scale, dim=-1)
            out = torch.einsum("bhlv,hvd->bhld", attn, v)  # (B,H,L,d)
        out = out.reshape(b, self.g, self.h // self.g, n, self.d)
        # group competition: within a group, heads are weighted by their agreement with the group's bias
        w = torch.softmax(torch.einsum("bghld,gd->bghl", out, self.group_bias) / 0.5, dim=2)
        grouped = (w.unsqueeze(-1) * out).sum(2)  # (B,G,L,d)
        word_raw = self.out_proj(grouped.permute(0, 2, 1, 3).reshape(b, n, self.g * self.d))
        word_gate, sent_mod, _ = self._constant("meta", self._meta, loss_vec)
        states = x + word_raw * word_gate
        # a weighted mean, not upstream's sum, so that sent_vec's scale does not grow with L
        weights = (self.sent_pos_w[:n] * mask.to(x.dtype)).unsqueeze(-1)
        pooled = (states * weights).sum(1) / mask.to(x.dtype).sum(1, keepdim=True).clamp_min(1.0)
        sent = self.sent_proj(pooled) + sent_mod
        return states, sent, word_gate


class P3LAttributeLinkage(nn.Module):
    """P3-L: attention among the active named attributes of each sample (single-dimension heads).

    An attribute id is (slot position, sign): ``id = 2·slot + (value < 0)``, 768 ids. Positions are
    shared by every modality of a zone, so the same module serves any modality's slots. For each
    sample the ``K`` slots with the largest peak |value| over its tokens are kept.
    Inputs: ``attr`` (B, L, 384), ``mask`` (B, L). Output: ``p3lf`` (B, p3l_feat) = per group
    [mean peak attention, attention std, attention range] (zero-padded) + a learned summary of the
    attended attribute embeddings; also ``ids`` (B, K) and ``id_mask`` (B, K).

    With ``fused`` (the default) the (B, H, K, K) attention matrix is never built: the context comes
    from a fused attention kernel, and the statistics from its per-row log-sum-exp (see
    :meth:`_stats_from_lse`); ``fused = False`` runs the explicit reference formulation.
    """

    def __init__(self, cfg: EngineConfig):
        super().__init__()
        self.groups = list(cfg.p3l_groups)
        heads = sum(self.groups)
        self.heads = heads
        self.k_active, self.feat = cfg.p3l_max_active, cfg.p3l_feat
        self.id_embed = nn.Embedding(768, 384)
        nn.init.normal_(self.id_embed.weight, std=384**-0.5)
        self.q = _xavier(nn.Linear(384, heads, bias=False), 0.1)
        self.k = _xavier(nn.Linear(384, heads, bias=False), 0.1)
        self.v = _xavier(nn.Linear(384, heads, bias=False), 0.1)
        self.out = _xavier(nn.Linear(heads, 384, bias=False), 0.1)
        self.summary = _xavier(nn.Linear(384, cfg.p3l_feat), 0.5)
        self.temperature = 0.67
        self.fused = True

    @staticmethod
    def active_ids(attr: torch.Tensor, mask: torch.Tensor, k: int):
        """(ids, values, id_mask), each (B, K): the K strongest signed slots of each sample."""
        a = attr * mask.to(attr.dtype).unsqueeze(-1)
        peak_at = a.abs().argmax(1, keepdim=True)  # (B,1,384)
        peak = a.gather(1, peak_at).squeeze(1)  # (B,384)
        vals, slots = peak.abs().topk(min(k, 384), dim=-1)
        signed = peak.gather(1, slots)
        ids = 2 * slots + (signed < 0).long()
        return ids, signed, vals > 0

    def forward(self, attr: torch.Tensor, mask: torch.Tensor):
        ids, signed, m = self.active_ids(attr, mask, self.k_active)
        e = self.id_embed(ids)  # (B,K,384)
        # single-dimension heads: score_ij = q_i·k_j / T; absent keys get a finite -1e4 (not -inf,
        # so a sample with no active id gives zeros rather than NaN gradients)
        if self.fused:
            # one matmul for q, k and v (three heads-wide projections of the same embeddings)
            qkv = F.linear(e, torch.cat([self.q.weight, self.k.weight, self.v.weight]))  # (B,K,3H)
            q, k, v = (t.transpose(1, 2).unsqueeze(-1) for t in qkv.split(self.heads, -1))  # (B,H,K,1)
            bias = (~m).to(q.dtype).mul(-1e4)[:, None, None, :]  # (B,1,1,K)
            ctx, lse = attention_lse(q, k, v, bias, 1.0 / self.temperature)  # (B,H,K,1), (B,H,K)
            ctx = ctx.squeeze(-1).transpose(1, 2)  # (B,K,H)
            stats = self._stats_from_lse(q.detach().squeeze(-1), k.detach().squeeze(-1), lse.detach(), m)
        else:
            q, k, v = (proj(e).transpose(1, 2) for proj in (self.q, self.k, self.v))  # (B,H,K)
            bias = (~m).to(q.dtype).mul(-1e4)[:, None, None, :]  # (B,1,1,K)
            attn = torch.softmax(q.unsqueeze(-1) * k.unsqueeze(-2) / self.temperature + bias, dim=-1)  # (B,H,K,K)
            ctx = (attn @ v.unsqueeze(-1)).squeeze(-1).transpose(1, 2)  # (B,K,H)
            stats = self._stats(attn.detach(), m)
        pooled = masked_mean(self.out(ctx * signed.abs().unsqueeze(-1)), m)  # (B,384)
        return F.pad(stats, (0, self.feat - stats.shape[1])) + self.summary(pooled), ids, m

    def _group_index(self, device) -> torch.Tensor:
        """(H,) group number of each head."""
        sizes = torch.tensor(self.groups, device=device)
        return torch.repeat_interleave(torch.arange(len(self.groups), device=device), sizes)

    def _by_group(self, x: torch.Tensor, reduce: str) -> torch.Tensor:
        """(B, H) → (B, G): ``reduce`` ("mean", "amax", "amin") over each group's heads."""
        idx = self._group_index(x.device).expand_as(x)
        out = x.new_zeros(x.shape[0], len(self.groups))
        return out.scatter_reduce_(1, idx, x, reduce=reduce, include_self=False)

    def _combine(self, mean1, mean2, peak, hi, lo, m) -> torch.Tensor:
        """Per-head (B, H) statistics → per group [mean peak, std, range] (B, 3·groups), zero for
        samples with fewer than 2 active ids."""
        std = (self._by_group(mean2, "mean") - self._by_group(mean1, "mean").pow(2)).clamp_min(0).sqrt()
        rng = (self._by_group(hi, "amax") - self._by_group(lo, "amin")).clamp_min(0)
        feats = torch.stack([self._by_group(peak, "mean"), std, rng], -1).flatten(1)  # (B,3G)
        return feats * (m.sum(1, keepdim=True) >= 2)

    @torch.no_grad()
    def _stats(self, attn: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        """Per group [mean peak attention, attention std, attention range] over the active pairs
        (B, 3·groups); zero for samples with fewer than 2 active ids. Descriptive statistics, like
        the gate's abc_conf: no gradient (P3-L learns through the summary path). Reference
        formulation, from the full (B, H, K, K) attention."""
        mf = m.to(attn.dtype)
        pair = (mf[:, :, None] * mf[:, None, :]).unsqueeze(1)  # (B,1,K,K)
        npair = pair.sum((2, 3)).clamp_min(1.0)  # (B,1)
        masked = attn * pair
        mean1 = masked.sum((2, 3)) / npair  # (B,H)
        mean2 = (masked * attn).sum((2, 3)) / npair
        peak = (attn.amax(-1) * mf[:, None, :]).sum(-1) / mf.sum(1, keepdim=True).clamp_min(1)
        hi = masked.amax((2, 3))
        lo = (attn + (1 - pair) * 2.0).amin((2, 3))
        return self._combine(mean1, mean2, peak, hi, lo, m)

    @torch.no_grad()
    def _stats_from_lse(self, q: torch.Tensor, k: torch.Tensor, lse: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        """The same statistics as :meth:`_stats` from q, k (B, H, K) and the rows' log-sum-exp
        (B, H, K), in O(B·H·K) memory. Why this is exact: a key that is absent (bias −1e4) has
        attention exactly 0 in float32 next to any present key, so over the active pairs

        * each active row sums to 1, so mean1 = n / n² (n active ids);
        * the scores of row i are q_i·k_j/T, linear in k_j: the row's largest and smallest
          attention are at the largest and smallest active k_j (swapped when q_i < 0), i.e.
          exp(s_max − lse_i) and exp(s_min − lse_i);
        * Σ_j attn_ij² = exp(lse2_i − 2·lse_i), with lse2 the log-sum-exp of the doubled scores
          (one more fused pass, without gradient).
        """
        mk = m[:, None, :]  # (B,1,K)
        big = torch.finfo(q.dtype).max
        kmax = torch.where(mk, k, -big).amax(-1, keepdim=True)  # (B,H,1)
        kmin = torch.where(mk, k, big).amin(-1, keepdim=True)
        has = m.any(1)[:, None, None]
        kmax, kmin = torch.where(has, kmax, 0.0), torch.where(has, kmin, 0.0)  # no active key: unused
        a, b = q * kmax / self.temperature, q * kmin / self.temperature  # (B,H,K)
        row_max = torch.exp(torch.maximum(a, b) - lse)
        row_min = torch.exp(torch.minimum(a, b) - lse)
        bias = (~m).to(q.dtype).mul(-1e4)[:, None, None, :]
        lse2 = attention_lse(
            q.unsqueeze(-1), k.unsqueeze(-1), q.new_zeros(k.shape).unsqueeze(-1), bias, 2.0 / self.temperature
        )[1]
        sumsq = torch.exp(lse2 - 2 * lse)
        mi = m[:, None, :]  # rows i that are active
        n = m.sum(1, keepdim=True).to(q.dtype)  # (B,1)
        npair = (n * n).clamp_min(1.0)
        mean1 = (n / npair).expand(-1, q.shape[1])  # (B,H)
        mean2 = torch.where(mi, sumsq, 0.0).sum(-1) / npair
        peak = torch.where(mi, row_max, 0.0).sum(-1) / n.clamp_min(1)
        hi = torch.where(mi, row_max, 0.0).amax(-1)
        lo = torch.where(mi, row_min, 2.0).amin(-1)
        return self._combine(mean1, mean2, peak, hi, lo, m)


class ABCPrime(nn.Module):
    """ABC' pressurisation: p3lf (B, F) → abc_prime (B, F); MLP F→h→h→F, near-zero init gain.

    Injected additively (never concatenated; upstream found concatenation broke training):
    into B's input as ``p3lf + gain·abc_prime`` and into sent_vec through ``to_sent`` (F → 256).
    """

    def __init__(self, cfg: EngineConfig):
        super().__init__()
        self.net = mlp([cfg.p3l_feat, cfg.abc_hidden, cfg.abc_hidden, cfg.p3l_feat], gain=cfg.abc_init_gain)
        self.to_sent = _xavier(nn.Linear(cfg.p3l_feat, 256), cfg.abc_init_gain)

    def forward(self, p3lf: torch.Tensor) -> torch.Tensor:
        return self.net(p3lf)


class StageA(nn.Module):
    """A, structure: per-token MLP on [attr ‖ state] (B, L, 640) → masked mean → ``a_logits`` (B, classes), ``ah`` (B, 128)."""

    def __init__(self, cfg: EngineConfig):
        super().__init__()
        self.token = mlp([640, cfg.a_hidden, 128], last_act=True)
        self.pool = mlp([128, 128], last_act=True)
        self.classify = _xavier(nn.Linear(128, cfg.a_classes), 0.5)

    def forward(self, attr: torch.Tensor, states: torch.Tensor, mask: torch.Tensor):
        ah = self.pool(masked_mean(self.token(torch.cat([attr, states], -1)), mask))
        return self.classify(ah), ah


class StageB(nn.Module):
    """B, content: [ah 128 ‖ mean attr 384 ‖ p3lf_rich F] → ``ct`` (B, 384), regressed on the mean attr."""

    def __init__(self, cfg: EngineConfig):
        super().__init__()
        self.net = mlp([128 + 384 + cfg.p3l_feat, cfg.b_hidden, 128, 384])

    def forward(self, ah: torch.Tensor, attr_mean: torch.Tensor, p3lf_rich: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([ah, attr_mean, p3lf_rich], -1))


class StageC(nn.Module):
    """C, tone: ct (B, 384) → ``ac`` (B, 48), soft-normalised ac / (‖ac‖ + 1)."""

    def __init__(self, cfg: EngineConfig):
        super().__init__()
        self.net = mlp([384, cfg.c_hidden, cfg.c_hidden, cfg.c_dim])

    def forward(self, ct: torch.Tensor) -> torch.Tensor:
        ac = self.net(ct)
        return ac / (ac.norm(dim=-1, keepdim=True) + 1.0)


class StageD(nn.Module):
    """D, relation review: ct (B, 384) → ``rel_logits`` (B, 11) and ``rd`` (B, 384), unit-norm if spherical."""

    def __init__(self, cfg: EngineConfig):
        super().__init__()
        self.encoder = mlp([384, 384, 384], last_act=True)
        self.relations = _xavier(nn.Linear(384, cfg.d_relations), 0.5)
        self.spherical = cfg.spherical

    def forward(self, ct: torch.Tensor):
        enc = self.encoder(ct)
        rd = F.normalize(enc, dim=-1) if self.spherical else enc
        return self.relations(enc), rd


class StageE(nn.Module):
    """E, memory read-write head: rd (B, 384), sent_vec (B, 256) → ``me`` (B, 384), recall score (B,).

    ``me = n(n(net(rd)) + gain·recall)`` where ``n`` is unit normalisation when spherical and
    ``recall`` the memory's top-1 value for ``sent_vec``, a detached prior (no gradient flows into
    the memory). The new turn (sent_vec, me) is written back, detached. The memory itself is a
    :class:`~v22sdk.engine.memory_head.MemoryHead` set by the owner (``None`` disables E's memory).
    """

    def __init__(self, cfg: EngineConfig):
        super().__init__()
        self.net = mlp([384, 384, 384])
        self.spherical, self.gain = cfg.spherical, cfg.inject_gain
        self.memory = None  # a MemoryHead; not a submodule (its state is not a parameter)
        self.write_enabled = True
        #: (sent_vec, me, Recall) of the last forward with a memory, all detached: lets a caller
        #: write the turn itself once it knows what was decoded (``v22sdk run`` does).
        self.last = None

    def _n(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, dim=-1) if self.spherical else x

    def forward(self, rd: torch.Tensor, sent_vec: torch.Tensor, attr_sets):
        me = self._n(self.net(rd))
        score = torch.zeros(rd.shape[0], device=rd.device)
        if self.memory is not None:
            recall = self.memory.read(sent_vec.detach(), attr_sets)
            prior = recall.values.to(rd).detach() * recall.found.to(rd).unsqueeze(-1)
            me = self._n(me + self.gain * prior)
            score = recall.scores.to(rd) * recall.found.to(rd)
            if self.write_enabled:
                self.memory.write(sent_vec.detach(), me.detach(), attr_sets)
            self.last = (sent_vec.detach(), me.detach(), recall)
        return me, score


class ThreeChannelGate(nn.Module):
    """The gate: [base(abc_conf 12) ‖ aux·abc(ac 48) ‖ aux·sent(sv 256)] (B, 384) → TurboExplore → TurboMeta → (B, 256) ∈ (0, 1).

    ``sigmoid`` TurboMeta: σ((b + x)/10); ``vmf``: σ(κ ⊙ x̂ ⊙ μ̂ + b) with x̂, μ̂ unit vectors
    (element-wise, as upstream; ≈ 0.5 at initialisation).
    """

    def __init__(self, cfg: EngineConfig):
        super().__init__()
        self.base = nn.Linear(12, 128)
        self.abc = nn.Linear(cfg.c_dim, 128)
        self.sent = nn.Linear(256, 128)
        for layer, std in ((self.base, 0.03), (self.abc, 0.01), (self.sent, 0.03)):
            nn.init.normal_(layer.weight, std=std)
            nn.init.zeros_(layer.bias)
        self.explore = mlp([384, cfg.gate_hidden, cfg.gate_hidden, 256], gain=0.1)
        self.variant = cfg.gate
        self.bias = nn.Parameter(torch.zeros(256))
        if cfg.gate == "vmf":
            self.mu = nn.Parameter(torch.randn(256) * 0.1)
            self.kappa = nn.Parameter(torch.full((256,), 2.0))

    def forward(self, abc_conf: torch.Tensor, ac: torch.Tensor, sent_vec: torch.Tensor, aux: float) -> torch.Tensor:
        x = self.explore(torch.cat([self.base(abc_conf), aux * self.abc(ac), aux * self.sent(sent_vec)], -1))
        if self.variant == "vmf":
            return torch.sigmoid(self.kappa * F.normalize(x, dim=-1) * F.normalize(self.mu, dim=0) + self.bias)
        return torch.sigmoid((self.bias + x) / 10.0)


class P6Decoder(nn.Module):
    """P6: tied-weight parallel decoder. sent (B, 256), gates (B, 256) or None, vocab (V, 256) → logits (B, P, V).

    h = encoder(sent) ⊙ gates; position i has its own head: pred_i = W_i (h + pos_i) + b_i;
    logits = pred @ vocabᵀ (the vocabulary's fixed embeddings: tied weights). No autoregression.
    """

    def __init__(self, cfg: EngineConfig):
        super().__init__()
        p = cfg.out_positions
        self.encoder = mlp([256, cfg.p6_hidden, 256], last_act=True)
        self.pos_embed = nn.Parameter(torch.randn(p, 256) * 0.02)
        w = torch.empty(p, 256, 256)
        for i in range(p):
            nn.init.xavier_uniform_(w[i], gain=0.1)
        self.heads = nn.Parameter(w)
        self.head_bias = nn.Parameter(torch.zeros(p, 256))

    def forward(self, sent: torch.Tensor, gates: torch.Tensor | None, vocab: torch.Tensor) -> torch.Tensor:
        h = self.encoder(sent)
        if gates is not None:
            h = h * gates
        x = h.unsqueeze(0) + self.pos_embed.unsqueeze(1)  # (P,B,256)
        # (P,O,I) @ (P,I,B): the heads' gradient then comes out of the backward matmul already in
        # their (P,O,I) layout (an einsum here made autograd copy the 33 MB `full` gradient)
        pred = torch.bmm(self.heads, x.transpose(1, 2)).permute(2, 0, 1) + self.head_bias  # (B,P,256)
        return pred @ vocab.t()
