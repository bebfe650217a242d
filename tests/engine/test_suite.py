"""The real multimodal data suite (v22sdk.engine.data.suite): labels, splits by voice and by pitch,
real speech and notes in the files, the manifests' hashes, typed errors for missing tools.

The default run builds small slices part by part (a few seconds each); building the whole
``tiny`` suite twice (determinism) and training on it are marked slow.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from v22sdk.engine.data.suite import (
    DIGIT_LABELS,
    INSTRUMENT_LABELS,
    PARTS,
    SIZES,
    build_suite,
    common,
    handwriting,
    instruments,
    read_suite_info,
    speech,
    text,
    verify_suite,
)
from v22sdk.errors import InputError, MissingDependency, V22Error

HAS_ESPEAK = shutil.which("espeak-ng") is not None
HAS_FLUIDSYNTH = shutil.which("fluidsynth") is not None and any(Path(p).is_file() for p in instruments.SOUNDFONTS)
needs_espeak = pytest.mark.skipif(not HAS_ESPEAK, reason="espeak-ng is not installed (scripts/ci_services.sh)")
needs_fluidsynth = pytest.mark.skipif(
    not HAS_FLUIDSYNTH, reason="fluidsynth / fluid-soundfont-gm not installed (scripts/ci_services.sh)"
)
pytest.importorskip("sklearn", reason="scikit-learn is not installed (pip install 'v22sdk[suite]')")


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def band_energy_db(x: np.ndarray, rate: int, lo: float, hi: float) -> float:
    """Energy in [lo, hi] Hz relative to full scale, in dB."""
    spec = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(len(x), 1 / rate)
    band = spec[(freqs >= lo) & (freqs <= hi)].sum() / len(x) ** 2 * 2
    return float(10 * np.log10(band + 1e-20))


# -- the label space and the splits (no tool needed) ---------------------------------------------
def test_one_label_space_across_modalities():
    assert DIGIT_LABELS == tuple("零一二三四五六七八九")
    assert len(set(INSTRUMENT_LABELS)) == len(INSTRUMENT_LABELS) >= 6
    families = {i[3] for i in instruments.INSTRUMENTS}
    assert len(families) >= 6
    assert not set(INSTRUMENT_LABELS) & set(DIGIT_LABELS)
    # text, handwriting and speech of one digit share its target
    by_string = {s: d for d, s, *_ in text.strings()}
    for s in ("7", "七", "柒", "seven", "SEVEN", "the number seven", "第七", "VII", "qī"):
        assert DIGIT_LABELS[by_string[s]] == "七", s
    assert speech.ENGLISH_WORDS[7] == "seven" and speech.PINYIN[7] == "qi1"


def test_pitch_split_is_disjoint_spread_and_seeded():
    s0 = instruments.pitch_splits(0)
    lo, hi = instruments.PITCH_RANGE
    assert sorted(s0) == list(range(lo, hi + 1))
    counts = Counter(s0.values())
    assert counts["test"] == 10 and counts["val"] == 5 and counts["train"] == 34
    for start in range(lo, hi + 1, instruments.BLOCK):  # every block of 10 semitones has 2 test pitches
        assert sum(s0[p] == "test" for p in range(start, min(start + 10, hi + 1))) == 2
    assert s0 == instruments.pitch_splits(0) and s0 != instruments.pitch_splits(1)
    notes = instruments.plan(0, None, True)
    train_pitches = {n[3] for n in notes if n[5] == "train"}
    assert not train_pitches & {n[3] for n in notes if n[5] != "train"}
    assert len(notes) == 3 * sum(hi - lo + 1 for *_, lo, hi in instruments.INSTRUMENTS)


def test_group_split_counts_and_subsets():
    groups = [f"v{i}" for i in range(100)]
    split = common.split_groups(groups, 0, "speech")
    assert Counter(split.values()) == {"train": 70, "test": 20, "val": 10}
    assert split == common.split_groups(groups, 0, "speech") != common.split_groups(groups, 1, "speech")
    assert common.split_counts(2) == {"test": 1, "val": 0, "train": 1}
    # a smaller size keeps a subset of a larger one (same seed), with the same split
    small = instruments.plan(0, None, False)
    tiny = instruments.plan(0, {"train": 2, "val": 1, "test": 1}, False)
    assert set(tiny) <= set(small) and len(tiny) == 4 * len(instruments.INSTRUMENTS)


def test_midi_file_is_a_valid_smf():
    data = instruments.midi_file([(0, 60, 100), (40, 72, 80)])
    assert data[:4] == b"MThd" and int.from_bytes(data[8:10], "big") == 0  # format 0
    assert data[14:18] == b"MTrk" and int.from_bytes(data[18:22], "big") == len(data) - 22
    assert data.endswith(b"\xff\x2f\x00")
    assert bytes([0xC0, 40]) in data and bytes([0xB0, 120, 0]) in data
    assert data.count(bytes([0x90, 72, 80])) == 2  # the primer and the note


# -- the text part (instant) ---------------------------------------------------------------------
def test_text_part_labels_splits_and_forms(tmp_path):
    manifest = build_suite(tmp_path / "s", size="full", parts=["text"])
    recs = lines(manifest)
    assert all(r["modality"] == "text" and r["target"] == DIGIT_LABELS[r["meta"]["digit"]] for r in recs)
    assert len({r["input"] for r in recs}) == len(recs)  # no string in two splits (or twice)
    counts = Counter((r["target"], r["split"]) for r in recs)
    for label in DIGIT_LABELS:  # stratified: each digit has 70/10/20 %
        n = sum(counts[(label, s)] for s in ("train", "val", "test"))
        assert abs(counts[(label, "test")] - 0.2 * n) <= 1 and abs(counts[(label, "val")] - 0.1 * n) <= 1
    forms = {r["meta"]["form"] for r in recs}
    assert {"arabic", "chinese", "financial", "english", "roman", "pinyin"} <= forms
    info = read_suite_info(manifest.parent)
    assert info["counts"]["text"]["n"] == len(recs) and info["parts"] == ["text"]
    assert verify_suite(manifest.parent) == []


# -- handwriting ---------------------------------------------------------------------------------
def test_handwriting_pngs_are_the_sklearn_scans(tmp_path):
    import cv2
    from sklearn.datasets import load_digits

    recs, source = handwriting.build(tmp_path, 0, {"train": 2, "val": 1, "test": 1}, lambda _: None)
    assert len(recs) == 40 and Counter(r.target for r in recs) == {d: 4 for d in DIGIT_LABELS}
    assert Counter(r.split for r in recs) == {"train": 20, "val": 10, "test": 10}
    images = load_digits().images
    for r in recs:
        data = (tmp_path / r.input).read_bytes()
        assert common.sha256_bytes(data) == r.sha256
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
        assert img.shape == (32, 32) and img.dtype == np.uint8
        ink = 16 * (1 - cv2.resize(img.astype(np.float32), (8, 8), interpolation=cv2.INTER_AREA) / 255)
        assert np.corrcoef(ink.ravel(), images[r.meta["index"]].ravel())[0, 1] > 0.95  # dark ink, right scan
    assert "13" in source["writers"] and len(source["sha256"]["arrays (images as uint8, then targets as uint8)"]) == 64


def test_handwriting_split_is_stratified_over_all_scans():
    """Over the full 1,797 scans: 20 % test and 10 % val of every digit, no scan in two splits."""
    from sklearn.datasets import load_digits

    target = load_digits().target
    for d in range(10):
        n = int((target == d).sum())
        assert common.split_counts(n)["test"] == round(0.2 * n)


def test_missing_sklearn_is_a_typed_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(MissingDependency, match="scikit-learn"):
        build_suite(tmp_path / "s", size="tiny", parts=["handwriting"])
    assert not (tmp_path / "s").exists()


# -- speech --------------------------------------------------------------------------------------
@needs_espeak
def test_speech_split_by_voice_and_clips_hold_speech(tmp_path):
    import soundfile

    recs, source = speech.build(tmp_path, 0, {"train": 1, "val": 0, "test": 1}, lambda _: None)
    assert len(recs) == 2 * 2 * 10
    voices = {s: {r.group for r in recs if r.split == s} for s in ("train", "test")}
    assert len(voices["train"]) == len(voices["test"]) == 1 and not voices["train"] & voices["test"]
    assert set(source["voices"]["by_split"]["test"]).isdisjoint(source["voices"]["by_split"]["train"])
    for voice in voices["train"] | voices["test"]:  # every voice says every digit in both languages
        mine = [r for r in recs if r.group == voice]
        assert Counter((r.meta["language"], r.target) for r in mine) == {
            (lang, d): 1 for lang in ("en", "cmn") for d in DIGIT_LABELS
        }
    for r in recs:
        x, rate = soundfile.read(str(tmp_path / r.input))
        assert common.sha256_file(tmp_path / r.input) == r.sha256
        assert rate == 22050 and 0.25 < len(x) / rate < 2.0, r.input
        # a spoken word: most of its energy in the speech band, well above silence
        assert band_energy_db(x, rate, 100, 4000) > -40, r.input
        frames = x[: len(x) // 441 * 441].reshape(-1, 441)  # 20 ms frames
        loud = 20 * np.log10(np.sqrt((frames**2).mean(1)) + 1e-9) > -35
        assert 0.1 < loud.sum() * 0.02 < 1.5, r.input  # voiced for 0.1-1.5 s, not noise throughout
    assert source["mandarin"] == "cmn-latn-pinyin" and len(source["sha256"]) == 1


def test_missing_espeak_is_a_typed_error_before_anything_is_built(monkeypatch, tmp_path):
    monkeypatch.setattr(common.shutil, "which", lambda name: None)
    with pytest.raises(MissingDependency, match="'espeak-ng'.*apt-get install espeak-ng"):
        build_suite(tmp_path / "s", size="tiny", parts=["text", "speech"])
    with pytest.raises(MissingDependency, match="'fluidsynth'"):
        build_suite(tmp_path / "s", size="tiny", parts=["instruments"])
    assert not (tmp_path / "s").exists() and list(tmp_path.iterdir()) == []


# -- instruments ---------------------------------------------------------------------------------
@needs_fluidsynth
def test_instrument_notes_are_real_and_split_by_pitch(tmp_path):
    import soundfile
    from scipy.signal import find_peaks

    recs, source = instruments.build(tmp_path, 0, {"train": 1, "val": 0, "test": 1}, False, lambda _: None)
    assert len(recs) == 2 * len(instruments.INSTRUMENTS)
    assert Counter(r.target for r in recs) == {lab: 2 for lab in INSTRUMENT_LABELS}
    train = {r.meta["pitch"] for r in recs if r.split == "train"}
    test = {r.meta["pitch"] for r in recs if r.split == "test"}
    assert test and not train & test and test <= set(source["pitches_by_split"]["test"])
    for r in recs:
        x, rate = soundfile.read(str(tmp_path / r.input))
        assert common.sha256_file(tmp_path / r.input) == r.sha256
        assert rate == instruments.RATE and len(x) == round(instruments.CLIP_S * rate)
        assert 20 * np.log10(np.sqrt(np.mean(x**2))) > -60, r.input
        assert np.abs(x[-10:]).max() < 1e-3  # the fade-out
        # the strongest partial is a harmonic of the note's fundamental (within a quarter tone)
        f0 = 440.0 * 2 ** ((r.meta["pitch"] - 69) / 12)
        seg = x[: rate // 2] * np.hanning(rate // 2)
        spec = np.abs(np.fft.rfft(seg, 8 * len(seg)))
        freqs = np.fft.rfftfreq(8 * len(seg), 1 / rate)
        peaks, _ = find_peaks(spec, height=spec.max() * 0.3)
        harmonics = [freqs[p] / f0 for p in peaks if freqs[p] > 0.8 * f0]
        assert any(abs(h - round(h)) * 12 < 0.5 * round(h) and round(h) >= 1 for h in harmonics), (
            r.input,
            harmonics[:5],
        )
    assert len(source["sha256"]["FluidR3_GM.sf2"]) == 64


@needs_fluidsynth
def test_a_note_renders_the_same_wherever_it_falls(tmp_path):
    """Thanks to the primer, a clip depends on its note alone: the same notes in another order, in
    another company, give byte-identical clips (so a smaller suite is a byte subset of a larger)."""
    exe, sf2 = shutil.which("fluidsynth"), instruments.find_soundfont()
    a, b, c = (19, 56, 48), (73, 90, 80), (0, 62, 112)
    first = list(instruments.render(exe, sf2, [a, b, c], tmp_path))
    second = list(instruments.render(exe, sf2, [c, b], tmp_path))
    assert np.array_equal(first[2], second[0]) and np.array_equal(first[1], second[1])
    assert not np.array_equal(first[0], first[1])


def test_bad_arguments_are_input_errors(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("keep me")
    with pytest.raises(InputError, match="not an empty folder"):
        build_suite(tmp_path / "full", parts=["text"])
    assert (tmp_path / "full" / "x").read_text() == "keep me"
    with pytest.raises(InputError, match="unknown suite size"):
        build_suite(tmp_path / "a", size="huge")
    with pytest.raises(InputError, match="choose one or more"):
        build_suite(tmp_path / "a", parts=["smell"])
    with pytest.raises(InputError, match="seed"):
        build_suite(tmp_path / "a", seed=-1)
    with pytest.raises(InputError, match="no such soundfont"):
        build_suite(tmp_path / "a", parts=["instruments"], soundfont=str(tmp_path / "nope.sf2"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]


def test_a_failure_leaves_no_half_suite(tmp_path, monkeypatch):
    def broken(*a, **k):
        raise V22Error("boom")

    monkeypatch.setattr(text, "build", broken)
    (tmp_path / "s").mkdir()  # an empty folder is a valid target and stays as it was
    with pytest.raises(V22Error, match="boom"):
        build_suite(tmp_path / "s", parts=["text"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"] and not any((tmp_path / "s").iterdir())


def test_verify_catches_a_changed_manifest_and_file(tmp_path):
    manifest = build_suite(tmp_path / "s", size="tiny", parts=["text"])
    assert verify_suite(tmp_path / "s") == []
    with open(manifest, "a", encoding="utf-8") as fh:
        fh.write(
            json.dumps({"input": "x.png", "modality": "vision", "target": "七", "split": "train", "sha256": "0" * 64})
            + "\n"
        )
    problems = verify_suite(tmp_path / "s")
    assert "suite.jsonl: changed since the suite was built" in problems
    assert any(p.startswith("x.png: missing") for p in problems)
    (tmp_path / "s" / "x.png").write_bytes(b"not the original")
    assert any(p.startswith("x.png: changed") for p in verify_suite(tmp_path / "s"))


def test_cli_build_and_verify(tmp_path):
    exe = Path(sys.executable).parent / "v22sdk"
    out = tmp_path / "s"
    r = subprocess.run(
        [str(exe), "data", "build-suite", str(out), "--size", "tiny", "--parts", "text"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "text" in r.stdout and "50 examples" in r.stdout
    r = subprocess.run([str(exe), "data", "verify-suite", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "intact" in r.stdout
    (out / "text.jsonl").write_text("", encoding="utf-8")
    r = subprocess.run([str(exe), "data", "verify-suite", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "text.jsonl: changed" in r.stderr
    r = subprocess.run([str(exe), "data", "build-suite", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "not an empty folder" in r.stderr and "Traceback" not in r.stderr


# -- the whole tiny suite (slow: espeak-ng and fluidsynth, twice) ---------------------------------
@pytest.mark.slow
@needs_espeak
@needs_fluidsynth
def test_tiny_suite_is_deterministic_and_trains(tmp_path, monkeypatch):
    a = build_suite(tmp_path / "a", size="tiny", seed=3)
    b = build_suite(tmp_path / "b", size="tiny", seed=3)
    assert a.read_bytes() == b.read_bytes()  # every file's SHA-256 is in the manifest
    info_a, info_b = read_suite_info(a.parent), read_suite_info(b.parent)
    assert info_a == info_b and info_a["parts"] == list(PARTS)
    recs = lines(a)
    assert len(recs) == info_a["n"] == sum(c["n"] for c in info_a["counts"].values())
    assert {r["split"] for r in recs} == {"train", "val", "test"}
    assert {r["target"] for r in recs} == set(DIGIT_LABELS) | set(INSTRUMENT_LABELS)
    # the same size and seed = the same suite; another seed = other splits
    c = build_suite(tmp_path / "c", size="tiny", seed=4, parts=["speech"])
    assert {r["group"] for r in lines(c) if r["split"] == "test"} != {
        r["group"] for r in recs if r["part"] == "speech" and r["split"] == "test"
    }
    # `v22sdk train` reads it as it is
    monkeypatch.setenv("V22SDK_CACHE", str(tmp_path / "cache"))
    from v22sdk.engine.config import preset
    from v22sdk.engine.pipeline import train_engine

    res = train_engine(a, preset("tiny", epochs=1), tmp_path / "m.pt")
    assert res["metrics"]["test"]["all"]["n"] == info_a["n"] - sum(
        c["by_split"]["train"] + c["by_split"]["val"] for c in info_a["counts"].values()
    )
    assert set(res["metrics"]["test"]) == {"vision", "audio", "text", "all"}


def test_sizes_cover_every_part():
    for size, spec in SIZES.items():
        assert set(spec) == set(PARTS), size
