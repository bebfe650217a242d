"""The token rules, judged on one raw :class:`~v22sdk.modality.Encoding`.

Each rule is a function ``(encoding, sample, modality) -> problem or None`` owned by one check
(:data:`RULES` maps the check's name to it). The rule checks judge their own rule; every other
check that computes an encoding judges *all* of them (:func:`judge_all`), so a broken rule met by
any check fails the run, attributed to the rule's owner -- evidence is never thrown away.

A rule that cannot judge an encoding because another rule's malformation hides it (an ``attr``
that is not 384 wide, for the declared-slots rule) returns None: that malformation is the other
rule's finding, and :func:`judge_all` runs the rules in an order where it is met first.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

import numpy as np

from ..contract import ATTR_DIM, EMB_DIM, NORM_TOLERANCE, OFFSET_FIELDS
from ..modality import Encoding, Modality, Sample
from ._format import number

Rule = Callable[[Any, Sample, Modality], "str | None"]

#: ContractViolation.rule (what ``tokenize`` raises) -> the check that owns the rule.
VIOLATION_OWNER = {
    "dtype": "check_shape_dtype",
    "shape": "check_shape_dtype",
    "finite": "check_finite",
    "unit_norm_emb": "check_unit_norm_emb",
    "attr_bounds": "check_attr_bounds",
    "declared_slots": "check_declared_slots",
    "offsets": "check_offsets",
    "modality": "check_schema",
}


def matrix(value: Any) -> np.ndarray | None:
    """``value`` as a float64 (N, W) array, or None when it cannot be read as one."""
    try:
        array = np.asarray(value)
        if array.ndim != 2 or array.dtype.kind not in "biuf":
            return None
        return array.astype(np.float64)
    except (TypeError, ValueError):
        return None


def first_row(mask: np.ndarray) -> tuple[int, int]:
    i = int(np.argmax(mask.any(axis=1)))
    return i, int(np.argmax(mask[i]))


def is_encoding(enc: object) -> TypeGuard[Encoding]:
    """Whether ``enc`` has the fields of an :class:`Encoding` (duck-typed: an author's own class
    with them passes here; what the fields hold is judged by the rules)."""
    return all(hasattr(enc, field) for field in ("emb", "attr", "offsets"))


def shape_dtype(enc: Any, sample: Sample, modality: Modality) -> str | None:
    for label, array, width in (("emb", enc.emb, EMB_DIM), ("attr", enc.attr, ATTR_DIM)):
        if not isinstance(array, np.ndarray):
            return f"{label} must be a numpy array, got {type(array).__name__}"
        if array.dtype != np.float32:
            return f"{label} has dtype {array.dtype}, the contract needs float32"
        if array.ndim != 2 or array.shape[1] != width:
            return f"{label} has shape {array.shape}, the contract needs (N, {width})"
    if enc.emb.shape[0] != enc.attr.shape[0]:
        return f"emb has {enc.emb.shape[0]} rows but attr has {enc.attr.shape[0]}"
    if enc.emb.shape[0] == 0:
        return "a valid input gave no tokens"
    return None


def finite(enc: Any, sample: Sample, modality: Modality) -> str | None:
    for label in ("emb", "attr"):
        array = matrix(getattr(enc, label))
        if array is not None and not np.isfinite(array).all():
            i, j = first_row(~np.isfinite(array))
            return f"{label}[{i}, {j}] is {array[i, j]}"
    return None


def unit_norm(enc: Any, sample: Sample, modality: Modality) -> str | None:
    emb = matrix(enc.emb)
    if emb is None or emb.size == 0:
        return None
    norms = np.sqrt(np.einsum("ij,ij->i", emb, emb))
    off = np.isfinite(norms) & (np.abs(norms - 1.0) > NORM_TOLERANCE)
    if off.any():
        i = int(np.argmax(off))
        return f"‖emb[{i}]‖ = {number(norms[i])}, must be 1 ± {NORM_TOLERANCE:g}"
    return None


def attr_bounds(enc: Any, sample: Sample, modality: Modality) -> str | None:
    raw = np.asarray(enc.attr) if isinstance(enc.attr, np.ndarray) else None
    attr = matrix(enc.attr)
    if attr is None:
        return None
    bad = np.isfinite(attr) & (np.abs(attr) > 1.0)
    if bad.any():
        i, j = first_row(bad)
        schema = getattr(modality, "schema", None)
        name = schema.name(j) if j < ATTR_DIM and schema is not None and hasattr(schema, "name") else None
        value = raw[i, j] if raw is not None and raw.ndim == 2 else attr[i, j]
        return f"attr[{i}, {j}]{f' ({name})' if name else ''} = {number(value)} is outside [-1, 1]"
    return None


def declared_slots(enc: Any, sample: Sample, modality: Modality) -> str | None:
    attr = matrix(enc.attr)
    if attr is None or attr.shape[1] != ATTR_DIM:
        return None
    declared = np.zeros(ATTR_DIM, dtype=bool)
    declared[[s.index for s in getattr(modality.schema, "slots", ()) if 0 <= s.index < ATTR_DIM]] = True
    stray = attr[:, ~declared] != 0
    if stray.any():
        i, k = first_row(stray)
        j = int(np.flatnonzero(~declared)[k])
        return f"attr[{i}, {j}] = {number(np.asarray(enc.attr)[i, j])} is written but slot {j} is not declared by the schema"
    return None


def offsets(enc: Any, sample: Sample, modality: Modality) -> str | None:
    emb = matrix(enc.emb)
    if emb is None:
        return None
    try:
        found = dict(enc.offsets)
    except (TypeError, ValueError):
        return f"offsets must be a mapping of field name to array, got {type(enc.offsets).__name__}"
    problems = offset_problems(found, emb.shape[0], sample, modality)
    return "; ".join(problems) if problems else None


def offset_problems(found: Mapping[str, Any], n: int, sample: Sample, modality: Modality) -> list[str]:
    out: list[str] = []
    data = sample.data
    for key, raw in found.items():
        value = np.asarray(raw)
        trailing = OFFSET_FIELDS[key][0] if key in OFFSET_FIELDS else None
        if value.dtype.kind not in "biuf":
            out.append(f"offsets[{key!r}] must be numeric, got {value.dtype}")
            continue
        if (trailing is not None and value.shape != (n, *trailing)) or value.ndim == 0 or value.shape[0] != n:
            want = (n, *trailing) if trailing is not None else f"({n}, ...)"
            out.append(f"offsets[{key!r}] has shape {value.shape}, expected {want}")
            continue
        if not np.isfinite(value).all():
            out.append(f"offsets[{key!r}] holds non-finite values")
            continue
        if key == "char":
            if value.dtype.kind not in "iu":
                out.append(f"offsets['char'] must be integers, got {value.dtype}")
            elif isinstance(data, str):
                length = len(unicodedata.normalize("NFC", data))
                bad = (value < 0) | (value >= length)
                if bad.any():
                    i = int(np.argmax(bad))
                    out.append(f"offsets['char'][{i}] = {value[i]} is outside the {length}-character input")
            if value.size and (np.diff(value) < 0).any():
                out.append("offsets['char'] must be non-decreasing (tokens in input order)")
        elif key == "time":
            # in float64: compared in float32 (numpy's rule for a Python float), an end that float32
            # rounded past the input's end would equal the rounded duration
            start, end = value[:, 0].astype(np.float64), value[:, 1].astype(np.float64)
            duration = signal_duration(sample, modality)
            # a token stands for a stretch of signal: end == start (e.g. ends never written) is as
            # wrong as an empty box
            if (start < 0).any() or (end <= start).any():
                i = int(np.argmax((start < 0) | (end <= start)))
                out.append(
                    f"offsets['time'][{i}] = [{number(value[i, 0])}, {number(value[i, 1])}] must satisfy "
                    "0 ≤ start < end (a non-empty span)"
                )
            elif duration is not None and (end > duration * (1 + 1e-9) + 1e-12).any():
                i = int(np.argmax(end > duration * (1 + 1e-9) + 1e-12))
                out.append(
                    f"offsets['time'][{i}] ends at {number(end[i])} s, after the input's end at {number(duration)} s"
                )
            if (np.diff(start) < 0).any():
                out.append("offsets['time'] starts must be non-decreasing (tokens in input order)")
        elif key == "box":
            if value.dtype.kind not in "iu":
                out.append(f"offsets['box'] must be integers, got {value.dtype}")
                continue
            x0, y0, x1, y1 = value.T
            bad = (x0 < 0) | (y0 < 0) | (x1 <= x0) | (y1 <= y0)
            array = data if isinstance(data, np.ndarray) else None
            if array is not None and array.ndim >= 2:
                bad |= (x1 > array.shape[1]) | (y1 > array.shape[0])
            if bad.any():
                i = int(np.argmax(bad))
                out.append(
                    f"offsets['box'][{i}] = {value[i].tolist()} is not a non-empty box inside the image"
                    + (f" of {array.shape[1]}×{array.shape[0]} pixels" if array is not None and array.ndim >= 2 else "")
                )
        elif key == "item" and (value != 0).any():
            out.append("offsets['item'] of a single input must be all 0")
    return out


def signal_duration(sample: Sample, modality: Modality) -> float | None:
    """Length in seconds of an array input with a rate unit (symbol Hz): longest axis / rate."""
    data = sample.data
    if not isinstance(data, np.ndarray) or data.size == 0:
        return None
    for unit in modality.input_spec.units:
        if unit.symbol == "Hz" and unit.name in sample.units:
            try:
                return int(max(data.shape)) / float(sample.units[unit.name])
            except (TypeError, ValueError, ZeroDivisionError):
                return None
    return None


#: The rules in judging order (a malformation is met before the rules it would hide), by owner.
RULES: dict[str, Rule] = {
    "check_shape_dtype": shape_dtype,
    "check_finite": finite,
    "check_unit_norm_emb": unit_norm,
    "check_attr_bounds": attr_bounds,
    "check_declared_slots": declared_slots,
    "check_offsets": offsets,
}


def judge_all(enc: Any, sample: Sample, modality: Modality) -> tuple[str, str] | None:
    """The first broken rule as ``(owner check, problem)``, or None when every rule holds."""
    if not is_encoding(enc):
        return "check_shape_dtype", f"encode must return an Encoding (emb, attr, offsets), got {type(enc).__name__}"
    for owner, rule in RULES.items():
        problem = rule(enc, sample, modality)
        if problem:
            return owner, problem
    return None
