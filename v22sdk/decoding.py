"""Decoding files within a memory budget, and without C libraries talking to the terminal.

What every modality's ``load`` shares (the built-in plugins and the contrib ones use it; a
third-party plugin should too):

* **A decode budget.** Reading and tokenizing one file may use at most :func:`decode_budget`
  bytes of memory on top of what the process already holds: 512 MiB by default, set with the
  environment variable ``V22SDK_DECODE_BUDGET_MB``. A decoder reads the file's header first,
  estimates the peak memory of decoding it (pixels x channels x bytes per sample, samples x
  channels, the arrays a ``.npy`` header declares ...) and calls :func:`check_budget`, which
  raises :class:`InputTooLarge` (an :class:`~v22sdk.errors.InputError`) before anything large is
  allocated. A bomb (a 1 MB PNG that declares 30,000 x 30,000 16-bit pixels) is refused in
  milliseconds, not after gigabytes; the limit counts bytes, not pixels.
* **Quiet C libraries.** libpng, libtiff, libjpeg, libsndfile and mpg123 print warnings and
  errors straight to file descriptor 2 (``libpng error: IHDR: CRC error``, ``Duh...``).
  :func:`library_stderr` redirects that descriptor while a file is decoded;
  :meth:`Modality.tokenize_file <v22sdk.modality.Modality.tokenize_file>` wraps every plugin's
  ``load`` in it and folds what was captured into the one-line :class:`InputError`, so the user
  sees one line. What libraries print during a successful decode is dropped.
* **Regular files only.** :func:`check_regular_file` (from :mod:`v22sdk.inputs`) refuses a
  folder, a FIFO or a device with one line saying which: ``open()`` on a FIFO waits for a writer,
  and ``/dev/zero`` never ends.
* **Arrays without pickles.** :func:`load_npy` and :func:`load_npz` read NumPy files header
  first (shape and dtype checked against the budget before the data is read) and never unpickle:
  a file holding Python objects is refused with a message that does not suggest ``allow_pickle``.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from typing import IO

import numpy as np

from .errors import InputError, InputTooLarge
from .inputs import check_regular_file

__all__ = [
    "DEFAULT_BUDGET_MB",
    "BUDGET_ENV",
    "InputTooLarge",
    "decode_budget",
    "check_budget",
    "human",
    "library_stderr",
    "fold",
    "with_library_output",
    "load_npy",
    "load_npz",
    "check_regular_file",
]

#: Default decode budget, in MiB (2**20 bytes).
DEFAULT_BUDGET_MB = 512
BUDGET_ENV = "V22SDK_DECODE_BUDGET_MB"


def decode_budget() -> int:
    """The decode budget in bytes (``$V22SDK_DECODE_BUDGET_MB`` MiB, default 512 MiB)."""
    raw = os.environ.get(BUDGET_ENV, "").strip()
    if not raw:
        return DEFAULT_BUDGET_MB << 20
    try:
        mb = float(raw)
    except ValueError:
        mb = -1.0
    if not (mb > 0 and mb < 1 << 40):
        raise InputError(BUDGET_ENV, f"must be a positive number of MiB, not {raw!r}")
    return int(mb * (1 << 20))


def human(n: float) -> str:
    """``n`` bytes as a short figure: ``"1.9 GiB"``, ``"512 MiB"``."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            v = n / size
            return f"{v:.0f} {unit}" if v >= 100 or v == int(v) else f"{v:.1f} {unit}"
    return f"{int(n)} bytes"


