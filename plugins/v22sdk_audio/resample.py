"""Polyphase resampling in numpy, bit for bit ``scipy.signal.resample_poly(x, up, down)``.

The audio tokens were defined with ``scipy.signal.resample_poly`` (default Kaiser window, beta
5.0, ``padtype="constant"``). Importing ``scipy.signal`` pulls in ``scipy.stats``,
``scipy.interpolate`` and ``scipy.optimize`` — 0.8-1.3 s of CPU in every fresh process, against a
few milliseconds of resampling — so this module computes the same thing with numpy and
``scipy.special.i0`` (already loaded with ``scipy.fft``):

* the filter is scipy's ``firwin(2*half_len + 1, 1/max(up, down), window=("kaiser", 5.0))``
  times ``up``, with ``half_len = 10*max(up, down)``, the same operations in the same order;
* the filtering is ``upfirdn``: output ``y`` uses phase ``t = y*down % up`` of the flipped,
  transposed filter and the inputs ending at ``y*down // up``, summed from 0.0 in increasing input
  order — scipy's C loop sums in that order too, one multiply and one add per term (no fused
  multiply-add on x86-64's baseline), so the vectorised sum over outputs gives the same bits.
  Zero padding beyond the signal contributes exact zeros, as in scipy's ``mode="constant"``.

``tests/audio/test_resample.py`` compares the bits with scipy for the rate pairs the tokenizer
meets and for random lengths; the token fingerprints cover the end-to-end result.
"""

from __future__ import annotations

import functools
import math
import sys

import numpy as np

__all__ = ["resample_poly", "resample_poly_numpy", "resample_poly_upfirdn"]

KAISER_BETA = 5.0
_CHUNK = 4096
#: multiply-adds done here after which loading scipy.signal (0.6-1.3 s of CPU) and its C loop pay:
#: this loop costs about 3 ns per multiply-add against scipy's 0.8 ns, so a process that resamples
#: more than about 3.5 minutes of audio (at 16 kHz out, 56 taps from 44.1 kHz) switches to scipy
#: (the bits are the same either way: ski rental, never more than twice the better choice)
SCIPY_AFTER = 2e8
_work = [0.0]
_last_table: list = [None, None]


