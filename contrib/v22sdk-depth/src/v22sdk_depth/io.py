"""Reading depth files into a :class:`~v22sdk.Sample` of depth plus its ``depth_scale``.

Formats:

* ``.png`` — a single-channel **16-bit** PNG; each value is ``png_depth_scale`` metres
  (default 0.001: millimetres, as Kinect/RealSense/TUM-style maps are stored; 0 = hole).
  8-bit or colour PNGs are rejected: they are images, not depth maps.
* ``.npz`` — one array named ``depth`` *or* ``disparity`` plus scalar unit arrays:
  ``depth`` needs ``depth_scale`` (metres per unit); ``disparity`` (pixels) needs ``focal_px``
  and ``baseline_m`` (optional ``doffs_px``) and is converted to metres by
  ``Z = focal_px · baseline_m / (d + doffs_px)``.
* ``.npy`` — one array; the same unit keys (and ``"kind": "depth" | "disparity"``) come from a
  JSON side-car file next to it: ``name.npy.json`` or ``name.json``.

Non-finite values in files (NaN is the usual "no data" marker of disparity maps) and
non-positive depths or disparities become holes (0). Anything unreadable raises
:class:`~v22sdk.InputError` naming the file.

Every file is read header first (the PNG's IHDR, the ``.npy`` headers inside an ``.npz``): an
8-bit or colour PNG is refused before it is decoded, and so is any map whose decoding and
features would need more memory than the decode budget (:mod:`v22sdk.decoding`, 512 MiB by
default; the features take about ``BYTES_PER_PIXEL`` bytes per pixel, at full resolution).
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from v22sdk import InputError, Sample, UnitsError
from v22sdk.decoding import check_budget, load_npy, load_npz

from .features import disparity_to_depth

#: Peak bytes per pixel of the depth features (float64 metres, masks, log depth, plane fit),
#: measured at 43-49 on 1-9 MP maps; plus the decoded array itself and ``BASE_BYTES``.
BYTES_PER_PIXEL = 56
BASE_BYTES = 16 << 20
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_PNG_COLOURS = {0: "grey", 2: "RGB", 3: "palette", 4: "grey+alpha", 6: "RGBA"}


def _array_need(shape: tuple[int, ...], dtype: np.dtype) -> int:
    """Peak bytes of loading an array of ``shape`` and computing the features of its (H, W) map."""
    return math.prod(shape) * dtype.itemsize + BYTES_PER_PIXEL * math.prod(shape[:2]) + BASE_BYTES


def load_depth(path: str | os.PathLike[str], *, png_depth_scale: float = 0.001) -> Sample:
    p = Path(path)
    src = str(path)
    suffix = p.suffix.lower()
    if not p.is_file():
        raise InputError(src, "no such file")
    if suffix == ".png":
        return Sample(_read_png(p, src), {"depth_scale": png_depth_scale}, src)
    if suffix == ".npz":
        arrays = load_npz(p, src, estimate=lambda heads: sum(_array_need(*h) for h in heads.values()))
        meta = {k: v for k, v in arrays.items() if k not in ("depth", "disparity")}
        kinds = [k for k in ("depth", "disparity") if k in arrays]
        if len(kinds) != 1:
            raise InputError(src, f"a depth .npz holds exactly one array named 'depth' or 'disparity'; "
                                  f"found {sorted(arrays)}")
        return _from_array(arrays[kinds[0]], kinds[0], meta, src)
    if suffix == ".npy":
        array = load_npy(p, src, estimate=_array_need)
        meta = _sidecar(p, src)
        return _from_array(array, str(meta.pop("kind", "depth")), meta, src)
    raise InputError(src, f"unsupported depth file type {suffix!r} (expected .png, .npy or .npz)")


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_is_depth(head: bytes) -> bool:
    """Whether a file's first bytes are a PNG header of one 16-bit grey channel (colour type 0,
    bit depth 16): the only PNG a depth map is stored as. IHDR is the first chunk of every PNG:
    signature (8 bytes), length and "IHDR" (8), width, height (8), bit depth (1), colour type (1)."""
    return (len(head) >= 26 and head[:8] == _PNG_SIGNATURE and head[12:16] == b"IHDR"
            and head[24] == 16 and head[25] == 0)


def _read_png(p: Path, src: str) -> np.ndarray:
    import cv2

    with open(p, "rb") as fh:
        head = fh.read(33)
        size = os.fstat(fh.fileno()).st_size
        if len(head) < 26 or not head.startswith(_PNG_MAGIC) or head[12:16] != b"IHDR":
            raise InputError(src, "not a readable PNG (empty, truncated or not a PNG)")
        w, h, depth, colour = struct.unpack(">IIBB", head[16:26])
        # From the header: an image is refused before a single pixel of it is decoded.
        if colour != 0:
            raise InputError(src, f"a depth PNG has one channel; this one is {_PNG_COLOURS.get(colour, 'colour')} "
                                  "(a colour image?)")
        if depth != 16:
            raise InputError(src, f"a depth PNG is 16-bit; this one is {depth}-bit (an image, not a depth map)")
        check_budget(src, size + 2 * w * h + BYTES_PER_PIXEL * w * h + BASE_BYTES,
                     f"a {w}x{h} 16-bit depth PNG")
        fh.seek(0)
        raw = np.frombuffer(fh.read(), dtype=np.uint8)
    image = cv2.imdecode(raw, cv2.IMREAD_UNCHANGED)
    del raw
    if image is None:
        raise InputError(src, "not a readable PNG (empty, truncated or not a PNG)")
    if image.ndim != 2:
        raise InputError(src, f"a depth PNG has one channel; this one has {image.shape[2]} (a colour image?)")
    if image.dtype != np.uint16:
        raise InputError(src, f"a depth PNG is 16-bit; this one is {image.dtype} (an 8-bit image, not a depth map)")
    return image


def _sidecar(p: Path, src: str) -> dict[str, Any]:
    for candidate in (p.with_name(p.name + ".json"), p.with_suffix(".json")):
        if candidate.is_file():
            try:
                meta = json.loads(candidate.read_text())
            except (OSError, ValueError) as exc:
                raise InputError(str(candidate), f"unreadable units side-car: {exc}") from None
            if not isinstance(meta, dict):
                raise InputError(str(candidate), "the units side-car must be a JSON object")
            return meta
    raise UnitsError(src, f"a .npy depth array needs its units in {p.name}.json or {p.stem}.json "
                          f"(depth_scale, or kind=disparity with focal_px and baseline_m)")


def _scalar(meta: Mapping[str, Any], key: str, src: str) -> float:
    if key not in meta:
        raise UnitsError(src, f"missing unit {key!r} in the file's metadata")
    try:
        value = float(np.asarray(meta[key]).reshape(()))
    except (TypeError, ValueError):
        raise UnitsError(src, f"unit {key!r} must be one number, got {meta[key]!r}") from None
    if not np.isfinite(value):
        raise UnitsError(src, f"unit {key!r} is not finite")
    return value


def _from_array(array: np.ndarray, kind: str, meta: Mapping[str, Any], src: str) -> Sample:
    if array.dtype.kind not in "uif":
        raise InputError(src, f"dtype {array.dtype} is not a depth or disparity dtype")
    if array.ndim != 2 or array.size == 0:
        raise InputError(src, f"expected a non-empty 2-D (H, W) array, got shape {array.shape}")
    if kind == "depth":
        scale = _scalar(meta, "depth_scale", src)
        if array.dtype.kind == "f":
            array = np.where(np.isfinite(array), array, 0).astype(array.dtype)
        return Sample(array, {"depth_scale": scale}, src)
    if kind == "disparity":
        focal, baseline = _scalar(meta, "focal_px", src), _scalar(meta, "baseline_m", src)
        doffs = _scalar(meta, "doffs_px", src) if "doffs_px" in meta else 0.0
        if focal <= 0 or baseline <= 0:
            raise UnitsError(src, f"focal_px ({focal:g}) and baseline_m ({baseline:g}) must be positive")
        return Sample(disparity_to_depth(array, focal, baseline, doffs), {"depth_scale": 1.0}, src)
    raise InputError(src, f"unknown array kind {kind!r} (expected 'depth' or 'disparity')")
