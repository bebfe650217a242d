"""The exact speculative sampler (Leviathan et al. 2023, Chen et al. 2023) and its interfaces.

One round, for a context ``x`` and ``gamma`` draft tokens ``d_1..d_g`` with draft distributions
``q_1..q_g`` and target distributions ``p_1..p_{g+1}`` (scored by the target in one pass):

1. accept ``d_i`` with probability ``min(1, p_i(d_i) / q_i(d_i))``, left to right, stopping at the
   first rejection;
2. at the first rejected position ``i`` emit a token drawn from ``norm(max(0, p_i - q_i))``;
3. when all ``gamma`` are accepted, emit a bonus token drawn from ``p_{g+1}``.

The emitted tokens are distributed exactly as the target's ancestral samples. That holds for any
draft, *provided the q used for acceptance is the distribution the token was really drawn from*
(DeepSpec issue #31: bf16 sampling, float32 acceptance). Here the draft never samples: it hands
the sampler a distribution and the sampler draws the token from that very tensor, so token and q
cannot diverge in value or dtype.

Temperature 0 means greedy: distributions are one-hot at the argmax (lowest index on ties), and
the rule above then reproduces plain greedy target decoding bit for bit.

Shapes: ``B`` batch, ``G`` = gamma, ``V`` vocabulary. All randomness enters as explicit uniforms in
[0, 1), so arms of an experiment can share random numbers and a round is reproducible.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import torch

from v22sdk.specdec.errors import DistributionError

#: Residual mass at or below this counts as empty: the residual is then ``p`` itself. It only
#: happens when p and q agree to rounding (a rejection then has probability ~ 0 anyway).
RESIDUAL_EPS = 1e-12


# --------------------------------------------------------------------------- distributions


def probs_from_logits(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """Turn logits ``(..., V)`` into probabilities ``(..., V)`` at ``temperature``.

    ``temperature == 0`` gives the one-hot distribution at the argmax (greedy decoding). The
    result keeps the dtype of ``logits``; the sampler uses whatever tensor this returns both to
    draw the token and to accept it.
    """
    if temperature < 0 or temperature != temperature:
        raise DistributionError("temperature", f"must be >= 0, got {temperature!r}")
    if temperature == 0:
        one_hot = torch.zeros_like(logits)
        return one_hot.scatter_(-1, logits.argmax(dim=-1, keepdim=True), 1.0)
    return torch.softmax(logits / temperature, dim=-1)


def sample_from(probs: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """Draw one index per row of ``probs (..., V)`` by inverse CDF with ``uniforms (...)`` in [0, 1).

    ``probs`` may be unnormalised (a residual): the uniform is scaled by the row's total. A
    zero-probability index is never returned, even at the rounding edge.
    """
    cdf = probs.cumsum(dim=-1)
    total = cdf[..., -1:]
    target = uniforms.to(probs.dtype).unsqueeze(-1) * total
    idx = torch.searchsorted(cdf.contiguous(), target.contiguous(), right=True).squeeze(-1)
    idx = idx.clamp_(max=probs.shape[-1] - 1)
    # u * total can round up to total; step back to the last index with mass in that case.
    bad = probs.gather(-1, idx.unsqueeze(-1)).squeeze(-1) <= 0
    if bool(bad.any()):
        last_nonzero = (probs > 0).to(torch.int64).cumsum(-1).argmax(-1)
        idx = torch.where(bad, last_nonzero, idx)
    return idx


def _check_probs(name: str, t: torch.Tensor) -> None:
    if not bool(torch.isfinite(t).all()):
        raise DistributionError(name, "contains non-finite values")
    if bool((t < 0).any()):
        raise DistributionError(name, "contains negative probabilities")


# --------------------------------------------------------------------------- one round


@dataclass(frozen=True)
class Verdict:
    """Result of verifying a batch of proposals.

    ``n_accepted (B,)`` int64 in [0, G]; ``next_token (B,)`` the residual or bonus token that ends
    the round. The round emits ``draft_tokens[b, :n_accepted[b]]`` followed by ``next_token[b]``,
    i.e. ``n_accepted + 1`` tokens (tau counts them all, bonus included).
    """

    n_accepted: torch.Tensor
    next_token: torch.Tensor


def verify(
    p: torch.Tensor,
    q: torch.Tensor,
    draft_tokens: torch.Tensor,
    u_accept: torch.Tensor,
    u_next: torch.Tensor,
    *,
    lengths: torch.Tensor | None = None,
    check: bool = True,
) -> Verdict:
    """Exact rejection step for a batch of rounds.

    ``p (B, G+1, V)`` target distributions (row ``i`` conditions on the first ``i`` draft tokens),
    ``q (B, G, V)`` the draft distributions the tokens were drawn from, ``draft_tokens (B, G)``,
    ``u_accept (B, G)`` and ``u_next (B,)`` independent uniforms in [0, 1).

    ``lengths (B,)`` (default: all ``G``) lets rounds of one batch propose different numbers of
    tokens: row ``b`` proposes only ``draft_tokens[b, :lengths[b]]``; the columns after it are
    padding, never accepted, and when all ``lengths[b]`` are accepted the round ends with a bonus
    token from ``p[b, lengths[b]]``. (The target is causal, so that row does not see the padding.)
    """
    if p.dim() != 3 or q.dim() != 3 or draft_tokens.dim() != 2:
        raise DistributionError("p/q/draft_tokens", "expected ranks 3, 3 and 2")
    bsz, gamma, vocab = q.shape
    if p.shape != (bsz, gamma + 1, vocab):
        raise DistributionError("p", f"shape {tuple(p.shape)} does not match q {tuple(q.shape)} (+1 row)")
    if draft_tokens.shape != (bsz, gamma):
        raise DistributionError("draft_tokens", f"shape {tuple(draft_tokens.shape)} != {(bsz, gamma)}")
    if check:
        _check_probs("p", p)
        _check_probs("q", q)
    proposed = None
    if lengths is not None:
        if lengths.shape != (bsz,) or bool((lengths < 0).any()) or bool((lengths > gamma).any()):
            raise DistributionError("lengths", f"expected shape {(bsz,)} with values in [0, {gamma}]")
        proposed = torch.arange(gamma) < lengths.unsqueeze(1)  # (B, G)
    dtype = torch.promote_types(p.dtype, q.dtype)
    p = p.to(dtype)
    q = q.to(dtype)
    if proposed is not None:  # padding columns: q = 0, so a full prefix ends with a bonus from p
        q = q * proposed.unsqueeze(-1).to(dtype)
    tok = draft_tokens.unsqueeze(-1)
    p_tok = p[:, :gamma].gather(-1, tok).squeeze(-1)
    q_tok = q.gather(-1, tok).squeeze(-1)
    missing = q_tok <= 0 if proposed is None else (q_tok <= 0) & proposed
    if check and bool(missing.any()):
        b, i = missing.nonzero()[0].tolist()
        raise DistributionError(
            "draft_tokens",
            f"token {int(draft_tokens[b, i])} at round {b} position {i} has q = 0: "
            "it cannot have been drawn from q (the draft must report the distribution it sampled)",
        )
    # accept iff u < p/q; written as u*q < p to avoid dividing (p >= q accepts whatever u < 1 is).
    accepted = u_accept.to(dtype) * q_tok < p_tok
    if proposed is not None:
        accepted &= proposed
    n_acc = accepted.to(torch.int64).cumprod(dim=-1).sum(dim=-1)

    rows = torch.arange(bsz)
    p_stop = p[rows, n_acc]  # (B, V): p at the first rejected position, or the bonus row
    q_pad = torch.cat([q, torch.zeros_like(q[:, :1])], dim=1)  # bonus row: residual = p
    residual = (p_stop - q_pad[rows, n_acc]).clamp_(min=0)
    empty = residual.sum(-1) <= RESIDUAL_EPS
    residual = torch.where(empty.unsqueeze(-1), p_stop, residual)
    return Verdict(n_accepted=n_acc, next_token=sample_from(residual, u_next))


# --------------------------------------------------------------------------- interfaces


@runtime_checkable
class Target(Protocol):
    """The model whose distribution the output must follow."""

    vocab_size: int

    def distributions(self, context: torch.Tensor, drafted: torch.Tensor, temperature: float) -> torch.Tensor:
        """``context (B, L)`` and ``drafted (B, k)`` token ids -> ``p (B, k+1, V)``.

        Row ``i`` is the next-token distribution after ``context + drafted[:, :i]`` (one target
        pass scores all rows). Use :func:`probs_from_logits` for the temperature.
        """


@runtime_checkable
class Draft(Protocol):
    """A proposer. It returns distributions; the sampler draws the tokens from them."""

    vocab_size: int

    def begin(self, context: torch.Tensor) -> Any:
        """Start a round after ``context (B, L)``; returns an opaque state."""

    def distribution(self, state: Any, temperature: float) -> torch.Tensor:
        """``q (B, V)`` for the next position given ``state``."""

    def advance(self, state: Any, tokens: torch.Tensor) -> Any:
        """Append the drawn ``tokens (B,)`` to the state; returns the new state."""


#: A scheduler is asked, before each draft position ``k`` (0-based) is drawn, whether to draft it.
#: It sees the tokens already drafted and the distribution ``q_k (V,)`` the next token *will* be
#: drawn from, never the token itself: that is what keeps it non-anticipating and the output exact
#: (DSpark appendix A shows a scheduler that looks at the drawn token biases the output).
Scheduler = Callable[[int, list[int], torch.Tensor], bool]


def fixed_gamma(k: int, drafted: list[int], q_next: torch.Tensor) -> bool:  # noqa: ARG001
    """Default scheduler: always draft (the round length is then ``gamma``)."""
    return True


def confidence_scheduler(threshold: float) -> Scheduler:
    """Stop drafting once the draft's next distribution has max probability below ``threshold``.

    A causal early-stop rule of the DSpark kind; it looks at ``q_k`` but not at the token.
    """

    def keep(k: int, drafted: list[int], q_next: torch.Tensor) -> bool:  # noqa: ARG001
        return k == 0 or float(q_next.max()) >= threshold

    return keep


# --------------------------------------------------------------------------- generation


@dataclass
class GenerationStats:
    """Per-round bookkeeping of :func:`speculative_generate`.

    ``accepted[r]`` draft tokens were accepted in round ``r`` out of ``proposed[r]``; tau, the mean
    number of tokens emitted per target call (bonus included), is ``mean(accepted) + 1``.
    """

    accepted: list[int] = field(default_factory=list)
    proposed: list[int] = field(default_factory=list)

    @property
    def rounds(self) -> int:
        return len(self.accepted)

    @property
    def tau(self) -> float:
        return (sum(self.accepted) + self.rounds) / max(self.rounds, 1)


def speculative_round(
    target: Target,
    draft: Draft,
    context: torch.Tensor,
    gamma: int,
    temperature: float,
    generator: torch.Generator,
    scheduler: Scheduler = fixed_gamma,
) -> tuple[list[int], int, int]:
    """One round for a single sequence ``context (1, L)``.

    Returns ``(emitted tokens, n_accepted, n_proposed)``. Draws ``2 * gamma + 1`` uniforms from
    ``generator`` per round, whatever happens, so rounds stay aligned across drafts that share it.
    """
    dtype = torch.float64
    u_draft = torch.rand(gamma, generator=generator, dtype=dtype)
    u_accept = torch.rand(gamma, generator=generator, dtype=dtype)
    u_next = torch.rand(1, generator=generator, dtype=dtype)
    state = draft.begin(context)
    tokens: list[int] = []
    qs: list[torch.Tensor] = []
    for k in range(gamma):
        q_k = draft.distribution(state, temperature)[0]
        if not scheduler(k, tokens, q_k):
            break
        tok = int(sample_from(q_k, u_draft[k]))
        tokens.append(tok)
        qs.append(q_k)
        if k + 1 < gamma:
            state = draft.advance(state, torch.tensor([tok]))
    g = len(tokens)
    drafted = torch.tensor([tokens], dtype=torch.int64)
    p = target.distributions(context, drafted, temperature)
    q = torch.stack(qs).unsqueeze(0) if qs else p.new_zeros((1, 0, p.shape[-1]))
    verdict = verify(p, q, drafted, u_accept[:g].unsqueeze(0), u_next)
    n = int(verdict.n_accepted[0])
    return tokens[:n] + [int(verdict.next_token[0])], n, g


def speculative_generate(
    target: Target,
    draft: Draft,
    context: torch.Tensor,
    max_new_tokens: int,
    *,
    gamma: int = 4,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
    scheduler: Scheduler = fixed_gamma,
    eos_id: int | None = None,
) -> tuple[list[int], GenerationStats]:
    """Generate up to ``max_new_tokens`` after ``context (1, L)`` with exact speculative sampling.

    Stops after ``eos_id`` (kept, and nothing after it, even inside an accepted prefix). Returns
    the new tokens and the per-round statistics.
    """
    if context.dim() != 2 or context.shape[0] != 1:
        raise DistributionError("context", f"expected shape (1, L), got {tuple(context.shape)}")
    if gamma < 0 or max_new_tokens < 0:
        raise DistributionError("gamma/max_new_tokens", "must be >= 0")
    generator = generator if generator is not None else torch.Generator().manual_seed(0)
    out: list[int] = []
    stats = GenerationStats()
    ctx = context
    while len(out) < max_new_tokens:
        emitted, n_acc, n_prop = speculative_round(target, draft, ctx, gamma, temperature, generator, scheduler)
        stats.accepted.append(n_acc)
        stats.proposed.append(n_prop)
        if eos_id is not None and eos_id in emitted:
            emitted = emitted[: emitted.index(eos_id) + 1]
        emitted = emitted[: max_new_tokens - len(out)]
        out.extend(emitted)
        if eos_id is not None and out and out[-1] == eos_id:
            break
        ctx = torch.cat([ctx, torch.tensor([emitted], dtype=ctx.dtype)], dim=1)
    return out, stats


def greedy_generate(target: Target, context: torch.Tensor, max_new_tokens: int, eos_id: int | None = None) -> list[int]:
    """Plain greedy decoding with the target alone (the reference for temperature 0)."""
    out: list[int] = []
    ctx = context
    empty = torch.zeros((1, 0), dtype=torch.int64)
    while len(out) < max_new_tokens:
        p = target.distributions(ctx, empty, 0.0)[0, -1]
        tok = int(p.argmax())
        out.append(tok)
        if tok == eos_id:
            break
        ctx = torch.cat([ctx, torch.tensor([[tok]], dtype=ctx.dtype)], dim=1)
    return out


def speculative_round_batch(
    target: Target,
    draft: Draft,
    contexts: torch.Tensor,
    gamma: int,
    temperature: float,
    generator: torch.Generator,
) -> tuple[torch.Tensor, Verdict]:
    """One fixed-``gamma`` round for each of ``B`` equal-length ``contexts (B, L)`` at once.

    The same rule as :func:`speculative_round` (the draft hands over ``q``, the sampler draws from
    that tensor), batched so that empirical tau over many held-out contexts is cheap. Returns the
    drafted tokens ``(B, G)`` and the :class:`Verdict`.
    """
    bsz = contexts.shape[0]
    u = torch.rand(2 * gamma + 1, bsz, generator=generator, dtype=torch.float64)
    state = draft.begin(contexts)
    toks, qs = [], []
    for k in range(gamma):
        q_k = draft.distribution(state, temperature)
        tok = sample_from(q_k, u[k])
        toks.append(tok)
        qs.append(q_k)
        if k + 1 < gamma:
            state = draft.advance(state, tok)
    drafted = torch.stack(toks, dim=1)
    p = target.distributions(contexts, drafted, temperature)
    verdict = verify(p, torch.stack(qs, dim=1), drafted, u[gamma : 2 * gamma].T, u[2 * gamma])
    return drafted, verdict


# --------------------------------------------------------------------------- scheduled batched rounds


def draft_signals(q: torch.Tensor) -> torch.Tensor:
    """The draft's own confidence signals of distributions ``q (..., V)`` -> ``(..., 3)`` float64:
    max probability, entropy (nats) and the margin between the two largest probabilities."""
    q = q.double()
    top2 = q.topk(2, dim=-1).values
    ent = -(q * q.clamp_min(1e-300).log()).sum(-1)
    return torch.stack([top2[..., 0], ent, top2[..., 0] - top2[..., 1]], dim=-1)


@runtime_checkable
class RoundScheduler(Protocol):
    """A batched, non-anticipating scheduler: before position ``k`` of a round it says, per row,
    whether to draft that position.

    ``start(contexts (B, L))`` opens a round. ``keep(k, drafted (B, k), q_k (B, V), q1_k (B, V),
    active (B,))`` returns a bool ``(B,)``: ``q_k`` is the distribution token ``k`` will be drawn
    from, ``q1_k`` the draft's distribution at temperature 1 (its confidence signals, also at
    T = 0 where ``q_k`` is one-hot), ``drafted`` the tokens already drawn, ``active`` the rows still
    drafting (the answer for the others is ignored). It never sees token ``k`` itself, nor the
    uniforms that draw or judge it: that is what keeps the output exact (DSpark appendix A).
    A row that is told to stop stays stopped for the rest of the round.
    """

    def start(self, contexts: torch.Tensor) -> None: ...

    def keep(
        self, k: int, drafted: torch.Tensor, q_k: torch.Tensor, q1_k: torch.Tensor, active: torch.Tensor
    ) -> torch.Tensor: ...


class ConfidenceRoundScheduler:
    """Batched :func:`confidence_scheduler`: stop once the draft's max probability at temperature 1
    falls below ``threshold`` (always draft position 0). At T = 1 the same rule as the per-sequence
    one; at T = 0 it reads the draft's T = 1 distribution, since the sampling one is one-hot."""

    def __init__(self, threshold: float):
        self.threshold = float(threshold)

    def start(self, contexts: torch.Tensor) -> None:  # noqa: ARG002
        return None

    def keep(self, k, drafted, q_k, q1_k, active):  # noqa: ARG002
        if k == 0:
            return torch.ones(q1_k.shape[0], dtype=torch.bool)
        return q1_k.max(dim=-1).values >= self.threshold


