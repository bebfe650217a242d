"""Where the memory lives by default: ``<user data dir>/v22sdk/memory.sqlite3``.

``V22SDK_MEMORY`` in the environment overrides the default; ``--memory PATH`` (CLI) or the
``path`` argument of :class:`~v22sdk.memory.TieredMemory` override both.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "V22SDK_MEMORY"
FILE_NAME = "memory.sqlite3"


def default_memory_path() -> Path:
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    import platformdirs  # light, but only needed when no path was given

    return Path(platformdirs.user_data_dir("v22sdk", appauthor=False)) / FILE_NAME
