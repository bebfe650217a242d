"""Decoding audio files with soundfile (libsndfile): WAV (PCM 8/16/24/32-bit, float), FLAC, OGG.

libsndfile silently reads what is there when a WAV's data chunk is shorter than its header says,
so WAV headers are checked here first: a truncated WAV is an :class:`InputError`, never a shorter
clip. (A data size of 0 or 0xFFFFFFFF, which streaming writers leave, is accepted as "to the end".)
"""

from __future__ import annotations

import os
import struct

import numpy as np

from v22sdk import InputError

_STREAMING_SIZES = (0, 0xFFFFFFFF)


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
                    raise InputError(path, f"WAV file is truncated: its header declares {clen} bytes of audio, "
                                           f"the file holds {have}")
                return
            pos += 8 + clen + (clen & 1)


def read(path: str | os.PathLike[str]) -> tuple[np.ndarray, int]:
    """Decode ``path`` -> (float64 samples (n,) or (n, ch) in full-scale units, sample rate Hz)."""
    import soundfile as sf

    name = str(path)
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
        with open(name, "rb") as fh:
            data, rate = sf.read(fh, dtype="float64", always_2d=False)
    except (sf.SoundFileError, RuntimeError, TypeError, ValueError) as exc:
        hint = ""
        if head[:8] == b"\x89PNG\r\n\x1a\n":
            hint = " (it is a PNG image)"
        elif head[:3] == b"\xff\xd8\xff":
            hint = " (it is a JPEG image)"
        raise InputError(name, f"not a readable audio file{hint}: {exc}") from None
    if data.size == 0:
        raise InputError(name, "holds no audio samples")
    return data, int(rate)