def check_budget(source: str, need: float, what: str) -> None:
    """Raise :class:`InputTooLarge` naming ``source`` when ``need`` bytes exceed the budget.

    ``what`` describes the input from its header, e.g. ``"a 30000x30000 16-bit RGB PNG"``.
    """
    budget = decode_budget()
    if need > budget:
        mb = -(-int(need) // (1 << 20))
        raise InputTooLarge(
            source,
            f"{what} needs about {human(need)} of memory to decode, more than the "
            f"decode budget of {human(budget)} (set {BUDGET_ENV}={mb} to allow it)",
        )


# -- C libraries' stderr ------------------------------------------------------------------------


class _Redirect:
    """fd 2, pointed at one temporary file while any capture is active (shared by threads)."""

    lock = threading.Lock()
    depth = 0
    saved: int | None = None
    file: IO[bytes] | None = None
    spare: IO[bytes] | None = None


class Captured:
    """What C libraries wrote to fd 2 during a :func:`library_stderr` block."""

    def __init__(self) -> None:
        self._start = 0
        self._text = ""
        self._live = False

    def text(self) -> str:
        """Everything written so far (inside the block) or in all (after it), stripped."""
        if self._live and _Redirect.file is not None:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            fd = _Redirect.file.fileno()
            end = os.lseek(fd, 0, os.SEEK_END)
            return os.pread(fd, max(0, end - self._start), self._start).decode("utf-8", "replace").strip()
        return self._text


@contextlib.contextmanager
def library_stderr() -> Iterator[Captured]:
    """Redirect file descriptor 2 to a temporary file for the block; yields a :class:`Captured`.

    Nested and concurrent blocks share one redirection (the first opens it, the last restores
    fd 2). Where fd 2 cannot be redirected (closed), the block runs without capture.
    """
    cap = Captured()
    with _Redirect.lock:
        if _Redirect.depth == 0:
            try:
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    sys.stderr.flush()
                saved = os.dup(2)
            except OSError:
                saved = None
            if saved is not None:
                if _Redirect.spare is None:  # one temporary file, kept and emptied for each use
                    _Redirect.spare = tempfile.TemporaryFile()
                f = _Redirect.spare
                os.ftruncate(f.fileno(), 0)
                os.lseek(f.fileno(), 0, os.SEEK_SET)
                os.dup2(f.fileno(), 2)
                _Redirect.saved, _Redirect.file = saved, f
        if _Redirect.file is not None:
            _Redirect.depth += 1
            cap._start = os.lseek(_Redirect.file.fileno(), 0, os.SEEK_END)
            cap._live = True
    try:
        yield cap
    finally:
        if cap._live:
            with _Redirect.lock:
                cap._text = cap.text()
                cap._live = False
                _Redirect.depth -= 1
                if _Redirect.depth == 0:
                    assert _Redirect.saved is not None  # set with the file, in the same lock
                    with contextlib.suppress(OSError, ValueError, AttributeError):
                        sys.stderr.flush()
                    os.dup2(_Redirect.saved, 2)
                    os.close(_Redirect.saved)
                    _Redirect.saved, _Redirect.file = None, None


#: OpenCV's log prefix, "[ WARN:0@0.051] global grfmt_png.cpp:793 readFromStreamOrBuffer ": noise.
_OPENCV_PREFIX = re.compile(r"^\[\s*[A-Z]+:\d+@[\d.]+\]\s*global\s+\S+\s+\S+\s+")


def fold(problem: str, captured: str, limit: int = 300) -> str:
    """``problem`` with a library's captured output appended on the same line (shortened)."""
    lines = [_OPENCV_PREFIX.sub("", " ".join(ln.split())) for ln in captured.splitlines() if ln.strip()]
    lines = [ln for ln in lines if ln not in problem]  # what the message already quotes
    said = "; ".join(dict.fromkeys(lines))  # a message repeated per row or per frame: once
    if not said:
        return problem
    if len(said) > limit:
        said = said[: limit - 3] + "..."
    return f"{problem} [decoder said: {said}]"


def with_library_output(exc: InputError, captured: str) -> InputError:
    """``exc`` (same class when it can be rebuilt) with ``captured`` folded into its problem."""
    problem = fold(exc.problem, captured)
    if problem == exc.problem:
        return exc
    try:
        out = type(exc)(exc.source, problem)
    except TypeError:
        out = InputError(exc.source, problem)
    return out


# -- NumPy files --------------------------------------------------------------------------------

_PICKLE = (
    "holds Python objects (a pickled object array), which v22sdk never loads; "
    "save a numeric array (np.save of an int or float array)"
)


def _npy_header(fh, source: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    from numpy.lib import format as npformat

    try:
        version = npformat.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = npformat.read_array_header_1_0(fh)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = npformat.read_array_header_2_0(fh)
        else:  # pragma: no cover - numpy's read_magic refuses others
            raise ValueError(f"unsupported .npy version {version}")
    except (ValueError, EOFError, OSError, SyntaxError) as exc:
        raise InputError(source, f"not a readable .npy array: {_first_line(exc)}") from None
    if dtype.hasobject:
        raise InputError(source, _PICKLE)
    return shape, dtype, fortran


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _nbytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    n = dtype.itemsize
    for s in shape:
        n *= int(s)
    return n


def _described(shape: tuple[int, ...], dtype: np.dtype) -> str:
    return f"a {'x'.join(map(str, shape)) or 'scalar'} {dtype} array"


def load_npy(
    path: str | os.PathLike[str],
    source: str | None = None,
    *,
    estimate: Callable[[tuple[int, ...], np.dtype], float] | None = None,
) -> np.ndarray:
    """The array in the ``.npy`` file ``path``. Its header is read first and ``estimate(shape,
    dtype)`` (default: the array's size; a caller adds what it will compute from it) is checked
    against the decode budget before the data is read."""
    source = source or str(path)
    try:
        with open(path, "rb") as fh:
            shape, dtype, _ = _npy_header(fh, source)
            need = estimate(shape, dtype) if estimate else _nbytes(shape, dtype)
            check_budget(source, need, _described(shape, dtype) + ", which")
            fh.seek(0)
            return np.load(fh, allow_pickle=False)
    except InputError:
        raise
    except (OSError, ValueError, EOFError) as exc:
        raise InputError(source, f"not a readable .npy array: {_first_line(exc)}") from None


def load_npz(
    path: str | os.PathLike[str],
    source: str | None = None,
    *,
    estimate: Callable[[dict[str, tuple[tuple[int, ...], np.dtype]]], float] | None = None,
) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file ``path`` by name. All headers are read first and
    ``estimate({name: (shape, dtype)})`` (default: their total size) is checked against the
    budget before any array is decompressed: a zip bomb declares its size in its headers, and
    numpy reads exactly what they declare."""
    source = source or str(path)
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if n.endswith(".npy")]
            heads = {}
            for name in names:
                with zf.open(name) as fh:
                    shape, dtype, _ = _npy_header(fh, f"{source}:{name}")
                heads[name[:-4]] = (shape, dtype)
            need = estimate(heads) if estimate else sum(_nbytes(*h) for h in heads.values())
            big = max(heads.items(), key=lambda kv: _nbytes(*kv[1]), default=None)
            what = f"an .npz whose array {big[0]!r} is {_described(*big[1])[2:]}," if big else "an empty .npz"
            check_budget(source, need, what + " which")
            out = {}
            for name in names:
                with zf.open(name) as fh:
                    out[name[:-4]] = np.load(fh, allow_pickle=False)
            return out
    except InputError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError, NotImplementedError) as exc:
        raise InputError(source, f"not a readable .npz file: {_first_line(exc)}") from None
