"""Decoding audio files with soundfile (libsndfile): WAV (PCM 8/16/24/32-bit, float), FLAC, OGG.

libsndfile silently reads what is there when a WAV's data chunk is shorter than its header says,
so WAV headers are checked here first: a truncated WAV is an :class:`InputError`, never a shorter
clip. (A data size of 0 or 0xFFFFFFFF, which streaming writers leave, is accepted as "to the end".)

Memory is bounded from the header, before any sample is decoded: libsndfile's header reading
gives the frame count, channels and rate, and :func:`estimate` of reading *and tokenizing* the
clip must fit the decode budget of :mod:`v22sdk.decoding` (512 MiB by default), else
:class:`~v22sdk.decoding.InputTooLarge`. A header that declares an absurd length (a FLAC whose
STREAMINFO says 2**36 samples, an OGG whose last granule position says a year) is refused in
milliseconds; so is a rate or channel count outside what the modality accepts.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from v22sdk import InputError, UnitsError
from v22sdk.decoding import check_budget, check_regular_file

from .frontend import MAX_CHANNELS, MAX_RATE, MIN_RATE

_STREAMING_SIZES = (0, 0xFFFFFFFF)

#: Peak memory of reading and tokenizing a clip, measured (tests/audio/test_audio_bombs.py checks
#: it): a fixed part, a part per second of audio (the analysis at 16 kHz), and a multiple of the
#: decoded float64 samples at the source rate and channel count (the decoded array, its
#: full-scale copy, the mono mix and the clipping masks).
BASE_BYTES = 80 << 20
BYTES_PER_SECOND = int(1.6 * (1 << 20))
SOURCE_COPIES = 3.5


def estimate(frames: int, channels: int, rate: float) -> int:
    """Peak bytes of reading and tokenizing ``frames`` x ``channels`` samples at ``rate`` Hz."""
    return int(BASE_BYTES + BYTES_PER_SECOND * frames / rate + SOURCE_COPIES * 8 * frames * channels)


def check_wav(path: str, size: int, big_endian: bool = False) -> None:
    """Raise InputError if the RIFF (or big-endian RIFX) WAVE file at ``path`` (``size`` bytes) is truncated."""
    fmt = ">I" if big_endian else "<I"
    pos = 12
    with open(path, "rb") as fh:
        while True:
            fh.seek(pos)
            hdr = fh.read(8)
            if len(hdr) < 8:
                raise InputError(path, "WAV file ends before its 'data' chunk: the file is truncated or damaged")
            cid, clen = hdr[:4], struct.unpack(fmt, hdr[4:])[0]
            if cid == b"data":
                have = size - pos - 8
                if clen not in _STREAMING_SIZES and have < clen:
                    raise InputError(
                        path, f"WAV file is truncated: its header declares {clen} bytes of audio, the file holds {have}"
                    )
                return
            pos += 8 + clen + (clen & 1)


def read(path: str | os.PathLike[str]) -> tuple[np.ndarray, int]:
    """Decode ``path`` -> (float64 samples (n,) or (n, ch) in full-scale units, sample rate Hz)."""
    import soundfile as sf

    name = str(path)
    if os.path.exists(name):
        check_regular_file(name)  # a FIFO would block, a device never end
    try:
        size = os.path.getsize(name)
        with open(name, "rb") as fh:
            head = fh.read(12)
    except OSError as exc:
        raise InputError(name, f"cannot open the file: {exc.strerror or exc}") from None
    if size == 0:
        raise InputError(name, "the file is empty (0 bytes)")
    if head[:4] in (b"RIFF", b"RIFX") and head[8:12] == b"WAVE":
        check_wav(name, size, big_endian=head[:4] == b"RIFX")
    try:
        # through a Python file object: libsndfile cannot open a name that is not valid UTF-8
        # (bytes from another system's file names), and the format is sniffed from the content anyway
        with open(name, "rb") as fh, sf.SoundFile(fh) as f:
            frames, channels, rate = f.frames, f.channels, f.samplerate
            _check_header(name, frames, channels, rate, f.format)
            data = f.read(frames, dtype="float64", always_2d=False)
    except InputError:
        raise
    except (sf.SoundFileError, RuntimeError, TypeError, ValueError) as exc:
        hint = ""
        if head[:8] == b"\x89PNG\r\n\x1a\n":
            hint = " (it is a PNG image)"
        elif head[:3] == b"\xff\xd8\xff":
            hint = " (it is a JPEG image)"
        raise InputError(name, f"not a readable audio file{hint}: {_libsndfile_says(exc)}") from None
    if data.size == 0:
        raise InputError(name, "holds no audio samples")
    return data, int(rate)


def _libsndfile_says(exc: Exception) -> str:
    """libsndfile's reason, without soundfile's "Error opening <_io.BufferedReader ...>:" prefix
    and without its misleading words for a regular file it could not decode."""
    text = str(exc).strip()
    if text.startswith("Error opening") and ">: " in text:
        text = text.split(">: ", 1)[1]
    if "does not exist or is not a regular file" in text:  # what libsndfile says when mpg123 gives up
        return "no audio format recognised (not WAV, FLAC, OGG or MPEG audio the decoder can read)"
    return text.rstrip(".")


def _check_header(name: str, frames: int, channels: int, rate: int, fmt: str) -> None:
    """Refuse, from the header alone, what cannot or must not be decoded."""
    if channels < 1 or channels > MAX_CHANNELS:
        raise InputError(
            name, f"the {fmt} header declares {channels} channels (this modality reads 1 to {MAX_CHANNELS})"
        )
    if not (MIN_RATE <= rate <= MAX_RATE):
        raise UnitsError(
            name, f"the {fmt} header declares a sample rate of {rate:g} Hz, outside [{MIN_RATE:g}, {MAX_RATE:g}] Hz"
        )
    if frames <= 0:
        raise InputError(name, "holds no audio samples")
    seconds = frames / rate
    length = f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds:.0f} s"
    check_budget(
        name,
        estimate(frames, channels, rate),
        f"its header declares {length} of {channels}-channel {fmt} audio at {rate:g} Hz, which",
    )
