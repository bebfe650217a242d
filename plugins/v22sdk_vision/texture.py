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

from .histogram import count_codes
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
    n_angles = len(GLCM_OFFSETS)
    # pair codes a·L² + i·L + j of all four angles counted by one bincount (exact integer counts);
    # they fit uint8 for 8 levels
    dtype = np.uint8 if n_angles * levels * levels <= 256 else np.int64
    q = levels_img.astype(dtype)
    h, w = q.shape
    parts = []
    for a, (dr, dc) in enumerate(GLCM_OFFSETS):
        r0, r1 = max(0, -dr), h - max(0, dr)
        c0, c1 = max(0, -dc), w - max(0, dc)
        i = q[r0:r1, c0:c1]
        j = q[r0 + dr : r1 + dr, c0 + dc : c1 + dc]
        code = i * dtype(levels)
        code += j
        code += dtype(a * levels * levels)
        parts.append(code.ravel())
    codes = np.concatenate(parts)
    if dtype == np.uint8:
        counts = count_codes(codes, n_angles * levels * levels)
    else:
        counts = np.bincount(codes, minlength=n_angles * levels * levels)
    m = counts.reshape(n_angles, levels, levels)
    m = (m + m.transpose(0, 2, 1)).astype(np.float64)
    out = np.zeros((levels, levels, n_angles), dtype=np.float64)
    for a in range(n_angles):
        total = m[a].sum()
        out[:, :, a] = m[a] / total if total > 0 else m[a]
    return out


