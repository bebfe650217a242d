"""All 128 attribute values of one image, in schema order.

``attributes(rgb)`` takes ``(H, W, 3)`` float32 RGB in [0, 1] (see :mod:`.pixels`) and returns a
(128,) float64 vector, every value in [-1, 1], ordered as :data:`.slots.SCHEMA`.

Scales: colour statistics on a ≤ 128-pixel copy (k-means on ≤ 48), the foreground mask and object
geometry on a ≤ ``SHAPE_SIDE`` copy, texture on a fixed 128×128 grey, focus on the working image
(longer side ≤ 1024), saliency on 64×64.
"""

from __future__ import annotations

import numpy as np

from .colour import colour_features
from .geometry import foreground_mask, geometry_features
from .slots import KEYS
from .space import space_features
from .texture import texture_features, texture_grey

#: Longer side of the grey copy on which the Otsu mask and the object geometry are computed.
SHAPE_SIDE = 256


def grey_of(rgb: np.ndarray) -> np.ndarray:
    """(H, W, 3) float32 RGB in [0, 1] → (H, W) uint8 luma 255·(0.299 R + 0.587 G + 0.114 B), rounded."""
    import cv2

    y = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    return cv2.convertScaleAbs(y, alpha=255.0)  # ×255, rounded to nearest, saturated, in one pass


def shrink(grey: np.ndarray, side: int) -> np.ndarray:
    """Area-downscale an (H, W) image so that its longer side is at most ``side``."""
    import cv2

    h, w = grey.shape[:2]
    if max(h, w) <= side:
        return grey
    s = side / max(h, w)
    return cv2.resize(grey, (max(1, round(w * s)), max(1, round(h * s))), interpolation=cv2.INTER_AREA)


def feature_groups(rgb: np.ndarray) -> dict[str, dict[str, float]]:
    """The four groups of named, scaled values (keys without the ``vis.<group>.`` prefix)."""
    grey = grey_of(rgb)
    mask = foreground_mask(shrink(grey, SHAPE_SIDE))
    geometry, main = geometry_features(mask)
    tex = texture_grey(grey)
    return {
        "color": colour_features(rgb),
        "geometry": geometry,
        "texture": texture_features(tex),
        "space": space_features(grey, tex, mask, main),
    }


def attributes(rgb: np.ndarray) -> np.ndarray:
    """(128,) float64 attribute values of one image, in schema order."""
    groups = feature_groups(rgb)
    values = np.array([groups[group][name] for group, name in KEYS], dtype=np.float64)
    # Every feature scales into [-1, 1] itself (the tests check the unclipped values); this
    # clip only guards the token against a rounding excursion like 1.0000001.
    return np.clip(values, -1.0, 1.0)
