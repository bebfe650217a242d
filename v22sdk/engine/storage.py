"""The same content, stored differently: the file variants of the storage-robustness checks.

A user's WAV may be 8-bit or float, 22.05 or 44.1 kHz, mono or stereo; a photo may be a PNG, a
JPEG or a WebP, large or small. None of that changes what the input *is*, so none of it may change
the answer. This module writes those variants of one signal with the real encoders (libsndfile
through ``soundfile``: PCM, float, FLAC, Ogg Vorbis; OpenCV: PNG, JPEG, WebP) so that the
metamorphic tests (``tests/engine/test_storage.py``), the agreement measurement
(``scripts/measure_storage.py``) and training augmentation all use one definition.

    variants = AUDIO_VARIANTS            # name -> AudioVariant
    path = write_audio_variant("wav8_22k", samples, 16000, tmp / "x")   # -> tmp/x.wav

Every variant is deterministic, to the byte (no random dither: libsndfile rounds; Vorbis and
libjpeg are deterministic for a given input and settings). libsndfile gives each Ogg stream a
random serial number, so two writes of one Ogg Vorbis copy decoded alike but differed in the
serial and the page checksums: :func:`canonical_ogg` sets the serial to :data:`OGG_SERIAL` and
recomputes the checksums, so that a data set of copies has one identity however often it is built.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from math import gcd
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class AudioVariant:
    """How to store a signal: container/subtype, the sample rate (None: keep), channels (None: keep)."""

    name: str
    format: str  # soundfile format: WAV, FLAC, OGG
    subtype: str  # soundfile subtype: PCM_U8, PCM_16, PCM_24, FLOAT, VORBIS
    rate: int | None = None
    channels: int | None = None
    describe: str = ""

    @property
    def suffix(self) -> str:
        return {"WAV": ".wav", "FLAC": ".flac", "OGG": ".ogg"}[self.format]


@dataclass(frozen=True)
class ImageVariant:
    """How to store an image: the encoder (``.png``, ``.jpg``, ``.webp``), its quality, a rescale factor."""

    name: str
    suffix: str
    quality: int | None = None
    scale: float = 1.0
    describe: str = ""


#: the reference storage of every audio comparison comes first
AUDIO_VARIANTS = {
    v.name: v
    for v in (
        AudioVariant("wav16", "WAV", "PCM_16", describe="16-bit PCM WAV at the source rate (the reference)"),
        AudioVariant("wav8", "WAV", "PCM_U8", describe="8-bit unsigned PCM WAV"),
        AudioVariant("wav24", "WAV", "PCM_24", describe="24-bit PCM WAV"),
        AudioVariant("float", "WAV", "FLOAT", describe="32-bit float WAV"),
        AudioVariant("flac", "FLAC", "PCM_16", describe="FLAC, 16-bit"),
        AudioVariant("ogg", "OGG", "VORBIS", describe="Ogg Vorbis (lossy), libsndfile's default quality"),
        AudioVariant("r16k", "WAV", "PCM_16", rate=16_000, describe="resampled to 16 kHz, 16-bit"),
        AudioVariant("r22k", "WAV", "PCM_16", rate=22_050, describe="resampled to 22.05 kHz, 16-bit"),
        AudioVariant("r44k", "WAV", "PCM_16", rate=44_100, describe="resampled to 44.1 kHz, 16-bit"),
        AudioVariant("wav8_22k", "WAV", "PCM_U8", rate=22_050, describe="8-bit at 22.05 kHz"),
        AudioVariant("stereo", "WAV", "PCM_16", channels=2, describe="the same samples on two channels"),
        AudioVariant("mono", "WAV", "PCM_16", channels=1, describe="channels averaged to mono"),
    )
}

#: the reference storage of every image comparison comes first
IMAGE_VARIANTS = {
    v.name: v
    for v in (
        ImageVariant("png", ".png", describe="PNG (lossless; the reference)"),
        ImageVariant("jpeg95", ".jpg", quality=95, describe="JPEG, quality 95"),
        ImageVariant("jpeg90", ".jpg", quality=90, describe="JPEG, quality 90"),
        ImageVariant("webp", ".webp", quality=90, describe="WebP (lossy), quality 90"),
        ImageVariant("webp_lossless", ".webp", quality=101, describe="WebP, lossless"),
        ImageVariant("half", ".png", scale=0.5, describe="PNG, rescaled to half the size (area)"),
        ImageVariant("double", ".png", scale=2.0, describe="PNG, rescaled to twice the size (cubic)"),
    )
}


def resample(x: np.ndarray, rate: int, new_rate: int) -> np.ndarray:
    """(n,) or (n, ch) float samples from ``rate`` to ``new_rate`` (polyphase, scipy's default Kaiser window)."""
    if new_rate == rate:
        return x
    from scipy.signal import resample_poly

    g = gcd(rate, new_rate)
    return resample_poly(x, new_rate // g, rate // g, axis=0)


def audio_variant_samples(variant: AudioVariant, x: np.ndarray, rate: int) -> tuple[np.ndarray, int]:
    """The float samples and rate that ``variant`` will store (before its encoder quantises them)."""
    x = np.asarray(x, dtype=np.float64)
    if variant.rate is not None:
        x = resample(x, rate, variant.rate)
        rate = variant.rate
    if variant.channels == 2 and x.ndim == 1:
        x = np.stack([x, x], axis=1)
    elif variant.channels == 1 and x.ndim == 2:
        x = x.mean(axis=1)
    # full scale is the same in every format: keep within it so that no encoder clips differently
    return np.clip(x, -1.0, 1.0 - 2.0**-15), rate


def write_audio_variant(name: str, x: np.ndarray, rate: int, stem: str | os.PathLike[str]) -> Path:
    """Write ``x`` ((n,) or (n, ch) floats, full scale 1.0, at ``rate`` Hz) as variant ``name``
    to ``stem`` + the variant's suffix; return the path."""
    import soundfile as sf

    variant = AUDIO_VARIANTS[name]
    y, r = audio_variant_samples(variant, x, rate)
    path = Path(str(stem) + variant.suffix)
    sf.write(str(path), y, r, format=variant.format, subtype=variant.subtype)
    if variant.format == "OGG":
        path.write_bytes(canonical_ogg(path.read_bytes()))
    return path


#: The stream serial number every Ogg copy gets (libsndfile draws one at random): "V22" + 1.
OGG_SERIAL = 0x56323201


def _ogg_crc_table() -> list[int]:
    table = []
    for i in range(256):
        r = i << 24
        for _ in range(8):
            r = ((r << 1) ^ 0x04C11DB7) if r & 0x80000000 else (r << 1)
        table.append(r & 0xFFFFFFFF)
    return table


_OGG_CRC = _ogg_crc_table()


def ogg_crc(page: bytes | bytearray) -> int:
    """The Ogg page checksum (CRC-32, polynomial 0x04C11DB7, not reflected, initial value 0) of
    ``page`` as given (its checksum field must already be zero)."""
    crc = 0
    table = _OGG_CRC
    for b in page:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ table[((crc >> 24) ^ b) & 0xFF]
    return crc


def canonical_ogg(data: bytes, serial: int = OGG_SERIAL) -> bytes:
    """``data`` (a single-stream Ogg file) with every page's stream serial number set to
    ``serial`` and its checksum recomputed; the packets, and so the decoded samples, are unchanged.
    A file that is not a sequence of whole Ogg pages is a ``ValueError``."""
    out = bytearray(data)
    pos = 0
    while pos < len(out):
        if out[pos : pos + 4] != b"OggS" or pos + 27 > len(out):
            raise ValueError(f"not an Ogg page at byte {pos}")
        n_seg = out[pos + 26]
        body = sum(out[pos + 27 : pos + 27 + n_seg])
        end = pos + 27 + n_seg + body
        if end > len(out):
            raise ValueError(f"the Ogg page at byte {pos} is cut short")
        out[pos + 14 : pos + 18] = serial.to_bytes(4, "little")
        out[pos + 22 : pos + 26] = b"\0\0\0\0"
        out[pos + 22 : pos + 26] = ogg_crc(out[pos:end]).to_bytes(4, "little")
        pos = end
    return bytes(out)


def rescale_image(rgb: np.ndarray, scale: float) -> np.ndarray:
    """(H, W, 3) uint8 rescaled by ``scale`` (area for shrinking, cubic for enlarging)."""
    import cv2

    if scale == 1.0:
        return rgb
    h, w = rgb.shape[:2]
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    return cv2.resize(rgb, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)


def write_image_variant(name: str, rgb: np.ndarray, stem: str | os.PathLike[str]) -> Path:
    """Write ``rgb`` ((H, W, 3) uint8, RGB order) as variant ``name`` to ``stem`` + suffix."""
    import cv2

    variant = IMAGE_VARIANTS[name]
    img = rescale_image(np.ascontiguousarray(rgb, dtype=np.uint8), variant.scale)
    params: list[int] = []
    if variant.suffix == ".jpg":
        assert variant.quality is not None, variant  # every lossy variant names its quality
        params = [cv2.IMWRITE_JPEG_QUALITY, int(variant.quality)]
    elif variant.suffix == ".webp":
        assert variant.quality is not None, variant
        params = [cv2.IMWRITE_WEBP_QUALITY, int(variant.quality)]
    path = Path(str(stem) + variant.suffix)
    ok, buf = cv2.imencode(variant.suffix, img[:, :, ::-1].copy(), params)
    if not ok:
        raise RuntimeError(f"OpenCV could not encode {variant.suffix}")
    path.write_bytes(buf.tobytes())
    return path
