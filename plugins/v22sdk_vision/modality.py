"""The built-in ``vision`` modality: images → one global token (+ an optional grid of patch tokens).

Per token: ``emb`` = 16×16 RGB thumbnail through a fixed orthogonal 768→256 projection
(:mod:`.embed`); ``attr`` = the 128 named ``vis.*`` slots of the vision zone (:mod:`.slots`).
``offsets["box"]`` gives each token's box ``x0, y0, x1, y1`` (x1, y1 exclusive) in pixels of the
input array (for a file: of the decoded, oriented image); the global token's box is the whole image.

This module imports numpy and attrs only; OpenCV is imported inside the functions that use it.
"""

from __future__ import annotations

import os
from typing import Any

import attrs
import numpy as np

from v22sdk import ATTR_DIM, Encoding, InputSpec, Modality, Sample

from .slots import SCHEMA

MAX_GRID = 8
_SLOT_INDEX = SCHEMA.indices  # where the 128 attributes go in the 384 slots (built once, not per image)


def _check_grid(_instance: Any, _attribute: Any, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_GRID or value == 1:
        raise ValueError(f"grid must be 0 (global token only) or an integer 2..{MAX_GRID}, got {value!r}")


def patch_edges(n: int, grid: int) -> np.ndarray:
    """(grid, 2) int64 [start, stop) of ``grid`` near-equal parts of ``n`` pixels, each ≥ 1 pixel."""
    starts = (np.arange(grid, dtype=np.int64) * n) // grid
    stops = (np.arange(1, grid + 1, dtype=np.int64) * n) // grid
    starts = np.minimum(starts, n - 1)
    stops = np.maximum(stops, starts + 1)
    return np.stack([starts, stops], axis=1)


@attrs.frozen
class VisionModality(Modality):
    """Images (PNG, JPEG, BMP, WebP, TIFF files, or arrays) → vision tokens.

    ``grid``: 0 gives one global token per image; ``g`` in 2..8 adds g² patch tokens after it, in
    row-major order (top-left first), each computed on its own crop.
    """

    name = "vision"
    #: the tokenizer's version: bumped whenever the tokens of some input change. 0.2.0: hue mean and
    #: concentration over the coloured pixels only (a grey image has no hue, whatever its storage)
    version = "0.2.0"
    extensions = (".png", ".jpg", ".jpeg", ".jpe", ".bmp", ".dib", ".webp", ".tif", ".tiff")
    priority = 10  # built-in: keeps its extensions when a plugin also claims them (plugins.py)
    schema = SCHEMA
    input_spec = InputSpec(
        kind="array",
        dtypes=("u", "f", "b"),
        ndim=(2, 3),
        units=(),
        description="(H, W) grey, (H, W, 3) RGB or (H, W, 4) RGBA (also (H, W, 1), (H, W, 2) grey+alpha); "
        "uint8, uint16, bool or float in [0, 1]. Arrays are RGB, not BGR.",
    )

    grid: int = attrs.field(default=0, validator=_check_grid)

    def load(self, path: str | os.PathLike[str]) -> Sample:
        """Decode an image file (see :mod:`.decode`) into RGB(A)/grey pixels; InputError if unreadable."""
        from .decode import load_image

        return Sample(data=load_image(path), units={}, source=str(path))

    def save(self, sample: Sample, path: str | os.PathLike[str]) -> None:
        """Write the image as a PNG file that :meth:`load` reads back (see :mod:`.save`)."""
        from .save import save_png

        save_png(sample.data, path)

    def encode(self, data: Any, **units: float) -> Encoding:
        from .embed import embed
        from .features import attributes
        from .pixels import check_array, prepare

        source = "<vision array>"
        array = check_array(data, source)
        height, width = array.shape[:2]
        rgb = prepare(array, source)
        crops = [(rgb, np.array([0, 0, width, height], dtype=np.int64))]
        if self.grid:
            h, w = rgb.shape[:2]
            ys, xs = patch_edges(height, self.grid), patch_edges(width, self.grid)
            ys_w, xs_w = patch_edges(h, self.grid), patch_edges(w, self.grid)
            for r in range(self.grid):
                for c in range(self.grid):
                    crop = rgb[ys_w[r, 0] : ys_w[r, 1], xs_w[c, 0] : xs_w[c, 1]]
                    box = np.array([xs[c, 0], ys[r, 0], xs[c, 1], ys[r, 1]], dtype=np.int64)
                    crops.append((np.ascontiguousarray(crop), box))
        n = len(crops)
        emb = np.empty((n, 256), dtype=np.float32)
        attr = np.zeros((n, ATTR_DIM), dtype=np.float32)
        idx = _SLOT_INDEX
        for i, (crop, _box) in enumerate(crops):  # one token per crop: at most 1 + 64 of them
            emb[i] = embed(crop)
            attr[i, idx] = attributes(crop).astype(np.float32)
        boxes = np.stack([box for _crop, box in crops])
        return Encoding(emb=emb, attr=attr, offsets={"box": boxes})

    @classmethod
    def sample_inputs(cls) -> Any:
        """Hypothesis strategy of valid images: 1×1 to 96×128, grey/RGB/RGBA, uint8/uint16/float,
        constant, noise, gradients and discs (arrays are generated from a drawn seed, so large
        noise images cost nothing to shrink)."""
        from .sample_images import image_strategy

        return image_strategy().map(lambda a: Sample(a, {}, None))

    def invalid_inputs(self, valid: Sample) -> list[tuple[str, Sample]]:
        cases = super().invalid_inputs(valid)
        data = np.asarray(valid.data)
        units, src = valid.units, valid.source
        rgb = np.zeros(data.shape[:2] + (3,), dtype=np.float32)
        cases += [
            ("out_of_range", Sample(rgb + 1.5, units, src)),
            ("out_of_range", Sample(rgb - 0.5, units, src)),
            ("wrong_dtype", Sample(np.zeros(data.shape[:2], dtype=np.int32), units, src)),
            ("wrong_channels", Sample(np.zeros(data.shape[:2] + (5,), dtype=np.uint8), units, src)),
            ("wrong_dtype", Sample("image.png", units, src)),
        ]
        return cases
