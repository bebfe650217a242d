"""Analytic and empirical tau (tokens emitted per target call, bonus token included).

Analytic tau. The per-position acceptance probability is ``alpha = 1 - TV(p, q) = sum min(p, q)``.
The expected length of a round after context ``c`` is ``1 + sum_k P(first k accepted)``, and

    P(first k accepted) = E[ prod_{i<=k} alpha_i ]  along a path whose token i is drawn from
                                                    min(p_i, q_i) / alpha_i

(an accepted token is distributed as the normalised overlap; induction on k). So one such path
per context gives an *unbiased* estimate of the exact expected tau, ``1 + sum_k prod_{i<=k}
alpha_i``, computed from held-out TV distances with far less noise than running the sampler.
(DeepSpec's ``tau_probabilistic`` evaluates the same product along the target's own path, which
is only an approximation because accepted tokens do not follow p.)

Empirical tau. One real round of the exact sampler (:func:`speculative_round_batch`) per context
and repeat; it must agree with the analytic value within its confidence interval.
"""

from __future__ import annotations

import torch

from v22sdk.specdec.sampler import Draft, Target, sample_from, speculative_round_batch


@torch.no_grad()
def analytic_tau(
    target: Target, draft: Draft, contexts: torch.Tensor, gamma: int, temperature: float, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-context expected tau ``(B,)`` and acceptance probabilities ``alpha (B, G)`` (float64).

    ``alpha[:, i]`` is the acceptance probability at position ``i`` given the first ``i`` tokens
    were accepted (conditional acceptance, DSpark Fig. 2 style).
    """
    g = torch.Generator().manual_seed(seed)
    state = draft.begin(contexts)
    path = contexts
    empty = torch.zeros((contexts.shape[0], 0), dtype=contexts.dtype)
    alphas = []
    for k in range(gamma):
        q = draft.distribution(state, temperature)
        p = target.distributions(path, empty, temperature)[:, -1]
        overlap = torch.minimum(p, q)
        # 1 - TV rather than sum(min): equal in exact arithmetic, but exactly 1 when q == p.
        alpha = 1.0 - 0.5 * (p - q).abs().sum(-1)
        alphas.append(alpha)
        # Where alpha = 0 the path's weight is 0 from here on; continue along p to keep shapes.
        src = torch.where((alpha > 0).unsqueeze(-1), overlap, p)
        tok = sample_from(src, torch.rand(contexts.shape[0], generator=g, dtype=torch.float64))
        path = torch.cat([path, tok.unsqueeze(1)], dim=1)
        if k + 1 < gamma:
            state = draft.advance(state, tok)
    alpha = torch.stack(alphas, dim=1)
    return 1.0 + alpha.cumprod(dim=1).sum(dim=1), alpha


@torch.no_grad()
def empirical_tau(
    target: Target, draft: Draft, contexts: torch.Tensor, gamma: int, temperature: float, seed: int, repeats: int = 1
) -> torch.Tensor:
    """Tokens emitted by ``repeats`` real rounds per context: ``(repeats * B,)`` float64."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(repeats):
        _, verdict = speculative_round_batch(target, draft, contexts, gamma, temperature, g)
        out.append(verdict.n_accepted.double() + 1.0)
    return torch.cat(out)
