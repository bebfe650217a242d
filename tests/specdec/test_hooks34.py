"""Hooks 3 and 4 of the speculative-decoding lab: their parts, their statistics and their quick modes."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from v22sdk.specdec.cli import specdec
from v22sdk.specdec.corpus import ASCII_VOCAB
from v22sdk.specdec.errors import SpecDecError

# --- hook 3 -------------------------------------------------------------------------------------


def test_share_interval_recovers_a_known_share_and_brackets_it():
    from v22sdk.specdec.hook3 import share_interval

    rng = np.random.default_rng(0)
    a = 3.0 + rng.normal(0, 0.01, 8)
    c = a + 1.0 + rng.normal(0, 0.01, 8)
    b = a + 0.8 * (c - a) + rng.normal(0, 0.01, 8)
    sh = share_interval(a, b, c)
    assert abs(sh["share"] - 0.8) < 0.03 and sh["share_lo"] < 0.8 < sh["share_hi"]
    assert sh["contrast"]["lo"] > 0  # 0.8 > 0.5: the criterion's contrast is above 0
    low = share_interval(a, a + 0.2 * (c - a) + rng.normal(0, 0.01, 8), c)
    assert low["contrast"]["hi"] < 0 and low["share_hi"] < 0.5
    flat = share_interval(a, a + rng.normal(0, 0.3, 8), a + rng.normal(0, 0.3, 8))  # no gap: unbounded set
    assert flat["share_lo"] is None or flat["share_hi"] is None or flat["empty"]


def test_verdict_needs_a_gap_and_the_contrast():
    from v22sdk.specdec.hook3 import verdict

    def data(gap_lo, con_lo, con_hi):
        comp = {
            "full-window": {"diff": 0.3, "lo": gap_lo, "hi": 0.5, "rel_gain": 0.1},
            "memory-cosine": {"diff": 0.0, "lo": -0.1, "hi": 0.1},
            "share": {
                "share": 0.7,
                "share_lo": 0.55,
                "share_hi": 0.9,
                "contrast": {"mean": 0.05, "lo": con_lo, "hi": con_hi},
            },
        }
        return {
            "config": {"multiples": [1, 4, 16], "temperatures": [0.0, 1.0], "corpora": ["x"], "seeds": 5},
            "corpora": {"x": {"seeds": [{}] * 5, "comparisons": {"T=0/16x": comp, "T=1/16x": comp}}},
        }

    assert "SUPPORTED" in verdict(data(0.1, 0.01, 0.1))["text"]
    assert verdict(data(-0.1, 0.01, 0.1))["text"].startswith("UNTESTABLE")
    v = verdict(data(0.1, -0.2, -0.01))["text"]
    assert v.startswith("NOT SUPPORTED") and "significantly less" in v


def test_document_memory_recalls_only_what_was_read(tmp_path, monkeypatch):
    """Causality: a recall at position t is a turn whose value ended by t; an exact repeat of the
    key is found; the store lives in a temporary folder, never the user's memory folder."""
    from v22sdk.specdec.longctx import DocumentMemory, Geometry, KeyEncoder

    monkeypatch.setenv("V22SDK_MEMORY", str(tmp_path / "user-memory.db"))
    g = Geometry(window=8, stride=4, key=8, value=8)
    text = "alpha = compute(beta, gamma)\n" + "x" * 11 + "alpha = compute(beta, gamma)\n"
    doc = ASCII_VOCAB.encode(text)
    positions = list(range(8, len(doc) + 1, 4))
    mem = DocumentMemory(g, KeyEncoder(ASCII_VOCAB))
    rec = mem.recall_doc(doc, positions)
    for view in ("memory", "cosine"):
        for t, j in rec[view].items():
            assert j == -1 or (j + g.value <= t and j >= g.key)
    assert rec["memory"][12] == -1 and rec["memory"][16] == 8  # the first turn (key 0:8, value 8:16) at t = 16
    # second copy: the key "compute" ends at 40 + 8 = 48 in the repeat; the first copy's turn
    # with the same 8 characters ends at 8 + 8 = 16 (stride-aligned both times by construction)
    t_rep = 48
    j = rec["memory"][t_rep]
    assert text[j - 8 : j] == text[t_rep - 8 : t_rep], (j, text[j - 8 : j], text[t_rep - 8 : t_rep])
    assert not (tmp_path / "user-memory.db").exists()
    assert mem.stats.writes > 0 and mem.stats.documents == 1


def test_view_inputs_and_equal_draft_sizes():
    from v22sdk.specdec.longctx import ViewDraft, ViewDraftRunner, view_input

    ctx = torch.arange(40).reshape(2, 20) % 90
    rec = torch.full((2, 6), 97)
    idx, seg = view_input("window", ctx, None, 5)
    assert idx.tolist() == ctx[:, -5:].tolist() and seg.min() == 1
    idx, seg = view_input("memory", ctx, rec, 5)
    assert idx.shape == (2, 11) and seg[:, :6].sum() == 0 and seg[:, 6:].min() == 1
    assert view_input("full", ctx, None, 5)[0].shape == (2, 20)
    with pytest.raises(SpecDecError):
        view_input("memory", ctx, None, 5)
    d = ViewDraft(97, 32, d=16, n_layer=1)
    runner = ViewDraftRunner(d, "window", 5)
    st = runner.begin(ctx)
    p = runner.distribution(runner.advance(st, torch.tensor([3, 4])), 1.0)
    assert p.shape == (2, 97) and torch.allclose(p.sum(-1), torch.ones(2, dtype=torch.float64))
    with pytest.raises(SpecDecError, match="exceeds"):
        d(torch.zeros(1, 33, dtype=torch.int64), torch.ones(1, 33, dtype=torch.int64))


