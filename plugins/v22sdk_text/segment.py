"""Splitting text into words: a regex for scripts and symbols, jieba's dictionary for Chinese runs.

Chinese runs go through ``jieba.lcut(run, HMM=False)``: jieba's prefix dictionary and its
maximum-probability path, without the HMM for unknown words (which is what makes
``jieba.posseg`` slow; the HMM only re-joins out-of-dictionary characters, which the rules then
see as single-character words). jieba is imported and initialised lazily, once, quietly.
"""

from __future__ import annotations

import functools
import re

# Word kinds (small ints so that they can live in numpy arrays).
HAN, LATIN, NUM, SPACE, LETTERS, OTHER = range(6)

_HAN_CLASS = "\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_LATIN_LETTER = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\uff21-\uff3a\uff41-\uff5a"
_TOKEN = re.compile(
    rf"(?P<han>[{_HAN_CLASS}]+)"
    rf"|(?P<latin>[{_LATIN_LETTER}_](?:[{_LATIN_LETTER}0-9_]|['’](?=[{_LATIN_LETTER}]))*)"
    r"|(?P<num>[0-9０-９]+(?:[.,][0-9０-９]+)*(?:st|nd|rd|th)?)"
    r"|(?P<space>\s+)"
    r"|(?P<letters>[^\W\d_]+)"
    r"|(?P<other>.)",
    re.S,
)
_KIND = {"han": HAN, "latin": LATIN, "num": NUM, "space": SPACE, "letters": LETTERS, "other": OTHER}


@functools.cache
def _jieba():
    """jieba's default tokenizer, initialised once with its log output silenced."""
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


@functools.lru_cache(maxsize=1 << 16)
def cut_han(run: str) -> tuple[str, ...]:
    """Words of a run of Han characters (dictionary segmentation, no HMM), cached per run."""
    return tuple(_jieba().lcut(run, HMM=False))


def split_words(text: str) -> tuple[list[str], list[int]]:
    """``text`` -> (words, kinds). The words concatenate back to ``text`` exactly."""
    words: list[str] = []
    kinds: list[int] = []
    for m in _TOKEN.finditer(text):
        kind = _KIND[m.lastgroup]
        if kind == HAN:
            parts = cut_han(m.group())
            words.extend(parts)
            kinds.extend([HAN] * len(parts))
        else:
            words.append(m.group())
            kinds.append(kind)
    return words, kinds
