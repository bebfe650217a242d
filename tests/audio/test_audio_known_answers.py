"""Known answers: tones, noise, clicks, clipping, silence, stereo, rates, dtypes, time spans."""

from __future__ import annotations

import numpy as np
import pytest
from audio_signals import clicks, f0_hz, harmonic, slot, tone


@pytest.mark.parametrize("freq, octave", [(110, 2), (220, 3), (440, 4), (880, 5)])
def test_tone_pitch_within_one_percent_and_pitch_class_a(audio, schema, freq, octave):
    b = audio.tokenize(tone(freq, 2.0), sample_rate=16_000)
    est = f0_hz(slot(b, schema, "aud.pitch.f0"))
    assert np.all(np.abs(est / freq - 1) < 0.01), est
    assert np.all(slot(b, schema, "aud.pitch_class.a") == 1.0)
    assert np.all(slot(b, schema, "aud.pitch.octave") * 4 + 4 == octave)
    assert np.all(slot(b, schema, "aud.pitch.voiced") == 1)
    # edge segments hold zero-padded frames, so their mean voicing probability is a little lower
    assert np.all(slot(b, schema, "aud.pitch.voicing_prob") > 0.95)
    assert np.all(slot(b, schema, "aud.pitch.voicing_prob")[1:-1] > 0.99)


@pytest.mark.parametrize("rate", [8_000, 22_050, 44_100, 96_000])
def test_pitch_survives_resampling(audio, schema, rate):
    b = audio.tokenize(tone(440, 1.0, rate=rate).astype(np.float32), sample_rate=rate)
    assert np.all(np.abs(f0_hz(slot(b, schema, "aud.pitch.f0")) / 440 - 1) < 0.01)
    assert slot(b, schema, "aud.flag.band_limited")[0] == (rate < 16_000)


def test_pitch_class_of_other_notes(audio, schema):
    # C4 = 261.63 Hz, E4 = 329.63 Hz, G#3 = 207.65 Hz
    for freq, name in [(261.63, "c"), (329.63, "e"), (207.65, "g_sharp")]:
        b = audio.tokenize(harmonic(freq, 1.0), sample_rate=16_000)
        assert np.all(slot(b, schema, f"aud.pitch_class.{name}") == 1.0), name
        assert np.all(np.abs(slot(b, schema, "aud.pitch.cents")) < 0.1)


def test_white_noise_is_flat_and_unvoiced(audio, schema):
    x = np.random.default_rng(0).standard_normal(32_000) * 0.2
    b = audio.tokenize(x, sample_rate=16_000)
    assert np.all(slot(b, schema, "aud.spec.flatness") > 0.5)  # white Gaussian noise: e^-gamma = 0.56
    assert np.all(slot(b, schema, "aud.pitch.voiced_fraction") == 0)
    assert np.all(slot(b, schema, "aud.pitch.voicing_prob") < 0.01)
    assert np.all(slot(b, schema, "aud.pitch.f0") == 0)
    t = audio.tokenize(tone(440, 2.0), sample_rate=16_000)
    assert np.all(slot(t, schema, "aud.spec.flatness") < 0.01)


def test_click_train_rate_and_tempo(audio, schema):
    b = audio.tokenize(clicks(2.0, 10.0), sample_rate=16_000)
    np.testing.assert_allclose(slot(b, schema, "aud.onset.rate") * 20, 2.0, atol=1e-6)
    np.testing.assert_allclose(slot(b, schema, "aud.rhythm.onset_rate") * 20, 2.0, atol=1e-6)
    bpm = slot(b, schema, "aud.rhythm.tempo") * 100 + 140
    assert np.all(np.abs(bpm - 120) < 2), bpm
    assert np.all(slot(b, schema, "aud.rhythm.estimated") == 1)
    assert np.all(slot(b, schema, "aud.rhythm.regularity") > 0.95)
    # clip-level values are the same in every token
    assert len(set(slot(b, schema, "aud.rhythm.tempo"))) == 1


