"""The vision modality against the contract kit, plus contract facts the kit cannot know."""

from __future__ import annotations

import json

import numpy as np
import pytest
from v22sdk_vision import SCHEMA, VisionModality
from v22sdk_vision.embed import blank_direction, projection
from v22sdk_vision.sample_images import make_image

from v22sdk import InputError, TokenBatch, get_registry
from v22sdk.testing import parametrize_with_checks


@parametrize_with_checks([VisionModality()])
def test_contract_kit(modality, check):
    check(modality)


@pytest.mark.slow
@parametrize_with_checks([VisionModality(grid=2)])
def test_contract_kit_grid(modality, check):
    check(modality)


def test_registered_through_entry_point():
    registry = get_registry()
    assert "vision" in registry.names("modalities")
    assert not [b for b in registry.broken if "vision" in str(b)]


def test_schema_has_128_named_slots_in_the_vision_zone():
    assert len(SCHEMA) == 128
    assert SCHEMA.zone == "vision"
    assert SCHEMA.indices.tolist() == list(range(128, 256))
    groups = {name.split(".")[1] for name in SCHEMA.names}
    assert groups == {"color", "geometry", "texture", "space"}
    assert all(slot.scaling and slot.meaning for slot in SCHEMA)


def test_shapes_norm_bounds_and_undeclared_zero():
    batch = VisionModality().tokenize(make_image("disc", 60, 80, 3, "uint8", 1))
    assert len(batch) == 1 and batch.emb.dtype == np.float32
    assert abs(float(np.linalg.norm(batch.emb[0].astype(np.float64))) - 1) < 1e-4
    assert np.abs(batch.attr).max() <= 1
    assert not batch.attr[0, :128].any() and not batch.attr[0, 256:].any()
    assert batch.offsets["box"].tolist() == [[0, 0, 80, 60]]


def test_deterministic_bit_identical():
    img = make_image("noise", 70, 50, 4, "float32", 3)
    a, b = VisionModality().tokenize(img), VisionModality().tokenize(img.copy())
    assert a == b


def test_grid_tokens_and_boxes():
    img = make_image("gradient", 90, 120, 3, "uint8", 5)
    batch = VisionModality(grid=2).tokenize(img)
    assert len(batch) == 5
    assert batch.offsets["box"].tolist() == [
        [0, 0, 120, 90],
        [0, 0, 60, 45],
        [60, 0, 120, 45],
        [0, 45, 60, 90],
        [60, 45, 120, 90],
    ]
    # a patch token equals the global token of the crop it names
    crop = VisionModality().tokenize(np.ascontiguousarray(img[45:90, 60:120]))
    assert crop.emb.tobytes() == batch.emb[4:5].tobytes()
    assert crop.attr.tobytes() == batch.attr[4:5].tobytes()


def test_grid_on_tiny_image_gives_non_empty_boxes():
    batch = VisionModality(grid=4).tokenize(np.zeros((2, 3), np.uint8))
    boxes = batch.offsets["box"][1:]
    assert len(boxes) == 16
    assert (boxes[:, 2] > boxes[:, 0]).all() and (boxes[:, 3] > boxes[:, 1]).all()
    assert boxes[:, 2].max() <= 3 and boxes[:, 3].max() <= 2


@pytest.mark.parametrize("grid", [1, -1, 9, 2.0, True])
def test_bad_grid_rejected(grid):
    with pytest.raises(ValueError):
        VisionModality(grid=grid)


def test_config_roundtrip_json():
    m = VisionModality(grid=4)
    assert VisionModality.from_config(json.loads(json.dumps(m.config()))) == m


def test_projection_is_orthonormal_and_seeded():
    q = projection()
    assert q.shape == (768, 256)
    assert np.allclose(q.T @ q, np.eye(256), atol=1e-10)
    assert projection() is q  # cached


def test_shipped_projection_is_the_derivation():
    """data/projection.npy is derive_projection() (the QR that earlier releases ran at first
    use) to a few ulps; shipping its bits is what lets every vision embedding keep its bits."""
    from threadpoolctl import threadpool_limits
    from v22sdk_vision.embed import derive_projection

    with threadpool_limits(1):
        derived = derive_projection()
    assert derived.dtype == projection().dtype == np.float64
    # The shipped file is the reference: tokens take their bits from it, never from a QR at run
    # time. The QR's last bits follow the CPU's BLAS kernels (an AVX-512 machine differs from an
    # AVX2 one by about 1 ulp), so the derivation is held to a few ulps, not to every bit.
    assert np.abs(derived - projection()).max() <= 4e-15


def test_black_image_gets_the_grey_direction():
    black = VisionModality().tokenize(np.zeros((20, 20, 3), np.uint8))
    grey = VisionModality().tokenize(np.full((20, 20, 3), 77, np.uint8))
    assert np.allclose(black.emb[0], blank_direction().astype(np.float32))
    assert np.allclose(black.emb[0], grey.emb[0], atol=1e-6)


def test_rgb_order_matters_for_arrays():
    red = np.zeros((16, 16, 3), np.uint8)
    red[..., 0] = 255
    values = SCHEMA.values(VisionModality().tokenize(red).attr[0])
    assert values["vis.color.red_blue_balance"] == pytest.approx(1.0)
    assert values["vis.color.hue_mean"] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize(
    "bad, fragment",
    [
        (np.zeros((4, 4, 3), np.int64), "dtype"),
        (np.zeros((4, 4, 3), np.complex64), "dtype"),
        (np.zeros((4, 4, 5), np.uint8), "channels"),
        (np.zeros((0, 4), np.uint8), "empty"),
        (np.zeros((2, 2, 2, 2), np.uint8), "shape"),
        (np.full((3, 3), np.nan, np.float32), "NaN"),
        (np.full((3, 3), 2.0), "[0, 1]"),
        (np.full((3, 3), -0.1), "[0, 1]"),
        ("picture.png", "array"),
        (None, "array"),
        ([[object()]], "dtype"),
    ],
)
def test_bad_arrays_raise_input_error(bad, fragment):
    with pytest.raises(InputError) as info:
        VisionModality().tokenize(bad)
    assert fragment in str(info.value)


def test_tokens_survive_npz(tmp_path):
    batch = VisionModality(grid=2).tokenize(make_image("disc", 40, 40, 3, "uint8", 9))
    batch.save_npz(tmp_path / "t.npz")
    assert TokenBatch.load_npz(tmp_path / "t.npz") == batch


def test_plugin_import_is_cheap():
    """Listing plugins must not pull OpenCV in: cv2 is imported only when an image is processed."""
    import subprocess
    import sys

    code = "import sys, v22sdk_vision; print('cv2' in sys.modules, 'hypothesis' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
