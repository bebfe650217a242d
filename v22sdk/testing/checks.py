"""The contract checks: one named function per rule of the 640-D token contract.

Every check takes a modality instance and returns None or raises :class:`CheckFailure` naming the
broken rule, the case and (for data checks) the shrunk falsifying input with a reproduction.

* **Rule checks** (``check_shape_dtype`` ... ``check_offsets``) judge their own rule, on the raw
  :class:`~v22sdk.modality.Encoding` that ``encode`` returns (``tokenize`` would stop at the first
  broken rule and hide the others), over the plugin's ``sample_inputs()`` and, from contract
  version 2, over the inputs the kit derives itself (:mod:`._inputs`).
* **Behaviour checks** (determinism, batches, configs, fresh instances and processes, files, the
  kit's own inputs) judge *every* rule on every encoding they compute (:mod:`._judge`): a broken
  rule seen by any check fails the run, attributed to the rule (``CheckFailure.rule``), never
  skipped as "another check's finding".
* **Quality checks** (``check_quality_*``, level ``warning``) report collapsed embeddings, token
  counts out of proportion and slow examples as a :class:`ContractWarning`; they fail only when
  asked (``strict_warnings``).

Each check draws its inputs from its own seed stream (:mod:`._settings`). A valid input on which
``encode`` raises fails the check that drew it, with the plugin's traceback kept.
"""

from __future__ import annotations

import collections
import copy
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ..contract import ATTR_DIM, TokenBatch
from ..errors import ContractViolation, InputError
from ..modality import Encoding, InputSpec, Modality, Sample
from ..schema import ZONES, AttributeSchema
from . import _inputs
from ._format import author_traceback, describe, number
from ._judge import RULES, VIOLATION_OWNER, first_row, is_encoding, judge_all, matrix, signal_duration
from ._property import SkipExample, finish, for_all
from ._registry import CheckFailure, CheckSkipped, ContractWarning, contract_check
from ._settings import configuration_key, current, stream_key

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

_MODALITY_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


# -- helpers ------------------------------------------------------------------------------
def _as_sample(value: Any) -> Sample:
    return value if isinstance(value, Sample) else Sample(value)


def _samples(modality: Modality) -> SearchStrategy[Sample]:
    """The plugin's strategy of valid inputs; bare values are wrapped in :class:`Sample`."""
    __tracebackhide__ = True
    from hypothesis.strategies import SearchStrategy

    try:
        strategy = modality.sample_inputs()
    except NotImplementedError as exc:
        raise CheckFailure(f"the {modality.name!r} modality provides no sample_inputs(): {exc}") from None
    if not isinstance(strategy, SearchStrategy):
        raise CheckFailure(f"sample_inputs() must return a hypothesis strategy, got {type(strategy).__name__}")
    return strategy.map(_as_sample)


def _copy(data: Any) -> Any:
    """A copy with the same values *and* memory layout (strides, byte order, read-only flag)."""
    if not isinstance(data, np.ndarray):
        return copy.deepcopy(data)
    if data.flags.c_contiguous or data.flags.f_contiguous or data.ndim == 0 or data.size == 0:
        out = np.array(data, copy=True, order="K")
    else:  # a strided view: rebuild one with the same values
        holder = np.empty((2 * data.shape[0],) + data.shape[1:], dtype=data.dtype)
        out = holder[::2]
        out[...] = data
    out.flags.writeable = data.flags.writeable
    return out


def _sample_copy(sample: Sample) -> Sample:
    return Sample(_copy(sample.data), dict(sample.units), sample.source)


def _data_equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        x, y = np.asarray(a), np.asarray(b)
        return x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()
    try:
        return bool(a == b)
    except Exception:
        return False


def _raw_encode(modality: Modality, sample: Sample, data: Any = None) -> Any:
    """``encode`` of a sample, its units checked the way ``tokenize`` checks them (may raise)."""
    __tracebackhide__ = True
    source = sample.source or f"<{modality.name} input>"
    units = modality.check_units(sample.units, source)
    return modality.encode(_copy(sample.data) if data is None else data, **units)


def _encode(modality: Modality, sample: Sample, data: Any = None) -> Encoding:
    """``encode`` of a valid sample; a crash is a failure that keeps the plugin's traceback."""
    __tracebackhide__ = True
    try:
        enc = _raw_encode(modality, sample, data)
    except Exception as exc:
        raise CheckFailure(
            f"encode raised {type(exc).__name__} on a valid input from sample_inputs(): {exc}",
            author_traceback=author_traceback(exc),
        ) from exc
    if not is_encoding(enc):
        raise CheckFailure(
            f"encode must return an Encoding (emb, attr, offsets), got {type(enc).__name__}", rule="check_shape_dtype"
        )
    return enc


#: Rules already reported broken in this run, per configuration: a later check that meets the same
#: broken rule does not report it again (it skips that input and goes on testing its own rule).
_REPORTED: dict[str, set[str]] = {}


def _run_key(modality: Modality) -> str:
    return f"{configuration_key(modality)}|v{current().contract_version}"


def reported(modality: Modality) -> set[str]:
    """The rules already reported broken for this modality's configuration in this run."""
    return _REPORTED.setdefault(_run_key(modality), set())


def forget_reported(modality: Modality) -> None:
    """Start a new run for this configuration (``check_modality`` calls it)."""
    _REPORTED.pop(_run_key(modality), None)


def _kit(fn: Any) -> Any:
    """Record the rule of a failure, so other checks do not report it again."""

    @functools.wraps(fn)
    def check(modality: Modality, *, max_examples: int | None = None) -> None:
        __tracebackhide__ = True
        try:
            fn(modality, max_examples=max_examples)
        except CheckFailure as exc:
            reported(modality).add(exc.rule or fn.__name__)
            raise

    return check


def _unreported(enc: Any, sample: Sample, modality: Modality) -> tuple[str, str] | None:
    """The first broken rule not yet reported; raises SkipExample when only reported ones are broken."""
    if not is_encoding(enc):
        return judge_all(enc, sample, modality)
    known = reported(modality)
    skipped = False
    for owner, rule in RULES.items():
        problem = rule(enc, sample, modality)
        if problem:
            if owner not in known:
                return owner, problem
            skipped = True
    if skipped:
        raise SkipExample()
    return None


def _require_rules(enc: Any, sample: Sample, modality: Modality) -> None:
    """Fail, attributed to the rule, when ``enc`` breaks any token rule (evidence is kept)."""
    __tracebackhide__ = True
    broken = _unreported(enc, sample, modality)
    if broken:
        owner, problem = broken
        raise CheckFailure(problem, rule=owner)


def _violation(exc: ContractViolation, where: str, modality: Modality | None = None) -> CheckFailure:
    owner = VIOLATION_OWNER.get(exc.rule, "check_shape_dtype")
    if modality is not None and owner in reported(modality):
        raise SkipExample()
    return CheckFailure(f"{where}: {exc}", rule=owner)


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
            return (
                f"{field}{list(map(int, where))} is {number(x.ravel()[flat])} one time and "
                f"{number(y.ravel()[flat])} the other"
            )
    ka, kb = dict(a.offsets), dict(b.offsets)
    if set(ka) != set(kb):
        return f"offset fields are {sorted(ka)} one time and {sorted(kb)} the other"
    for key in ka:
        x, y = np.asarray(ka[key]), np.asarray(kb[key])
        if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
            return f"offsets[{key!r}] differ"
    return None


def _clone(modality: Modality) -> Modality:
    """A fresh instance with the same configuration (``from_config`` of the JSON'd ``config()``)."""
    __tracebackhide__ = True
    try:
        return type(modality).from_config(json.loads(json.dumps(modality.config())))
    except Exception as exc:
        raise CheckSkipped(
            f"cannot build a fresh instance: from_config(config()) fails ({type(exc).__name__}: "
            f"{exc}); see check_config_roundtrip"
        ) from None


def _version() -> int:
    return current().contract_version


def _warn(check: str, message: str) -> None:
    """A quality finding: a warning, or a failure when the run asked for strict warnings."""
    __tracebackhide__ = True
    if current().strict_warnings:
        raise CheckFailure(message, rule=check)
    warnings.warn(ContractWarning(f"{check}: {message}"), stacklevel=3)


# -- the kit's own inputs, encoded once per modality and shared by the checks ----------------
@attrs.define
class Outcome:
    """What ``encode`` did with one input: an encoding or the exception, the time it took and
    whether it changed the input in place."""

    encoding: Any = None
    error: BaseException | None = None
    seconds: float = 0.0
    modified: bool = False

    @property
    def rejected(self) -> bool:
        return isinstance(self.error, InputError)


def _outcome(modality: Modality, sample: Sample, *, quiet: bool = False) -> Outcome:
    data = _copy(sample.data)
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            if quiet:  # the kit's extreme inputs make numpy warn about overflow: the tokens are judged anyway
                warnings.simplefilter("ignore", RuntimeWarning)
            enc = _raw_encode(modality, sample, data)
    except Exception as exc:
        return Outcome(error=exc, seconds=time.perf_counter() - start)
    seconds = time.perf_counter() - start
    return Outcome(encoding=enc, seconds=seconds, modified=not _data_equal(data, sample.data))


@attrs.define
class KitRun:
    bases: list[Sample]
    inputs: list[_inputs.KitInput]
    outcomes: list[Outcome]


_MEMO: collections.OrderedDict[tuple[int, str], tuple[Modality, KitRun]] = collections.OrderedDict()


def kit_run(modality: Modality) -> KitRun:
    """The kit's own inputs for ``modality`` and what ``encode`` made of each (computed once)."""
    __tracebackhide__ = True
    key = (id(modality), configuration_key(modality))
    if key in _MEMO and _MEMO[key][0] is modality:
        _MEMO.move_to_end(key)
        return _MEMO[key][1]
    examples = _inputs.draw_examples(modality, _samples(modality), 12, stream_key("kit-inputs", modality))
    bases = _inputs.choose_bases(examples)
    inputs = _inputs.kit_inputs(modality, bases)
    run = KitRun(bases, inputs, [_outcome(modality, ki.sample, quiet=True) for ki in inputs])
    _MEMO[key] = (modality, run)
    while len(_MEMO) > 2:
        _MEMO.popitem(last=False)
    return run


