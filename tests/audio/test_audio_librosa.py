"""Agreement with librosa (a test-only oracle) on the same frames: centroid, bandwidth, roll-off,
flatness, ZCR, RMS, and YIN f0 against pYIN, over synthetic signals and speech (espeak-ng).

Tolerances (also in docs/audio-modality.md):
* spectral descriptors and ZCR on identical frames: relative 1e-6 (same definitions, float64);
* segment slots vs the mean of librosa's frame values over the segment: 1e-4 of full range
  (the slot is stored as float32);
* f0 vs pYIN on frames both call voiced: median |difference| <= 10 cents and >= 90 % of frames
  within 50 cents; voicing decisions agree on >= 85 % of frames (pYIN smooths with an HMM, we do not).
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from audio_signals import harmonic, slot, tone

librosa = pytest.importorskip("librosa")

RATE = 16_000


def _frames(y):
    from v22sdk_audio import frontend as fe

    n_seg = fe.segment_count(y.size)
    padded = fe.pad(y, n_seg)
    fr = fe.frames(padded, n_seg)
    mag = np.abs(np.fft.rfft(fr * fe.hann(), axis=1))
    return padded, fr, mag, n_seg


def _signals():
    rng = np.random.default_rng(7)
    t = np.arange(2 * RATE) / RATE
    glide = 0.4 * np.sin(2 * np.pi * (100 * t + 75 * t * t))  # 100 -> 400 Hz
    return {
        "tone": tone(440, 2.0),
        "harmonic_vibrato": harmonic(150, 2.0, vibrato=1.0),
        "glide": glide,
        "noise": rng.standard_normal(2 * RATE) * 0.1,
        "mixed": harmonic(220, 2.0) + rng.standard_normal(2 * RATE) * 0.02,
    }


def _speech(tmp_path_factory):
    exe = shutil.which("espeak-ng")
    if exe is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    path = tmp_path_factory.mktemp("speech") / "speech.wav"
    subprocess.run(
        [
            exe,
            "-v",
            "en",
            "-s",
            "150",
            "-w",
            str(path),
            "The quick brown fox jumps over the lazy dog. Seven slow ships sailed home.",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    import soundfile as sf

    x, rate = sf.read(path, dtype="float64")
    from scipy.signal import resample_poly

    return resample_poly(x, 160, rate // 100) if rate != RATE else x


@pytest.fixture(scope="module")
def speech(tmp_path_factory):
    return _speech(tmp_path_factory)


@pytest.mark.parametrize("name", list(_signals()))
@pytest.mark.slow  # about 34 s on 2 cores: the default run must stay under 10 minutes in CI
def test_frame_descriptors_match_librosa(name):
    from v22sdk_audio import spectral as sp

    y = _signals()[name]
    padded, fr, mag, _ = _frames(y)
    S = np.abs(librosa.stft(padded, n_fft=1024, hop_length=320, window="hann", center=False))
    assert S.shape == (513, fr.shape[0])
    np.testing.assert_allclose(S.T, mag, rtol=1e-9, atol=1e-9)
    cent, bw, _, _ = sp.shape_moments(mag)
    ok = mag.sum(axis=1) > 1e-6
    lc = librosa.feature.spectral_centroid(S=S, sr=RATE, n_fft=1024)[0]
    lb = librosa.feature.spectral_bandwidth(S=S, sr=RATE, n_fft=1024)[0]
    lr = librosa.feature.spectral_rolloff(S=S, sr=RATE, n_fft=1024, roll_percent=0.85)[0]
    lf = librosa.feature.spectral_flatness(S=S, power=2.0, amin=1e-10)[0]
    lz = librosa.feature.zero_crossing_rate(padded, frame_length=1024, hop_length=320, center=False)[0]
    lrms = librosa.feature.rms(y=padded, frame_length=1024, hop_length=320, center=False)[0]
    np.testing.assert_allclose(cent[ok], lc[ok], rtol=1e-6)
    np.testing.assert_allclose(bw[ok], lb[ok], rtol=1e-6)
    np.testing.assert_allclose(sp.rolloff(mag, 0.85)[0][ok], lr[ok], rtol=1e-6)
    np.testing.assert_allclose(sp.flatness(mag * mag)[ok], lf[ok], rtol=1e-6)
    zc = sp.zero_crossings(padded)
    starts = np.arange(fr.shape[0]) * 320
    np.testing.assert_allclose((zc[starts + 1023] - zc[starts]) / 1024, lz[: fr.shape[0]], rtol=1e-6)
    np.testing.assert_allclose(sp.frame_rms(fr), lrms[: fr.shape[0]], rtol=1e-6)


@pytest.mark.parametrize("name", ["harmonic_vibrato", "noise", "mixed"])
def test_segment_slots_match_librosa_means(audio, schema, name):
    y = _signals()[name]
    padded, fr, _, n_seg = _frames(y)
    S = np.abs(librosa.stft(padded, n_fft=1024, hop_length=320, window="hann", center=False))
    S[:2] = 0.0  # the analysis leaves out bins 0 and 1 (below 23 Hz: a DC offset is not sound)
    S = np.maximum(S - S.max() * 1e-3, 0.0)  # and reads the 60 dB below the clip's strongest bin
    b = audio.tokenize(y, sample_rate=RATE)
    pairs = {
        "aud.spec.centroid": librosa.feature.spectral_centroid(S=S, sr=RATE, n_fft=1024)[0] / 8000,
        "aud.spec.rolloff85": librosa.feature.spectral_rolloff(S=S, sr=RATE, n_fft=1024)[0] / 8000,
        "aud.spec.flatness": librosa.feature.spectral_flatness(S=S, amin=1e-10)[0],
        "aud.zcr.mean": librosa.feature.zero_crossing_rate(
            padded, frame_length=1024, hop_length=320, center=False, threshold=1e-3 * np.abs(padded).max()
        )[0][: fr.shape[0]],
    }
    for name_, frame_vals in pairs.items():
        seg = frame_vals.reshape(n_seg, 25).mean(axis=1)  # 2.0 s: every frame of every segment is valid
        np.testing.assert_allclose(slot(b, schema, name_), seg, atol=1e-4, err_msg=name_)


def _compare_pitch(y, fmax=1_000.0):
    from v22sdk_audio import pitch as pt

    padded, fr, _, _ = _frames(y)
    f0, prob, _ = pt.yin(fr)
    loud = np.sqrt((fr**2).mean(axis=1)) >= 1e-3
    ours_v = (prob >= pt.VOICED_THRESHOLD) & loud
    ref, ref_v, _ = librosa.pyin(padded, fmin=50, fmax=fmax, sr=RATE, frame_length=1024, hop_length=320, center=False)
    n = min(ref.size, f0.size)
    both = ours_v[:n] & ref_v[:n]
    cents = 1200 * np.abs(np.log2(f0[:n][both] / ref[:n][both]))
    agree = np.mean(ours_v[:n] == ref_v[:n])
    return cents, agree, both.sum()


@pytest.mark.parametrize("name", ["harmonic_vibrato", "glide", "tone", "mixed"])
@pytest.mark.slow  # about 6 s on 2 cores: the default run must stay under 10 minutes in CI
def test_f0_matches_pyin_on_synthetic_signals(name):
    cents, agree, n = _compare_pitch(_signals()[name])
    assert n > 50
    assert np.median(cents) <= 10, np.median(cents)
    assert np.mean(cents <= 50) >= 0.9
    assert agree >= 0.85


def test_noise_is_unvoiced_for_both():
    from v22sdk_audio import pitch as pt

    _, fr, _, _ = _frames(_signals()["noise"])
    assert np.mean(pt.yin(fr)[1] >= pt.VOICED_THRESHOLD) == 0


def test_f0_matches_pyin_on_speech(speech):
    cents, agree, n = _compare_pitch(speech, fmax=600.0)
    assert n > 30
    assert np.median(cents) <= 10, np.median(cents)
    assert np.mean(cents <= 50) >= 0.9, np.mean(cents <= 50)
    assert agree >= 0.85, agree


def test_speech_tokens(audio, schema, speech):
    b = audio.tokenize(speech, sample_rate=RATE)
    assert len(b) == -(-speech.size // 8000)
    voiced = slot(b, schema, "aud.pitch.voiced") == 1
    assert voiced.sum() >= 0.4 * len(b)
    f0 = 316.2 * 2 ** (slot(b, schema, "aud.pitch.f0")[voiced] * 2.66)
    assert np.all((f0 > 60) & (f0 < 400))
    f1 = 1000 * 2 ** (slot(b, schema, "aud.formant.f1")[voiced] * 2.5)
    assert np.median(f1) > 200 and np.median(f1) < 1000
    assert slot(b, schema, "aud.onset.present").sum() >= 3
