"""The pixel embedding: 16×16 area-resized RGB (768 values) → fixed orthogonal 768→256 → unit norm.

The projection is the Q factor of the QR decomposition of a (768, 256) standard-normal matrix drawn
with ``np.random.default_rng(PROJECTION_SEED)``, with column signs fixed so that R has a positive
diagonal (this makes Q unique). Its columns are orthonormal, so distances between thumbnails are
preserved within the 256-D subspace. :func:`derive_projection` is that definition; the derived
array ships as ``data/projection.npy`` (checked against :data:`PROJECTION_SHA256` when loaded, see
:mod:`v22sdk.fixed`), so no process pays for the QR (a test derives it again and compares bits).

The flattening order is HWC with channels in RGB order, values ``/255``-equivalent in [0, 1].
A black image projects to the zero vector; it is given the direction of a uniform grey image
(the normalised projection of the all-ones vector), which is also the limit of every uniform grey
as the grey level goes to 0, so black and grey agree.
"""

from __future__ import annotations

import functools

import numpy as np

from v22sdk.fixed import load_fixed_array

#: Seed of the projection (stable across releases: changing it changes every vision embedding).
PROJECTION_SEED = 22_0768_0256
THUMB = 16
IN_DIM = THUMB * THUMB * 3
OUT_DIM = 256
#: SHA-256 of data/projection.npy (``python -m v22sdk.fixed v22sdk_vision.embed:derive_projection ...``).
PROJECTION_SHA256 = "d84e1de306b55de496677227525ea2d242c016050da36292b61eca2508b5e114"


def derive_projection() -> np.ndarray:
    """The definition of :func:`projection`: Q of the QR of a seeded (768, 256) standard normal."""
    rng = np.random.default_rng(PROJECTION_SEED)
    q, r = np.linalg.qr(rng.standard_normal((IN_DIM, OUT_DIM)))
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


@functools.cache
def projection() -> np.ndarray:
    """(768, 256) float64 matrix with orthonormal columns (read-only, cached): the shipped
    :func:`derive_projection`."""
    return load_fixed_array(__package__, "data/projection.npy", PROJECTION_SHA256)


@functools.cache
def blank_direction() -> np.ndarray:
    """Unit (256,) float64: the embedding direction of any uniform grey, used for black images."""
    v = np.ones(IN_DIM) @ projection()
    v = v / np.linalg.norm(v)
    v.flags.writeable = False
    return v


def thumbnail(rgb: np.ndarray) -> np.ndarray:
    """(H, W, 3) float32 RGB in [0, 1] → (768,) float64: 16×16 INTER_AREA resize, HWC flattened."""
    import cv2

    small = cv2.resize(rgb, (THUMB, THUMB), interpolation=cv2.INTER_AREA)
    return small.reshape(-1).astype(np.float64)


def embed(rgb: np.ndarray) -> np.ndarray:
    """(H, W, 3) float32 RGB in [0, 1] → (256,) float32 with unit L2 norm."""
    v = thumbnail(rgb) @ projection()
    norm = float(np.sqrt(v @ v))
    if norm < 1e-12:
        v = blank_direction()
    else:
        v = v / norm
    return v.astype(np.float32)
