"""Texture attributes (43 slots ``vis.texture.*``) on a fixed 128×128 grey image.

All texture is measured at one scale, ``TEXTURE_SIDE`` × ``TEXTURE_SIDE`` (area-downscaled, or
linearly upscaled for smaller inputs), so values do not depend on the input's resolution and the
cost is constant. GLCM, uniform LBP and HOG are our own vectorised numpy code; they follow
scikit-image's definitions exactly (``graycomatrix``/``graycoprops``, ``local_binary_pattern``
with ``method="uniform"``, ``hog`` with L2-Hys blocks), which the tests use as oracles.
OpenCV 5 removed ``HOGDescriptor``; nothing here needs it.
"""

from __future__ import annotations

import functools

import numpy as np

from .scaling import clip

TEXTURE_SIDE = 128
GLCM_LEVELS = 8
#: (row, column) offsets of GLCM angles 0, π/4, π/2, 3π/4 at distance 1 (scikit-image's convention:
#: row offset round(sin θ), column offset round(cos θ)).
GLCM_OFFSETS = ((0, 1), (1, 1), (1, 0), (1, -1))
GLCM_ANGLES = ("0", "45", "90", "135")
LBP_P = 8
HOG_ORIENTATIONS = 9
HOG_CELL = 8
HOG_BLOCK = 2



def texture_grey(grey: np.ndarray) -> np.ndarray:
    """(H, W) uint8 grey → (128, 128) uint8 (INTER_AREA down, INTER_LINEAR up)."""
    import cv2

    h, w = grey.shape
    interp = cv2.INTER_AREA if h >= TEXTURE_SIDE and w >= TEXTURE_SIDE else cv2.INTER_LINEAR
    return cv2.resize(grey, (TEXTURE_SIDE, TEXTURE_SIDE), interpolation=interp)


# -- GLCM ----------------------------------------------------------------------------------------
def glcm(levels_img: np.ndarray, levels: int = GLCM_LEVELS) -> np.ndarray:
    """Symmetric, normalised grey-level co-occurrence matrices, shape (levels, levels, 4 angles).

    ``levels_img`` holds integers in [0, levels). Equal to scikit-image's
    ``graycomatrix(img, [1], [0, π/4, π/2, 3π/4], levels, symmetric=True, normed=True)[:, :, 0, :]``.
    """
    q = levels_img.astype(np.int64)
    h, w = q.shape
    out = np.zeros((levels, levels, len(GLCM_OFFSETS)), dtype=np.float64)
    for a, (dr, dc) in enumerate(GLCM_OFFSETS):  # 4 array ops, not a per-pixel loop
        r0, r1 = max(0, -dr), h - max(0, dr)
        c0, c1 = max(0, -dc), w - max(0, dc)
        i = q[r0:r1, c0:c1]
        j = q[r0 + dr:r1 + dr, c0 + dc:c1 + dc]
        m = np.bincount((i * levels + j).ravel(), minlength=levels * levels).reshape(levels, levels)
        m = (m + m.T).astype(np.float64)
        total = m.sum()
        out[:, :, a] = m / total if total > 0 else m
    return out


def glcm_props(p: np.ndarray) -> dict[str, np.ndarray]:
    """Contrast, energy, homogeneity and correlation of each GLCM (scikit-image's ``graycoprops``)."""
    levels = p.shape[0]
    i, j = np.ogrid[0:levels, 0:levels]
    i = i[:, :, None].astype(np.float64)
    j = j[:, :, None].astype(np.float64)
    d2 = (i - j) ** 2
    contrast = (p * d2).sum(axis=(0, 1))
    energy = np.sqrt((p ** 2).sum(axis=(0, 1)))
    homogeneity = (p / (1.0 + d2)).sum(axis=(0, 1))
    mu_i = (i * p).sum(axis=(0, 1))
    mu_j = (j * p).sum(axis=(0, 1))
    sd_i = np.sqrt((p * (i - mu_i) ** 2).sum(axis=(0, 1)))
    sd_j = np.sqrt((p * (j - mu_j) ** 2).sum(axis=(0, 1)))
    cov = (p * (i - mu_i) * (j - mu_j)).sum(axis=(0, 1))
    flat = (sd_i < 1e-15) | (sd_j < 1e-15)  # a constant image is perfectly correlated (skimage: 1)
    correlation = np.where(flat, 1.0, cov / np.where(flat, 1.0, sd_i * sd_j))
    return {"contrast": contrast, "energy": energy, "homogeneity": homogeneity, "correlation": correlation}


