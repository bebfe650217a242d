"""Files through the real decoder: formats, depth, alpha, EXIF orientation, size bound, bad files."""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np
import pytest
from v22sdk_vision import VisionModality
from v22sdk_vision.decode import apply_orientation, decode_bytes
from v22sdk_vision.headers import dimensions, exif_orientation, truncation
from v22sdk_vision.pixels import MAX_SIDE

from v22sdk import InputError

RNG = np.random.default_rng(7)
RGB = (RNG.random((30, 50, 3)) * 255).astype(np.uint8)
# a smooth image survives JPEG with small errors, so decoded pixels can be compared
YY, XX = np.mgrid[0:48, 0:64]
SMOOTH = np.stack([XX * 4, YY * 5, 255 - XX * 3], axis=2).astype(np.uint8)


def encode(ext: str, rgb: np.ndarray, *params: int) -> bytes:
    bgr = rgb[:, :, ::-1] if rgb.ndim == 3 and rgb.shape[2] == 3 else rgb
    if rgb.ndim == 3 and rgb.shape[2] == 4:
        bgr = rgb[:, :, [2, 1, 0, 3]]
    ok, buf = cv2.imencode(ext, np.ascontiguousarray(bgr), list(params))
    assert ok
    return buf.tobytes()


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- formats -------------------------------------------------------------------------------------
@pytest.mark.parametrize("ext", [".png", ".bmp", ".tiff", ".webp"])
def test_lossless_formats_round_trip_rgb(tmp_path, ext):
    extra = (cv2.IMWRITE_WEBP_QUALITY, 101) if ext == ".webp" else ()
    sample = VisionModality().load(write(tmp_path, "img" + ext, encode(ext, RGB, *extra)))
    assert sample.source.endswith("img" + ext)
    assert np.array_equal(sample.data, RGB)


def test_jpeg_decodes_to_rgb_order(tmp_path):
    data = VisionModality().load(write(tmp_path, "a.jpg", encode(".jpg", SMOOTH, cv2.IMWRITE_JPEG_QUALITY, 95))).data
    assert data.shape == SMOOTH.shape and data.dtype == np.uint8
    assert np.abs(data.astype(int) - SMOOTH).mean() < 3


def test_sixteen_bit_png_keeps_its_depth(tmp_path):
    deep = (RNG.random((20, 30, 3)) * 65535).astype(np.uint16)
    data = VisionModality().load(write(tmp_path, "d.png", encode(".png", deep))).data
    assert data.dtype == np.uint16 and np.array_equal(data, deep)
    tokens = VisionModality().tokenize_file(tmp_path / "d.png")
    assert tokens.source.endswith("d.png")


def test_grey_png_and_rgba_png(tmp_path):
    grey = RGB[:, :, 0]
    assert np.array_equal(VisionModality().load(write(tmp_path, "g.png", encode(".png", grey))).data, grey)
    rgba = np.dstack([RGB, np.linspace(0, 255, 50, dtype=np.uint8)[None, :].repeat(30, 0)])
    data = VisionModality().load(write(tmp_path, "a.png", encode(".png", rgba))).data
    assert data.shape == (30, 50, 4) and np.array_equal(data, rgba)


