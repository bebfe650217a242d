"""Synthetic test images: a hypothesis strategy of valid inputs and a few named generators.

Used by :meth:`VisionModality.sample_inputs` (the contract kit) and by the plugin's tests.
``hypothesis`` is imported inside :func:`image_strategy` only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

KINDS = ("constant", "noise", "gradient", "disc", "stripes")
DTYPES = ("uint8", "uint16", "float32", "float64", "bool")


def make_image(kind: str, height: int, width: int, channels: int, dtype: str, seed: int) -> np.ndarray:
    """A deterministic synthetic image: shape (H, W) when ``channels`` is 0, else (H, W, channels)."""
    rng = np.random.default_rng(seed)
    c = max(channels, 1)
    if kind == "constant":
        x = np.broadcast_to(rng.random(c), (height, width, c)).copy()
    elif kind == "noise":
        x = rng.random((height, width, c))
    elif kind == "gradient":
        yy, xx = np.mgrid[0:height, 0:width]
        ramp = (xx + yy) / max(height + width - 2, 1)
        x = ramp[:, :, None] * rng.random(c) + (1 - ramp[:, :, None]) * rng.random(c)
    elif kind == "disc":
        yy, xx = np.mgrid[0:height, 0:width]
        r = rng.uniform(0.1, 0.5) * min(height, width)
        inside = (yy - height / 2) ** 2 + (xx - width / 2) ** 2 <= r * r
        x = np.where(inside[:, :, None], rng.random(c), rng.random(c))
    elif kind == "stripes":
        period = int(rng.integers(2, 9))
        band = ((np.arange(width) // period) % 2).astype(float)
        x = np.broadcast_to(band[None, :, None], (height, width, c)) * rng.random(c)
    else:
        raise ValueError(kind)
    if channels == 0:
        x = x[:, :, 0]
    if dtype == "uint8":
        return np.round(x * 255).astype(np.uint8)
    if dtype == "uint16":
        return np.round(x * 65535).astype(np.uint16)
    if dtype == "bool":
        return x > 0.5
    return x.astype(dtype)


def image_strategy(max_side: int = 128) -> Any:
    """Hypothesis strategy of valid image arrays (1×1 up to ``max_side``, every accepted layout)."""
    from hypothesis import strategies as st

    side = st.one_of(st.integers(1, 4), st.integers(1, max_side))
    return st.builds(
        make_image,
        st.sampled_from(KINDS),
        side,
        side,
        st.sampled_from((0, 1, 2, 3, 4)),
        st.sampled_from(DTYPES),
        st.integers(0, 2**32 - 1),
    )