def _fail_on(
    ki: _inputs.KitInput, problem: str | CheckFailure, *, rule: str, check: str, modality: Modality
) -> CheckFailure:
    """The finished failure of ``check`` on the kit's own input ``ki`` (a message is attributed to ``rule``)."""
    failure = problem if isinstance(problem, CheckFailure) else CheckFailure(problem, rule=rule)
    return finish(failure, ki.sample, check=check, modality=modality, settings=current(), label=ki.label)


def _judge_kit_inputs(modality: Modality, check: str) -> None:
    """From contract version 2, a rule check also judges its rule on the kit's own inputs."""
    __tracebackhide__ = True
    if _version() < 2:
        return
    run = kit_run(modality)
    rule = RULES[check]
    for ki, out in zip(run.inputs, run.outcomes):
        if out.encoding is None or not is_encoding(out.encoding):
            continue
        problem = rule(out.encoding, ki.sample, modality)
        if problem:
            raise _fail_on(ki, problem, rule=check, check=check, modality=modality)


def _for_all(
    strategy: SearchStrategy[Any], body: Any, check: str, modality: Modality, max_examples: int | None
) -> None:
    """:func:`for_all`, skipping examples that break only rules already reported in this run."""
    __tracebackhide__ = True
    for_all(strategy, body, check=check, modality=modality, max_examples=max_examples, already=reported(modality))


def _rule_check(modality: Modality, check: str, max_examples: int | None) -> None:
    """A rule check: the rule on the kit's inputs, then on the author's (property-based)."""
    __tracebackhide__ = True
    _judge_kit_inputs(modality, check)
    rule = RULES[check]

    def body(sample: Sample) -> None:
        __tracebackhide__ = True
        enc = _encode(modality, sample)
        problem = rule(enc, sample, modality)
        if problem:
            raise CheckFailure(problem, rule=check)

    for_all(_samples(modality), body, check=check, modality=modality, max_examples=max_examples)


# -- static checks ------------------------------------------------------------------------
@contract_check(since=1)
@_kit
def check_schema(modality: Modality, *, max_examples: int | None = None) -> None:
    """Name, extensions, input spec and attribute schema are well formed: slot names unique and
    dotted, positions unique and inside the schema's zone, every slot with a meaning and a scaling."""
    __tracebackhide__ = True
    problems: list[str] = []
    name = getattr(modality, "name", None)
    if not isinstance(name, str) or not _MODALITY_NAME.match(name):
        problems.append(f"name {name!r} must be a lower-case identifier (a-z, 0-9, _)")
    extensions = getattr(modality, "extensions", ())
    if not isinstance(extensions, tuple) or not all(
        isinstance(e, str) and e.startswith(".") and e == e.lower() for e in extensions
    ):
        problems.append(f"extensions {extensions!r} must be a tuple of lower-case suffixes starting with '.'")
    spec = getattr(modality, "input_spec", None)
    if not isinstance(spec, InputSpec):
        problems.append(f"input_spec must be an InputSpec, got {type(spec).__name__}")
    else:
        if spec.kind not in ("text", "array"):
            problems.append(f"input_spec.kind {spec.kind!r} must be 'text' or 'array'")
        if spec.kind == "array" and (not spec.ndim or not set(spec.dtypes) <= set("biuf")):
            problems.append(
                f"input_spec needs ranks and dtype kinds among b, i, u, f (got ndim={spec.ndim}, dtypes={spec.dtypes})"
            )
        unit_names = [u.name for u in spec.units]
        if len(set(unit_names)) != len(unit_names):
            problems.append(f"unit names {unit_names} are not unique")
        problems += [
            f"unit {u.name!r} has minimum {u.minimum} > maximum {u.maximum}"
            for u in spec.units
            if not u.minimum <= u.maximum
        ]
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
        problems += _engine_slot_problems(modality, schema)
    if problems:
        raise CheckFailure("; ".join(problems), rule="check_schema", check="check_schema")


def _engine_slot_problems(modality: Modality, schema: AttributeSchema) -> list[str]:
    """``fidelity_slots`` and ``storage_slots`` name slots of the schema (a misspelt name would
    switch the floor or the ceiling off without a word); each storage ceiling is a number in [-1, 1]."""
    problems: list[str] = []
    names = set(schema.names)
    fidelity = getattr(modality, "fidelity_slots", ())
    if not isinstance(fidelity, tuple) or not all(isinstance(n, str) for n in fidelity):
        problems.append(f"fidelity_slots {fidelity!r} must be a tuple of slot names")
    else:
        problems += [
            f"fidelity_slots names {n!r}, which the schema does not declare" for n in fidelity if n not in names
        ]
    storage = getattr(modality, "storage_slots", {})
    if not isinstance(storage, Mapping):
        return [*problems, f"storage_slots {storage!r} must map slot names to ceilings"]
    for n, ceiling in storage.items():
        if n not in names:
            problems.append(f"storage_slots names {n!r}, which the schema does not declare")
        if isinstance(ceiling, bool) or not isinstance(ceiling, (int, float)) or not -1.0 <= float(ceiling) <= 1.0:
            problems.append(f"storage_slots[{n!r}] = {ceiling!r} must be a number in [-1, 1]")
    return problems


# -- rule checks --------------------------------------------------------------------------
@contract_check(since=1)
@_kit
def check_shape_dtype(modality: Modality, *, max_examples: int | None = None) -> None:
    """``emb`` is (N, 256) and ``attr`` (N, 384), both float32 numpy arrays, N ≥ 1 for a valid input."""
    __tracebackhide__ = True
    _rule_check(modality, "check_shape_dtype", max_examples)


@contract_check(since=1)
@_kit
def check_finite(modality: Modality, *, max_examples: int | None = None) -> None:
    """Every ``emb`` and ``attr`` value is finite (no NaN or inf, e.g. from 0/0 on silence)."""
    __tracebackhide__ = True
    _rule_check(modality, "check_finite", max_examples)


@contract_check(since=1)
@_kit
def check_unit_norm_emb(modality: Modality, *, max_examples: int | None = None) -> None:
    """Every token's ``emb`` has L2 norm 1 within 1e-4 (finite rows; non-finite ones are check_finite's)."""
    __tracebackhide__ = True
    _rule_check(modality, "check_unit_norm_emb", max_examples)


@contract_check(since=1)
@_kit
def check_attr_bounds(modality: Modality, *, max_examples: int | None = None) -> None:
    """Every finite ``attr`` value lies in [-1, 1] (raw features must be scaled, not passed through)."""
    __tracebackhide__ = True
    _rule_check(modality, "check_attr_bounds", max_examples)


@contract_check(since=1)
@_kit
def check_declared_slots(modality: Modality, *, max_examples: int | None = None) -> None:
    """Only the slots the schema declares are non-zero; every other ``attr`` slot is exactly 0."""
    __tracebackhide__ = True
    _rule_check(modality, "check_declared_slots", max_examples)


@contract_check(since=1)
@_kit
def check_offsets(modality: Modality, *, max_examples: int | None = None) -> None:
    """Offsets have one row per token and agree with the input: ``char`` indexes the NFC text,
    ``time`` spans are non-empty and lie within the signal's duration in seconds (an end may pass it
    by duration × 1e-9 + 1e-12 s: float64 rounding of a span computed another way), ``box`` lies
    within the image, tokens are in input order."""
    __tracebackhide__ = True
    _rule_check(modality, "check_offsets", max_examples)


# -- behaviour checks ---------------------------------------------------------------------
@contract_check(since=1)
@_kit
def check_determinism(modality: Modality, *, max_examples: int | None = None) -> None:
    """The same input gives bit-identical tokens, also after tokenizing another input in between,
    and ``encode`` leaves its input unmodified."""
    __tracebackhide__ = True
    from hypothesis import strategies as st

    def body(pair: tuple[Sample, Sample]) -> None:
        __tracebackhide__ = True
        first, other = pair
        data = _copy(first.data)
        once = _encode(modality, first, data)
        _require_rules(once, first, modality)
        if not _data_equal(data, first.data):
            raise CheckFailure("encode modified its input in place")
        _require_rules(_encode(modality, other), other, modality)
        again = _encode(modality, first)
        diff = _encoding_difference(once, again)
        if diff:
            raise CheckFailure(f"tokenizing the same input twice differs: {diff}")

    strategy = _samples(modality)
    _for_all(st.tuples(strategy, strategy), body, "check_determinism", modality, max_examples)


