"""Path tests for arguments that may be a file name or a literal text.

``v22sdk run "今天天气很好……"`` and a manifest's text inputs are strings that may or may not name
a file. ``Path.is_file()`` raises ``OSError`` (ENAMETOOLONG) for a text longer than the system's
file-name limit, and ``ValueError`` for one holding a NUL character; such a string names no file.
"""

from __future__ import annotations

import os
import re
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


#: a lone surrogate: text that is not valid Unicode (what Python makes of undecodable bytes)
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(m: re.Match) -> str:
    code = ord(m.group())
    # U+DC80..U+DCFF is how Python carries an undecodable byte of argv or a file name
    # (surrogateescape): show the byte itself, as "\xff"; any other lone surrogate as "\ud800".
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def display(text: str) -> str:
    """``text`` with every lone surrogate (an undecodable byte of a command-line argument or file
    name, or a ``"\\ud800"`` escape from JSON) written as a backslash escape, so it can be printed,
    stored or put in JSON as valid UTF-8. Valid text is returned unchanged."""
    return LONE_SURROGATE.sub(_escape_surrogate, text)
