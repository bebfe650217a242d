"""The bundled checkpoint (trained on the data suite by scripts/train_default.py) with the real plugins.

The examples in v22sdk/engine/data/examples/ are files of the suite's *test* split (a scan by a
known hand but never trained on, a voice never heard in training, a pitch never played in
training); the labels asserted for them are regression pins of the shipped checkpoint, whose
measured held-out accuracy is in results/engine/default-checkpoint.json.

A pin catches a change, not an error (docs/evidence.md, "Regression pins are not evidence"): the
three examples were chosen among files the checkpoint gets right. The tests with an independent
oracle are the metamorphic one below (the same samples stored another way must get the same
answer) and the open-set one (inputs of no known class must not get a label).
"""

import json
import shutil

import pytest
from click.testing import CliRunner

from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT

EXAMPLES = DEFAULT_CHECKPOINT.parent / "examples"
PINNED = {"seven.png": "七", "seven.wav": "七", "violin.wav": "小提琴"}


def _real_registry():
    from v22sdk.plugins import Registry

    reg = Registry()
    if not {"text", "vision", "audio"} <= set(reg.names("modalities")):
        pytest.skip("built-in modality plugins not installed")
    return reg


@pytest.fixture
def real(monkeypatch):
    if not DEFAULT_CHECKPOINT.is_file():
        pytest.skip("no default checkpoint (python scripts/train_default.py)")
    reg = _real_registry()
    import v22sdk.plugins as plugins

    monkeypatch.setattr(plugins, "_default", reg)
    return reg


def test_checkpoint_is_small_enough():
    if not DEFAULT_CHECKPOINT.is_file():
        pytest.skip("no default checkpoint")
    assert DEFAULT_CHECKPOINT.stat().st_size <= 10 * 1024 * 1024


def test_it_knows_what_it_was_trained_on_and_judges_its_answers():
    from v22sdk.engine.checkpoint import read_checkpoint

    doc = read_checkpoint(DEFAULT_CHECKPOINT)
    labels = doc["data"]["labels"]
    digits = set("零一二三四五六七八九")
    assert set(labels) == {"audio", "text", "vision"}
    assert set(labels["vision"]) == digits and set(labels["text"]) == digits
    assert set(labels["audio"]) == digits | {"钢琴", "木琴", "管风琴", "吉他", "小提琴", "小号", "单簧管", "长笛"}
    assert {s["part"] for s in doc["data"]["sources"]} == {"handwriting", "speech", "instruments", "text"}
    assert all(s["licence"] for s in doc["data"]["sources"])
    assert doc["calibration"]["split"] == "val" and 0.05 <= doc["calibration"]["temperature"] <= 20
    assert set(doc["open_set"]["thresholds"]) == {"audio", "text", "vision"}
    r = CliRunner().invoke(__import__("v22sdk.engine.cli", fromlist=["run"]).run, ["--knows"], catch_exceptions=False)
    assert r.exit_code == 0 and "vision labels: 一 七 三 九 二 五 八 六 四 零" in r.output
    assert "source: UCI Optical Recognition of Handwritten Digits" in r.output
    # the temperatures the answers are divided by (one per modality), not the unused global fallback
    temps = doc["calibration"]["per_modality"]
    assert f"temperature per modality audio {temps['audio']:.3f}, text {temps['text']:.3f}" in r.output
    assert f"{doc['calibration']['temperature']:.3f}" not in r.output


@pytest.mark.slow
@pytest.mark.regression_pin
def test_pin_held_out_examples_get_their_labels(real):
    """REGRESSION PIN, not evidence: the shipped checkpoint's answers for the three bundled
    test-split files (right answers, but chosen among those it gets right)."""
    from v22sdk.engine.cli import run

    cli = CliRunner()
    for name, label in PINNED.items():
        r = cli.invoke(run, [str(EXAMPLES / name), "--json", "--no-memory"], catch_exceptions=False)
        res = json.loads(r.output)
        assert res["output"] == label and res["familiar"] is True, (name, res["decoded"], res["open_set"])
        assert res["calibrated"] is True and 0 < res["confidence"] <= 1


@pytest.mark.slow
def test_a_photo_and_spoken_sentences_are_unfamiliar(real, tmp_path):
    """The issue's cases: a real photo, a spoken sentence (a real recording when the Debian package
    is installed; espeak-ng otherwise), and a sentence of text get no confident label."""
    import skimage

    from v22sdk.engine.runner import Runner, format_result

    photo = tmp_path / "coffee.png"
    shutil.copyfile(__import__("pathlib").Path(skimage.__file__).parent / "data" / "coffee.png", photo)
    inputs = [str(photo), "Beautiful is better than ugly."]
    real_speech = __import__("pathlib").Path("/usr/share/asterisk/sounds/en_US_f_Allison/conf-placeintoconf.wav")
    if real_speech.is_file():
        inputs.append(str(real_speech))
    elif shutil.which("espeak-ng"):
        import subprocess

        spoken = tmp_path / "sentence.wav"
        subprocess.run(["espeak-ng", "-w", str(spoken), "The weather is lovely today."], check=True)
        inputs.append(str(spoken))
    with Runner() as runner:
        for source in inputs:
            res = runner.run(source)
            assert res["familiar"] is False and res["output"] is None, (source, res["open_set"])
            assert format_result(res).startswith("unfamiliar input"), source


@pytest.mark.slow
def test_the_examples_get_the_same_answer_however_they_are_stored(real, tmp_path):
    """Metamorphic: each bundled example written again as 8/24-bit, float, FLAC, Ogg, resampled and
    stereo WAV, or as JPEG 90/95, WebP and rescaled PNG, keeps its answer and stays familiar
    (regression pins of the shipped checkpoint; the agreement rates over the whole test split are
    in results/engine/storage.json)."""
    import cv2
    import soundfile as sf

    from v22sdk.engine.runner import Runner
    from v22sdk.engine.storage import AUDIO_VARIANTS, IMAGE_VARIANTS, write_audio_variant, write_image_variant

    with Runner() as runner:
        for name, label in PINNED.items():
            src = EXAMPLES / name
            if src.suffix == ".wav":
                x, rate = sf.read(str(src))
                files = [
                    write_audio_variant(v, x, rate, tmp_path / f"{name}_{v}") for v in AUDIO_VARIANTS if v != "mono"
                ]
            else:
                img = cv2.imread(str(src))[:, :, ::-1]
                files = [write_image_variant(v, img, tmp_path / f"{name}_{v}") for v in IMAGE_VARIANTS]
            for f in files:
                res = runner.run(str(f))
                assert res["output"] == label, (f.name, res["decoded"], res["open_set"])
