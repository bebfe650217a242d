"""The speed paths give exactly what the plain definitions give (bit-identical tokens).

Each fast path (one-regex splitting with array-classified kinds, the word cache, the block-wise
fill of attr, the presence-table embedding lookup) is compared with the straightforward version
of the same computation, including cases built to break a wrong shortcut.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from v22sdk_text import TextModality, modality
from v22sdk_text.embedding import code_point_vectors, embed_code_points
from v22sdk_text.segment import _KIND, _TOKEN, HAN, cut_han, split_words
from v22sdk_text.words import WordTable

MIXED = (
    "因为下雨，所以我们没有去公园。 I didn't go because it rained!\n第二行：你好吗？ "
    "As a result, prices fell 3.5% in 2024 (二〇二四年). 他正在看书，太好了！\n\n"
)


def reference_split(text: str) -> tuple[list[str], list[int]]:
    """The definition: every match of the tokenizing regex, Han runs cut by jieba."""
    words, kinds = [], []
    for m in _TOKEN.finditer(text):
        kind = _KIND[m.lastgroup]
        parts = cut_han(m.group()) if kind == HAN else (m.group(),)
        words.extend(parts)
        kinds.extend([kind] * len(parts))
    return words, kinds


def _same_split(text: str) -> None:
    words, kinds = split_words(text)
    ref_words, ref_kinds = reference_split(text)
    assert words == ref_words
    assert kinds.tolist() == ref_kinds


def test_split_kind_of_every_code_point():
    # every BMP character and every 97th one beyond, each starting a run (after a NUL separator),
    # so the array classification of first characters is checked against the regex for all of them
    cps = [c for c in range(1, 0x10000) if not 0xD800 <= c <= 0xDFFF] + list(range(0x10000, 0x110000, 97))
    _same_split("\x00".join(map(chr, cps)))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=12),
            st.sampled_from(
                ["因为下雨", "don't", "x_y2", "３４５", "1,024.5th", " \u3000\n", "ǅungla", "Ⅻ", "٣", "_", "é"]
            ),
        ),
        max_size=12,
    )
)
def test_split_matches_reference(parts):
    _same_split("".join(parts))


def test_blocks_and_whitespace_drop_match_across_block_edges(monkeypatch):
    text = MIXED * 40  # ~4,500 characters: several fill blocks
    full = TextModality().encode(text)
    monkeypatch.setattr(modality, "_CHUNK", 7)  # block edges inside words and sentences
    small = TextModality().encode(text)
    assert full.attr.tobytes() == small.attr.tobytes() and full.emb.tobytes() == small.emb.tobytes()
    dropped = TextModality(keep_whitespace=False).encode(text)
    keep = np.array([not ch.isspace() for ch in text])
    assert np.array_equal(dropped.offsets["char"], np.flatnonzero(keep))
    assert dropped.attr.tobytes() == full.attr[keep].tobytes()
    assert dropped.emb.tobytes() == full.emb[keep].tobytes()


def test_word_cache_never_changes_results(monkeypatch):
    texts = [MIXED, "I never lie. 我不去。", MIXED[::-1], "So good! 太好了！" * 3]
    expected = [TextModality().encode(t).attr.tobytes() for t in texts]
    # a tiny cache that is emptied between almost every text, and one filled in another order
    for table in (WordTable(limit=3), WordTable()):
        monkeypatch.setattr(modality, "_table", lambda table=table: table)
        for t, want in zip(texts[::-1], expected[::-1]):
            assert TextModality().encode(t).attr.tobytes() == want


def test_embedding_lookup_paths_agree():
    rng = np.random.default_rng(7)
    cps = np.r_[rng.integers(0, 0x110000, 70_000), [0, 0x10FFFF, 0x4E00, 0x4E00]].astype(np.uint32)
    long = embed_code_points(cps)  # >= 65,536: presence-table path
    short = embed_code_points(cps[:1000])  # np.unique path
    assert long.tobytes() == code_point_vectors(cps).tobytes()
    assert short.tobytes() == long[:1000].tobytes()
