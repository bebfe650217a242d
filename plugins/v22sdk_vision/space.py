"""Spatial attributes (15 slots ``vis.space.*``): focus, object position, spectral-residual
saliency, symmetry and the top/bottom light balance.

Spectral-residual saliency (Hou & Zhang, CVPR 2007) is computed in numpy on a 64×64 grey copy:
``S = G * |IFFT(exp(R + iφ))|²`` with ``R = log|F| − box3(log|F|)`` the spectral residual, ``φ``
the phase and ``G`` a Gaussian (σ = 2.5 px); ``S`` is then normalised to a distribution (sum 1).
No ``opencv-contrib`` is needed (upstream's version silently produced zeros without it). A flat
image has no salient point: its map is uniform.
"""

from __future__ import annotations

import numpy as np

from .scaling import clip

SALIENCY_SIDE = 64


def saliency_map(grey: np.ndarray) -> np.ndarray:
    """(H, W) uint8 grey → (64, 64) float64 spectral-residual saliency, summing to 1."""
    import cv2

    small = cv2.resize(grey, (SALIENCY_SIDE, SALIENCY_SIDE), interpolation=cv2.INTER_AREA).astype(np.float64)
    if small.max() - small.min() < 1e-9:
        return np.full(small.shape, 1.0 / small.size)
    f = np.fft.fft2(small / 255.0)
    log_amp = np.log(np.abs(f) + 1e-9)
    residual = log_amp - cv2.blur(log_amp, (3, 3), borderType=cv2.BORDER_REFLECT)
    s = np.abs(np.fft.ifft2(np.exp(residual + 1j * np.angle(f)))) ** 2
    s = cv2.GaussianBlur(s, (0, 0), 2.5)
    total = s.sum()
    if not np.isfinite(total) or total <= 0:
        return np.full(small.shape, 1.0 / small.size)
    return s / total


def saliency_features(sal: np.ndarray, mask_small: np.ndarray | None) -> dict[str, float]:
    """Peak, centroid, spread, concentration, entropy and object overlap of a saliency distribution."""
    n = sal.shape[0]
    pos = (np.arange(n) + 0.5) / n  # pixel centres as fractions of the side, in (0, 1)
    out: dict[str, float] = {}
    peak = sal >= sal.max() * (1.0 - 1e-9)  # all maxima: a uniform map peaks at its centre
    rows, cols = np.nonzero(peak)
    out["sal_peak_x"] = float(pos[cols].mean())
    out["sal_peak_y"] = float(pos[rows].mean())
    px = sal.sum(axis=0)
    py = sal.sum(axis=1)
    cx, cy = float(px @ pos), float(py @ pos)
    out["sal_centroid_x"] = cx
    out["sal_centroid_y"] = cy
    spread = np.sqrt(px @ (pos - cx) ** 2 + py @ (pos - cy) ** 2)
    out["sal_spread"] = clip(spread / np.sqrt(0.5))
    flat = np.sort(sal.ravel())[::-1]
    out["sal_concentration"] = clip(flat[: max(1, flat.size // 10)].sum())
    nz = flat[flat > 0]
    out["sal_entropy"] = clip(float(-(nz * np.log(nz)).sum() / np.log(sal.size)))
    out["sal_object_overlap"] = float(sal[mask_small > 0].sum()) if mask_small is not None else 0.0
    return out


def space_features(grey: np.ndarray, tex: np.ndarray, mask: np.ndarray, main_contour) -> dict[str, float]:
    """Named, scaled spatial values.

    ``grey``: (H, W) uint8 working-resolution grey (focus, saliency); ``tex``: its 128×128 copy
    (symmetry, light balance); ``mask``/``main_contour``: the foreground mask and the main object's
    contour at shape resolution (position fractions do not depend on the resolution).
    """
    import cv2

    h, w = grey.shape
    lap = cv2.Laplacian(grey, cv2.CV_32F, ksize=1)
    out: dict[str, float] = {"focus": clip(np.log10(1.0 + float(lap.var())) / 4.0)}
    energy = np.multiply(lap, lap, out=lap)  # lap is not needed after its variance: square in place
    whole = float(energy.mean(dtype=np.float64))
    centre = energy[h // 3 : h - h // 3, w // 3 : w - w // 3]
    if whole > 1e-12 and centre.size:
        ratio = max(float(centre.mean(dtype=np.float64)), 1e-12) / whole
        out["focus_center_ratio"] = clip(np.log2(ratio) / 4.0)
    else:
        out["focus_center_ratio"] = 0.0
    if main_contour is not None:
        m = cv2.moments(main_contour)
        mh, mw = mask.shape
        if m["m00"] > 0:
            out["centroid_x"] = clip(m["m10"] / m["m00"] / max(mw - 1, 1))
            out["centroid_y"] = clip(m["m01"] / m["m00"] / max(mh - 1, 1))
    out.setdefault("centroid_x", 0.0)
    out.setdefault("centroid_y", 0.0)
    mask_small = None
    if mask.any():
        mask_small = cv2.resize(mask, (SALIENCY_SIDE, SALIENCY_SIDE), interpolation=cv2.INTER_NEAREST)
    out.update(saliency_features(saliency_map(grey), mask_small))
    gf = tex.astype(np.float32) / np.float32(255.0)
    out["symmetry_lr"] = clip(1.0 - 2.0 * float(np.abs(gf - gf[:, ::-1]).mean()))
    out["symmetry_tb"] = clip(1.0 - 2.0 * float(np.abs(gf - gf[::-1, :]).mean()))
    half = gf.shape[0] // 2
    out["luma_top_bottom"] = clip(float(gf[:half].mean() - gf[-half:].mean()))
    return out