@functools.cache
def _glcm_grid(levels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(levels, 1, 1) i, (1, levels, 1) j and (i − j)² as float64: :func:`glcm_props`' constants."""
    i, j = np.ogrid[0:levels, 0:levels]
    i = i[:, :, None].astype(np.float64)
    j = j[:, :, None].astype(np.float64)
    d2 = (i - j) ** 2
    for arr in (i, j, d2):
        arr.flags.writeable = False
    return i, j, d2


def glcm_props(p: np.ndarray) -> dict[str, np.ndarray]:
    """Contrast, energy, homogeneity and correlation of each GLCM (scikit-image's ``graycoprops``)."""
    i, j, d2 = _glcm_grid(p.shape[0])
    contrast = (p * d2).sum(axis=(0, 1))
    energy = np.sqrt((p**2).sum(axis=(0, 1)))
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
    xp = np.zeros((h + 2 * pad, w + 2 * pad))  # constant 0 outside, like skimage's mode 'C'
    xp[pad : pad + h, pad : pad + w] = x
    bits = np.empty((LBP_P, h, w), dtype=np.bool_)
    top, bottom, tmp = np.empty((3, h, w))
    for k, (r0, r1, c0, c1, weights) in enumerate(plan):  # 8 whole-image array ops
        tl = xp[r0 : r0 + h, c0 : c0 + w]
        if weights is None:
            value = tl
        else:  # top = (1-dc)·tl + dc·tr, bottom likewise, value = (1-dr)·top + dr·bottom, in place
            one_dc, dc, one_dr, dr = weights
            np.multiply(one_dc, tl, out=top)
            top += np.multiply(dc, xp[r0 : r0 + h, c1 : c1 + w], out=tmp)
            np.multiply(one_dc, xp[r1 : r1 + h, c0 : c0 + w], out=bottom)
            bottom += np.multiply(dc, xp[r1 : r1 + h, c1 : c1 + w], out=tmp)
            top *= one_dr
            bottom *= dr
            top += bottom
            value = top
        # value − x ≥ 0 exactly when value ≥ x (finite floats: a difference is 0 only if equal)
        np.greater_equal(value, x, out=bits[k])
    # Integer counts (exact in any order): bit changes around the circle (P - 1 neighbouring
    # pairs, as scikit-image counts them) and the number of set bits, as uint8 sums over k.
    changes = np.not_equal(bits[1:], bits[:-1]).sum(axis=0, dtype=np.uint8)
    ones = bits.sum(axis=0, dtype=np.uint8)
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


def _hog_magnitude_bin(gr: np.ndarray, gc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradient magnitude (float64) and orientation bin (int64, unsigned angle in 20° bins)."""
    mag = np.hypot(gc, gr)
    ori = np.rad2deg(np.arctan2(gr, gc)) % 180
    width = 180.0 / HOG_ORIENTATIONS
    return mag, np.minimum((ori / width).astype(np.int64), HOG_ORIENTATIONS - 1)


#: Side of the integer-gradient tables: central differences of uint8 lie in [-255, 255].
_GRAD_SIDE = 511


class _GradientTable:
    """Magnitude (float64) and bin (uint8) of integer gradient pairs, at flat index
    ``(gr + 255)·511 + (gc + 255)``, filled on demand: the pairs an image needs that are not yet
    known are evaluated by :func:`_hog_magnitude_bin` (on contiguous float64 arrays, as the float
    path evaluates them), so a lookup is bit-identical to computing (a test compares all 511²
    entries). Filling on demand costs the first images what the float path cost them, and no
    process pays for the 261,121 pairs up front. Values are written before their ``known`` flag,
    so a concurrent reader never takes an unwritten entry (a race only computes a pair twice)."""

    def __init__(self) -> None:
        n = _GRAD_SIDE * _GRAD_SIDE
        self.mag = np.zeros(n, dtype=np.float64)
        self.bin = np.zeros(n, dtype=np.uint8)
        self.known = np.zeros(n, dtype=np.bool_)

    def lookup(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        missing = ~self.known[key]
        if missing.any():
            new = np.unique(key[missing])
            gr, gc = np.divmod(new, _GRAD_SIDE)
            mag, b = _hog_magnitude_bin((gr - 255).astype(np.float64), (gc - 255).astype(np.float64))
            self.mag[new] = mag
            self.bin[new] = b
            self.known[new] = True
        return self.mag[key], self.bin[key]


_GRADIENTS = _GradientTable()


def _hog_gradient_key(img: np.ndarray) -> np.ndarray:
    """(H, W) uint8 → (H, W) int32 table index of each pixel's central-difference gradient
    (zero on the border rows/columns, as in the float path)."""
    x = img.astype(np.int32)
    gr = np.zeros_like(x)
    gr[1:-1, :] = x[2:, :] - x[:-2, :]
    key = gr
    key *= _GRAD_SIDE
    key[:, 1:-1] += x[:, 2:] - x[:, :-2]
    key += 255 * _GRAD_SIDE + 255
    return key


def hog_blocks(img: np.ndarray) -> np.ndarray:
    """Block-normalised HOG, shape (n_blocks_r, n_blocks_c, 2, 2, 9), as scikit-image's ``hog``
    (orientations=9, pixels_per_cell=8×8, cells_per_block=2×2, block_norm='L2-Hys',
    feature_vector=False).

    Gradients are central differences (zero on the border rows/columns), orientation unsigned in
    [0°, 180°), each pixel's magnitude goes to one bin, cell histograms are divided by the cell's
    pixel count, and each 2×2-cell block is L2-normalised, clipped at 0.2 and renormalised.
    """
    img = np.asarray(img)
    ncr, ncc = img.shape[0] // HOG_CELL, img.shape[1] // HOG_CELL
    hh, ww = ncr * HOG_CELL, ncc * HOG_CELL
    if img.dtype == np.uint8:
        # integer gradients in [-255, 255]: magnitude and bin looked up (the same float64 values)
        mag, b = _GRADIENTS.lookup(_hog_gradient_key(img)[:hh, :ww])
    else:
        x = img.astype(np.float64)
        gr = np.zeros_like(x)
        gc = np.zeros_like(x)
        gr[1:-1, :] = x[2:, :] - x[:-2, :]
        gc[:, 1:-1] = x[:, 2:] - x[:, :-2]
        mag, b = _hog_magnitude_bin(gr, gc)
        mag, b = mag[:hh, :ww], b[:hh, :ww]
    index = _hog_cell_base(hh, ww) + b
    hist: np.ndarray = np.bincount(index.ravel(), weights=mag.ravel(), minlength=ncr * ncc * HOG_ORIENTATIONS)
    hist = hist.reshape(ncr, ncc, HOG_ORIENTATIONS) / (HOG_CELL * HOG_CELL)
    from numpy.lib.stride_tricks import sliding_window_view

    blocks = sliding_window_view(hist, (HOG_BLOCK, HOG_BLOCK), axis=(0, 1))  # (nbr, nbc, 9, 2, 2)
    blocks = blocks.transpose(0, 1, 3, 4, 2)
    eps = 1e-5
    norm = np.sqrt((blocks**2).sum(axis=(2, 3, 4), keepdims=True) + eps**2)
    out = np.minimum(blocks / norm, 0.2)
    norm = np.sqrt((out**2).sum(axis=(2, 3, 4), keepdims=True) + eps**2)
    return out / norm


# -- spectrum ------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=32)
def _spectrum_plan(h: int, w: int) -> tuple:
    """Shape-only constants of :func:`spectral_stats` for an (h, w) spectrum, built once per shape.

    The shifted spectrum (zero frequency at the centre) is read through index arrays into the
    unshifted one, in the shifted raster order, so every selection and sum sees the same values
    in the same order as ``np.fft.fftshift`` followed by boolean masks: ``shift`` (all
    frequencies), ``nondc`` and ``above`` (radius > h/4); then the flat integer radius of each
    shifted frequency, the frequency count per radius (at least 1), the radii 2..h/2 of the slope
    fit, and the slope fit's constant design (see :func:`_slope_design`)."""
    yy, xx = np.indices((h, w))
    radius = np.hypot(yy - h // 2, xx - w // 2)
    rbin = radius.astype(np.int64).ravel()
    shift = np.fft.fftshift(np.arange(h * w).reshape(h, w)).ravel()
    rr = np.arange(2, h // 2)
    consts = (
        shift,
        shift[(radius > 0).ravel()],
        shift[(radius > h / 4).ravel()],
        rbin,
        np.maximum(np.bincount(rbin), 1),
        rr,
    )
    for a in consts:
        a.flags.writeable = False
    return consts + (_slope_design(np.log(rr)) if rr.size >= 2 else None,)


def _slope_design(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``np.polyfit(x, y, 1)``'s column-scaled design matrix, column scales and rcond (they
    depend on x only): the fit is then ``lstsq(lhs, y, rcond)`` divided by the scales, exactly
    polyfit's own steps."""
    x = np.asarray(x) + 0.0
    lhs = np.vander(x, 2)
    scale = np.sqrt((lhs * lhs).sum(axis=0))
    lhs /= scale
    for a in (lhs, scale):
        a.flags.writeable = False
    return lhs, scale, len(x) * np.finfo(x.dtype).eps


def spectral_stats(x: np.ndarray) -> tuple[float, float, float]:
    """(dispersion, slope, high-frequency ratio) of the mean-removed amplitude spectrum of ``x``.

    dispersion = std/mean of |F| over all non-DC frequencies; slope = least-squares slope of
    log radial power against log radius (radii 2..N/2; natural images ≈ −2); high-frequency ratio
    = share of the non-DC power above half the Nyquist radius. A flat image gives (0, 0, 0).
    """
    f = np.abs(np.fft.fft2(x - x.mean())).ravel()  # unshifted; read through the plan's indices
    shift, nondc, above, rbin, counts, rr, design = _spectrum_plan(*x.shape)
    amp = f[nondc]
    if amp.sum() <= 1e-9 * x.size:
        return 0.0, 0.0, 0.0
    dispersion = float(amp.std() / amp.mean())
    power = f**2
    radial = np.bincount(rbin, weights=power[shift]) / counts
    log_radial = radial[rr]
    good = log_radial > 0
    slope = 0.0
    if good.all() and design is not None:
        lhs, scale, rcond = design
        slope = float(np.linalg.lstsq(lhs, np.log(log_radial) + 0.0, rcond)[0][0] / scale[0])
    elif good.sum() >= 2:
        slope = float(np.polyfit(np.log(rr[good]), np.log(log_radial[good]), 1)[0])
    high = float(power[above].sum() / power[nondc].sum())
    return dispersion, slope, high


def texture_features(t: np.ndarray) -> dict[str, float]:
    """Named, scaled texture values of the (128, 128) uint8 texture grey (see :func:`texture_grey`)."""
    import cv2

    out: dict[str, float] = {}
    props = glcm_props(glcm(t // (256 // GLCM_LEVELS)))
    contrast = np.sqrt(props["contrast"] / ((GLCM_LEVELS - 1) ** 2)).tolist()  # elementwise, as per value
    for a, name in enumerate(GLCM_ANGLES):
        out[f"glcm_contrast_{name}"] = clip(contrast[a])
    for prop in ("energy", "homogeneity", "correlation"):
        values = props[prop].tolist()
        for a, name in enumerate(GLCM_ANGLES):
            out[f"glcm_{prop}_{name}"] = clip(values[a])
    codes = lbp_uniform(t)
    hist = (np.bincount(codes.ravel(), minlength=LBP_P + 2) / codes.size).tolist()
    for k in range(LBP_P + 2):
        out[f"lbp_{k}"] = hist[k]
    hog = (2.0 * hog_blocks(t).mean(axis=(0, 1, 2, 3))).tolist()
    for k in range(HOG_ORIENTATIONS):
        out[f"hog_{k * 20:03d}"] = clip(hog[k])
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
    # a boolean mean is count / size in float64: Python's int / int is the same correctly rounded value
    out["edge_density"] = cv2.countNonZero(cv2.Canny(t, 50, 150)) / t.size
    out["gradient_mean"] = clip(float(np.hypot(gx, gy).mean()) / (4.0 * 255.0))
    out["specular_fraction"] = np.count_nonzero(t > 240) / t.size
    return out
