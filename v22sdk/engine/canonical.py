"""What the engine reads of a token: storage slots held at their ceiling.

Some slots say how an input was *stored*, not what it holds. The audio tokenizer mixes every file
to mono before it analyses it, so ``aud.clip.channels`` tells a stereo copy from its mono original
and nothing else: its other 639 values are the original's. An engine that reads such a slot can
learn it (the shipped checkpoint did: the same samples on two channels changed 3.0 % of its
answers, docs/results.md, "Robust to how a signal is stored"). A modality names these slots with a
ceiling (:attr:`v22sdk.Modality.storage_slots`, ``{"aud.clip.channels": 0.0}``, mono); every path
into the engine — training, :meth:`~v22sdk.engine.Runner.run`, ``judge``, ``encode``, the
explanations, the memory's attribute sets — reads ``min(value, ceiling)`` there
(:func:`engine_attr`, applied by :func:`v22sdk.engine.data.to_tensors`), so a copy that differs
only in storage reaches the engine bit for bit as its original. The token itself keeps the value
the tokenizer measured: ``v22sdk tokenize`` and the run's attribute list still show two channels.

A ceiling, not a constant, so that a slot can also carry a real loss below it; values at or below
the ceiling pass unchanged. Modalities that declare no storage slots are read as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def storage_ceilings(registry: Any, modality: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(attr columns, ceilings) of the storage slots ``modality`` declares that its schema holds,
    or ``None`` when it declares none (or ``registry`` does not know it: nothing to hold)."""
    from ..errors import UnknownNameError

    try:
        cls = registry.get_class("modalities", modality)
    except UnknownNameError:
        return None
    declared = dict(getattr(cls, "storage_slots", None) or {})
    schema = cls.schema
    names = [n for n in declared if n in schema]
    if not names:
        return None
    cols = np.array([schema.index(n) for n in names], dtype=np.intp)
    caps = np.array([float(declared[n]) for n in names], dtype=np.float32)
    return cols, caps


def engine_attr(batch: Any, registry: Any = None, *, _cache: dict | None = None) -> np.ndarray:
    """``batch.attr`` as the engine reads it: each storage slot at most its ceiling. The batch's
    own array (not a copy) when no value is above a ceiling."""
    if registry is None:
        from ..plugins import get_registry

        registry = get_registry()
    if _cache is not None and batch.modality in _cache:
        ceilings = _cache[batch.modality]
    else:
        ceilings = storage_ceilings(registry, batch.modality)
        if _cache is not None:
            _cache[batch.modality] = ceilings
    attr = batch.attr
    if ceilings is None or not len(attr):
        return attr
    cols, caps = ceilings
    held = np.minimum(attr[:, cols], caps)
    if np.array_equal(held, attr[:, cols]):
        return attr
    out = attr.copy()
    out[:, cols] = held
    return out


def engine_attr_set(batch: Any, registry: Any = None) -> frozenset[str]:
    """The attribute set the engine's memory keys ``batch`` by: the schema's slots active in
    :func:`engine_attr` (``AttributeSchema.active_names`` of what the engine reads)."""
    if registry is None:
        from ..plugins import get_registry

        registry = get_registry()
    schema = registry.get_class("modalities", batch.modality).schema
    return schema.active_names(engine_attr(batch, registry))