def grey_alpha_png(ga: np.ndarray) -> bytes:
    """A PNG of colour type 4 (grey + alpha), which cv2.imencode cannot write."""
    h, w = ga.shape[:2]
    raw = b"".join(b"\x00" + ga[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", w, h, 8, 4, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def test_grey_alpha_png(tmp_path):
    ga = np.dstack([np.full((4, 5), 100, np.uint8), np.full((4, 5), 50, np.uint8)])
    data = VisionModality().load(write(tmp_path, "ga.png", grey_alpha_png(ga))).data
    assert data.shape == (4, 5, 4) and data[0, 0].tolist() == [100, 100, 100, 50]
    # the same picture as an in-memory grey+alpha array gives the same tokens
    assert VisionModality().tokenize(data) == VisionModality().tokenize(ga)


def test_alpha_is_composited_over_white():
    transparent = np.zeros((8, 8, 4), np.uint8)  # black, fully transparent
    opaque_white = np.full((8, 8, 3), 255, np.uint8)
    m = VisionModality()
    assert m.tokenize(transparent) == m.tokenize(opaque_white)


def test_float_tiff(tmp_path):
    x = RNG.random((10, 12, 3)).astype(np.float32)
    data = VisionModality().load(write(tmp_path, "f.tiff", encode(".tiff", x))).data
    assert data.dtype == np.float32 and np.allclose(data, x)


# -- EXIF orientation ----------------------------------------------------------------------------
def exif_tiff(orientation: int, order: str = "<") -> bytes:
    head = (b"II*\x00" if order == "<" else b"MM\x00*") + struct.pack(order + "I", 8)
    entry = struct.pack(order + "HHIHH", 0x0112, 3, 1, orientation, 0)
    return head + struct.pack(order + "H", 1) + entry + struct.pack(order + "I", 0)


def jpeg_with_orientation(rgb: np.ndarray, orientation: int, order: str = "<") -> bytes:
    buf = encode(".jpg", rgb, cv2.IMWRITE_JPEG_QUALITY, 95)
    payload = b"Exif\x00\x00" + exif_tiff(orientation, order)
    app1 = b"\xff\xe1" + struct.pack(">H", len(payload) + 2) + payload
    return buf[:2] + app1 + buf[2:]


def png_with_orientation(rgb: np.ndarray, orientation: int) -> bytes:
    buf = encode(".png", rgb)
    body = exif_tiff(orientation, ">")
    chunk = struct.pack(">I", len(body)) + b"eXIf" + body + struct.pack(">I", zlib.crc32(b"eXIf" + body))
    return buf[:33] + chunk + buf[33:]  # after the signature (8) and IHDR (25)


EXPECTED = {  # EXIF orientation → the transform that displays the stored pixels upright
    1: lambda a: a,
    2: lambda a: a[:, ::-1],
    3: lambda a: a[::-1, ::-1],
    4: lambda a: a[::-1],
    5: lambda a: a.transpose(1, 0, 2),
    6: lambda a: np.rot90(a, -1),
    7: lambda a: a.transpose(1, 0, 2)[::-1, ::-1],
    8: lambda a: np.rot90(a, 1),
}


@pytest.mark.parametrize("orientation", range(1, 9))
def test_png_exif_orientation_applied(tmp_path, orientation):
    buf = png_with_orientation(RGB, orientation)
    assert exif_orientation(buf) == orientation
    data = VisionModality().load(write(tmp_path, "o.png", buf)).data
    assert np.array_equal(data, EXPECTED[orientation](RGB))


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize("order", ["<", ">"])
def test_jpeg_exif_orientation_matches_opencv(orientation, order):
    buf = jpeg_with_orientation(SMOOTH, orientation, order)
    assert exif_orientation(buf) == orientation
    ours = decode_bytes(buf, "o.jpg")
    # OpenCV applies orientation itself in IMREAD_COLOR mode: an independent oracle
    oracle = cv2.imdecode(np.frombuffer(buf, np.uint8), cv2.IMREAD_COLOR)[:, :, ::-1]
    assert np.array_equal(ours, oracle)
    assert np.abs(ours.astype(int) - EXPECTED[orientation](SMOOTH)).mean() < 3


def webp_with_orientation(rgb: np.ndarray, orientation: int) -> bytes:
    """A lossless WebP rewrapped as extended (VP8X) WebP with an EXIF chunk."""
    buf = encode(".webp", rgb, cv2.IMWRITE_WEBP_QUALITY, 101)
    assert buf[12:16] == b"VP8L"
    h, w = rgb.shape[:2]
    exif = b"Exif\x00\x00" + exif_tiff(orientation)
    exif_chunk = b"EXIF" + struct.pack("<I", len(exif)) + exif + b"\x00" * (len(exif) % 2)
    vp8x = (
        b"VP8X"
        + struct.pack("<I", 10)
        + bytes([0x08, 0, 0, 0])
        + (w - 1).to_bytes(3, "little")
        + (h - 1).to_bytes(3, "little")
    )
    payload = b"WEBP" + vp8x + buf[12:] + exif_chunk
    return b"RIFF" + struct.pack("<I", len(payload)) + payload


@pytest.mark.parametrize("orientation", [1, 3, 6, 8])
def test_webp_exif_orientation_applied(orientation):
    buf = webp_with_orientation(RGB, orientation)
    assert exif_orientation(buf) == orientation and dimensions(buf) == (50, 30)
    assert np.array_equal(decode_bytes(buf, "o.webp"), EXPECTED[orientation](RGB))


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize("dtype", ["uint8", "uint16"])
def test_tiff_orientation_applied_once(orientation, dtype):
    """OpenCV's TIFF decoder orients by itself even with IMREAD_UNCHANGED: not applied twice."""
    tifffile = pytest.importorskip("tifffile")
    import io

    image = RGB.astype(dtype) * (257 if dtype == "uint16" else 1)
    out = io.BytesIO()
    tifffile.imwrite(out, image, photometric="rgb", extratags=[(274, "H", 1, orientation, True)])
    buf = out.getvalue()
    assert exif_orientation(buf) == orientation
    assert np.array_equal(decode_bytes(buf, "o.tiff"), EXPECTED[orientation](image))


def test_apply_orientation_keeps_channels_and_grey():
    grey = RGB[:, :, 0]
    assert apply_orientation(grey, 6).shape == (50, 30)
    assert apply_orientation(RGB, 8).shape == (50, 30, 3)


# -- size bound ----------------------------------------------------------------------------------
def test_large_jpeg_is_reduced_at_decode_and_bounded(tmp_path):
    yy, xx = np.mgrid[0:3000, 0:5000]
    big = np.stack([(xx // 40) % 256, (yy // 40) % 256, np.full_like(xx, 90)], axis=2).astype(np.uint8)
    buf = encode(".jpg", big, cv2.IMWRITE_JPEG_QUALITY, 80)
    assert dimensions(buf) == (5000, 3000)
    data = decode_bytes(buf, "big.jpg")
    assert max(data.shape[:2]) == MAX_SIDE and data.shape[:2] == (614, 1024)


def test_large_png_is_bounded(tmp_path):
    big = np.tile(np.arange(256, dtype=np.uint8), (2100, 10))  # 2100 × 2560
    data = decode_bytes(encode(".png", big), "big.png")
    assert data.shape == (840, 1024)


def test_huge_header_refused_before_decoding():
    buf = bytearray(encode(".png", RGB))
    buf[16:24] = struct.pack(">II", 40000, 40000)
    with pytest.raises(InputError, match="40000x40000 8-bit RGB PNG needs about .* more than the decode budget"):
        decode_bytes(bytes(buf), "huge.png")


def test_large_array_is_bounded():
    batch = VisionModality().tokenize(np.zeros((3000, 40), np.uint16))
    assert batch.offsets["box"].tolist() == [[0, 0, 40, 3000]]


# -- bad files -----------------------------------------------------------------------------------
@pytest.mark.parametrize("ext", [".png", ".jpg", ".webp", ".bmp", ".tiff"])
@pytest.mark.parametrize("keep", [0.5, 0.95])
def test_truncated_files_raise_naming_the_file(tmp_path, ext, keep):
    buf = encode(ext, SMOOTH)
    path = write(tmp_path, "cut" + ext, buf[: int(len(buf) * keep)])
    with pytest.raises(InputError) as info:
        VisionModality().load(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("ext", [".png", ".jpg", ".webp", ".bmp"])
def test_truncation_is_named_from_the_bytes(ext):
    """The byte-level check names truncation itself, whatever the OpenCV build does with the rest
    (OpenCV 4.14 and 5.0 refuse a cut JPEG; older builds returned it with grey rows)."""
    buf = encode(ext, SMOOTH)
    assert truncation(buf) is None
    assert "truncated" in truncation(buf[: len(buf) * 3 // 4])
    with pytest.raises(InputError, match="truncated"):
        decode_bytes(buf[:-4], "cut" + ext)


def test_jpeg_with_trailing_bytes_is_fine():
    buf = encode(".jpg", SMOOTH) + b"\x00" * 16
    assert decode_bytes(buf, "t.jpg").shape == SMOOTH.shape


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"", "empty"),
        (b"hello, I am text", "unknown magic"),
        (b"GIF89a\x01\x00\x01\x00" + bytes(20), "is a GIF image, which is not supported; convert it to PNG"),
        (b"\x89PNG\r\n\x1a\n" + bytes(200), "corrupt"),
        (b"\xff\xd8\xff\xe0" + bytes(100), "JPEG"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 " + bytes(8), "corrupt"),
    ],
)
def test_corrupt_and_empty_files(tmp_path, content, fragment):
    path = write(tmp_path, "bad.png", content)
    with pytest.raises(InputError) as info:
        VisionModality().load(path)
    assert str(path) in str(info.value) and fragment in str(info.value)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        VisionModality().load(tmp_path / "nope.png")
    with pytest.raises(InputError, match="directory"):
        VisionModality().load(tmp_path)


def test_accepts_by_extension():
    m = VisionModality()
    assert m.accepts("x.JPG") and m.accepts("y.webp") and m.accepts("z.tif") and not m.accepts("a.wav")
