"""L1: the most recent turns (50 by default), with their vectors as torch tensors on the engine's
device, so that stage E scores its batch against them and takes the recalled memory embeddings
without a host round trip. A host mirror (the ring arrays of :class:`RingTier`) serves the exact
float64 re-score that makes results independent of device and layout.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from v22sdk.memory.ring import RingTier
from v22sdk.memory.scoring import AttrVocab


class DeviceTier(RingTier):
    """A :class:`RingTier` whose unit sent_vecs and memory embeddings also live on ``device``."""

    compiled_scan = False  # its cosines are computed on its device (see _fast)

    level = "L1"

    def __init__(self, capacity: int, vocab: AttrVocab, device: str | torch.device = "cpu"):
        super().__init__(capacity, vocab)
        self._place(torch.device(device))

    def _place(self, device: torch.device) -> None:
        """Device copies of units and mem; on the CPU, views of the host arrays (nothing to copy
        on a write)."""
        self.device = device
        self.shared = device.type == "cpu"
        self.mirrored = not self.shared  # on the CPU the device arrays are views of the host's
        if self.shared:
            self.units_dev, self.mem_dev = torch.from_numpy(self.units), torch.from_numpy(self.mem)
        else:
            self.units_dev = torch.from_numpy(self.units).to(device)
            self.mem_dev = torch.from_numpy(self.mem).to(device)

    # the writes' copies to a device that is not the CPU (``mirrored``)
    def _mirror_block(self, slots: np.ndarray) -> None:
        if len(slots):
            idx = torch.from_numpy(slots).to(self.device)
            self.units_dev[idx] = torch.from_numpy(self.units[slots]).to(self.device)
            self.mem_dev[idx] = torch.from_numpy(self.mem[slots]).to(self.device)

    def _mirror(self, s: int) -> None:
        self.units_dev[s] = torch.from_numpy(self.units[s]).to(self.device)
        self.mem_dev[s] = torch.from_numpy(self.mem[s]).to(self.device)

    def to(self, device: str | torch.device) -> DeviceTier:
        self._place(torch.device(device))
        return self

    def _fast(self, queries: np.ndarray, n: int) -> np.ndarray:
        q = torch.from_numpy(queries).to(self.device)
        return (q @ self.units_dev[:n].T).cpu().numpy()

    def values(self, turn_ids: Iterable[int]) -> torch.Tensor:
        """Memory embeddings (len, 384) of turns held here, on the device."""
        idx = torch.tensor([self.slot[int(i)] for i in turn_ids], dtype=torch.long, device=self.device)
        return self.mem_dev[idx]

    def clear(self) -> None:
        self.__init__(self.capacity, self.vocab, self.device)  # type: ignore[misc]  # reset in place
