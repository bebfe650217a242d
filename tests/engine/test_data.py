"""Manifests, TSV and folder shortcuts, the split, the aux targets and the token cache."""

import json

import numpy as np
import pytest

from v22sdk.engine.data import load_dataset, make_split, read_examples
from v22sdk.engine.vocab import EOS, PAD, UNK, OutputVocab, fallback_vector
from v22sdk.errors import InputError


def test_manifest_mixed_modalities(registry, mixed_manifest):
    ex = read_examples(mixed_manifest, registry)
    assert [e.modality for e in ex] == ["toytext"] * 6 + ["blip"] * 6
    assert ex[6].is_file and ex[6].target == "低" and ex[10].split == "test"


@pytest.mark.parametrize(
    "line, problem",
    [
        ("{not json", "invalid JSON"),
        ('{"input": "x"}', "needs"),
        ('{"input": "x", "target": "y", "split": "dev"}', "split must be"),
        ('{"input": "missing.blip", "modality": "blip", "target": "y"}', "not found"),
        ('{"input": "x", "modality": "smell", "target": "y"}', "unknown modality 'smell' (installed: blip, toytext)"),
    ],
)
def test_bad_manifest_lines_name_the_line(registry, tmp_path, line, problem):
    p = tmp_path / "m.jsonl"
    p.write_text('{"input": "ok", "modality": "toytext", "target": "好"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_examples(p, registry)
    assert f"{p}:2" in str(err.value) and problem in str(err.value)


def test_tsv_and_folder_shortcuts(registry, tmp_path, monkeypatch):
    tsv = tmp_path / "p.tsv"
    tsv.write_text("# comment\n你好\t我好\n\n再见\t再会\n", encoding="utf-8")
    monkeypatch.setattr(registry, "modality", lambda name, **k: registry.get_class("modalities", "toytext")())
    ex = read_examples(tsv, registry)
    assert [(e.input, e.target) for e in ex] == [("你好", "我好"), ("再见", "再会")]
    bad = tmp_path / "bad.tsv"
    bad.write_text("only one column\n", encoding="utf-8")
    with pytest.raises(InputError, match="bad.tsv:1"):
        read_examples(bad, registry)
    bad.write_text("in\tout\tnotes\n", encoding="utf-8")  # a third column is not silently dropped
    with pytest.raises(InputError, match=r"bad.tsv:1: .*\(found 3 columns\)"):
        read_examples(bad, registry)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes("\ufeff".encode() + '{"input": "好", "modality": "toytext", "target": "好"}\n'.encode())
    assert read_examples(bom, registry)[0].input == "好"  # a byte-order mark is not part of line 1
    root = tmp_path / "folder"
    for label, pitch in (("低音", -0.5), ("高音", 0.5)):
        (root / label).mkdir(parents=True)
        (root / label / "a.blip").write_text(json.dumps({"pitch": pitch}))
    ex = read_examples(root, registry)
    assert [(e.modality, e.target) for e in ex] == [("blip", "低音"), ("blip", "高音")]


def test_split_is_deterministic_and_keeps_pins(registry, mixed_manifest):
    ex = read_examples(mixed_manifest, registry)
    a, b = make_split(ex, 3), make_split(ex, 3)
    assert a == b
    assert {10, 11} <= set(a["test"])
    assert sorted(a["train"] + a["val"] + a["test"]) == list(range(12))
    assert make_split(ex, 4) != a


def test_aux_targets_from_named_slots(registry, mixed_manifest):
    ds = load_dataset(mixed_manifest, registry)
    # 你好吗? → question (0); 因为下雨! → exclamation (12) and a cause relation; blips → audio zone (15)
    assert ds.aux.a.tolist()[:2] == [0, 12] and ds.aux.a.tolist()[2] == 6
    assert (ds.aux.a[6:] == 15).all()
    assert ds.aux.d[1] == 0 and ds.aux.d[0] == -1  # no relation: masked, not "cause"
    assert ds.aux.c_mask[:6].all() and not ds.aux.c_mask[6:].any()
    assert ds.aux.c[2, 0] < 0 < ds.aux.c[0, 0]  # 坏 negative, 好 positive
    assert "toy.mood.question" in ds.attr_sets[0]


def test_tokens_are_cached(registry, mixed_manifest, tmp_path, monkeypatch):
    first = load_dataset(mixed_manifest, registry)
    calls = []
    cls = registry.get_class("modalities", "blip")
    monkeypatch.setattr(cls, "encode", lambda self, *a, **k: calls.append(1))
    second = load_dataset(mixed_manifest, registry)
    assert not calls and second.digest == first.digest
    assert all(a == b for a, b in zip(first.batches, second.batches))


def test_vocab_encode_decode():
    v = OutputVocab.build(["苹果", "太阳"], use_text_plugin=False)
    assert v.chars[:3] == ["<pad>", "<unk>", "<eos>"] and len(v) == 7
    ids = v.encode("苹果x", 6)
    assert ids.tolist()[:4] == [v.index["苹"], v.index["果"], UNK, EOS] and ids[4] == PAD
    assert v.decode(ids) == "苹果\ufffd"
    assert np.allclose(np.linalg.norm(v.embeddings, axis=1), 1, atol=1e-5)
    assert np.array_equal(v.embeddings[0], fallback_vector(0))


def test_cache_key_follows_the_plugin_code(registry, mixed_manifest, monkeypatch):
    import v22sdk.engine.data as data

    first = load_dataset(mixed_manifest, registry)
    monkeypatch.setattr(data, "code_digest", lambda cls: "edited")
    assert load_dataset(mixed_manifest, registry).digest != first.digest


def test_a_text_modality_reads_a_file_it_names_and_long_texts_stay_text(registry, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.toy").write_text("你好吗？", encoding="utf-8")
    long_text = "今天天气很好" * 60  # 1,080 UTF-8 bytes: longer than any file name may be
    lines = [
        {"input": "notes/a.toy", "modality": "toytext", "target": "好"},
        {"input": "notes/missing.toy", "modality": "toytext", "target": "好", "literal": True},  # said: text
        {"input": "notes/a.txt", "modality": "toytext", "target": "好", "literal": True},
        {"input": long_text, "modality": "toytext", "target": "好"},
        {"input": long_text, "target": "好"},
    ]  # modality left out
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    ex = read_examples(manifest, registry)
    assert [e.is_file for e in ex] == [True, False, False, False, False]
    assert ex[0].input == str(tmp_path / "notes" / "a.toy") and ex[1].input == "notes/missing.toy"
    assert ex[3].input == long_text and ex[4].modality == "text"
    manifest.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines[:4]) + "\n", encoding="utf-8")
    ds = load_dataset(manifest, registry, cache=False)
    assert ds.batches[0].emb.shape[0] == 4  # the file's four characters, not the eleven of its name
    assert ds.batches[3].emb.shape[0] == len(long_text)
    # Without "literal": a name of a file that is not there is an error, never its 17 characters.
    for given in ("notes/missing.toy", "missing_notes.txt", "notes/a.txt"):
        manifest.write_text(json.dumps({"input": given, "modality": "toytext", "target": "好"}) + "\n")
        with pytest.raises(InputError, match=f"m.jsonl:1: input '{given}' looks like a file name but no such file"):
            read_examples(manifest, registry)


def test_strings_that_cannot_be_paths_name_no_file(tmp_path):
    from v22sdk._paths import is_dir, is_file

    (tmp_path / "f").write_text("x")
    assert is_file(tmp_path / "f") and not is_dir(tmp_path / "f") and is_dir(tmp_path)
    for text in ("今" * 200, "a" * 5000, "nul\x00byte", str(tmp_path / "missing")):
        assert not is_file(text) and not is_dir(text)


def test_display_escapes_every_lone_surrogate_and_leaves_text_alone():
    import os

    from v22sdk._paths import display

    assert display(os.fsdecode(b"ab\xffcd")) == "ab\\xffcd"  # an undecodable argv byte, as the byte
    assert display("x\ud800y") == "x\\ud800y"  # a JSON "\ud800" escape, as that escape
    assert display("今天 ok") == "今天 ok"
    display(os.fsdecode(b"\xfe\xff")).encode("utf-8")  # always valid UTF-8