@dataclass(frozen=True)
class RoundRecord:
    """One scheduled round for each of ``B`` contexts (:func:`scheduled_round_batch`).

    ``drafted (B, G')`` tokens drawn (``G'`` = the longest proposal; row ``b`` proposed only its
    first ``lengths[b]``); ``n_accepted``, ``next_token`` as in :class:`Verdict`; ``draft_steps (B,)``
    draft distributions computed for the row (``lengths + 1`` when the scheduler stopped it,
    ``gamma`` when it drafted them all); ``signals (B, G', 3)`` :func:`draft_signals` of the
    temperature-1 draft distribution at each drafted position.
    """

    drafted: torch.Tensor
    lengths: torch.Tensor
    n_accepted: torch.Tensor
    next_token: torch.Tensor
    draft_steps: torch.Tensor
    signals: torch.Tensor

    @property
    def emitted(self) -> torch.Tensor:
        """Tokens the round emits per row (accepted + the residual or bonus token)."""
        return self.n_accepted + 1


def scheduled_round_batch(
    target: Target,
    draft: Draft,
    contexts: torch.Tensor,
    gamma: int,
    temperature: float,
    generator: torch.Generator,
    scheduler: RoundScheduler | None = None,
) -> RoundRecord:
    """One round per equal-length context ``contexts (B, L)``, each row stopping when ``scheduler``
    says so (``None``: every row drafts ``gamma``).

    Uniforms are drawn as in :func:`speculative_round_batch` (``2 * gamma + 1`` per row, position
    ``k`` of every row drawn with the same uniform whatever the scheduler does), so for the same
    generator state a scheduled round proposes a prefix of the fixed-``gamma`` round's tokens and
    its outcome is that round's, cut at the row's length. Rows that stopped keep being drawn as
    padding while other rows draft (never proposed; their cost is not counted in ``draft_steps``).
    """
    bsz = contexts.shape[0]
    u = torch.rand(2 * gamma + 1, bsz, generator=generator, dtype=torch.float64)
    state = draft.begin(contexts)
    if scheduler is not None:
        scheduler.start(contexts)
    active = torch.ones(bsz, dtype=torch.bool)
    lengths = torch.zeros(bsz, dtype=torch.int64)
    steps = torch.zeros(bsz, dtype=torch.int64)
    toks: list[torch.Tensor] = []
    qs: list[torch.Tensor] = []
    sigs: list[torch.Tensor] = []
    for k in range(gamma):
        q_k = draft.distribution(state, temperature)
        q1_k = q_k if temperature == 1.0 else draft.distribution(state, 1.0)
        steps += active
        if scheduler is not None:
            drafted_so_far = torch.stack(toks, dim=1) if toks else contexts.new_zeros((bsz, 0))
            active = active & scheduler.keep(k, drafted_so_far, q_k, q1_k, active).to(torch.bool)
            if not bool(active.any()):
                break
        tok = sample_from(q_k, u[k])
        toks.append(tok)
        qs.append(q_k)
        sigs.append(draft_signals(q1_k))
        lengths += active
        if k + 1 < gamma:
            state = draft.advance(state, tok)
    g = len(toks)
    drafted = torch.stack(toks, dim=1) if toks else contexts.new_zeros((bsz, 0))
    p = target.distributions(contexts, drafted, temperature)
    q = torch.stack(qs, dim=1) if qs else p.new_zeros((bsz, 0, p.shape[-1]))
    verdict = verify(p, q, drafted, u[gamma : gamma + g].T, u[2 * gamma], lengths=lengths)
    signals = torch.stack(sigs, dim=1) if sigs else torch.zeros((bsz, 0, 3), dtype=torch.float64)
    return RoundRecord(
        drafted=drafted,
        lengths=lengths,
        n_accepted=verdict.n_accepted,
        next_token=verdict.next_token,
        draft_steps=steps,
        signals=signals,
    )


