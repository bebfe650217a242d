"""Generated decompression bombs and near-limit files of every format the plugins read.

A bomb is a small, *valid* file whose header declares far more data than it holds in bytes:
runs of zeros compress 1000:1 in deflate (PNG, TIFF, NPZ), an RLE bitmap can end at its first
byte, a lossless WebP whose Huffman codes have one symbol each costs 0 bits per pixel, and audio
headers state a length the decoder believes. Each generator writes in milliseconds: the deflate
stream of N zero bytes is one compressed block (after a full flush, blocks are independent)
repeated, with the Adler-32 of the whole computed alongside.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

_CHUNK = 1 << 20


def zeros_deflate(n: int, wrap: bool = True) -> bytes:
    """A zlib (``wrap``) or raw deflate stream of ``n`` zero bytes, built without compressing them all."""
    block = zlib.compressobj(9, zlib.DEFLATED, -15)
    one = block.compress(bytes(_CHUNK)) + block.flush(zlib.Z_FULL_FLUSH)
    tail = zlib.compressobj(9, zlib.DEFLATED, -15)
    rest = tail.compress(bytes(n % _CHUNK)) + tail.flush(zlib.Z_FINISH)
    body = one * (n // _CHUNK) + rest
    if not wrap:
        return body
    adler = ((n % 65521) << 16) | 1  # Adler-32 of n zeros: sum A stays 1, sum B grows by 1 a byte
    return b"\x78\xda" + body + struct.pack(">I", adler)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def png(width: int, height: int, depth: int = 8, colour: int = 2) -> bytes:
    """A valid all-zero PNG of any size (``colour``: 0 grey, 2 RGB, 3 palette, 4 grey+alpha, 6 RGBA)."""
    row = 1 + -(-width * PNG_CHANNELS[colour] * depth // 8)
    out = b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0))
    if colour == 3:
        out += _png_chunk(b"PLTE", bytes(range(0, 255, 85)) * 3)
    return out + _png_chunk(b"IDAT", zeros_deflate(row * height)) + _png_chunk(b"IEND", b"")


def tiff(width: int, height: int, bits: int = 8, samples: int = 3) -> bytes:
    """A valid all-zero deflate-compressed TIFF, one strip (little-endian)."""
    data = zeros_deflate(width * height * samples * bits // 8)
    entries = [
        (256, 4, 1, width),
        (257, 4, 1, height),
        (258, 3, 1, bits),
        (259, 3, 1, 8),
        (262, 3, 1, 2 if samples >= 3 else 1),
        (273, 4, 1, 0),
        (277, 3, 1, samples),
        (278, 4, 1, height),
        (279, 4, 1, len(data)),
        (284, 3, 1, 1),
    ]
    if samples > 1 and bits > 8:  # BitsPerSample per sample, stored out of line
        pass
    ifd_at = 8
    ifd_size = 2 + 12 * len(entries) + 4
    data_at = ifd_at + ifd_size
    ifd = struct.pack("<H", len(entries))
    for tag, typ, count, value in entries:
        if tag == 273:
            value = data_at
        packed = struct.pack("<H", value) + b"\0\0" if typ == 3 else struct.pack("<I", value)
        ifd += struct.pack("<HHI", tag, typ, count) + packed
    ifd += b"\0\0\0\0"
    return b"II*\x00" + struct.pack("<I", ifd_at) + ifd + data


def bmp_rle(width: int, height: int) -> bytes:
    """An 8-bit RLE BMP of any size whose pixel data is one end-of-bitmap code."""
    palette = bytes(4 * 256)
    pixels = b"\x00\x01"
    offset = 14 + 40 + len(palette)
    size = offset + len(pixels)
    return (
        b"BM"
        + struct.pack("<IHHI", size, 0, 0, offset)
        + struct.pack("<IiiHHIIiiII", 40, width, height, 1, 8, 1, len(pixels), 2835, 2835, 256, 0)
        + palette
        + pixels
    )


def webp_lossless(width: int, height: int) -> bytes:
    """A lossless WebP of one colour: its Huffman codes have one symbol each (0 bits per pixel),
    so the bitstream of a small image decodes to any size once its header says so."""
    import cv2

    small = np.full((16, 16, 3), 77, np.uint8)
    ok, enc = cv2.imencode(".webp", small, [cv2.IMWRITE_WEBP_QUALITY, 101])
    buf = bytearray(enc.tobytes())
    assert ok and buf[12:16] == b"VP8L", "expected a simple lossless WebP"
    bits = int.from_bytes(buf[21:25], "little")
    bits = (bits & ~0x0FFFFFFF) | (width - 1) | ((height - 1) << 14)
    buf[21:25] = bits.to_bytes(4, "little")
    return bytes(buf)


def jpeg_with_size(width: int, height: int, progressive: bool = False) -> bytes:
    """A small real JPEG whose frame header is patched to ``width`` x ``height`` (libjpeg decodes
    the missing scan data as grey, with a warning)."""
    import cv2

    img = np.full((64, 64, 3), 90, np.uint8)
    params = [cv2.IMWRITE_JPEG_PROGRESSIVE, 1] if progressive else []
    ok, enc = cv2.imencode(".jpg", img, params)
    buf = bytearray(enc.tobytes())
    sof = 0xC2 if progressive else 0xC0
    at = buf.find(bytes([0xFF, sof]))
    assert ok and at > 0
    buf[at + 5 : at + 9] = struct.pack(">HH", height, width)
    return bytes(buf)


def npy_header_only(shape: tuple[int, ...], dtype: str = "<f8") -> bytes:
    """A .npy whose header declares ``shape`` and which holds no data."""
    header = repr({"descr": dtype, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (-(len(header) + 11) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header


def npz_zeros(name: str, shape: tuple[int, ...], dtype: str = "<f8", **extra: np.ndarray) -> bytes:
    """An .npz holding an all-zero array ``name`` of ``shape``, deflated (a zip bomb), plus ``extra``."""
    import io
    import zipfile

    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    header = npy_header_only(shape, dtype)
    raw = zeros_deflate(n, wrap=False)
    # a stored header + deflated zeros: write the member by hand into a zip
    full = header  # the array member: header then n zero bytes
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    head_part = comp.compress(full) + comp.flush(zlib.Z_FULL_FLUSH)
    body = head_part + raw
    crc = zlib.crc32(header)
    chunk = bytes(_CHUNK)
    for _ in range(n // _CHUNK):
        crc = zlib.crc32(chunk, crc)
    crc = zlib.crc32(bytes(n % _CHUNK), crc)
    size = len(header) + n
    out = io.BytesIO()
    member = f"{name}.npy".encode()
    zip64 = size >= 0xFFFFFFFF
    extra_field = struct.pack("<HHQQ", 1, 16, size, len(body)) if zip64 else b""
    sz, csz = (0xFFFFFFFF, 0xFFFFFFFF) if zip64 else (size, len(body))
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 8, 0, 0, crc, csz, sz, len(member), len(extra_field))
    out.write(local + member + extra_field + body)
    central = [(member, crc, csz, sz, extra_field, 0, 8)]
    with zipfile.ZipFile(out, "a") as zf:  # the small extras, written by zipfile itself
        for key, value in extra.items():
            buf = io.BytesIO()
            np.save(buf, value)
            zf.writestr(f"{key}.npy", buf.getvalue())
    data = bytearray(out.getvalue())
    # zipfile rewrote the central directory without our member: add its entry
    end = data.rfind(b"PK\x05\x06")
    cd_off = struct.unpack("<I", data[end + 16 : end + 20])[0]
    cd = bytes(data[cd_off:end])
    entries = struct.unpack("<H", data[end + 10 : end + 12])[0]
    mine = b""
    for member_name, c, cs, s, ex, off, method in central:
        mine += (
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                45,
                45,
                0,
                method,
                0,
                0,
                c,
                cs,
                s,
                len(member_name),
                len(ex),
                0,
                0,
                0,
                0,
                off,
            )
            + member_name
            + ex
        )
    new_cd = mine + cd
    tail = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, entries + 1, entries + 1, len(new_cd), cd_off, 0)
    return bytes(data[:cd_off]) + new_cd + tail


def wav_sparse(path: Path, seconds: float, rate: int = 48_000, channels: int = 2) -> None:
    """A valid 16-bit WAV of ``seconds`` of silence, written as a sparse file (no disk used)."""
    n = int(seconds * rate) * channels * 2
    head = (
        b"RIFF"
        + struct.pack("<I", 36 + n)
        + b"WAVE"
        + b"fmt "
        + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2, 16)
        + b"data"
        + struct.pack("<I", n)
    )
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + n)


def wav_header(channels: int = 2, rate: int = 48_000, frames: int = 100) -> bytes:
    n = frames * channels * 2
    return (
        b"RIFF"
        + struct.pack("<I", 36 + n)
        + b"WAVE"
        + b"fmt "
        + struct.pack(
            "<IHHIIHH", 16, 1, channels, rate, (rate * channels * 2) & 0xFFFFFFFF, (channels * 2) & 0xFFFF, 16
        )
        + b"data"
        + struct.pack("<I", n)
        + bytes(n)
    )


def flac_claiming(total_samples: int, seconds: float = 0.5, rate: int = 48_000) -> bytes:
    """A real short FLAC whose STREAMINFO is patched to declare ``total_samples`` (36 bits)."""
    import io

    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, np.zeros(int(seconds * rate)), rate, format="FLAC")
    data = bytearray(buf.getvalue())
    assert data[:4] == b"fLaC" and data[4] & 0x7F == 0  # STREAMINFO first
    info = 8  # 4 magic + 4 block header
    # bytes 10..17 of STREAMINFO: rate(20) channels-1(3) bps-1(5) total samples(36)
    word = int.from_bytes(data[info + 10 : info + 18], "big")
    word = (word & ~((1 << 36) - 1)) | (total_samples & ((1 << 36) - 1))
    data[info + 10 : info + 18] = word.to_bytes(8, "big")
    data[info + 18 : info + 34] = bytes(16)  # MD5 unknown
    return bytes(data)


def _ogg_crc(page: bytes) -> int:
    crc = 0
    for byte in page:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
            crc &= 0xFFFFFFFF
    return crc


def ogg_claiming(granule: int, seconds: float = 0.5, rate: int = 48_000) -> bytes:
    """A real short OGG Vorbis whose last page's granule position is patched to ``granule``."""
    import io

    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, np.zeros(int(seconds * rate)), rate, format="OGG", subtype="VORBIS")
    data = bytearray(buf.getvalue())
    last = data.rfind(b"OggS")
    data[last + 6 : last + 14] = struct.pack("<q", granule)
    data[last + 22 : last + 26] = bytes(4)
    nseg = data[last + 26]
    length = 27 + nseg + sum(data[last + 27 : last + 27 + nseg])
    data[last + 22 : last + 26] = struct.pack("<I", _ogg_crc(bytes(data[last : last + length])))
    return bytes(data)