# -- LBP -----------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=32)
def _lbp_plan(h: int, w: int, radius: float) -> tuple:
    """Per neighbour k: corner slice starts and interpolation weights for an (h, w) image.

    They depend only on the shape, so they are built once per shape (a grid's crops share few
    shapes). ``None`` weights mark a neighbour whose offset is whole pixels: both fractional
    parts are exactly 0, so the bilinear value is exactly the top-left corner
    ((1 - 0)·a + 0·b = a for finite a, b; a signed zero compares the same) and the interpolation
    is skipped.
    """
    p = np.arange(LBP_P, dtype=np.float64)
    rp = np.round(-radius * np.sin(2 * np.pi * p / LBP_P), 5)
    cp = np.round(radius * np.cos(2 * np.pi * p / LBP_P), 5)
    pad = int(np.ceil(radius)) + 1
    rows = np.arange(h, dtype=np.float64)[:, None]
    cols = np.arange(w, dtype=np.float64)[None, :]
    plan = []
    for k in range(LBP_P):
        # floor(row + rp) = row + floor(rp) for every integer row, so the four interpolation
        # corners are plain shifted slices; only the fractional weights are per row/column
        # (they carry the rounding of row + rp, exactly as scikit-image computes them).
        r, c = rows + rp[k], cols + cp[k]
        dr, dc = r - np.floor(r), c - np.floor(c)
        r0, r1 = int(np.floor(rp[k])) + pad, int(np.ceil(rp[k])) + pad
        c0, c1 = int(np.floor(cp[k])) + pad, int(np.ceil(cp[k])) + pad
        weights = None
        if dr.any() or dc.any():
            weights = tuple(np.ascontiguousarray(a) for a in (1 - dc, dc, 1 - dr, dr))
            for a in weights:
                a.flags.writeable = False
        plan.append((r0, r1, c0, c1, weights))
    return pad, tuple(plan)


def lbp_uniform(img: np.ndarray, radius: float = 1.0) -> np.ndarray:
    """Rotation-invariant uniform LBP codes (0..P+1) with P = 8, as scikit-image computes them.

    Neighbours on the circle are bilinearly interpolated with zeros outside the image; the
    floating-point expression order follows scikit-image so that ties (neighbour == centre)
    resolve identically.
    """
    x = np.asarray(img, dtype=np.float64)
    h, w = x.shape
    pad, plan = _lbp_plan(h, w, float(radius))
    xp = np.pad(x, pad)  # constant 0 outside, like skimage's mode 'C'
    bits = np.empty((LBP_P, h, w), dtype=np.bool_)
    for k, (r0, r1, c0, c1, weights) in enumerate(plan):  # 8 whole-image array ops
        tl = xp[r0:r0 + h, c0:c0 + w]
        if weights is None:
            value = tl
        else:
            one_dc, dc, one_dr, dr = weights
            tr = xp[r0:r0 + h, c1:c1 + w]
            bl, br = xp[r1:r1 + h, c0:c0 + w], xp[r1:r1 + h, c1:c1 + w]
            top = one_dc * tl + dc * tr
            bottom = one_dc * bl + dc * br
            value = one_dr * top + dr * bottom
        np.greater_equal(value - x, 0, out=bits[k])
    # Integer counts (exact in any order): bit changes around the circle (P - 1 neighbouring
    # pairs, as scikit-image counts them) and the number of set bits, in uint8 sums of 2-D arrays.
    changes = np.zeros((h, w), dtype=np.uint8)
    ones = bits[0].astype(np.uint8)
    for k in range(1, LBP_P):
        changes += bits[k] != bits[k - 1]
        ones += bits[k]
    return np.where(changes <= 2, ones, LBP_P + 1).astype(np.int64)


