"""One BLAS thread for a tokenizer's arithmetic: the same bits whatever the caller's thread settings.

A matrix-matrix product in OpenBLAS (numpy's BLAS) is split between its threads, and the split
changes the order in which each element's products are summed: ``(250, 513) @ (513, 5)`` gives
different last bits on one thread and on two. A tokenizer is a pure function (the same input gives
the same tokens in the same environment), so a tokenizer whose encode uses such products runs
them under :func:`single_blas_thread`: ``v22sdk tokenize``, ``v22sdk run`` (which pins every pool
to one thread anyway) and a library caller with numpy's default thread count all get the
one-thread bits. It also spares a small product the hand-over to a second thread, which on a
loaded machine costs far more than the product.

The setting is process-wide (OpenBLAS has one thread count), so nested and concurrent uses are
counted: the first to enter sets one thread, the last to leave restores the caller's count.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import Protocol

__all__ = ["single_blas_thread"]

_lock = threading.Lock()
_depth = 0


class _ThreadCount(Protocol):
    """What is used of a threadpoolctl library controller (threadpoolctl ships no types)."""

    def get_num_threads(self) -> int: ...

    def set_num_threads(self, num_threads: int) -> None: ...


_saved: list[tuple[_ThreadCount, int]] = []


@functools.cache
def _blas_controllers() -> tuple[_ThreadCount, ...]:
    """threadpoolctl's controllers of the BLAS libraries loaded at the first use: numpy's OpenBLAS
    (numpy is loaded before any tokenizer runs), the one its matrix products use. A BLAS that a
    library loads later (scipy's own OpenBLAS) is not touched."""
    from threadpoolctl import ThreadpoolController

    return tuple(ThreadpoolController().select(user_api="blas").lib_controllers)


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """Run the body with numpy's BLAS on one thread (the caller's count is restored afterwards)."""
    global _depth
    with _lock:
        if _depth == 0:
            _saved.clear()
            for lib in _blas_controllers():
                n = lib.get_num_threads()
                if n != 1:
                    lib.set_num_threads(1)
                    _saved.append((lib, n))
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                for lib, n in _saved:
                    lib.set_num_threads(n)
                _saved.clear()