def _kaiser(m: int, beta: float) -> np.ndarray:
    """scipy.signal.windows.kaiser(m, beta, sym=True)."""
    from scipy.special import i0

    if m <= 1:
        return np.ones(m, dtype=np.float64)
    n = np.arange(0, m, dtype=np.float64)
    alpha = (m - 1) / 2.0
    return i0(beta * np.sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / i0(np.asarray(beta, dtype=np.float64))


def _firwin_lowpass(numtaps: int, cutoff: float) -> np.ndarray:
    """scipy.signal.firwin(numtaps, cutoff, window=("kaiser", 5.0)) (fs=2, pass_zero, scale)."""
    right = np.asarray([cutoff], dtype=np.float64)[0] / 1.0
    left = np.float64(0.0)
    alpha = 0.5 * (numtaps - 1)
    m = np.arange(0, numtaps, dtype=np.float64) - alpha
    h = 0
    h += right * np.sinc(right * m)
    h -= left * np.sinc(left * m)
    h *= _kaiser(numtaps, KAISER_BETA)
    c = np.cos(np.pi * m * 0.0)
    s = np.sum(h * c)
    h /= s
    return h


def _output_len(len_h: int, in_len: int, up: int, down: int) -> int:
    return (((in_len - 1) * up + len_h) - 1) // down + 1


def _design(up: int, down: int) -> tuple[np.ndarray, int]:
    """resample_poly's filter (times ``up``) and its half length."""
    max_rate = max(up, down)
    half_len = 10 * max_rate
    h = _firwin_lowpass(2 * half_len + 1, 1.0 / max_rate)
    h = np.asarray(h, dtype=np.float64)
    h *= up
    return h, half_len


def _padding(up: int, down: int, n_in: int) -> tuple[int, int, int, int]:
    """(zeros before the filter, zeros after it, first output kept, outputs kept), as resample_poly."""
    max_rate = max(up, down)
    half_len = 10 * max_rate
    n_h = 2 * half_len + 1
    n_out = n_in * up
    n_out = n_out // down + bool(n_out % down)
    n_pre_pad = down - half_len % down
    n_post_pad = 0
    n_pre_remove = (half_len + n_pre_pad) // down
    while _output_len(n_h + n_pre_pad + n_post_pad, n_in, up, down) < n_out + n_pre_remove:
        n_post_pad += 1
    return n_pre_pad, n_post_pad, n_pre_remove, n_out


@functools.lru_cache(maxsize=16)
def _padded_filter(up: int, down: int, n_pre_pad: int, n_post_pad: int) -> np.ndarray:
    """resample_poly's filter with its zero padding (read-only, cached)."""
    h, _ = _design(up, down)
    h = np.concatenate((np.zeros(n_pre_pad), h, np.zeros(n_post_pad)))
    h.flags.writeable = False
    return h


@functools.lru_cache(maxsize=16)
def _plan_phases_padded(up: int, down: int, n_pre_pad: int, n_post_pad: int) -> np.ndarray:
    h = _padded_filter(up, down, n_pre_pad, n_post_pad)
    padlen = len(h) + (-len(h) % up)  # scipy's _pad_h
    full = np.zeros(padlen)
    full[: len(h)] = h
    phases = np.ascontiguousarray(full.reshape(-1, up).T[:, ::-1])
    phases.flags.writeable = False
    return phases


def _plan(up: int, down: int, n_in: int) -> tuple[np.ndarray, int, int, int]:
    """(phases (up, per_phase) of the flipped filter, per_phase, first output kept, outputs kept)."""
    pre, post, first, n_out = _padding(up, down, n_in)
    phases = _plan_phases_padded(up, down, pre, post)
    return phases, phases.shape[1], first, n_out


def _scipy_signal_loaded() -> bool:
    return "scipy.signal" in sys.modules


def resample_poly(x: np.ndarray, up: int, down: int) -> np.ndarray:
    """(n,) float64 -> (ceil(n*up/down),) float64: ``scipy.signal.resample_poly(x, up, down)``,
    computed by :func:`resample_poly_numpy` until the process has done enough of it that loading
    ``scipy.signal`` pays (or has loaded it anyway)."""
    if _scipy_signal_loaded() or _work[0] > SCIPY_AFTER:
        return resample_poly_upfirdn(x, up, down)
    return resample_poly_numpy(x, up, down)


def resample_poly_upfirdn(x: np.ndarray, up: int, down: int) -> np.ndarray:
    """:func:`resample_poly` by scipy's C loop (``scipy.signal.upfirdn``) on this module's cached
    filter: what ``scipy.signal.resample_poly`` does, without designing the filter again on every
    call (a Kaiser window and a sinc of 8,821 taps for 44.1 kHz: about 1-5 ms per call)."""
    from scipy.signal import upfirdn

    x, up, down = _checked(x, up, down)
    if up == down == 1:
        return x.copy()
    pre, post, first, n_out = _padding(up, down, x.shape[0])
    y = upfirdn(_padded_filter(up, down, pre, post), x, up, down)
    return y[first : first + n_out]


def _checked(x: np.ndarray, up: int, down: int) -> tuple[np.ndarray, int, int]:
    """``x`` as a 1-D float64 array and the ratio ``up / down`` in lowest terms (both must be >= 1)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError("resample_poly takes a 1-D signal")
    if up < 1 or down < 1:
        raise ValueError("up and down must be >= 1")
    g = math.gcd(up, down)
    return x, up // g, down // g


def resample_poly_numpy(x: np.ndarray, up: int, down: int) -> np.ndarray:
    """:func:`resample_poly` in numpy (the same bits as scipy's C loop, tested)."""
    x, up, down = _checked(x, up, down)
    if up == down == 1:
        return x.copy()
    n_in = x.shape[0]
    phases, per_phase, first, n_out = _plan(up, down, n_in)
    _work[0] += float(n_out) * per_phase
    # output y sums the inputs x_idx - per_phase + 1 .. x_idx (x_idx = y*down // up) against phase
    # y*down % up of the filter; xp pads x with zeros so that every such index is valid
    xp = np.concatenate((np.zeros(per_phase), x, np.zeros(per_phase)))
    out = np.empty(n_out)
    if up == 1:  # one phase: strided slices, no gathers
        taps = phases[0]
        acc = np.zeros(n_out)
        for j in range(per_phase):
            acc += xp[first * down + 1 + j :: down][:n_out] * taps[j]
        return acc
    # outputs y and y + up share the phase, so chunks of a multiple of `up` outputs share one table
    # of taps: tapmat[j, i] is tap j of output a + i's phase, for every chunk start a
    chunk = up * max(1, _CHUNK // up)
    tapmat = _tap_table(phases, up, down, first, chunk)
    buf = np.empty(min(chunk, n_out))
    acc = np.empty(min(chunk, n_out))
    for a in range(0, n_out, chunk):
        b = min(n_out, a + chunk)
        m = b - a
        idx = (np.arange(first + a, first + b, dtype=np.int64) * down) // up + 1
        acc[:m] = 0.0
        for j in range(per_phase):
            np.take(xp[j:], idx, out=buf[:m], mode="clip")  # every index is valid: clip skips the check
            np.multiply(buf[:m], tapmat[j, :m], out=buf[:m])
            np.add(acc[:m], buf[:m], out=acc[:m])
        out[a:b] = acc[:m]
    return out


def _tap_table(phases: np.ndarray, up: int, down: int, first: int, chunk: int) -> np.ndarray:
    """(per_phase, chunk): tap j of the phase of output ``first + a + i`` (the same for every a
    that is a multiple of ``up``); the last table is kept."""
    key = (up, down, first, chunk, phases.shape[1])
    if _last_table[0] == key:
        return _last_table[1]
    t = (np.arange(first, first + chunk, dtype=np.int64) * down) % up
    table = np.ascontiguousarray(phases[t].T)
    table.flags.writeable = False
    _last_table[:] = [key, table]
    return table
