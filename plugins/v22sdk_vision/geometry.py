"""Geometry of the main object (25 slots ``vis.geometry.*``) from an Otsu foreground mask.

Foreground: Otsu's threshold on the grey image splits it into a bright and a dark class; the class
that covers more of the image border is taken as background (upstream always took the bright
class, so a dark object on a light page came out as "background"). The main object is the largest
external contour of the mask. Shape values are 0 when there is no object of at least
``MIN_AREA`` pixels.

Contour geometry follows OpenCV's convention: contours run through pixel centres, so a w×h pixel
rectangle has a (w−1)×(h−1) polygon; extent uses the same convention on both sides. The
perimeter used for circularity is that of the contour simplified with ``approxPolyDP(ε = 1 px)``,
which removes the 8-connected staircase (the raw chain overestimates a circle's perimeter by
~5-8 %, so a perfect disc would read 0.87 instead of ≈ 1).
"""

from __future__ import annotations

import numpy as np

from .histogram import count_codes
from .scaling import clip, log_count

MIN_AREA = 4.0


def signed_log_hu(h: np.ndarray) -> np.ndarray:
    """Hu moments → [-1, 1] by sign(h)·(30 + log10|h|)/32, |h| clipped to [1e-30, 100] (monotone in h)."""
    mag = np.clip(np.abs(h), 1e-30, 100.0)
    out = np.sign(h) * (30.0 + np.log10(mag)) / 32.0
    return np.where(h == 0, 0.0, out)


def foreground_mask(grey: np.ndarray) -> np.ndarray:
    """(H, W) uint8 grey → (H, W) uint8 mask (255 = foreground) by Otsu, background = border class."""
    import cv2

    _, mask = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    border = np.concatenate([mask[0], mask[-1], mask[:, 0], mask[:, -1]])
    if (border > 0).mean() > 0.5:
        mask = cv2.bitwise_not(mask)
    return mask


def _holes(mask: np.ndarray) -> int:
    """Background regions (4-connected) enclosed by foreground: not touching the image border.

    Reference definition (a labelling of the padded background); :func:`geometry_features` counts
    the same number faster as components minus the Euler number (:func:`euler_number_8`).
    """
    import cv2

    inv = (mask == 0).astype(np.uint8)
    padded = np.pad(inv, 1, constant_values=1)  # the outside joins every border-touching region
    n, _ = cv2.connectedComponents(padded, connectivity=4)
    return max(0, n - 2)  # minus the label-0 (foreground) and the outer background region


#: The 2×2 bit-quad codes (top-left 1, top-right 2, bottom-left 4, bottom-right 8) with one set
#: pixel, three set pixels, and the two diagonal pairs.
_Q1, _Q3, _QD = (1, 2, 4, 8), (7, 11, 13, 14), (6, 9)


def euler_number_8(mask: np.ndarray) -> int:
    """Euler number (components − holes) of the foreground, 8-connected (background 4-connected),
    by Gray's bit-quad count on the zero-padded mask: (Q1 − Q3 − 2·QD) / 4. Exact integer counting,
    equal to the component count minus :func:`_holes`."""
    h, w = mask.shape
    p = np.zeros((h + 2, w + 2), dtype=np.uint8)
    np.greater(mask, 0, out=p[1:-1, 1:-1], casting="unsafe")
    q = p[:-1, :-1] + 2 * p[:-1, 1:]
    q += 4 * p[1:, :-1]
    q += 8 * p[1:, 1:]
    counts = count_codes(q, 16)
    q1 = int(counts[list(_Q1)].sum())
    q3 = int(counts[list(_Q3)].sum())
    qd = int(counts[list(_QD)].sum())
    return (q1 - q3 - 2 * qd) // 4


EMPTY_SHAPE = (
    "bbox_x0",
    "bbox_y0",
    "bbox_width",
    "bbox_height",
    "aspect_ratio",
    "solidity",
    "circularity",
    "elongation",
    "extent",
    "convexity",
    "is_convex",
    "polygon_vertices",
    "object_angle",
) + tuple(f"hu_{i}" for i in range(1, 8))


def geometry_features(mask: np.ndarray) -> tuple[dict[str, float], np.ndarray | None]:
    """Named, scaled geometry values from a foreground mask, and the main contour (or None)."""
    import cv2

    h, w = mask.shape
    # a boolean mean is count / size in float64; Python's int / int is the same correctly rounded value
    out: dict[str, float] = {"fg_fraction": cv2.countNonZero(mask) / (h * w)}
    # labels without per-component statistics (centroids cost more than the labelling): the
    # largest area is the largest label count
    n, labels = cv2.connectedComponents(mask, connectivity=8)
    n_comp = n - 1
    holes = n_comp - euler_number_8(mask) if n_comp else 0
    out["components"] = log_count(n_comp)
    if n_comp:
        # label counts: OpenCV's 8-bit histogram (exact integer counts) while the labels fit a byte
        sizes = count_codes(labels.astype(np.uint8), n) if n <= 256 else np.bincount(labels.ravel())
        out["largest_component_share"] = int(sizes[1:].max()) / (h * w)
    else:
        out["largest_component_share"] = 0.0
    out["holes"] = log_count(holes)
    out["euler_number"] = log_count(n_comp - holes)

    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    areas = [cv2.contourArea(c) for c in contours]
    if not areas or max(areas) < MIN_AREA:
        out.update(dict.fromkeys(EMPTY_SHAPE, 0.0))
        return out, None
    best = max(range(len(areas)), key=areas.__getitem__)  # the first largest, as np.argmax
    main = contours[best]
    area = float(areas[best])
    x, y, bw, bh = cv2.boundingRect(main)
    out["bbox_x0"] = x / w
    out["bbox_y0"] = y / h
    out["bbox_width"] = bw / w
    out["bbox_height"] = bh / h
    out["aspect_ratio"] = clip(np.log2(bw / bh) / 4.0)
    hull = cv2.convexHull(main)
    hull_area = cv2.contourArea(hull)
    out["solidity"] = clip(area / hull_area) if hull_area > 0 else 0.0
    smooth_perimeter = cv2.arcLength(cv2.approxPolyDP(main, 1.0, True), True)
    out["circularity"] = clip(4.0 * np.pi * area / smooth_perimeter**2) if smooth_perimeter > 0 else 0.0
    (_, _), (rw, rh), _ = cv2.minAreaRect(main)
    long_side, short_side = max(rw, rh), min(rw, rh)
    out["elongation"] = clip(1.0 - short_side / long_side) if long_side > 0 else 0.0
    out["extent"] = clip(area / max(1.0, (bw - 1) * (bh - 1)))
    perimeter = cv2.arcLength(main, True)
    hull_perimeter = cv2.arcLength(hull, True)
    out["convexity"] = clip(hull_perimeter / perimeter) if perimeter > 0 else 0.0
    poly = cv2.approxPolyDP(main, 0.02 * perimeter, True)
    out["is_convex"] = 1.0 if len(poly) >= 3 and cv2.isContourConvex(poly) else 0.0
    out["polygon_vertices"] = clip(len(poly) / 32.0)
    m = cv2.moments(main)
    # major-axis angle, counter-clockwise as seen on screen (image y points down), in (-90°, 90°]
    angle = 0.5 * np.arctan2(-2.0 * m["mu11"], m["mu20"] - m["mu02"])
    out["object_angle"] = clip(angle / (np.pi / 2))
    hu = signed_log_hu(cv2.HuMoments(m).ravel())
    for i in range(7):
        out[f"hu_{i + 1}"] = float(hu[i])
    return out, main
