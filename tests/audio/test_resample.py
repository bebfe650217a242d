"""The numpy polyphase resampler gives scipy.signal.resample_poly's bits, and tokenizing audio
does not import scipy.signal (issue 21: it costs a fresh process 0.6-1.3 s of CPU)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.signal import resample_poly as scipy_resample_poly
from v22sdk_audio import resample as rs
from v22sdk_audio.frontend import RATE

RATES = [8_000, 11_025, 22_050, 24_000, 32_000, 44_100, 48_000, 96_000]


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.int64), b.view(np.int64))


@pytest.mark.parametrize("rate", RATES)
def test_every_input_rate_to_16k_is_bit_identical(rate):
    from math import gcd

    g = gcd(RATE, rate)
    up, down = RATE // g, rate // g
    rng = np.random.default_rng(rate)
    for n in (1, 2, 5, down - 1, down, down + 1, 3 * rate // 7 + 11):
        x = rng.standard_normal(n) * 0.3
        assert _same_bits(rs.resample_poly_numpy(x, up, down), scipy_resample_poly(x, up, down)), (rate, n)


def test_halving_for_formants_and_special_signals_are_bit_identical():
    rng = np.random.default_rng(1)
    signals = [
        rng.standard_normal(16_001),
        np.zeros(5_000),
        -np.zeros(777),
        np.r_[np.zeros(300), 1e-300 * rng.standard_normal(300), np.zeros(300)],
        np.sin(np.arange(10_000) * 0.01),
    ]
    for x in signals:
        for up, down in ((1, 2), (2, 1), (3, 7), (160, 441)):
            ref = scipy_resample_poly(x, up, down)
            assert _same_bits(rs.resample_poly_numpy(x, up, down), ref), (up, down)
            assert _same_bits(rs.resample_poly_upfirdn(x, up, down), ref), (up, down)


def test_a_broken_filter_is_caught():
    """The comparison sees a last-bit change (the check above can fail)."""
    x = np.random.default_rng(2).standard_normal(4_000)
    good = rs.resample_poly_numpy(x, 160, 441)
    bad = good.copy()
    bad[1234] = np.nextafter(bad[1234], np.inf)
    assert not _same_bits(bad, scipy_resample_poly(x, 160, 441))


def test_dispatch_uses_scipy_once_loaded_or_after_enough_work(monkeypatch):
    import scipy.signal

    x = np.random.default_rng(3).standard_normal(2_000)
    ref = scipy_resample_poly(x, 160, 441)
    calls = []

    def spy(*a, **k):
        calls.append(1)
        return upfirdn(*a, **k)

    upfirdn = scipy.signal.upfirdn
    monkeypatch.setattr(scipy.signal, "upfirdn", spy)
    assert _same_bits(rs.resample_poly(x, 160, 441), ref) and calls == [1]  # loaded (by this module): used
    monkeypatch.setattr(rs, "_scipy_signal_loaded", lambda: False)
    monkeypatch.setattr(rs, "_work", [0.0])
    assert _same_bits(rs.resample_poly(x, 160, 441), ref) and calls == [1]  # not loaded: numpy
    assert rs._work[0] > 0  # and counted its work
    monkeypatch.setattr(rs, "_work", [rs.SCIPY_AFTER + 1])
    assert _same_bits(rs.resample_poly(x, 160, 441), ref) and calls == [1, 1]  # enough work done: scipy


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        rs.resample_poly_numpy(np.zeros((3, 2)), 1, 2)
    with pytest.raises(ValueError):
        rs.resample_poly_numpy(np.zeros(3), 0, 2)
    with pytest.raises(ValueError):
        rs.resample_poly_upfirdn(np.zeros((3, 2)), 1, 2)


def test_tokenizing_a_44k_clip_does_not_import_scipy_signal():
    code = (
        "import sys, numpy as np\n"
        "from v22sdk import get_registry\n"
        "t = np.arange(44_100) / 44_100\n"
        "b = get_registry().modality('audio').tokenize(0.3 * np.sin(2 * np.pi * 220 * t), sample_rate=44_100)\n"
        "assert b.emb.shape[0] > 0\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scipy.signal', 'scipy.stats'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
