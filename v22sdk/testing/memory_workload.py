"""Deterministic synthetic memory workloads, for the memory's tests and ``benchmarks/bench_memory.py``.

A memory holds what one engine saw, so its turns are not uniform noise: inputs come in topics
(many photos of apples, many sentences about the weather) and inputs of one topic share both
direction and attributes. The generator models that, with every parameter fixed here:

- ``topics`` centres, unit vectors drawn uniformly in 256-D. A turn of topic ``t`` has
  ``sent_vec = unit(centre_t + SPREAD * g / sqrt(256))`` (``g`` standard normal), so a turn's cosine
  to its centre is about 0.7 and two turns of one topic have a cosine of about 0.5; turns of
  different topics about 0 (± 0.06).
- Attribute names: ``768`` names (384 slots × sign, like the engine's ``attr[i]±`` sets). Each topic
  prefers ``16`` names drawn by a Zipf-like global popularity; a turn keeps each preferred name with
  probability 0.6 and adds 0-3 names drawn by popularity, so sets hold about 10 names and turns of
  one topic share about half of them.
- Topic sizes are Zipf-like too (a few large topics, many small).

Queries are drawn "like real recalls":

- ``near``: a stored turn seen again: its vector plus noise (cosine about 0.9 to it) and its
  attribute set with one name dropped and one added;
- ``fresh``: a new input of a stored topic (a new draw of the generator, not stored).

``uniform=True`` gives the structureless worst case (vectors uniform on the sphere, 6 names uniform
from the vocabulary): an approximate index has nothing to exploit there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

DIM = 256
N_NAMES = 768
NAMES = [f"attr[{i // 2}]{'-' if i % 2 else '+'}" for i in range(N_NAMES)]
SPREAD = 1.0  # noise norm relative to the unit centre: cos(turn, centre) ~ 1/sqrt(1 + SPREAD^2)
PREFERRED = 16
KEEP = 0.6


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    out: np.ndarray = (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)
    return out


class Workload:
    """Turns and queries of one deterministic synthetic memory (see the module docstring)."""

    def __init__(self, seed: int = 0, topics: int = 2000, uniform: bool = False):
        self.seed, self.uniform = seed, uniform
        rng = np.random.default_rng([seed, 1])
        self.n_topics = topics
        self.centres = _unit(rng.standard_normal((topics, DIM)))
        pop = 1.0 / np.arange(1, N_NAMES + 1) ** 0.8
        self.popularity = pop / pop.sum()
        perm = rng.permutation(N_NAMES)  # which name is popular is random
        self.popular_names = perm
        self.preferred = np.stack(
            [perm[rng.choice(N_NAMES, PREFERRED, replace=False, p=self.popularity)] for _ in range(topics)]
        )
        tsize = 1.0 / np.arange(1, topics + 1) ** 0.7
        self.topic_p = tsize / tsize.sum()

    # -- turns ---------------------------------------------------------------------------------

    def _draw(self, rng: np.random.Generator, n: int, topic: np.ndarray | None = None) -> tuple[np.ndarray, Any]:
        """(sent (n, 256) float32, attribute bit lists) of n new inputs."""
        if self.uniform:
            sent = _unit(rng.standard_normal((n, DIM)))
            bits = [sorted(set(rng.choice(N_NAMES, 6, replace=False).tolist())) for _ in range(n)]
            return sent, bits
        if topic is None:
            topic = rng.choice(self.n_topics, n, p=self.topic_p)
        noise = rng.standard_normal((n, DIM)) * (SPREAD / np.sqrt(DIM))
        sent = _unit(self.centres[topic] + noise)
        keep = rng.random((n, PREFERRED)) < KEEP
        extra_n = rng.integers(0, 4, n)
        extra = self.popular_names[rng.choice(N_NAMES, (n, 3), p=self.popularity)]
        if self._as_masks:  # the same draws as a (n, 12) uint64 mask over NAMES, vectorised
            hot = np.zeros((n, N_NAMES), bool)
            rows = np.repeat(np.arange(n), PREFERRED).reshape(n, PREFERRED)
            hot[rows[keep], self.preferred[topic][keep]] = True
            ex = np.arange(3)[None, :] < extra_n[:, None]
            hot[np.repeat(np.arange(n), 3).reshape(n, 3)[ex], extra[ex]] = True
            return sent, np.packbits(hot, axis=1, bitorder="little").view("<u8").astype(np.uint64)
        bits = []
        for i in range(n):
            s = set(self.preferred[topic[i]][keep[i]].tolist())
            s.update(extra[i, : extra_n[i]].tolist())
            bits.append(sorted(s))
        return sent, bits

    _as_masks = False

    def block_masks(self, start: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``(sent (n, 256) float32, masks (n, 12) uint64 over NAMES' order)`` of the same turns as
        :meth:`block` (the same random draws), without building name sets: 1M turns in seconds."""
        sents: list[np.ndarray] = []
        masks: list[np.ndarray] = []
        self._as_masks = True
        try:
            for b0 in range((start // 10_000) * 10_000, start + n, 10_000):
                rng = np.random.default_rng([self.seed, 2, b0])
                s, mk = self._draw(rng, 10_000)
                lo, hi = max(start, b0) - b0, min(start + n, b0 + 10_000) - b0
                sents.append(s[lo:hi])
                masks.append(mk[lo:hi])
        finally:
            self._as_masks = False
        return np.concatenate(sents), np.concatenate(masks)

    def block(self, start: int, n: int) -> tuple[np.ndarray, np.ndarray, list[frozenset[str]]]:
        """Turns ``start .. start+n-1`` (ids ``start+1 ..``): ``(sent (n, 256) float32, mem (n, 384)
        float32, attrs [frozenset])``; a turn depends only on (seed, its number's 10k block)."""
        sents: list[np.ndarray] = []
        mems: list[np.ndarray] = []
        attrs: list[frozenset[str]] = []
        for b0 in range((start // 10_000) * 10_000, start + n, 10_000):
            rng = np.random.default_rng([self.seed, 2, b0])
            s, bits = self._draw(rng, 10_000)
            m = rng.standard_normal((10_000, 384)).astype(np.float32)
            lo, hi = max(start, b0) - b0, min(start + n, b0 + 10_000) - b0
            sents.append(s[lo:hi])
            mems.append(m[lo:hi])
            attrs += [frozenset(NAMES[j] for j in bb) for bb in bits[lo:hi]]
        return np.concatenate(sents), np.concatenate(mems), attrs

    # -- queries -------------------------------------------------------------------------------

    def queries(
        self, kind: str, n: int, stored: int, seed: int = 0
    ) -> tuple[np.ndarray, list[frozenset[str]], np.ndarray | None]:
        """``n`` queries of ``kind`` (``near`` or ``fresh``) against a memory of the first ``stored``
        turns: ``(sent (n, 256) float32, attrs [frozenset], source turn ids or None)``."""
        rng = np.random.default_rng([self.seed, 3, seed, {"near": 0, "fresh": 1}[kind]])
        if kind == "fresh":
            s, bits = self._draw(rng, n)
            return s, [frozenset(NAMES[j] for j in b) for b in bits], None
        src = np.sort(rng.choice(stored, n, replace=False)) if n <= stored else rng.integers(0, stored, n)
        sent = np.empty((n, DIM), np.float32)
        attrs: list[frozenset[str]] = []
        blocks: dict[int, tuple[Any, ...]] = {}  # each 10k block generated once
        for i, j in enumerate(src.tolist()):
            b0 = (j // 10_000) * 10_000
            if b0 not in blocks:
                blocks[b0] = self.block(b0, min(10_000, max(stored - b0, 1)))
            bs, _, ba = blocks[b0]
            s, a = bs[j - b0 : j - b0 + 1], ba[j - b0]
            noise = _unit(rng.standard_normal(DIM))[None] * 0.45  # cos to the stored turn ~0.9
            sent[i] = _unit(s + noise)[0]
            a = sorted(a)
            if a:
                a.pop(int(rng.integers(len(a))))
            a.append(NAMES[int(rng.integers(N_NAMES))])
            attrs.append(frozenset(a))
        return sent, attrs, src + 1