# -- HOG -----------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=32)
def _hog_cell_base(hh: int, ww: int) -> np.ndarray:
    """(hh, ww) int64: each pixel's cell number × 9, the first histogram bin of its cell."""
    ncc = ww // HOG_CELL
    cell = (np.arange(hh)[:, None] // HOG_CELL) * ncc + (np.arange(ww)[None, :] // HOG_CELL)
    base = cell * HOG_ORIENTATIONS
    base.flags.writeable = False
    return base


def hog_blocks(img: np.ndarray) -> np.ndarray:
    """Block-normalised HOG, shape (n_blocks_r, n_blocks_c, 2, 2, 9), as scikit-image's ``hog``
    (orientations=9, pixels_per_cell=8×8, cells_per_block=2×2, block_norm='L2-Hys',
    feature_vector=False).

    Gradients are central differences (zero on the border rows/columns), orientation unsigned in
    [0°, 180°), each pixel's magnitude goes to one bin, cell histograms are divided by the cell's
    pixel count, and each 2×2-cell block is L2-normalised, clipped at 0.2 and renormalised.
    """
    x = np.asarray(img, dtype=np.float64)
    gr = np.zeros_like(x)
    gc = np.zeros_like(x)
    gr[1:-1, :] = x[2:, :] - x[:-2, :]
    gc[:, 1:-1] = x[:, 2:] - x[:, :-2]
    mag = np.hypot(gc, gr)
    ori = np.rad2deg(np.arctan2(gr, gc)) % 180
    width = 180.0 / HOG_ORIENTATIONS
    b = np.minimum((ori / width).astype(np.int64), HOG_ORIENTATIONS - 1)
    ncr, ncc = x.shape[0] // HOG_CELL, x.shape[1] // HOG_CELL
    hh, ww = ncr * HOG_CELL, ncc * HOG_CELL
    index = _hog_cell_base(hh, ww) + b[:hh, :ww]
    hist: np.ndarray = np.bincount(index.ravel(), weights=mag[:hh, :ww].ravel(), minlength=ncr * ncc * HOG_ORIENTATIONS)
    hist = hist.reshape(ncr, ncc, HOG_ORIENTATIONS) / (HOG_CELL * HOG_CELL)
    from numpy.lib.stride_tricks import sliding_window_view

    blocks = sliding_window_view(hist, (HOG_BLOCK, HOG_BLOCK), axis=(0, 1))  # (nbr, nbc, 9, 2, 2)
    blocks = blocks.transpose(0, 1, 3, 4, 2)
    eps = 1e-5
    norm = np.sqrt((blocks ** 2).sum(axis=(2, 3, 4), keepdims=True) + eps ** 2)
    out = np.minimum(blocks / norm, 0.2)
    norm = np.sqrt((out ** 2).sum(axis=(2, 3, 4), keepdims=True) + eps ** 2)
    return out / norm


# -- spectrum ------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=32)
def _spectrum_plan(h: int, w: int) -> tuple:
    """Shape-only constants of :func:`spectral_stats` for an (h, w) spectrum, built once per shape:
    the non-DC mask, the flat integer radius of each frequency, the frequency count per radius
    (at least 1), the radii 2..h/2 of the slope fit and the mask of radii above h/4."""
    yy, xx = np.indices((h, w))
    radius = np.hypot(yy - h // 2, xx - w // 2)
    rbin = radius.astype(np.int64).ravel()
    consts = (radius > 0, rbin, np.maximum(np.bincount(rbin), 1), np.arange(2, h // 2), radius > h / 4)
    for a in consts:
        a.flags.writeable = False
    return consts


def spectral_stats(x: np.ndarray) -> tuple[float, float, float]:
    """(dispersion, slope, high-frequency ratio) of the mean-removed amplitude spectrum of ``x``.

    dispersion = std/mean of |F| over all non-DC frequencies; slope = least-squares slope of
    log radial power against log radius (radii 2..N/2; natural images ≈ −2); high-frequency ratio
    = share of the non-DC power above half the Nyquist radius. A flat image gives (0, 0, 0).
    """
    f = np.fft.fftshift(np.abs(np.fft.fft2(x - x.mean())))
    nondc, rbin, counts, rr, above = _spectrum_plan(*x.shape)
    amp = f[nondc]
    if amp.sum() <= 1e-9 * x.size:
        return 0.0, 0.0, 0.0
    dispersion = float(amp.std() / amp.mean())
    power = f ** 2
    radial = np.bincount(rbin, weights=power.ravel()) / counts
    good = radial[rr] > 0
    slope = 0.0
    if good.sum() >= 2:
        slope = float(np.polyfit(np.log(rr[good]), np.log(radial[rr][good]), 1)[0])
    high = float(power[above].sum() / power[nondc].sum())
    return dispersion, slope, high


def texture_features(t: np.ndarray) -> dict[str, float]:
    """Named, scaled texture values of the (128, 128) uint8 texture grey (see :func:`texture_grey`)."""
    import cv2

    out: dict[str, float] = {}
    props = glcm_props(glcm(t // (256 // GLCM_LEVELS)))
    max_contrast = (GLCM_LEVELS - 1) ** 2
    for a, name in enumerate(GLCM_ANGLES):
        out[f"glcm_contrast_{name}"] = clip(np.sqrt(props["contrast"][a] / max_contrast))
    for prop in ("energy", "homogeneity", "correlation"):
        for a, name in enumerate(GLCM_ANGLES):
            out[f"glcm_{prop}_{name}"] = clip(props[prop][a])
    codes = lbp_uniform(t)
    hist = np.bincount(codes.ravel(), minlength=LBP_P + 2) / codes.size
    for k in range(LBP_P + 2):
        out[f"lbp_{k}"] = float(hist[k])
    hog = hog_blocks(t).mean(axis=(0, 1, 2, 3))
    for k in range(HOG_ORIENTATIONS):
        out[f"hog_{k * 20:03d}"] = clip(2.0 * hog[k])
    tf = t.astype(np.float32)
    lap = cv2.Laplacian(tf, cv2.CV_32F, ksize=1)
    out["laplacian_var"] = clip(np.log10(1.0 + float(lap.var())) / 4.0)
    dispersion, slope, high = spectral_stats(tf.astype(np.float64))
    out["spectral_dispersion"] = float(np.tanh(dispersion / 2.0))
    out["spectral_slope"] = clip(slope / 4.0)
    out["high_freq_ratio"] = clip(high)
    gx = cv2.Sobel(tf, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(tf, cv2.CV_32F, 0, 1, ksize=3)
    ax, ay = float(np.abs(gx).mean()), float(np.abs(gy).mean())
    out["directionality"] = clip(np.log2((ax + 1e-6) / (ay + 1e-6)) / 4.0) if ax + ay > 1e-6 else 0.0
    out["edge_density"] = float((cv2.Canny(t, 50, 150) > 0).mean())
    out["gradient_mean"] = clip(float(np.hypot(gx, gy).mean()) / (4.0 * 255.0))
    out["specular_fraction"] = float((t > 240).mean())
    return out
