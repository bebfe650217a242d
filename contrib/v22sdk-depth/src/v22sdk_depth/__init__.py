"""v22sdk-depth: depth maps as v22sdk tokens in the vision zone.

Importing this package is cheap (numpy and attrs only); OpenCV is imported when a PNG is loaded.
"""

from __future__ import annotations

from v22sdk import hookimpl

from .features import disparity_to_depth
from .modality import DepthModality

__version__ = "0.1.0"
__all__ = ["DepthModality", "disparity_to_depth"]


@hookimpl
def v22sdk_register_modalities():
    return [DepthModality]
