"""Pixels in non-native byte order (big-endian TIFF, network buffers) are the same image.

Found by the contract kit's layout rule (check_edge_inputs, issue 17): vision refused big-endian
uint16 (its dtype table was keyed byte-order sensitively), and on the large-image path OpenCV
reads an array's bytes as native, so swapped pixels would have been misread.
"""

from __future__ import annotations

import numpy as np
import pytest
from v22sdk_vision import VisionModality
from v22sdk_vision.pixels import check_array

from v22sdk import InputError


def swapped(array: np.ndarray) -> np.ndarray:
    """The same values stored in the other byte order."""
    other = array.astype(array.dtype.newbyteorder("S"))
    assert not other.dtype.isnative and np.array_equal(other, array)
    return other


def image(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    rng = np.random.default_rng(20261130)
    if np.dtype(dtype).kind == "u":
        return rng.integers(0, np.iinfo(dtype).max, shape, endpoint=True).astype(dtype)
    return rng.random(shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["uint16", "float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(37, 53, 3), (29, 41), (1100, 40, 3)], ids=["rgb", "grey", "large"])
@pytest.mark.parametrize("grid", [0, 2])
def test_swapped_pixels_give_the_native_tokens(dtype, shape, grid):
    native = image(dtype, shape)
    modality = VisionModality(grid=grid)
    expected, got = modality.tokenize(native), modality.tokenize(swapped(native))
    assert np.array_equal(got.emb, expected.emb) and np.array_equal(got.attr, expected.attr)
    assert np.array_equal(got.offsets["box"], expected.offsets["box"])


def test_check_array_returns_native_order_and_keeps_rejecting_bad_values():
    native = image("uint16", (5, 6))
    out = check_array(swapped(native), "<test>")
    assert out.dtype == np.dtype("uint16") and out.dtype.isnative and np.array_equal(out, native)
    bad = np.full((4, 4), 1.5, dtype=">f4")  # outside [0, 1] in either byte order
    with pytest.raises(InputError, match=r"\[0, 1\]|outside"):
        check_array(bad, "<test>")
    nan = np.zeros((4, 4), dtype=">f8")
    nan[1, 1] = np.nan
    with pytest.raises(InputError):
        check_array(nan, "<test>")
