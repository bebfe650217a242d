"""Our reading of jieba's dictionary cuts exactly as ``jieba.lcut(s, HMM=False)`` and tags as
jieba's dict.txt, in both lookup modes (bisection, then the dict), and the index file is rebuilt
when damaged (issue 21: jieba's start-up cost 0.5-0.8 s of CPU per process)."""

from __future__ import annotations

import os
import subprocess
import sys

import jieba
import numpy as np
import pytest
from v22sdk_text import dictionary as dmod
from v22sdk_text.dictionary import JiebaDictionary, build_index, jieba_dict_path

SAMPLES = [
    "因为下雨，所以我们没有去公园。",
    "中华人民共和国成立于1949年。",
    "他很聪明，但是很懒。",
    "结巴分词、词性标注、句子边界",
    "我吃了饭。今天是2024年3月5日，气温21.5度。",
    "研究生命起源",
    "南京市长江大桥",
    "工信处女干事每月经过下属科室都要亲口交代24口交换机等技术性器件的安装工作",
    "abc DEF 3.5% a+b #tag x_y-z \r\n\t end",
    "",
    "〇㐀䶵豈𠀀鿖鿪",
    "高高兴兴地回家了",
]


SMALL = "中国 100 ns\n中国人 30 n\n人民 80 n\n国人 5 n\n民 20 n\n中 50 f\n国 40 n\n人 90 n\n".encode()


@pytest.fixture(scope="module")
def index_arrays():
    return dmod._load_or_build(jieba_dict_path())  # the index file, built once per machine


def _random_texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    common = [c for c in "".join(SAMPLES) if "\u4e00" <= c <= "\u9fff"] + list(
        "的一是了我不人在他有这个上们来到时大地为子中你说生国年着就那和要"
    )
    out = []
    for _ in range(n):
        k = int(rng.integers(1, 60))
        out.append("".join(rng.choice(common, k)))
    return out


def test_cuts_as_jieba_without_hmm_by_bisection_and_by_dict(index_arrays, monkeypatch):
    jieba.setLogLevel(60)
    texts = SAMPLES + _random_texts(300, 0)
    want = [jieba.lcut(t, HMM=False) for t in texts]
    d = JiebaDictionary(index_arrays)
    assert [d.lcut(t) for t in texts] == want
    assert d._dict is None and d._cut_chars > 0  # all by bisection
    monkeypatch.setattr(dmod, "DICT_AFTER", 0)
    d2 = JiebaDictionary(index_arrays)
    assert [d2.lcut(t) for t in texts] == want
    assert d2._dict is not None and d2._dict == jieba.dt.FREQ  # the dict is jieba's FREQ


def test_tags_and_total_are_jiebas(index_arrays):
    d = JiebaDictionary(index_arrays)
    jieba.initialize()
    assert d.total == jieba.dt.total
    tags = {}
    with jieba.get_dict_file() as fh:
        for raw in fh:
            parts = raw.decode("utf-8").split()
            if len(parts) == 3:
                tags[parts[0]] = parts[2]
    rng = np.random.default_rng(1)
    for w in rng.choice(sorted(tags), 2000).tolist() + ["中华人民共和国", "吃", "了"]:
        assert d.get(w) == tags[w]
    assert d.get("中华人") is None and d.get("中华人", "") == ""  # a prefix only: no tag
    assert d.get("不是一个词语吧") is None


def test_a_changed_frequency_is_seen():
    """The comparison can fail: one changed frequency changes a cut."""
    d = JiebaDictionary(build_index(SMALL))
    assert d.lcut("中国人民") == ["中国", "人民"]
    d2 = JiebaDictionary(build_index(SMALL.replace("中国人 30".encode(), "中国人 3000".encode())))
    assert d2.lcut("中国人民") == ["中国人", "民"]


def test_bad_dictionary_line_is_named():
    with pytest.raises(ValueError, match="line 2"):
        build_index("中国 10 ns\n坏行\n".encode())


def test_index_file_is_written_once_and_a_damaged_one_rebuilt(tmp_path, monkeypatch):
    small = tmp_path / "dict.txt"
    small.write_bytes(SMALL)
    monkeypatch.setenv("V22SDK_JIEBA_INDEX_DIR", str(tmp_path / "index"))
    a = dmod._load_or_build(small)
    files = list((tmp_path / "index").glob("v22sdk-jieba-*.npz"))
    assert len(files) == 1
    assert JiebaDictionary(a).keys == ["中", "中国", "中国人", "人", "人民", "国", "国人", "民"]
    b = dmod._load_or_build(small)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    files[0].write_bytes(b"not an npz")
    c = dmod._load_or_build(small)
    assert all(np.array_equal(a[k], c[k]) for k in a)
    assert files[0].stat().st_size > 200
    small.write_bytes(SMALL + "人民币 7 n\n".encode())  # another dictionary: another index
    assert "人民币" in JiebaDictionary(dmod._load_or_build(small)).keys
    assert len(list((tmp_path / "index").glob("v22sdk-jieba-*.npz"))) == 2


def test_another_users_index_file_is_not_read(tmp_path, monkeypatch):
    small = tmp_path / "dict.txt"
    small.write_bytes(SMALL)
    monkeypatch.setenv("V22SDK_JIEBA_INDEX_DIR", str(tmp_path / "index"))
    good = dmod._load_or_build(small)
    forged = dict(good, freq=good["freq"] * 0 + 7)  # a planted file with other numbers
    index = next((tmp_path / "index").glob("v22sdk-jieba-*.npz"))
    with open(index, "wb") as fh:
        np.savez(fh, **forged)
    assert (dmod._load_or_build(small)["freq"] == 7).all()  # our own file: read as it is
    other = os.getuid() + 1
    monkeypatch.setattr(dmod.os, "getuid", lambda: other)  # now it belongs to someone else
    assert np.array_equal(dmod._load_or_build(small)["freq"], good["freq"])


def test_tokenizing_text_does_not_initialise_jieba():
    code = (
        "import sys\n"
        "from v22sdk import get_registry\n"
        "b = get_registry().modality('text').tokenize('因为下雨，所以我们没有去公园。')\n"
        "assert b.emb.shape[0] == 15\n"
        "import jieba\n"
        "print(jieba.dt.initialized)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[0] == "False"  # jieba's dictionary was never loaded
