"""IMU window features (numpy only): spectra embedding and the named ``imu.*`` statistics.

Shapes: a signal is (T, 6) float64 — ax, ay, az in m/s², gx, gy, gz in rad/s — sampled at
``sr`` Hz. Windows are (N, L, 6). Every function works on all windows at once.
"""

from __future__ import annotations

import functools

import numpy as np

from .slots import G

#: Fixed frequency grid (Hz) the per-axis spectra are resampled onto, so the embedding does not
#: depend on the sample rate or window length.
FREQS = np.linspace(0.25, 20.0, 40)
#: Seed of the fixed projection of the 246-D spectral feature onto 256 dimensions.
PROJECTION_SEED = 20_260_817
FEATURE_DIM = 6 * FREQS.size + 6
#: Step frequencies searched by the cadence estimator (steps per second).
STEP_HZ = (0.8, 3.5)


def windows(signal: np.ndarray, length: int, hop: int) -> tuple[np.ndarray, np.ndarray]:
    """Cut (T, 6) into (N, L, 6) windows at starts 0, hop, 2·hop ... with start + L <= T.

    A signal shorter than one window gives one window of all T samples. Returns the windows
    (a read-only view) and the start indices (N,).
    """
    t = signal.shape[0]
    if t < length:
        return signal[None, :, :], np.zeros(1, dtype=np.int64)
    starts = np.arange(0, t - length + 1, hop, dtype=np.int64)
    view = np.lib.stride_tricks.sliding_window_view(signal, length, axis=0)  # (T-L+1, 6, L)
    return view[starts].transpose(0, 2, 1), starts


@functools.cache
def projection() -> np.ndarray:
    """(256, 246) matrix with orthonormal columns (QR of a seeded Gaussian, signs fixed)."""
    rng = np.random.default_rng(PROJECTION_SEED)
    q, r = np.linalg.qr(rng.standard_normal((256, FEATURE_DIM)))
    q = q * np.sign(np.diag(r))
    q.flags.writeable = False
    return q


@functools.cache
def rest_embedding() -> np.ndarray:
    """The documented embedding of an all-zero feature (no signal at all): P·1/‖P·1‖."""
    v = projection() @ np.ones(FEATURE_DIM)
    v = v / np.linalg.norm(v)
    v.flags.writeable = False
    return v


def amplitude_spectra(win: np.ndarray, sr: float) -> tuple[np.ndarray, np.ndarray]:
    """Hann-windowed amplitude spectra of the mean-removed windows: (N, F, 6) and freqs (F,)."""
    length = win.shape[1]
    hann = np.hanning(length) if length > 2 else np.ones(length)
    ac = win - win.mean(axis=1, keepdims=True)
    spec = np.abs(np.fft.rfft(ac * hann[None, :, None], axis=1)) * (2.0 / hann.sum())
    return spec, np.fft.rfftfreq(length, 1.0 / sr)


def embed(win: np.ndarray, sr: float) -> np.ndarray:
    """(N, 256) float64 unit rows: fixed projection of log spectra on FREQS plus the axis means."""
    spec, freqs = amplitude_spectra(win, sr)
    n = win.shape[0]
    if freqs.size >= 2:
        # Linear interpolation onto FREQS as one gather (same frequencies for every window).
        pos = np.interp(FREQS, freqs, np.arange(freqs.size))
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, freqs.size - 1)
        frac = (pos - lo)[None, :, None]
        grid = spec[:, lo, :] * (1 - frac) + spec[:, hi, :] * frac
        grid[:, FREQS > freqs[-1], :] = 0.0  # above Nyquist: nothing measured
    else:
        grid = np.zeros((n, FREQS.size, 6))
    # Accelerometer amplitudes in m/s², gyro in units of 0.1 rad/s, so both families weigh alike.
    grid = np.log1p(grid / np.array([1.0, 1.0, 1.0, 0.1, 0.1, 0.1]))
    means = win.mean(axis=1) / np.array([G, G, G, np.pi, np.pi, np.pi])
    feat = np.concatenate([grid.transpose(0, 2, 1).reshape(n, -1), means], axis=1)
    out = feat @ projection().T
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    zero = norms[:, 0] < 1e-12
    out = np.where(zero[:, None], rest_embedding()[None, :], out / np.where(zero, 1.0, norms[:, 0])[:, None])
    return out


def statistics(win: np.ndarray, sr: float, nominal_length: int) -> dict[str, np.ndarray]:
    """Every ``imu.*`` slot (scaled, without the prefix) for each of the N windows: name -> (N,)."""
    n, length, _ = win.shape
    acc, gyro = win[:, :, :3], win[:, :, 3:]
    mag = np.linalg.norm(acc, axis=2)  # (N, L)
    wmag = np.linalg.norm(gyro, axis=2)
    std = mag.std(axis=1)
    out: dict[str, np.ndarray] = {
        "acc.mean": np.clip(mag.mean(axis=1) / (4 * G), 0, 1),
        "acc.std": (std / G) / (1 + std / G),
        "gyro.mean": np.tanh(wmag.mean(axis=1) / np.pi),
        "coverage": np.full(n, min(1.0, length / nominal_length)),
    }
    peak = np.abs(mag - G).max(axis=1) / G
    out["acc.peak"] = peak / (1 + peak)
    out["acc.jerk"] = (np.tanh(np.abs(np.diff(mag, axis=1)).mean(axis=1) * sr / (10 * G))
                       if length > 1 else np.zeros(n))
    # Orientation: the integrated angular velocity (exact for rotation about a fixed axis).
    angle = gyro.sum(axis=1) / sr  # (N, 3) rad
    out["orient.change"] = np.clip(np.linalg.norm(angle, axis=1) / np.pi, 0, 1)
    out["orient.yaw"] = np.clip(angle[:, 2] / np.pi, -1, 1)
    mean_acc = acc.mean(axis=1)
    norm = np.linalg.norm(mean_acc, axis=1, keepdims=True)
    unit = np.where(norm > 1e-6, mean_acc / np.maximum(norm, 1e-6), 0.0)
    for i, axis in enumerate("xyz"):
        out[f"gravity.{axis}"] = unit[:, i]
    out.update(_stillness(mag, wmag, sr))
    out.update(_spectral(win, mag, std, sr))
    out["step.cadence"] = _cadence(mag, std, sr)
    return out


