"""v22sdk-imu: accelerometer + gyroscope windows as v22sdk tokens in the audio zone (numpy only)."""

from __future__ import annotations

from v22sdk import hookimpl

from .modality import IMUModality

__version__ = "0.1.0"
__all__ = ["IMUModality"]


@hookimpl
def v22sdk_register_modalities():
    return [IMUModality]
