"""Built-in memory backends, registered through the ``v22sdk`` entry point like any plugin.

Importing this module imports neither torch nor psycopg; the backends import them when used.
``postgres`` needs the extra ``v22sdk[postgres]``.
"""

from __future__ import annotations

from ..hookspecs import hookimpl
from .postgres import PostgresMemory
from .tiered import TieredMemory


@hookimpl
def v22sdk_register_memory_backends():
    return [TieredMemory, PostgresMemory]
