"""v22sdk-hello: the reference third-party modality plugin (a level meter for 1-D signals).

Registered through the ``v22sdk`` entry point in this distribution's pyproject.toml; cheap to
import (numpy and attrs only), as every plugin module must be.
"""

from v22sdk import hookimpl

from .modality import SCHEMA, HelloModality

__version__ = "0.1.0"
__all__ = ["HelloModality", "SCHEMA"]


@hookimpl
def v22sdk_register_modalities():
    return [HelloModality]
