"""Decoding real files: WAV PCM 8/16/24/32-bit and float, FLAC, OGG; broken and mislabelled files."""

from __future__ import annotations

import os

import numpy as np
import pytest
import soundfile as sf
from audio_signals import f0_hz, harmonic, slot, tone

from v22sdk import InputError

SUBTYPES = ["PCM_U8", "PCM_16", "PCM_24", "PCM_32", "FLOAT", "DOUBLE"]


@pytest.mark.parametrize("subtype", SUBTYPES)
def test_wav_subtypes(audio, schema, tmp_path, subtype):
    path = tmp_path / f"a_{subtype}.wav"
    sf.write(path, tone(440, 1.2, rate=22_050), 22_050, subtype=subtype)
    sample = audio.load(path)
    assert sample.units == {"sample_rate": 22_050.0} and sample.source == str(path)
    b = audio.tokenize_file(path)
    assert len(b) == 3 and b.source == str(path)
    assert np.all(np.abs(f0_hz(slot(b, schema, "aud.pitch.f0")) / 440 - 1) < 0.01)
    ref = audio.tokenize(tone(440, 1.2, rate=22_050), sample_rate=22_050)
    # 8-bit quantisation noise (65-75 dB below this tone's strongest bin, spread over every bin) lies
    # under the embedding's floor, 60 dB below the clip's strongest bin (with a soft floor it had cos 0.85-0.9)
    assert np.min(np.sum(b.emb * ref.emb, axis=1)) > (0.999 if subtype == "PCM_U8" else 0.9999)


@pytest.mark.parametrize("fmt, ext", [("FLAC", ".flac"), ("OGG", ".ogg")])
def test_flac_and_ogg(audio, schema, tmp_path, fmt, ext):
    path = tmp_path / f"a{ext}"
    stereo = np.stack([tone(440, 1.5, rate=48_000), tone(440, 1.5, rate=48_000)], axis=1)
    sf.write(path, stereo, 48_000, format=fmt)
    b = audio.tokenize_file(path)
    assert len(b) == 3
    assert np.all(np.abs(f0_hz(slot(b, schema, "aud.pitch.f0")) / 440 - 1) < 0.01)
    assert slot(b, schema, "aud.clip.channels")[0] == pytest.approx(1 / 7)


def test_truncated_wav_is_an_error(audio, tmp_path):
    path = tmp_path / "full.wav"
    sf.write(path, tone(440, 1.0), 16_000, subtype="PCM_16")
    cut = tmp_path / "cut.wav"
    cut.write_bytes(path.read_bytes()[:20_000])
    with pytest.raises(InputError, match="truncated") as err:
        audio.tokenize_file(cut)
    assert str(cut) in str(err.value)
    header_only = tmp_path / "header.wav"
    header_only.write_bytes(path.read_bytes()[:30])
    with pytest.raises(InputError, match=str(header_only.name)):
        audio.tokenize_file(header_only)


def test_png_renamed_wav(audio, tmp_path):
    path = tmp_path / "image.wav"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    with pytest.raises(InputError, match="PNG") as err:
        audio.tokenize_file(path)
    assert err.value.source == str(path)


def test_empty_missing_and_zero_frame_files(audio, tmp_path):
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        audio.tokenize_file(empty)
    with pytest.raises(InputError, match="nope.wav: no such file"):
        audio.tokenize_file(tmp_path / "nope.wav")
    with pytest.raises(InputError, match="cannot open"):
        audio.load(tmp_path / "nope.wav")
    zero = tmp_path / "zero.wav"
    sf.write(zero, np.zeros(0), 16_000)
    with pytest.raises(InputError, match="no audio samples"):
        audio.tokenize_file(zero)


def test_nan_in_float_wav_names_the_file(audio, tmp_path):
    x = tone(440, 0.5).astype(np.float32)
    x[100] = np.nan
    path = tmp_path / "nan.wav"
    sf.write(path, x, 16_000, subtype="FLOAT")
    with pytest.raises(InputError, match="non-finite") as err:
        audio.tokenize_file(path)
    assert err.value.source == str(path)


def test_silent_file_is_documented_silence(audio, schema, tmp_path):
    path = tmp_path / "silent.flac"
    sf.write(path, np.zeros(24_000), 16_000, format="FLAC")
    b = audio.tokenize_file(path)
    assert len(b) == 3 and np.all(slot(b, schema, "aud.flag.silence") == 1)


def test_streaming_wav_with_unknown_size_is_read(audio, tmp_path):
    path = tmp_path / "stream.wav"
    sf.write(path, tone(440, 0.5), 16_000, subtype="PCM_16")
    raw = bytearray(path.read_bytes())
    pos = raw.find(b"data")
    raw[pos + 4 : pos + 8] = b"\xff\xff\xff\xff"
    path.write_bytes(bytes(raw))
    assert len(audio.tokenize_file(path)) == 1


