"""Token files as a ``torch.utils.data.Dataset``: train your own model on v22sdk tokens.

::

    from torch.utils.data import DataLoader
    from v22sdk.token_dataset import TokenDataset

    ds = TokenDataset(["tokens.parquet", "more.npz"])          # files written by `v22sdk tokenize --out`
    for batch in DataLoader(ds, batch_size=8, collate_fn=TokenDataset.collate):
        x, mask = batch["tokens"], batch["mask"]               # (B, L, 640) float32, (B, L) bool

``per="sequence"`` (the default) gives one item per token batch (one input: a text, an image, a
sound), ``per="token"`` one item per token. The tensors share memory with the loaded arrays and
are bit-exactly the file's float32 values. This module imports torch (the engine's dependency), so
it is imported on its own, never by ``import v22sdk``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from .contract import TOKEN_DIM, TokenBatch
from .errors import InputError
from .tabular import load_tokens

__all__ = ["TokenDataset"]


class TokenDataset(Dataset[dict[str, Any]]):
    """The token batches of ``.npz`` and ``.parquet`` token files, in file order.

    Items (``per="sequence"``): ``tokens`` (N, 640) float32 (``emb`` then ``attr``), ``modality``,
    ``source``, ``offsets`` (name -> tensor, first axis N), ``file`` and ``batch`` (its index in
    the file). Items (``per="token"``): ``token`` (640,) float32, ``modality``, ``source``,
    ``file``, ``batch`` and ``position`` (the token's index in its batch).
    """

    def __init__(
        self, files: Sequence[str | os.PathLike[str]] | str | os.PathLike[str], *, per: str = "sequence"
    ) -> None:
        if per not in ("sequence", "token"):
            raise InputError("per", f"must be 'sequence' or 'token', got {per!r}")
        paths = [files] if isinstance(files, (str, os.PathLike)) else list(files)
        if not paths:
            raise InputError("files", "no token files given")
        self.per = per
        self.batches: list[tuple[str, int, TokenBatch]] = []
        for path in paths:
            self.batches += [(os.fspath(path), i, b) for i, b in enumerate(load_tokens(path))]
        self._arrays = [b.to_array() for _, _, b in self.batches]
        sizes = np.array([len(b) for _, _, b in self.batches], dtype=np.int64)
        self._starts = np.concatenate([[0], np.cumsum(sizes)])

    def __len__(self) -> int:
        return len(self.batches) if self.per == "sequence" else int(self._starts[-1])

    def __getitem__(self, index: int) -> dict[str, Any]:
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"item {index} out of range for {n} items")
        index %= n
        if self.per == "sequence":
            path, i, b = self.batches[index]
            return {
                "tokens": torch.from_numpy(self._arrays[index]),
                "modality": b.modality,
                "source": b.source,
                "offsets": {k: torch.from_numpy(np.array(v)) for k, v in b.offsets.items()},
                "file": path,
                "batch": i,
            }
        j = int(np.searchsorted(self._starts, index, side="right")) - 1
        path, i, b = self.batches[j]
        pos = index - int(self._starts[j])
        return {
            "token": torch.from_numpy(self._arrays[j][pos]),
            "modality": b.modality,
            "source": b.source,
            "file": path,
            "batch": i,
            "position": pos,
        }

    @staticmethod
    def collate(items: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Stack items into a training batch (the ``collate_fn`` of a ``DataLoader``).

        Sequences are zero-padded to the longest: ``tokens`` (B, L, 640), ``mask`` (B, L) True on
        real tokens, ``lengths`` (B,); tokens stack to ``tokens`` (B, 640). Other fields become lists.
        """
        if not items:
            raise InputError("items", "nothing to collate")
        if "token" in items[0]:
            out: dict[str, Any] = {"tokens": torch.stack([it["token"] for it in items])}
        else:
            lengths = torch.tensor([it["tokens"].shape[0] for it in items], dtype=torch.int64)
            longest = int(lengths.max()) if len(items) else 0
            tokens = torch.zeros((len(items), longest, TOKEN_DIM), dtype=torch.float32)
            for k, it in enumerate(items):
                tokens[k, : it["tokens"].shape[0]] = it["tokens"]
            out = {"tokens": tokens, "mask": torch.arange(longest)[None, :] < lengths[:, None], "lengths": lengths}
        for key in items[0]:
            if key not in ("token", "tokens"):
                out[key] = [it[key] for it in items]
        return out
