"""Turn any accepted pixel array into the one internal form: RGB float32 in [0, 1], bounded size.

Accepted arrays (``encode``/``tokenize`` input and what ``load`` returns):

* shape ``(H, W)`` grey, ``(H, W, 1)`` grey, ``(H, W, 2)`` grey + alpha, ``(H, W, 3)`` **RGB**
  (arrays are RGB, not OpenCV's BGR; ``load`` converts files to RGB), ``(H, W, 4)`` RGBA;
* dtype ``uint8`` (0..255), ``uint16`` (0..65535), ``bool`` (False/True = black/white) or float
  (``float16``/``float32``/``float64``) with every value in [0, 1].

Alpha is composited over a white background (``ALPHA_BACKGROUND``): a fully transparent pixel
reads as white, like a transparent PNG shown on a white page. Images whose longer side exceeds
``MAX_SIDE`` are downscaled with ``INTER_AREA`` (aspect kept) before any feature is computed, so
time and memory per image are bounded whatever the input size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from v22sdk import InputError

#: Longest side, in pixels, at which features are computed; larger images are area-downscaled.
MAX_SIDE = 1024
#: Grey level (in [0, 1]) that transparent pixels are composited over.
ALPHA_BACKGROUND = 1.0

_SCALE = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0}


def check_array(data: Any, source: str) -> np.ndarray:
    """Validate ``data`` as an image array and return it as a numpy array in native byte order
    (otherwise not yet converted: OpenCV reads bytes as native, and ``>u2`` must mean uint16).

    Raises :class:`InputError` for a non-array, a wrong dtype or rank, an empty image, non-finite
    values and floats outside [0, 1].
    """
    if isinstance(data, (str, bytes)) or data is None:
        raise InputError(source, f"expected an image array, got {type(data).__name__}")
    try:
        array = np.asarray(data)
    except (TypeError, ValueError) as exc:
        raise InputError(source, f"cannot read the input as an array: {exc}") from None
    if not array.dtype.isnative:  # big-endian TIFF or network data: same values, native order
        array = array.astype(array.dtype.newbyteorder("="))
    kind = array.dtype.kind
    if kind == "f" and array.dtype.itemsize > 8:
        raise InputError(source, f"unsupported float dtype {array.dtype}; use float32 or float64")
    if kind not in "fb" and array.dtype not in _SCALE:
        raise InputError(source, f"unsupported pixel dtype {array.dtype}; use uint8, uint16, bool or float in [0, 1]")
    if array.ndim not in (2, 3):
        raise InputError(source, f"an image must have shape (H, W) or (H, W, C), got shape {array.shape}")
    if array.ndim == 3 and array.shape[2] not in (1, 2, 3, 4):
        raise InputError(source, f"an image needs 1, 2, 3 or 4 channels, got {array.shape[2]} (shape {array.shape})")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise InputError(source, f"the image is empty (shape {array.shape})")
    if kind == "f":
        if not np.isfinite(array).all():
            raise InputError(source, "the image holds NaN or infinite values")
        lo, hi = float(array.min()), float(array.max())
        if lo < 0.0 or hi > 1.0:
            raise InputError(source, f"float pixels must lie in [0, 1], got values in [{lo:g}, {hi:g}]")
    return array


def to_rgb_float(array: np.ndarray) -> np.ndarray:
    """A checked array (see :func:`check_array`) as ``(H, W, 3)`` float32 RGB in [0, 1], alpha composited."""
    if array.dtype.kind == "b":
        x = array.astype(np.float32)
    elif array.dtype.kind == "f":
        x = array.astype(np.float32, copy=False)
    else:
        x = array.astype(np.float32)
        x *= np.float32(1.0 / _SCALE[array.dtype])  # in place: no second full-size array
    if x.ndim == 2:
        x = x[:, :, None]
    channels = x.shape[2]
    if channels in (2, 4):  # colour + alpha: composite over the background
        alpha = x[:, :, -1:]
        colour = x[:, :, :-1]
        x = colour * alpha + np.float32(ALPHA_BACKGROUND) * (np.float32(1.0) - alpha)
        np.clip(x, 0.0, 1.0, out=x)  # float rounding may step a hair outside [0, 1]
    if x.shape[2] == 1:  # grey: the channel copied to three (OpenCV's copy: 8× faster than np.repeat)
        import cv2

        return np.asarray(cv2.cvtColor(np.ascontiguousarray(x[:, :, 0], dtype=np.float32), cv2.COLOR_GRAY2RGB))
    return np.ascontiguousarray(x, dtype=np.float32)


def bound_size(rgb: np.ndarray, max_side: int = MAX_SIDE) -> np.ndarray:
    """Area-downscale ``(H, W, C)`` so that its longer side is at most ``max_side`` (aspect kept)."""
    import cv2

    h, w = rgb.shape[:2]
    side = max(h, w)
    if side <= max_side:
        return rgb
    scale = max_side / side
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)


def prepare(data: Any, source: str) -> np.ndarray:
    """Check, convert and bound an input: ``(H, W, 3)`` float32 RGB in [0, 1], longer side ≤ MAX_SIDE."""
    array = check_array(data, source)
    h, w = array.shape[:2]
    if max(h, w) > MAX_SIDE:
        # Downscale in the input's own dtype first, so no float32 copy of a huge array is made.
        if array.dtype.kind == "b":
            array = array.astype(np.uint8) * np.uint8(255)
        elif array.dtype == np.float16:  # OpenCV cannot resize float16
            array = array.astype(np.float32)
        array = bound_size(np.ascontiguousarray(array))
    rgb = to_rgb_float(array)
    return bound_size(rgb)