def _stillness(mag: np.ndarray, wmag: np.ndarray, sr: float) -> dict[str, np.ndarray]:
    n, length = mag.shape
    block = max(1, min(length, int(round(0.25 * sr))))
    k = length // block
    m = mag[:, : k * block].reshape(n, k, block)
    w = wmag[:, : k * block].reshape(n, k, block)
    still = (m.std(axis=2) < 0.1) & (w.mean(axis=2) < 0.1)
    return {"still": still.mean(axis=1)}


def _spectral(win: np.ndarray, mag: np.ndarray, std: np.ndarray, sr: float) -> dict[str, np.ndarray]:
    n, length = mag.shape
    spec, freqs = amplitude_spectra(win[:, :, :3], sr)
    power = (spec ** 2).sum(axis=2)  # (N, F): accelerometer AC power per frequency
    power[:, 0] = 0.0  # the DC bin is gravity and posture, not motion
    total = power.sum(axis=1)
    safe = np.where(total > 0, total, 1.0)
    out = {}
    for name, lo, hi in (("band.drift", 0.0, 0.5), ("band.gait", 0.5, 3.0),
                         ("band.fast", 3.0, 8.0), ("band.vibration", 8.0, np.inf)):
        sel = (freqs >= lo) & (freqs < hi)
        out[name] = np.where(total > 0, power[:, sel].sum(axis=1) / safe, 0.0)
    mspec, _ = amplitude_spectra(mag[:, :, None], sr)
    mpow = mspec[:, :, 0] ** 2
    mpow[:, 0] = 0.0
    peak = mpow.argmax(axis=1)
    moving = std >= 0.05
    out["freq.dominant"] = np.where(moving, np.clip(freqs[peak] / 20.0, 0, 1), 0.0)
    padded = np.pad(mpow, ((0, 0), (1, 1)))
    rows = np.arange(n)
    near = padded[rows, peak] + padded[rows, peak + 1] + padded[rows, peak + 2]
    mtotal = mpow.sum(axis=1)
    out["freq.periodicity"] = np.where(moving & (mtotal > 0), near / np.where(mtotal > 0, mtotal, 1.0), 0.0)
    return out


def _cadence(mag: np.ndarray, std: np.ndarray, sr: float) -> np.ndarray:
    """Steps per minute / 240 from the first strong autocorrelation peak of |a| in the step range."""
    n, length = mag.shape
    lag_lo = max(1, int(np.floor(sr / STEP_HZ[1])))
    lag_hi = min(length - 2, int(np.ceil(sr / STEP_HZ[0])))
    if lag_hi <= lag_lo + 1:
        return np.zeros(n)
    x = mag - mag.mean(axis=1, keepdims=True)
    spec = np.fft.rfft(x, n=2 * length, axis=1)
    acf = np.fft.irfft(np.abs(spec) ** 2, axis=1)[:, :length]
    acf = acf / np.where(acf[:, :1] > 0, acf[:, :1], 1.0)
    # Unbiased estimate: divide by the number of overlapping samples, so later peaks are not shrunk.
    acf = acf * (length / (length - np.arange(length)))[None, :]
    band = acf[:, lag_lo: lag_hi + 1]
    best = band.max(axis=1)
    # The first lag reaching 80 % of the best peak is the step; later ones are strides (2 steps).
    is_peak = (band[:, 1:-1] >= band[:, :-2]) & (band[:, 1:-1] >= band[:, 2:]) & \
              (band[:, 1:-1] >= 0.8 * best[:, None])
    has = is_peak.any(axis=1)
    i = is_peak.argmax(axis=1) + 1
    rows = np.arange(n)
    # Parabolic interpolation of the peak for sub-sample lag precision.
    y0, y1, y2 = band[rows, i - 1], band[rows, i], band[rows, np.minimum(i + 1, band.shape[1] - 1)]
    denom = y0 - 2 * y1 + y2
    shift = np.where(np.abs(denom) > 1e-12, 0.5 * (y0 - y2) / np.where(np.abs(denom) > 1e-12, denom, 1.0), 0.0)
    lag = (lag_lo + i + np.clip(shift, -0.5, 0.5)) / sr
    steps_per_min = 60.0 / lag
    ok = has & (best > 0.3) & (std > 0.3)
    return np.where(ok, np.clip(steps_per_min / 240.0, 0, 1), 0.0)
