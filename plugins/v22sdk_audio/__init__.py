"""Built-in ``audio`` modality: WAV/FLAC/OGG or sample arrays -> one 640-D token per 0.5 s segment.

Cheap to import (numpy and attrs only); scipy and soundfile are imported when audio is analysed.
"""

from v22sdk import hookimpl

from .modality import AudioModality

__all__ = ["AudioModality"]


@hookimpl
def v22sdk_register_modalities():
    return [AudioModality]
