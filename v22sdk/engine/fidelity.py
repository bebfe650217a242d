"""Fidelity floors: the lowest recording fidelity a checkpoint was trained on, per named slot.

A modality names the slots that measure how much of the signal a recording kept
(:attr:`v22sdk.Modality.fidelity_slots`; for sound, ``aud.clip.source_rate``: a file sampled
at 8 kHz holds nothing above 4 kHz). Training records, per modality, the lowest value each such
slot took over the training split's tokens (:func:`fit_floors`, stored in the checkpoint's
``data["fidelity_floors"]``). The runner calls an input below a floor unfamiliar and names the
slot, its value and the floor (:func:`below_floors`), whatever the open-set score says: the score
(:mod:`.openset`) judges what the engine makes of an input, and an input that lost part of its
band can look familiar to it while the answer is a guess (docs/results.md, "Band-limited
copies", measures both). A higher value than training saw is not judged: a 48 kHz file is
resampled to the same 16 kHz analysis as a 44.1 kHz one.

Checkpoints written before this existed have no floors; nothing is judged for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: float32 slot values are compared with this much slack (the same input gives the same bits;
#: the slack only absorbs a value printed and read back)
TOLERANCE = 1e-6


def fidelity_slots(registry, modality: str) -> tuple[str, ...]:
    """The fidelity slots ``modality`` declares that its schema holds (none for plugins that declare none)."""
    cls = registry.get_class("modalities", modality)
    schema = cls.schema
    return tuple(s for s in getattr(cls, "fidelity_slots", ()) if s in schema)


def fit_floors(batches: Sequence, registry) -> dict[str, dict[str, float]]:
    """Per modality that declares fidelity slots, the lowest value each took over ``batches``
    (the training split's token batches, every token)."""
    lows: dict[str, dict[str, float]] = {}
    slots_of: dict[str, tuple[str, ...]] = {}
    for b in batches:
        if b.modality not in slots_of:
            slots_of[b.modality] = fidelity_slots(registry, b.modality)
        slots = slots_of[b.modality]
        if not slots or not len(b):
            continue
        schema = registry.get_class("modalities", b.modality).schema
        low = lows.setdefault(b.modality, {})
        for name in slots:
            v = float(np.min(b.attr[:, schema.index(name)]))
            low[name] = min(low.get(name, v), v)
    return {m: dict(sorted(v.items())) for m, v in sorted(lows.items())}


def below_floors(floors: Mapping[str, Mapping[str, float]] | None, batch, schema) -> list[dict[str, Any]]:
    """The fidelity slots of ``batch`` (one input's tokens) below the checkpoint's ``floors``:
    ``[{"slot", "meaning", "scaling", "value", "floor"}]``, the lowest value over its tokens;
    ``[]`` when none is (or the checkpoint has no floors for its modality)."""
    out: list[dict[str, Any]] = []
    if not floors or not len(batch):
        return out
    for name, floor in (floors.get(batch.modality) or {}).items():
        if name not in schema:
            continue
        slot = schema[name]
        value = float(np.min(batch.attr[:, slot.index]))
        if value < float(floor) - TOLERANCE:
            out.append(
                {
                    "slot": name,
                    "meaning": slot.meaning,
                    "scaling": slot.scaling,
                    "value": round(value, 4),
                    "floor": round(float(floor), 4),
                }
            )
    return out


def describe(below: Sequence[Mapping[str, Any]]) -> str:
    """One line naming what lies below the floors: ``aud.clip.source_rate = -0.250 (…) below the
    training floor 0.000``."""
    return "; ".join(
        f"{b['slot']} = {b['value']:+.3f} ({b['meaning']}; {b['scaling']}) below the lowest value in training, "
        f"{b['floor']:+.3f}"
        for b in below
    )
