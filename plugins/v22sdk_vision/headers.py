"""Byte-level facts about an image file, read before (or instead of) decoding it.

OpenCV decodes partially what it cannot decode fully (a truncated JPEG comes back with its
missing rows filled grey and only a warning on stderr), exposes no "read the header only" call,
and ignores EXIF orientation when asked for the unchanged pixels. So this module reads, from the
file's bytes and without decoding pixels:

* :func:`sniff` the format from its magic bytes (the extension is not trusted);
* :func:`dimensions` the width and height in the header (PNG, JPEG, BMP, WebP);
* :func:`truncation` whether the file ends where its own structure says it must;
* :func:`exif_orientation` the EXIF orientation tag (1..8) of JPEG, PNG (``eXIf``), WebP and TIFF
  (for TIFF only informative: OpenCV's TIFF decoder applies it itself).

Everything is pure Python over ``bytes`` and never raises on garbage: it answers None instead.
"""

from __future__ import annotations

import struct
from typing import NamedTuple


def sniff(buf: bytes) -> str | None:
    """Format name from the magic bytes: ``png``, ``jpeg``, ``bmp``, ``webp``, ``tiff`` or None."""
    if buf.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if buf.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if buf.startswith(b"BM"):
        return "bmp"
    if buf[:4] == b"RIFF" and buf[8:12] == b"WEBP":
        return "webp"
    if buf[:4] in (b"II*\x00", b"MM\x00*"):
        return "tiff"
    return None


