"""The 384 attribute values of a character in its context, from the installed ``text`` modality.

The lab's token ids are decoded back to text (:class:`~v22sdk.specdec.corpus.CharVocab`) and the
text modality plugin (built in: ``v22sdk_text``; looked up through the plugin registry like any
third-party one) tokenizes it; the attribute row of the **last** character is the answer. Only
the text up to and including that character is passed, never what follows: a scheduler may use
the value before the next token exists (non-anticipating), and the value of a drafted character
never depends on later drafted ones.

Plugin calls cost milliseconds (jieba segmentation, word rules), so results are memoised by the
exact text; :attr:`ContextAttributes.lookups` counts every request (what a deployment would pay)
and :attr:`ContextAttributes.calls` the plugin calls actually made.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from v22sdk.specdec.corpus import CharVocab

ATTR_DIM = 384


class ContextAttributes:
    """``last(rows)`` -> ``(len(rows), 384)`` float32: the attributes of each row's last character."""

    def __init__(self, vocab: CharVocab, modality: str = "text", max_cache: int = 500_000):
        from v22sdk.plugins import get_registry

        self.vocab = vocab
        self.modality = get_registry().modality(modality)
        self.schema = self.modality.schema
        self.max_cache = max_cache
        self._cache: dict[str, np.ndarray] = {}
        self.lookups = 0
        self.calls = 0

    def of_text(self, text: str) -> np.ndarray:
        """``(384,)`` float32 attributes of the last character of ``text`` (read-only, memoised)."""
        self.lookups += 1
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        self.calls += 1
        row = np.array(self.modality.encode(text).attr[-1], dtype=np.float32)
        row.flags.writeable = False
        if len(self._cache) >= self.max_cache:
            self._cache.clear()
        self._cache[text] = row
        return row

    def last(self, rows: Sequence[Sequence[int]] | np.ndarray) -> np.ndarray:
        """Token-id rows (each: context then drafted ids, any lengths) -> ``(N, 384)`` float32."""
        out = np.zeros((len(rows), ATTR_DIM), dtype=np.float32)
        for i, ids in enumerate(rows):
            out[i] = self.of_text(self.vocab.decode(ids))
        return out

    def slot_name(self, index: int) -> str:
        """The dotted name of attribute ``index`` (0..383), or ``attr[i]`` where none is declared."""
        return self.schema.name(index) or f"attr[{index}]"
