"""The contract checks: one named function per rule of the 640-D token contract.

Every check takes a modality instance and returns None or raises :class:`CheckFailure`
naming the broken rule, the case and (for data checks) the shrunk falsifying input. Data checks
are property-based over the plugin's own ``sample_inputs()`` strategy (see :mod:`._property`).

Each check judges its own rule only, on the raw :class:`~v22sdk.modality.Encoding` that
``encode`` returns (``tokenize`` would stop at the first broken rule and hide the others). An
example whose arrays are too malformed for a rule to be judged (an ``attr`` that is not 384 wide,
for ``check_declared_slots``) is left to the check that owns that malformation. A valid input on
which ``encode`` raises fails every data check: the plugin cannot tokenize its own samples.
"""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from typing import Any, Mapping

import numpy as np

from ..contract import ATTR_DIM, EMB_DIM, NORM_TOLERANCE, OFFSET_FIELDS, TokenBatch
from ..errors import ContractViolation, InputError
from ..modality import Encoding, InputSpec, Modality, Sample
from ..schema import ZONES, AttributeSchema
from ._property import describe, for_all
from ._registry import CheckFailure, contract_check

_MODALITY_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


# -- helpers ------------------------------------------------------------------------------
def _as_sample(value: Any) -> Sample:
    return value if isinstance(value, Sample) else Sample(value)


def _samples(modality: Modality) -> Any:
    """The plugin's strategy of valid inputs; bare values are wrapped in :class:`Sample`."""
    from hypothesis.strategies import SearchStrategy

    try:
        strategy = modality.sample_inputs()
    except NotImplementedError as exc:
        raise CheckFailure(f"the {modality.name!r} modality provides no sample_inputs(): {exc}") from None
    if not isinstance(strategy, SearchStrategy):
        raise CheckFailure(f"sample_inputs() must return a hypothesis strategy, got {type(strategy).__name__}")
    return strategy.map(_as_sample)


def _copy(data: Any) -> Any:
    return np.array(data, copy=True) if isinstance(data, np.ndarray) else copy.deepcopy(data)


def _encode(modality: Modality, sample: Sample, data: Any = None) -> Encoding:
    """``encode`` of a valid sample, its units checked the way ``tokenize`` checks them."""
    source = sample.source or f"<{modality.name} input>"
    try:
        units = modality.check_units(sample.units, source)
        enc = modality.encode(_copy(sample.data) if data is None else data, **units)
    except Exception as exc:
        raise CheckFailure(f"encode raised {type(exc).__name__} on a valid input from sample_inputs(): "
                           f"{exc}") from None
    if not all(hasattr(enc, field) for field in ("emb", "attr", "offsets")):
        raise CheckFailure(f"encode must return an Encoding (emb, attr, offsets), got {type(enc).__name__}")
    return enc


def _matrix(value: Any) -> np.ndarray | None:
    """``value`` as a float64 (N, W) array, or None when it cannot be read as one."""
    try:
        array = np.asarray(value)
        if array.ndim != 2 or array.dtype.kind not in "biuf":
            return None
        return array.astype(np.float64)
    except (TypeError, ValueError):
        return None


def _first_row(mask: np.ndarray) -> tuple[int, int]:
    i = int(np.argmax(mask.any(axis=1)))
    return i, int(np.argmax(mask[i]))


