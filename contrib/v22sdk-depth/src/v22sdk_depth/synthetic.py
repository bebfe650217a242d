"""Synthetic depth maps with known geometry (pinhole camera, principal point at the centre).

Used by ``sample_inputs()`` and by the tests as scenes with known answers.
"""

from __future__ import annotations

import math

import numpy as np


def rays(h: int, w: int, fov_deg: float = 60.0) -> tuple[np.ndarray, np.ndarray]:
    """Ray slopes (x = u/f, y = v/f) of every pixel centre, each (H, W)."""
    f = (w / 2.0) / math.tan(math.radians(fov_deg) / 2.0)
    x = (np.arange(w) + 0.5 - w / 2.0) / f
    y = (np.arange(h) + 0.5 - h / 2.0) / f
    return np.broadcast_to(x[None, :], (h, w)), np.broadcast_to(y[:, None], (h, w))


def plane(h: int, w: int, normal=(0.0, 0.0, 1.0), distance: float = 2.0, fov_deg: float = 60.0) -> np.ndarray:
    """Depth (metres) of the plane n·P = distance, n normalised with n_z > 0 (x right, y down, Z forward)."""
    n = np.asarray(normal, dtype=np.float64)
    n = n / np.linalg.norm(n)
    x, y = rays(h, w, fov_deg)
    denom = n[0] * x + n[1] * y + n[2]
    return np.where(denom > 1e-6, distance / np.maximum(denom, 1e-6), 0.0)


def sphere(h: int, w: int, centre_m: float = 3.0, radius_m: float = 1.0, background_m: float = 0.0,
           fov_deg: float = 60.0) -> np.ndarray:
    """Depth of a sphere on the optical axis (nearest point at centre_m - radius_m); elsewhere background."""
    x, y = rays(h, w, fov_deg)
    # Ray P = t·(x, y, 1); |P - C|² = R² with C = (0, 0, c): t²(x²+y²+1) - 2tc + c² - R² = 0.
    a = x * x + y * y + 1.0
    disc = centre_m ** 2 - a * (centre_m ** 2 - radius_m ** 2)
    t = (centre_m - np.sqrt(np.maximum(disc, 0.0))) / a
    return np.where(disc > 0, t, background_m)


def step(h: int, w: int, near_m: float = 1.0, far_m: float = 2.0) -> np.ndarray:
    """Left half at near_m, right half at far_m (fronto-parallel planes with a step between)."""
    z = np.full((h, w), far_m, dtype=np.float64)
    z[:, : w // 2] = near_m
    return z