@pytest.mark.parametrize("hz, bpm", [(3.0, 180.0), (1.5, 90.0)])
def test_other_click_tempi(audio, schema, hz, bpm):
    b = audio.tokenize(clicks(hz, 8.0), sample_rate=16_000)
    est = slot(b, schema, "aud.rhythm.tempo")[0] * 100 + 140
    assert abs(est - bpm) < 0.02 * bpm
    assert abs(slot(b, schema, "aud.rhythm.onset_rate")[0] * 20 - hz) < 0.15


def test_no_tempo_for_a_steady_tone(audio, schema):
    b = audio.tokenize(tone(300, 3.0), sample_rate=16_000)
    assert np.all(slot(b, schema, "aud.rhythm.estimated") == 0)
    assert np.all(slot(b, schema, "aud.rhythm.tempo") == 0)


def test_clipping_flag(audio, schema):
    clipped = np.clip(2.0 * tone(440, 1.0, level=1.0), -1, 1)
    assert np.all(slot(audio.tokenize(clipped, sample_rate=16_000), schema, "aud.flag.clipping") == 1)
    # int16 clipping at the PCM limits, 44.1 kHz, clipped only in the second half
    x = tone(440, 1.0, rate=44_100, level=0.5)
    x[22_050:] *= 4
    pcm = np.clip(np.round(x * 32768), -32768, 32767).astype(np.int16)
    flags = slot(audio.tokenize(pcm, sample_rate=44_100), schema, "aud.flag.clipping")
    assert list(flags) == [0, 1]
    # a full-scale sine that just touches full scale is not clipped
    pure = tone(440, 1.0, level=1.0)
    assert np.all(slot(audio.tokenize(pure, sample_rate=16_000), schema, "aud.flag.clipping") == 0)


def test_over_range_float(audio, schema):
    b = audio.tokenize(tone(440, 0.5, level=1.5), sample_rate=16_000)
    assert slot(b, schema, "aud.flag.over_range")[0] == 1
    assert slot(b, schema, "aud.loud.peak")[0] == 1


def test_silence_flag_and_level(audio, schema):
    x = np.concatenate([np.zeros(8_000), tone(440, 0.5), 1e-4 * tone(440, 0.5)])
    b = audio.tokenize(x, sample_rate=16_000)
    assert list(slot(b, schema, "aud.flag.silence")) == [1, 0, 1]
    db = slot(b, schema, "aud.loud.rms_dbfs") * 50 - 50
    assert db[0] == -100
    assert abs(db[1] - 20 * np.log10(0.5 / np.sqrt(2))) < 0.05
    assert abs(db[2] - 20 * np.log10(1e-4 * 0.5 / np.sqrt(2))) < 0.05


def test_time_spans_and_padding(audio, schema):
    b = audio.tokenize(tone(440, 60.0, rate=8_000).astype(np.float32), sample_rate=8_000)
    assert len(b) == 120  # one minute fits the 128-token limit
    np.testing.assert_allclose(b.offsets["time"][-1], [59.5, 60.0])
    short = audio.tokenize(tone(440, 0.2), sample_rate=16_000)
    assert len(short) == 1
    np.testing.assert_allclose(short.offsets["time"], [[0.0, 0.2]])
    assert slot(short, schema, "aud.flag.padded")[0] == 1
    assert abs(f0_hz(slot(short, schema, "aud.pitch.f0")[0]) / 440 - 1) < 0.01
    one = audio.tokenize(np.array([0.3]), sample_rate=48_000)
    assert len(one) == 1 and one.offsets["time"][0, 1] == pytest.approx(1 / 48_000)


