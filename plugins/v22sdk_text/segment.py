"""Splitting text into words: a regex for scripts and symbols, jieba's dictionary for Chinese runs.

Chinese runs go through ``jieba.lcut(run, HMM=False)``: jieba's prefix dictionary and its
maximum-probability path, without the HMM for unknown words (which is what makes
``jieba.posseg`` slow; the HMM only re-joins out-of-dictionary characters, which the rules then
see as single-character words). The same segmentation is computed by :mod:`.dictionary` from
jieba's dictionary file, without initialising jieba (0.5-0.8 s in every process).
"""

from __future__ import annotations

import functools
import re

import numpy as np

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


@functools.lru_cache(maxsize=1 << 16)
def cut_han(run: str) -> tuple[str, ...]:
    """Words of a run of Han characters: ``jieba.lcut(run, HMM=False)`` (dictionary segmentation, no
    HMM) computed by :mod:`.dictionary` without jieba's start-up cost, cached per run."""
    from .dictionary import default_dictionary

    return tuple(default_dictionary().lcut(run))


def _piece_kinds(first: np.ndarray, pieces: list[str], starts: np.ndarray) -> np.ndarray:
    """(P,) code point of each piece's first character -> (P,) int8 word kind.

    Each alternative of ``_TOKEN`` matches iff its first character class does, and they are tried
    in order, so a piece's kind is a function of its first character alone.
    """
    c = first
    kinds = np.full(c.size, -1, dtype=np.int8)
    han = (
        ((c >= 0x4E00) & (c <= 0x9FFF))
        | ((c >= 0x3400) & (c <= 0x4DBF))
        | ((c >= 0xF900) & (c <= 0xFAFF))
        | ((c >= 0x20000) & (c <= 0x3134F))
        | (c == 0x3007)
    )
    latin = (
        (((c | 0x20) >= 0x61) & ((c | 0x20) <= 0x7A))
        | (c == 0x5F)
        | ((c >= 0xC0) & (c <= 0x24F) & (c != 0xD7) & (c != 0xF7))
        | ((c >= 0xFF21) & (c <= 0xFF3A))
        | ((c >= 0xFF41) & (c <= 0xFF5A))
    )
    num = ((c >= 0x30) & (c <= 0x39)) | ((c >= 0xFF10) & (c <= 0xFF19))
    kinds[han] = HAN
    kinds[latin] = LATIN
    kinds[num] = NUM
    # the rest of ASCII is either whitespace or a one-character "other" piece
    ascii_rest = (kinds < 0) & (c < 0x80)
    kinds[ascii_rest] = np.where(np.isin(c[ascii_rest], _ASCII_SPACE), SPACE, OTHER)
    for i in np.flatnonzero(kinds < 0).tolist():  # rare: other scripts, symbols, spaces
        ch = pieces[i][0]
        kinds[i] = SPACE if ch.isspace() else LETTERS if ch.isalnum() and not ch.isdecimal() else OTHER
    return kinds


_ASCII_SPACE = np.array([c for c in range(0x80) if chr(c).isspace()], dtype=np.uint32)
_PIECE = re.compile(
    _TOKEN.pattern.replace("(?P<han>", "(?:")
    .replace("(?P<latin>", "(?:")
    .replace("(?P<num>", "(?:")
    .replace("(?P<space>", "(?:")
    .replace("(?P<letters>", "(?:")
    .replace("(?P<other>", "(?:"),
    re.S,
)


def split_words(text: str, cps: np.ndarray | None = None) -> tuple[list[str], np.ndarray]:
    """``text`` -> (words, (W,) int8 kinds). The words concatenate back to ``text`` exactly.

    ``cps``: the (N,) code points of ``text`` when the caller has them. One ``findall`` cuts the
    text into script runs; the runs' kinds are classified with array ops from their first code
    point, and only the Han runs go through jieba (cached per run).
    """
    pieces = _PIECE.findall(text)
    if cps is None:
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    plen = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    starts = np.cumsum(plen) - plen
    kinds = _piece_kinds(cps[starts], pieces, starts)
    han = np.flatnonzero(kinds == HAN).tolist()
    if not han:
        return pieces, kinds
    words: list[str] = []
    counts = np.ones(len(pieces), dtype=np.int64)
    prev = 0
    for i in han:
        words += pieces[prev:i]
        parts = cut_han(pieces[i])
        words += parts
        counts[i] = len(parts)
        prev = i + 1
    words += pieces[prev:]
    return words, np.repeat(kinds, counts)
