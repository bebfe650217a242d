"""Contract-style checks of the audio modality (the shared kit's checks, written out for audio)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from audio_signals import clicks, harmonic, tone

from v22sdk import InputError, TokenBatch, UnitsError, get_registry
from v22sdk.schema import ZONES


def test_registered_through_entry_point():
    reg = get_registry()
    assert "audio" in reg.names("modalities")
    assert not [b for b in reg.broken if "audio" in str(b)]


def test_plugin_import_is_cheap():
    code = (
        "import sys, v22sdk_audio; heavy = [m for m in ('scipy', 'soundfile', 'librosa', 'torch', 'cv2') "
        "if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_schema_has_128_named_slots_in_the_audio_zone(schema):
    assert len(schema) == 128
    assert schema.zone == "audio"
    assert list(schema.indices) == list(ZONES["audio"])
    assert all(s.name.startswith("aud.") and s.meaning and s.scaling for s in schema)
    assert len(set(schema.names)) == 128


@pytest.mark.parametrize("signal", ["tone", "harmonic", "noise", "clicks", "silence", "stereo"])
def test_token_contract(audio, schema, signal):
    rng = np.random.default_rng(1)
    data = {
        "tone": tone(440, 1.3),
        "harmonic": harmonic(150, 1.3, vibrato=0.5),
        "noise": rng.standard_normal(20_800) * 0.1,
        "clicks": clicks(4, 1.3),
        "silence": np.zeros(20_800),
        "stereo": np.stack([tone(300, 1.3), tone(500, 1.3)], axis=1),
    }[signal]
    b = audio.tokenize(data, sample_rate=16_000)
    assert isinstance(b, TokenBatch) and b.modality == "audio"
    assert len(b) == 3  # 1.3 s -> segments [0,.5) [.5,1) [1,1.3)
    assert b.emb.dtype == np.float32 and b.attr.dtype == np.float32
    assert np.all(np.abs(np.linalg.norm(b.emb.astype(np.float64), axis=1) - 1) <= 1e-4)
    assert np.all(np.abs(b.attr) <= 1)
    undeclared = np.ones(384, bool)
    undeclared[schema.indices] = False
    assert not b.attr[:, undeclared].any()
    np.testing.assert_allclose(b.offsets["time"], [[0, 0.5], [0.5, 1], [1, 1.3]], atol=1e-9)
    assert b.offsets["time"].dtype == np.float64


def test_bit_reproducible(audio):
    x = harmonic(180, 3.0, vibrato=1.0) + np.random.default_rng(3).standard_normal(48_000) * 0.01
    a, b = audio.tokenize(x, sample_rate=16_000), audio.tokenize(x.copy(), sample_rate=16_000)
    assert a == b


def test_batch_equals_concatenated_singles(audio):
    items = [tone(220, 0.7), clicks(3, 2.2)]
    from v22sdk import Sample

    samples = [Sample(x, {"sample_rate": 16_000.0}) for x in items]
    batch = audio.tokenize_batch(samples)
    singles = TokenBatch.concat([audio.tokenize(s) for s in samples])
    assert batch.emb.tobytes() == singles.emb.tobytes() and batch.attr.tobytes() == singles.attr.tobytes()
    assert list(batch.offsets["item"]) == [0, 0] + [1] * 5


def test_config_round_trip(audio):
    from v22sdk_audio import AudioModality

    cfg = json.loads(json.dumps(audio.config()))
    assert AudioModality.from_config(cfg) == audio


def test_default_invalid_inputs_raise_input_error(audio):
    from v22sdk import Sample

    valid = Sample(tone(440, 0.6).astype(np.float32), {"sample_rate": 16_000.0})
    cases = audio.invalid_inputs(valid)
    labels = {label for label, _ in cases}
    assert {
        "wrong_dtype",
        "wrong_rank",
        "empty",
        "non_finite",
        "missing_units",
        "channels_first",
        "non_integer_rate",
        "rate_out_of_range",
        "bool_dtype",
    } <= labels
    for _label, case in cases:
        with pytest.raises(InputError):
            audio.tokenize(case)


def test_missing_sample_rate_is_units_error(audio):
    with pytest.raises(UnitsError, match="sample_rate"):
        audio.tokenize(tone(440, 0.5))
    with pytest.raises(UnitsError, match="sample_rate"):
        audio.encode(tone(440, 0.5))


@pytest.mark.parametrize("peak", [1.5e12, -1e300, float(np.finfo(np.float64).max)])
def test_float_samples_far_beyond_full_scale_are_refused(audio, peak):
    x = np.zeros(16_000)
    x[100] = peak
    with pytest.raises(InputError, match=r"float samples reach .*beyond ±1e\+12 full scale"):
        audio.tokenize(x, sample_rate=16_000)


@pytest.mark.parametrize("peak", [2.0**31, 1e12])
def test_unscaled_pcm_as_floats_is_accepted_without_overflow(audio, peak):
    import warnings

    x = peak * np.sin(2 * np.pi * 220 * np.arange(16_000) / 16_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow in any internal cast
        batch = audio.tokenize(x, sample_rate=16_000)
    assert np.isfinite(batch.emb).all() and np.isfinite(batch.attr).all()
    assert np.allclose(np.linalg.norm(batch.emb, axis=1), 1.0, atol=1e-5)


def test_nan_error_names_the_position(audio):
    x = tone(440, 0.5)
    x[1234] = np.nan
    with pytest.raises(InputError, match="non-finite.*1234"):
        audio.tokenize(x, sample_rate=16_000)


def test_ragged_list_is_input_error(audio):
    with pytest.raises(InputError):
        audio.tokenize([[0.0, 1.0], [0.5]], sample_rate=16_000)


def test_silence_gets_the_documented_unit_vector(audio, schema):
    from v22sdk_audio.embedding import silence_vector

    b = audio.tokenize(np.zeros(16_000, dtype=np.int16), sample_rate=16_000)
    assert np.array_equal(b.emb, np.tile(silence_vector().astype(np.float32), (2, 1)))
    assert (b.attr[:, schema.index("aud.flag.silence")] == 1).all()


def test_projection_is_orthonormal():
    from v22sdk_audio.embedding import projection

    p = projection()
    assert p.shape == (512, 256)
    np.testing.assert_allclose(p.T @ p, np.eye(256), atol=1e-12)


def test_shipped_projection_is_the_derivation():
    """data/projection.npy is derive_projection() (the QR that earlier releases ran at first
    use) to a few ulps; shipping its bits is what lets every audio embedding keep its bits."""
    from threadpoolctl import threadpool_limits
    from v22sdk_audio.embedding import derive_projection, projection

    with threadpool_limits(1):
        derived = derive_projection()
    assert derived.dtype == projection().dtype == np.float64
    # The shipped file is the reference: tokens take their bits from it, never from a QR at run
    # time. The QR's last bits follow the CPU's BLAS kernels (an AVX-512 machine differs from an
    # AVX2 one by about 1 ulp), so the derivation is held to a few ulps, not to every bit.
    assert np.abs(derived - projection()).max() <= 4e-15


def test_shared_contract_kit_passes_with_no_expected_failures(audio):
    """The project's contract kit (v22sdk.testing), the rules of contract version 1, over our
    sample_inputs() (a few seconds). The slow test runs the whole kit at its defaults: the kit's
    own inputs (long, dense, every dtype ...) take audio over a minute."""
    testing = pytest.importorskip("v22sdk.testing")
    report = testing.check_modality(audio, max_examples=5, contract_version=1)
    ran = [r for r in report.results if r.since <= 1]
    assert len(ran) == 11 and all(r.status == "passed" for r in ran), str(report)
    assert all(r.status == "skipped" for r in report.results if r.since >= 2), str(report)


@pytest.mark.slow
def test_shared_contract_kit_full(audio):
    from v22sdk.testing import check_modality

    report = check_modality(audio)
    assert all(r.status == "passed" for r in report.results), str(report)
