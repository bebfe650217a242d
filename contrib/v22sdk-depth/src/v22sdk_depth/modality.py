"""The depth modality: a depth map → one token in the vision zone.

Input to :meth:`DepthModality.tokenize`: a finite (H, W) array of unsigned/signed integers or
floats, plus the unit ``depth_scale`` (metres per unit of the array). Values ``<= 0`` are holes
(no measurement), and so are depths outside [1 µm, 10⁹ m]. Files: see :mod:`v22sdk_depth.io`
(16-bit PNG in millimetres by default, ``.npy``/``.npz`` depth or disparity with their units).

Output: one token. ``emb`` is the fixed orthogonal projection (seed
:data:`~v22sdk_depth.features.PROJECTION_SEED`) of the 16×16 grid of mean log depth, made
zero-mean and unit-std (so it encodes the *shape* of the scene; distances are in the slots), then
L2-normalised; a map without depth variation gets the documented ``flat_embedding()``.
``attr`` holds the ``depth.*`` slots of :data:`~v22sdk_depth.slots.SCHEMA`.
``offsets["box"]`` is the whole map ``[0, 0, W, H]``.
"""

from __future__ import annotations

import os
from typing import Any

import attrs
import numpy as np

from v22sdk import Encoding, InputError, InputSpec, Modality, Sample, Unit

from . import features
from .slots import SCHEMA


def _positive(instance: Any, attribute: attrs.Attribute, value: float) -> None:
    if not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0):
        raise ValueError(f"{attribute.name} must be a positive number, got {value!r}")


@attrs.frozen
class DepthModality(Modality):
    """Depth maps (metres after ``depth_scale``) → one vision-zone token per map."""

    name = "depth"
    extensions = (".png", ".npy", ".npz")
    schema = SCHEMA
    input_spec = InputSpec(
        kind="array", dtypes=("u", "i", "f"), ndim=(2,),
        units=(Unit("depth_scale", "m", 1e-9, 1e3, "metres per unit of the depth array"),),
        description="(H, W) depth map; values <= 0 are holes",
    )

    #: Pixels nearer than this (metres) count in ``depth.near_frac``.
    near_m: float = attrs.field(default=1.0, validator=_positive)
    #: Pixels farther than this (metres) count in ``depth.far_frac``.
    far_m: float = attrs.field(default=5.0, validator=_positive)
    #: Horizontal field of view assumed for the plane fit (degrees); only slant/normal depend on it.
    fov_deg: float = attrs.field(default=60.0, validator=_positive)
    #: Metres per unit of a 16-bit PNG (0.001: millimetres, the common sensor convention).
    png_depth_scale: float = attrs.field(default=0.001, validator=_positive)

    @classmethod
    def sniff(cls, path: str | os.PathLike[str], head: bytes) -> bool | None:
        """A PNG is a depth map when its header says one 16-bit grey channel (what :meth:`load`
        reads); any other PNG is an image for the vision modality. Other files: cannot tell."""
        from .io import png_is_depth

        return png_is_depth(head) if str(path).lower().endswith(".png") else None

    def load(self, path: str | os.PathLike[str]) -> Sample:
        from .io import load_depth

        return load_depth(path, png_depth_scale=self.png_depth_scale)

    def encode(self, data: Any, *, depth_scale: float) -> Encoding:
        source = "<depth array>"
        z = _as_depth(data, depth_scale, source)
        grid = features.depth_grid(np.log(np.where(z > 0, z, 1.0)), z > 0)
        emb = features.embed(grid)[None, :].astype(np.float32)
        stats = features.statistics(z, near_m=self.near_m, far_m=self.far_m, fov_deg=self.fov_deg)
        attr = SCHEMA.vector({f"depth.{k}": v for k, v in stats.items()})
        # Least-squares round-off (~1e-16 where the true value is 0) would show up in `explain`.
        attr[np.abs(attr) < 1e-9] = 0.0
        h, w = z.shape
        return Encoding(emb=emb, attr=attr[None, :],
                        offsets={"box": np.array([[0, 0, w, h]], dtype=np.int64)})

    @classmethod
    def sample_inputs(cls):
        """Valid depth maps: raw arrays of each accepted dtype (with holes) and synthetic scenes."""
        from hypothesis import strategies as st
        from hypothesis.extra import numpy as hnp

        shapes = hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=40)
        raw = st.one_of(
            hnp.arrays(np.uint16, shapes, elements=st.integers(0, 65535)),
            hnp.arrays(np.int32, shapes, elements=st.integers(-10, 100_000)),
            hnp.arrays(np.float32, shapes, elements=st.floats(0.0, 100.0, width=32)),
            hnp.arrays(np.float64, shapes, elements=st.floats(-1.0, 1e4)),
        )
        scenes = st.builds(
            _scene, st.sampled_from(["plane", "sphere", "step"]), st.integers(8, 48), st.integers(8, 48),
            st.floats(0.3, 20.0), st.floats(-0.6, 0.6), st.floats(-0.6, 0.6),
        )
        return st.builds(
            lambda data, scale: Sample(data, {"depth_scale": scale}, "<depth array>"),
            st.one_of(raw, scenes), st.sampled_from([0.001, 0.01, 1.0]),
        )


def _as_depth(data: Any, depth_scale: float, source: str) -> np.ndarray:
    """Validate ``data`` and return depth in metres, (H, W) float64, holes as 0."""
    if not isinstance(data, np.ndarray):
        raise InputError(source, f"expected a numpy array, got {type(data).__name__}")
    if data.dtype.kind not in "uif":
        raise InputError(source, f"dtype {data.dtype} is not a depth dtype (unsigned, signed int or float)")
    if data.ndim != 2:
        raise InputError(source, f"expected a 2-D (H, W) depth map, got {data.ndim}-D shape {data.shape}")
    if data.size == 0:
        raise InputError(source, f"the depth map is empty (shape {data.shape})")
    z = data.astype(np.float64)
    if not np.isfinite(z).all():
        raise InputError(source, "the depth map holds NaN or infinite values; mark holes with 0 "
                                 "(files with NaN holes are converted by load())")
    with np.errstate(over="ignore"):
        z = z * depth_scale
    if not np.isfinite(z).all():
        raise InputError(source, f"depth × depth_scale ({depth_scale:g}) overflows float64")
    # Outside [1 µm, 10⁹ m] a value is no physical depth (and 1/Z or Z² would overflow): a hole.
    z[(z < features.MIN_DEPTH_M) | (z > features.MAX_DEPTH_M)] = 0.0
    return z


def _scene(kind: str, h: int, w: int, distance: float, nx: float, ny: float) -> np.ndarray:
    """A synthetic float32 depth map (metres) of a plane, a sphere or a step, for sample_inputs()."""
    from .synthetic import plane, sphere, step

    if kind == "plane":
        return plane(h, w, normal=(nx, ny, 1.0), distance=distance).astype(np.float32)
    if kind == "sphere":
        return sphere(h, w, centre_m=distance + 1.0, radius_m=1.0).astype(np.float32)
    return step(h, w, near_m=distance, far_m=distance * 2.0).astype(np.float32)
