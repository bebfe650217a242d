"""v22sdk: text, images and sound as one kind of 640-D token, run through one white-box engine.

The public API of the core (no torch import here)::

    from v22sdk import TokenBatch, AttributeSchema, Modality, Sample, Encoding, hookimpl
"""

from __future__ import annotations

__version__ = "0.1.0"

from .contract import ATTR_DIM, EMB_DIM, NORM_TOLERANCE, TOKEN_DIM, TokenBatch, load_batches, save_batches
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

__all__ = [
    "ATTR_DIM", "EMB_DIM", "NORM_TOLERANCE", "TOKEN_DIM", "HOOK_API_VERSION", "ZONES",
    "TokenBatch", "load_batches", "save_batches", "AttributeSchema", "Slot",
    "Modality", "Sample", "Encoding", "InputSpec", "Unit", "Registry", "get_registry", "hookimpl",
    "V22Error", "ContractViolation", "InputError", "UnitsError", "PluginError", "DuplicateNameError",
    "UnknownNameError", "CheckpointError", "MemoryStoreError", "MemoryStoreCorrupt",
    "MemoryCommitInDoubt", "OutputError",
]