def test_hook3_quick_run(tmp_path):
    out = CliRunner().invoke(
        specdec, ["run", "--experiment", "hook3", "--quick", "--corpus", "stdlib-source", "--out", str(tmp_path)]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads((tmp_path / "results.json").read_text())
    data = doc["data"]
    assert doc["provenance"]["command"] and data["experiment"] == "hook3" and doc["criterion"]
    r = data["corpora"]["stdlib-source"]
    assert len(r["seeds"]) == 2
    sizes = {r["costs"][a]["params"] for a in ("window", "memory", "cosine", "full")}
    assert len(sizes) == 1  # drafts of equal size
    for s in r["seeds"]:
        for arm in ("window", "memory", "cosine", "full"):
            for k, v in s[arm].items():
                assert 1.0 <= v["tau"] <= 4.0 + 1e-9, (arm, k)
    assert r["memory"]["retrieval"]["1x"]["memory"]["found"] == 0.0  # nothing to recall within the window
    assert r["memory"]["retrieval"]["4x"]["memory"]["found"] == 1.0
    rep = CliRunner().invoke(specdec, ["report", "--out", str(tmp_path)])
    assert rep.exit_code == 0 and "Verdict" in rep.output and "(c) full context" in rep.output


# --- hook 4 -------------------------------------------------------------------------------------


def test_captions_are_not_determined_by_the_label():
    from v22sdk.specdec.crossmodal import TEMPLATES, caption
    from v22sdk.specdec.hook4 import _digit_named, _encode_caption

    hw = [caption("handwriting", {"digit": 7, "ink": ink}, t) for ink in ("bold", "light") for t in range(3)]
    assert len(set(hw)) == 5 and all(_digit_named(c, 7) for c in hw)  # the third template has no ink word
    sp = {
        caption("speech", {"digit": 3, "lang": lang, "speed": "fast", "pitch": "low"}, t)
        for lang in ("english", "mandarin")
        for t in range(len(TEMPLATES["speech"]))
    }
    assert len(sp) == 6 and all(_digit_named(c, 3) and not _digit_named(c, 8) for c in sp)
    assert not _digit_named("a bold handwritten seven (1).", 7)
    ids, n = _encode_caption("a light handwritten two.", 64)
    assert ids.shape == (65,) and ids[0] == 0 and ids[n - 1] == 0 and n == 26
    with pytest.raises(SpecDecError, match="longer"):
        _encode_caption("x" * 80, 64)


def test_cond_lm_reads_its_features_and_the_runner_agrees_with_the_target():
    from v22sdk.specdec.crossmodal import SLOTS, CondDraftRunner, CondLM, CondTarget

    torch.manual_seed(0)
    m = CondLM(97, 16, d=16, n_layer=1)
    feats = torch.randn(2, SLOTS, 640)
    ctx = torch.zeros(2, 3, dtype=torch.int64)
    a, b = m(feats, ctx), m(torch.zeros_like(feats), ctx)
    assert not torch.allclose(a, b)  # the input features change the text distribution
    tgt, run = CondTarget(m), CondDraftRunner(m)
    tgt.feats = run.feats = feats
    p = tgt.distributions(ctx, torch.tensor([[5], [6]]), 1.0)
    q = run.distribution(run.advance(run.begin(ctx), torch.tensor([5, 6])), 1.0)
    assert torch.allclose(p[:, -1], q)  # the same model as draft: identical distributions


@pytest.mark.skipif(__import__("shutil").which("espeak-ng") is None, reason="espeak-ng not installed")
def test_hook4_quick_run(tmp_path):
    out = CliRunner().invoke(specdec, ["run", "--experiment", "hook4", "--quick", "--out", str(tmp_path)])
    assert out.exit_code == 0, out.output
    doc = json.loads((tmp_path / "results.json").read_text())
    data = doc["data"]
    assert data["experiment"] == "hook4" and len(set(data["draft_params"].values())) == 1  # equal sizes
    assert data["data"]["counts"]["handwriting/test"] > 0 and data["data"]["counts"]["speech/test"] > 0
    assert data["data"]["tokens_per_input"]["handwriting"] >= 1
    for s in data["seeds"]:
        for arm in ("unified", "text", "specific"):
            assert 1.0 <= s[arm]["T=1"]["tau"] <= 4.0 + 1e-9
    rep = CliRunner().invoke(specdec, ["report", "--out", str(tmp_path)])
    assert rep.exit_code == 0 and "modality-specific" in rep.output and "Verdict" in rep.output
