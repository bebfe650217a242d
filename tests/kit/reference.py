"""``words``: a correct text modality the kit's own tests use as the reference (and break).

One token per whitespace-separated word. ``emb`` is the word's letter histogram (a..z, case
folded) mapped by a fixed orthonormal 27→256 projection; a word without letters gets the
projection's 27th column. ``attr`` has four language-zone slots; ``offsets["char"]`` is the index
of the word's first character. Everything is computed with array ops over the code points.

This file is self-contained (it imports only numpy, attrs, hypothesis and v22sdk) so that the
pytester tests can copy it into their temporary project.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Any

import attrs
import numpy as np

from v22sdk import AttributeSchema, Encoding, InputError, InputSpec, Modality, Sample

SEED = 7
SCHEMA = AttributeSchema.build(
    "language",
    [
        ("words.length", "number of characters of the word", "len / (len + 4), in (0, 1)"),
        ("words.upper", "share of upper-case letters among the word's characters", "fraction in [0, 1]"),
        ("words.digit", "share of decimal digits among the word's characters", "fraction in [0, 1]"),
        ("words.position", "index of the word in the text", "index / max(1, words - 1), in [0, 1]"),
    ],
)


@functools.cache
def projection() -> np.ndarray:
    """(256, 27) float64, orthonormal columns: 26 letters then the no-letter column."""
    q, _ = np.linalg.qr(np.random.default_rng(SEED).standard_normal((256, 27)))
    return q


def split_words(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Code points (C,), word id per character (-1 on whitespace) and word starts (W,)."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    space = np.array([c.isspace() for c in text], dtype=bool) if text else np.zeros(0, bool)
    start = ~space & np.concatenate([[True], space[:-1]]) if text else np.zeros(0, bool)
    word = np.where(space, -1, np.cumsum(start) - 1)
    return codes, word, np.flatnonzero(start)


def letter_counts(text: str, codes: np.ndarray, word: np.ndarray, n_words: int) -> np.ndarray:
    """(W, 26) counts of a..z per word, case folded."""
    lower = (
        np.frombuffer(text.lower().encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
        if len(text.lower()) == len(text)
        else codes
    )
    letter = lower - ord("a")
    keep = (word >= 0) & (letter >= 0) & (letter < 26)
    return np.bincount(word[keep] * 26 + letter[keep], minlength=n_words * 26).reshape(n_words, 26).astype(float)


@attrs.frozen
class WordsModality(Modality):
    """Per-word tokens of a short text (see the module docstring)."""

    name = "words"
    extensions = (".words",)
    schema = SCHEMA
    input_spec = InputSpec(kind="text", dtypes=(), ndim=())
    max_words: int = 64

    def check_text(self, data: Any) -> str:
        if not isinstance(data, str):
            raise InputError("<words text>", f"expected a str, got {type(data).__name__}")
        text = unicodedata.normalize("NFC", data)
        if not text.strip():
            raise InputError("<words text>", "the text has no words")
        return text

    def embed(self, counts: np.ndarray) -> np.ndarray:
        norm = np.linalg.norm(counts, axis=1, keepdims=True)
        empty = norm[:, 0] == 0
        q = projection()
        emb = (counts / np.where(empty, 1.0, norm[:, 0])[:, None]) @ q[:, :26].T + empty[:, None] * q[:, 26]
        return (emb / np.linalg.norm(emb, axis=1, keepdims=True)).astype(np.float32)

    def attributes(self, text: str, word: np.ndarray, n: int) -> np.ndarray:
        chars = np.array(list(text))
        inword = word >= 0
        length = np.bincount(word[inword], minlength=n).astype(float)
        upper = np.bincount(word[inword], weights=np.char.isupper(chars[inword]), minlength=n)
        digit = np.bincount(word[inword], weights=np.char.isdecimal(chars[inword]), minlength=n)
        attr = np.zeros((n, 384), dtype=np.float32)
        attr[:, SCHEMA.index("words.length")] = length / (length + 4)
        attr[:, SCHEMA.index("words.upper")] = upper / length
        attr[:, SCHEMA.index("words.digit")] = digit / length
        attr[:, SCHEMA.index("words.position")] = np.arange(n) / max(1, n - 1)
        return attr

    def encode(self, data: Any) -> Encoding:
        text = self.check_text(data)
        codes, word, starts = split_words(text)
        if starts.size > self.max_words:
            raise InputError("<words text>", f"{starts.size} words; at most {self.max_words}")
        counts = letter_counts(text, codes, word, starts.size)
        return Encoding(self.embed(counts), self.attributes(text, word, starts.size), {"char": starts.astype(np.int64)})

    @classmethod
    def sample_inputs(cls) -> Any:
        from hypothesis import strategies as st

        word = st.text(alphabet="abcXYZ019.-é", min_size=1, max_size=6)
        gap = st.sampled_from([" ", "  ", "\n", "\t "])
        lead = st.sampled_from(["", " "])
        # Texts may start with a gap; most do not end with one (offsets near the end matter).
        return st.tuples(lead, st.lists(st.tuples(gap, word), min_size=1, max_size=5), lead).map(
            lambda t: Sample(t[0] + "".join(g + w for g, w in t[1])[len(t[1][0][0]) :] + t[2])
        )
