"""Onsets and tempo: a log-spectral-flux onset envelope at 50 frames/s, peak picking, and tempo by
autocorrelation of the envelope over the whole clip.

* Envelope: power spectrum in dB (floor 1e-10), clamped to 60 dB below the clip's loudest bin
  (level invariant, like librosa's ``top_db``); per frame the mean over bins of the positive dB
  change from the previous frame (the first frame's change is 0).
* Onsets: frames that are the maximum of the envelope within +-40 ms (and the first of equal
  values), exceed the mean of the surrounding +-100 ms by ``DELTA`` times the clip's envelope
  maximum, and exceed ``DELTA`` times that maximum.
* Tempo: autocorrelation of the mean-removed envelope over the clip for lags 0.25 s .. 1.5 s
  (240 .. 40 BPM), weighted by a log-normal prior centred on 120 BPM (one octave std, as librosa),
  then halved while the autocorrelation near half the lag is >= 80 % as strong (so a click train
  at 3 Hz reads 180, not 90 BPM), the lag refined by a parabola. Confidence = autocorrelation at the lag / at lag 0.
  Needs at least ``MIN_TEMPO_SECONDS`` of audio and 2 onsets; otherwise no tempo.
"""

from __future__ import annotations

import numpy as np

from .frontend import HOP, RATE

FPS = RATE / HOP  # 50 envelope frames per second
TOP_DB = 60.0
DELTA = 0.1
PEAK_HALF = 2  # +-40 ms
MEAN_HALF = 5  # +-100 ms
BPM_MIN, BPM_MAX = 40.0, 240.0
MIN_TEMPO_SECONDS = 2.0


def onset_envelope(logp: np.ndarray) -> np.ndarray:
    """(F, 513) natural-log power spectra (floored at 1e-10) -> (F,) onset strength (mean positive dB change per bin)."""
    db = (10.0 / np.log(10.0)) * logp
    db = np.maximum(db, db.max() - TOP_DB)
    env = np.zeros(logp.shape[0])
    if logp.shape[0] > 1:
        env[1:] = np.maximum(db[1:] - db[:-1], 0.0).mean(axis=1)
    return env


def pick_onsets(env: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """(F,) envelope, (F,) bool valid frames -> (F,) bool onset frames."""
    from scipy.ndimage import maximum_filter1d, uniform_filter1d

    top = env.max() if env.size else 0.0
    if top <= 0:
        return np.zeros(env.shape, dtype=bool)
    local_max = maximum_filter1d(env, 2 * PEAK_HALF + 1, mode="constant") == env
    local_mean = uniform_filter1d(env, 2 * MEAN_HALF + 1, mode="constant")
    peak = local_max & (env >= local_mean + DELTA * top) & (env > DELTA * top) & valid
    # plateaus: keep only the first frame of a run of equal maxima
    peak[1:] &= ~(peak[:-1] & (env[1:] == env[:-1]))
    return peak


def tempo(env: np.ndarray, n_valid: int, n_onsets: int) -> tuple[float, float]:
    """(BPM, confidence in [0, 1]) over the clip; (0, 0) when the clip is too short or has < 2 onsets."""
    if n_valid < MIN_TEMPO_SECONDS * FPS or n_onsets < 2:
        return 0.0, 0.0
    e = env[:n_valid] - env[:n_valid].mean()
    n = 1 << int(np.ceil(np.log2(2 * e.size)))
    from scipy import fft

    spec = fft.rfft(e, n)
    acf = fft.irfft(spec.real**2 + spec.imag**2, n)[: e.size]
    if acf[0] <= 0:
        return 0.0, 0.0
    lo = int(np.floor(60.0 * FPS / BPM_MAX))
    hi = min(int(np.ceil(60.0 * FPS / BPM_MIN)), e.size - 2)
    if hi <= lo + 1:
        return 0.0, 0.0
    lags = np.arange(lo, hi + 1)
    bpm = 60.0 * FPS / lags
    prior = np.exp(-0.5 * np.log2(bpm / 120.0) ** 2)
    score = np.maximum(acf[lo : hi + 1], 0.0) * prior
    best = int(np.argmax(score))
    i = int(lags[best])
    # octave check: a periodic onset train also correlates at 2, 3 ... periods; prefer the period
    # itself when the autocorrelation near half the lag is nearly as strong (>= 80 %)
    while i // 2 >= lo:
        h = i // 2
        j = h - 1 + int(np.argmax(acf[h - 1 : h + 2]))
        if acf[j] >= 0.8 * acf[i]:
            i = j
        else:
            break
    lag = float(i)
    left, c, r = acf[i - 1], acf[i], acf[i + 1]
    curv = left - 2 * c + r
    if curv < 0:
        lag += float(np.clip(0.5 * (left - r) / curv, -0.5, 0.5))
    conf = float(np.clip(acf[i] / acf[0], 0.0, 1.0))
    return 60.0 * FPS / lag, conf
