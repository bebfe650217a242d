"""Built-in memory backends, registered through the ``v22sdk`` entry point like any plugin.

Importing this module does not import torch; :class:`TieredMemory` imports it when used.
"""

from __future__ import annotations

from ..hookspecs import hookimpl
from .tiered import TieredMemory


@hookimpl
def v22sdk_register_memory_backends():
    return [TieredMemory]
