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
        length = struct.unpack(">H", buf[i + 2:i + 4])[0]
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
                    h, w = struct.unpack(">HH", buf[start + 1:start + 5])
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
    count = struct.unpack(order + "H", tiff[offset:offset + 2])[0]
    for k in range(count):
        entry = offset + 2 + 12 * k
        if entry + 12 > len(tiff):
            return None
        tag, typ = struct.unpack(order + "HH", tiff[entry:entry + 4])
        if tag == 0x0112 and typ == 3:  # SHORT
            value = struct.unpack(order + "H", tiff[entry + 8:entry + 10])[0]
            return value if 1 <= value <= 8 else None
    return None


def exif_orientation(buf: bytes) -> int:
    """EXIF orientation (1..8, 1 = as stored) of the file; 1 when absent or unreadable."""
    fmt = sniff(buf)
    found = None
    try:
        if fmt == "jpeg":
            for marker, start, end in _jpeg_segments(buf):
                if marker == 0xE1 and buf[start:start + 6] == b"Exif\x00\x00":
                    found = _tiff_orientation(buf[start + 6:end])
                    break
        elif fmt == "png":
            i = 8
            while i + 8 <= len(buf):
                length = struct.unpack(">I", buf[i:i + 4])[0]
                kind = buf[i + 4:i + 8]
                if kind == b"eXIf":
                    found = _tiff_orientation(buf[i + 8:i + 8 + length])
                    break
                if kind in (b"IDAT", b"IEND"):  # eXIf must precede the image data
                    break
                i += 12 + length
        elif fmt == "webp":
            i = 12
            while i + 8 <= len(buf):
                kind = buf[i:i + 4]
                length = int.from_bytes(buf[i + 4:i + 8], "little")
                if kind == b"EXIF":
                    payload = buf[i + 8:i + 8 + length]
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
