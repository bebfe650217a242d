"""Audio front end: raw samples -> mono float64 at 16 kHz -> framed magnitude spectra.

Constants (documented in docs/audio-modality.md):

* analysis rate ``RATE`` = 16 000 Hz (every input is resampled to it with a polyphase filter);
* segment ``SEGMENT`` = 8 000 samples (0.5 s): one token per segment;
* frame ``N_FFT`` = 1 024 samples (64 ms), periodic Hann window, hop ``HOP`` = 320 samples (20 ms),
  so a segment holds exactly ``FRAMES_PER_SEGMENT`` = 25 frames. Frame ``k`` is centred on the
  middle of hop ``k`` (samples ``k*HOP .. (k+1)*HOP``); the signal is zero-padded at both ends to
  complete the frames.

Sample values are in full-scale units: 1.0 is digital full scale (int16 32 768, int32 2**31,
uint8 offset 128, float 1.0).
"""

from __future__ import annotations

import numpy as np

from v22sdk import InputError, UnitsError

RATE = 16_000
SEGMENT = 8_000
N_FFT = 1_024
HOP = 320
FRAMES_PER_SEGMENT = SEGMENT // HOP
#: Left zero padding that centres frame k on the middle of hop k.
PAD_LEFT = (N_FFT - HOP) // 2
#: Samples at or beyond this fraction of full scale, repeated in a run, count as clipped.
CLIP_LEVEL = 0.99
#: Most channels an (n, ch) array may have; more suggests a channels-first array.
MAX_CHANNELS = 32
MIN_RATE, MAX_RATE = 1_000.0, 384_000.0
#: Float samples beyond this many times full scale are no recording. 2**31 (a 32-bit PCM value read
#: as a float without scaling) stays accepted; far beyond it the analysis overflows: the pitch
#: tracker's float32 autocorrelation (640 squared samples) at about 7e17, float64 spectra near 1e154.
MAX_FLOAT_AMPLITUDE = 1e12


def to_float(data: np.ndarray, source: str) -> np.ndarray:
    """Any accepted array -> float64 in full-scale units, same shape. Raises InputError on bad input."""
    if not isinstance(data, np.ndarray):
        try:
            data = np.asarray(data)
        except Exception as exc:  # ragged lists and the like
            raise InputError(source, f"cannot be read as an array of samples: {exc}") from None
    kind = data.dtype.kind
    if kind not in "uif":
        raise InputError(source, f"samples must be integer or float, got dtype {data.dtype}")
    if data.ndim not in (1, 2):
        raise InputError(source, f"samples must be 1-D (n,) or 2-D (n, channels), got shape {data.shape}")
    if data.size == 0:
        raise InputError(source, f"holds no audio samples (shape {data.shape})")
    if data.ndim == 2 and data.shape[1] > MAX_CHANNELS:
        raise InputError(
            source,
            f"shape {data.shape} has {data.shape[1]} channels; arrays are "
            f"(n_samples, n_channels), channels last (transpose a channels-first array)",
        )
    if kind == "f":
        out = data.astype(np.float64)
        bad = ~np.isfinite(out)
        if bad.any():
            first = int(np.flatnonzero(bad.ravel())[0])
            raise InputError(
                source, f"holds {int(bad.sum())} non-finite value(s) (NaN or inf), the first at flat index {first}"
            )
        peak = float(np.abs(out).max())
        if peak > MAX_FLOAT_AMPLITUDE:
            raise InputError(
                source, f"float samples reach {peak:g}: beyond ±{MAX_FLOAT_AMPLITUDE:g} full scale is not audio"
            )
        return out
    bits = data.dtype.itemsize * 8
    scale = float(2 ** (bits - 1))
    if kind == "u":
        return (data.astype(np.float64) - scale) / scale
    return data.astype(np.float64) / scale


def check_rate(rate: float, source: str) -> int:
    """The sample rate as an int; non-integer or out-of-range rates are a UnitsError."""
    if not (MIN_RATE <= rate <= MAX_RATE):
        raise UnitsError(source, f"sample_rate = {rate:g} Hz is outside [{MIN_RATE:g}, {MAX_RATE:g}] Hz")
    if abs(rate - round(rate)) > 1e-6:
        raise UnitsError(source, f"sample_rate = {rate!r} Hz is not a whole number of Hz")
    return int(round(rate))


def clipped_mask(x: np.ndarray) -> np.ndarray:
    """(n,) bool: samples at >= CLIP_LEVEL of full scale that repeat a neighbour's value (flat tops).

    ``x`` is (n,) or (n, ch) in full-scale units at the source rate; a sample is clipped if any
    channel is. A pure sine touching full scale is not flagged (its samples never repeat); a
    clipped one is, because clipping holds the extreme value for several samples.
    """
    x2 = x if x.ndim == 2 else x[:, None]
    high = np.abs(x2) >= CLIP_LEVEL
    same = np.zeros_like(high)
    if x2.shape[0] > 1:
        eq = x2[1:] == x2[:-1]
        same[1:] |= eq
        same[:-1] |= eq
    return (high & same).any(axis=1)


def to_mono(x: np.ndarray) -> np.ndarray:
    """(n,) or (n, ch) -> (n,) by averaging the channels."""
    return x if x.ndim == 1 else x.mean(axis=1)


def resample(x: np.ndarray, rate: int) -> np.ndarray:
    """(n,) at ``rate`` -> (ceil(n*RATE/rate),) at RATE, polyphase (scipy.signal.resample_poly, Kaiser 5.0,
    computed by :mod:`.resample` without importing scipy.signal)."""
    if rate == RATE:
        return x
    from math import gcd

    from .resample import resample_poly

    g = gcd(RATE, rate)
    return resample_poly(x, RATE // g, rate // g)


def segment_count(n: int) -> int:
    """Tokens for ``n`` samples at RATE: one per started 0.5 s segment, at least one."""
    return max(1, -(-n // SEGMENT))


def pad(y: np.ndarray, n_segments: int) -> np.ndarray:
    """``y`` zero-padded to n_segments*SEGMENT + N_FFT - HOP samples, PAD_LEFT zeros in front."""
    out = np.zeros(n_segments * SEGMENT + N_FFT - HOP)
    out[PAD_LEFT : PAD_LEFT + y.size] = y[: out.size - PAD_LEFT]
    return out


def frames(padded: np.ndarray, n_segments: int) -> np.ndarray:
    """(n_segments*50, N_FFT) frames of a :func:`pad`-ded signal (a strided read-only view):
    frame k = padded[k*HOP : k*HOP + N_FFT]."""
    view = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP]
    return view[: n_segments * FRAMES_PER_SEGMENT]


def hann() -> np.ndarray:
    """Periodic Hann window of N_FFT samples (the DFT-even form scipy's get_window('hann') returns)."""
    n = np.arange(N_FFT)
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * n / N_FFT)


def frame_valid(n_samples: int, n_segments: int) -> np.ndarray:
    """(n_segments, 50) bool: frames whose centre lies inside the real audio (the first always counts)."""
    centres = np.arange(n_segments * FRAMES_PER_SEGMENT) * HOP + HOP / 2
    valid = centres < n_samples
    valid[0] = True
    return valid.reshape(n_segments, FRAMES_PER_SEGMENT)
