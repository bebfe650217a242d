"""``tokenize(text, out=buffer)``: the same tokens as fresh output, in reused memory.

The text modality writes straight into a :class:`v22sdk.TokenBuffer` and leaves ``attr[:, 128:]``
to the buffer's zero tracking, so these tests reuse one buffer across texts of different lengths,
after other writers dirtied it, and with whitespace dropped, and compare bit for bit with the
fresh-output path.
"""

import numpy as np
import pytest
from v22sdk_text import TextModality

from v22sdk import ATTR_DIM, EMB_DIM, Encoding, Modality, TokenBuffer
from v22sdk.schema import AttributeSchema

MIXED = (
    "因为下雨，所以我们没有去公园。 I didn't go because it rained!\n第二行：你好吗？ "
    "As a result, prices fell 3.5% in 2024 (二〇二四年). 他正在看书，太好了！\n\n"
)


def _same(a, b) -> None:
    assert a == b  # TokenBatch equality: every array bit for bit
    assert a.emb.tobytes() == b.emb.tobytes() and a.attr.tobytes() == b.attr.tobytes()


@pytest.mark.parametrize("keep_whitespace", [True, False])
def test_reused_buffer_gives_the_fresh_tokens(keep_whitespace):
    model = TextModality(keep_whitespace=keep_whitespace)
    buf = TokenBuffer()
    # long, short (stale rows after it), longer (the buffer grows), short again
    for text in (MIXED * 30, "你好 world", MIXED * 45, MIXED[:7], MIXED * 3):
        _same(model.tokenize(text, out=buf), model.tokenize(text))
    assert buf.capacity == len(MIXED * 45)  # the longest text's characters (whitespace included)


def test_batch_is_a_view_of_the_buffer_until_it_grows():
    model = TextModality()
    buf = TokenBuffer(capacity=1000)
    first = model.tokenize("abc", out=buf)
    assert np.shares_memory(first.emb, buf.rows(3)[0])
    saved = model.tokenize("abc")
    model.tokenize("xyz", out=buf)  # overwrites: like numpy's out=
    assert first != saved
    kept = model.tokenize("abc", out=buf)
    model.tokenize(MIXED * 20, out=buf)  # needs more than 1000 rows: new memory
    _same(kept, saved)  # the earlier batch keeps the old memory intact


def test_buffer_written_by_another_modality_is_cleared_where_text_writes_nothing():
    buf = TokenBuffer()
    n = len(MIXED)
    emb, attr = buf.rows(n)  # another writer fills every element
    emb[:] = 7.0
    attr[:] = 0.5
    model = TextModality()
    _same(model.tokenize(MIXED, out=buf), model.tokenize(MIXED))
    # the tracking is what clears attr[:, 128:]: without it the stale 0.5s would be caught
    emb, attr = buf.rows(n)
    attr[:, 300] = 0.5
    buf._zero = (128, n)  # a buffer that wrongly believes attr[:, 128:] is zero
    with pytest.raises(Exception, match="not declared"):
        model.tokenize(MIXED, out=buf)


class _Plain(Modality):
    """A modality that does not write into buffers: its tokens are copied in."""

    name = "plain"
    schema = AttributeSchema.build("language", [("lang.x", "x", "[0, 1]")])

    def encode(self, data, **units):
        n = len(data)
        emb = np.zeros((n, EMB_DIM), dtype=np.float32)
        emb[:, 0] = 1.0
        attr = np.zeros((n, ATTR_DIM), dtype=np.float32)
        attr[:, 0] = np.linspace(0, 1, n, dtype=np.float32)
        return Encoding(emb=emb, attr=attr)


def test_every_modality_takes_out_and_copies_into_it():
    buf = TokenBuffer()
    plain = _Plain()
    batch = plain.tokenize("abcd", out=buf)
    _same(batch, plain.tokenize("abcd"))
    assert np.shares_memory(batch.attr, buf.rows(4)[1])
    # then text in the same buffer: the copy dirtied nothing text relies on
    _same(TextModality().tokenize(MIXED, out=buf), TextModality().tokenize(MIXED))


def test_out_must_be_a_token_buffer():
    with pytest.raises(TypeError, match="TokenBuffer"):
        TextModality().tokenize("abc", out=np.zeros((3, 640), dtype=np.float32))
    with pytest.raises(ValueError, match="capacity"):
        TokenBuffer(-1)
