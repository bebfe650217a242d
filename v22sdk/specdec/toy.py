"""Models with exactly known distributions: Markov chains, a uniform draft, the target as its own draft.

They implement the :class:`~v22sdk.specdec.sampler.Target` / ``Draft`` interfaces, so they serve
the exactness tests (the joint distribution of a Markov chain can be enumerated), the
experiment's controls (P+ = target as draft, P- = uniform draft) and the overhead benchmark.
"""

from __future__ import annotations

from typing import Any

import torch

from v22sdk.specdec.errors import DistributionError
from v22sdk.specdec.sampler import Target, probs_from_logits


class MarkovModel:
    """Order-1 Markov chain over ``V`` tokens; usable both as target and as draft.

    ``transition (V, V)``: row ``a`` is the next-token distribution after token ``a``. Temperature
    ``T`` is applied to ``log(transition)`` (so ``T = 1`` gives the chain itself).
    """

    def __init__(self, transition: torch.Tensor):
        if transition.dim() != 2 or transition.shape[0] != transition.shape[1]:
            raise DistributionError("transition", f"expected a square matrix, got {tuple(transition.shape)}")
        if bool((transition < 0).any()) or not torch.allclose(
            transition.sum(-1), torch.ones((), dtype=transition.dtype), atol=1e-9
        ):
            raise DistributionError("transition", "rows must be non-negative and sum to 1")
        self.transition = transition
        self.logits = transition.log()  # -inf where the chain has probability 0
        self.vocab_size = transition.shape[0]

    @classmethod
    def random(cls, vocab: int, seed: int, concentration: float = 1.0, dtype=torch.float64) -> MarkovModel:
        """A chain whose rows are Dirichlet(``concentration``) draws from ``seed``."""
        g = torch.Generator().manual_seed(seed)
        gamma = torch.distributions.Gamma(torch.full((vocab,), float(concentration), dtype=dtype), 1.0)
        # Gamma sampling has no generator argument: seed torch's global RNG locally instead.
        with torch.random.fork_rng():
            torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=g)))
            rows = gamma.sample((vocab,))
        return cls(rows / rows.sum(-1, keepdim=True))

    def _next(self, last: torch.Tensor, temperature: float) -> torch.Tensor:
        return probs_from_logits(self.logits[last], temperature)

    # Target interface
    def distributions(self, context: torch.Tensor, drafted: torch.Tensor, temperature: float) -> torch.Tensor:
        seq = torch.cat([context[:, -1:], drafted], dim=1)  # (B, k+1): the conditioning tokens
        return self._next(seq, temperature)

    # Draft interface
    def begin(self, context: torch.Tensor) -> torch.Tensor:
        return context[:, -1]

    def distribution(self, state: torch.Tensor, temperature: float) -> torch.Tensor:
        return self._next(state, temperature)

    def advance(self, state: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        return tokens


class UniformDraft:
    """Control P-: proposes every token with probability 1/V, at any temperature."""

    def __init__(self, vocab_size: int, dtype=torch.float64):
        self.vocab_size = vocab_size
        self.dtype = dtype

    def begin(self, context: torch.Tensor) -> int:
        return context.shape[0]

    def distribution(self, state: int, temperature: float) -> torch.Tensor:  # noqa: ARG002
        return torch.full((state, self.vocab_size), 1.0 / self.vocab_size, dtype=self.dtype)

    def advance(self, state: int, tokens: torch.Tensor) -> int:  # noqa: ARG002
        return state


class TargetAsDraft:
    """Control P+: the target proposes for itself, so q = p and every proposal is accepted."""

    def __init__(self, target: Target):
        self.target = target
        self.vocab_size = target.vocab_size

    def begin(self, context: torch.Tensor) -> Any:
        return context

    def distribution(self, state: torch.Tensor, temperature: float) -> torch.Tensor:
        empty = torch.zeros((state.shape[0], 0), dtype=state.dtype)
        return self.target.distributions(state, empty, temperature)[:, -1]

    def advance(self, state: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        return torch.cat([state, tokens.to(state.dtype).unsqueeze(-1)], dim=1)
