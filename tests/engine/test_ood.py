"""The set of real out-of-distribution inputs (v22sdk.engine.ood)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from v22sdk.engine import ood


def _have_everything() -> bool:
    try:
        ood._check_dependencies()
    except Exception:  # noqa: BLE001 - any missing piece: the build test skips, saying so
        return False
    import shutil

    return bool(shutil.which("espeak-ng") and shutil.which("fluidsynth"))


def test_the_split_is_by_group_seeded_and_about_a_third_dev():
    groups = [f"g{i}" for i in range(600)]
    a = [ood._split(0, "photo", g) for g in groups]
    assert a == [ood._split(0, "photo", g) for g in groups]  # deterministic
    assert a != [ood._split(1, "photo", g) for g in groups]  # seeded
    assert 0.27 < a.count("dev") / len(a) < 0.40


def test_letters_are_drawn_like_the_suites_digits():
    import cv2

    counts = ood._letter_counts("K", cv2.FONT_HERSHEY_SIMPLEX, np.random.default_rng(0))
    assert counts.shape == (8, 8) and counts.min() >= 0 and counts.max() <= 16 and counts.sum() > 60
    # NIST centred each character in a 20x20 box of the 32x32 bitmap: the 4x4 blocks at the
    # border hold little or no ink
    assert counts[0].sum() + counts[-1].sum() < counts[2:6].sum() / 4


def test_a_non_empty_folder_is_refused(tmp_path):
    (tmp_path / "x").write_text("data")
    with pytest.raises(ood.InputError, match="not empty"):
        ood.build_ood(tmp_path)


@pytest.mark.slow
@pytest.mark.skipif(
    not _have_everything(),
    reason="needs asterisk-core-sounds-en-wav, gcin-voice, fortunes-zh, "
    "espeak-ng, fluidsynth (scripts/ci_services.sh installs them)",
)
def test_build_writes_every_category_with_sources_and_no_digit_among_the_unfamiliar(tmp_path):
    manifest = ood.build_ood(tmp_path / "ood", seed=0)
    rows = ood.read_ood(manifest.parent)
    info = json.loads((manifest.parent / "ood.json").read_text(encoding="utf-8"))
    assert set(info["counts"]) == set(ood.CATEGORIES)
    for cat, c in info["counts"].items():
        assert c["dev"] > 0 and c["test"] > 0, cat
    for r in rows:
        assert r["modality"] == ood.CATEGORIES[r["category"]] and r["split"] in ("dev", "test")
        if r["modality"] != "text":
            assert (manifest.parent / r["input"]).is_file()
    # nothing unfamiliar says a digit: no digit word among the spoken prompts, no digit in the texts
    said = ood._transcripts()
    for r in rows:
        if r["group"].startswith("allison:") and "letter_" not in r["group"]:
            text = said[r["group"].split(":", 1)[1]].lower()
            assert not any(f" {w} " in f" {text} " for w in ood.DIGIT_WORDS), text
        if r["category"] == "sentence_text":
            assert not any(ch in r["input"] for ch in "0123456789零一二三四五六七八九")
    digits = ood.read_ood(manifest.parent, "real_digits.jsonl")
    assert len(digits) == 30 and {d["target"] for d in digits} == set(ood.DIGIT_LABELS)
    assert {d["language"] for d in digits} == {"en", "cmn"}
    for src in info["sources"].values():
        assert src.get("licence")
    # built twice with the same seed: the same manifest
    again = ood.build_ood(tmp_path / "again", seed=0)
    assert again.read_text(encoding="utf-8") == manifest.read_text(encoding="utf-8")
