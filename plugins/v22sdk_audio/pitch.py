"""YIN fundamental-frequency estimation, vectorised over frames, with a pYIN-style voicing probability.

YIN (de Cheveigné & Kawahara 2002): difference function by FFT, cumulative-mean-normalised
difference (CMNDF), the first dip below an absolute threshold (0.1) followed down to its local
minimum, parabolic interpolation of the lag. The voicing probability is the probability, under
pYIN's Beta(2, 18) prior over YIN thresholds (Mauch & Dixon 2014), that the chosen dip lies below
the threshold: ``1 - I_d(2, 18)`` (regularised incomplete beta) at the dip's CMNDF value ``d``.
No HMM smoothing: each frame is judged on its own. A frame is *voiced* when its voicing
probability is at least ``VOICED_THRESHOLD`` = 1 / (B + 1), B = 639 the number of pYIN's 10-cent
pitch bins from 50 Hz to 2 kHz: pYIN's emission rule (the probability on the frame's pitch bin
beats the unvoiced probability spread evenly over all B bins). pYIN's own per-frame probabilities
in frames it calls voiced are mostly below 0.25; its HMM, not the probability, makes the call.
"""

from __future__ import annotations

import numpy as np

from .frontend import N_FFT, RATE

F0_MIN = 50.0
F0_MAX = 2_000.0
TAU_MAX = int(np.ceil(RATE / F0_MIN))  # 320 samples
TAU_MIN = int(np.floor(RATE / F0_MAX))  # 8 samples
FRAME = 640  # 40 ms: the centre of each 64 ms analysis frame
WIN = FRAME - TAU_MAX  # 320-sample integration window (one period at 50 Hz)
_N = 1024  # FFT size >= FRAME + TAU_MAX: no circular wrap
THRESHOLD = 0.1
PITCH_BINS = 1200.0 * np.log2(F0_MAX / F0_MIN) / 10.0  # 638.6 ten-cent bins
VOICED_THRESHOLD = 1.0 / (PITCH_BINS + 1.0)  # 0.00156
_LAGS = np.arange(1, TAU_MAX + 1, dtype=np.float64)
_SCALE = WIN / (FRAME - np.arange(TAU_MAX + 1, dtype=np.float64))


def cmndf(frames: np.ndarray) -> np.ndarray:
    """(F, N_FFT) frames -> (F, TAU_MAX+1) cumulative-mean-normalised difference (column 0 is 1).

    Uses the central FRAME = 640 samples x of each frame. The difference function is taken over
    that window, d(tau) = sum_{j < W-tau} (x_j - x_{j+tau})^2 (one FFT per frame), and rescaled by
    WIN / (W - tau) so that every lag is an average over the same number of terms (the classic
    fixed 320-sample integration window, without a second FFT).
    """
    from scipy import fft

    start = (N_FFT - FRAME) // 2
    x = frames[:, start : start + FRAME]
    n = x.shape[0]
    # the autocorrelation in float32 (half the FFT cost); its error, ~1e-7 of the frame energy,
    # is far below the CMNDF values that matter (the 0.1 threshold, dips of ~1e-3 for clean tones)
    buf = np.zeros((n, _N), dtype=np.float32)
    buf[:, :FRAME] = x
    spec = fft.rfft(buf, axis=1)
    acf = fft.irfft(spec.real**2 + spec.imag**2, _N, axis=1)[:, : TAU_MAX + 1]
    # cs[:, m] = sum_{j < m} x_j^2
    cs = np.zeros((n, FRAME + 1))
    np.cumsum(x * x, axis=1, out=cs[:, 1:])
    total = cs[:, FRAME : FRAME + 1]
    # d(tau) = sum_{j < W-tau} x_j^2 + sum_{j >= tau} x_j^2 - 2 acf(tau), scaled to WIN terms
    diff = cs[:, FRAME : FRAME - TAU_MAX - 1 : -1] - cs[:, : TAU_MAX + 1]
    diff += total
    diff -= 2.0 * acf
    np.maximum(diff, 0.0, out=diff)
    diff *= _SCALE
    diff[:, 0] = 0.0
    cum = np.cumsum(diff[:, 1:], axis=1)
    out = np.ones_like(diff)
    ok = cum > 1e-12 * np.maximum(total, 1e-300)
    np.divide(diff[:, 1:] * _LAGS, cum, out=out[:, 1:], where=ok)
    return out


def yin(frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(F, N_FFT) frames -> (f0 Hz, voicing probability, dip CMNDF value), each (F,).

    f0 is the estimate at the chosen dip for every frame (voiced or not); callers mask it with the
    voicing probability.
    """
    from scipy.special import betainc

    d = cmndf(frames)
    band = d[:, TAU_MIN : TAU_MAX + 1]
    # local minima inside the search band (edges excluded so the parabola has both neighbours)
    lm = np.zeros(band.shape, dtype=bool)
    lm[:, 1:-1] = (band[:, 1:-1] <= band[:, :-2]) & (band[:, 1:-1] <= band[:, 2:])
    below = band < THRESHOLD
    has_below = below.any(axis=1)
    first = np.argmax(below, axis=1)
    idx = np.arange(band.shape[1])
    after = lm & (idx[None, :] >= first[:, None])
    dip = np.where(has_below & after.any(axis=1), np.argmax(after, axis=1), -1)
    # no dip below the threshold: take the global minimum among local minima (or of the band)
    masked = np.where(lm, band, np.inf)
    glob = np.where(lm.any(axis=1), np.argmin(masked, axis=1), np.argmin(band, axis=1))
    dip = np.where(dip >= 0, dip, glob)
    rows = np.arange(band.shape[0])
    c = band[rows, dip]
    left = band[rows, np.maximum(dip - 1, 0)]
    right = band[rows, np.minimum(dip + 1, band.shape[1] - 1)]
    curv = left - 2.0 * c + right
    inner = (dip > 0) & (dip < band.shape[1] - 1) & (curv > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(inner, 0.5 * (left - right) / curv, 0.0)
    shift = np.clip(shift, -1.0, 1.0)
    tau = TAU_MIN + dip + shift
    f0 = RATE / tau
    dmin = np.clip(c, 0.0, 1.0)
    prob = 1.0 - betainc(2.0, 18.0, dmin)
    return f0, prob, dmin
