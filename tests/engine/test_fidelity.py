"""Fidelity floors: a checkpoint calls an input recorded with less than its training inputs had
unfamiliar (v22sdk.engine.fidelity, Runner, `v22sdk run`)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT, read_checkpoint
from v22sdk.engine.fidelity import below_floors, describe, fidelity_slots, fit_floors
from v22sdk.plugins import get_registry

SLOT = "aud.clip.source_rate"


def _tone(rate: int, seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (0.3 * np.sin(2 * np.pi * 220.0 * t) + 0.1 * np.sin(2 * np.pi * 1_250.0 * t)).astype(np.float32)


def _audio(rate: int):
    return get_registry().modality("audio").tokenize(_tone(rate), sample_rate=rate)


@pytest.fixture(scope="module")
def schema():
    return get_registry().get_class("modalities", "audio").schema


def test_the_audio_plugin_declares_its_source_rate_and_vision_declares_nothing():
    reg = get_registry()
    assert fidelity_slots(reg, "audio") == (SLOT,)
    assert fidelity_slots(reg, "vision") == ()


def test_the_floor_is_the_lowest_value_over_the_training_tokens(schema):
    reg = get_registry()
    img = reg.modality("vision").tokenize(np.zeros((16, 16, 3), np.uint8))
    batches = [_audio(22_050), _audio(16_000), _audio(44_100), img]
    floors = fit_floors(batches, reg)
    assert list(floors) == ["audio"]  # vision declares no fidelity slot
    assert floors["audio"][SLOT] == pytest.approx(0.0)  # log2(16 kHz / 16 kHz) / 4
    assert fit_floors([img], reg) == {}


def test_only_a_value_below_the_floor_is_flagged_and_named(schema):
    floors = {"audio": {SLOT: 0.0}}
    below = below_floors(floors, _audio(8_000), schema)
    assert [b["slot"] for b in below] == [SLOT]
    assert below[0]["value"] == pytest.approx(-0.25) and below[0]["floor"] == 0.0
    assert "below the lowest value in training" in describe(below) and SLOT in describe(below)
    # at the floor and above it (48 kHz is resampled to the same analysis): not judged
    assert below_floors(floors, _audio(16_000), schema) == []
    assert below_floors(floors, _audio(48_000), schema) == []
    # a checkpoint without floors, or with floors of another modality or of an unknown slot, judges nothing
    assert below_floors(None, _audio(8_000), schema) == []
    assert below_floors({"vision": {"vis.x": 1.0}}, _audio(8_000), schema) == []
    assert below_floors({"audio": {"aud.no.such_slot": 1.0}}, _audio(8_000), schema) == []
    # the check catches it only because the floor is above: a lower floor lets 8 kHz through
    assert below_floors({"audio": {SLOT: -0.3}}, _audio(8_000), schema) == []


@pytest.fixture(scope="module")
def floored(tmp_path_factory):
    """The default checkpoint with its audio floor at 16 kHz, and one with no floors at all."""
    import torch

    folder = tmp_path_factory.mktemp("floors")
    doc = read_checkpoint(DEFAULT_CHECKPOINT)
    with_floor, without = folder / "floor.pt", folder / "none.pt"
    doc["data"] = {**doc["data"], "fidelity_floors": {"audio": {SLOT: 0.0}}}
    torch.save(doc, with_floor)
    doc["data"] = {k: v for k, v in doc["data"].items() if k != "fidelity_floors"}
    torch.save(doc, without)
    wavs = {}
    for rate in (8_000, 48_000):
        wavs[rate] = folder / f"tone_{rate}.wav"
        sf.write(wavs[rate], _tone(rate), rate, subtype="PCM_16")
    return with_floor, without, wavs


def test_run_calls_a_telephone_band_recording_unfamiliar_and_says_why(floored):
    from v22sdk.engine.runner import Runner, format_result

    with_floor, without, wavs = floored
    r = Runner(with_floor).run(str(wavs[8_000]))
    assert r["familiar"] is False and r["output"] is None
    assert [b["slot"] for b in r["below_floors"]] == [SLOT]
    text = format_result(r)
    assert text.startswith("unfamiliar input") and "recorded with less than training ever had" in text
    assert "nearest label" in text
    high = Runner(with_floor).run(str(wavs[48_000]))
    assert high["below_floors"] == [] and high["familiar"] is (
        high["open_set"]["score"] <= high["open_set"]["threshold"]
    )
    # the same checkpoint without floors judges by the score alone
    plain = Runner(without).run(str(wavs[8_000]))
    assert plain["below_floors"] == []
    assert plain["familiar"] is (plain["open_set"]["score"] <= plain["open_set"]["threshold"])


def test_judge_agrees_with_run(floored):
    from v22sdk.engine.runner import Runner

    with_floor, _, wavs = floored
    runner = Runner(with_floor)
    rows = runner.judge([runner.tokenize(str(wavs[8_000])), runner.tokenize(str(wavs[48_000]))])
    assert rows[0]["familiar"] is False and rows[0]["below_floors"][0]["slot"] == SLOT
    assert rows[1]["below_floors"] == []


def test_the_cli_prints_the_reason_and_json_carries_it(floored):
    from v22sdk.engine.cli import run

    with_floor, _, wavs = floored
    out = CliRunner().invoke(run, [str(wavs[8_000]), "--checkpoint", str(with_floor), "--no-memory"])
    assert out.exit_code == 0, out.output
    assert "recorded with less than training ever had: aud.clip.source_rate = -0.250" in out.output
    js = CliRunner().invoke(run, [str(wavs[8_000]), "--checkpoint", str(with_floor), "--no-memory", "--json"])
    doc = json.load(io.StringIO(js.output))
    assert doc["familiar"] is False and doc["below_floors"][0]["floor"] == 0.0
    knows = CliRunner().invoke(run, ["--knows", "--checkpoint", str(with_floor)])
    assert "audio recordings: aud.clip.source_rate ≥ +0.000" in knows.output


def test_the_shipped_checkpoint_knows_it_was_trained_on_16_khz_and_up():
    floors = (read_checkpoint(DEFAULT_CHECKPOINT)["data"] or {}).get("fidelity_floors")
    assert floors == {"audio": {SLOT: pytest.approx(0.0)}}
