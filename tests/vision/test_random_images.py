"""Hypothesis over random images: tokenization never crashes and every raw value is in bounds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from v22sdk_vision import VisionModality
from v22sdk_vision.features import feature_groups
from v22sdk_vision.pixels import prepare
from v22sdk_vision.sample_images import image_strategy, make_image

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_values(image) -> None:
    groups = feature_groups(prepare(image, "<test>"))
    for group, named in groups.items():
        for name, value in named.items():
            # unclipped: each feature's own scaling must already land in [-1, 1]
            assert np.isfinite(value) and -1.0 <= value <= 1.0, (group, name, value)


@SETTINGS
@given(image_strategy())
def test_random_images_tokenize_and_stay_in_bounds(image):
    batch = VisionModality().tokenize(image)
    assert len(batch) == 1
    check_values(image)


@settings(max_examples=15, deadline=None)
@given(image_strategy(max_side=40), st.sampled_from([2, 3, 4]))
def test_random_images_with_grid(image, grid):
    batch = VisionModality(grid=grid).tokenize(image)
    assert len(batch) == 1 + grid * grid
    boxes = batch.offsets["box"]
    h, w = image.shape[:2]
    assert (boxes[:, 0] >= 0).all() and (boxes[:, 2] <= w).all() and (boxes[:, 3] <= h).all()


@pytest.mark.parametrize("shape", [(1, 1), (1, 2000), (2000, 1), (3000, 4000, 3), (5, 5, 4)])
@pytest.mark.parametrize("kind", ["constant", "noise"])
def test_extreme_shapes(shape, kind):
    image = make_image(kind, shape[0], shape[1], shape[2] if len(shape) == 3 else 0, "uint8", 11)
    VisionModality().tokenize(image)
    check_values(image)


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32", "float64"])
def test_same_picture_in_every_dtype_gives_close_tokens(dtype):
    base = make_image("disc", 64, 64, 3, "float64", 4)
    ref = VisionModality().tokenize(np.round(base * 255).astype(np.uint8))
    image = make_image("disc", 64, 64, 3, dtype, 4)
    other = VisionModality().tokenize(image)
    assert np.abs(ref.emb - other.emb).max() < 1e-2
