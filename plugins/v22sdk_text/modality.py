"""The built-in ``text`` modality: one token per character, attributes from its word and sentence."""

from __future__ import annotations

import functools
import os
import unicodedata

import attrs
import numpy as np

from v22sdk import Encoding, InputError, InputSpec, Modality, Sample

from .slots import COL, SCHEMA

# Code points that str.isspace() accepts (all below U+3001).
_SPACES = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)
_SENT_LEN_NORM = np.log2(1.0 + 512.0)
assert (SCHEMA.indices == np.arange(128)).all(), "the text schema must fill attr 0..127 in order"


@functools.cache
def _table():
    from .words import WordTable

    return WordTable()


def _script_columns(cps: np.ndarray, out: np.ndarray) -> None:
    """Write the five lang.script.* columns of (N, 128) ``out`` from (N,) code points."""
    han = ((cps >= 0x4E00) & (cps <= 0x9FFF)) | ((cps >= 0x3400) & (cps <= 0x4DBF)) | \
          ((cps >= 0xF900) & (cps <= 0xFAFF)) | ((cps >= 0x20000) & (cps <= 0x3134F)) | (cps == 0x3007)
    latin = ((cps | 0x20) >= 0x61) & ((cps | 0x20) <= 0x7A) | \
            ((cps >= 0xC0) & (cps <= 0x24F) & (cps != 0xD7) & (cps != 0xF7)) | \
            ((cps >= 0xFF21) & (cps <= 0xFF3A)) | ((cps >= 0xFF41) & (cps <= 0xFF5A))
    digit = ((cps >= 0x30) & (cps <= 0x39)) | ((cps >= 0xFF10) & (cps <= 0xFF19))
    space = np.isin(cps, _SPACES)
    out[:, COL["lang.script.han"]] = han
    out[:, COL["lang.script.latin"]] = latin
    out[:, COL["lang.script.digit"]] = digit
    out[:, COL["lang.script.whitespace"]] = space
    out[:, COL["lang.script.other"]] = ~(han | latin | digit | space)


def _positions(lens: np.ndarray, sid_chars: np.ndarray, out: np.ndarray) -> None:
    """Word and sentence position columns of (N, 128) ``out``; lens: (W,) word lengths."""
    n = out.shape[0]
    wlen = np.repeat(lens, lens)
    k = np.arange(n) - np.repeat(np.cumsum(lens) - lens, lens)       # index inside the word
    multi = wlen > 1
    out[:, COL["lang.position.word_begin"]] = multi & (k == 0)
    out[:, COL["lang.position.word_end"]] = multi & (k == wlen - 1)
    out[:, COL["lang.position.word_single"]] = ~multi
    out[:, COL["lang.position.in_word"]] = (k + 1) / wlen
    out[:, COL["lang.position.word_length"]] = np.minimum(wlen, 8) / 8.0
    starts = np.flatnonzero(np.r_[True, sid_chars[1:] != sid_chars[:-1]])
    slen = np.diff(np.r_[starts, n])
    s_of = np.repeat(np.arange(starts.size), slen)
    out[:, COL["lang.position.in_sentence"]] = (np.arange(n) - starts[s_of] + 1) / slen[s_of]
    out[:, COL["lang.sent.length"]] = np.minimum(1.0, np.log2(1.0 + slen[s_of]) / _SENT_LEN_NORM)


def language_rows(text: str) -> tuple[np.ndarray, np.ndarray]:
    """NFC ``text`` -> ((N, 128) float32 language-zone values, (N,) uint32 code points)."""
    from . import context
    from .segment import split_words

    words, kinds = split_words(text)
    ids = _table().lookup(words, kinds)
    table = _table()
    A = table.rows[ids]                    # (W, 128) copy: context rules edit it in place
    flags = table.flags[ids]
    sid = context.apply(A, flags, words)
    lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    out = np.repeat(A, lens, axis=0)       # word rows broadcast to their characters
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    _script_columns(cps, out)
    _positions(lens, np.repeat(sid, lens), out)
    return out, cps


@attrs.frozen
class TextModality(Modality):
    """Text -> one token per character of the NFC-normalised text.

    ``keep_whitespace`` (default True) keeps whitespace characters as tokens, so token ``i`` is
    character ``i`` of the NFC text; with False they are dropped (``offsets["char"]`` still gives
    each token's position in the NFC text) and a text made only of whitespace is an error.
    """

    name = "text"
    extensions = (".txt", ".md")
    schema = SCHEMA
    input_spec = InputSpec(kind="text", dtypes=(), ndim=(), units=(),
                           description="a str (NFC-normalised), or a UTF-8/UTF-16 .txt/.md file")
    keep_whitespace: bool = True

    def load(self, path: str | os.PathLike[str]) -> Sample:
        from .textio import read_text_file

        return Sample(read_text_file(path), {}, str(path))

    def encode(self, data, **units: float) -> Encoding:
        """str -> Encoding(emb (N, 256) unit rows, attr (N, 384) with attr[:, :128] set, offsets char (N,))."""
        from .embedding import embed_code_points

        source = "<text>"
        if isinstance(data, os.PathLike):
            raise InputError(str(data), "is a path: use tokenize_file(path) to read a text file")
        if not isinstance(data, str):
            raise InputError(source, f"the text modality takes a str, got {type(data).__name__}")
        text = unicodedata.normalize("NFC", data)
        if not text:
            raise InputError(source, "is empty; the text modality needs at least one character")
        rows, cps = language_rows(text)
        emb = embed_code_points(cps)
        char = np.arange(len(text), dtype=np.int64)
        if not self.keep_whitespace:
            keep = rows[:, COL["lang.script.whitespace"]] == 0
            if not keep.any():
                raise InputError(source, "holds only whitespace, and keep_whitespace is False")
            rows, emb, char = rows[keep], emb[keep], char[keep]
        # the language zone is attr[:, 0:128], in schema order (checked at import below)
        attr = np.zeros((rows.shape[0], 384), dtype=np.float32)
        attr[:, :128] = rows
        return Encoding(emb=emb, attr=attr, offsets={"char": char})

    @classmethod
    def sample_inputs(cls):
        from hypothesis import strategies as st

        return st.text(min_size=1, max_size=200).map(lambda s: Sample(s, {}, "<text>"))

    def invalid_inputs(self, valid: Sample) -> list[tuple[str, Sample]]:
        return super().invalid_inputs(valid) + [
            ("wrong_dtype", Sample(["a", "list"], {}, valid.source)),
            ("wrong_dtype", Sample(None, {}, valid.source)),
        ]
