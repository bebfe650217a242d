"""v22sdk: text, images and sound as one kind of 640-D token, run through one white-box engine.

The public API of the core (no torch import here)::

    from v22sdk import TokenBatch, AttributeSchema, Modality, Sample, Encoding, hookimpl

Names are imported on first use (PEP 562), so ``import v22sdk`` and ``v22sdk --help`` do not pay
for numpy, attrs and pluggy until something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> the submodule that defines it
_EXPORTS = {
    **dict.fromkeys(
        (
            "ATTR_DIM",
            "EMB_DIM",
            "NORM_TOLERANCE",
            "TOKEN_DIM",
            "TokenBatch",
            "TokenBuffer",
            "load_batches",
            "save_batches",
        ),
        "contract",
    ),
    **dict.fromkeys(
        (
            "CheckpointError",
            "ContractViolation",
            "DuplicateNameError",
            "InputError",
            "MemoryCommitInDoubt",
            "MemoryStoreCorrupt",
            "MemoryStoreError",
            "OutputError",
            "PluginError",
            "UnitsError",
            "UnknownNameError",
            "V22Error",
        ),
        "errors",
    ),
    **dict.fromkeys(("HOOK_API_VERSION", "hookimpl"), "hookspecs"),
    **dict.fromkeys(("Encoding", "InputSpec", "Modality", "Sample", "Unit"), "modality"),
    **dict.fromkeys(("Registry", "get_registry"), "plugins"),
    **dict.fromkeys(("ZONES", "AttributeSchema", "Slot"), "schema"),
}

__all__ = [
    "ATTR_DIM",
    "EMB_DIM",
    "NORM_TOLERANCE",
    "TOKEN_DIM",
    "HOOK_API_VERSION",
    "ZONES",
    "TokenBatch",
    "TokenBuffer",
    "load_batches",
    "save_batches",
    "AttributeSchema",
    "Slot",
    "Modality",
    "Sample",
    "Encoding",
    "InputSpec",
    "Unit",
    "Registry",
    "get_registry",
    "hookimpl",
    "V22Error",
    "ContractViolation",
    "InputError",
    "UnitsError",
    "PluginError",
    "DuplicateNameError",
    "UnknownNameError",
    "CheckpointError",
    "MemoryStoreError",
    "MemoryStoreCorrupt",
    "MemoryCommitInDoubt",
    "OutputError",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'v22sdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # pragma: no cover
    from .contract import (
        ATTR_DIM,
        EMB_DIM,
        NORM_TOLERANCE,
        TOKEN_DIM,
        TokenBatch,
        TokenBuffer,
        load_batches,
        save_batches,
    )
    from .errors import (
        CheckpointError,
        ContractViolation,
        DuplicateNameError,
        InputError,
        MemoryCommitInDoubt,
        MemoryStoreCorrupt,
        MemoryStoreError,
        OutputError,
        PluginError,
        UnitsError,
        UnknownNameError,
        V22Error,
    )
    from .hookspecs import HOOK_API_VERSION, hookimpl
    from .modality import Encoding, InputSpec, Modality, Sample, Unit
    from .plugins import Registry, get_registry
    from .schema import ZONES, AttributeSchema, Slot