def test_stereo_is_mixed_to_mono(audio, schema):
    left, right = tone(440, 1.0), tone(440, 1.0)
    st = audio.tokenize(np.stack([left, right], axis=1), sample_rate=16_000)
    mono = audio.tokenize(left, sample_rate=16_000)
    np.testing.assert_array_equal(st.emb, mono.emb)
    assert slot(st, schema, "aud.clip.channels")[0] == pytest.approx(1 / 7)
    # opposite-phase channels cancel: the mix is silent
    anti = audio.tokenize(np.stack([left, -left], axis=1), sample_rate=16_000)
    assert np.all(slot(anti, schema, "aud.flag.silence") == 1)


def test_integer_dtypes_match_float(audio):
    x = tone(330, 1.0, level=0.6)
    ref = audio.tokenize(x, sample_rate=16_000)
    for dtype, top in [(np.int16, 32768), (np.int32, 2**31)]:
        pcm = np.round(x * top).astype(dtype)
        b = audio.tokenize(pcm, sample_rate=16_000)
        # bandwidth of a pure tone is the most sensitive slot: 16-bit noise over 500 bins adds ~50 Hz
        assert np.max(np.abs(b.attr - ref.attr)) < 1e-2
        assert np.min(np.sum(b.emb * ref.emb, axis=1)) > 0.999
    u8 = (np.round(x * 128) + 128).clip(0, 255).astype(np.uint8)
    # 8-bit quantisation noise lies under the embedding's floor (60 dB below the clip's strongest bin)
    assert np.min(np.sum(audio.tokenize(u8, sample_rate=16_000).emb * ref.emb, axis=1)) > 0.999


def test_embedding_is_level_invariant_and_separates_tones(audio):
    a = audio.tokenize(tone(440, 1.0, level=0.5), sample_rate=16_000)
    b = audio.tokenize(tone(440, 1.0, level=0.05), sample_rate=16_000)
    c = audio.tokenize(tone(1_760, 1.0, level=0.5), sample_rate=16_000)
    noise = audio.tokenize(np.random.default_rng(0).standard_normal(16_000) * 0.1, sample_rate=16_000)
    assert np.min(np.sum(a.emb * b.emb, axis=1)) > 0.9999
    assert np.max(np.sum(a.emb * c.emb, axis=1)) < 0.9
    assert np.max(np.sum(a.emb * noise.emb, axis=1)) < 0.9


