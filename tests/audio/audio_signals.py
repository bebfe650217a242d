"""Signal generators and slot helpers shared by the audio tests (a uniquely named module, so that
it never collides with another test folder's conftest)."""

from __future__ import annotations

import numpy as np

RATE = 16_000


def tone(freq: float, seconds: float = 2.0, rate: int = RATE, level: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return level * np.sin(2 * np.pi * freq * t)


def harmonic(freq: float, seconds: float = 2.0, rate: int = RATE, n: int = 8, vibrato: float = 0.0) -> np.ndarray:
    """Harmonic complex (1/k amplitudes), optional vibrato depth in semitones at 5 Hz."""
    t = np.arange(int(seconds * rate)) / rate
    inst = freq * 2 ** (vibrato / 12 * np.sin(2 * np.pi * 5 * t))
    phase = 2 * np.pi * np.cumsum(inst) / rate
    x = sum(np.sin(k * phase) / k for k in range(1, n + 1) if k * freq * 1.1 < rate / 2)
    return 0.3 * x / np.max(np.abs(x))


def clicks(rate_hz: float, seconds: float = 10.0, rate: int = RATE, first: float = 0.25) -> np.ndarray:
    x = np.zeros(int(seconds * rate))
    x[(np.arange(first, seconds, 1.0 / rate_hz) * rate).astype(int)] = 0.9
    return x


def slot(batch, schema, name: str) -> np.ndarray:
    """(N,) values of one named slot."""
    return batch.attr[:, schema.index(name)].astype(np.float64)


def f0_hz(value: np.ndarray) -> np.ndarray:
    """Invert the aud.pitch.f0 scaling."""
    return 316.2 * 2.0 ** (np.asarray(value) * 2.66)
