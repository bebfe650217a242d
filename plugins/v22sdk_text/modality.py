"""The built-in ``text`` modality: one token per character, attributes from its word and sentence."""

from __future__ import annotations

import functools
import os
import unicodedata
from typing import Any

import attrs
import numpy as np

from v22sdk import Encoding, InputError, InputSpec, Modality, Sample, TokenBuffer

from .slots import COL, SCHEMA

# Code points that str.isspace() accepts (all below U+3001).
_SPACES = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)
_SENT_LEN_NORM = np.log2(1.0 + 512.0)
assert (SCHEMA.indices == np.arange(128)).all(), "the text schema must fill attr 0..127 in order"


@functools.cache
def _table():
    from .words import WordTable

    return WordTable()


def clear_caches() -> None:
    """Empty the segmentation and word caches (results never depend on them; for benchmarks)."""
    from .segment import cut_han

    cut_han.cache_clear()
    _table().clear()


# The per-character columns: word/sentence position 106..111 and script 112..116 (one block), and
# the sentence length 126. Everything else in attr[:, :128] is a word row broadcast to its characters.
_POS0, _POS1 = COL["lang.position.word_begin"], COL["lang.script.other"] + 1
_SENT_LEN = COL["lang.sent.length"]
assert [
    COL[f"lang.position.{n}"]
    for n in ("word_begin", "word_end", "word_single", "in_word", "in_sentence", "word_length")
] == list(range(_POS0, _POS0 + 6))
assert [COL[f"lang.script.{n}"] for n in ("han", "latin", "digit", "whitespace", "other")] == list(
    range(_POS0 + 6, _POS1)
)
_CHUNK = 4096  # characters per block when filling attr: keeps the gathered rows in cache


def is_space(cps: np.ndarray) -> np.ndarray:
    """(N,) code points -> (N,) bool, exactly str.isspace()."""
    return np.isin(cps, _SPACES)


