"""The depth plugin on synthetic scenes with known answers and on a real Middlebury disparity map."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from v22sdk_depth import DepthModality, disparity_to_depth, features, synthetic

from v22sdk import InputError, UnitsError

M = DepthModality()


def values(z, scale=1.0):
    tokens = M.tokenize(z, depth_scale=scale)
    assert len(tokens) == 1
    return tokens, M.schema.values(tokens.attr[0])


@pytest.mark.parametrize("normal", [(0.3, -0.2, 1.0), (-0.5, 0.0, 1.0), (0.0, 0.6, 1.0)])
def test_slanted_plane_recovers_its_normal(normal):
    n = np.asarray(normal) / np.linalg.norm(normal)
    _, v = values(synthetic.plane(48, 64, normal=normal, distance=2.0))
    assert v["depth.planarity"] > 0.999
    assert v["depth.normal_x"] == pytest.approx(n[0], abs=1e-4)
    assert v["depth.normal_y"] == pytest.approx(n[1], abs=1e-4)
    assert v["depth.slant"] == pytest.approx(math.acos(n[2]) / (math.pi / 2), abs=1e-4)
    assert v["depth.convexity"] == pytest.approx(0.0, abs=1e-6)
    assert v["depth.holes"] == 0.0 and v["depth.valid"] == 1.0


def test_fronto_parallel_plane_has_exact_statistics():
    tokens, v = values(np.full((20, 30), 2000, dtype=np.uint16), scale=0.001)  # 2 m in millimetres
    assert v["depth.mean"] == pytest.approx(math.log10(2.0) / 2, abs=1e-6)
    assert v["depth.median"] == v["depth.p05"] == v["depth.p95"] == v["depth.mean"]
    assert v["depth.spread"] == 0.0 and v["depth.slant"] == 0.0 and v["depth.edge_density"] == 0.0
    assert v["depth.planarity"] == pytest.approx(1.0)
    assert v["depth.near_frac"] == 0.0 and v["depth.far_frac"] == 0.0
    # No depth variation: the documented flat embedding.
    assert np.array_equal(tokens.emb[0], features.flat_embedding().astype(np.float32))
    assert tokens.offsets["box"].tolist() == [[0, 0, 30, 20]]


def test_step_has_exact_balance_and_edge_density():
    h, w = 16, 20
    _, v = values(synthetic.step(h, w, near_m=1.0, far_m=2.0))
    assert v["depth.lr_balance"] == pytest.approx(math.tanh(math.log(0.5)), abs=1e-6)
    assert v["depth.tb_balance"] == 0.0
    pairs = h * (w - 1) + (h - 1) * w
    assert v["depth.edge_density"] == pytest.approx(math.sqrt(h / pairs), abs=1e-6)
    assert v["depth.near_frac"] == 0.0  # 1.0 m is not nearer than near_m = 1 m
    assert v["depth.planarity"] < 0.01


def test_quadratic_inverse_depth_gives_exact_convexity():
    # w = 1/Z = w0 (1 - a (x² + y²)) in ray slopes: k = 2a exactly, convexity = tanh(2a / 4).
    x, y = synthetic.rays(40, 40)
    for a, expected in ((1.0, math.tanh(0.5)), (-1.0, math.tanh(-0.5))):
        _, v = values(1.0 / (0.5 * (1 - a * (x * x + y * y))))
        assert v["depth.convexity"] == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("centre, radius", [(3.0, 2.5), (2.0, 1.5)])
def test_sphere_filling_the_view_bulges_as_predicted(centre, radius):
    # Near the axis a sphere's inverse depth is w0 (1 - (c - R)/(2R) (x² + y²)): convexity ≈ tanh((c - R)/(4R)).
    _, sphere = values(synthetic.sphere(48, 48, centre_m=centre, radius_m=radius))
    _, plane = values(synthetic.plane(48, 48, distance=2.0))
    assert sphere["depth.holes"] == 0.0
    assert sphere["depth.convexity"] == pytest.approx(math.tanh((centre - radius) / (4 * radius)), rel=0.15)
    assert sphere["depth.planarity"] < 0.5 < plane["depth.planarity"]
    assert sphere["depth.normal_x"] == pytest.approx(0.0, abs=1e-6)  # symmetric about the axis
    assert sphere["depth.slant"] == pytest.approx(0.0, abs=1e-6)


def test_small_sphere_leaves_holes_around_it():
    _, v = values(synthetic.sphere(48, 48, centre_m=3.0, radius_m=1.0))
    assert 0.5 < v["depth.holes"] < 0.9 and v["depth.convexity"] > 0.4


def test_holes_and_all_holes():
    z = synthetic.plane(20, 20, distance=3.0)
    z[:10, :10] = 0.0
    _, v = values(z)
    assert v["depth.holes"] == pytest.approx(0.25)
    tokens, v = values(np.zeros((5, 7)))
    assert v["depth.holes"] == 1.0 and v["depth.valid"] == 0.0
    assert np.array_equal(tokens.emb[0], features.flat_embedding().astype(np.float32))


def test_near_far_fractions_follow_the_config():
    z = np.concatenate([np.full((4, 10), 0.5), np.full((6, 10), 8.0)])
    _, v = values(z)
    assert v["depth.near_frac"] == pytest.approx(0.4) and v["depth.far_frac"] == pytest.approx(0.6)
    tokens = DepthModality(near_m=0.25, far_m=10.0).tokenize(z, depth_scale=1.0)
    v2 = M.schema.values(tokens.attr[0])
    assert v2["depth.near_frac"] == 0.0 and v2["depth.far_frac"] == 0.0


def test_png_16bit_round_trip_and_bad_pngs(tmp_path):
    import cv2

    z_mm = np.clip(synthetic.sphere(30, 40, centre_m=2.0, radius_m=1.0, background_m=4.0) * 1000, 0, 65535)
    z_mm = z_mm.astype(np.uint16)
    path = tmp_path / "d.png"
    assert cv2.imwrite(str(path), z_mm)
    sample = M.load(path)
    assert sample.units == {"depth_scale": 0.001} and sample.data.dtype == np.uint16
    assert M.tokenize_file(path).emb.tobytes() == M.tokenize(z_mm, depth_scale=0.001).emb.tobytes()
    eight = tmp_path / "eight.png"
    cv2.imwrite(str(eight), (z_mm // 256).astype(np.uint8))
    with pytest.raises(InputError, match="16-bit"):
        M.load(eight)
    colour = tmp_path / "colour.png"
    cv2.imwrite(str(colour), np.dstack([z_mm] * 3))
    with pytest.raises(InputError, match="one channel"):
        M.load(colour)
    truncated = tmp_path / "cut.png"
    truncated.write_bytes(path.read_bytes()[:40])
    with pytest.raises(InputError, match=str(truncated.name)):
        M.load(truncated)


@pytest.fixture(scope="module")
def motorcycle():
    """Middlebury 2014 'Motorcycle' (quarter size), shipped inside scikit-image: works offline."""
    data = pytest.importorskip("skimage.data")
    _, _, disp = data.stereo_motorcycle()
    # Calibration of the down-sampled pair, from skimage.data.stereo_motorcycle's docstring.
    return disp, {"focal_px": 994.978, "baseline_m": 0.193001, "doffs_px": 31.086}


def test_real_disparity_map_from_npz(motorcycle, tmp_path):
    disp, calib = motorcycle
    path = tmp_path / "motorcycle.npz"
    np.savez(path, disparity=disp, **calib)
    tokens = M.tokenize_file(path)
    v = M.schema.values(tokens.attr[0])
    z = calib["focal_px"] * calib["baseline_m"] / (disp[np.isfinite(disp)] + calib["doffs_px"])
    assert v["depth.holes"] == pytest.approx(float(np.mean(~np.isfinite(disp))), abs=1e-6)  # NaN = no ground truth
    assert v["depth.median"] == pytest.approx(math.log10(np.median(z)) / 2, abs=1e-6)
    assert 2.0 < np.median(z) < 3.5  # the motorcycle stands ~2.7 m from the rig
    assert v["depth.tb_balance"] > 0.1  # the back wall (top) is farther than the floor (bottom)
    assert v["depth.planarity"] < 0.1 and v["depth.edge_density"] > 0.02  # a cluttered, edged scene
    assert M.tokenize_file(path) == tokens  # bit-reproducible


def test_npy_with_sidecar_and_missing_units(motorcycle, tmp_path):
    disp, calib = motorcycle
    path = tmp_path / "disp.npy"
    np.save(path, disp)
    with pytest.raises(UnitsError, match="disp.npy.json"):
        M.load(path)
    (tmp_path / "disp.npy.json").write_text(json.dumps({"kind": "disparity", **calib}))
    sample = M.load(path)
    expected = disparity_to_depth(disp, **calib)
    assert np.array_equal(sample.data, expected) and sample.units == {"depth_scale": 1.0}
    (tmp_path / "disp.npy.json").write_text(json.dumps({"kind": "disparity", "focal_px": 1.0}))
    with pytest.raises(UnitsError, match="baseline_m"):
        M.load(path)


def test_bad_arrays_raise_input_errors():
    for bad in (np.zeros((3, 3, 3)), np.zeros((0, 4)), np.array([[1.0, np.nan]]), np.zeros((2, 2), dtype=bool)):
        with pytest.raises(InputError):
            M.tokenize(bad, depth_scale=1.0)
    with pytest.raises(UnitsError):
        M.tokenize(np.ones((2, 2)))


def test_depth_and_vision_share_png_by_content(tmp_path, monkeypatch):
    """With the depth plugin installed beside the built-in vision, `tokenize x.png` needs no
    --modality: a colour or 8-bit PNG is an image (depth rejects it, no notice), a 16-bit grey PNG
    a depth map (with a notice naming vision), and the user's default can keep vision for .png."""
    import cv2
    from click.testing import CliRunner

    from v22sdk import Registry
    from v22sdk.cli import cli
    from v22sdk.plugins import reset_registry

    monkeypatch.delenv("V22SDK_EXTENSIONS", raising=False)
    z_mm = (synthetic.sphere(30, 40, centre_m=2.0, radius_m=1.0, background_m=4.0) * 1000).astype(np.uint16)
    cv2.imwrite(str(tmp_path / "depth.png"), z_mm)
    cv2.imwrite(str(tmp_path / "photo.png"), np.dstack([(z_mm // 256).astype(np.uint8)] * 3))
    cv2.imwrite(str(tmp_path / "grey8.png"), (z_mm // 256).astype(np.uint8))
    r = Registry(entry_points=False)
    import v22sdk_depth
    import v22sdk_vision

    r.register(v22sdk_vision, "vision")
    r.register(v22sdk_depth, "depth")
    assert r.readers(".png") == ["depth", "vision"]
    assert [r.resolve_path(tmp_path / f).modality for f in ("photo.png", "grey8.png", "depth.png")] == [
        "vision",
        "vision",
        "depth",
    ]
    assert r.resolve_path(tmp_path / "photo.png").notice is None
    reset_registry(lambda: r)
    try:
        res = CliRunner().invoke(cli, ["tokenize", str(tmp_path / "photo.png"), str(tmp_path / "depth.png"), "--json"])
        assert res.exit_code == 0, res.output
        assert [b["modality"] for b in json.loads(res.stdout)] == ["vision", "depth"]
        assert res.stderr.strip() == (
            f"note: {tmp_path / 'depth.png'}: read as depth (by its content); vision "
            f"also reads '.png' files: choose with --modality NAME or V22SDK_EXTENSIONS=.png=NAME"
        )
        monkeypatch.setenv("V22SDK_EXTENSIONS", ".png=vision")
        res = CliRunner().invoke(cli, ["tokenize", str(tmp_path / "depth.png"), "--json"])
        assert res.exit_code == 0 and res.stderr == ""
        assert json.loads(res.stdout)[0]["modality"] == "vision"
    finally:
        reset_registry()
