"""Measured unit costs of a speculative round, for "tokens per unit of cost" comparisons.

A round costs one target pass (scoring the ``g`` drafted tokens and the bonus row) plus the draft
steps it computed, plus, for a scheduler that reads attributes, one text-plugin call per drafted
token it inspected. Each unit is timed here at batch 1 (one sequence, as a scheduler decides per
sequence), in CPU time of this process (``time.process_time_ns``: a shared machine's load
inflates wall time, not CPU time), as the median of ``reps`` repetitions after a warm-up.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from statistics import median

import numpy as np
import torch


@dataclass(frozen=True)
class UnitCosts:
    """Milliseconds of CPU time: ``target_ms[g]`` one target pass scoring ``g`` drafted tokens
    (``g = 0..gamma``); ``draft_step_ms`` one draft step (advance by a token and read the next
    distribution); ``draft_begin_ms`` starting a round (informative: the lab's draft re-reads its
    warm-up window, which an incremental draft would not); ``attribute_ms`` one text-plugin call
    on a drafted character in its context (``None`` when not measured)."""

    target_ms: tuple[float, ...]
    draft_step_ms: float
    draft_begin_ms: float
    attribute_ms: float | None = None

    def round_cost(
        self, lengths: np.ndarray, draft_steps: np.ndarray, attribute_lookups: np.ndarray | None = None
    ) -> np.ndarray:
        """Cost in ms of rounds that proposed ``lengths`` tokens with ``draft_steps`` draft steps
        (and ``attribute_lookups`` plugin calls, costed only when given)."""
        cost = np.asarray(self.target_ms)[np.asarray(lengths)] + self.draft_step_ms * np.asarray(draft_steps)
        if attribute_lookups is not None:
            cost = cost + (self.attribute_ms or 0.0) * np.asarray(attribute_lookups)
        return cost

    def as_dict(self) -> dict:
        return asdict(self) | {"draft_to_target": self.draft_step_ms / self.target_ms[0]}


def _time_ms(fn, reps: int) -> float:
    for _ in range(min(3, reps)):
        fn()
    out = []
    for _ in range(reps):
        t = time.process_time_ns()
        fn()
        out.append((time.process_time_ns() - t) / 1e6)
    return float(median(out))


@torch.no_grad()
def measure_costs(target, draft, contexts: torch.Tensor, gamma: int, reps: int = 200, attributes=None) -> UnitCosts:
    """Time the units on ``contexts (N, L)`` (one row at a time, cycling through them)."""
    g = torch.Generator().manual_seed(0)
    n = contexts.shape[0]
    pick = iter(range(10**9))

    def ctx() -> torch.Tensor:
        i = next(pick) % n
        return contexts[i : i + 1]

    target_ms = []
    for k in range(gamma + 1):
        drafted = torch.randint(0, target.vocab_size, (1, k), generator=g)
        target_ms.append(_time_ms(lambda: target.distributions(ctx(), drafted, 1.0), reps))
    state = draft.begin(contexts[:1])
    tok = torch.zeros(1, dtype=torch.int64)
    step_ms = _time_ms(lambda: draft.distribution(draft.advance(state, tok), 1.0), reps)
    begin_ms = _time_ms(lambda: draft.distribution(draft.begin(ctx()), 1.0), reps)
    attr_ms = None
    if attributes is not None:
        modality, vocab = attributes.modality, attributes.vocab
        texts = iter(
            [
                vocab.decode(contexts[i % n].tolist() + [int(t)])
                for i, t in enumerate(torch.randint(0, vocab.size - 1, (reps + 3,), generator=g))
            ]
        )
        attr_ms = _time_ms(lambda: modality.encode(next(texts)).attr[-1], reps)
    return UnitCosts(target_ms=tuple(target_ms), draft_step_ms=step_ms, draft_begin_ms=begin_ms, attribute_ms=attr_ms)
