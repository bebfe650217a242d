"""Formants F1-F3 by linear prediction (LPC), batched over frames.

The signal is first halved to 8 kHz (``scipy.signal.resample_poly(y, 1, 2)``), so formants up to
3.9 kHz are found with a short predictor. Per frame (centred like the 16 kHz analysis frames):
30 ms (240 samples), pre-emphasis 0.97, Hamming window,
autocorrelation lags 0..ORDER, Levinson-Durbin (vectorised over frames: the loop runs over the
order, not over frames), then the roots of the prediction polynomial as eigenvalues of its
companion matrices (what ``np.roots`` computes, batched). A root ``r`` with Im r > 0 is a
formant candidate at ``angle(r) * RATE / 2pi`` Hz with bandwidth ``-ln|r| * RATE / pi`` Hz; kept
if 90 Hz < F < 3 900 Hz and bandwidth < 400 Hz; the three lowest are F1, F2, F3 (NaN if missing).
The tests check the batched solver against ``scipy.linalg.solve_toeplitz`` + ``np.roots``.
"""

from __future__ import annotations

import numpy as np

from .frontend import HOP, RATE

LPC_RATE = RATE // 2  # 8 kHz
ORDER = 10  # 2 + LPC_RATE/1000: one pole pair per kHz plus two for the glottal/lip spectrum
WIN = 240  # 30 ms
PREEMPH = 0.97
MAX_BW = 400.0
F_LO, F_HI = 90.0, 3_900.0


def lpc_frames(y: np.ndarray, frame_index: np.ndarray) -> np.ndarray:
    """16 kHz signal (n,), analysis frame indices (K,) -> (K, WIN) 8 kHz frames centred like them."""
    from .resample import resample_poly  # scipy.signal.resample_poly's bits, without importing scipy.signal

    y8 = resample_poly(y, 1, 2) if y.size > 1 else y[:1].copy()
    centre = (frame_index * HOP + HOP // 2) // 2  # 8 kHz sample index of each frame centre
    padded = np.concatenate([np.zeros(WIN), y8, np.zeros(WIN)])
    view = np.lib.stride_tricks.sliding_window_view(padded, WIN)
    return view[centre + WIN - WIN // 2]


def lpc(x: np.ndarray) -> np.ndarray:
    """(K, WIN) 8 kHz frames -> (K, ORDER+1) prediction polynomials [1, a1, ..., ap]."""
    from scipy import fft

    x = np.concatenate([x[:, :1], x[:, 1:] - PREEMPH * x[:, :-1]], axis=1) * np.hamming(WIN)
    spec = fft.rfft(x, 2 * WIN, axis=1)
    r = fft.irfft(spec.real**2 + spec.imag**2, 2 * WIN, axis=1)[:, : ORDER + 1]
    r[:, 0] *= 1.0 + 1e-9  # white-noise correction keeps the recursion stable
    k_count = r.shape[0]
    a = np.zeros((k_count, ORDER + 1))
    a[:, 0] = 1.0
    err = r[:, 0].copy()
    safe = err > 0
    err[~safe] = 1.0
    for i in range(1, ORDER + 1):
        acc = np.einsum("kj,kj->k", a[:, :i], r[:, i:0:-1])
        k = -acc / err
        a[:, 1 : i + 1] = a[:, 1 : i + 1] + k[:, None] * a[:, i - 1 :: -1][:, :i]
        err = err * (1.0 - k * k)
        err = np.where(err > 0, err, 1e-300)
    a[~safe] = 0.0
    a[~safe, 0] = 1.0
    return a


def roots(a: np.ndarray) -> np.ndarray:
    """(K, p+1) monic polynomials -> (K, p) complex roots (eigenvalues of companion matrices)."""
    k_count, p1 = a.shape
    p = p1 - 1
    comp = np.zeros((k_count, p, p))
    comp[:, 0, :] = -a[:, 1:]
    comp[:, np.arange(1, p), np.arange(p - 1)] = 1.0
    return np.linalg.eigvals(comp)


def formants(frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(K, WIN) 8 kHz frames -> (freqs (K, 3) Hz, bandwidths (K, 3) Hz), NaN where fewer than 3 were found."""
    if frames.shape[0] == 0:
        empty = np.zeros((0, 3))
        return empty, empty.copy()
    z = roots(lpc(frames))
    freq = np.angle(z) * LPC_RATE / (2.0 * np.pi)
    with np.errstate(divide="ignore"):
        bw = -np.log(np.abs(z)) * LPC_RATE / np.pi
    ok = (z.imag > 0) & (freq > F_LO) & (freq < F_HI) & (bw < MAX_BW) & (bw > 0)
    key = np.where(ok, freq, np.inf)
    order = np.argsort(key, axis=1)[:, :3]
    f = np.take_along_axis(key, order, axis=1)
    b = np.take_along_axis(bw, order, axis=1)
    missing = ~np.isfinite(f)
    f[missing] = np.nan
    b[missing] = np.nan
    return f, b