def speculative_generate_batch(
    target: Target,
    draft: Draft,
    contexts: torch.Tensor,
    max_new_tokens: int,
    *,
    gamma: int = 4,
    temperature: float = 1.0,
    generator: torch.Generator | None = None,
    scheduler: RoundScheduler | None = None,
) -> tuple[list[list[int]], list[GenerationStats]]:
    """:func:`speculative_generate` for ``B`` contexts ``(B, L)`` at once, with a batched scheduler.

    Each step runs one :func:`scheduled_round_batch` over the unfinished rows whose current length
    is the shortest (rows of equal length batch together). Returns ``max_new_tokens`` tokens and
    the per-round statistics for every row.
    """
    if contexts.dim() != 2:
        raise DistributionError("contexts", f"expected shape (B, L), got {tuple(contexts.shape)}")
    if gamma < 0 or max_new_tokens < 0:
        raise DistributionError("gamma/max_new_tokens", "must be >= 0")
    generator = generator if generator is not None else torch.Generator().manual_seed(0)
    outs: list[list[int]] = [[] for _ in range(contexts.shape[0])]
    stats = [GenerationStats() for _ in outs]
    while True:
        todo = [b for b, o in enumerate(outs) if len(o) < max_new_tokens]
        if not todo:
            return outs, stats
        shortest = min(len(outs[b]) for b in todo)
        rows = [b for b in todo if len(outs[b]) == shortest]
        grown = torch.tensor([outs[b] for b in rows], dtype=contexts.dtype).reshape(len(rows), shortest)
        ctx = torch.cat([contexts[rows], grown], dim=1)
        rec = scheduled_round_batch(target, draft, ctx, gamma, temperature, generator, scheduler)
        for i, b in enumerate(rows):
            n = int(rec.n_accepted[i])
            emitted = rec.drafted[i, :n].tolist() + [int(rec.next_token[i])]
            stats[b].accepted.append(n)
            stats[b].proposed.append(int(rec.lengths[i]))
            outs[b].extend(emitted[: max_new_tokens - len(outs[b])])
