"""Property tests over random signals, lengths (1 sample .. 3 s by default, minutes in the slow
test), rates 8-96 kHz, dtypes uint8/int16/int32/float32/float64 and 1-2 channels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from v22sdk_audio import AudioModality
from v22sdk_audio.strategies import as_dtype, samples, synth

from v22sdk import InputError

AUDIO = AudioModality()
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check(batch, seconds):
    n = len(batch)
    assert n == max(1, int(np.ceil(round(seconds * 16_000) / 8_000)))
    assert np.all(np.isfinite(batch.emb)) and np.all(np.isfinite(batch.attr))
    assert np.all(np.abs(np.linalg.norm(batch.emb.astype(np.float64), axis=1) - 1) <= 1e-4)
    assert np.all(np.abs(batch.attr) <= 1)
    t = batch.offsets["time"]
    assert t[0, 0] == 0 and np.all(t[:, 1] > t[:, 0]) and t[-1, 1] == pytest.approx(seconds)


@settings(max_examples=20, **_SETTINGS)
@given(samples())
def test_any_valid_sample_gives_valid_reproducible_tokens(sample):
    b = AUDIO.tokenize(sample)
    _check(b, sample.data.shape[0] / sample.units["sample_rate"])
    assert AUDIO.tokenize(sample) == b


@settings(max_examples=15, **_SETTINGS)
@given(rate=st.integers(8_000, 96_000), n=st.integers(1, 64), dtype=st.sampled_from(["int16", "float32", "uint8"]))
def test_tiny_inputs(rate, n, dtype):
    x = as_dtype(np.random.default_rng(n).uniform(-1, 1, n), dtype)
    b = AUDIO.tokenize(x, sample_rate=rate)
    assert len(b) == 1
    _check(b, n / rate)


@settings(max_examples=20, **_SETTINGS)
@given(
    data=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=1, max_size=200),
    rate=st.integers(8_000, 96_000),
)
def test_arbitrary_float_arrays_tokenize_or_raise_input_error(data, rate):
    from v22sdk_audio.frontend import MAX_FLOAT_AMPLITUDE

    x = np.asarray(data, dtype=np.float32)
    if not np.all(np.isfinite(x)) or np.abs(x.astype(np.float64)).max() > MAX_FLOAT_AMPLITUDE:
        with pytest.raises(InputError):
            AUDIO.tokenize(x, sample_rate=rate)
    else:
        _check(AUDIO.tokenize(x, sample_rate=rate), x.size / rate)


@settings(max_examples=20, **_SETTINGS)
@given(rate=st.floats(-1e7, 1e7) | st.sampled_from([float("nan"), float("inf"), 44_100.5, 999.0, 384_001.0]))
def test_any_sample_rate_is_accepted_or_a_units_error(rate):
    from v22sdk import UnitsError

    x = np.zeros(100, dtype=np.int16)
    if 1_000 <= rate <= 384_000 and float(rate).is_integer():
        assert len(AUDIO.tokenize(x, sample_rate=rate)) == 1
    else:
        with pytest.raises(UnitsError):
            AUDIO.tokenize(x, sample_rate=rate)


@pytest.mark.slow
@settings(max_examples=4, **_SETTINGS)
@given(
    rate=st.sampled_from([8_000, 44_100, 96_000]),
    minutes=st.floats(1.0, 3.0),
    kind=st.sampled_from(["noise", "chirp", "clicks"]),
    dtype=st.sampled_from(["int16", "float32"]),
)
def test_minutes_long_inputs(rate, minutes, kind, dtype):
    n = int(minutes * 60 * rate)
    x = as_dtype(synth(kind, n, rate, 1, 0, 220.0, 0.5), dtype)
    b = AUDIO.tokenize(x, sample_rate=rate)
    _check(b, n / rate)