def _jpeg_segments(buf: bytes):
    """Yield (marker, payload_start, payload_end) for the header segments of a JPEG, up to SOS."""
    i = 2
    n = len(buf)
    while i + 4 <= n:
        if buf[i] != 0xFF:
            return
        marker = buf[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = struct.unpack(">H", buf[i + 2 : i + 4])[0]
        yield marker, i + 4, min(n, i + 2 + length)
        if marker == 0xDA:  # start of scan: entropy-coded data follows
            return
        i += 2 + length


def dimensions(buf: bytes) -> tuple[int, int] | None:
    """(width, height) stored in the header, or None when the format has none we read."""
    fmt = sniff(buf)
    try:
        if fmt == "png" and len(buf) >= 24:
            return struct.unpack(">II", buf[16:24])
        if fmt == "jpeg":
            for marker, start, _end in _jpeg_segments(buf):
                # SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC)
                if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                    h, w = struct.unpack(">HH", buf[start + 1 : start + 5])
                    return w, h
            return None
        if fmt == "bmp" and len(buf) >= 26:
            w, h = struct.unpack("<ii", buf[18:26])
            return abs(w), abs(h)
        if fmt == "webp" and len(buf) >= 30:
            chunk = buf[12:16]
            if chunk == b"VP8X":
                w = 1 + int.from_bytes(buf[24:27], "little")
                h = 1 + int.from_bytes(buf[27:30], "little")
                return w, h
            if chunk == b"VP8L":
                bits = int.from_bytes(buf[21:25], "little")
                return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
            if chunk == b"VP8 ":
                w, h = struct.unpack("<HH", buf[26:30])
                return w & 0x3FFF, h & 0x3FFF
    except (struct.error, IndexError):
        return None
    return None


def truncation(buf: bytes) -> str | None:
    """Why the file is visibly cut short, or None when its structure is complete (or unknown)."""
    fmt = sniff(buf)
    if fmt == "jpeg":
        last_sos = buf.rfind(b"\xff\xda")
        last_eoi = buf.rfind(b"\xff\xd9")
        # Entropy-coded data never contains FF D9 (FF is byte-stuffed), so a complete JPEG has an
        # end-of-image marker after its last start-of-scan. An EOI before it belongs to an EXIF
        # thumbnail and does not count.
        if last_sos < 0:
            return "the JPEG has no image data (no start-of-scan marker)"
        if last_eoi < last_sos:
            return "the JPEG is truncated (no end-of-image marker after its image data)"
        return None
    if fmt == "png":
        end = buf.rfind(b"IEND")
        if end < 0 or end + 8 > len(buf):  # the chunk type, then its 4-byte CRC
            return "the PNG is truncated (no complete IEND chunk)"
        return None
    if fmt == "webp":
        declared = int.from_bytes(buf[4:8], "little") + 8
        if len(buf) < declared:
            return f"the WebP is truncated ({len(buf)} of {declared} bytes)"
        return None
    if fmt == "bmp" and len(buf) >= 6:
        declared = int.from_bytes(buf[2:6], "little")
        if 0 < declared and len(buf) < declared:
            return f"the BMP is truncated ({len(buf)} of {declared} bytes)"
        return None
    return None


def _tiff_orientation(tiff: bytes) -> int | None:
    """Orientation tag (0x0112) of IFD0 in a TIFF-structured block (EXIF payload or a TIFF file)."""
    if len(tiff) < 8:
        return None
    order = {b"II": "<", b"MM": ">"}.get(tiff[:2])
    if order is None:
        return None
    offset = struct.unpack(order + "I", tiff[4:8])[0]
    if offset + 2 > len(tiff):
        return None
    count = struct.unpack(order + "H", tiff[offset : offset + 2])[0]
    for k in range(count):
        entry = offset + 2 + 12 * k
        if entry + 12 > len(tiff):
            return None
        tag, typ = struct.unpack(order + "HH", tiff[entry : entry + 4])
        if tag == 0x0112 and typ == 3:  # SHORT
            value = struct.unpack(order + "H", tiff[entry + 8 : entry + 10])[0]
            return value if 1 <= value <= 8 else None
    return None


def exif_orientation(buf: bytes) -> int:
    """EXIF orientation (1..8, 1 = as stored) of the file; 1 when absent or unreadable."""
    fmt = sniff(buf)
    found = None
    try:
        if fmt == "jpeg":
            for marker, start, end in _jpeg_segments(buf):
                if marker == 0xE1 and buf[start : start + 6] == b"Exif\x00\x00":
                    found = _tiff_orientation(buf[start + 6 : end])
                    break
        elif fmt == "png":
            i = 8
            while i + 8 <= len(buf):
                length = struct.unpack(">I", buf[i : i + 4])[0]
                kind = buf[i + 4 : i + 8]
                if kind == b"eXIf":
                    found = _tiff_orientation(buf[i + 8 : i + 8 + length])
                    break
                if kind in (b"IDAT", b"IEND"):  # eXIf must precede the image data
                    break
                i += 12 + length
        elif fmt == "webp":
            i = 12
            while i + 8 <= len(buf):
                kind = buf[i : i + 4]
                length = int.from_bytes(buf[i + 4 : i + 8], "little")
                if kind == b"EXIF":
                    payload = buf[i + 8 : i + 8 + length]
                    if payload.startswith(b"Exif\x00\x00"):
                        payload = payload[6:]
                    found = _tiff_orientation(payload)
                    break
                i += 8 + length + (length & 1)
        elif fmt == "tiff":
            found = _tiff_orientation(buf)
    except (struct.error, IndexError):
        found = None
    return found or 1


# -- what decoding will allocate ------------------------------------------------------------------


class Layout(NamedTuple):
    """What the header says the decoder will produce: ``width`` x ``height`` pixels of
    ``channels`` samples of ``sample_bytes`` each, plus ``work_bytes`` of buffers the decoding
    library allocates besides its output (libtiff strips, libjpeg's coefficients of a
    progressive file); ``what`` names it for messages."""

    fmt: str
    width: int
    height: int
    channels: int
    sample_bytes: int
    work_bytes: int
    what: str

    @property
    def output_bytes(self) -> int:
        return self.width * self.height * self.channels * self.sample_bytes


_PNG_COLOURS = {0: ("grey", 1), 2: ("RGB", 3), 3: ("palette", 3), 4: ("grey+alpha", 4), 6: ("RGBA", 4)}


def _png_layout(buf: bytes) -> Layout | None:
    if len(buf) < 26:
        return None
    w, h = struct.unpack(">II", buf[16:24])
    depth, colour = buf[24], buf[25]
    name, channels = _PNG_COLOURS.get(colour, ("unknown", 4))
    if b"tRNS" in buf[: buf.find(b"IDAT") if b"IDAT" in buf else len(buf)]:
        channels = 4  # transparency becomes an alpha channel
    sample = 2 if depth == 16 else 1
    return Layout("png", w, h, channels, sample, 0, f"a {w}x{h} {depth}-bit {name} PNG")


def _jpeg_layout(buf: bytes) -> Layout | None:
    for marker, start, _end in _jpeg_segments(buf):
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            precision, h, w, comps = struct.unpack(">BHHB", buf[start : start + 6])
            progressive = marker in (0xC2, 0xC6, 0xCA, 0xCE)
            # A progressive (or multi-scan) JPEG is decoded through a buffer of every DCT
            # coefficient of the full-size image (2 bytes each), whatever the output scale.
            multi = progressive or buf.count(b"\xff\xda") > 1
            coefficients = 2 * (-(-w // 8) * 8) * (-(-h // 8) * 8) * comps if multi else 0
            kind = "progressive " if progressive else ""
            return Layout(
                "jpeg", w, h, 1 if comps == 1 else 3, 2 if precision > 8 else 1, coefficients, f"a {w}x{h} {kind}JPEG"
            )
    return None


def _bmp_layout(buf: bytes) -> Layout | None:
    if len(buf) < 30:
        return None
    header = struct.unpack("<I", buf[14:18])[0]
    if header == 12:  # OS/2 BITMAPCOREHEADER: 16-bit sizes
        w, h, bpp = struct.unpack("<HHxxH", buf[18:26])
    else:
        w, h = (abs(v) for v in struct.unpack("<ii", buf[18:26]))
        bpp = struct.unpack("<H", buf[28:30])[0]
    return Layout("bmp", w, h, 4 if bpp == 32 else 3, 1, 0, f"a {w}x{h} {bpp}-bit BMP")


def _webp_layout(buf: bytes) -> Layout | None:
    size = dimensions(buf)
    if size is None:
        return None
    w, h = size
    chunk = buf[12:16]
    if chunk == b"VP8X":
        alpha = bool(buf[20] & 0x10)
    elif chunk == b"VP8L":
        alpha = bool(int.from_bytes(buf[21:25], "little") >> 28 & 1)
    else:
        alpha = False
    return Layout("webp", w, h, 4 if alpha else 3, 1, 0, f"a {w}x{h} WebP")


_TIFF_TYPES = {1: 1, 3: 2, 4: 4, 16: 8}  # BYTE, SHORT, LONG, LONG8: bytes per value


def _tiff_tags(buf: bytes) -> dict[int, list[int]] | None:
    order = {b"II": "<", b"MM": ">"}.get(buf[:2])
    if order is None or len(buf) < 8:
        return None
    offset = struct.unpack(order + "I", buf[4:8])[0]
    if offset + 2 > len(buf):
        return None
    count = struct.unpack(order + "H", buf[offset : offset + 2])[0]
    tags: dict[int, list[int]] = {}
    for k in range(count):
        entry = offset + 2 + 12 * k
        if entry + 12 > len(buf):
            return None
        tag, typ, n = struct.unpack(order + "HHI", buf[entry : entry + 8])
        size = _TIFF_TYPES.get(typ)
        if size is None or n == 0 or n > 64:
            continue
        at = entry + 8 if size * n <= 4 else struct.unpack(order + "I", buf[entry + 8 : entry + 12])[0]
        if at + size * n > len(buf):
            continue
        code = {1: "B", 2: "H", 4: "I", 8: "Q"}[size]
        tags[tag] = list(struct.unpack(f"{order}{n}{code}", buf[at : at + size * n]))
    return tags


def _tiff_layout(buf: bytes) -> Layout | None:
    tags = _tiff_tags(buf)
    if not tags or 256 not in tags or 257 not in tags:
        return None
    w, h = tags[256][0], tags[257][0]
    spp = tags.get(277, [1])[0]
    bits = max(tags.get(258, [1]))
    sample = max(1, -(-bits // 8))
    fmt = tags.get(339, [1])[0]
    channels = max(1, min(spp, 4))
    if bits < 8 or fmt not in (1, 2, 3) or spp not in (1, 3, 4):
        channels, sample = 4, max(sample, 1)  # read through libtiff's RGBA path
    # OpenCV reads a strip (or tile) at a time into a buffer of its own, as wide as the image
    tile_w = tags.get(322, [w])[0]
    tile_h = tags.get(323, tags.get(278, [h]))[0]
    work = min(tile_w, max(w, 1)) * min(tile_h, max(h, 1)) * max(spp, 4) * sample
    if 322 in tags:
        work = max(work, tile_w * tile_h * max(spp, 4) * sample)
    return Layout("tiff", w, h, channels, sample, work, f"a {w}x{h} {bits}-bit TIFF")


def layout(buf: bytes) -> Layout | None:
    """The :class:`Layout` the header of ``buf`` declares; None when it cannot be read."""
    reader = {
        "png": _png_layout,
        "jpeg": _jpeg_layout,
        "bmp": _bmp_layout,
        "webp": _webp_layout,
        "tiff": _tiff_layout,
    }.get(sniff(buf) or "")
    try:
        return reader(buf) if reader else None
    except (struct.error, IndexError, ValueError):
        return None
