"""Colour attributes (45 slots ``vis.color.*``): HSV, Lab, opponent colourfulness, hue histogram,
luma statistics, warm/cool balance and four dominant colours by seeded k-means.

Input: ``(H, W, 3)`` float32 RGB in [0, 1]. Statistics are computed on an area-downscaled copy
with longer side ≤ ``COLOUR_SIDE`` (means, fractions and spreads barely move; the cost
drops 16× on a 512-pixel photo); k-means runs on a ≤ ``KMEANS_SIDE`` copy. Every returned value is already
scaled into [-1, 1] as documented in :mod:`.slots`.
"""

from __future__ import annotations

import numpy as np

from .scaling import clip

COLOUR_SIDE = 128
KMEANS_SIDE = 32
KMEANS_K = 4
KMEANS_SEED = 22
#: A pixel counts as coloured (has a meaningful hue) above this HSV saturation (≈ 30/255).
SAT_MIN = 0.12
HUE_BINS = 18


def _downscale(rgb: np.ndarray, side: int) -> np.ndarray:
    import cv2

    h, w = rgb.shape[:2]
    if max(h, w) <= side:
        return rgb
    s = side / max(h, w)
    return cv2.resize(rgb, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)



def _entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def colour_features(rgb: np.ndarray) -> dict[str, float]:
    """Named, scaled colour values of one image (keys without the ``vis.color.`` prefix)."""
    import cv2

    small = _downscale(rgb, COLOUR_SIDE)
    px = small.reshape(-1, 3).astype(np.float64)
    hsv = cv2.cvtColor(small, cv2.COLOR_RGB2HSV).reshape(-1, 3).astype(np.float64)  # H in degrees
    lab = cv2.cvtColor(small, cv2.COLOR_RGB2Lab).reshape(-1, 3).astype(np.float64)  # L 0..100
    hue, sat, val = hsv[:, 0], hsv[:, 1], hsv[:, 2]
    out: dict[str, float] = {}

    # Hue is an angle: a saturation-weighted circular mean (red is 0, never the mean of 5° and 355°),
    # over the coloured pixels only, like the hue histogram below: a grey pixel has no hue, and the
    # faint tint that lossy storage gives grey (WebP's chroma rounding) must not make one up.
    rad = np.deg2rad(hue)
    weight = np.where(sat > SAT_MIN, sat, 0.0)
    wsum = weight.sum()
    if wsum > 1e-9:
        c, s = (weight * np.cos(rad)).sum() / wsum, (weight * np.sin(rad)).sum() / wsum
        out["hue_mean"] = clip(np.arctan2(s, c) / np.pi) if np.hypot(c, s) > 1e-9 else 0.0
        out["hue_concentration"] = clip(np.hypot(c, s))
    else:
        out["hue_mean"] = 0.0
        out["hue_concentration"] = 0.0
    out["sat_mean"] = float(sat.mean())
    out["sat_std"] = clip(2.0 * sat.std())
    out["val_mean"] = float(val.mean())
    out["val_std"] = clip(2.0 * val.std())
    out["lab_l_mean"] = clip(lab[:, 0].mean() / 100.0)
    out["lab_a_mean"] = clip(lab[:, 1].mean() / 128.0)
    out["lab_b_mean"] = clip(lab[:, 2].mean() / 128.0)
    out["lab_l_std"] = clip(lab[:, 0].std() / 50.0)
    out["lab_a_std"] = clip(lab[:, 1].std() / 64.0)
    out["lab_b_std"] = clip(lab[:, 2].std() / 64.0)

    # Hasler & Süsstrunk (2003) colourfulness on the 0..255 scale: M = σ_rgyb + 0.3 μ_rgyb.
    r, g, b = px[:, 0] * 255.0, px[:, 1] * 255.0, px[:, 2] * 255.0
    rg, yb = r - g, 0.5 * (r + g) - b
    sigma = float(np.hypot(rg.std(), yb.std()))
    mu = float(np.hypot(rg.mean(), yb.mean()))
    out["colorfulness"] = float(np.tanh((sigma + 0.3 * mu) / 100.0))
    out["opponent_std"] = float(np.tanh(sigma / 100.0))
    out["opponent_mean"] = float(np.tanh(mu / 100.0))

    coloured = sat > SAT_MIN
    n_col = int(coloured.sum())
    if n_col:
        bins = np.minimum((hue[coloured] * (HUE_BINS / 360.0)).astype(np.int64), HUE_BINS - 1)
        hist = np.bincount(bins, minlength=HUE_BINS) / n_col
        out["hue_entropy"] = _entropy(hist) / np.log2(HUE_BINS)
        out["hue_peak_share"] = float(hist.max())
    else:
        out["hue_entropy"] = 0.0
        out["hue_peak_share"] = 0.0

    y = 0.299 * px[:, 0] + 0.587 * px[:, 1] + 0.114 * px[:, 2]
    out["luma_mean"] = float(y.mean())
    out["luma_std"] = clip(2.0 * y.std())
    lo, med, hi = np.percentile(y, [1.0, 50.0, 99.0])
    out["luma_range"] = clip(hi - lo)
    out["luma_median"] = float(med)
    out["bright_fraction"] = float((y > 250.0 / 255.0).mean())
    out["dark_fraction"] = float((y < 5.0 / 255.0).mean())
    y_img = y.reshape(small.shape[:2]).astype(np.float32)
    coarse = cv2.resize(y_img, (4, 4), interpolation=cv2.INTER_AREA)
    out["coarse_contrast"] = clip(2.0 * float(coarse.std()))

    mean_rgb = px.mean(axis=0)
    out["red_blue_balance"] = clip(mean_rgb[0] - mean_rgb[2])
    out["green_balance"] = clip(mean_rgb[1] - 0.5 * (mean_rgb[0] + mean_rgb[2]))
    out["saturated_fraction"] = n_col / len(hue)
    warm = coloured & ((hue < 60.0) | (hue > 300.0))
    cool = coloured & (hue >= 120.0) & (hue <= 300.0)
    out["warm_fraction"] = float(warm.mean())
    out["cool_fraction"] = float(cool.mean())
    out.update(dominant_colours(rgb))
    return out


