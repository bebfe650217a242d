"""Parts of the hook-3 experiment: a small independent draft LM that reads a chosen view of a long
document, and the project's 3-tier memory used as its long-context path.

The draft (:class:`ViewDraft`) is a causal transformer with its own embeddings (it shares nothing
with the target: an EAGLE-style draft would see the whole document through the target's features,
which would defeat the point of a short window). Every arm has the same modules and parameter
count; only its *input* differs:

``window``  the last ``W`` characters of the document (then the drafted ones);
``memory``  ``R`` recalled characters (segment 0), then the window (segment 1): the recall is the
            earlier passage whose key best matches the window under the memory's hybrid score
            ``0.6 cos + 0.4 Jaccard`` (:class:`DocumentMemory`);
``cosine``  the same with the query's attribute set left empty, so every stored turn's Jaccard
            term is 0 and the ranking is plain cosine;
``full``    the whole document so far (the upper bound).

:class:`DocumentMemory` writes the document into a :class:`~v22sdk.memory.TieredMemory` in a
temporary folder as it is read: every ``S`` characters, once a passage's continuation has been
read, the turn ``key = doc[j-K:j]`` (its text tokenized by the installed ``text`` modality: the
256-D unit embedding averaged and re-normalised is ``sent_vec``, the active slot names are the
attribute set, the mean attribute row is ``mem_emb``) is written; the value a recall returns is
the passage ``doc[j-K : j+V]``. A query at position ``t`` uses the key ``doc[t-K:t]`` and sees
only turns written before it (``j + V <= t``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn as nn

from v22sdk.specdec.errors import SpecDecError
from v22sdk.specdec.models import _Block
from v22sdk.specdec.sampler import probs_from_logits

VIEWS = ("window", "memory", "cosine", "full")


@dataclass(frozen=True)
class Geometry:
    """Window ``W``, stride ``S`` (a turn every ``S`` characters), key ``K`` and value ``V`` lengths."""

    window: int = 16
    stride: int = 8
    key: int = 16
    value: int = 16

    @property
    def recall_len(self) -> int:
        return self.key + self.value

    def turn_ends(self, t: int) -> list[int]:
        """Key ends ``j`` of the turns written once the first ``t`` characters have been read."""
        return [j for j in range(self.key, t - self.value + 1, self.stride)]


class ViewDraft(nn.Module):
    """Causal transformer draft: ``idx (B, T)``, ``seg (B, T)`` -> ``logits (B, T, V)``.

    Token ids ``0..vocab-1`` plus ``pad = vocab`` (an empty recall); two segment embeddings
    (0 = recalled text, 1 = the document's own text); positions ``0..max_len-1``.
    """

    def __init__(self, vocab: int, max_len: int, d: int = 64, n_layer: int = 2, n_head: int = 4):
        super().__init__()
        self.vocab, self.max_len, self.pad = vocab, max_len, vocab
        self.tok_emb = nn.Embedding(vocab + 1, d)
        self.pos_emb = nn.Embedding(max_len, d)
        self.seg_emb = nn.Embedding(2, d)
        self.blocks = nn.ModuleList(_Block(d, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
                if isinstance(m, nn.Linear) and m.bias is not None:  # an Embedding has none
                    nn.init.zeros_(m.bias)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, idx: torch.Tensor, seg: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        if t > self.max_len:
            raise SpecDecError(f"draft input of length {t} exceeds its {self.max_len} positions")
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(t)) + self.seg_emb(seg)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def view_input(view: str, doc_prefix: torch.Tensor, recalled: torch.Tensor | None, window: int):
    """The arm's input ``(idx, seg)`` for contexts ``doc_prefix (B, t)``; ``recalled (B, R)`` for the
    memory views (``pad`` where nothing was recalled)."""
    if view == "full":
        return doc_prefix, torch.ones_like(doc_prefix)
    win = doc_prefix[:, -window:]
    if view == "window":
        return win, torch.ones_like(win)
    if view in ("memory", "cosine"):
        if recalled is None:
            raise SpecDecError(f"the {view} view needs the recalled passages")
        idx = torch.cat([recalled, win], dim=1)
        seg = torch.cat([torch.zeros_like(recalled), torch.ones_like(win)], dim=1)
        return idx, seg
    raise SpecDecError(f"unknown view {view!r}; choose one of {', '.join(VIEWS)}")


class ViewDraftRunner:
    """:class:`~v22sdk.specdec.sampler.Draft` over a trained :class:`ViewDraft` for one view.

    Set :attr:`recalled` (``(B, R)``, the rows of the contexts ``begin`` will get) before a batch
    for the memory views. There is no KV cache: each step re-reads the view (the cost table counts
    what a cached implementation would hold)."""

    def __init__(self, draft: ViewDraft, view: str, window: int):
        self.draft, self.view, self.window = draft.eval(), view, window
        self.vocab_size = draft.vocab
        self.recalled: torch.Tensor | None = None

    @torch.no_grad()
    def _logits(self, idx, seg):
        return self.draft(idx, seg)[:, -1]

    @torch.no_grad()
    def begin(self, context: torch.Tensor) -> Any:
        idx, seg = view_input(self.view, context, self.recalled, self.window)
        return idx, seg, self._logits(idx, seg)

    def distribution(self, state: Any, temperature: float) -> torch.Tensor:
        return probs_from_logits(state[2].double(), temperature)

    @torch.no_grad()
    def advance(self, state: Any, tokens: torch.Tensor) -> Any:
        idx, seg, _ = state
        idx = torch.cat([idx, tokens.to(idx.dtype).unsqueeze(1)], dim=1)
        seg = torch.cat([seg, torch.ones_like(seg[:, :1])], dim=1)
        return idx, seg, self._logits(idx, seg)


class KeyEncoder:
    """Memory keys from the installed ``text`` modality: text -> (sent_vec (256,), attrs, mem (384,)).

    Memoised by the exact text; :attr:`calls` counts plugin calls, :attr:`cpu_s` their CPU time."""

    def __init__(self, vocab, modality: str = "text"):
        from v22sdk.plugins import get_registry

        self.vocab = vocab
        self.modality = get_registry().modality(modality)
        self._cache: dict[str, tuple[np.ndarray, frozenset[str], np.ndarray]] = {}
        self.calls, self.lookups, self.cpu_s = 0, 0, 0.0

    def __call__(self, ids) -> tuple[np.ndarray, frozenset[str], np.ndarray]:
        text = self.vocab.decode(ids)
        self.lookups += 1
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        t0 = time.process_time()
        batch = self.modality.tokenize(text)
        v = batch.emb.astype(np.float64).mean(axis=0)
        n = np.linalg.norm(v)
        sent = (v / n if n > 0 else np.eye(1, len(v))[0]).astype(np.float32)
        out = (sent, self.modality.schema.active_names(batch), batch.attr.mean(axis=0).astype(np.float32))
        self.cpu_s += time.process_time() - t0
        self.calls += 1
        self._cache[text] = out
        return out


@dataclass
class MemoryStats:
    """What :class:`DocumentMemory` counted over the documents it read."""

    documents: int = 0
    writes: int = 0
    queries: int = 0
    hits: int = 0
    write_cpu_s: float = 0.0
    search_cpu_s: float = 0.0
    store_bytes: list[int] = field(default_factory=list)  # each document's store size on disk


class DocumentMemory:
    """Recalls for documents read left to right, through a fresh :class:`TieredMemory` per document
    in a temporary folder (never the user's memory store)."""

    def __init__(self, geometry: Geometry, encoder: KeyEncoder):
        self.g, self.enc = geometry, encoder
        self.stats = MemoryStats()

    def recall_doc(self, doc: np.ndarray, positions: list[int]) -> dict[str, dict[int, int]]:
        """For one document, the key end ``j`` recalled at each position (``-1``: nothing stored yet),
        for the hybrid (``memory``) and the cosine-only (``cosine``) query."""
        from v22sdk.memory import TieredMemory

        g = self.g
        out: dict[str, dict[int, int]] = {"memory": {}, "cosine": {}}
        tmp = tempfile.mkdtemp(prefix="v22sdk-hook3-")
        try:
            mem = TieredMemory(os.path.join(tmp, "doc.db"), synchronous="NORMAL")
            try:
                id_to_j: dict[int, int] = {}
                written = 0
                ends = g.turn_ends(max(positions))
                for t in sorted(positions):
                    while written < len(ends) and ends[written] + g.value <= t:
                        j = ends[written]
                        sent, attrs, me = self.enc(doc[j - g.key : j])
                        c0 = time.process_time()
                        [tid] = mem.write(sent[None], me[None], [attrs])
                        self.stats.write_cpu_s += time.process_time() - c0
                        id_to_j[tid] = j
                        written += 1
                        self.stats.writes += 1
                    if t < g.key:
                        out["memory"][t] = out["cosine"][t] = -1
                        continue
                    sent, attrs, _ = self.enc(doc[t - g.key : t])
                    for view, qattrs in (("memory", attrs), ("cosine", frozenset())):
                        c0 = time.process_time()
                        ids, _ = mem.search(sent[None], [qattrs], k=1)
                        self.stats.search_cpu_s += time.process_time() - c0
                        tid = int(ids[0, 0])
                        out[view][t] = id_to_j.get(tid, -1) if tid >= 0 else -1
                        self.stats.queries += 1
                        self.stats.hits += int(tid >= 0)
            finally:
                mem.close()
            self.stats.store_bytes.append(sum(os.path.getsize(os.path.join(tmp, f)) for f in os.listdir(tmp)))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self.stats.documents += 1
        return out

    def passage(self, doc: np.ndarray, j: int, pad: int) -> np.ndarray:
        """The recalled passage ``doc[j-K : j+V]`` (all ``pad`` when ``j < 0``)."""
        g = self.g
        if j < 0:
            return np.full(g.recall_len, pad, dtype=np.int64)
        return np.asarray(doc[j - g.key : j + g.value], dtype=np.int64)


def recalls_for(memory: DocumentMemory, docs: np.ndarray, positions: list[int], pad: int, tick=None):
    """``{view: (N, len(positions), R)}`` recalled passages and ``{view: (N, len(positions))}`` key ends."""
    n = len(docs)
    r = memory.g.recall_len
    passages = {v: np.full((n, len(positions), r), pad, dtype=np.int64) for v in ("memory", "cosine")}
    ends = {v: np.full((n, len(positions)), -1, dtype=np.int64) for v in ("memory", "cosine")}
    for i, doc in enumerate(docs):
        rec = memory.recall_doc(doc, positions)
        for v in ("memory", "cosine"):
            for k, t in enumerate(positions):
                ends[v][i, k] = rec[v][t]
                passages[v][i, k] = memory.passage(doc, rec[v][t], pad)
        if tick:
            tick(1)
    return passages, ends
