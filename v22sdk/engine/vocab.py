"""The output vocabulary: the characters of the target texts plus ``<pad>``, ``<unk>``, ``<eos>``.

P6 scores its predictions against the vocabulary's embeddings (tied weights), and P7 attends over
them, so the embeddings must be the same vectors the text modality gives those characters: they
are taken from the registered ``text`` modality (one token per character) when it is installed.
Otherwise (and for the three specials) each row is a seeded unit vector of the code point
(:func:`fallback_vector`). The matrix is stored in the checkpoint, so a trained model does not
change when a plugin does. ``<eos>`` is our addition: P6 decodes in parallel, and without an
end marker it cannot say how long its answer is (upstream decoded ``len(target)`` positions,
which uses the answer at inference).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np

PAD, UNK, EOS = 0, 1, 2
SPECIALS = ("<pad>", "<unk>", "<eos>")
#: seeds of the fallback vectors: code point + this offset; specials use offsets 0..2.
_FALLBACK_SEED = 0x5622_0000


def fallback_vector(key: int) -> np.ndarray:
    """(256,) float32 unit vector from ``np.random.default_rng(0x56220000 + key)`` (standard normal)."""
    v = np.random.default_rng(_FALLBACK_SEED + key).standard_normal(256)
    return (v / np.linalg.norm(v)).astype(np.float32)


def _text_vectors(chars: Sequence[str]) -> np.ndarray | None:
    """Per-character emb rows from the ``text`` modality, or None when it is unavailable."""
    try:
        from ..plugins import get_registry

        text = get_registry().modality("text")
        batch = text.tokenize_batch(list(chars))
    except Exception:  # no text plugin, or one that cannot tokenize single characters
        return None
    if len(batch) != len(chars):
        return None
    return np.array(batch.emb, dtype=np.float32)


class OutputVocab:
    """Characters ↔ ids; ``embeddings`` (V, 256) float32, unit rows."""

    def __init__(self, chars: Sequence[str], embeddings: np.ndarray, source: str):
        self.chars = list(chars)
        self.index = {c: i for i, c in enumerate(self.chars)}
        self.embeddings = np.asarray(embeddings, dtype=np.float32)
        self.source = source
        if self.embeddings.shape != (len(self.chars), 256):
            raise ValueError(f"vocabulary embeddings must be ({len(self.chars)}, 256)")

    @classmethod
    def build(cls, targets: Iterable[str], *, use_text_plugin: bool = True) -> OutputVocab:
        letters = sorted({c for t in targets for c in normalise(t)})
        emb = (
            np.stack(
                [fallback_vector(i) for i in range(len(SPECIALS))] + [fallback_vector(0x100 + ord(c)) for c in letters]
            )
            if letters
            else np.stack([fallback_vector(i) for i in range(len(SPECIALS))])
        )
        source = "seeded"
        if use_text_plugin and letters:
            rows = _text_vectors(letters)
            if rows is not None:
                emb[len(SPECIALS) :] = rows
                source = "text"
        return cls(list(SPECIALS) + letters, emb, source)

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str, length: int) -> np.ndarray:
        """(length,) int64: the ids of ``text`` then ``<eos>``, padded with ``<pad>`` (truncated to fit)."""
        ids = [self.index.get(c, UNK) for c in normalise(text)][: length - 1] + [EOS]
        out = np.full(length, PAD, dtype=np.int64)
        out[: len(ids)] = ids
        return out

    def decode(self, ids: Iterable[int]) -> str:
        """Characters up to the first ``<eos>``/``<pad>``; ``<unk>`` shows as U+FFFD."""
        out = []
        for i in ids:
            i = int(i)
            if i in (PAD, EOS):
                break
            out.append("\ufffd" if i == UNK else self.chars[i])
        return "".join(out)

    def to_dict(self) -> dict:
        return {"chars": self.chars, "source": self.source}


def normalise(text: str) -> str:
    """NFC, as the text modality does."""
    return unicodedata.normalize("NFC", text)
