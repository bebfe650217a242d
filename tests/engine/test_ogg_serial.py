"""Ogg Vorbis copies are byte-reproducible: libsndfile's random stream serial is replaced (storage.canonical_ogg)."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from v22sdk.engine.storage import OGG_SERIAL, canonical_ogg, ogg_crc, write_audio_variant


def _tone():
    return 0.3 * np.sin(2 * np.pi * 440.0 * np.arange(24_000) / 16_000)


def _pages(data: bytes):
    pos = 0
    while pos < len(data):
        n = data[pos + 26]
        end = pos + 27 + n + sum(data[pos + 27 : pos + 27 + n])
        yield data[pos:end]
        pos = end


def test_two_writes_of_one_copy_are_the_same_bytes_and_decode_as_libsndfile_wrote_them(tmp_path):
    a = write_audio_variant("ogg", _tone(), 16_000, tmp_path / "a").read_bytes()
    b = write_audio_variant("ogg", _tone(), 16_000, tmp_path / "b").read_bytes()
    assert a == b
    sf.write(tmp_path / "raw.ogg", _tone(), 16_000, format="OGG", subtype="VORBIS")
    raw = (tmp_path / "raw.ogg").read_bytes()
    assert raw != a  # libsndfile's own serial is random
    np.testing.assert_array_equal(sf.read(tmp_path / "a.ogg")[0], sf.read(tmp_path / "raw.ogg")[0])
    pages = list(_pages(a))
    assert len(pages) >= 2 and all(int.from_bytes(p[14:18], "little") == OGG_SERIAL for p in pages)


def test_the_checksum_is_ogg_s_own(tmp_path):
    sf.write(tmp_path / "raw.ogg", _tone(), 16_000, format="OGG", subtype="VORBIS")
    for page in _pages((tmp_path / "raw.ogg").read_bytes()):
        zeroed = bytearray(page)
        zeroed[22:26] = b"\0\0\0\0"
        assert ogg_crc(zeroed) == int.from_bytes(page[22:26], "little")  # libogg's checksums, reproduced


def test_a_file_that_is_not_whole_ogg_pages_is_refused(tmp_path):
    data = write_audio_variant("ogg", _tone(), 16_000, tmp_path / "a").read_bytes()
    with pytest.raises(ValueError, match="cut short"):
        canonical_ogg(data[:-10])
    with pytest.raises(ValueError, match="not an Ogg page at byte 0"):
        canonical_ogg(b"RIFF" + data[4:])
