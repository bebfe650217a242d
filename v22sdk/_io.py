"""Writing outputs so that a failure never leaves a half-written file under the name asked for.

``atomic_output(path)`` is used by every command that writes a file (``tokenize --out``, ``train
-o``, ``memory export --out``):

* a new path or an existing regular file: the data goes to a temporary file in the same folder,
  is flushed and fsynced, then renamed over ``path`` (``os.replace`` is atomic on POSIX), so
  ``path`` holds either the old content or the whole new one;
* a symlink: its target is replaced the same way and the link stays;
* an existing non-regular file (``/dev/stdout``, ``/dev/null``, a FIFO): written through, since
  there is nothing to replace and renaming over it would destroy the device node;
* a folder, or a path whose folder does not exist: :class:`~v22sdk.errors.InputError` before
  anything is written; a failure while writing (a full disk, a file-size limit):
  :class:`~v22sdk.errors.OutputError` naming ``path``, with the temporary file removed.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .errors import InputError, OutputError


def check_output_path(path: str | os.PathLike[str]) -> Path:
    """``path`` resolved through symlinks; InputError when it cannot name an output file."""
    given = str(path)
    target = Path(os.path.realpath(path))
    if target.is_dir():
        raise InputError(given, "is a folder; give a file name to write")
    if not target.parent.is_dir():
        raise InputError(given, f"cannot be written: folder {str(target.parent)!r} does not exist")
    return target


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], mode: str = "wb", *, encoding: str | None = None) -> Iterator[IO[Any]]:
    """Open ``path`` for writing, atomically where it is (or will be) a regular file."""
    given = str(path)
    target = check_output_path(path)
    try:
        special = target.exists() and not stat.S_ISREG(target.stat().st_mode)
    except OSError:
        special = False
    if special:  # a device or FIFO: write through, never rename over it
        try:
            with open(target, mode, encoding=encoding) as fh:
                yield fh
        except OSError as exc:
            raise OutputError(given, exc.strerror or str(exc)) from None
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(given, exc.strerror or str(exc)) from None
    try:
        with os.fdopen(fd, mode, encoding=encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():  # keep the permissions of the file being replaced
            os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
        else:
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise OutputError(given, exc.strerror or str(exc)) from None
    except BaseException:
        _remove(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