def _batch_problem(modality: Modality, items: list[Sample]) -> CheckFailure | None:
    """Why ``tokenize_batch(items)`` differs from the concatenated singles (None when it does not)."""
    __tracebackhide__ = True
    singles = []
    for item in items:
        try:
            singles.append(modality.tokenize(_sample_copy(item)))
        except ContractViolation as exc:
            return _violation(exc, "tokenize of a single input", modality)
        except Exception as exc:
            return CheckFailure(
                f"tokenize raised {type(exc).__name__} on a valid input: {exc}", author_traceback=author_traceback(exc)
            )
    try:
        batch = modality.tokenize_batch([_sample_copy(i) for i in items])
    except ContractViolation as exc:
        return _violation(exc, "tokenize_batch", modality)
    except Exception as exc:
        return CheckFailure(
            f"tokenize_batch raised {type(exc).__name__}: {exc}", author_traceback=author_traceback(exc)
        )
    if not isinstance(batch, TokenBatch):
        return CheckFailure(f"tokenize_batch must return a TokenBatch, got {type(batch).__name__}")
    joined = TokenBatch.concat(singles)
    if len(batch) != len(joined):
        return CheckFailure(f"tokenize_batch gave {len(batch)} tokens, the singles {len(joined)}")
    for field in ("emb", "attr"):
        x, y = getattr(batch, field), getattr(joined, field)
        if x.tobytes() != y.tobytes():
            again = [modality.tokenize(_sample_copy(i)) for i in items]
            if any(a != s for a, s in zip(again, singles)):
                return CheckFailure("the single inputs tokenize differently each time", rule="check_determinism")
            i, j = first_row(x != y)
            return CheckFailure(
                f"batch {field}[{i}, {j}] = {number(x[i, j])} but the single result has {number(y[i, j])}"
            )
    expected_item = np.repeat(np.arange(len(items), dtype=np.int64), [len(b) for b in singles])
    item_offsets = batch.offsets.get("item")
    if item_offsets is None or not np.array_equal(item_offsets, expected_item):
        return CheckFailure(
            f"offsets['item'] must be {expected_item.tolist()}, got "
            f"{None if item_offsets is None else item_offsets.tolist()}"
        )
    for key, value in joined.offsets.items():
        if key not in batch.offsets or not _data_equal(batch.offsets[key], value):
            return CheckFailure(f"batch offsets[{key!r}] differ from the concatenated single offsets")
    return None


@contract_check(since=1)
@_kit
def check_batch_equals_singles(modality: Modality, *, max_examples: int | None = None) -> None:
    """``tokenize_batch(items)`` equals the concatenation of ``tokenize(item)`` bit for bit, with
    ``offsets["item"]`` naming each token's input."""
    __tracebackhide__ = True
    from hypothesis import strategies as st

    def body(items: list[Sample]) -> None:
        __tracebackhide__ = True
        problem = _batch_problem(modality, items)
        if problem is not None:
            raise problem

    _for_all(
        st.lists(_samples(modality), min_size=1, max_size=3), body, "check_batch_equals_singles", modality, max_examples
    )


def _rejection_problems(modality: Modality, cases: list[tuple[str, Any]]) -> list[str]:
    """Cases that ``tokenize`` did not reject with a (non-empty) InputError."""
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
    return failures


@contract_check(since=1)
@_kit
def check_invalid_inputs(modality: Modality, *, max_examples: int | None = None) -> None:
    """Every labelled case of ``invalid_inputs(valid)`` (wrong dtype, wrong rank, empty, NaN/inf,
    missing units, plus the plugin's own) makes ``tokenize`` raise InputError (or a subclass) —
    never another exception ("crash") and never tokens ("garbage")."""
    __tracebackhide__ = True

    def body(valid: Sample) -> None:
        __tracebackhide__ = True
        try:
            cases = list(modality.invalid_inputs(valid))
        except Exception as exc:
            raise CheckFailure(f"invalid_inputs() raised {type(exc).__name__}: {exc}") from exc
        if not cases:
            raise CheckFailure("invalid_inputs() returned no cases")
        failures = _rejection_problems(modality, cases)
        if failures:
            raise CheckFailure(
                f"{len(failures)} of {len(cases)} bad inputs not rejected with InputError:\n  " + "\n  ".join(failures)
            )

    for_all(_samples(modality), body, check="check_invalid_inputs", modality=modality, max_examples=max_examples)


