"""Feature values: known answers on synthetic images and agreement with scikit-image's oracles."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from v22sdk_vision import SCHEMA, VisionModality
from v22sdk_vision.texture import glcm, glcm_props, hog_blocks, lbp_uniform

skimage_feature = pytest.importorskip("skimage.feature")
skimage_data = pytest.importorskip("skimage.data")

ANGLES = [0, np.pi / 4, np.pi / 2, 3 * np.pi / 4]


def values(image) -> dict[str, float]:
    return SCHEMA.values(VisionModality().tokenize(image).attr[0])


def disc_image(colour=(255, 0, 0), background=(235, 235, 235), size=256, radius=80):
    img = np.empty((size, size, 3), np.uint8)
    img[:] = background
    cv2.circle(img, (size // 2, size // 2), radius, colour, -1, lineType=cv2.LINE_AA)
    return img


def texture_images():
    rng = np.random.default_rng(3)
    camera = cv2.resize(skimage_data.camera(), (128, 128), interpolation=cv2.INTER_AREA)
    checker = (np.kron(np.indices((16, 16)).sum(0) % 2, np.ones((8, 8))) * 255).astype(np.uint8)
    return {
        "camera": camera,
        "constant": np.full((128, 128), 77, np.uint8),
        "noise": (rng.random((128, 128)) * 255).astype(np.uint8),
        "checker": checker,
        "odd_size": (rng.random((37, 53)) * 255).astype(np.uint8),
    }


# -- oracles -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(texture_images()))
def test_glcm_matches_skimage(name):
    q = texture_images()[name] // 32
    ours = glcm(q)
    ref = skimage_feature.graycomatrix(q, [1], ANGLES, levels=8, symmetric=True, normed=True)
    np.testing.assert_allclose(ours, ref[:, :, 0, :], atol=1e-12)
    props = glcm_props(ours)
    for prop in ("contrast", "energy", "homogeneity", "correlation"):
        np.testing.assert_allclose(props[prop], skimage_feature.graycoprops(ref, prop)[0], atol=1e-10)


@pytest.mark.parametrize("name", list(texture_images()))
def test_lbp_matches_skimage_exactly(name):
    img = texture_images()[name]
    ref = skimage_feature.local_binary_pattern(img, 8, 1, method="uniform")
    assert np.array_equal(lbp_uniform(img), ref.astype(np.int64))


@pytest.mark.parametrize("name", list(texture_images()))
def test_hog_matches_skimage(name):
    img = texture_images()[name]
    ref = skimage_feature.hog(
        img, orientations=9, pixels_per_cell=(8, 8), cells_per_block=(2, 2), block_norm="L2-Hys", feature_vector=False
    )
    ours = hog_blocks(img)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, atol=1e-6)  # skimage sums cells in float32


def test_lbp_ties_count_as_brighter():
    """Equal neighbours set their bit (skimage's >= rule): a flat interior is code 8, not 0 —
    a '>' implementation would fail the oracle test above on the constant image."""
    codes = lbp_uniform(np.full((12, 12), 77, np.uint8))
    assert (codes[1:-1, 1:-1] == 8).all()
    assert (codes[0] != 8).any()  # outside the image is 0, darker than 77


# -- known answers -------------------------------------------------------------------------------
def test_red_disc_hue_zero_and_round():
    v = values(disc_image())
    assert v["vis.color.hue_mean"] == pytest.approx(0.0, abs=0.01)
    assert v["vis.color.hue_concentration"] > 0.99
    assert v["vis.geometry.circularity"] == pytest.approx(1.0, abs=0.03)
    assert v["vis.geometry.elongation"] < 0.03
    assert v["vis.geometry.solidity"] > 0.98
    assert v["vis.geometry.is_convex"] == 1.0
    assert v["vis.geometry.fg_fraction"] == pytest.approx(np.pi * 80**2 / 256**2, rel=0.03)
    assert v["vis.space.centroid_x"] == pytest.approx(0.5, abs=0.01)
    assert v["vis.space.centroid_y"] == pytest.approx(0.5, abs=0.01)
    assert v["vis.geometry.components"] == pytest.approx(0.1)  # log2(1 + 1)/10
    assert v["vis.geometry.holes"] == 0.0


def test_hues_of_primary_discs():
    assert values(disc_image((0, 255, 0)))["vis.color.hue_mean"] == pytest.approx(120 / 180, abs=0.01)
    assert values(disc_image((0, 0, 255)))["vis.color.hue_mean"] == pytest.approx(-120 / 180, abs=0.01)


def test_dark_object_on_light_page_is_the_foreground():
    """Otsu's bright class would make the page the object; the border rule picks the disc."""
    v = values(disc_image((20, 20, 20), (250, 250, 250)))
    assert v["vis.geometry.fg_fraction"] < 0.5 and v["vis.geometry.circularity"] > 0.95


def test_two_to_one_rectangle_has_elongation_two():
    img = np.full((200, 300), 255, np.uint8)
    img[50:150, 50:250] = 0
    v = values(img)
    elongation = 1.0 / (1.0 - v["vis.geometry.elongation"])  # invert the documented 1 − 1/e
    assert elongation == pytest.approx(2.0, rel=0.02)
    assert v["vis.geometry.aspect_ratio"] == pytest.approx(0.25, abs=0.01)  # log2(2)/4
    assert v["vis.geometry.extent"] == pytest.approx(1.0, abs=0.01)
    assert v["vis.geometry.polygon_vertices"] == pytest.approx(4 / 32)
    assert v["vis.geometry.object_angle"] == pytest.approx(0.0, abs=0.01)


def test_rotated_rectangle_angle():
    img = np.full((300, 300), 255, np.uint8)
    box = cv2.boxPoints(((150, 150), (200, 60), -30.0)).astype(np.int32)  # 30° counter-clockwise on screen
    cv2.fillPoly(img, [box], 0)
    v = values(img)
    assert v["vis.geometry.object_angle"] * 90 == pytest.approx(30, abs=2)


def test_ring_has_one_hole_and_euler_zero():
    img = np.zeros((120, 120), np.uint8)
    cv2.circle(img, (60, 60), 35, 255, 10)
    v = values(img)
    assert v["vis.geometry.holes"] == pytest.approx(0.1)  # one hole
    assert v["vis.geometry.euler_number"] == 0.0


def test_bar_across_the_image_has_no_hole():
    """Background split in two by a bar touching the border is not a hole (upstream counted 1)."""
    img = np.full((80, 120), 255, np.uint8)
    img[:, 50:70] = 0
    v = values(img)
    assert v["vis.geometry.holes"] == 0.0 and v["vis.geometry.euler_number"] == pytest.approx(0.1)


def test_components_count():
    img = np.zeros((100, 100), np.uint8)
    for x in (10, 40, 70):
        img[40:60, x : x + 15] = 255
    assert values(img)["vis.geometry.components"] == pytest.approx(0.2)  # log2(1 + 3)/10


def test_checkerboard_has_high_glcm_contrast():
    checker = (np.indices((128, 128)).sum(0) % 2 * 255).astype(np.uint8)
    smooth = np.tile(np.linspace(0, 255, 128).astype(np.uint8), (128, 1))
    vc, vs = values(checker), values(smooth)
    assert vc["vis.texture.glcm_contrast_0"] == pytest.approx(1.0)
    assert vc["vis.texture.glcm_contrast_90"] == pytest.approx(1.0)
    assert vc["vis.texture.glcm_contrast_45"] == pytest.approx(0.0)  # diagonal neighbours are equal
    assert vs["vis.texture.glcm_contrast_0"] < 0.4
    assert vc["vis.texture.glcm_homogeneity_0"] < vs["vis.texture.glcm_homogeneity_0"]


def test_blur_lowers_focus():
    sharp = skimage_data.camera()
    blurred = cv2.GaussianBlur(sharp, (0, 0), 3)
    vs, vb = values(sharp), values(blurred)
    assert vb["vis.space.focus"] < vs["vis.space.focus"] - 0.2
    assert vb["vis.texture.laplacian_var"] < vs["vis.texture.laplacian_var"]
    assert vb["vis.texture.high_freq_ratio"] < vs["vis.texture.high_freq_ratio"]


def test_vertical_stripes_are_directional():
    stripes = np.tile((np.arange(128) // 4 % 2 * 255).astype(np.uint8), (128, 1))
    v = values(stripes)
    assert v["vis.texture.directionality"] == 1.0  # only x-gradients
    assert values(stripes.T.copy())["vis.texture.directionality"] == -1.0
    assert v["vis.texture.hog_000"] > 0.9 and v["vis.texture.hog_080"] == 0.0


def test_natural_image_spectral_slope_is_about_minus_two():
    v = values(skimage_data.camera())
    assert -3.2 < v["vis.texture.spectral_slope"] * 4 < -1.5


def test_saliency_finds_an_off_centre_object():
    img = np.full((256, 256), 128, np.uint8)
    cv2.circle(img, (200, 60), 12, 255, -1)
    v = values(img)
    assert v["vis.space.sal_peak_x"] == pytest.approx(200 / 256, abs=0.08)
    assert v["vis.space.sal_peak_y"] == pytest.approx(60 / 256, abs=0.08)
    assert v["vis.space.sal_object_overlap"] > 0.2


def test_flat_image_has_neutral_saliency_and_no_object():
    v = values(np.full((50, 70, 3), 90, np.uint8))
    assert v["vis.space.sal_peak_x"] == pytest.approx(0.5) and v["vis.space.sal_peak_y"] == pytest.approx(0.5)
    assert v["vis.space.sal_entropy"] == pytest.approx(1.0)
    assert v["vis.space.sal_concentration"] == pytest.approx(0.1, abs=0.01)
    assert v["vis.geometry.fg_fraction"] == 0.0 and v["vis.geometry.circularity"] == 0.0
    assert v["vis.color.saturated_fraction"] == 0.0 and v["vis.color.hue_mean"] == 0.0


def test_warm_and_cool_and_colourfulness():
    red, blue, grey = (
        disc_image((255, 40, 0), (255, 60, 0)),
        disc_image((0, 60, 255), (0, 40, 255)),
        np.full((64, 64, 3), 128, np.uint8),
    )
    assert values(red)["vis.color.warm_fraction"] > 0.99 and values(red)["vis.color.cool_fraction"] == 0
    assert values(blue)["vis.color.cool_fraction"] > 0.99
    assert values(grey)["vis.color.colorfulness"] == 0.0 < values(red)["vis.color.colorfulness"]


def test_dominant_colours_two_colour_image():
    img = np.zeros((60, 100, 3), np.uint8)
    img[:, :70] = (255, 255, 255)
    v = values(img)
    assert v["vis.color.dom1_share"] == pytest.approx(0.7, abs=0.02)
    assert v["vis.color.dom1_l"] == pytest.approx(1.0, abs=0.01)
    assert v["vis.color.dom2_share"] == pytest.approx(0.3, abs=0.02)
    assert v["vis.color.dom3_share"] + v["vis.color.dom4_share"] < 0.05  # the blended edge column


def test_symmetry_and_top_bottom():
    yy = np.tile(np.linspace(255, 0, 64).astype(np.uint8)[:, None], (1, 64))  # bright top
    v = values(yy)
    assert v["vis.space.symmetry_lr"] == 1.0
    assert v["vis.space.luma_top_bottom"] > 0.4
    assert v["vis.space.symmetry_tb"] < 0.5
