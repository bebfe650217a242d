"""Decode an image file into an RGB(A) array with OpenCV, deliberately and defensively.

* The file is read as bytes and decoded with ``cv2.imdecode`` (no path-encoding issues, and the
  bytes are checked first, see :mod:`.headers`).
* ``IMREAD_UNCHANGED`` keeps 16-bit depth, grey and alpha, but it also skips EXIF orientation, so
  the orientation tag is read from the bytes and applied here (the 8 EXIF cases, by transposes
  and flips) for JPEG, PNG and WebP. TIFF is the exception: OpenCV's TIFF decoder applies its
  Orientation tag itself whatever the flags, so it is not applied twice. Files decoded at reduced size use ``IMREAD_REDUCED_COLOR_n | IMREAD_IGNORE_ORIENTATION``
  so orientation is applied in exactly one place whatever the path.
* Memory is bounded in bytes, not pixels: the header is read first (:func:`.headers.layout`:
  size, channels, bit depth, and the buffers the decoding library adds: libtiff strips, the
  coefficients of a progressive JPEG, libwebp's lossless ARGB plane) and :func:`estimate` of the
  peak (file bytes + decoded pixels, twice when an EXIF rotation copies them, + library buffers +
  ``FEATURE_BYTES`` for the features) must fit the decode budget of :mod:`v22sdk.decoding` (512 MiB
  by default), else :class:`~v22sdk.decoding.InputTooLarge` before anything is decoded. A JPEG
  whose longer side exceeds ``2 * MAX_SIDE`` is decoded at 1/2, 1/4 or 1/8 scale by libjpeg itself
  (the largest reduction that keeps the longer side at least ``MAX_SIDE``); whatever is decoded
  is converted in place and area-downscaled to ``MAX_SIDE`` (see :mod:`.pixels`).
* Zero-size, unknown, corrupt and truncated files raise :class:`InputError` naming the file.
  OpenCV returns a partial image for a truncated JPEG, so truncation is checked on the bytes.

The returned array is what :meth:`VisionModality.encode` accepts: ``(H, W)`` grey, ``(H, W, 3)``
RGB or ``(H, W, 4)`` RGBA, ``uint8`` or ``uint16`` (float32 for float TIFFs, clipped to [0, 1]).
"""

from __future__ import annotations

import os

import numpy as np

from v22sdk import InputError
from v22sdk.decoding import check_budget, check_regular_file, human, library_stderr

from . import headers
from .pixels import MAX_SIDE, bound_size

#: Memory the features of one image use besides its pixels (measured: at most 45 MiB, for a
#: 1024x1024 16-bit RGBA image with an 8x8 grid), counted in every estimate.
FEATURE_BYTES = 64 << 20
#: File formats accepted, by magic bytes.
FORMATS = ("png", "jpeg", "bmp", "webp", "tiff")


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    source = str(path)
    if os.path.exists(path) and not os.path.isdir(path):
        check_regular_file(path)  # a FIFO would block, a device never end
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            check_budget(source, size + FEATURE_BYTES, f"a file of {human(size)}")
            buf = fh.read()
    except FileNotFoundError:
        raise InputError(source, "no such file") from None
    except IsADirectoryError:
        raise InputError(source, "is a directory, not an image file") from None
    except OSError as exc:
        raise InputError(source, f"cannot read the file: {exc.strerror or exc}") from None
    if not buf:
        raise InputError(source, "the file is empty (0 bytes)")
    return buf


def apply_orientation(image: np.ndarray, orientation: int) -> np.ndarray:
    """Apply EXIF orientation 1..8 to an ``(H, W[, C])`` array (returns a contiguous array)."""
    if orientation == 2:
        image = image[:, ::-1]
    elif orientation == 3:
        image = image[::-1, ::-1]
    elif orientation == 4:
        image = image[::-1, :]
    elif orientation == 5:
        image = image.swapaxes(0, 1)
    elif orientation == 6:  # rotate 90° clockwise
        image = image.swapaxes(0, 1)[:, ::-1]
    elif orientation == 7:
        image = image.swapaxes(0, 1)[::-1, ::-1]
    elif orientation == 8:  # rotate 90° counter-clockwise
        image = image.swapaxes(0, 1)[::-1, :]
    return np.ascontiguousarray(image)


def _reduction(fmt: str, size: tuple[int, int] | None) -> int:
    """libjpeg's decode-time reduction factor (1, 2, 4 or 8) for a JPEG of header ``size``."""
    if fmt != "jpeg" or size is None:
        return 1
    side = max(size)
    factor = 1
    while factor < 8 and side // (factor * 2) >= MAX_SIDE:
        factor *= 2
    return factor


