"""Per-segment reductions of (N, 25) frame values under a (N, 25) bool mask (0 where the mask is empty)."""

from __future__ import annotations

import numpy as np


def count(m: np.ndarray) -> np.ndarray:
    return m.sum(axis=1)


def mean(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    c = m.sum(axis=1)
    return np.where(c > 0, np.where(m, v, 0.0).sum(axis=1) / np.maximum(c, 1), 0.0)


def std(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    mu = mean(v, m)
    return np.sqrt(mean((v - mu[:, None]) ** 2, m))


def vmin(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    out = np.where(m, v, np.inf).min(axis=1)
    return np.where(np.isfinite(out), out, 0.0)


def vmax(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    out = np.where(m, v, -np.inf).max(axis=1)
    return np.where(np.isfinite(out), out, 0.0)


def median(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Median of the masked values per row (mean of the two middle values for even counts)."""
    s = np.sort(np.where(m, v, np.inf), axis=1)
    c = m.sum(axis=1)
    lo = np.maximum((c - 1) // 2, 0)
    hi = np.maximum(c // 2, 0)
    rows = np.arange(v.shape[0])
    out = 0.5 * (s[rows, lo] + s[rows, np.minimum(hi, v.shape[1] - 1)])
    return np.where(c > 0, out, 0.0)


def slope(v: np.ndarray, m: np.ndarray, dt: float) -> np.ndarray:
    """Least-squares slope of v against time (frame index * dt) per row; 0 with < 2 points."""
    t = np.broadcast_to(np.arange(v.shape[1]) * dt, v.shape)
    tm, vm = mean(t, m), mean(v, m)
    cov = mean((t - tm[:, None]) * (v - vm[:, None]), m)
    var = mean((t - tm[:, None]) ** 2, m)
    return np.where((m.sum(axis=1) >= 2) & (var > 0), cov / np.where(var > 0, var, 1.0), 0.0)


def percentiles(v: np.ndarray, qs: tuple[float, ...]) -> np.ndarray:
    """``np.percentile(v, qs, axis=1)`` (its default, linear method) of a finite (N, k) float64
    array, bit for bit: the same order statistics and the same interpolation arithmetic as
    NumPy's ``_lerp``, without its per-call set-up (six calls a clip). A non-finite
    value leaves the work to NumPy."""
    if not np.isfinite(v).all():
        return np.percentile(v, qs, axis=1)
    k = v.shape[1]
    s = np.sort(v, axis=1)
    out = np.empty((len(qs), v.shape[0]))
    for i, q in enumerate(qs):
        vi = (k - 1) * (np.float64(q) / 100.0)  # NumPy: true_divide(q, 100), then (n - 1) * q
        if vi >= k - 1:
            out[i] = s[:, k - 1]
            continue
        lo = max(int(np.floor(vi)), 0)
        g = vi - lo
        a, b = s[:, lo], s[:, lo + 1]
        d = b - a
        # _lerp: a + d * g, replaced by b - d * (1 - g) where g >= 0.5
        out[i] = b - d * (1.0 - g) if g >= 0.5 else a + d * g
    return out