@contract_check(since=1)
@_kit
def check_config_roundtrip(modality: Modality, *, max_examples: int | None = None) -> None:
    """``config()`` is plain JSON and ``from_config(json.loads(json.dumps(config())))`` rebuilds a
    modality with the same config that tokenizes every sample input bit-identically; from contract
    version 2 also with every configured attribute exactly as it was (a float rounded on the way is
    another modality), and tokenizing every one of the kit's own inputs as the original does (units
    at their limits and where they meet the configuration's numbers on a multiple of 1/2, lengths
    0, 1 and 2, long and thin inputs)."""
    __tracebackhide__ = True
    try:
        config = modality.config()
        text = json.dumps(config, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise CheckFailure(
            f"config() is not JSON-serialisable: {type(exc).__name__}: {exc}",
            rule="check_config_roundtrip",
            check="check_config_roundtrip",
        ) from None
    back = json.loads(text)
    if back != config:
        changed = (
            sorted(k for k in set(config) | set(back) if config.get(k, None) != back.get(k, None))
            if isinstance(config, dict) and isinstance(back, dict)
            else ["<whole config>"]
        )
        raise CheckFailure(
            f"config() changes through JSON in {changed}: {config!r} -> {back!r}",
            rule="check_config_roundtrip",
            check="check_config_roundtrip",
        )
    try:
        clone = type(modality).from_config(back)
        clone_config = clone.config()
    except Exception as exc:
        raise CheckFailure(
            f"from_config(config()) raised {type(exc).__name__}: {exc}",
            rule="check_config_roundtrip",
            check="check_config_roundtrip",
        ) from exc
    if clone_config != config:
        raise CheckFailure(
            f"from_config(config()).config() is {clone_config!r}, not {config!r}",
            rule="check_config_roundtrip",
            check="check_config_roundtrip",
        )
    if _version() >= 2:
        drift = _attribute_drift(modality, clone, config)
        if drift:
            raise CheckFailure(
                f"from_config(config()) does not rebuild the modality exactly: {drift}",
                rule="check_config_roundtrip",
                check="check_config_roundtrip",
            )
        _clone_on_kit_inputs(modality, clone)

    def same_tokens(sample: Sample) -> None:
        __tracebackhide__ = True
        mine = _encode(modality, sample)
        _require_rules(mine, sample, modality)
        diff = _encoding_difference(mine, _encode(modality, sample))
        if diff:
            raise CheckFailure(f"tokenizing the same input twice differs: {diff}", rule="check_determinism")
        diff = _encoding_difference(mine, _encode(clone, sample))
        if diff:
            raise CheckFailure(f"the modality rebuilt from its config tokenizes differently: {diff}")

    _for_all(_samples(modality), same_tokens, "check_config_roundtrip", modality, max_examples)


def _json_form(value: Any) -> Any:
    """``value`` as JSON would carry it (raises TypeError or ValueError when it cannot)."""
    return json.loads(json.dumps(value, allow_nan=False, sort_keys=True))


def _attribute_drift(modality: Modality, clone: Modality, config: Any) -> str | None:
    """A configured attribute the rebuilt modality does not have exactly (None: none).

    Each key of ``config()`` that names an attribute of the modality must have the very same value on
    ``from_config(config())``: a configuration rounded on the way (a float to single precision, seconds
    to milliseconds) rebuilds another modality, whose tokens differ only where the rounding matters."""
    if not isinstance(config, dict):
        return None
    for key in sorted(k for k in config if isinstance(k, str)):
        try:
            mine, theirs = getattr(modality, key), getattr(clone, key)
        except Exception:
            continue  # not an attribute: the tokens are compared instead
        try:
            differs = _json_form(mine) != _json_form(theirs)
        except (TypeError, ValueError):
            try:
                differs = not bool(mine == theirs)
            except Exception:
                continue  # not comparable (an array, say): the tokens are compared instead
        if differs:
            return f"{key} is {mine!r} here and {theirs!r} rebuilt (config() gives {config[key]!r})"
    return None


def _clone_on_kit_inputs(modality: Modality, clone: Modality) -> None:
    """The rebuilt modality gives the original's tokens (or its InputError) on every one of the kit's
    own inputs: the units at their limits and where they meet the configuration's numbers on a
    multiple of 1/2 (see ``_inputs``), the lengths 0, 1 and 2, the long inputs ..."""
    __tracebackhide__ = True
    check = "check_config_roundtrip"
    run = kit_run(modality)
    for ki, out in zip(run.inputs, run.outcomes):
        if ki.family in _inputs.ENCODED_ONCE or _inputs.compared_only(ki):
            continue  # many tiny inputs, for the rules (the level sweep); views of another input
        if out.encoding is None and not out.rejected:
            continue  # a crash: check_edge_inputs' finding
        if out.encoding is not None and not is_encoding(out.encoding):
            continue
        theirs = _outcome(clone, ki.sample, quiet=True)
        problem = None
        if out.encoding is None or theirs.encoding is None:
            if out.rejected and theirs.rejected:
                continue
            here = "tokens" if out.encoding is not None else f"{type(out.error).__name__}: {out.error}"
            there = "tokens" if theirs.encoding is not None else f"{type(theirs.error).__name__}: {theirs.error}"
            problem = f"the modality rebuilt from its config gives {there}, the original {here}"
        elif is_encoding(theirs.encoding) and _encoding_difference(out.encoding, theirs.encoding):
            # both once more: a modality whose tokens depend on earlier calls is check_determinism's
            mine, again = _outcome(modality, ki.sample, quiet=True), _outcome(clone, ki.sample, quiet=True)
            unstable = [
                _encoding_difference(first.encoding, second.encoding) if second.encoding is not None else "an error"
                for first, second in ((out, mine), (theirs, again))
            ]
            if any(unstable):
                if "check_determinism" in reported(modality):
                    continue
                problem = f"tokenizing the same input twice differs: {next(u for u in unstable if u)}"
                raise _fail_on(ki, problem, rule="check_determinism", check=check, modality=modality)
            problem = (
                f"the modality rebuilt from its config tokenizes differently: "
                f"{_encoding_difference(out.encoding, theirs.encoding)}"
            )
        if problem:
            raise _fail_on(ki, problem, rule=check, check=check, modality=modality)


def _same_number(value: Any, bound: float) -> bool:
    """Whether a unit value given to an input is ``bound`` (a number; anything else is not)."""
    try:
        return float(value) == bound
    except (TypeError, ValueError):
        return False


def _path_cases(modality: Modality, run: KitRun, folder: Path) -> list[tuple[str, Sample]]:
    """For an array input spec: a str and a pathlib.Path naming a real file in ``folder`` that
    ``save`` wrote from a valid input (the bases first, then the kit's accepted dtype inputs). A
    path is not an array, so ``tokenize`` must refuse both: only ``load`` and ``tokenize_file`` take
    paths, and a plugin that reads one inside ``encode`` takes a non-array (a str naming no file,
    which the kit also gives, does not show it). None without ``save``, or when it writes nothing."""
    if modality.input_spec.kind != "array":
        return []
    suffix = modality.extensions[0] if modality.extensions else ".bin"
    accepted = [
        ki.sample for ki, out in zip(run.inputs, run.outcomes) if ki.family == "dtype" and out.encoding is not None
    ]
    for sample in [*run.bases, *accepted[:8]]:
        path = folder / f"saved{suffix}"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                modality.save(sample, path)
        except NotImplementedError:
            return []
        except Exception:  # this sample does not fit the format (check_files judges save)
            continue
        if path.is_file():
            units, src = dict(sample.units), sample.source
            return [
                (f"a str naming a file save() wrote ({path.name})", Sample(str(path), units, src)),
                (f"a pathlib.Path naming a file save() wrote ({path.name})", Sample(path, units, src)),
            ]
    return []


# -- contract version 2 ---------------------------------------------------------------------
@contract_check(since=2)
@_kit
def check_input_spec(modality: Modality, *, max_examples: int | None = None) -> None:
    """``input_spec`` is true in both directions: what it excludes (other dtype kinds and ranks,
    NaN or inf in every float dtype, units missing, unknown, non-numeric or out of range, non-arrays:
    None, a str, and a str or a pathlib.Path naming a real file that ``save`` wrote) raises
    InputError, and every dtype kind and rank it declares, and each unit at its declared minimum and
    at its declared maximum, is accepted by some input the kit makes."""
    __tracebackhide__ = True
    run = kit_run(modality)
    if not run.bases:
        raise CheckFailure("sample_inputs() gave no example to derive inputs from", rule="check_input_spec")
    cases = _inputs.invalid_inputs(modality.input_spec, run.bases[0])
    with tempfile.TemporaryDirectory(prefix="v22sdk-kit-paths-") as tmp:
        cases += _path_cases(modality, run, Path(tmp))
        failures = _rejection_problems(modality, cases)
    if failures:
        raise CheckFailure(
            f"{len(failures)} of {len(cases)} inputs the input spec excludes were not rejected "
            f"with InputError:\n  " + "\n  ".join(failures),
            rule="check_input_spec",
            check="check_input_spec",
        )
    spec = modality.input_spec
    if spec.kind != "array":
        return
    problems = []

    def refused_all(wanted: Any) -> tuple[int, str] | None:
        """When the kit made inputs ``wanted`` selects and refused every one: how many, and the first."""
        tried = [(ki, out) for ki, out in zip(run.inputs, run.outcomes) if wanted(ki)]
        if not tried or any(out.encoding is not None for _, out in tried):
            return None
        ki, out = tried[0]
        return len(tried), f"first: {ki.label}: {type(out.error).__name__}: {out.error}"

    for attribute, declared in (("kind", [k for k in spec.dtypes if k in _inputs.KIND_DTYPES]), ("rank", spec.ndim)):
        for value in declared:
            seen = refused_all(lambda ki, a=attribute, v=value: getattr(ki, a) == v)
            if seen:
                problems.append(
                    f"input_spec declares dtype {attribute} {value!r}, but none of the {seen[0]} "
                    f"inputs of that {attribute} the kit made was accepted ({seen[1]})"
                )
    for unit in spec.units:
        for end, bound in (("minimum", unit.minimum), ("maximum", unit.maximum)):
            if not np.isfinite(bound):
                continue
            seen = refused_all(lambda ki, n=unit.name, b=float(bound): _same_number(ki.sample.units.get(n), b))
            if seen:
                problems.append(
                    f"input_spec declares unit {unit.name} from {float(unit.minimum):g} to {float(unit.maximum):g} "
                    f"{unit.symbol}, but none of the {seen[0]} inputs the kit made at its {end} was "
                    f"accepted ({seen[1]})"
                )
    if problems:
        raise CheckFailure("; ".join(problems), rule="check_input_spec", check="check_input_spec")


@contract_check(since=2)
@_kit
def check_edge_inputs(modality: Modality, *, max_examples: int | None = None) -> None:
    """Every input the kit derives from ``input_spec`` (dtype extremes, length 0/1/2 on every axis,
    thin-and-long shapes, constant and zero input, a long tiled input, units at their limits, other
    memory layouts) gives valid tokens or an InputError -- never a crash -- and, when it gives
    tokens, keeps every rule, gives the same tokens twice and in a batch (a long or thin one batched
    with a short one), leaves the input unmodified, and does not depend on the memory layout of the
    values (the same values in another layout give the same tokens, and are not rejected in one
    layout while tokenized in another)."""
    __tracebackhide__ = True
    run = kit_run(modality)
    check = "check_edge_inputs"
    known = reported(modality)
    accepted: list[_inputs.KitInput] = []
    for index, ki in enumerate(run.inputs):
        try:
            problem = _edge_problem(modality, run, index)
        except SkipExample:
            continue
        if problem is not None and (problem.rule in (None, check) or problem.rule not in known):
            raise _fail_on(ki, problem, rule=check, check=check, modality=modality) from problem.__cause__
        if problem is None and run.outcomes[index].encoding is not None:
            accepted.append(ki)
    for batch in _edge_batches(accepted):
        try:
            problem = _batch_problem(modality, [ki.sample for ki in batch])
        except SkipExample:
            continue
        if problem is not None:
            problem.rule = problem.rule or "check_batch_equals_singles"
            if problem.rule in known:
                continue
            raise finish(
                problem,
                [ki.sample for ki in batch],
                check=check,
                modality=modality,
                settings=current(),
                label="a batch of " + " and ".join(f"'{ki.label}'" for ki in batch),
            ) from problem.__cause__


#: Families of the kit's inputs that are large (long, or thin and long): each is batched with a
#: short input, never two large ones together.
_LARGE = ("long", "thin")


def _edge_batches(accepted: list[_inputs.KitInput]) -> list[list[_inputs.KitInput]]:
    """Batches of the kit's accepted inputs that must equal their singles: the short ones in pairs,
    and every large one (long, thin and long) together with a short one, in turn before and after
    it -- a batch path that treats a long item differently shows only in a batch that holds one."""
    accepted = [ki for ki in accepted if ki.family not in _inputs.ENCODED_ONCE and not _inputs.compared_only(ki)]
    short = [ki for ki in accepted if ki.family not in _LARGE]
    large = [ki for ki in accepted if ki.family in _LARGE]
    batches = [[a, b] for a, b in zip(short[::2], short[1::2])]
    for i, big in enumerate(large):
        if not short:
            batches.append([big])
            continue
        partner = short[i % len(short)]
        batches.append([partner, big] if i % 2 == 0 else [big, partner])
    for group in _crowds(short, large):
        batches.append(group)
    return batches


#: Crowded batches: this many items and more (a batch path that switches on the item count -- a
#: shared padded layout from four items on -- shows only there).
CROWD_SIZES = (4, 6)


def _crowds(short: list[_inputs.KitInput], large: list[_inputs.KitInput]) -> list[list[_inputs.KitInput]]:
    """For each size in CROWD_SIZES, a batch of that many short accepted inputs of one rank and of
    different sizes (the smallest such, the largest of them first: a path that pads to the longest
    item shows as well as with big ones, at a fraction of the cost), and once, the first large
    input followed by short ones."""
    out: list[list[_inputs.KitInput]] = []

    def distinct(pool: list[_inputs.KitInput], rank: int | None) -> list[_inputs.KitInput]:
        seen: set[tuple[int, ...]] = set()
        found = []
        for ki in pool:
            shape = getattr(ki.sample.data, "shape", (len(ki.sample.data),) if isinstance(ki.sample.data, str) else ())
            if ki.rank == rank and shape not in seen:
                seen.add(shape)
                found.append(ki)
        return found

    ranks = list(dict.fromkeys(ki.rank for ki in short))
    if not ranks:
        return out
    pool = sorted(distinct(short, ranks[0]), key=lambda ki: _inputs._size(ki.sample.data))
    pool = [ki for ki in pool if _inputs._size(ki.sample.data) > 1] or pool
    for size in CROWD_SIZES:
        if len(pool) >= 2:
            out.append(pool[:size][::-1])
    big = next((ki for ki in large if ki.rank == ranks[0]), None)
    if big is not None and pool:
        out.append([big, *pool[: CROWD_SIZES[0] - 1]])
    return out


def _edge_problem(modality: Modality, run: KitRun, index: int) -> CheckFailure | None:
    """What is wrong with what ``encode`` made of the kit's input number ``index`` (None: nothing)."""
    ki, out = run.inputs[index], run.outcomes[index]
    if out.error is not None:
        if out.rejected:
            if not str(out.error).strip():
                return CheckFailure("the InputError says nothing")
            ref = run.outcomes[ki.same_as] if ki.same_as is not None else None
            if ref is not None and ref.encoding is not None:
                return CheckFailure(
                    f"rejects values it tokenizes in another memory layout ({type(out.error).__name__}: "
                    f"{out.error}); convert the layout instead",
                    rule="check_determinism",
                )
            return None
        failure = CheckFailure(
            f"encode raised {type(out.error).__name__} instead of InputError: {out.error}",
            author_traceback=author_traceback(out.error),
        )
        failure.__cause__ = out.error
        return failure
    if out.modified:
        return CheckFailure("encode modified its input in place", rule="check_determinism")
    broken = _unreported(out.encoding, ki.sample, modality)
    if broken:
        return CheckFailure(broken[1], rule=broken[0])
    if ki.family in _inputs.ENCODED_ONCE:  # many tiny inputs: the rules, not the behaviours
        return None
    if _inputs.compared_only(ki):  # a view: its tokens must be those of the values it holds
        ref = run.outcomes[ki.same_as]  # type: ignore[index]
        if ref.encoding is None:
            return CheckFailure(
                f"gives tokens, but the same values in another layout were rejected: {ref.error}",
                rule="check_determinism",
            )
        diff = _encoding_difference(ref.encoding, out.encoding)
        return (
            CheckFailure(
                f"the same values in another memory layout give other tokens: {diff}", rule="check_determinism"
            )
            if diff
            else None
        )
    again = _outcome(modality, ki.sample, quiet=True)
    if again.encoding is None:
        return CheckFailure(
            f"tokens the first time, {type(again.error).__name__} the second: {again.error}", rule="check_determinism"
        )
    diff = _encoding_difference(out.encoding, again.encoding)
    if diff:
        return CheckFailure(f"tokenizing the same input twice differs: {diff}", rule="check_determinism")
    if ki.same_as is not None:
        ref = run.outcomes[ki.same_as]
        if ref.encoding is None:
            return CheckFailure(
                f"gives tokens, but the same values in another layout were rejected: {ref.error}",
                rule="check_determinism",
            )
        diff = _encoding_difference(ref.encoding, out.encoding)
        if diff:
            return CheckFailure(
                f"the same values in another memory layout give other tokens: {diff}", rule="check_determinism"
            )
    return None


def _variant(data: Any) -> Any:
    """Different data of the very same shape and dtype (None when none can be made)."""
    if isinstance(data, str):
        for candidate in (data[::-1], data[1:] + data[:1], data.swapcase()):
            if candidate != data:
                return candidate
        return None
    if not isinstance(data, np.ndarray) or data.size == 0 or data.dtype.kind not in "biuf":
        return None
    candidates = [np.roll(data, max(1, data.shape[0] // 2), axis=0), np.flip(data, axis=0)]
    if data.dtype.kind == "b":
        candidates.append(~data)
    elif data.dtype.kind == "f":
        candidates += [data * data.dtype.type(0.5), data * data.dtype.type(-1)]
    else:
        candidates += [data // 2, data ^ 1]
    for other in candidates:
        other = np.ascontiguousarray(other, dtype=data.dtype)
        if other.tobytes() != data.tobytes():
            return other
    return None


@contract_check(since=2)
@_kit
def check_fresh_instance(modality: Modality, *, max_examples: int | None = None) -> None:
    """The first call of a fresh instance gives the same tokens as a long-used one, also for
    different data of the same shape: no state, and no cache keyed on shape, length or units
    instead of the data itself."""
    __tracebackhide__ = True
    _clone(modality)  # skipped at once when the modality cannot be rebuilt from its config

    def same(first: Any, second: Any, sample: Sample, what: str) -> None:
        __tracebackhide__ = True
        diff = _encoding_difference(first, second)
        if diff:
            again = _encoding_difference(_encode(modality, sample), _encode(modality, sample))
            if again:  # not about fresh instances: the modality is not deterministic at all
                raise CheckFailure(f"tokenizing the same input twice differs: {again}", rule="check_determinism")
            raise CheckFailure(f"{what}: {diff}", rule="check_fresh_instance")

    def body(sample: Sample) -> None:
        __tracebackhide__ = True
        fresh_first = _encode(_clone(modality), sample)
        _require_rules(fresh_first, sample, modality)
        varied = _variant(sample.data)
        if varied is None:
            same(
                fresh_first,
                _encode(modality, sample),
                sample,
                "the first call of a fresh instance differs from later calls",
            )
            return
        other = Sample(varied, dict(sample.units), sample.source)
        try:
            warm_other = _raw_encode(modality, other)
        except InputError:
            warm_other = None
        same(
            fresh_first,
            _encode(modality, sample),
            sample,
            "the first call of a fresh instance and a call after other data of the same shape differ",
        )
        if warm_other is not None and is_encoding(warm_other):
            _require_rules(warm_other, other, modality)
            same(
                _encode(_clone(modality), other),
                warm_other,
                other,
                "different data of the same shape: a fresh instance and a long-used one differ",
            )

    _twins_on_a_fresh_instance(modality)
    _for_all(_samples(modality), body, "check_fresh_instance", modality, max_examples)


def _twin_pairs(run: KitRun) -> list[tuple[int, int]]:
    """(first, second) indices of the kit's twin inputs that both gave tokens, in the order this
    process first tokenized them."""
    return [
        (ki.twin_of, index)
        for index, ki in enumerate(run.inputs)
        if ki.twin_of is not None
        and run.outcomes[index].encoding is not None
        and run.outcomes[ki.twin_of].encoding is not None
    ]


def _twins_on_a_fresh_instance(modality: Modality) -> None:
    """A fresh instance tokenizes each pair of the kit's twin inputs in the other order than the
    long-used instance did: a cache keyed on a summary of the data (a thumbnail, a mean) gives the
    second of a pair the first's tokens, in one order or the other. A pair of range siblings is also
    given to a fresh instance in the kit's order, as its very first calls: what an instance learns
    from its first big input (a bit depth) shows only when that input is the 12-bit one."""
    __tracebackhide__ = True
    run = kit_run(modality)
    orders: list[tuple[int, int, tuple[int, int], str]] = []
    for first, second in _twin_pairs(run):
        orders.append((first, second, (second, first), "in the other order"))
        if run.inputs[first].label.split(": ", 1)[-1].startswith(_inputs.RANGE_LABEL):
            # the kit's order too, as a new instance's very first calls
            orders.append((first, second, (first, second), "in the kit's order, as its first calls,"))
    for first, second, order, how in orders:
        fresh = _clone(modality)
        for index in order:
            ki = run.inputs[index]
            try:
                enc: Any = _raw_encode(fresh, ki.sample)
            except Exception as exc:
                enc = exc
            mine = run.outcomes[index].encoding
            diff = (
                f"a fresh instance raised {type(enc).__name__}: {enc}"
                if isinstance(enc, BaseException)
                else _encoding_difference(enc, mine)
            )
            if not diff:
                continue
            again = _outcome(modality, ki.sample, quiet=True)
            if again.encoding is None or _encoding_difference(again.encoding, mine):
                continue  # not deterministic at all: check_determinism's finding
            raise _fail_on(
                ki,
                f"'{run.inputs[first].label}' and '{run.inputs[second].label}' (alike in what a cache "
                f"might key on -- shape, dtype, mean, a side -- other in detail) tokenized {how} by a "
                f"fresh instance: "
                f"'{ki.label}' differs: {diff}",
                rule="check_fresh_instance",
                check="check_fresh_instance",
                modality=modality,
            )


#: Seconds a fresh process may take to import the plugin and tokenize the reference inputs.
FRESH_PROCESS_TIMEOUT = 180.0


def _class_path(modality: Modality) -> str | None:
    cls = type(modality)
    if cls.__module__ == "__main__" or "<locals>" in cls.__qualname__:
        return None
    return f"{cls.__module__}:{cls.__qualname__}"


def _reference_inputs(modality: Modality, run: KitRun, max_examples: int | None) -> list[Sample]:
    """Varied inputs for the fresh-process comparison: pairs of different data of the same shape
    (the richest examples first, so the first call of the new process is never a trivial input),
    then the units' ladders (lowest rung first, before any other input at a high unit value), a few
    of the kit's own inputs that the modality accepts, and every pair of its twin inputs in the
    other order than this process first met them."""
    count = max(4, min(8, (max_examples or current().max_examples) // 3))
    examples = _inputs.draw_examples(modality, _samples(modality), 3 * count, stream_key("fresh-process", modality))
    examples.sort(key=lambda s: (not _inputs._varied(s.data), -_inputs._size(s.data)))
    out: list[Sample] = []
    for sample in examples[:count]:
        out.append(sample)
        varied = _variant(sample.data)
        if varied is not None:
            out.append(Sample(varied, dict(sample.units), sample.source))
    for ki, outcome in zip(run.inputs, run.outcomes):  # each unit's ladder, lowest rung first
        if ki.family == _inputs.LADDER and outcome.encoding is not None:
            out.append(ki.sample)
    for ki, outcome in zip(run.inputs, run.outcomes):
        if outcome.encoding is not None and ki.family in ("content", "units", "dtype") and len(out) < 3 * count:
            out.append(ki.sample)
    for first, second in _twin_pairs(run):  # the other order than this process's first
        out += [run.inputs[second].sample, run.inputs[first].sample]
    return out


def _thread_limits() -> dict[str, int]:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency of v22sdk
        return {}
    limits: dict[str, int] = {}
    for pool in threadpool_info():
        limits[pool["user_api"]] = min(limits.get(pool["user_api"], 1 << 30), int(pool["num_threads"]))
    return limits


@contract_check(since=2)
@_kit
def check_fresh_process(modality: Modality, *, max_examples: int | None = None) -> None:
    """Tokens computed in a brand-new Python process (its very first calls) equal the tokens of this
    long-running one, computed in the opposite order: catches output that differs on the first call
    of a process and caches keyed on metadata (shape, length, units) instead of the data."""
    __tracebackhide__ = True
    if not current().fresh_process:
        raise CheckSkipped("the fresh-process comparison is switched off for this run")
    path = _class_path(modality)
    if path is None:
        raise CheckSkipped(
            f"{type(modality).__qualname__} is not importable from another process "
            "(defined in __main__ or inside a function)"
        )
    try:
        config = json.loads(json.dumps(modality.config()))
    except (TypeError, ValueError) as exc:
        raise CheckSkipped(f"config() is not JSON ({exc}); see check_config_roundtrip") from None
    run = kit_run(modality)
    inputs = _reference_inputs(modality, run, max_examples)
    from ._worker import read_outputs, write_inputs

    with tempfile.TemporaryDirectory(prefix="v22sdk-kit-") as tmp:
        job, result = Path(tmp) / "job.npz", Path(tmp) / "result.npz"
        write_inputs(job, inputs, class_path=path, config=config, thread_limits=_thread_limits())
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "v22sdk.testing._worker", str(job), str(result)],
                capture_output=True,
                text=True,
                env=env,
                timeout=FRESH_PROCESS_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            raise CheckSkipped(f"the fresh process did not finish within {FRESH_PROCESS_TIMEOUT:g} s") from None
        if proc.returncode == 3:
            raise CheckSkipped(f"a fresh process cannot build the modality: {proc.stderr.strip().splitlines()[-1:]}")
        if proc.returncode != 0 or not result.is_file():
            tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
            raise CheckFailure(
                f"the fresh process that tokenizes the reference inputs failed (exit code {proc.returncode}):\n{tail}",
                rule="check_fresh_process",
                check="check_fresh_process",
            )
        outputs = read_outputs(result)
    settings = current()
    for index in reversed(range(len(inputs))):
        sample, theirs = inputs[index], outputs[index]
        try:
            mine: Any = _raw_encode(modality, sample)
        except InputError as exc:
            mine = exc
        except Exception as exc:
            failure = CheckFailure(
                f"encode raised {type(exc).__name__} on a valid input: {exc}",
                rule="check_fresh_process",
                author_traceback=author_traceback(exc),
            )
            raise finish(failure, sample, check="check_fresh_process", modality=modality, settings=settings) from exc
        if isinstance(theirs, str) or isinstance(mine, InputError):
            if isinstance(theirs, str) and isinstance(mine, InputError):
                continue
            what = f"the fresh process raised {theirs}" if isinstance(theirs, str) else "the fresh process gave tokens"
            here = (
                f"this process raised {type(mine).__name__}: {mine}"
                if isinstance(mine, InputError)
                else "this process gave tokens"
            )
            raise finish(
                CheckFailure(f"{what}; {here}", rule="check_fresh_process"),
                sample,
                check="check_fresh_process",
                modality=modality,
                settings=settings,
            )
        try:
            broken = _unreported(mine, sample, modality)
        except SkipExample:
            continue
        if broken:
            raise finish(
                CheckFailure(broken[1], rule=broken[0]),
                sample,
                check="check_fresh_process",
                modality=modality,
                settings=settings,
            )
        diff = _encoding_difference(theirs, mine)
        if diff:
            again = _encoding_difference(mine, _raw_encode(modality, sample))
            if again:  # not about processes: the modality is not deterministic at all
                if "check_determinism" in reported(modality):
                    continue
                raise finish(
                    CheckFailure(f"tokenizing the same input twice differs: {again}", rule="check_determinism"),
                    sample,
                    check="check_fresh_process",
                    modality=modality,
                    settings=settings,
                )
            position = f"call {index + 1} of {len(inputs)} in the fresh process"
            raise finish(
                CheckFailure(
                    f"a fresh process ({position}) and this one give different tokens: {diff}",
                    rule="check_fresh_process",
                ),
                sample,
                check="check_fresh_process",
                modality=modality,
                settings=settings,
            )


#: Words a file name may carry that look like metadata; a plugin's ``load`` must not read them.
MISLEADING_WORDS = (
    "mono",
    "stereo",
    "gray",
    "rgb",
    "rgba",
    "bgr",
    "16bit",
    "8bit",
    "float",
    "int16",
    "rotated",
    "flipped",
    "le",
    "be",
    "utf16",
    "latin1",
    "big5",
    "x2",
    "small",
    "large",
)


def _misleading_names(modality: Modality, sample: Sample, suffix: str) -> list[str]:
    """File names that carry plausible but wrong metadata (other unit values, format words)."""
    names = [f"IMG_0001{suffix.upper()}", f"a name with spaces é 中{suffix}", f"no_extension_at_all{suffix}"]
    for unit in modality.input_spec.units:
        value = float(sample.units.get(unit.name, unit.minimum))
        others = [
            v
            for v in (unit.minimum, 8000.0, 16000.0, 44100.0, 48000.0, 1.0, 0.001, 100.0, unit.maximum)
            if np.isfinite(v) and unit.minimum <= v <= unit.maximum and v != value
        ]
        for other in others[:3]:
            text = f"{other:g}"
            names += [
                f"{unit.name}_{text}{unit.symbol.lower()}{suffix}",
                f"{text}{suffix}",
                f"clip_{text}_{unit.symbol}{suffix}",
                f"{unit.name}={text}{suffix}",
            ]
    names += [f"{word}_{i}{suffix}" for i, word in enumerate(MISLEADING_WORDS)]
    return names


def _same_sample(a: Sample, b: Sample) -> str | None:
    if not _data_equal(a.data, b.data):
        return f"data {describe(a.data, 120)} one time and {describe(b.data, 120)} the other"
    if dict(a.units) != dict(b.units):
        return f"units {a.units} one time and {b.units} the other"
    return None


@contract_check(since=2)
@_kit
def check_files(modality: Modality, *, max_examples: int | None = None) -> None:
    """``load`` and ``tokenize_file``: units come from a file's content, never from its name (the
    same bytes under misleading names load identically, and ``load`` reads back the units ``save``
    wrote); ``save(sample, path)`` writes exactly ``path`` (also a name whose extension differs in
    case, or has none), and a file it wrote from a valid input -- the author's samples and one of the
    kit's inputs in every accepted dtype -- loads and tokenizes; ``tokenize_file(p)`` equals
    ``tokenize(load(p))`` with ``source`` = the path, and its tokens keep every rule; a missing file,
    a folder and damaged copies (empty, truncated, junk) raise InputError or give valid tokens --
    never another exception. Needs ``save()`` for the valid files; without it, only bad files."""
    __tracebackhide__ = True
    check = "check_files"
    reads_files = type(modality).load is not Modality.load
    if not reads_files and not modality.extensions:
        return  # the modality reads no files: nothing to check
    suffix = modality.extensions[0] if modality.extensions else ".bin"
    settings = current()

    def load_rejects(path: Path, what: str, must_reject: bool) -> None:
        __tracebackhide__ = True
        try:
            tokens = modality.tokenize_file(path)
        except InputError as exc:
            if not str(exc).strip():
                raise CheckFailure(f"{what}: the InputError says nothing", rule=check) from None
            return
        except ContractViolation as exc:
            try:
                raise _violation(exc, f"tokenize_file of {what}", modality) from None
            except SkipExample:
                return
        except Exception as exc:
            raise CheckFailure(
                f"{what}: tokenize_file raised {type(exc).__name__} instead of InputError: {exc}",
                rule=check,
                author_traceback=author_traceback(exc),
            ) from exc
        if must_reject:
            raise CheckFailure(
                f"{what}: tokenize_file returned {len(tokens)} tokens instead of raising InputError", rule=check
            )

    with tempfile.TemporaryDirectory(prefix="v22sdk-kit-files-") as tmp:
        root = Path(tmp)
        load_rejects(root / f"missing{suffix}", "a missing file", True)
        (root / f"folder{suffix}").mkdir()
        load_rejects(root / f"folder{suffix}", "a folder", True)
        (root / f"empty{suffix}").write_bytes(b"")
        load_rejects(root / f"empty{suffix}", "an empty file", False)
        (root / f"junk{suffix}").write_bytes(bytes(range(256)) * 4)
        load_rejects(root / f"junk{suffix}", "a file of junk bytes", False)
        try:
            modality.save(kit_run(modality).bases[0], root / f"probe{suffix}")
        except NotImplementedError:
            return  # no save(): only the bad files above can be checked
        except Exception:
            pass  # that sample may not fit the format: the property below tries others

        held: list[dict[str, Any]] = []  # units of samples save wrote

        def body(sample: Sample) -> None:
            __tracebackhide__ = True
            folder = Path(tempfile.mkdtemp(dir=root))
            try:
                if _file_body(modality, sample, folder, suffix, check):
                    held.append(dict(sample.units))
            finally:
                shutil.rmtree(folder, ignore_errors=True)

        count = max(3, (max_examples or settings.max_examples) // 4)
        _for_all(_samples(modality), body, check, modality, count)
        _saved_in_every_dtype(modality, root, suffix, check, held)


def _load_saved(modality: Modality, path: Path, check: str, *, refusable: bool = False) -> Sample | None:
    """``load`` of a file ``save`` wrote, which must carry the declared units and no other (a crash,
    or with ``refusable`` False an InputError, is a failure; with it, an InputError gives None)."""
    __tracebackhide__ = True
    try:
        loaded = modality.load(path)
    except InputError:
        if refusable:
            return None
        raise
    except Exception as exc:
        raise CheckFailure(
            f"load() raised {type(exc).__name__} on a file save() wrote ({path.name}): {exc}",
            rule=check,
            author_traceback=author_traceback(exc),
        ) from exc
    if not isinstance(loaded, Sample):
        raise CheckFailure(f"load() must return a Sample, got {type(loaded).__name__}", rule=check)
    missing = [u.name for u in modality.input_spec.units if u.name not in loaded.units]
    if missing:
        raise CheckFailure(
            f"load() of {path.name} gave no {', '.join(missing)}: a file must carry its units "
            "(or load raises UnitsError)",
            rule=check,
        )
    declared = {u.name for u in modality.input_spec.units}
    unknown = sorted(str(k) for k in loaded.units if k not in declared)
    if unknown:
        raise CheckFailure(
            f"load() of {path.name} gave units the input spec does not declare ({', '.join(unknown)}): "
            "tokenize refuses an unknown unit, so no file could be tokenized",
            rule=check,
        )
    return loaded


def _load_or_fail(modality: Modality, path: Path, check: str) -> Sample:
    """:func:`_load_saved`, an InputError a failure too."""
    __tracebackhide__ = True
    try:
        loaded = _load_saved(modality, path, check)
    except InputError as exc:
        raise CheckFailure(
            f"load() raised {type(exc).__name__} on a file save() wrote ({path.name}): {exc}",
            rule=check,
            author_traceback=author_traceback(exc),
        ) from exc
    assert loaded is not None
    return loaded


def _save(modality: Modality, sample: Sample, path: Path, check: str) -> bool:
    """``save(sample, path)``: False for an InputError (a sample the format cannot hold), a failure for
    another exception and for a save that returns without writing ``path`` itself (a name with an
    extension added, say: save writes exactly the path it is given, whatever its name)."""
    __tracebackhide__ = True
    before = {p.name for p in path.parent.iterdir()}
    try:
        modality.save(sample, path)
    except InputError:
        return False
    except Exception as exc:
        raise CheckFailure(
            f"save() raised {type(exc).__name__} (raise InputError for a sample the format cannot hold): {exc}",
            rule=check,
            author_traceback=author_traceback(exc),
        ) from exc
    if not path.is_file():
        written = sorted(p.name for p in path.parent.iterdir() if p.name not in before)
        raise CheckFailure(
            f"save(sample, {path.name!r}) returned without writing {path.name!r}"
            + (f" (it wrote {', '.join(map(repr, written))})" if written else " (it wrote no file)")
            + ": save writes exactly the path it is given, whatever its name, so that load(path) reads it",
            rule=check,
        )
    return True


def _units_changed(sample: Sample, loaded: Sample) -> bool:
    return any(
        not np.isclose(float(loaded.units.get(k, np.nan)), float(v), rtol=1e-9, atol=0.0)
        for k, v in sample.units.items()
    )


def _saved_file(modality: Modality, sample: Sample, first: Path, check: str) -> Sample | None:
    """``save(sample, first)``, then what a file save wrote must do: load with the units save was
    given (and no other), set ``source`` to the path, tokenize (``tokenize_file`` refusing a file save
    wrote from a valid input is a failure), with ``tokenize_file(p)`` equal to ``tokenize(load(p))``
    and every rule kept. What ``load`` read (None when save refused the sample)."""
    __tracebackhide__ = True
    if not _save(modality, sample, first, check):
        return None  # the format cannot hold this sample
    reference = _load_or_fail(modality, first, check)
    if _units_changed(sample, reference):
        raise CheckFailure(
            f"save() wrote units {dict(sample.units)} but load() read {dict(reference.units)} "
            "(a file keeps its units; save raises InputError for units it cannot hold)",
            rule=check,
        )
    if reference.source is not None and reference.source != str(first):
        raise CheckFailure(f"load() set source={reference.source!r}, expected the path {str(first)!r}", rule=check)
    try:
        tokens = modality.tokenize_file(first)
        direct = modality.tokenize(_load_or_fail(modality, first, check))
    except ContractViolation as exc:
        raise _violation(exc, f"tokenize_file({first.name})", modality) from None
    except InputError as exc:
        try:
            _raw_encode(modality, sample)
        except Exception:
            return None  # the input itself is refused: the rule checks report it
        raise CheckFailure(
            f"tokenize_file refused {first.name}, a file save() wrote from a valid input that tokenize takes: "
            f"{exc} (save raises InputError for a sample its format cannot hold; a file it wrote must load "
            "and tokenize)",
            rule=check,
        ) from None
    except Exception as exc:
        raise CheckFailure(
            f"tokenize_file raised {type(exc).__name__} on a file save() wrote: {exc}",
            rule=check,
            author_traceback=author_traceback(exc),
        ) from exc
    if tokens != direct:
        raise CheckFailure("tokenize_file(path) differs from tokenize(load(path))", rule=check)
    if tokens.source != str(first):
        raise CheckFailure(f"tokenize_file(path) has source {tokens.source!r}, expected {str(first)!r}", rule=check)
    _require_rules(_encode(modality, reference), reference, modality)
    return reference


#: Extensions of other modalities' files (and of none in particular) that a save may be given.
FOREIGN_SUFFIXES = (".wav", ".png", ".txt", ".img", ".bin")


def _foreign_names(modality: Modality, sample: Sample, suffix: str) -> list[tuple[str, str]]:
    """(stem, extension) pairs whose extension is not one the modality declares, the stems carrying
    misleading metadata (another unit value, a format word): ``44100.wav`` for an image."""
    declared = {e.lower() for e in modality.extensions} | {suffix.lower()}
    stems = [Path(n).stem for n in _misleading_names(modality, sample, "")[3:7]] or ["44100"]
    others = [e for e in FOREIGN_SUFFIXES if e not in declared]
    return [(stems[i % len(stems)], e) for i, e in enumerate(others[:3])]


def _saved_under_other_names(modality: Modality, sample: Sample, folder: Path, suffix: str, check: str) -> None:
    """The sample saved again under a name whose extension differs in case only, under one with no
    extension, and under names with another format's extension (``44100.wav`` for an image, ``.img``,
    ``.txt``): save writes exactly that path (never the name with an extension added) or raises
    InputError -- never another exception -- and what it wrote is a file load reads, with the units
    save was given, that tokenizes. ``load`` may refuse a name without the declared extension (a
    plugin that tells its formats apart by extension): the same bytes under the declared extension
    must then load so."""
    __tracebackhide__ = True
    names = ([f"other-name{suffix.upper()}"] if suffix.upper() != suffix else []) + ["other-name"]
    names += [f"{stem}{other}" for stem, other in _foreign_names(modality, sample, suffix)]
    for name in names:
        path = folder / name
        if not _save(modality, sample, path, check):
            continue  # a name this plugin does not write
        loaded = _load_saved(modality, path, check, refusable=Path(name).suffix.lower() != suffix.lower())
        if loaded is None:  # a name without an extension that load does not take: its bytes
            copy = folder / f"other-name-copy{suffix}"
            copy.write_bytes(path.read_bytes())
            loaded = _load_or_fail(modality, copy, check)
        if _units_changed(sample, loaded):
            raise CheckFailure(
                f"save() under {name!r} wrote units {dict(sample.units)} but load() read {dict(loaded.units)}",
                rule=check,
            )
        try:
            modality.tokenize(loaded)
        except ContractViolation as exc:
            raise _violation(exc, f"tokenize(load({name!r}))", modality) from None
        except InputError as exc:
            raise CheckFailure(
                f"the file save() wrote under {name!r} (a valid input, saved under {'input' + suffix!r} too) "
                f"loads but does not tokenize: {exc}",
                rule=check,
            ) from None


def _saved_in_every_dtype(modality: Modality, root: Path, suffix: str, check: str, held: list[dict[str, Any]]) -> None:
    """One of the kit's inputs in every dtype the modality tokenizes (its dtype extremes and twins,
    in order; the next where save refuses one) saved, loaded and tokenized like the author's samples
    (:func:`_saved_file`): the author's strategy may draw a few dtypes only, and a save that writes an
    int32 signal in a format load refuses is seen only on an int32 sample. Each is tried with its own
    units and, where save refuses it, with the units of the first author's sample that save wrote
    (``held``: a format may hold a whole number of samples per second only, say)."""
    __tracebackhide__ = True
    run = kit_run(modality)
    done: set[str] = set()
    tries: dict[str, int] = collections.Counter()
    for ki, out in zip(run.inputs, run.outcomes):
        data = ki.sample.data
        if ki.family not in ("dtype", "twin") or out.encoding is None or not isinstance(data, np.ndarray):
            continue
        name = data.dtype.name
        if name in done or not data.dtype.isnative or tries[name] >= 3:
            continue
        tries[name] += 1
        settings = [dict(ki.sample.units)] + [u for u in held[:1] if u != dict(ki.sample.units)]
        for units in settings:
            sample = Sample(ki.sample.data, units, ki.sample.source)
            folder = Path(tempfile.mkdtemp(dir=root))
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    if _saved_file(modality, sample, folder / f"input{suffix}", check) is not None:
                        done.add(name)
                        break
            except CheckFailure as exc:
                label = ki.label if units == ki.sample.units else f"{ki.label}, at the units of a sample save() wrote"
                failure = finish(exc, sample, check=check, modality=modality, settings=current(), label=label)
                raise failure from exc.__cause__
            finally:
                shutil.rmtree(folder, ignore_errors=True)


def _file_body(modality: Modality, sample: Sample, folder: Path, suffix: str, check: str) -> bool:
    """What check_files asks of a file save wrote from ``sample`` (False: save refused the sample)."""
    __tracebackhide__ = True
    first = folder / f"input{suffix}"
    reference = _saved_file(modality, sample, first, check)
    if reference is None:
        return False

    def load(path: Path) -> Sample:
        __tracebackhide__ = True
        return _load_or_fail(modality, path, check)

    blob = first.read_bytes()
    for name in _misleading_names(modality, reference, suffix):
        path = folder / name
        path.write_bytes(blob)
        other = load(path)
        diff = _same_sample(reference, other)
        if diff:
            raise CheckFailure(
                f"the same file bytes load differently as {name!r} and as {first.name!r}: {diff} "
                "(units and data come from a file's content, never its name)",
                rule=check,
            )
    _saved_under_other_names(modality, sample, folder, suffix, check)
    for what, data in (
        ("the file truncated to half", blob[: len(blob) // 2]),
        ("the file truncated to its first 16 bytes", blob[:16]),
        ("the file without its last byte", blob[:-1]),
    ):
        path = folder / f"damaged{suffix}"
        path.write_bytes(data)
        try:
            modality.tokenize_file(path)
        except InputError:
            continue
        except ContractViolation as exc:
            raise _violation(exc, f"tokenize_file of {what}", modality) from None
        except Exception as exc:
            raise CheckFailure(
                f"{what}: tokenize_file raised {type(exc).__name__} instead of InputError: {exc}",
                rule=check,
                author_traceback=author_traceback(exc),
            ) from exc
    _rewritten_file(modality, sample, folder, suffix, first, load)
    return True


def _rewrites(data: Any) -> list[Any]:
    """Other data of the same shape and dtype, for a file written again (first the closest)."""
    found = [_variant(data)]
    if isinstance(data, str):
        found.append("".join(chr(ord("a") + (i % 26)) for i in range(max(len(data), 1))))
    elif isinstance(data, np.ndarray) and data.size and data.dtype.kind in "biuf":
        if data.dtype.kind == "b":
            found.append(np.arange(data.size).reshape(data.shape) % 2 == 0)
        else:
            half = 0.5 if data.dtype.kind == "f" else float(np.iinfo(data.dtype).max) / 2
            lo = 0.0 if data.dtype.kind == "u" else -half
            found.append(_inputs._ramp(data.shape, lo, half, data.dtype))
            found.append(_inputs._alternating(data.shape, lo, half, data.dtype))
    return [f for f in found if f is not None]


def _longer(data: Any) -> Any:
    if isinstance(data, str):
        return data + data[: max(1, len(data) // 2)]
    n = int(data.shape[0])
    return np.ascontiguousarray(_inputs._take(data, 0, n + max(1, n // 2)))


def _rewritten_file(modality: Modality, sample: Sample, folder: Path, suffix: str, first: Path, load: Any) -> None:
    """``first`` (loaded and tokenized already) written again with other content -- of the same
    size with its old modification time put back, then of another size -- loads and tokenizes as
    that content on the same instance; deleted, it raises InputError: a file is read every time,
    never a cache keyed on its path, size or time."""
    __tracebackhide__ = True
    check = "check_files"
    blob = first.read_bytes()
    found: Any = None
    found_same_size = False
    for k, data in enumerate(_rewrites(sample.data)):  # other content; of the same size if one saves so
        probe = folder / f"rewrite-probe-{k}{suffix}"
        try:
            modality.save(Sample(data, dict(sample.units), sample.source), probe)
        except Exception:
            continue
        saved = probe.read_bytes()
        if saved != blob and (found is None or len(saved) == len(blob)):
            found, found_same_size = data, len(saved) == len(blob)
            if found_same_size:
                break
    rewrites = (
        []
        if found is None
        else [
            ("other content of the same size" if found_same_size else "other content", found),
            ("other content of another size", _longer(found)),
        ]
    )
    for k, (what, data) in enumerate(rewrites):
        other = Sample(data, dict(sample.units), sample.source)
        fresh_path = folder / f"rewrite-{k}{suffix}"
        try:
            modality.save(other, fresh_path)
        except InputError:
            continue
        before = first.stat()
        modality.save(other, first)
        same_size = first.stat().st_size == before.st_size
        if same_size:  # a cache keyed on (path, size, time) must not see the change either
            os.utime(first, ns=(before.st_atime_ns, before.st_mtime_ns))
        expected = load(fresh_path)
        got = load(first)
        diff = _same_sample(expected, got)
        if diff is None:
            try:
                tokens = modality.tokenize_file(first)
                direct = modality.tokenize(Sample(expected.data, dict(expected.units), str(first)))
            except InputError:
                continue
            except ContractViolation as exc:
                raise _violation(exc, f"tokenize_file({first.name}) written again", modality) from None
            if tokens != direct:
                diff = "tokenize_file gives other tokens than the new content's"
        if diff:
            how = "of the same size and modification time" if same_size else "of another size"
            raise CheckFailure(
                f"{first.name} written again with {what} ({how}) on the same instance: {diff} "
                "(load reads the file every time; never cache by path, size or time)",
                rule=check,
            )
    if not first.exists():
        return
    first.unlink()
    for name, call in (("load", modality.load), ("tokenize_file", modality.tokenize_file)):
        try:
            call(first)
        except InputError as exc:
            if not str(exc).strip():
                raise CheckFailure(f"{name} of a deleted file: the InputError says nothing", rule=check) from None
            continue
        except Exception as exc:
            raise CheckFailure(
                f"{name} of a file deleted after it was read raised {type(exc).__name__} instead of InputError: {exc}",
                rule=check,
                author_traceback=author_traceback(exc),
            ) from exc
        raise CheckFailure(
            f"{name} of {first.name}, deleted after it was read, returned instead of raising InputError "
            "(a file is read every time, never cached by path)",
            rule=check,
        )


# -- quality (warning level) -----------------------------------------------------------------
def _quality(fn: Any) -> Any:
    """A quality check that cannot run (no sample inputs: the data checks' finding) is skipped."""

    @functools.wraps(fn)
    def check(modality: Modality, *, max_examples: int | None = None) -> None:
        __tracebackhide__ = True
        try:
            fn(modality, max_examples=max_examples)
        except CheckFailure as exc:
            if exc.rule == fn.__name__:
                raise
            raise CheckSkipped(f"cannot run: {str(exc).splitlines()[0]}") from None

    return check


def _author_outcomes(modality: Modality, purpose: str, count: int) -> list[tuple[Sample, Outcome]]:
    examples = _inputs.draw_examples(modality, _samples(modality), count, stream_key(purpose, modality))
    return [(s, _outcome(modality, s)) for s in examples]


@contract_check(since=2, level="warning")
@_kit
@_quality
def check_quality_embedding_spread(modality: Modality, *, max_examples: int | None = None) -> None:
    """(warning) Different inputs do not all map to nearly the same embedding: the smallest cosine
    between the mean embeddings of distinct inputs stays below 0.99."""
    __tracebackhide__ = True
    count = max(8, max_examples or current().max_examples)
    means: list[np.ndarray] = []
    seen: list[Any] = []  # the distinct inputs' data
    for sample, out in _author_outcomes(modality, "quality-spread", count):
        emb = matrix(out.encoding.emb) if out.encoding is not None and is_encoding(out.encoding) else None
        if emb is None or emb.size == 0 or not np.isfinite(emb).all():
            continue
        if any(_data_equal(sample.data, s) for s in seen):
            continue
        seen.append(sample.data)
        mean = emb.mean(axis=0)
        norm = float(np.linalg.norm(mean))
        if norm > 0:
            means.append(mean / norm)
    if len(means) < 3:
        return
    stack = np.stack(means)
    cos = stack @ stack.T
    smallest = float(cos.min())
    if smallest > 0.99:
        _warn(
            "check_quality_embedding_spread",
            f"embeddings collapse: all {len(means)} distinct inputs map within cosine {number(smallest)} of "
            "each other (a constant vector, or a projection that ignores the input?)",
        )


@contract_check(since=2, level="warning")
@_kit
@_quality
def check_quality_token_rate(modality: Modality, *, max_examples: int | None = None) -> None:
    """(warning) The number of tokens stays in proportion to the input: for a signal with a rate
    unit, tokens per second vary by at most 4× between inputs of 0.5 s or more that give 3 tokens or
    more, and never exceed the samples; for any input, tiling it r× gives at most 4·r× the tokens."""
    __tracebackhide__ = True
    run = kit_run(modality)
    problems = []
    rates = []
    count = max(8, (max_examples or current().max_examples) // 2)
    pairs = _author_outcomes(modality, "quality-rate", count)
    pairs += [(ki.sample, out) for ki, out in zip(run.inputs, run.outcomes) if ki.family in ("long", "units")]
    for sample, out in pairs:
        if out.encoding is None or not is_encoding(out.encoding):
            continue
        n = len(np.asarray(out.encoding.emb))
        duration = signal_duration(sample, modality)
        if duration is not None:
            size = max(np.asarray(sample.data).shape)
            if n > size:
                problems.append(f"{n} tokens for {size} samples ({describe(sample, 160)})")
            if duration >= 0.5 and n >= 3:  # a windowed modality gives one token for any short input
                rates.append((n / duration, sample))
    if rates:
        low, high = min(rates, key=lambda r: r[0]), max(rates, key=lambda r: r[0])
        if high[0] > 4 * low[0]:
            problems.append(
                f"tokens per second range from {number(low[0])} to {number(high[0])} "
                f"({describe(low[1], 100)} vs {describe(high[1], 100)})"
            )
    base_out = None
    for ki, out in zip(run.inputs, run.outcomes):
        if ki.family == "layout" and ki.same_as is None:
            base_out = out
        if (
            ki.family == "long"
            and dict(ki.sample.units) == dict(run.bases[0].units)  # a token-dense one has other units
            and out.encoding is not None
            and base_out is not None
            and base_out.encoding is not None
        ):
            base_n = len(np.asarray(base_out.encoding.emb))
            factor = _inputs._size(ki.sample.data) / max(1, _inputs._size(run.bases[0].data))
            long_n = len(np.asarray(out.encoding.emb))
            if long_n > 4 * factor * base_n + 4:
                problems.append(f"{ki.label}: {long_n} tokens for {factor:g}× the input that gave {base_n}")
    if problems:
        _warn("check_quality_token_rate", "token count out of proportion to the input: " + "; ".join(problems[:3]))


@contract_check(since=2, level="warning")
@_kit
@_quality
def check_quality_speed(modality: Modality, *, max_examples: int | None = None) -> None:
    """(warning) ``encode`` takes at most the time budget (default 2 s) per example in the median
    of the plugin's sample inputs, and at most 10× that on the kit's long input."""
    __tracebackhide__ = True
    settings = current()
    budget = settings.time_budget
    count = max(5, (max_examples or settings.max_examples) // 4)
    times = [out.seconds for _, out in _author_outcomes(modality, "quality-speed", count) if out.error is None]
    problems = []
    if times and float(np.median(times)) > budget:
        problems.append(f"the median sample input takes {np.median(times):.3g} s (budget {budget:g} s)")
    run = kit_run(modality)
    for ki, out in zip(run.inputs, run.outcomes):
        if ki.family == "long" and out.seconds > 10 * budget:
            problems.append(f"{ki.label} takes {out.seconds:.3g} s (budget {10 * budget:g} s)")
    if problems:
        _warn("check_quality_speed", "slow: " + "; ".join(problems))
