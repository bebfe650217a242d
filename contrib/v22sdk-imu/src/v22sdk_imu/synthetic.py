"""Synthetic IMU recordings with known answers (device z axis up, so gravity is +z at rest).

Each function returns ``(signal (T, 6) float64, sample_rate)``: accelerometer in m/s² including
gravity (what a real accelerometer reports), gyroscope in rad/s, with small seeded sensor noise.
"""

from __future__ import annotations

import numpy as np

from .slots import G


def _noise(t: int, seed: int, acc_sd: float = 0.02, gyro_sd: float = 0.002) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((t, 6)) * np.array([acc_sd] * 3 + [gyro_sd] * 3)


def still(seconds: float = 10.0, sample_rate: float = 100.0, *, seed: int = 0) -> tuple[np.ndarray, float]:
    """A device lying flat: gravity on +z, no rotation."""
    t = max(1, int(round(seconds * sample_rate)))
    x = np.zeros((t, 6))
    x[:, 2] = G
    return x + _noise(t, seed), sample_rate


def walking(seconds: float = 10.0, sample_rate: float = 100.0, *, cadence_spm: float = 110.0,
            amplitude: float = 2.5, seed: int = 0) -> tuple[np.ndarray, float]:
    """Walking at ``cadence_spm`` steps/min: a vertical bounce at the step rate, a sway at half of it."""
    t = max(1, int(round(seconds * sample_rate)))
    time = np.arange(t) / sample_rate
    f_step = cadence_spm / 60.0
    x = np.zeros((t, 6))
    x[:, 2] = G + amplitude * np.sin(2 * np.pi * f_step * time)
    x[:, 0] = 0.4 * amplitude * np.sin(np.pi * f_step * time)  # side sway, once per stride
    x[:, 3] = 0.3 * np.sin(np.pi * f_step * time)  # roll follows the sway
    return x + _noise(t, seed), sample_rate


def turning(seconds: float = 10.0, sample_rate: float = 100.0, *, degrees_per_second: float = 45.0,
            seed: int = 0) -> tuple[np.ndarray, float]:
    """A device flat on a turntable rotating counter-clockwise about z at a constant rate."""
    t = max(1, int(round(seconds * sample_rate)))
    x = np.zeros((t, 6))
    x[:, 2] = G
    x[:, 5] = np.radians(degrees_per_second)
    return x + _noise(t, seed), sample_rate


SIGNALS = {"still": still, "walking": walking, "turning": turning}
