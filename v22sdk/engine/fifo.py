"""``fifo``: upstream's in-RAM memory for stage E (spec §6.1), behind :class:`MemoryHead`.

Keys are past ``sent_vec`` (N, 256), values past ``me`` (N, 384); the newest ``capacity`` turns
are kept (first in, first out). A read returns, for each query, the stored value whose key has
the highest cosine with it (top-1, cosine only; attribute sets are stored but not scored, as
upstream). Torch is imported inside the methods so that registering the backend stays cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .memory_head import MEM_DIM, SENT_DIM, MemoryHead, Recall, TurnInfo


class FifoMemory(MemoryHead):
    """In-RAM FIFO of (sent_vec, me) pairs with cosine top-1 recall."""

    name = "fifo"

    def __init__(self, capacity: int = 2000):
        if capacity < 1:
            raise ValueError("capacity must be ≥ 1")
        self.capacity = int(capacity)
        self.keys: Any = None  # torch.Tensor (N, 256)
        self.values: Any = None  # torch.Tensor (N, 384)
        self.ids: list[int] = []
        self.info: list[TurnInfo | None] = []
        self.times: list[float] = []
        self.next_id = 1

    def __len__(self) -> int:
        return len(self.ids)

    def read(self, sent_vec, attr_sets: Sequence[frozenset[str]]) -> Recall:
        import torch
        import torch.nn.functional as F

        b = sent_vec.shape[0]
        if self.keys is None or len(self) == 0:
            return Recall(
                torch.zeros(b, MEM_DIM, device=sent_vec.device),
                torch.zeros(b, dtype=torch.bool),
                torch.zeros(b),
                [None] * b,
                [None] * b,
                [None] * b,
            )
        keys = self.keys.to(sent_vec.device)
        sim = F.normalize(sent_vec.detach().float(), dim=-1) @ F.normalize(keys, dim=-1).t()  # (B, N)
        score, best = sim.max(dim=1)
        vals = self.values.to(sent_vec.device)[best]
        idx = best.tolist()
        return Recall(
            vals,
            torch.ones(b, dtype=torch.bool),
            score.cpu(),
            [self.ids[i] for i in idx],
            [self.info[i] for i in idx],
            [self.times[i] for i in idx],
        )

    def write(self, sent_vec, mem_emb, attr_sets, info=None) -> list[int]:
        import time

        import torch

        k = sent_vec.detach().float().cpu()
        v = mem_emb.detach().float().cpu()
        if k.shape[-1] != SENT_DIM or v.shape[-1] != MEM_DIM or k.shape[0] != v.shape[0]:
            raise ValueError(
                f"fifo write needs (B, {SENT_DIM}) and (B, {MEM_DIM}), got {tuple(k.shape)}, {tuple(v.shape)}"
            )
        n = k.shape[0]
        new = list(range(self.next_id, self.next_id + n))
        self.next_id += n
        now = time.time()
        self.keys = (k if self.keys is None else torch.cat([self.keys, k]))[-self.capacity :]
        self.values = (v if self.values is None else torch.cat([self.values, v]))[-self.capacity :]
        self.ids = (self.ids + new)[-self.capacity :]
        self.info = (self.info + list(info or [None] * n))[-self.capacity :]
        self.times = (self.times + [now] * n)[-self.capacity :]
        return new

    def clear(self) -> None:
        self.keys = self.values = None
        self.ids, self.info, self.times = [], [], []

    # -- checkpoint state (plain tensors and ints: safe for torch.load(weights_only=True)) --
    def state_dict(self) -> dict:
        import torch

        return {
            "keys": self.keys if self.keys is not None else torch.zeros(0, SENT_DIM),
            "values": self.values if self.values is not None else torch.zeros(0, MEM_DIM),
            "ids": list(self.ids),
            "next_id": self.next_id,
            "capacity": self.capacity,
        }

    def load_state_dict(self, state: dict) -> None:
        self.capacity = int(state["capacity"])
        n = len(state["ids"])
        self.keys = state["keys"].float() if n else None
        self.values = state["values"].float() if n else None
        self.ids = [int(i) for i in state["ids"]]
        self.info = [None] * n
        self.times = [0.0] * n
        self.next_id = int(state["next_id"])
