"""Attribute zones and named slots: the white-box half of the token.

The 384 attribute slots form three zones of 128 by signal family::

    language  attr   0..127   symbolic  (text)
    vision    attr 128..255   spatial   (images, depth maps)
    audio     attr 256..383   temporal  (sound, IMU)

A modality declares, in an :class:`AttributeSchema`, every slot it may write: a stable dotted
name (``aud.pitch.f0``), a one-line meaning and its scaling (the monotone map from the raw feature
to [-1, 1]). Slots a modality does not declare must be exactly zero. Slot names are per modality;
slot positions are shared, so two modalities of one zone may give the same position different
names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from .contract import ATTR_DIM, TokenBatch
from .errors import ContractViolation

ZONES: dict[str, range] = {
    "language": range(0, 128),
    "vision": range(128, 256),
    "audio": range(256, 384),
}

_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")


def zone_of(index: int) -> str:
    """Name of the zone holding attribute slot ``index`` (0..383)."""
    for zone, span in ZONES.items():
        if index in span:
            return zone
    raise IndexError(f"attribute slot {index} is outside 0..{ATTR_DIM - 1}")


@attrs.frozen
class Slot:
    """One named attribute slot: ``index`` is its position in ``attr`` (0..383)."""

    name: str
    index: int
    meaning: str
    scaling: str = "confidence in [0, 1]"

    @property
    def zone(self) -> str:
        return zone_of(self.index)

    @property
    def token_index(self) -> int:
        """Position of the slot in the full 640-D token."""
        return 256 + self.index


@attrs.frozen(eq=False)
class AttributeSchema:
    """The slots one modality writes, all inside one zone.

    Build it with :meth:`build`, which lays the slots out in order from the start of the zone::

        SCHEMA = AttributeSchema.build("audio", [
            ("aud.pitch.f0", "fundamental frequency", "log2(f0/440 Hz)/4, clipped to [-1, 1]"),
            ...
        ])
    """

    zone: str
    slots: tuple[Slot, ...]
    _by_name: dict[str, Slot] = attrs.field(init=False, repr=False)
    _by_index: dict[int, Slot] = attrs.field(init=False, repr=False)
    _mask: np.ndarray = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ValueError("invalid attribute schema: " + "; ".join(problems))
        object.__setattr__(self, "_by_name", {s.name: s for s in self.slots})
        object.__setattr__(self, "_by_index", {s.index: s for s in self.slots})
        mask = np.zeros(ATTR_DIM, dtype=bool)
        mask[[s.index for s in self.slots]] = True
        mask.flags.writeable = False
        object.__setattr__(self, "_mask", mask)

    def problems(self) -> list[str]:
        """Every way this schema breaks the rules (empty when it is valid)."""
        out: list[str] = []
        if self.zone not in ZONES:
            return [f"unknown zone {self.zone!r}; zones are {', '.join(ZONES)}"]
        span = ZONES[self.zone]
        seen_names: set[str] = set()
        seen_index: set[int] = set()
        for slot in self.slots:
            if not _NAME.match(slot.name):
                out.append(f"slot name {slot.name!r} is not a lower-case dotted name")
            if slot.name in seen_names:
                out.append(f"slot name {slot.name!r} is used twice")
            if slot.index in seen_index:
                out.append(f"slot position {slot.index} is used twice")
            if slot.index not in span:
                out.append(
                    f"slot {slot.name!r} at {slot.index} is outside the {self.zone} zone {span.start}..{span.stop - 1}"
                )
            if not slot.meaning.strip():
                out.append(f"slot {slot.name!r} has no meaning")
            seen_names.add(slot.name)
            seen_index.add(slot.index)
        return out

    @classmethod
    def build(
        cls, zone: str, specs: Iterable[tuple[str, str] | tuple[str, str, str]], *, start: int = 0
    ) -> AttributeSchema:
        """Lay out ``(name, meaning[, scaling])`` specs in order from ``start`` within ``zone``."""
        if zone not in ZONES:
            raise ValueError(f"unknown zone {zone!r}; zones are {', '.join(ZONES)}")
        base = ZONES[zone].start + start
        return cls(zone, tuple(Slot(spec[0], base + i, *spec[1:]) for i, spec in enumerate(specs)))

    # -- lookups ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.slots)

    def __iter__(self) -> Iterator[Slot]:
        return iter(self.slots)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> Slot:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no slot named {name!r} in this {self.zone} schema") from None

    def index(self, name: str) -> int:
        """Position in ``attr`` (0..383) of the slot called ``name``."""
        return self[name].index

    def name(self, index: int) -> str | None:
        """Name of the slot at ``attr`` position ``index``, or None when undeclared."""
        slot = self._by_index.get(int(index))
        return slot.name if slot else None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.slots)

    @property
    def indices(self) -> np.ndarray:
        return np.array([s.index for s in self.slots], dtype=np.int64)

    @property
    def declared_mask(self) -> np.ndarray:
        """(384,) bool, True where this schema declares a slot."""
        return self._mask

    # -- building and reading values -------------------------------------------------------
    def vector(self, values: Mapping[str, float]) -> np.ndarray:
        """A (384,) float32 attr row with the named values set and every other slot zero."""
        row = np.zeros(ATTR_DIM, dtype=np.float32)
        for name, value in values.items():
            row[self.index(name)] = value
        return row

    def values(self, attr: np.ndarray) -> dict[str, float]:
        """Named values of one attr row (384,), every declared slot included."""
        return {s.name: float(attr[s.index]) for s in self.slots}

    def explain(
        self, tokens: TokenBatch | np.ndarray, top: int | None = 10, threshold: float = 0.0
    ) -> list[list[tuple[str, float]]]:
        """For each token, its non-zero named values, largest magnitude first (at most ``top``).

        Ties in magnitude keep the schema's slot order, so the result is deterministic.
        """
        attr = tokens.attr if isinstance(tokens, TokenBatch) else np.atleast_2d(np.asarray(tokens))
        idx = self.indices
        vals = attr[:, idx]
        out = []
        for row in vals:
            keep = np.flatnonzero(np.abs(row) > threshold)
            order = keep[np.argsort(-np.abs(row[keep]), kind="stable")]
            if top is not None:
                order = order[:top]
            out.append([(self.slots[j].name, float(row[j])) for j in order])
        return out

    def active_names(self, tokens: TokenBatch | np.ndarray, threshold: float = 0.0) -> frozenset[str]:
        """Names of the slots active (|value| > threshold) in any of the tokens: the attribute set."""
        attr = tokens.attr if isinstance(tokens, TokenBatch) else np.atleast_2d(np.asarray(tokens))
        active = (np.abs(attr[:, self.indices]) > threshold).any(axis=0)
        return frozenset(self.slots[j].name for j in np.flatnonzero(active))

    def check_declared(self, tokens: TokenBatch) -> None:
        """Raise :class:`ContractViolation` if a token writes a slot this schema does not declare."""
        if not tokens.written_columns()[~self._mask].any():
            return
        stray = tokens.attr[:, ~self._mask] != 0
        if stray.any():
            rows = stray.any(axis=1)
            i = int(np.argmax(rows))
            j = int(np.flatnonzero(~self._mask)[np.argmax(stray[i])])
            raise ContractViolation(
                "declared_slots",
                f"attr[{j}] is written but not declared by the schema",
                index=i,
                value=float(tokens.attr[i, j]),
            )

    def markdown_table(self) -> str:
        """The schema as a Markdown table (slot, name, meaning, scaling) for the docs."""
        lines = ["| slot | name | meaning | scaling |", "|---:|---|---|---|"]
        lines += [f"| {s.index} | `{s.name}` | {s.meaning} | {s.scaling} |" for s in self.slots]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"zone": self.zone, "slots": [attrs.asdict(s) for s in self.slots]}


def check_zone_names(schemas: Sequence[AttributeSchema]) -> None:
    """Raise if the same slot name is given two positions across schemas (names are stable)."""
    where: dict[str, int] = {}
    for schema in schemas:
        for slot in schema:
            if where.setdefault(slot.name, slot.index) != slot.index:
                raise ContractViolation(
                    "schema", f"slot {slot.name!r} has two positions", value=(where[slot.name], slot.index)
                )