def flac_silence(path: Path, seconds: float, rate: int = 48_000, channels: int = 2) -> None:
    """A real FLAC of ``seconds`` of silence (a few hundred bytes per second)."""
    import soundfile as sf

    block = np.zeros((rate * 10, channels))
    with sf.SoundFile(path, "w", rate, channels, format="FLAC") as f:
        left = int(seconds * rate)
        while left > 0:
            f.write(block[: min(left, len(block))])
            left -= len(block)


def jpeg_constant(width: int, height: int) -> bytes:
    """A complete, valid baseline JPEG of any size, all mid-grey, written without encoding pixels.

    With OpenCV's standard Huffman tables and 4:2:0 sampling, an MCU (16x16 pixels: four Y blocks,
    one Cb, one Cr) whose blocks all have DC difference 0 and no AC coefficient is the same 32
    bits every time: Y ``00`` ``1010`` x 4, Cb ``00`` ``00``, Cr ``00`` ``00`` = 28 A2 8A 00.
    """
    import cv2

    ok, enc = cv2.imencode(
        ".jpg",
        np.full((16, 16, 3), 128, np.uint8),
        [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420],
    )
    buf = bytearray(enc.tobytes())
    sof = buf.find(b"\xff\xc0")
    buf[sof + 5 : sof + 9] = struct.pack(">HH", height, width)
    sos = buf.find(b"\xff\xda")
    header = bytes(buf[: sos + 2 + int.from_bytes(buf[sos + 2 : sos + 4], "big")])
    mcus = -(-width // 16) * -(-height // 16)
    return header + b"\x28\xa2\x8a\x00" * mcus + b"\xff\xd9"
