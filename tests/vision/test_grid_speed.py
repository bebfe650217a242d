"""The fast texture code gives bit-identical tokens to the straightforward per-crop code it replaced.

The LBP, HOG and spectrum functions now reuse shape-only constants (cached per shape) and skip
the bilinear interpolation of whole-pixel LBP neighbours; a patch grid tokenizes every crop with
them (17 calls for ``grid=4``, 65 for ``grid=8``). The reference implementations below are the
previous code, kept verbatim: tokens of the global token and of every patch must equal, bit for
bit (``np.array_equal`` on float32, same dtypes), the tokens computed with the references swapped
in. Inputs are generated here (scikit-image's sample photos and synthetic arrays), no fixtures.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from v22sdk_vision import VisionModality, texture
from v22sdk_vision.sample_images import make_image

skimage_data = pytest.importorskip("skimage.data")


# -- the previous implementations (reference path) ------------------------------------------------
def lbp_reference(img: np.ndarray, radius: float = 1.0) -> np.ndarray:
    x = np.asarray(img, dtype=np.float64)
    h, w = x.shape
    p = np.arange(8, dtype=np.float64)
    rp = np.round(-radius * np.sin(2 * np.pi * p / 8), 5)
    cp = np.round(radius * np.cos(2 * np.pi * p / 8), 5)
    pad = int(np.ceil(radius)) + 1
    xp = np.pad(x, pad)
    rows = np.arange(h, dtype=np.float64)[:, None]
    cols = np.arange(w, dtype=np.float64)[None, :]
    bits = np.empty((8, h, w), dtype=np.int8)
    for k in range(8):
        r, c = rows + rp[k], cols + cp[k]
        dr, dc = r - np.floor(r), c - np.floor(c)
        r0, r1 = int(np.floor(rp[k])) + pad, int(np.ceil(rp[k])) + pad
        c0, c1 = int(np.floor(cp[k])) + pad, int(np.ceil(cp[k])) + pad
        tl, tr = xp[r0 : r0 + h, c0 : c0 + w], xp[r0 : r0 + h, c1 : c1 + w]
        bl, br = xp[r1 : r1 + h, c0 : c0 + w], xp[r1 : r1 + h, c1 : c1 + w]
        top = (1 - dc) * tl + dc * tr
        bottom = (1 - dc) * bl + dc * br
        value = (1 - dr) * top + dr * bottom
        bits[k] = (value - x) >= 0
    changes = (bits[1:] != bits[:-1]).sum(axis=0)
    ones = bits.sum(axis=0, dtype=np.int64)
    return np.where(changes <= 2, ones, 9)


def hog_reference(img: np.ndarray) -> np.ndarray:
    from numpy.lib.stride_tricks import sliding_window_view

    x = np.asarray(img, dtype=np.float64)
    gr = np.zeros_like(x)
    gc = np.zeros_like(x)
    gr[1:-1, :] = x[2:, :] - x[:-2, :]
    gc[:, 1:-1] = x[:, 2:] - x[:, :-2]
    mag = np.hypot(gc, gr)
    ori = np.rad2deg(np.arctan2(gr, gc)) % 180
    b = np.minimum((ori / 20.0).astype(np.int64), 8)
    ncr, ncc = x.shape[0] // 8, x.shape[1] // 8
    hh, ww = ncr * 8, ncc * 8
    cell = (np.arange(hh)[:, None] // 8) * ncc + (np.arange(ww)[None, :] // 8)
    index = cell * 9 + b[:hh, :ww]
    hist = np.bincount(index.ravel(), weights=mag[:hh, :ww].ravel(), minlength=ncr * ncc * 9)
    hist = hist.reshape(ncr, ncc, 9) / 64
    blocks = sliding_window_view(hist, (2, 2), axis=(0, 1)).transpose(0, 1, 3, 4, 2)
    norm = np.sqrt((blocks**2).sum(axis=(2, 3, 4), keepdims=True) + 1e-5**2)
    out = np.minimum(blocks / norm, 0.2)
    norm = np.sqrt((out**2).sum(axis=(2, 3, 4), keepdims=True) + 1e-5**2)
    return out / norm


def spectral_reference(x: np.ndarray) -> tuple[float, float, float]:
    f = np.fft.fftshift(np.abs(np.fft.fft2(x - x.mean())))
    n = x.shape[0]
    yy, xx = np.indices(f.shape)
    radius = np.hypot(yy - n // 2, xx - x.shape[1] // 2)
    nondc = radius > 0
    amp = f[nondc]
    if amp.sum() <= 1e-9 * x.size:
        return 0.0, 0.0, 0.0
    dispersion = float(amp.std() / amp.mean())
    power = f**2
    rbin = radius.astype(np.int64)
    radial = np.bincount(rbin.ravel(), weights=power.ravel()) / np.maximum(np.bincount(rbin.ravel()), 1)
    rr = np.arange(2, n // 2)
    good = radial[rr] > 0
    slope = 0.0
    if good.sum() >= 2:
        slope = float(np.polyfit(np.log(rr[good]), np.log(radial[rr][good]), 1)[0])
    high = float(power[radius > n / 4].sum() / power[nondc].sum())
    return dispersion, slope, high


REFERENCES = {"lbp_uniform": lbp_reference, "hog_blocks": hog_reference, "spectral_stats": spectral_reference}


def encode_reference(modality: VisionModality, image: np.ndarray, monkeypatch, references=REFERENCES):
    """Tokens computed with the reference texture code swapped in (every crop separately, as before)."""
    with monkeypatch.context() as patch:
        for name, fn in references.items():
            patch.setattr(texture, name, fn)
        return modality.encode(image)


# -- inputs ---------------------------------------------------------------------------------------
def photo(name: str, side: int | None = None) -> np.ndarray:
    img = getattr(skimage_data, name)()
    return img if side is None else cv2.resize(img, (side, side), interpolation=cv2.INTER_AREA)


def grid_inputs() -> dict[str, np.ndarray]:
    inputs = {
        "astronaut": photo("astronaut"),  # 512×512 RGB: 128² patches at grid=4
        "camera_grey": photo("camera", 256),  # grey uint8
        "coffee": photo("coffee")[::3, ::3].copy(),  # 134×200, uneven patch edges
    }
    specs = [
        ("noise", 1, 1, 3, "uint8", 1),
        ("gradient", 3, 7, 3, "float32", 2),
        ("disc", 97, 120, 0, "uint16", 5),
        ("disc", 80, 64, 4, "uint8", 6),
        ("noise", 50, 70, 4, "float32", 7),
        ("stripes", 33, 65, 2, "uint8", 9),
        ("constant", 20, 20, 3, "float64", 10),
        ("disc", 70, 70, 3, "bool", 11),
    ]
    for spec in specs:
        inputs["_".join(map(str, spec))] = make_image(*spec)
    return inputs


INPUTS = grid_inputs()


def assert_same_tokens(fast, ref) -> None:
    assert fast.emb.dtype == ref.emb.dtype == np.float32 and fast.attr.dtype == ref.attr.dtype == np.float32
    assert np.array_equal(fast.emb, ref.emb)
    assert np.array_equal(fast.attr, ref.attr)
    assert fast.offsets["box"].dtype == ref.offsets["box"].dtype
    assert np.array_equal(fast.offsets["box"], ref.offsets["box"])


# -- tests ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("grid", [0, 2, 4, 8])
@pytest.mark.parametrize("name", list(INPUTS))
def test_grid_tokens_bit_identical_to_reference(name, grid, monkeypatch):
    image = INPUTS[name]
    if grid == 8 and name == "astronaut":
        image = photo("astronaut", 256)  # 64 patches of a full 512² photo would cost ~1 s twice
    modality = VisionModality(grid=grid)
    fast = modality.encode(image)
    assert fast.emb.shape[0] == 1 + grid * grid
    assert_same_tokens(fast, encode_reference(modality, image, monkeypatch))


def texture_arrays():
    rng = np.random.default_rng(22)
    noise = rng.integers(0, 256, (128, 128)).astype(np.uint8)
    yield "noise", noise
    yield "blurred", cv2.GaussianBlur(noise, (5, 5), 2.0)
    yield "posterised", (noise // 64 * 64).astype(np.uint8)  # many LBP ties
    yield "constant", np.full((128, 128), 77, np.uint8)
    yield "camera", photo("camera", 128)
    for h, w in ((1, 1), (2, 9), (17, 40), (33, 33)):
        yield f"odd_{h}x{w}", rng.integers(0, 256, (h, w)).astype(np.uint8)


@pytest.mark.parametrize("name,img", list(texture_arrays()))
def test_texture_functions_bit_identical(name, img):
    lbp = texture.lbp_uniform(img)
    ref = lbp_reference(img)
    assert lbp.dtype == ref.dtype and np.array_equal(lbp, ref)
    if min(img.shape) >= 16:  # HOG needs 2×2 cells of 8 pixels
        hog = texture.hog_blocks(img)
        assert hog.dtype == np.float64 and np.array_equal(hog, hog_reference(img))
    if img.shape[0] == img.shape[1]:
        x = img.astype(np.float64)
        assert texture.spectral_stats(x) == spectral_reference(x)


def test_the_comparison_catches_a_one_bit_change(monkeypatch):
    """A reference that differs in a single LBP code (one pixel of one crop) must be told apart:
    the bit-identity check above is not vacuous."""
    image = INPUTS["astronaut"][:128, :128]

    def lbp_strict(img, radius=1.0):
        codes = lbp_reference(img, radius)
        codes[0, 0] = (codes[0, 0] + 1) % 10
        return codes

    modality = VisionModality(grid=2)
    fast = modality.encode(image)
    broken = encode_reference(modality, image, monkeypatch, {**REFERENCES, "lbp_uniform": lbp_strict})
    assert not np.array_equal(fast.attr, broken.attr)
    assert_same_tokens(fast, encode_reference(modality, image, monkeypatch))
