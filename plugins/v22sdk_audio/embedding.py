"""The 256-D embedding: a segment's 512-bin magnitude spectrum through a fixed orthogonal projection.

* spectrum: mean over the segment's frames of |rfft(frame * hann)|, bins 0..511 (0 .. 7 984 Hz;
  the Nyquist bin 512 is dropped so that 512 bins remain, as upstream specified);
* compression: ``log1p(max(m, f) / f)`` with the floor ``f = 1e-3 * max over the clip of m``
  (60 dB below the clip's strongest bin): the embedding ignores the clip's level (loudness is in
  the attributes) and shows 60 dB of range; every bin under the floor reads as the floor, so a
  segment with nothing above it embeds as a flat spectrum. Storage noise lies under it: 8-bit
  PCM's quantisation noise sits 65-75 dB below a signal near full scale, spread over all 512
  bins. (Until plugin version 0.2 the floor was soft and per segment, ``log1p(m / (1e-3 *
  max(m)))``: every bin under it still counted a little, which turned an 8-bit copy of a tone
  up to 30 degrees away from its 16-bit original; now they agree to cos > 0.999);
* projection: ``P`` (512, 256) with orthonormal columns, the Q factor (signs fixed by diag R > 0)
  of a standard-normal matrix from ``np.random.default_rng(PROJECTION_SEED)``;
* unit L2 norm in float64, then float32. A segment whose RMS is below -100 dBFS (or all zero) gets
  the fixed unit vector ``silence_vector()`` (standard normal from ``SILENCE_SEED``, normalised).
"""

from __future__ import annotations

import functools

import numpy as np

PROJECTION_SEED = 22_512
SILENCE_SEED = 22_000
BINS = 512
SILENCE_RMS = 1e-5


@functools.cache
def projection() -> np.ndarray:
    """(512, 256) float64 matrix with orthonormal columns (read-only, cached)."""
    g = np.random.default_rng(PROJECTION_SEED).standard_normal((BINS, 256))
    q, r = np.linalg.qr(g)
    q = q * np.sign(np.diag(r))[None, :]
    q.flags.writeable = False
    return q


@functools.cache
def silence_vector() -> np.ndarray:
    """(256,) float64 unit vector used for silent segments (read-only, cached)."""
    v = np.random.default_rng(SILENCE_SEED).standard_normal(256)
    v /= np.linalg.norm(v)
    v.flags.writeable = False
    return v


def embed(mean_mag: np.ndarray, seg_rms: np.ndarray) -> np.ndarray:
    """(N, 512) mean magnitude spectra of one clip's segments, (N,) segment RMS -> (N, 256) float32 unit vectors."""
    peak = mean_mag.max(axis=1, keepdims=True)
    top = float(mean_mag.max()) if mean_mag.size else 0.0
    silent = (seg_rms < SILENCE_RMS) | (peak[:, 0] <= 0)
    floor = 1e-3 * top if top > 0 else 1.0
    v = np.log1p(np.maximum(mean_mag, floor) / floor)
    e = v @ projection()
    norm = np.linalg.norm(e, axis=1, keepdims=True)
    silent |= norm[:, 0] <= 0
    e = np.where(silent[:, None], silence_vector()[None, :], e / np.where(norm > 0, norm, 1.0))
    return e.astype(np.float32)
