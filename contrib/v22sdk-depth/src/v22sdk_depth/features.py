"""Depth-map features: the 16×16 grid embedding and the named statistics (numpy only).

Conventions: depth ``Z`` in metres, (H, W) float64, ``Z <= 0`` marks a hole (no measurement).
Pixel centres are at ``x + 0.5``; the principal point is the image centre and the focal length
comes from the horizontal field of view (``fov_deg``), as no intrinsics travel with a depth map.
"""

from __future__ import annotations

import functools
import math

import numpy as np

GRID = 16
#: Seed of the fixed orthogonal 256×256 projection of the depth grid (documented, never changes).
PROJECTION_SEED = 20_260_816
#: Largest number of pixels used by the least-squares fits (larger maps are strided, deterministically).
FIT_PIXELS = 65_536
#: Depths (metres) outside [MIN_DEPTH_M, MAX_DEPTH_M] are holes: no sensor measures them, and
#: keeping them would overflow 1/Z or Z².
MIN_DEPTH_M = 1e-6
MAX_DEPTH_M = 1e9
#: Relative depth jump between neighbours that counts as an edge.
EDGE_JUMP = 0.05


def disparity_to_depth(disparity, focal_px: float, baseline_m: float, doffs_px: float = 0.0) -> np.ndarray:
    """Depth in metres from a disparity map in pixels: ``Z = focal_px · baseline_m / (d + doffs_px)``.

    ``doffs_px`` is the difference of the two principal points (Middlebury's ``doffs``). Pixels
    with a non-finite or non-positive ``d + doffs_px`` become holes (0). Returns (H, W) float64.
    """
    d = np.asarray(disparity, dtype=np.float64) + doffs_px
    ok = np.isfinite(d) & (d > 0)
    out = np.zeros(d.shape, dtype=np.float64)
    out[ok] = focal_px * baseline_m / d[ok]
    return out


@functools.cache
def projection() -> np.ndarray:
    """The fixed orthogonal (256, 256) projection (QR of a seeded Gaussian, signs fixed)."""
    rng = np.random.default_rng(PROJECTION_SEED)
    q, r = np.linalg.qr(rng.standard_normal((GRID * GRID, GRID * GRID)))
    q = q * np.sign(np.diag(r))  # QR's signs are not unique; fixing them makes Q unique
    q.flags.writeable = False
    return q


@functools.cache
def flat_embedding() -> np.ndarray:
    """The documented embedding of a map with no depth variation (or no valid pixel): P·1/‖P·1‖."""
    v = projection() @ np.ones(GRID * GRID)
    v = v / np.linalg.norm(v)
    v.flags.writeable = False
    return v


