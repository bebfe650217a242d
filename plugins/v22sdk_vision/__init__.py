"""Built-in vision modality: images → 640-D tokens (pixel embedding + 128 white-box ``vis.*`` slots).

Cheap to import (numpy and attrs only); OpenCV is imported when an image is decoded or encoded.
See ``docs/vision-modality.md``.
"""

from v22sdk import hookimpl

from .modality import VisionModality
from .slots import SCHEMA

__all__ = ["VisionModality", "SCHEMA"]


@hookimpl
def v22sdk_register_modalities():
    return [VisionModality]
