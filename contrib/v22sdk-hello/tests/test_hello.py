"""Behaviour of the hello modality beyond the contract: values, files, errors."""

import wave

import numpy as np
import pytest
from v22sdk_hello import SCHEMA, HelloModality

from v22sdk import InputError, UnitsError, get_registry


def test_registered_through_the_entry_point():
    registry = get_registry()
    assert "hello" in registry.names("modalities")
    assert registry.get_class("modalities", "hello") is HelloModality


def test_values_of_a_full_scale_tone():
    rate = 8000.0
    t = np.arange(800) / rate
    tone = np.sin(2 * np.pi * 1000.0 * t).astype(np.float32)     # 0.1 s at 1 kHz = 2 frames
    tokens = HelloModality().tokenize(tone, sample_rate=rate)
    assert len(tokens) == 2
    np.testing.assert_allclose(tokens.offsets["time"], [[0.0, 0.05], [0.05, 0.1]])
    values = SCHEMA.values(tokens.attr[0])
    # RMS of a full-scale sine is -3.01 dBFS -> -3.01/30 + 1
    assert values["hello.level.rms_db"] == pytest.approx(1 - 3.0103 / 30, abs=1e-4)
    assert values["hello.level.peak"] == pytest.approx(1.0, abs=1e-3)
    # 1 kHz at 8 kHz: 2 crossings per 8 samples -> 0.25 of sample pairs
    assert values["hello.shape.zcr"] == pytest.approx(0.25, abs=0.01)
    assert values["hello.spec.centroid"] == pytest.approx(1000 / 4000, abs=0.02)


def test_silence_gets_the_documented_unit_vector():
    from v22sdk_hello.modality import N_BANDS, projection

    tokens = HelloModality().tokenize(np.zeros(100, np.int16), sample_rate=1000.0)
    np.testing.assert_allclose(tokens.emb, np.tile(projection()[:, N_BANDS], (2, 1)), atol=1e-7)
    assert SCHEMA.values(tokens.attr[0])["hello.level.rms_db"] == -1.0


def test_load_reads_a_wav_file(tmp_path):
    path = tmp_path / "tone.wav"
    pcm = (np.sin(np.arange(4000) / 10) * 20000).astype("<i2")
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(16000)
        wav.writeframes(pcm.tobytes())
    sample = HelloModality().load(path)
    assert sample.units == {"sample_rate": 16000.0} and np.array_equal(sample.data, pcm)
    assert len(HelloModality().tokenize_file(path)) == 5


def test_bad_inputs_name_the_problem(tmp_path):
    hello = HelloModality()
    with pytest.raises(UnitsError, match="missing sample_rate"):
        hello.tokenize(np.zeros(10, np.float32))
    with pytest.raises(InputError, match="empty"):
        hello.tokenize(np.zeros(0, np.float32), sample_rate=8000)
    (tmp_path / "bad.wav").write_bytes(b"RIFF\x00\x00")
    with pytest.raises(InputError, match="bad.wav"):
        hello.load(tmp_path / "bad.wav")
