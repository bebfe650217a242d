"""Start-up work without the cyclic garbage collector (cold ``v22sdk run`` and ``tokenize``).

Before it computes anything, a cold ``v22sdk run`` makes about a million long-lived objects:
torch's modules, functions and classes, the plugins, the engine. The collector's passes over them
free nothing (modules live as long as the process), yet each full pass walks them all, and
importing torch and the rest sets off several: about 0.3 s of a cold run's 2.3 s CPU went to
collections (counted with ``gc.callbacks``), against 0.15 s in a bare ``import torch``.

:func:`loading` turns the collector off while that happens, then moves everything made so far
into the permanent generation (:func:`gc.freeze`), where later passes do not look, and turns it
back on as it found it: what the command then computes is collected as usual. Cyclic garbage made
during the block is not freed (a few objects at start-up); nothing computed depends on when the
collector runs.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["loading"]


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """Run the body (imports, loading a checkpoint) with the cyclic collector off, then freeze what
    it made and restore the collector's state."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
