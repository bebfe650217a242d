"""Write an image array as a PNG file that :func:`.decode.load_image` reads back (``VisionModality.save``).

8-bit and bool images are written as 8-bit PNG, uint16 and float images as 16-bit PNG (float
``[0, 1]`` scaled by 65535 and rounded); channel order RGB(A) in the array, BGR(A) in the file as
OpenCV writes it. PNG holds grey, RGB and RGBA, so a grey + alpha ``(H, W, 2)`` image is written as
RGBA. The kit's ``check_files`` uses it to make test files.
"""

from __future__ import annotations

import os

import numpy as np

from v22sdk import InputError

from .pixels import check_array


def save_png(data: object, path: str | os.PathLike[str]) -> None:
    import cv2

    array = check_array(data, str(path))
    if array.dtype.kind == "b":
        pixels = array.astype(np.uint8) * np.uint8(255)
    elif array.dtype.kind == "f":
        pixels = np.round(array.astype(np.float64) * 65535.0).astype(np.uint16)
    else:
        pixels = np.ascontiguousarray(array)
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    elif pixels.ndim == 3 and pixels.shape[2] == 2:
        grey, alpha = pixels[:, :, :1], pixels[:, :, 1:]
        pixels = np.concatenate([grey, grey, grey, alpha], axis=2)
    if pixels.ndim == 3:
        pixels = cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR if pixels.shape[2] == 3 else cv2.COLOR_RGBA2BGRA)
    ok, buf = cv2.imencode(".png", np.ascontiguousarray(pixels))
    if not ok:
        raise InputError(str(path), "OpenCV could not encode the image as PNG")
    with open(path, "wb") as fh:
        fh.write(buf.tobytes())