def dominant_colours(rgb: np.ndarray) -> dict[str, float]:
    """Four dominant colours by k-means in Lab (seeded, k-means++), largest cluster first.

    Each cluster gives ``dom{k}_l`` (L/100), ``dom{k}_a`` (a/128), ``dom{k}_b`` (b/128) and
    ``dom{k}_share`` (its pixel fraction); an empty cluster is all zeros.
    """
    import cv2

    small = _downscale(rgb, KMEANS_SIDE)
    lab = cv2.cvtColor(small, cv2.COLOR_RGB2Lab).reshape(-1, 3).astype(np.float32)
    n = lab.shape[0]
    if n < KMEANS_K:  # cv2.kmeans needs at least K samples; repeating pixels keeps the shares
        lab = np.resize(lab, (KMEANS_K * n, 3))
    cv2.setRNGSeed(KMEANS_SEED)  # k-means++ draws from OpenCV's RNG: seed it for bit-reproducibility
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    # OpenCV takes None for bestLabels (it allocates them); its type stubs do not say so
    _, labels, centres = cv2.kmeans(lab, KMEANS_K, None, criteria, 1, cv2.KMEANS_PP_CENTERS)  # type: ignore[call-overload]
    counts = np.bincount(labels.ravel(), minlength=KMEANS_K).astype(np.float64)
    shares = counts / counts.sum()
    # largest first; equal shares are ordered by lightness, then a, then b (deterministic)
    order = np.lexsort((centres[:, 2], centres[:, 1], centres[:, 0], -shares))
    out: dict[str, float] = {}
    for rank, k in enumerate(order, start=1):
        empty = counts[k] == 0
        out[f"dom{rank}_l"] = 0.0 if empty else clip(centres[k, 0] / 100.0)
        out[f"dom{rank}_a"] = 0.0 if empty else clip(centres[k, 1] / 128.0)
        out[f"dom{rank}_b"] = 0.0 if empty else clip(centres[k, 2] / 128.0)
        out[f"dom{rank}_share"] = float(shares[k])
    return out
