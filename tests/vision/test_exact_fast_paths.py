"""The fast paths of the vision features give exactly the values of the plain expressions they
replace (issue 21: the default checkpoint was trained on these tokens, so no bit may move).

Each test compares a fast path with the straightforward NumPy/OpenCV expression on inputs made
here, and shows the comparison can fail (a deliberately wrong variant is told apart).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from v22sdk_vision import texture
from v22sdk_vision.colour import _column_means, _luma_percentiles
from v22sdk_vision.geometry import _holes, euler_number_8
from v22sdk_vision.histogram import count_codes


def test_gradient_table_equals_the_float_path_for_every_integer_gradient():
    """All 511² integer gradients, evaluated as the float path evaluates an image (contiguous
    128×128 float64 arrays), against the table filled on demand from them in another order."""
    g = np.arange(-255, 256, dtype=np.float64)
    gr, gc = np.repeat(g, 511), np.tile(g, 511)
    n = gr.size
    pad = (-n) % (128 * 128)
    tiles_r = np.concatenate([gr, np.zeros(pad)]).reshape(-1, 128, 128)
    tiles_c = np.concatenate([gc, np.zeros(pad)]).reshape(-1, 128, 128)
    mags, bins = [], []
    for r, c in zip(tiles_r, tiles_c):
        mag, b = texture._hog_magnitude_bin(np.ascontiguousarray(r), np.ascontiguousarray(c))
        mags.append(mag.ravel())
        bins.append(b.ravel())
    table = texture._GradientTable()
    keys = np.random.default_rng(21).permutation(n)  # filled in a scrambled order, in chunks
    for chunk in np.array_split(keys, 7):
        table.lookup(chunk)
    assert table.known.all()
    assert table.mag.tobytes() == np.concatenate(mags)[:n].tobytes()
    assert np.array_equal(table.bin, np.concatenate(bins)[:n])
    assert not np.array_equal(table.bin, np.roll(table.bin, 1))  # the comparison can fail


@pytest.mark.parametrize("seed", range(6))
def test_hog_of_uint8_equals_the_float_path(seed):
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (int(rng.integers(16, 90)), int(rng.integers(16, 90)))).astype(np.uint8)
    if seed % 2:
        img = cv2.GaussianBlur(img, (5, 5), 2.0)
    fast = texture.hog_blocks(img)
    plain = texture.hog_blocks(img.astype(np.float32))  # float input takes the float path
    assert fast.dtype == plain.dtype == np.float64
    assert fast.tobytes() == plain.tobytes()


def test_euler_number_gives_the_hole_count_of_the_labelling():
    rng = np.random.default_rng(22)
    for k in range(300):
        h, w = int(rng.integers(1, 50)), int(rng.integers(1, 50))
        mask = ((rng.random((h, w)) < rng.random()) * 255).astype(np.uint8)
        if k % 3 == 0:
            mask = cv2.dilate(mask, np.ones((2, 2), np.uint8))
        n, _ = cv2.connectedComponents(mask, connectivity=8)
        assert (n - 1) - euler_number_8(mask) == _holes(mask)
    ring = np.zeros((40, 40), np.uint8)
    cv2.circle(ring, (20, 20), 12, 255, 4)
    assert euler_number_8(ring) == 0 and _holes(ring) == 1
    ring[20, 8:33] = 255  # a bar across splits the hole in two
    assert euler_number_8(ring) == -1 and _holes(ring) == 2


def test_column_means_equal_numpys_row_after_row_sum():
    rng = np.random.default_rng(23)
    fast_path_used = 0
    for k in range(400):
        n = int(rng.integers(1, 128 * 128 + 1))
        px = rng.random((n, 3))
        if k % 4 == 1:
            px = px**12  # tiny values: the exactness condition fails, the plain path runs
        elif k % 4 == 2:
            px[rng.random((n, 3)) < 0.3] = 0.0
        px = px.astype(np.float32).astype(np.float64)
        got = _column_means(np.ascontiguousarray(px.T))
        assert got.tobytes() == px.mean(axis=0).tobytes()
        fast_path_used += k % 4 != 1
    assert fast_path_used
    # the pairwise sum of the same columns differs from the row-after-row sum in general
    px = np.random.default_rng(0).random((16384, 3)) * 1e-7 + 0.1
    assert np.ascontiguousarray(px.T).sum(axis=1).tobytes() != np.add.reduce(px, axis=0).tobytes()


def test_code_counts_equal_bincount():
    rng = np.random.default_rng(24)
    for _ in range(200):
        n = int(rng.integers(1, 257))
        codes = rng.integers(0, n, int(rng.integers(1, 70_000))).astype(np.uint8)
        got = count_codes(codes.reshape(-1, 1) if _ % 2 else codes, n)
        assert got.dtype == np.int64 and np.array_equal(got, np.bincount(codes, minlength=n))
    assert not np.array_equal(count_codes(np.array([1, 1, 2], np.uint8), 4), [0, 2, 0, 1])


def test_luma_percentiles_equal_numpys_percentile():
    rng = np.random.default_rng(25)
    for k in range(600):
        n = int(rng.choice([1, 2, 3, 100, 101, 16384, int(rng.integers(1, 20_000))]))
        y = rng.random(n)
        if k % 3 == 0:
            y = np.round(y * 10) / 10  # many ties
        ref = np.percentile(y, [1.0, 50.0, 99.0])
        assert _luma_percentiles(y.copy()).tobytes() == ref.tobytes()
    y = rng.random(1000)
    wrong = np.sort(y)[[10, 500, 989]]  # nearest order statistics, no interpolation: told apart
    assert wrong.tobytes() != _luma_percentiles(y.copy()).tobytes()
