"""Arbitrary Unicode never crashes the text modality and always keeps the token contract."""

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from v22sdk_text import TextModality

from v22sdk import InputError

MODEL = TextModality(max_chars=2_000_000)  # the 1 MB test is one input, over the default bound
# emoji, combining marks, RTL (Arabic, Hebrew), controls, CJK, Latin, zero-width, surrogate-free
ALPHABET = st.characters(exclude_categories=("Cs",))
PIECES = st.sampled_from(
    [
        "😀👍🏽",
        "e\u0301\u0323",
        "مرحبا بالعالم",
        "שלום",
        "\x00\x07\x1b",
        "\u200b\u200d\ufeff",
        "因为下雨，所以",
        "don't stop?!",
        "第三百二十一个",
        "\r\n\n",
        "1,024.5th",
        "…“”",
    ]
)


def _check(text: str) -> None:
    try:
        b = MODEL.tokenize(text)
    except InputError:
        assert not text  # only the empty string is refused
        return
    assert len(b) == len(__import__("unicodedata").normalize("NFC", text))
    assert np.abs(np.linalg.norm(b.emb.astype(np.float64), axis=1) - 1).max() <= 1e-4
    assert np.isfinite(b.attr).all() and np.abs(b.attr).max() <= 1.0
    assert not b.attr[:, 128:].any()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=ALPHABET, max_size=300))
def test_arbitrary_unicode(text):
    _check(text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(PIECES, st.text(alphabet=ALPHABET, max_size=20)), max_size=30))
def test_mixed_scripts_and_controls(pieces):
    _check("".join(pieces))


@pytest.mark.slow  # a megabyte of text: about 12 s
def test_one_megabyte_string():
    """~1 MB of UTF-8 mixing every kind of piece above, tokenized in one call."""
    rng = random.Random(7)
    pool = [
        "因为下雨，所以我们没有去公园。",
        "I didn't go because it rained! ",
        "😀",
        "e\u0301",
        "مرحبا ",
        "\x07",
        "\n",
        "第三百二十一个",
        "tokenize_file(x) ",
        chr(0x10FFFD),
        "ꙮ",
    ]
    parts, size = [], 0
    while size < 1_000_000:
        p = rng.choice(pool)
        parts.append(p)
        size += len(p.encode("utf-8", "surrogatepass"))
    _check("".join(parts))


@settings(max_examples=100, deadline=None)
@given(TextModality.sample_inputs())
def test_every_sample_input_is_valid_for_every_configuration(sample):
    """sample_inputs() is a classmethod, blind to the instance's configuration, so what it draws must
    be valid whatever the configuration: a whitespace-only text is refused when keep_whitespace is
    False, so it is not drawn (the kit would otherwise fail that configuration at random)."""
    for model in (TextModality(), TextModality(keep_whitespace=False)):
        assert len(model.tokenize(sample.data)) >= 1
