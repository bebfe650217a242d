"""Frame-level spectral and time-domain descriptors (definitions follow librosa's, so it can be the oracle).

All functions take ``mag`` (F, 513) = |rfft(frame * hann)| (bins 0..8 000 Hz, 15.625 Hz apart)
or the (F, N_FFT) frames themselves, and return (F,) arrays.
"""

from __future__ import annotations

import numpy as np

from .frontend import N_FFT, RATE

FREQS = np.fft.rfftfreq(N_FFT, 1.0 / RATE)  # (513,) Hz
_TINY = 1e-12


def centroid(mag: np.ndarray) -> np.ndarray:
    """Magnitude-weighted mean frequency, Hz (0 for an all-zero frame)."""
    total = mag.sum(axis=1)
    return np.where(total > _TINY, mag @ FREQS / np.maximum(total, _TINY), 0.0)


def bandwidth(mag: np.ndarray, cent: np.ndarray) -> np.ndarray:
    """Second-order spectral bandwidth (magnitude-weighted std of frequency around the centroid), Hz."""
    total = np.maximum(mag.sum(axis=1), _TINY)
    dev2 = (FREQS[None, :] - cent[:, None]) ** 2
    return np.sqrt(np.einsum("fk,fk->f", mag, dev2) / total)


def rolloff(mag: np.ndarray, *fractions: float) -> list[np.ndarray]:
    """For each fraction: lowest bin frequency at which the cumulative magnitude reaches it, Hz."""
    cum = np.cumsum(mag, axis=1)
    return [FREQS[np.argmax(cum >= f * cum[:, -1:], axis=1)] for f in fractions]


def log_power(power: np.ndarray, amin: float = 1e-10) -> np.ndarray:
    """Natural log of the power spectrum floored at ``amin`` (shared by flatness, slope, entropy, onsets)."""
    return np.log(np.maximum(power, amin))


def flatness(power: np.ndarray, logp: np.ndarray | None = None, amin: float = 1e-10) -> np.ndarray:
    """Wiener entropy of the power spectrum (|X|^2): geometric mean / arithmetic mean, in (0, 1]."""
    if logp is None:
        logp = log_power(power, amin)
    return np.exp(logp.mean(axis=1)) / np.maximum(power, amin).mean(axis=1)


def zero_crossings(y: np.ndarray, threshold: float = 1e-10) -> np.ndarray:
    """(n,) int64 cumulative count of sign changes: c[i] = changes between samples (j-1, j) for j <= i.

    |x| <= ``threshold`` counts as zero and zero as positive (librosa's convention; the analysis
    passes 60 dB below the clip's peak, so the storage's rounding noise near zero crosses nothing)."""
    neg = np.signbit(np.where(np.abs(y) <= threshold, 0.0, y))
    change = np.zeros(y.size, dtype=np.int64)
    change[1:] = neg[1:] != neg[:-1]
    return np.cumsum(change)


def zero_crossing_rate(frames: np.ndarray) -> np.ndarray:
    """Fraction of adjacent-sample sign changes per frame (the direct form; the analysis uses
    :func:`zero_crossings` on the padded signal, which gives the same numbers in O(n))."""
    x = np.where(np.abs(frames) <= 1e-10, 0.0, frames)
    neg = np.signbit(x)
    return (neg[:, 1:] != neg[:, :-1]).sum(axis=1) / frames.shape[1]


def frame_rms(frames: np.ndarray) -> np.ndarray:
    """Root-mean-square amplitude of each full frame (full-scale units)."""
    return np.sqrt(np.einsum("fk,fk->f", frames, frames) / frames.shape[1])


def entropy(power: np.ndarray, logp: np.ndarray) -> np.ndarray:
    """Shannon entropy of the normalised power spectrum divided by log(bins): in [0, 1].

    Uses sum p log p = (sum P log P) / T - log T with the floored log power."""
    total = power.sum(axis=1)
    safe = np.maximum(total, _TINY)
    h = np.log(safe) - np.einsum("fk,fk->f", power, logp) / safe
    return np.where(total > _TINY, np.clip(h / np.log(power.shape[1]), 0.0, 1.0), 0.0)


def shape_moments(mag: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centroid (Hz), bandwidth (Hz), skewness and excess kurtosis of the magnitude over frequency,
    from the raw moments mag @ f^k (k = 0..4, f in kHz) in one matrix product."""
    f = FREQS / 1000.0
    m = mag @ np.stack([np.ones_like(f), f, f * f, f**3, f**4], axis=1)  # (F, 5)
    m0 = m[:, 0]
    ok = m0 > _TINY
    e = m[:, 1:] / np.where(ok, m0, 1.0)[:, None]
    mu = e[:, 0]
    var = np.maximum(e[:, 1] - mu * mu, 0.0)
    c3 = e[:, 2] - 3 * mu * e[:, 1] + 2 * mu**3
    c4 = e[:, 3] - 4 * mu * e[:, 2] + 6 * mu * mu * e[:, 1] - 3 * mu**4
    sd = np.sqrt(var)
    big = sd > 1e-6
    skew = np.where(ok & big, c3 / np.where(big, sd**3, 1.0), 0.0)
    kurt = np.where(ok & big, c4 / np.where(big, var * var, 1.0) - 3.0, 0.0)
    return np.where(ok, mu * 1000.0, 0.0), np.where(ok, sd * 1000.0, 0.0), skew, kurt


def slope(logp: np.ndarray, top_db: float = 80.0) -> np.ndarray:
    """Least-squares slope of the dB power spectrum, dB per kHz; each frame's spectrum is floored at
    ``top_db`` below its own peak, so that a quantisation-noise floor does not decide the slope."""
    db = (10.0 / np.log(10.0)) * logp
    db = np.maximum(db, db.max(axis=1, keepdims=True) - top_db)
    f = FREQS / 1000.0
    fc = f - f.mean()
    return db @ fc / (fc @ fc)


def flux(mag: np.ndarray) -> np.ndarray:
    """L2 norm of the positive change of the sum-normalised magnitude spectrum from the previous frame."""
    norm = mag / np.maximum(mag.sum(axis=1, keepdims=True), _TINY)
    d = np.diff(norm, axis=0, prepend=norm[:1])
    return np.sqrt((np.maximum(d, 0.0) ** 2).sum(axis=1))