def test_formants_of_a_synthetic_vowel(audio, schema):
    """Impulse train at 120 Hz through resonators at 700, 1 220, 2 600 Hz (an /a/-like vowel)."""
    from scipy.signal import lfilter

    rate = 16_000
    x = np.zeros(rate * 2)
    x[:: rate // 120] = 1.0
    for f, bw in [(700, 80), (1_220, 90), (2_600, 120)]:
        r = np.exp(-np.pi * bw / rate)
        x = lfilter([1 - r], [1, -2 * r * np.cos(2 * np.pi * f / rate), r * r], x)
    x = 0.5 * x / np.abs(x).max()
    b = audio.tokenize(x, sample_rate=rate)
    for name, target in [("aud.formant.f1", 700), ("aud.formant.f2", 1_220), ("aud.formant.f3", 2_600)]:
        est = 1000 * 2 ** (slot(b, schema, name) * 2.5)
        assert np.all(np.abs(est / target - 1) < 0.1), (name, est)
    assert np.all(np.abs(f0_hz(slot(b, schema, "aud.pitch.f0")) / 120 - 1) < 0.02)


def test_batched_lpc_matches_solve_toeplitz_and_np_roots():
    from scipy.linalg import solve_toeplitz
    from v22sdk_audio import formants as fm

    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, fm.WIN)) + np.sin(np.arange(fm.WIN) * 0.3)[None, :]
    a = fm.lpc(x)
    pre = np.concatenate([x[:, :1], x[:, 1:] - fm.PREEMPH * x[:, :-1]], axis=1) * np.hamming(fm.WIN)
    for k in range(x.shape[0]):
        r = np.correlate(pre[k], pre[k], "full")[fm.WIN - 1 : fm.WIN + fm.ORDER]
        r[0] *= 1 + 1e-9
        ref = solve_toeplitz(r[:-1], -r[1:])
        np.testing.assert_allclose(a[k, 1:], ref, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(
            np.sort_complex(fm.roots(a[k : k + 1])[0]), np.sort_complex(np.roots(a[k])), rtol=1e-6, atol=1e-8
        )


def test_direct_and_fast_spectral_forms_agree():
    from v22sdk_audio import spectral as sp

    rng = np.random.default_rng(2)
    frames = rng.standard_normal((20, 1024)) * np.linspace(0.1, 1, 20)[:, None]
    mag = np.abs(np.fft.rfft(frames * np.hanning(1024), axis=1))
    cent, bw, _, _ = sp.shape_moments(mag)
    np.testing.assert_allclose(cent, sp.centroid(mag), rtol=1e-9)
    np.testing.assert_allclose(bw, sp.bandwidth(mag, sp.centroid(mag)), rtol=1e-6)
    padded = frames.ravel()
    zc = sp.zero_crossings(padded)
    fast = (zc[np.arange(20) * 1024 + 1023] - zc[np.arange(20) * 1024]) / 1024
    np.testing.assert_allclose(fast, sp.zero_crossing_rate(frames))


def test_odd_even_ratio_beyond_float64_range_is_finite_and_warning_free():
    """Harmonic powers ~1e-300 apart overflowed log10(odd / even) (a RuntimeWarning, and inf or
    -inf per frame: a NaN mean when both occur); the difference of the logarithms is used there."""
    import warnings

    from v22sdk_audio import analysis
    from v22sdk_audio import spectral as spectrum

    step = spectrum.FREQS[1]
    f0 = np.full(3, 100.0)
    power = np.full((3, len(spectrum.FREQS)), 1e-320)
    for h in range(2, 11):
        b = int(round(h * 100.0 / step))
        odd_frame_big = h % 2 == 1
        power[0, b] = 1e10 if odd_frame_big else 1e-310  # odd harmonics ~1e320 x the even ones
        power[1, b] = 1e-310 if odd_frame_big else 1e10  # the reverse
        power[2, b] = 2.0 if odd_frame_big else 1.0  # an ordinary ratio: unchanged
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _, oe = analysis._harmonic_measures(power, f0, np.ones(3, bool))
    assert np.isfinite(oe).all()
    assert oe[0] > 300 and oe[1] < -300
    odd = sum(power[2, int(round(h * 100.0 / step)) + d] for h in (3, 5, 7, 9) for d in (-1, 0, 1))
    even = sum(power[2, int(round(h * 100.0 / step)) + d] for h in (2, 4, 6, 8, 10) for d in (-1, 0, 1))
    assert oe[2] == np.log10(odd / even)


def test_the_block_size_changes_no_bit(audio, monkeypatch):
    """analysis.BLOCK only bounds the temporaries (and their page faults): every per-frame result is
    computed row by row, so the tokens are the same bytes whatever the block, odd sizes included."""
    import v22sdk_audio.analysis as analysis

    rng = np.random.default_rng(3)
    # 14 s at 22.05 kHz (700 frames): voiced, noisy and silent stretches, several blocks of each size
    x = np.concatenate([harmonic(196.0, 5.0, rate=22_050, vibrato=0.01), rng.standard_normal(22_050 * 5) * 0.1])
    x = np.concatenate([x, np.zeros(22_050 * 4)])
    runs = []
    for block in (2_048, 512, 97):
        monkeypatch.setattr(analysis, "BLOCK", block)
        b = audio.tokenize(x, sample_rate=22_050)
        runs.append((b.emb.tobytes(), b.attr.tobytes(), b.offsets["time"].tobytes()))
    assert runs[1] == runs[0] and runs[2] == runs[0]