def test_big_endian_rifx_wav_is_checked_with_its_byte_order(audio, tmp_path):
    from v22sdk_audio.decode import check_wav

    path = tmp_path / "le.wav"
    sf.write(path, tone(440, 0.25), 16_000, subtype="PCM_16")
    raw = bytearray(path.read_bytes())
    # rewrite the chunk sizes big-endian and the tag as RIFX: the header check must read them so
    pos = 12
    while pos + 8 <= len(raw):
        size = int.from_bytes(raw[pos + 4 : pos + 8], "little")
        raw[pos + 4 : pos + 8] = size.to_bytes(4, "big")
        pos += 8 + size + (size & 1)
    raw[:4] = b"RIFX"
    rifx = tmp_path / "be.wav"
    rifx.write_bytes(bytes(raw))
    check_wav(str(rifx), len(raw), big_endian=True)  # complete: no error
    cut = tmp_path / "be_cut.wav"
    cut.write_bytes(bytes(raw[:3_000]))
    with pytest.raises(InputError, match="truncated"):
        check_wav(str(cut), 3_000, big_endian=True)


def test_a_file_name_that_is_not_utf8_is_read(tmp_path):
    # names are bytes on POSIX; one written on another system may not decode as UTF-8
    import soundfile as sf
    from v22sdk_audio import AudioModality

    t = np.arange(16000) / 16000
    good = tmp_path / "tone.wav"
    sf.write(good, 0.5 * np.sin(2 * np.pi * 440 * t), 16000, subtype="PCM_16")
    odd = os.path.join(os.fsencode(tmp_path), b"b\xffad.wav")
    os.rename(good, odd)
    name = os.fsdecode(odd)  # 'b\udcffad.wav'
    batch = AudioModality().tokenize_file(name)
    assert batch.source == name and len(batch) == 2


@pytest.mark.parametrize(
    "samples, step",
    [
        (lambda x: np.round(x * 128) / 128, 2.0**-7),  # 8-bit
        (lambda x: np.round(x * 512) / 512, 2.0**-9),  # 10-bit
        (lambda x: np.round(x * 2048) / 2048, 2.0**-11),  # 12-bit
        (lambda x: np.round(x * 32) / 32, 2.0**-7),  # coarser than 8-bit: read as 8-bit
        (lambda x: np.round(x * 32768) / 32768, 0.0),  # 16-bit
        (lambda x: x, 0.0),  # float
        (lambda x: np.zeros_like(x), 0.0),  # digital silence: nothing to gate
        (lambda x: np.stack([np.round(x * 128) / 128, np.round(-x * 128) / 128], axis=1), 2.0**-7),
    ],
)
def test_lattice_step_reads_the_coarse_sample_lattices(samples, step):
    from v22sdk_audio.analysis import lattice_step

    assert lattice_step(samples(tone(440, 0.5))) == step


def test_lattice_step_sees_a_16_bit_clip_behind_leading_silence():
    from v22sdk_audio.analysis import lattice_step

    x = np.concatenate([np.zeros(20_000), np.round(harmonic(220, 1.0) * 32768) / 32768])
    assert lattice_step(x) == 0.0
    assert lattice_step(np.round(x * 128) / 128) == 2.0**-7


def _emb_cos(audio, a, b, rate):
    ea, eb = audio.tokenize(a, sample_rate=rate).emb, audio.tokenize(b, sample_rate=rate).emb
    return np.sum(ea.astype(np.float64) * eb, axis=1)


@pytest.mark.parametrize("rate", [16_000, 22_050])
def test_8bit_rounding_noise_is_gated(audio, tmp_path, monkeypatch, rate):
    """A quiet harmonic tone with a decaying tail: 8-bit rounding noise lies within 60 dB of its
    strongest bin. The lattice gate brings the 8-bit copy's embedding to the 16-bit one's; with the
    gate at its 60 dB level only (LATTICE_K = 0) the check sees the noise."""
    from v22sdk_audio import analysis

    t = np.arange(int(2.0 * rate)) / rate
    x = harmonic(330, 2.0, rate=rate) * np.exp(-1.5 * t) * 0.6
    path16, path8 = tmp_path / "a16.wav", tmp_path / "a8.wav"
    sf.write(path16, x, rate, subtype="PCM_16")
    sf.write(path8, x, rate, subtype="PCM_U8")
    x16, _ = sf.read(path16)
    x8, _ = sf.read(path8)
    gated = _emb_cos(audio, x16, x8, rate)
    monkeypatch.setattr(analysis, "LATTICE_K", 0.0)
    ungated = _emb_cos(audio, x16, x8, rate)
    # measured: mean cos 0.995 gated against 0.987 / 0.991 (16 / 22.05 kHz) at the 60 dB level only
    assert gated.min() > 0.985 and gated.mean() > 0.993
    assert gated.mean() > ungated.mean() + 0.003 and gated.min() > ungated.min()


def test_16bit_tokens_do_not_depend_on_the_lattice_gate(audio, monkeypatch):
    from v22sdk_audio import analysis

    x = np.round(harmonic(330, 1.5) * 0.2 * 32768) / 32768
    before = audio.tokenize(x, sample_rate=16_000)
    monkeypatch.setattr(analysis, "LATTICE_K", 50.0)
    after = audio.tokenize(x, sample_rate=16_000)
    assert before.emb.tobytes() == after.emb.tobytes() and before.attr.tobytes() == after.attr.tobytes()