def estimate(lay: headers.Layout, file_bytes: int, factor: int = 1, orientation: int = 1) -> int:
    """Peak bytes of decoding a file of ``lay`` (see the module doc), at libjpeg's ``factor``.

    Measured on OpenCV 5.0: ``imdecode`` holds twice its output at its peak (a decode buffer and
    the returned array) for every format, plus the library's own buffers (``lay.work_bytes``);
    then an EXIF rotation copies the output once. The features add ``FEATURE_BYTES``.
    """
    w, h = -(-lay.width // factor), -(-lay.height // factor)
    out = w * h * (3 if factor > 1 else lay.channels) * lay.sample_bytes
    convert = out // 2 if lay.fmt == "tiff" and lay.sample_bytes == 8 else 0  # float64 -> float32
    decoding = file_bytes + 2 * out + lay.work_bytes
    converting = out * (1 if orientation == 1 else 2) + convert
    return max(decoding, converting) + FEATURE_BYTES


def _decode(buf: bytes, source: str) -> tuple[np.ndarray, int]:
    """The decoded array as OpenCV returns it and the EXIF orientation still to apply."""
    import cv2

    fmt = headers.sniff(buf)
    if fmt is None:
        if buf[:6] in (b"GIF87a", b"GIF89a"):
            raise InputError(source, "is a GIF image, which is not supported; convert it to PNG")
        raise InputError(source, "not a PNG, JPEG, BMP, WebP or TIFF file (unknown magic bytes)")
    problem = headers.truncation(buf)
    if problem:
        raise InputError(source, problem)
    lay = headers.layout(buf)
    if lay is None:
        raise InputError(source, f"the {fmt} header cannot be read (the file is damaged or cut short)")
    if lay.width <= 0 or lay.height <= 0:
        raise InputError(source, f"the {fmt} header declares an empty image ({lay.width}x{lay.height})")
    factor = _reduction(fmt, (lay.width, lay.height))
    # OpenCV's TIFF decoder (libtiff) applies the Orientation tag itself, in every mode and depth
    # (checked on 4.14 and 5.0); every other format needs it applied here.
    orientation = 1 if fmt == "tiff" else headers.exif_orientation(buf)
    check_budget(source, estimate(lay, len(buf), factor, orientation), lay.what)
    flags = cv2.IMREAD_UNCHANGED
    if factor > 1:
        flags = {2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}[
            factor
        ] | cv2.IMREAD_IGNORE_ORIENTATION
    with library_stderr() as said:
        try:
            image = cv2.imdecode(np.frombuffer(buf, dtype=np.uint8), flags)
        except cv2.error as exc:
            raise InputError(source, f"the {fmt} file is corrupt: {str(exc).strip().splitlines()[-1]}") from None
        # libjpeg fills what is missing from a cut scan with grey and only warns: not the image
        cut = [ln for ln in said.text().splitlines() if "premature end" in ln.lower()]
    if cut:
        raise InputError(source, f"the {fmt} file is corrupt or cut short ({cut[0].strip()})")
    if image is None or image.size == 0:
        raise InputError(source, f"the {fmt} file is corrupt or unsupported (OpenCV could not decode it)")
    return image, orientation


def decode_bytes(buf: bytes, source: str) -> np.ndarray:
    """Decode image-file bytes into an RGB(A)/grey array, oriented and bounded (see module doc)."""
    image, orientation = _decode(buf, source)
    return _normalise(image, orientation, source)


def _normalise(image: np.ndarray, orientation: int, source: str) -> np.ndarray:
    """OpenCV's BGR(A) in uint8/uint16/float to our RGB(A) array, oriented and size-bounded."""
    import cv2

    # Every step works in place: no second full-size copy of a large image.
    if image.dtype not in (np.uint8, np.uint16):
        if image.dtype.kind != "f":  # e.g. int32 or int8 TIFF: rare; refuse rather than guess a range
            raise InputError(source, f"unsupported sample type {image.dtype} in the file")
        image = image.astype(np.float32, copy=False)
        np.nan_to_num(image, copy=False, nan=0.0, posinf=1.0, neginf=0.0)
        np.clip(image, 0.0, 1.0, out=image)
    if image.ndim == 3:
        channels = image.shape[2]
        if channels == 1:
            image = image[:, :, 0]
        elif channels == 3:
            image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB, dst=image)
        elif channels == 4:
            image = cv2.cvtColor(image, cv2.COLOR_BGRA2RGBA, dst=image)
        else:
            raise InputError(source, f"unsupported channel count {channels} in the file")
    image = apply_orientation(image, orientation)
    return bound_size(image)


def load_image(path: str | os.PathLike[str]) -> np.ndarray:
    """Read and decode the image file at ``path`` (see :func:`decode_bytes`); the file's bytes
    are released before the decoded pixels are converted."""
    buf = read_bytes(path)
    image, orientation = _decode(buf, str(path))
    del buf
    return _normalise(image, orientation, str(path))