def _char_columns(
    cps: np.ndarray, lens: np.ndarray, sid: np.ndarray, scratch: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-character columns: ((N, 11) float32 for attr 106..116, (N,) float32 for attr 126).

    cps: (N,) code points; lens: (W,) word lengths in characters; sid: (W,) sentence id per word.
    scratch: a flat float32 array of at least N * 11 values to hold the (N, 11) array.
    """
    n = cps.size
    width = _POS1 - _POS0
    if scratch is not None and scratch.size >= n * width:
        P = scratch[: n * width].reshape(n, width)
    else:
        P = np.empty((n, width), dtype=np.float32)
    # script
    han = (
        ((cps >= 0x4E00) & (cps <= 0x9FFF))
        | ((cps >= 0x3400) & (cps <= 0x4DBF))
        | ((cps >= 0xF900) & (cps <= 0xFAFF))
        | ((cps >= 0x20000) & (cps <= 0x3134F))
        | (cps == 0x3007)
    )
    latin = (
        ((cps | 0x20) >= 0x61) & ((cps | 0x20) <= 0x7A)
        | ((cps >= 0xC0) & (cps <= 0x24F) & (cps != 0xD7) & (cps != 0xF7))
        | ((cps >= 0xFF21) & (cps <= 0xFF3A))
        | ((cps >= 0xFF41) & (cps <= 0xFF5A))
    )
    digit = ((cps >= 0x30) & (cps <= 0x39)) | ((cps >= 0xFF10) & (cps <= 0xFF19))
    space = is_space(cps)
    P[:, 6] = han
    P[:, 7] = latin
    P[:, 8] = digit
    P[:, 9] = space
    P[:, 10] = ~(han | latin | digit | space)
    # position in the word
    wlen = np.repeat(lens, lens)
    k = np.arange(n) - np.repeat(np.cumsum(lens) - lens, lens)  # index inside the word
    multi = wlen > 1
    P[:, 0] = multi & (k == 0)
    P[:, 1] = multi & (k == wlen - 1)
    P[:, 2] = ~multi
    P[:, 3] = (k + 1) / wlen
    P[:, 5] = np.minimum(wlen, 8) / 8.0
    # position in the sentence
    sid_chars = np.repeat(sid, lens)
    starts = np.flatnonzero(np.r_[True, sid_chars[1:] != sid_chars[:-1]])
    slen = np.diff(np.r_[starts, n])
    s_of = np.repeat(np.arange(starts.size), slen)
    P[:, 4] = (np.arange(n) - starts[s_of] + 1) / slen[s_of]
    S = np.minimum(1.0, np.log2(1.0 + slen[s_of]) / _SENT_LEN_NORM).astype(np.float32)
    return P, S


@attrs.frozen(eq=False)
class _Zone:
    """What the language zone of one text is made from, before it is written out (M tokens)."""

    A: np.ndarray  # (W, 128) float32 word rows after the context rules, column-major
    word_of: np.ndarray  # (M,) int64 word of each token
    P: np.ndarray  # (M, 11) float32 attr 106..116
    S: np.ndarray  # (M,) float32 attr 126
    cps: np.ndarray  # (M,) uint32 code points
    char: np.ndarray  # (M,) int64 character offsets


def _analyse(text: str, keep_whitespace: bool, source: str, scratch: np.ndarray | None = None) -> _Zone:
    """NFC ``text`` -> its :class:`_Zone`: M = N characters, or the non-whitespace ones.

    Word rows are computed once per distinct word (``WordTable``) and adjusted by the context rules
    as a (W, 128) column-major array (each rule writes whole columns); no (N, 128) array is built.
    ``scratch``: a flat float32 array of N * 256 values (the emb rows, written last) to build
    that (W, 128) array in (W <= N) and, after N * 128 values, the (N, 11) per-character
    columns; the caller keeps it untouched until the zone is written out.
    """
    from . import context
    from .segment import split_words

    table = _table()
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    words, kinds = split_words(text, cps)
    ids = table.lookup(words, kinds)
    if scratch is not None and scratch.size < cps.size * 256:
        scratch = None
    A = table.gather(ids, scratch)  # (W, 128) column-major copy: the rules edit it in place
    flags = table.flags[ids]
    sid = context.apply(A, flags, words)
    lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    P, S = _char_columns(cps, lens, sid, None if scratch is None else scratch[cps.size * 128 :])
    word_of = np.repeat(np.arange(len(words)), lens)
    if keep_whitespace:
        char = np.arange(cps.size, dtype=np.int64)
    else:
        char = np.flatnonzero(P[:, 9] == 0)
        if char.size == 0:
            raise InputError(source, "holds only whitespace, and keep_whitespace is False")
        cps, P, S, word_of = cps[char], P[char], S[char], word_of[char]
    return _Zone(A, word_of, P, S, cps, char)


def _write_attr(zone: _Zone, attr: np.ndarray) -> None:
    """Write the language zone into ``attr[:, :128]`` (M, 384); ``attr[:, 128:]`` must hold zeros
    already (fresh ``np.zeros`` memory, or a ``TokenBuffer`` asked for them). Cache-sized blocks of
    rows: each block's word rows are gathered into a small scratch array that stays in cache,
    then copied once."""
    m = zone.cps.size
    scratch = np.empty((min(_CHUNK, m), 128), dtype=np.float32)
    for lo in range(0, m, _CHUNK):
        w = zone.word_of[lo : lo + _CHUNK]
        w0 = int(w[0])
        rows = np.ascontiguousarray(zone.A[w0 : int(w[-1]) + 1])  # this block's words, row-major
        tmp = scratch[: w.size]
        np.take(rows, w - w0, axis=0, out=tmp, mode="clip")  # in range; "raise" would buffer
        tmp[:, _POS0:_POS1] = zone.P[lo : lo + _CHUNK]
        tmp[:, _SENT_LEN] = zone.S[lo : lo + _CHUNK]
        attr[lo : lo + _CHUNK, :128] = tmp


def language_zone(
    text: str, keep_whitespace: bool = True, source: str = "<text>"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NFC ``text`` -> (attr (M, 384) float32 with attr[:, :128] set, (M,) uint32 code points,
    (M,) int64 character offsets), M = N characters, or the non-whitespace ones."""
    zone = _analyse(text, keep_whitespace, source)
    attr = np.zeros((zone.cps.size, 384), dtype=np.float32)
    _write_attr(zone, attr)
    return attr, zone.cps, zone.char


def language_rows(text: str) -> tuple[np.ndarray, np.ndarray]:
    """NFC ``text`` -> ((N, 128) float32 language-zone values, (N,) uint32 code points)."""
    attr, cps, _ = language_zone(text)
    return np.ascontiguousarray(attr[:, :128]), cps


def _check_max_chars(_instance: Any, _attribute: Any, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_chars must be a positive integer, got {value!r}")


def _too_long(n: int, limit: int) -> str:
    return (
        f"holds {n:,} characters, more than max_chars={limit:,} (each is a 2,560-byte token: "
        f"{n * 2560 / 1e9:.1f} GB); split it, or raise the bound with -c max_chars=N"
    )


@attrs.frozen
class TextModality(Modality):
    """Text -> one token per character of the NFC-normalised text.

    ``keep_whitespace`` (default True) keeps whitespace characters as tokens, so token ``i`` is
    character ``i`` of the NFC text; with False they are dropped (``offsets["char"]`` still gives
    each token's position in the NFC text) and a text made only of whitespace is an error.

    ``max_chars`` (default 250,000) bounds one input: every character is a 2,560-byte token, so
    250k characters are 640 MB of tokens, and a 10 MB file would need 25 GB. A longer text is an
    ``InputError`` before anything is allocated (a file: before it is read); split it, or raise
    the bound (``-c max_chars=N``).
    """

    name = "text"
    extensions = (".txt", ".md")
    priority = 10  # built-in: keeps its extensions when a plugin also claims them (plugins.py)
    writes_into_buffer = True  # encode(text, out=buffer) computes straight into the buffer
    schema = SCHEMA
    input_spec = InputSpec(
        kind="text", dtypes=(), ndim=(), units=(), description="a str (NFC-normalised), or a UTF-8/UTF-16 .txt/.md file"
    )
    keep_whitespace: bool = True
    max_chars: int = attrs.field(default=250_000, validator=_check_max_chars)

    def load(self, path: str | os.PathLike[str]) -> Sample:
        from .textio import read_text_file

        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0  # read_text_file names the problem
        if size > 4 * self.max_chars:  # no encoding we read spends more than 4 bytes per character
            raise InputError(
                str(path),
                f"is {size:,} bytes, more than max_chars={self.max_chars:,} characters "
                "can take; split it, or raise the bound with -c max_chars=N",
            )
        return Sample(read_text_file(path), {}, str(path))

    def encode(self, data, *, out: TokenBuffer | None = None, **units: float) -> Encoding:
        """str -> Encoding(emb (N, 256) unit rows, attr (N, 384) with attr[:, :128] set, offsets char (N,)).

        ``out``: a :class:`~v22sdk.TokenBuffer` to write emb and attr into (``tokenize(text, out=buffer)``).
        """
        from .embedding import EMB_DIM, embed_code_points

        source = "<text>"
        if isinstance(data, os.PathLike):
            raise InputError(str(data), "is a path: use tokenize_file(path) to read a text file")
        if not isinstance(data, str):
            raise InputError(source, f"the text modality takes a str, got {type(data).__name__}")
        if len(data) > 4 * self.max_chars:  # NFC can shrink a text, not by 4x: refuse before normalising
            raise InputError(source, _too_long(len(data), self.max_chars))
        text = unicodedata.normalize("NFC", data)
        if not text:
            raise InputError(source, "is empty; the text modality needs at least one character")
        if len(text) > self.max_chars:
            raise InputError(source, _too_long(len(text), self.max_chars))
        # The word rows (W, 128) are built in the memory of emb, which is written last: W <= N
        # words fit in N rows of 256, and a second array of up to 174 MB (a 1 MB text) would cost
        # its own page faults. Without keep_whitespace, fresh emb has only M <= N rows: not used.
        n = len(text)
        emb = attr = None
        if out is not None:
            emb = out.rows(n, zero_from=128)[0]  # the text slots are attr[:, :128]
        elif self.keep_whitespace:
            emb = np.empty((n, EMB_DIM), dtype=np.float32)
        # the language zone is attr[:, 0:128], in schema order (checked at import above)
        zone = _analyse(text, self.keep_whitespace, source, scratch=None if emb is None else emb.reshape(-1))
        m = zone.cps.size
        if out is not None:
            emb, attr = out.rows(m, zero_from=128)
        else:
            if emb is None:
                emb = np.empty((m, EMB_DIM), dtype=np.float32)
            attr = np.zeros((m, 384), dtype=np.float32)  # calloc: the kernel's zero pages, not a pass of ours
        _write_attr(zone, attr)  # the last read of the word rows
        embed_code_points(zone.cps, out=emb)  # overwrites them
        return Encoding(emb=emb, attr=attr, offsets={"char": zone.char})

    @classmethod
    def sample_inputs(cls):
        from hypothesis import strategies as st

        # valid for every configuration (the method cannot see the instance's): with
        # keep_whitespace=False a whitespace-only text is refused, so none is drawn
        return (
            st.text(min_size=1, max_size=200).filter(lambda s: not s.isspace()).map(lambda s: Sample(s, {}, "<text>"))
        )

    def invalid_inputs(self, valid: Sample) -> list[tuple[str, Sample]]:
        return super().invalid_inputs(valid) + [
            ("wrong_dtype", Sample(["a", "list"], {}, valid.source)),
            ("wrong_dtype", Sample(None, {}, valid.source)),
        ]