def depth_grid(log_z: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Area-average of log depth over valid pixels into a (16, 16) grid.

    Cells with no valid pixel (holes, or maps smaller than 16 px) take the median of the filled
    cells, so holes do not look like a depth edge. All holes → zeros.
    """
    h, w = log_z.shape
    rows = (np.arange(h) * GRID) // h
    cols = (np.arange(w) * GRID) // w
    cell = (rows[:, None] * GRID + cols[None, :])[valid]
    total = np.bincount(cell, weights=log_z[valid], minlength=GRID * GRID)
    count = np.bincount(cell, minlength=GRID * GRID)
    grid = np.zeros(GRID * GRID)
    filled = count > 0
    if filled.any():
        grid[filled] = total[filled] / count[filled]
        grid[~filled] = np.median(grid[filled])
    return grid.reshape(GRID, GRID)


def embed(grid: np.ndarray) -> np.ndarray:
    """(256,) float64 unit vector: the fixed projection of the zero-mean, unit-std grid."""
    g = grid.ravel() - grid.mean()
    std = g.std()
    if std < 1e-9:  # a flat (fronto-parallel) or empty map: no shape to embed
        return flat_embedding().copy()
    v = projection() @ (g / std)
    return v / np.linalg.norm(v)


def _fit_pixels(valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the valid pixels used by the fits (strided above FIT_PIXELS)."""
    h, w = valid.shape
    stride = max(1, math.ceil(math.sqrt(valid.sum() / FIT_PIXELS)))
    sub = np.zeros_like(valid)
    sub[::stride, ::stride] = valid[::stride, ::stride]
    return np.nonzero(sub)


def surface_fits(z: np.ndarray, valid: np.ndarray, fov_deg: float) -> dict[str, float]:
    """Plane and quadratic fits of inverse depth ``w = 1/Z`` over the valid pixels.

    A 3-D plane ``n·P = d`` seen by a pinhole camera has inverse depth affine in the ray slopes
    ``x = u/f, y = v/f``: ``w = (n_x x + n_y y + n_z) / d``. So an affine fit of ``w`` recovers the
    normal without any other intrinsic than ``f``: ``n ∝ (a, b, c)`` for ``w = a x + b y + c``.
    """
    h, w_px = z.shape
    out = {"planarity": 0.0, "slant": 0.0, "normal_x": 0.0, "normal_y": 0.0, "convexity": 0.0}
    r, c = _fit_pixels(valid)
    if r.size < 6:
        return out
    f = (w_px / 2.0) / math.tan(math.radians(fov_deg) / 2.0)
    x = (c + 0.5 - w_px / 2.0) / f
    y = (r + 0.5 - h / 2.0) / f
    inv = 1.0 / z[r, c]
    ones = np.ones_like(x)
    design = np.stack([x, y, ones], axis=1)
    if np.linalg.matrix_rank(design) < 3:  # a single row or column of pixels: no plane to fit
        return out
    coef, *_ = np.linalg.lstsq(design, inv, rcond=None)
    resid = inv - design @ coef
    rel = float(np.sqrt(np.mean(resid ** 2)) / np.mean(inv))
    normal = coef / np.linalg.norm(coef)
    if normal[2] < 0:  # orient away from the camera
        normal = -normal
    out["planarity"] = math.exp(-rel / 0.02)
    out["slant"] = math.acos(min(1.0, float(normal[2]))) / (math.pi / 2)
    out["normal_x"] = float(normal[0])
    out["normal_y"] = float(normal[1])
    quad = np.stack([ones, x, y, x * x, x * y, y * y], axis=1)
    if np.linalg.matrix_rank(quad) == 6:
        q, *_ = np.linalg.lstsq(quad, inv, rcond=None)
        if q[0] > 0:
            out["convexity"] = math.tanh(-(q[3] + q[5]) / q[0] / 4.0)
    return out


def _scale_log(depth_m: float) -> float:
    return float(np.clip(math.log10(depth_m) / 2.0, -1.0, 1.0))


def statistics(z: np.ndarray, *, near_m: float, far_m: float, fov_deg: float) -> dict[str, float]:
    """Every named slot value (already scaled to [-1, 1]) of one depth map ``z`` (H, W) metres."""
    valid = z > 0
    n_valid = int(valid.sum())
    out = {"holes": 1.0 - n_valid / z.size}
    if n_valid == 0:
        return out
    vz = z[valid]
    log_z = np.log(np.where(valid, z, 1.0))
    p05, median, p95 = np.percentile(vz, [5, 50, 95])
    mean = float(vz.mean())
    spread = float(vz.std() / mean)
    out.update({
        "valid": 1.0,
        "mean": _scale_log(mean), "median": _scale_log(median),
        "p05": _scale_log(p05), "p95": _scale_log(p95),
        "spread": spread / (1.0 + spread),
        "near_frac": float((vz < near_m).mean()), "far_frac": float((vz > far_m).mean()),
    })
    # Edges: neighbour pairs (right and down) that are both valid and differ by > EDGE_JUMP.
    pairs = edges = 0
    for a, b in ((np.s_[:, :-1], np.s_[:, 1:]), (np.s_[:-1, :], np.s_[1:, :])):
        both = valid[a] & valid[b]
        pairs += int(both.sum())
        edges += int((both & (np.abs(log_z[a] - log_z[b]) > math.log1p(EDGE_JUMP))).sum())
    out["edge_density"] = math.sqrt(edges / pairs) if pairs else 0.0
    h, w = z.shape
    for key, first, second in (("lr_balance", np.s_[:, : w // 2], np.s_[:, (w + 1) // 2:]),
                               ("tb_balance", np.s_[: h // 2, :], np.s_[(h + 1) // 2:, :])):
        m1, m2 = valid[first], valid[second]
        if m1.any() and m2.any():
            out[key] = math.tanh(float(log_z[first][m1].mean() - log_z[second][m2].mean()))
    out.update(surface_fits(z, valid, fov_deg))
    return out
