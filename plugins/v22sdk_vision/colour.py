"""Colour attributes (45 slots ``vis.color.*``): HSV, Lab, opponent colourfulness, hue histogram,
luma statistics, warm/cool balance and four dominant colours by seeded k-means.

Input: ``(H, W, 3)`` float32 RGB in [0, 1]. Statistics are computed on an area-downscaled copy
with longer side ≤ ``COLOUR_SIDE`` (means, fractions and spreads barely move; the cost
drops 16× on a 512-pixel photo); k-means runs on a ≤ ``KMEANS_SIDE`` copy. Every returned value is already
scaled into [-1, 1] as documented in :mod:`.slots`.
"""

from __future__ import annotations

import functools

import numpy as np

from .histogram import count_codes
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


#: The luma percentiles, as fractions: ``np.percentile``'s own ``q / 100``.
_LUMA_Q = np.true_divide(np.array([1.0, 50.0, 99.0]), 100)


@functools.lru_cache(maxsize=64)
def _percentile_plan(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``np.percentile(.., method="linear")``'s shape-only steps for n values: the order statistics
    to select (kth), the lower and upper neighbours of each virtual index and the weights."""
    virtual = (n - 1) * _LUMA_Q
    prev = np.floor(virtual)
    nxt = prev + 1
    above = virtual >= n - 1
    prev[above] = -1
    nxt[above] = -1
    prev, nxt = prev.astype(np.intp), nxt.astype(np.intp)
    kth = np.unique(np.concatenate(([0, -1], prev, nxt)))
    gamma = virtual - prev
    for arr in (prev, nxt, kth, gamma):
        arr.flags.writeable = False
    return kth, prev, nxt, gamma


def _luma_percentiles(y: np.ndarray) -> np.ndarray:
    """The 1st, 50th and 99th percentiles of a finite float64 vector, bit-identical to
    ``np.percentile(y, [1.0, 50.0, 99.0])`` (the same order statistics, and NumPy's linear
    interpolation a + (b − a)·t, or b − (b − a)·(1 − t) where t ≥ 0.5), without its copy and
    checks. Partitions ``y`` in place."""
    kth, prev, nxt, gamma = _percentile_plan(y.size)
    y.partition(kth)
    lo, hi = y[prev], y[nxt]
    diff = hi - lo
    out = lo + diff * gamma
    np.subtract(hi, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def _column_means(planar: np.ndarray) -> np.ndarray:
    """Row means of a (3, n) float64 array of float32 values: bit-identical to ``px.mean(axis=0)``
    of its (n, 3) transpose, which NumPy sums row after row (an inner loop of 3: slow).

    When every addition of the sum is exact (each nonzero |value| is a float32 at least 2**(e-1),
    so a multiple of 2**(e-24), and n · max|value| < 2**(29 + e): every partial sum fits 53 bits),
    any order gives the same sum, so the fast pairwise row sums are used; otherwise the original
    row-after-row reduction is.
    """
    n = planar.shape[1]
    if n:
        top = float(planar.max(initial=0.0))
        lo = float(np.min(planar, initial=np.inf, where=planar > 0.0))
        if planar.min(initial=0.0) >= 0.0 and (lo == np.inf or n * top < 2.0 ** (29 + np.frexp(lo)[1])):
            sums = planar.sum(axis=1)
            sums /= n
            return sums
    return np.ascontiguousarray(planar.T).mean(axis=0)  # the (n, 3) layout: row after row


def colour_features(rgb: np.ndarray) -> dict[str, float]:
    """Named, scaled colour values of one image (keys without the ``vis.color.`` prefix)."""
    import cv2

    small = _downscale(rgb, COLOUR_SIDE)
    # Channels as contiguous float64 rows: the same values and sums as strided columns of (n, 3)
    # (NumPy's pairwise sum is stride-independent), without the strided passes.
    flat = small.reshape(-1, 3)
    px = np.ascontiguousarray(flat.T, dtype=np.float64)
    hsv = np.ascontiguousarray(cv2.cvtColor(small, cv2.COLOR_RGB2HSV).reshape(-1, 3).T, dtype=np.float64)
    lab = np.ascontiguousarray(cv2.cvtColor(small, cv2.COLOR_RGB2Lab).reshape(-1, 3).T, dtype=np.float64)
    hue, sat = hsv[0], hsv[1]  # H in degrees; L 0..100
    npx = hue.size
    out: dict[str, float] = {}

    # Hue is an angle: a saturation-weighted circular mean (red is 0, never the mean of 5° and 355°),
    # over the coloured pixels only, like the hue histogram below: a grey pixel has no hue, and the
    # faint tint that lossy storage gives grey (WebP's chroma rounding) must not make one up.
    coloured = sat > SAT_MIN
    weight = np.where(coloured, sat, 0.0)
    wsum = weight.sum()
    if wsum > 1e-9:
        # cos and sin of the coloured pixels only: the others weigh 0 and add nothing to the sums,
        # which run over every pixel in the same order (the same bits as weighting every pixel)
        where = np.flatnonzero(coloured)
        rad, w = np.deg2rad(hue[where]), weight[where]
        terms = np.zeros((2, npx))
        terms[0, where] = w * np.cos(rad)
        terms[1, where] = w * np.sin(rad)
        c, s = terms[0].sum() / wsum, terms[1].sum() / wsum
        out["hue_mean"] = clip(np.arctan2(s, c) / np.pi) if np.hypot(c, s) > 1e-9 else 0.0
        out["hue_concentration"] = clip(np.hypot(c, s))
    else:
        out["hue_mean"] = 0.0
        out["hue_concentration"] = 0.0
    # Means and standard deviations of whole rows (axis=1 reduces each contiguous row by the same
    # pairwise sum as the row alone): saturation, value, then L, a, b.
    sv_mean, sv_std = hsv[1:].mean(axis=1).tolist(), hsv[1:].std(axis=1).tolist()
    lab_mean, lab_std = lab.mean(axis=1).tolist(), lab.std(axis=1).tolist()
    out["sat_mean"] = sv_mean[0]
    out["sat_std"] = clip(2.0 * sv_std[0])
    out["val_mean"] = sv_mean[1]
    out["val_std"] = clip(2.0 * sv_std[1])
    out["lab_l_mean"] = clip(lab_mean[0] / 100.0)
    out["lab_a_mean"] = clip(lab_mean[1] / 128.0)
    out["lab_b_mean"] = clip(lab_mean[2] / 128.0)
    out["lab_l_std"] = clip(lab_std[0] / 50.0)
    out["lab_a_std"] = clip(lab_std[1] / 64.0)
    out["lab_b_std"] = clip(lab_std[2] / 64.0)

    # Hasler & Süsstrunk (2003) colourfulness on the 0..255 scale: M = σ_rgyb + 0.3 μ_rgyb.
    r, g, b = px * 255.0
    opp = np.empty((2, npx))
    np.subtract(r, g, out=opp[0])  # rg = R − G
    np.subtract(0.5 * (r + g), b, out=opp[1])  # yb = (R + G)/2 − B
    (rg_std, yb_std), (rg_mean, yb_mean) = opp.std(axis=1), opp.mean(axis=1)
    sigma = float(np.hypot(rg_std, yb_std))
    mu = float(np.hypot(rg_mean, yb_mean))
    out["colorfulness"] = float(np.tanh((sigma + 0.3 * mu) / 100.0))
    out["opponent_std"] = float(np.tanh(sigma / 100.0))
    out["opponent_mean"] = float(np.tanh(mu / 100.0))

    n_col = int(np.count_nonzero(coloured))
    if n_col:
        # truncation to uint8 equals truncation to int64 for these values in [0, 18]
        bins = np.minimum((hue[coloured] * (HUE_BINS / 360.0)).astype(np.uint8), HUE_BINS - 1)
        hist = count_codes(bins, HUE_BINS) / n_col
        out["hue_entropy"] = _entropy(hist) / np.log2(HUE_BINS)
        out["hue_peak_share"] = float(hist.max())
    else:
        out["hue_entropy"] = 0.0
        out["hue_peak_share"] = 0.0

    y = 0.299 * px[0] + 0.587 * px[1] + 0.114 * px[2]
    out["luma_mean"] = float(y.mean())
    out["luma_std"] = clip(2.0 * y.std())
    # a boolean's mean is its count over the size, in float64: exactly count / size
    out["bright_fraction"] = np.count_nonzero(y > 250.0 / 255.0) / npx
    out["dark_fraction"] = np.count_nonzero(y < 5.0 / 255.0) / npx
    y_img = y.reshape(small.shape[:2]).astype(np.float32)
    coarse = cv2.resize(y_img, (4, 4), interpolation=cv2.INTER_AREA)
    out["coarse_contrast"] = clip(2.0 * float(coarse.std()))
    lo, med, hi = _luma_percentiles(y)  # last use of y: partitioned in place
    out["luma_range"] = clip(hi - lo)
    out["luma_median"] = float(med)

    mean_rgb = _column_means(px)
    out["red_blue_balance"] = clip(mean_rgb[0] - mean_rgb[2])
    out["green_balance"] = clip(mean_rgb[1] - 0.5 * (mean_rgb[0] + mean_rgb[2]))
    out["saturated_fraction"] = n_col / npx
    warm = coloured & ((hue < 60.0) | (hue > 300.0))
    cool = coloured & (hue >= 120.0) & (hue <= 300.0)
    out["warm_fraction"] = np.count_nonzero(warm) / npx
    out["cool_fraction"] = np.count_nonzero(cool) / npx
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
