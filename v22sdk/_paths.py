"""Path tests for arguments that may be a file name or a literal text.

``v22sdk run "今天天气很好……"`` and a manifest's text inputs are strings that may or may not name
a file. ``Path.is_file()`` raises ``OSError`` (ENAMETOOLONG) for a text longer than the system's
file-name limit, and ``ValueError`` for one holding a NUL character; such a string names no file.
"""

from __future__ import annotations

import os
from pathlib import Path


def is_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names an existing regular file; False for strings that cannot be a path."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def is_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names an existing directory; False for strings that cannot be a path."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


def display(text: str) -> str:
    """``text`` with the undecodable bytes of a command-line argument or file name (which Python
    holds as lone surrogates) written as ``\\xff`` escapes, so it can be printed or put in JSON as
    valid UTF-8."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