def _encoding_difference(a: Any, b: Any) -> str | None:
    """Where two encodings differ bit-wise (None when identical)."""
    for field in ("emb", "attr"):
        x, y = np.asarray(getattr(a, field)), np.asarray(getattr(b, field))
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"{field} is {x.dtype}{x.shape} one time and {y.dtype}{y.shape} the other"
        if x.tobytes() != y.tobytes():
            differs = (x != y) & ~(np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x != y
            flat = int(np.argmax(differs.ravel())) if differs.any() else 0
            where = np.unravel_index(flat, x.shape) if x.ndim else ()
            return (f"{field}{list(map(int, where))} is {x.ravel()[flat].item()!r} one time and "
                    f"{y.ravel()[flat].item()!r} the other")
    ka, kb = dict(a.offsets), dict(b.offsets)
    if set(ka) != set(kb):
        return f"offset fields are {sorted(ka)} one time and {sorted(kb)} the other"
    for key in ka:
        x, y = np.asarray(ka[key]), np.asarray(kb[key])
        if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
            return f"offsets[{key!r}] differ"
    return None


def _fresh(items: list[Sample]) -> list[Sample]:
    """Copies, so that a modality that modifies its input (check_determinism's finding) cannot
    make another check see different data."""
    return [Sample(_copy(s.data), dict(s.units), s.source) for s in items]


def _data_equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return bool(a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes())
    return bool(a == b)


# -- static checks ------------------------------------------------------------------------
@contract_check(since=1)
def check_schema(modality: Modality, *, max_examples: int | None = None) -> None:
    """Name, extensions, input spec and attribute schema are well formed: slot names unique and
    dotted, positions unique and inside the schema's zone, every slot with a meaning and a scaling."""
    problems: list[str] = []
    name = getattr(modality, "name", None)
    if not isinstance(name, str) or not _MODALITY_NAME.match(name):
        problems.append(f"name {name!r} must be a lower-case identifier (a-z, 0-9, _)")
    extensions = getattr(modality, "extensions", ())
    if not isinstance(extensions, tuple) or not all(
            isinstance(e, str) and e.startswith(".") and e == e.lower() for e in extensions):
        problems.append(f"extensions {extensions!r} must be a tuple of lower-case suffixes starting with '.'")
    spec = getattr(modality, "input_spec", None)
    if not isinstance(spec, InputSpec):
        problems.append(f"input_spec must be an InputSpec, got {type(spec).__name__}")
    else:
        if spec.kind not in ("text", "array"):
            problems.append(f"input_spec.kind {spec.kind!r} must be 'text' or 'array'")
        if spec.kind == "array" and (not spec.ndim or not set(spec.dtypes) <= set("biuf")):
            problems.append(f"input_spec needs ranks and dtype kinds among b, i, u, f "
                            f"(got ndim={spec.ndim}, dtypes={spec.dtypes})")
        unit_names = [u.name for u in spec.units]
        if len(set(unit_names)) != len(unit_names):
            problems.append(f"unit names {unit_names} are not unique")
        problems += [f"unit {u.name!r} has minimum {u.minimum} > maximum {u.maximum}"
                     for u in spec.units if not u.minimum <= u.maximum]
    schema = getattr(modality, "schema", None)
    if not isinstance(schema, AttributeSchema):
        problems.append(f"schema must be an AttributeSchema, got {type(schema).__name__}")
    else:
        # The base class's own rules, called unbound so a subclass cannot relax them.
        problems += AttributeSchema.problems(schema)
        problems += [f"slot {s.name!r} has no scaling" for s in schema.slots if not str(s.scaling).strip()]
        if schema.zone in ZONES:
            expected = np.zeros(ATTR_DIM, dtype=bool)
            expected[[s.index for s in schema.slots if 0 <= s.index < ATTR_DIM]] = True
            try:
                mask_ok = np.array_equal(np.asarray(schema.declared_mask), expected)
            except Exception:
                mask_ok = False
            if not mask_ok:
                problems.append("declared_mask does not match the declared slots")
    if problems:
        raise CheckFailure("; ".join(problems))


# -- data checks --------------------------------------------------------------------------
@contract_check(since=1)
def check_shape_dtype(modality: Modality, *, max_examples: int | None = None) -> None:
    """``emb`` is (N, 256) and ``attr`` (N, 384), both float32 numpy arrays, N ≥ 1 for a valid input."""

    def body(sample: Sample) -> None:
        enc = _encode(modality, sample)
        for label, array, width in (("emb", enc.emb, EMB_DIM), ("attr", enc.attr, ATTR_DIM)):
            if not isinstance(array, np.ndarray):
                raise CheckFailure(f"{label} must be a numpy array, got {type(array).__name__}")
            if array.dtype != np.float32:
                raise CheckFailure(f"{label} has dtype {array.dtype}, the contract needs float32")
            if array.ndim != 2 or array.shape[1] != width:
                raise CheckFailure(f"{label} has shape {array.shape}, the contract needs (N, {width})")
        if enc.emb.shape[0] != enc.attr.shape[0]:
            raise CheckFailure(f"emb has {enc.emb.shape[0]} rows but attr has {enc.attr.shape[0]}")
        if enc.emb.shape[0] == 0:
            raise CheckFailure("a valid input gave no tokens")

    for_all(_samples(modality), body, max_examples=max_examples)


@contract_check(since=1)
def check_finite(modality: Modality, *, max_examples: int | None = None) -> None:
    """Every ``emb`` and ``attr`` value is finite (no NaN or inf, e.g. from 0/0 on silence)."""

    def body(sample: Sample) -> None:
        enc = _encode(modality, sample)
        for label in ("emb", "attr"):
            array = _matrix(getattr(enc, label))
            if array is not None and not np.isfinite(array).all():
                i, j = _first_row(~np.isfinite(array))
                raise CheckFailure(f"{label}[{i}, {j}] is {array[i, j]}")

    for_all(_samples(modality), body, max_examples=max_examples)


@contract_check(since=1)
def check_unit_norm_emb(modality: Modality, *, max_examples: int | None = None) -> None:
    """Every token's ``emb`` has L2 norm 1 within 1e-4 (finite rows; non-finite ones are check_finite's)."""

    def body(sample: Sample) -> None:
        emb = _matrix(_encode(modality, sample).emb)
        if emb is None or emb.size == 0:
            return
        norms = np.sqrt(np.einsum("ij,ij->i", emb, emb))
        off = np.isfinite(norms) & (np.abs(norms - 1.0) > NORM_TOLERANCE)
        if off.any():
            i = int(np.argmax(off))
            raise CheckFailure(f"‖emb[{i}]‖ = {norms[i]:.6g}, must be 1 ± {NORM_TOLERANCE:g}")

    for_all(_samples(modality), body, max_examples=max_examples)


@contract_check(since=1)
def check_attr_bounds(modality: Modality, *, max_examples: int | None = None) -> None:
    """Every finite ``attr`` value lies in [-1, 1] (raw features must be scaled, not passed through)."""

    def body(sample: Sample) -> None:
        attr = _matrix(_encode(modality, sample).attr)
        if attr is None:
            return
        bad = np.isfinite(attr) & (np.abs(attr) > 1.0)
        if bad.any():
            i, j = _first_row(bad)
            name = modality.schema.name(j) if j < ATTR_DIM else None
            raise CheckFailure(f"attr[{i}, {j}]{f' ({name})' if name else ''} = {attr[i, j]:.6g} is outside [-1, 1]")

    for_all(_samples(modality), body, max_examples=max_examples)


@contract_check(since=1)
def check_declared_slots(modality: Modality, *, max_examples: int | None = None) -> None:
    """Only the slots the schema declares are non-zero; every other ``attr`` slot is exactly 0."""
    declared = np.zeros(ATTR_DIM, dtype=bool)
    declared[[s.index for s in getattr(modality.schema, "slots", ()) if 0 <= s.index < ATTR_DIM]] = True

    def body(sample: Sample) -> None:
        attr = _matrix(_encode(modality, sample).attr)
        if attr is None or attr.shape[1] != ATTR_DIM:
            return
        stray = attr[:, ~declared] != 0
        if stray.any():
            i, k = _first_row(stray)
            j = int(np.flatnonzero(~declared)[k])
            raise CheckFailure(f"attr[{i}, {j}] = {attr[i, j]:.6g} is written but slot {j} is not declared "
                               f"by the schema")

    for_all(_samples(modality), body, max_examples=max_examples)


@contract_check(since=1)
def check_determinism(modality: Modality, *, max_examples: int | None = None) -> None:
    """The same input gives bit-identical tokens, also after tokenizing another input in between,
    and ``encode`` leaves its input unmodified."""
    from hypothesis import strategies as st

    def body(pair: tuple[Sample, Sample]) -> None:
        first, other = pair
        data = _copy(first.data)
        once = _encode(modality, first, data)
        if not _data_equal(data, first.data):
            raise CheckFailure("encode modified its input in place")
        _encode(modality, other)
        again = _encode(modality, first)
        diff = _encoding_difference(once, again)
        if diff:
            raise CheckFailure(f"tokenizing the same input twice differs: {diff}")

    strategy = _samples(modality)
    for_all(st.tuples(strategy, strategy), body, max_examples=max_examples)


@contract_check(since=1)
def check_batch_equals_singles(modality: Modality, *, max_examples: int | None = None) -> None:
    """``tokenize_batch(items)`` equals the concatenation of ``tokenize(item)`` bit for bit, with
    ``offsets["item"]`` naming each token's input."""
    from hypothesis import strategies as st

    def body(items: list[Sample]) -> None:
        try:
            singles = [modality.tokenize(item) for item in _fresh(items)]
        except ContractViolation:
            return  # tokens that break the contract are the per-rule checks' finding
        except Exception as exc:
            raise CheckFailure(f"tokenize raised {type(exc).__name__} on a valid input: {exc}") from None
        try:
            batch = modality.tokenize_batch(_fresh(items))
        except Exception as exc:
            raise CheckFailure(f"tokenize_batch raised {type(exc).__name__}: {exc}") from None
        if not _batch_matches(batch, singles) and any(modality.tokenize(i) != s for i, s in zip(_fresh(items), singles)):
            return  # the singles themselves vary: a nondeterministic modality is check_determinism's finding
        joined = TokenBatch.concat(singles)
        if len(batch) != len(joined):
            raise CheckFailure(f"tokenize_batch gave {len(batch)} tokens, the singles {len(joined)}")
        for field in ("emb", "attr"):
            x, y = getattr(batch, field), getattr(joined, field)
            if x.tobytes() != y.tobytes():
                i, j = _first_row(x != y)
                raise CheckFailure(f"batch {field}[{i}, {j}] = {x[i, j].item()!r} but the single result has {y[i, j].item()!r}")
        expected_item = np.repeat(np.arange(len(items), dtype=np.int64), [len(b) for b in singles])
        item = batch.offsets.get("item")
        if item is None or not np.array_equal(item, expected_item):
            raise CheckFailure(f"offsets['item'] must be {expected_item.tolist()}, got "
                               f"{None if item is None else item.tolist()}")
        for key, value in joined.offsets.items():
            if key not in batch.offsets or not _data_equal(batch.offsets[key], value):
                raise CheckFailure(f"batch offsets[{key!r}] differ from the concatenated single offsets")

    def _batch_matches(batch: Any, singles: list[TokenBatch]) -> bool:
        if not isinstance(batch, TokenBatch):
            raise CheckFailure(f"tokenize_batch must return a TokenBatch, got {type(batch).__name__}")
        joined = TokenBatch.concat(singles)
        return (batch.emb.tobytes() == joined.emb.tobytes() and batch.attr.tobytes() == joined.attr.tobytes()
                and all(k in batch.offsets and _data_equal(batch.offsets[k], v) for k, v in joined.offsets.items()))

    for_all(st.lists(_samples(modality), min_size=1, max_size=3), body, max_examples=max_examples)


@contract_check(since=1)
def check_invalid_inputs(modality: Modality, *, max_examples: int | None = None) -> None:
    """Every labelled case of ``invalid_inputs(valid)`` (wrong dtype, wrong rank, empty, NaN/inf,
    missing units, plus the plugin's own) makes ``tokenize`` raise InputError (or a subclass) —
    never another exception ("crash") and never tokens ("garbage")."""

    def body(valid: Sample) -> None:
        try:
            cases = list(modality.invalid_inputs(valid))
        except Exception as exc:
            raise CheckFailure(f"invalid_inputs() raised {type(exc).__name__}: {exc}") from None
        if not cases:
            raise CheckFailure("invalid_inputs() returned no cases")
        failures = []
        for label, bad in cases:
            try:
                batch = modality.tokenize(bad)
            except InputError as exc:
                if not str(exc).strip():
                    failures.append(f"{label}: the InputError says nothing")
                continue
            except ContractViolation as exc:
                failures.append(f"{label}: garbage (tokens break the contract: {exc})")
            except Exception as exc:
                failures.append(f"{label}: crash ({type(exc).__name__}: {exc}) instead of InputError")
            else:
                failures.append(f"{label}: garbage (returned {len(batch)} tokens instead of raising InputError)")
            failures[-1] += f" for {describe(bad.data if isinstance(bad, Sample) else bad, 120)}"
        if failures:
            raise CheckFailure(f"{len(failures)} of {len(cases)} bad inputs not rejected with InputError:\n  "
                               + "\n  ".join(failures))

    for_all(_samples(modality), body, max_examples=max_examples)


@contract_check(since=1)
def check_config_roundtrip(modality: Modality, *, max_examples: int | None = None) -> None:
    """``config()`` is plain JSON and ``from_config(json.loads(json.dumps(config())))`` rebuilds a
    modality with the same config that tokenizes every sample input bit-identically."""
    try:
        config = modality.config()
        text = json.dumps(config, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise CheckFailure(f"config() is not JSON-serialisable: {type(exc).__name__}: {exc}") from None
    back = json.loads(text)
    if back != config:
        changed = sorted(k for k in set(config) | set(back) if config.get(k, None) != back.get(k, None)) \
            if isinstance(config, dict) and isinstance(back, dict) else ["<whole config>"]
        raise CheckFailure(f"config() changes through JSON in {changed}: {config!r} -> {back!r}")
    try:
        clone = type(modality).from_config(back)
        clone_config = clone.config()
    except Exception as exc:
        raise CheckFailure(f"from_config(config()) raised {type(exc).__name__}: {exc}") from None
    if clone_config != config:
        raise CheckFailure(f"from_config(config()).config() is {clone_config!r}, not {config!r}")

    def same_tokens(sample: Sample) -> None:
        mine = _encode(modality, sample)
        if _encoding_difference(mine, _encode(modality, sample)):
            return  # a nondeterministic modality is check_determinism's finding
        diff = _encoding_difference(mine, _encode(clone, sample))
        if diff:
            raise CheckFailure(f"the modality rebuilt from its config tokenizes differently: {diff}")

    for_all(_samples(modality), same_tokens, max_examples=max_examples)


@contract_check(since=1)
def check_offsets(modality: Modality, *, max_examples: int | None = None) -> None:
    """Offsets have one row per token and agree with the input: ``char`` indexes the NFC text,
    ``time`` spans are non-empty and lie within the signal's duration in seconds, ``box`` lies within the image,
    tokens are in input order."""

    def body(sample: Sample) -> None:
        enc = _encode(modality, sample)
        emb = _matrix(enc.emb)
        if emb is None:
            return
        problems = _offset_problems(dict(enc.offsets), emb.shape[0], sample, modality)
        if problems:
            raise CheckFailure("; ".join(problems))

    for_all(_samples(modality), body, max_examples=max_examples)


def _offset_problems(offsets: Mapping[str, Any], n: int, sample: Sample, modality: Modality) -> list[str]:
    out: list[str] = []
    data = sample.data
    for key, raw in offsets.items():
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
            start, end = value[:, 0], value[:, 1]
            duration = _duration(data, sample, modality)
            # a token stands for a stretch of signal: end == start (e.g. ends never written) is as
            # wrong as an empty box
            if (start < 0).any() or (end <= start).any():
                i = int(np.argmax((start < 0) | (end <= start)))
                out.append(f"offsets['time'][{i}] = {value[i].tolist()} must satisfy 0 ≤ start < end "
                           "(a non-empty span)")
            elif duration is not None and (end > duration * (1 + 1e-9) + 1e-12).any():
                i = int(np.argmax(end > duration * (1 + 1e-9) + 1e-12))
                out.append(f"offsets['time'][{i}] ends at {end[i]:.6g} s, after the input's end at "
                           f"{duration:.6g} s")
            if (np.diff(start) < 0).any():
                out.append("offsets['time'] starts must be non-decreasing (tokens in input order)")
        elif key == "box":
            if value.dtype.kind not in "iu":
                out.append(f"offsets['box'] must be integers, got {value.dtype}")
                continue
            x0, y0, x1, y1 = value.T
            bad = (x0 < 0) | (y0 < 0) | (x1 <= x0) | (y1 <= y0)
            array = np.asarray(data) if isinstance(data, np.ndarray) else None
            if array is not None and array.ndim >= 2:
                bad |= (x1 > array.shape[1]) | (y1 > array.shape[0])
            if bad.any():
                i = int(np.argmax(bad))
                out.append(f"offsets['box'][{i}] = {value[i].tolist()} is not a non-empty box inside the image")
        elif key == "item" and (value != 0).any():
            out.append("offsets['item'] of a single input must be all 0")
    return out


def _duration(data: Any, sample: Sample, modality: Modality) -> float | None:
    """Length in seconds of an array input with a rate unit (symbol Hz): longest axis / rate."""
    if not isinstance(data, np.ndarray) or data.size == 0:
        return None
    for unit in modality.input_spec.units:
        if unit.symbol == "Hz" and unit.name in sample.units:
            return float(max(data.shape)) / float(sample.units[unit.name])
    return None
