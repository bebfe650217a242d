"""The :class:`Modality` base class every tokenizer plugin subclasses.

A modality turns raw input (a string, a pixel array, a sound signal, a file) into a
:class:`~v22sdk.contract.TokenBatch`. Plugin authors write four things:

* class attributes: ``name``, ``extensions``, ``schema`` (an
  :class:`~v22sdk.schema.AttributeSchema` in one zone) and ``input_spec`` (an :class:`InputSpec`
  naming the physical units the input needs, e.g. ``sample_rate`` in Hz);
* ``load(path) -> Sample``: decode a file into raw data plus its units;
* ``encode(data, **units) -> Encoding``: compute ``emb``/``attr``/offsets (unvalidated arrays);
* ``sample_inputs()``: a hypothesis strategy of valid :class:`Sample` objects for the test kit.

Users call :meth:`Modality.tokenize` (units checked, contract validated, undeclared slots
checked) or :meth:`Modality.tokenize_file`. Configuration is declared as attrs fields on the
subclass, so ``config()`` / ``from_config()`` round-trip through JSON.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

from .contract import TokenBatch, TokenBuffer, validate_arrays
from .errors import InputError, UnitsError
from .schema import AttributeSchema


@attrs.frozen
class Unit:
    """A physical unit an input must carry: its name, symbol and accepted range."""

    name: str
    symbol: str
    minimum: float = 0.0
    maximum: float = float("inf")
    description: str = ""


@attrs.frozen
class InputSpec:
    """What a modality accepts.

    ``kind`` is ``"text"`` (a str) or ``"array"`` (a numpy array); for arrays ``dtypes`` lists
    the accepted numpy dtype kinds (``"u"``, ``"i"``, ``"f"``, ``"b"``) and ``ndim`` the accepted
    ranks. ``units`` are required keyword units of :meth:`Modality.tokenize`.
    """

    kind: str = "array"
    dtypes: tuple[str, ...] = ("u", "i", "f")
    ndim: tuple[int, ...] = (1,)
    units: tuple[Unit, ...] = ()
    description: str = ""

    @property
    def unit_names(self) -> tuple[str, ...]:
        return tuple(u.name for u in self.units)


@attrs.frozen(eq=False)
class Sample:
    """Raw input plus its physical units and the name of where it came from."""

    data: Any
    units: dict[str, float] = attrs.field(factory=dict)
    source: str | None = None


@attrs.frozen(eq=False)
class Encoding:
    """What :meth:`Modality.encode` returns: arrays not yet validated against the contract."""

    emb: np.ndarray
    attr: np.ndarray
    offsets: dict[str, np.ndarray] = attrs.field(factory=dict)


class Modality:
    """Base class of modality plugins. Subclasses are usually ``@attrs.frozen`` classes."""

    #: Registered name (``--modality NAME``); lower-case, unique across installed plugins.
    name: ClassVar[str] = ""
    #: File extensions (lower-case, with the dot) that ``load`` understands.
    extensions: ClassVar[tuple[str, ...]] = ()
    #: The slots this modality writes.
    schema: ClassVar[AttributeSchema]
    #: What ``tokenize`` accepts.
    input_spec: ClassVar[InputSpec] = InputSpec()
    #: Version of the plugin (shown by ``v22sdk plugins list``); defaults to its distribution's.
    version: ClassVar[str | None] = None
    #: Rank among the modalities that read one file extension, when nothing else decides which
    #: reads a file (see :meth:`sniff` and :meth:`v22sdk.plugins.Registry.resolve_path`). The
    #: built-in modalities declare 10; a plugin keeps the default 0 unless it means to take an
    #: extension from another plugin's files whose content does not settle it.
    priority: ClassVar[int] = 0
    #: Contract version the plugin was written against: the test kit runs only the checks that
    #: existed in that version (``None``: the newest), so new checks never break an old plugin.
    contract_version: ClassVar[int | None] = None
    #: Whether :meth:`encode` takes ``out`` (a :class:`~v22sdk.TokenBuffer`) and returns ``emb`` and
    #: ``attr`` as views of ``out.rows(N)``, written in place. ``tokenize(data, out=buffer)`` works
    #: for every modality; for the others the tokens are computed in fresh memory and copied in.
    writes_into_buffer: ClassVar[bool] = False
    #: Named slots of ``schema`` that measure how much of the signal a recording kept, where a lower
    #: value means less (a sound's source sample rate: below 16 kHz the band above half of it is
    #: gone). An engine records the lowest value each took over its training inputs and calls an
    #: input below that floor unfamiliar, naming the slot (:mod:`v22sdk.engine.fidelity`): a
    #: checkpoint that never heard telephone audio does not guess at it. Empty: no such slot.
    fidelity_slots: ClassVar[tuple[str, ...]] = ()
    #: Named slots of ``schema`` that say how an input was stored rather than what it holds, each
    #: with a ceiling: an engine reads ``min(value, ceiling)`` there, in training and in use
    #: (:mod:`v22sdk.engine.canonical`), so that a copy differing only in storage gets its
    #: original's answer. The audio plugin's ``{"aud.clip.channels": 0.0}``: it mixes every file
    #: to mono before the analysis, so a stereo copy's tokens differ from the mono file's only
    #: there. The token keeps the measured value. Empty: no such slot.
    storage_slots: ClassVar[Mapping[str, float]] = MappingProxyType({})

    # -- to implement ----------------------------------------------------------------------
    def load(self, path: str | os.PathLike[str]) -> Sample:
        """Decode the file at ``path`` into a :class:`Sample`; raise :class:`InputError` if unreadable."""
        raise InputError(str(path), f"the {self.name} modality cannot read files")

    @classmethod
    def sniff(cls, path: str | os.PathLike[str], head: bytes) -> bool | None:
        """Whether the file at ``path``, whose first bytes are ``head`` (up to 4 KiB), is one this
        modality reads: True (it is: a depth plugin and a 16-bit grey PNG), False (it is not: the
        depth plugin and a colour PNG), None (cannot tell; the default).

        Called only when several installed modalities read the file's extension, to choose
        between them; keep it cheap (a header check, no decoding, no heavy imports)."""
        return None

    if TYPE_CHECKING:
        # A subclass names its own units (``def encode(self, data, *, sample_rate: float)``), which a
        # method ``encode(self, data, **units)`` here would forbid under the override rule; typed as
        # a callable of any parameters, every plugin's encode type-checks, its return type included.
        encode: Callable[..., Encoding]
    else:

        def encode(self, data: Any, **units: float) -> Encoding:
            """Compute the tokens of ``data``. Raise :class:`InputError` (or a subclass) on bad input."""
            raise NotImplementedError

    def save(self, sample: Sample, path: str | os.PathLike[str]) -> None:
        """Write ``sample`` to ``path`` in a format :meth:`load` reads back (optional).

        The contract kit uses it to make test files (``check_files``: ``load`` reads units from a
        file's content, never from its name; ``tokenize_file`` equals ``tokenize(load(path))``;
        damaged files raise :class:`InputError`). Raise ``NotImplementedError`` (the default) when
        the plugin writes no files, and :class:`InputError` for a sample the format cannot hold.
        """
        raise NotImplementedError(f"the {self.name} modality does not write files")

    @classmethod
    def sample_inputs(cls) -> Any:
        """A hypothesis strategy of valid :class:`Sample` objects (used by the contract kit)."""
        raise NotImplementedError(f"{cls.__name__} does not provide sample_inputs()")

    def invalid_inputs(self, valid: Sample) -> list[tuple[str, Sample]]:
        """Bad inputs derived from a valid one, each labelled; the kit expects each to raise.

        The default covers wrong dtype, wrong rank, empty, non-finite values and missing units
        from :attr:`input_spec`. Override to add modality-specific cases (call ``super()``).
        """
        return default_invalid_inputs(self.input_spec, valid)

    # -- provided --------------------------------------------------------------------------
    def tokenize(self, data: Any, *, out: TokenBuffer | None = None, **units: float) -> TokenBatch:
        """Tokenize raw ``data`` (or a :class:`Sample`) into a validated :class:`TokenBatch`.

        ``out``: a :class:`~v22sdk.TokenBuffer` to put the tokens in. The batch is then a view of
        the buffer, valid until the buffer's next use; reusing one buffer for many inputs saves the
        page faults of fresh output memory (see :class:`~v22sdk.TokenBuffer`). The values are the
        same with or without it.
        """
        source = None
        if isinstance(data, Sample):
            _check_no_conflict(data.units, units, data.source)
            units = {**data.units, **units}
            source = data.source
            data = data.data
        units = self.check_units(units, source or f"<{self.name} input>")
        if out is not None and not isinstance(out, TokenBuffer):
            raise TypeError(f"out must be a v22sdk.TokenBuffer, got {type(out).__name__}")
        try:
            if out is not None and self.writes_into_buffer:
                enc = self.encode(data, out=out, **units)
            else:
                enc = self.encode(data, **units)
        except InputError as exc:
            raise _named(exc, source) from None
        emb, attr = enc.emb, enc.attr
        if out is not None and not (out.holds(emb) and out.holds(attr)):
            validate_arrays(emb, attr)  # a broken encoding is named as such, not as a copy error
            emb_out, attr_out = out.rows(emb.shape[0])
            emb_out[...] = emb
            attr_out[...] = attr
            emb, attr = emb_out, attr_out
        batch = TokenBatch(emb=emb, attr=attr, modality=self.name, offsets=enc.offsets, source=source)
        self.schema.check_declared(batch)
        return batch

    def tokenize_file(self, path: str | os.PathLike[str]) -> TokenBatch:
        """Load and tokenize one file.

        ``path`` must name a regular file (a folder, a FIFO or a device is an :class:`InputError`
        before ``load`` runs). What C libraries print to stderr while it is decoded is captured
        and folded into the one-line :class:`InputError` when decoding fails (see
        :mod:`v22sdk.decoding`), and dropped when it succeeds.
        """
        from .decoding import library_stderr, with_library_output
        from .inputs import check_regular_file

        check_regular_file(path)
        with library_stderr() as captured:
            try:
                return self.tokenize(self.load(path))
            except InputError as exc:
                raise with_library_output(exc, captured.text()) from None

    def tokenize_batch(self, items: Sequence[Any]) -> TokenBatch:
        """Tokenize several inputs into one batch; ``offsets["item"]`` says which input each token is from.

        The result equals the concatenation of the single results (the kit checks it). Override
        for speed, not for different values.
        """
        if not items:
            raise InputError(f"<{self.name} batch>", "a batch needs at least one input")
        singles = [self.tokenize(item) for item in items]
        batch = TokenBatch.concat(singles)
        item = np.repeat(np.arange(len(singles), dtype=np.int64), [len(b) for b in singles])
        return TokenBatch(
            emb=batch.emb, attr=batch.attr, modality=self.name, offsets={**batch.offsets, "item": item}, source=None
        )

    def check_units(self, units: Mapping[str, Any], source: str) -> dict[str, float]:
        """Return the units as floats; raise :class:`UnitsError` when one is missing, unknown or out of range."""
        known = {u.name: u for u in self.input_spec.units}
        unknown = sorted(set(units) - set(known))
        if unknown:
            raise UnitsError(
                source,
                f"unknown unit(s) {', '.join(unknown)} for the {self.name} modality"
                + (f"; it takes {', '.join(known)}" if known else "; it takes none"),
            )
        out: dict[str, float] = {}
        for unit in self.input_spec.units:
            if unit.name not in units or units[unit.name] is None:
                raise UnitsError(
                    source, f"missing {unit.name} ({unit.symbol}): the {self.name} modality needs it explicitly"
                )
            try:
                value = float(units[unit.name])
            except (TypeError, ValueError):
                raise UnitsError(source, f"{unit.name} must be a number, got {units[unit.name]!r}") from None
            if not (unit.minimum <= value <= unit.maximum) or not np.isfinite(value):
                raise UnitsError(
                    source,
                    f"{unit.name} = {value:g} {unit.symbol} is outside "
                    f"[{unit.minimum:g}, {unit.maximum:g}] {unit.symbol}",
                )
            out[unit.name] = value
        return out

    def config(self) -> dict[str, Any]:
        """JSON-ready configuration; ``type(self).from_config(m.config())`` rebuilds ``m``."""
        return attrs.asdict(self) if attrs.has(type(self)) else {}  # type: ignore[arg-type]  # has() narrows at run time

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Modality:
        return cls(**config)

    def accepts(self, path: str | os.PathLike[str]) -> bool:
        return Path(path).suffix.lower() in self.extensions


def _check_no_conflict(given: Mapping[str, Any], override: Mapping[str, Any], source: str | None) -> None:
    for key, value in override.items():
        if key in given and given[key] != value:
            raise UnitsError(source or "<input>", f"{key} given as {value} but the input says {given[key]}")


def default_invalid_inputs(spec: InputSpec, valid: Sample) -> list[tuple[str, Sample]]:
    """Wrong dtype, wrong rank, empty, non-finite and missing-unit variants of ``valid``."""
    units, src = valid.units, valid.source
    cases: list[tuple[str, Sample]] = []
    if spec.kind == "text":
        cases += [
            ("wrong_dtype", Sample(b"bytes, not text", units, src)),
            ("wrong_dtype", Sample(12345, units, src)),
            ("empty", Sample("", units, src)),
        ]
    else:
        data = np.asarray(valid.data)
        cases.append(("wrong_dtype", Sample(data.astype(np.complex64), units, src)))
        cases.append(("wrong_dtype", Sample(np.full(data.shape, "x", dtype=object), units, src)))
        too_deep = max(spec.ndim) + 1
        cases.append(("wrong_rank", Sample(data.reshape(data.shape + (1,) * (too_deep - data.ndim)), units, src)))
        if min(spec.ndim) > 0:
            cases.append(("wrong_rank", Sample(np.asarray(data.ravel()[0]), units, src)))
        cases.append(("empty", Sample(data[:0], units, src)))
        if "f" in spec.dtypes:
            for bad in (np.nan, np.inf):
                broken = data.astype(np.float32 if data.dtype.kind != "f" else data.dtype, copy=True)
                broken.flat[broken.size // 2] = bad
                cases.append(("non_finite", Sample(broken, units, src)))
    for unit in spec.units:
        cases.append(("missing_units", Sample(valid.data, {k: v for k, v in units.items() if k != unit.name}, src)))
    return cases


def _named(exc: InputError, source: str | None) -> InputError:
    """``exc`` naming ``source`` where encode only knew a placeholder (``<text>``, ``<vision array>``):
    an error in a file's content names the file."""
    placeholder = exc.source.startswith("<") and exc.source.endswith(">")
    if not source or not placeholder:
        return exc
    try:
        renamed = type(exc)(source, exc.problem)
    except TypeError:  # a plugin's subclass with another constructor: keep its type's family
        renamed = InputError(source, exc.problem)
    return renamed
