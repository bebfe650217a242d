"""Contract-style checks of the text modality (shape, norm, bounds, determinism, errors, files)."""

import codecs

import numpy as np
import pytest
from v22sdk_text import TextModality
from v22sdk_text.embedding import SEED, code_point_vectors
from v22sdk_text.slots import SCHEMA, markdown_table

from v22sdk import InputError, TokenBatch, get_registry

MIXED = "因为下雨，所以我们没有去公园。 I didn't go because it rained!\n第二行：你好吗？"


def test_registered():
    reg = get_registry()
    assert "text" in reg.names("modalities")


def test_schema_has_128_named_slots_filling_the_language_zone():
    assert len(SCHEMA) == 128
    assert list(SCHEMA.indices) == list(range(128))
    assert SCHEMA.index("lang.logic.cause") == 42 and SCHEMA.index("lang.polarity.score") == 34
    table = markdown_table()
    assert table.count("\n") == 129 and "`lang.neg.negated`" in table


def test_shapes_offsets_norm_bounds(text):
    b = text.tokenize(MIXED)
    assert isinstance(b, TokenBatch) and len(b) == len(MIXED)
    assert b.offsets["char"].tolist() == list(range(len(MIXED)))
    norms = np.linalg.norm(b.emb.astype(np.float64), axis=1)
    assert np.abs(norms - 1).max() <= 1e-4
    assert np.isfinite(b.attr).all() and np.abs(b.attr).max() <= 1.0
    assert not b.attr[:, 128:].any()


def test_deterministic_bit_identical(text):
    a, b = text.tokenize(MIXED), TextModality().tokenize(MIXED)
    assert a == b
    assert a.emb.tobytes() == b.emb.tobytes() and a.attr.tobytes() == b.attr.tobytes()


def test_batch_equals_concatenated_singles(text):
    items = ["你好。", "Hello world!", MIXED]
    batch = text.tokenize_batch(items)
    singles = [text.tokenize(s) for s in items]
    assert np.array_equal(batch.attr, np.concatenate([s.attr for s in singles]))
    assert np.array_equal(batch.emb, np.concatenate([s.emb for s in singles]))


def test_embedding_is_per_code_point_and_seeded(text):
    b = text.tokenize("好好a")
    assert np.array_equal(b.emb[0], b.emb[1]) and not np.array_equal(b.emb[0], b.emb[2])
    # the documented recipe: row = code_point_vectors([ord(ch)])
    assert np.array_equal(b.emb[2], code_point_vectors(np.array([ord("a")]))[0])
    assert SEED == 0x5EED_7E47_2022


def test_distinct_characters_near_orthogonal():
    cps = np.r_[np.arange(0x4E00, 0x4E00 + 1500), np.arange(0x21, 0x7F)]
    v = code_point_vectors(cps).astype(np.float64)
    cos = np.abs(v @ v.T)[np.triu_indices(len(v), 1)]
    assert 0.04 < cos.mean() < 0.06  # ~ sqrt(2/pi)/16 = 0.0499
    assert cos.max() < 0.4


def test_nfc_normalisation(text):
    decomposed = "Cafe\u0301"  # e + combining acute
    b = text.tokenize(decomposed)
    assert len(b) == 4  # NFC composes é
    assert b == text.tokenize("Caf\u00e9")


@pytest.mark.parametrize("bad", ["", b"bytes", 12345, None, ["a"], 3.5])
def test_invalid_inputs_raise_input_error(text, bad):
    with pytest.raises(InputError):
        text.tokenize(bad)


def test_invalid_inputs_declared_by_the_modality_raise(text):
    from v22sdk import Sample

    for _label, sample in text.invalid_inputs(Sample("好", {}, "<text>")):
        with pytest.raises(InputError):
            text.tokenize(sample)


def test_path_object_is_refused_with_a_hint(text, tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("好", encoding="utf-8")
    with pytest.raises(InputError, match="tokenize_file"):
        text.tokenize(p)


def test_whitespace_kept_or_dropped():
    s = "a b\n好 。"
    kept = TextModality().tokenize(s)
    assert len(kept) == len(s)
    ws = SCHEMA.index("lang.script.whitespace")
    assert kept.attr[1, ws] == 1.0 and kept.attr[3, ws] == 1.0
    dropped = TextModality(keep_whitespace=False).tokenize(s)
    assert dropped.offsets["char"].tolist() == [0, 2, 4, 6]
    assert np.array_equal(dropped.attr, kept.attr[[0, 2, 4, 6]])
    with pytest.raises(InputError, match="only whitespace"):
        TextModality(keep_whitespace=False).tokenize(" \n\t")


def test_config_round_trip():
    m = TextModality(keep_whitespace=False)
    assert TextModality.from_config(m.config()) == m


# -- files ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "encoding,bom",
    [
        ("utf-8", b""),
        ("utf-8", codecs.BOM_UTF8),
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
        ("utf-32-le", codecs.BOM_UTF32_LE),
    ],
)
def test_files_in_every_supported_encoding(text, tmp_path, encoding, bom):
    p = tmp_path / "doc.md"
    p.write_bytes(bom + MIXED.encode(encoding))
    b = text.tokenize_file(p)
    assert b.source == str(p)
    assert b.attr.tobytes() == text.tokenize(MIXED).attr.tobytes()


@pytest.mark.parametrize(
    "payload,match",
    [
        ("你好".encode("gb18030"), "not valid UTF-8"),
        ("hello".encode("utf-16-le"), "UTF-16 without a byte-order mark"),
        (b"", "empty"),
        (codecs.BOM_UTF16_LE + b"\x00\xd8", "utf-16-le"),
        (b"plain text then one NUL \x00 byte", "binary"),
    ],
)
def test_bad_files_name_the_file(text, tmp_path, payload, match):
    p = tmp_path / "bad.txt"
    p.write_bytes(payload)
    with pytest.raises(InputError, match=match) as err:
        text.tokenize_file(p)
    assert err.value.source == str(p)


def test_missing_file_and_directory(text, tmp_path):
    with pytest.raises(InputError, match="no such file"):
        text.tokenize_file(tmp_path / "nope.txt")
    with pytest.raises(InputError, match="directory"):
        text.tokenize_file(tmp_path)
