"""What a command-line input names: a file or a literal text. One rule, for every command.

``v22sdk tokenize``, ``explain``, ``run`` and ``memory search`` take inputs that may be files or
texts (``v22sdk explain "因为下雨……"``). A typo must never become input: ``run -m text
missing_notes.txt`` used to answer about the 17 characters of the file name. The rule:

1. ``--text`` (or ``text=True``): the argument is the text, whatever exists on disk.
2. ``-``: standard input, read as UTF-8 text.
3. An argument naming an existing **regular file** is that file. A folder is an error, and so is
   any other kind of file (a FIFO, ``/dev/zero``, a socket): they are refused, never read.
4. An argument that names nothing on disk is an error when it **looks like a path**: it starts
   with ``/``, ``./``, ``../`` or ``~``; or it has no white space and holds a path separator; or it
   ends in a file extension (a dot and 1-8 letters or digits, at least one a letter) and either
   has no white space or the extension is one an installed modality reads (``my notes.txt``).
5. Anything else is literal text (``今天天气很好。``, ``I use Node.js``, ``pi is 3.14``).

The same rule reads manifests (``{"input": ...}`` lines): an input that looks like a path and
does not exist next to the manifest is an error, unless the line says ``"literal": true``.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

#: How standard input and literal arguments are named in messages and token batches.
STDIN = "-"
STDIN_SOURCE = "<stdin>"
TEXT_SOURCE = "<text>"

_EXTENSION = re.compile(r"(?<=[^\s/\\.])\.([A-Za-z0-9]{1,8})\Z")
_PATH_START = ("/", "./", "../", "~")
_HINT = "to read the argument itself as text, give --text"


@dataclass(frozen=True)
class Input:
    """A resolved input: ``path`` for a file, ``text`` for a literal text; ``source`` names it."""

    source: str
    path: Path | None = None
    text: str | None = None

    @property
    def is_file(self) -> bool:
        return self.path is not None

    @property
    def literal(self) -> str:
        """The text of a text input (a file input has none: ValueError)."""
        if self.text is None:
            raise ValueError(f"{self.source} is a file input, not a text")
        return self.text


def special_kind(mode: int) -> str | None:
    """What a file that is not a regular file or folder is, for messages; None for those two."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    for test, name in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def looks_like_path(arg: str, extensions: Iterable[str] = ()) -> bool:
    """Whether ``arg`` reads as a file name rather than a text (rule 4 of the module doc)."""
    if "\n" in arg or not arg.strip():
        return False
    if arg.startswith(_PATH_START):
        return True
    spaced = any(c.isspace() for c in arg)
    if not spaced and ("/" in arg or os.sep in arg):
        return True
    m = _EXTENSION.search(arg)
    if m is None or not any(c.isalpha() for c in m.group(1)):
        return False
    return not spaced or ("." + m.group(1).lower()) in {e.lower() for e in extensions}


def check_regular_file(path: str | os.PathLike[str], source: str | None = None) -> Path:
    """``path`` as a Path when it names an existing regular file (symlinks followed); else an
    :class:`InputError` saying exactly what it is: missing, a folder, a FIFO, a device ..."""
    source = source or str(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(source, "no such file") from None
    except NotADirectoryError:
        raise InputError(source, "no such file (a part of the path is not a folder)") from None
    except (OSError, ValueError) as exc:
        raise InputError(source, f"cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(source, "is a directory, not a file")
    kind = special_kind(st.st_mode)
    if kind:
        raise InputError(source, f"is {kind}, not a regular file; v22sdk reads regular files only")
    return Path(path)


def read_stdin_text(limit: int, stream=None) -> str:
    """Standard input as UTF-8 text (a BOM is dropped); InputError beyond ``limit`` bytes."""
    raw = (stream or sys.stdin.buffer).read(limit + 1)
    if len(raw) > limit:
        raise InputError(STDIN_SOURCE, f"more than {limit:,} bytes; give a file instead")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(STDIN_SOURCE, f"is not UTF-8 text (byte {exc.start})") from None
    if not text:
        raise InputError(STDIN_SOURCE, "is empty: give a text")
    return text


def resolve(arg: str, *, text: bool = False, extensions: Iterable[str] = (), stdin_limit: int = 64 << 20) -> Input:
    """Resolve one command-line argument by the module's rule.

    ``extensions``: the file extensions the installed modalities read (rule 4).
    Raises :class:`InputError` naming the argument when it is a missing path, a folder or a
    special file.
    """
    if text:
        if not arg:
            raise InputError("''", "an empty text: give at least one character")
        return Input(TEXT_SOURCE, text=arg)
    if arg == STDIN:
        return Input(STDIN_SOURCE, text=read_stdin_text(stdin_limit))
    if not arg:  # Path("") is "." (a folder): say what is really wrong
        raise InputError("''", "an empty argument: give a file or a non-empty text")
    try:
        st = os.stat(arg)
    except ValueError:  # a NUL character: no file has that name
        return Input(TEXT_SOURCE, text=arg)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG or not looks_like_path(arg, extensions):
            return Input(TEXT_SOURCE, text=arg)
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise InputError(arg, f"no such file ({_HINT})") from None
        raise InputError(arg, f"cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(
            arg,
            f"is a folder (a directory); give one file or a text (a whole folder runs with --backend ray --out DIR; {_HINT})",
        )
    kind = special_kind(st.st_mode)
    if kind:
        raise InputError(
            arg,
            f"is {kind}, not a regular file; v22sdk reads regular files only (pipe text to '-' to read standard input)",
        )
    return Input(arg, path=Path(arg))
