"""The 640-D token contract: the one thing every modality plugin and engine agrees on.

A token is 640 float32 values: ``emb`` (256, unit L2 norm) followed by ``attr`` (384 named
attribute slots, each finite and in [-1, 1]). A batch of N tokens is a :class:`TokenBatch`
holding two arrays, ``emb`` (N, 256) and ``attr`` (N, 384), the modality's name and per-token
source offsets. Constructing a :class:`TokenBatch` validates the contract; a batch that exists is
valid, so code behind this boundary never re-checks it.

This module imports numpy and attrs only (torch is imported lazily by the torch conversions).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from .errors import ContractViolation, InputError

EMB_DIM = 256
ATTR_DIM = 384
TOKEN_DIM = EMB_DIM + ATTR_DIM
#: Allowed deviation of ``‖emb‖`` from 1.
NORM_TOLERANCE = 1e-4

#: Per-token offset fields understood by the SDK, with their trailing shape and meaning.
OFFSET_FIELDS: dict[str, tuple[tuple[int, ...], str]] = {
    "char": ((), "index of the token's character in the NFC-normalised input text"),
    "time": ((2,), "start and end of the token's segment, in seconds from the input's start"),
    "box": ((4,), "patch box x0, y0, x1, y1 in pixels of the decoded image (x1, y1 exclusive)"),
    "item": ((), "index of the input a token came from, in a batch of several inputs"),
}

_FORMAT_VERSION = 1


def _frozen_view(array: np.ndarray) -> np.ndarray:
    """A read-only view of ``array``: the batch cannot be written through, and the caller's own
    array (which may be the same object, since valid float32 input is not copied) keeps its flags."""
    view: np.ndarray = array.view()
    view.flags.writeable = False
    return view


def _first_bad(mask: np.ndarray) -> int:
    """Row index of the first True in a (N, ...) boolean mask."""
    rows = mask.reshape(mask.shape[0], -1).any(axis=1)
    return int(np.argmax(rows))


_VALIDATE_ROWS = 1024  # rows per block of the fast check: 2.5 MB of tokens, about the L2 cache


def written_columns(attr: np.ndarray) -> np.ndarray:
    """(384,) bool: which columns of a float32 (N, 384) ``attr`` hold a value other than ±0,
    exactly ``(attr != 0).any(axis=0)``.

    For a C-contiguous array, one pass over memory: the bit patterns are OR-ed along the rows with
    64 rows side by side (long inner loops; a per-row reduction over a column slice costs twice as
    much on 2 GB of tokens), then the sign bit is dropped.
    """
    if not attr.flags.c_contiguous:
        return np.asarray((attr != 0).any(axis=0))
    acc = np.zeros(_FOLD * ATTR_DIM, dtype=np.uint32)
    _or_rows(attr.view(np.uint32), acc)
    return _fold(acc)


_FOLD = 64  # rows OR-ed side by side


def _or_rows(bits: np.ndarray, acc: np.ndarray) -> None:
    """OR the (n, 384) uint32 ``bits`` into the (64 * 384,) accumulator ``acc``."""
    m = bits.shape[0] - bits.shape[0] % _FOLD
    if m:
        acc |= np.bitwise_or.reduce(bits[:m].reshape(m // _FOLD, _FOLD * ATTR_DIM), axis=0)
    if m < bits.shape[0]:
        acc[:ATTR_DIM] |= np.bitwise_or.reduce(bits[m:], axis=0)


def _fold(acc: np.ndarray) -> np.ndarray:
    cols = np.bitwise_or.reduce(acc.reshape(_FOLD, ATTR_DIM), axis=0)
    return np.asarray((cols & np.uint32(0x7FFFFFFF)) != 0)


def validate_arrays(emb: Any, attr: Any) -> None:
    """Raise :class:`ContractViolation` unless ``emb``/``attr`` satisfy the token contract.

    Rules are checked in a fixed order (dtype, shape, finiteness, unit norm, attribute bounds);
    the error names the first broken rule, the first offending token and its value.
    """
    _validate(emb, attr)


def _validate(emb: Any, attr: Any) -> np.ndarray | None:
    """:func:`validate_arrays`; returns :func:`written_columns` of ``attr`` when the fast check
    computed it on the way (a batch of at least one block of rows), else None."""
    for label, array, width in (("emb", emb, EMB_DIM), ("attr", attr, ATTR_DIM)):
        if not isinstance(array, np.ndarray):
            raise ContractViolation("dtype", f"{label} must be a numpy array, got {type(array).__name__}")
        if array.dtype != np.float32:
            raise ContractViolation("dtype", f"{label} must be float32", value=str(array.dtype))
        if array.ndim != 2 or array.shape[1] != width:
            raise ContractViolation("shape", f"{label} must have shape (N, {width})", value=array.shape)
    if emb.shape[0] != attr.shape[0]:
        raise ContractViolation(
            "shape", "emb and attr must have the same number of tokens", value=(emb.shape[0], attr.shape[0])
        )
    if emb.shape[0] == 0:
        return None
    # Fast path: norms, min and max over blocks of rows that stay in cache between the
    # reductions (one read of memory, not three: a third less time on 2 GB of tokens), and the
    # written columns that the schema's check needs (another read saved). A NaN or inf makes a
    # norm or min/max non-finite, so the slow diagnosis below only runs on batches that break a
    # rule. The float32 norms are within ~1e-6 of the exact ones, so the fast path uses a margin
    # of 1e-5 and anything near the tolerance is decided in float64 below.
    fold = emb.shape[0] >= _VALIDATE_ROWS and attr.flags.c_contiguous
    acc = np.zeros(_FOLD * ATTR_DIM, dtype=np.uint32) if fold else None
    bits = attr.view(np.uint32) if fold else None
    for start in range(0, emb.shape[0], _VALIDATE_ROWS):
        e, a = emb[start : start + _VALIDATE_ROWS], attr[start : start + _VALIDATE_ROWS]
        norms32 = np.sqrt(np.einsum("ij,ij->i", e, e))
        if not (np.abs(norms32 - 1.0).max() <= NORM_TOLERANCE - 1e-5 and -1.0 <= a.min() and a.max() <= 1.0):
            break
        if acc is not None and bits is not None:
            _or_rows(bits[start : start + _VALIDATE_ROWS], acc)
    else:
        return None if acc is None else _fold(acc)
    norms = np.sqrt(np.einsum("ij,ij->i", emb, emb, dtype=np.float64))
    for label, array in (("emb", emb), ("attr", attr)):
        bad = ~np.isfinite(array)
        if bad.any():
            i = _first_bad(bad)
            j = int(np.argmax(bad[i]))
            raise ContractViolation("finite", f"{label}[{i}, {j}] is not finite", index=i, value=float(array[i, j]))
    off = np.abs(norms - 1.0) > NORM_TOLERANCE
    if off.any():
        i = int(np.argmax(off))
        raise ContractViolation(
            "unit_norm_emb", f"|‖emb‖ - 1| must be ≤ {NORM_TOLERANCE}", index=i, value=float(norms[i])
        )
    bad = np.abs(attr) > 1.0
    if not bad.any():  # only the fast path's margin was hit: the batch is valid
        return None
    i = _first_bad(bad)
    j = int(np.argmax(bad[i]))
    raise ContractViolation("attr_bounds", f"attr[{i}, {j}] must lie in [-1, 1]", index=i, value=float(attr[i, j]))


def _convert_offsets(value: Mapping[str, Any] | None) -> dict[str, np.ndarray]:
    return {str(k): np.asarray(v) for k, v in (value or {}).items()}


@attrs.frozen(eq=False)
class TokenBatch:
    """N tokens of one modality: ``emb`` (N, 256) and ``attr`` (N, 384), float32.

    ``offsets`` maps an offset field (see :data:`OFFSET_FIELDS`) to an array whose first axis has
    length N: ``char`` (N,) for text, ``time`` (N, 2) seconds for audio, ``box`` (N, 4) pixels for
    image patches, ``item`` (N,) for batches of several inputs. ``source`` names the input
    (a file path, ``"<text>"``) when known. Arrays are read-only once the batch exists.
    """

    emb: np.ndarray
    attr: np.ndarray
    modality: str
    offsets: dict[str, np.ndarray] = attrs.field(factory=dict, converter=_convert_offsets)
    source: str | None = None
    _written: np.ndarray | None = attrs.field(init=False, default=None, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_written", _validate(self.emb, self.attr))
        if not self.modality or not isinstance(self.modality, str):
            raise ContractViolation("modality", "a token batch needs a modality name", value=self.modality)
        n = self.emb.shape[0]
        for key, array in self.offsets.items():
            if key in OFFSET_FIELDS:
                trailing = OFFSET_FIELDS[key][0]
                if array.shape != (n, *trailing):
                    raise ContractViolation(
                        "offsets", f"offsets[{key!r}] must have shape {(n, *trailing)}", value=array.shape
                    )
            elif array.ndim == 0 or array.shape[0] != n:
                raise ContractViolation("offsets", f"offsets[{key!r}] must have {n} rows", value=array.shape)
            if array.dtype.kind == "f" and not np.isfinite(array).all():
                raise ContractViolation("offsets", f"offsets[{key!r}] holds non-finite values")
            if array.dtype.kind not in "biuf":
                raise ContractViolation("offsets", f"offsets[{key!r}] must be numeric", value=str(array.dtype))
        object.__setattr__(self, "emb", _frozen_view(self.emb))
        object.__setattr__(self, "attr", _frozen_view(self.attr))
        object.__setattr__(self, "offsets", {k: _frozen_view(v) for k, v in self.offsets.items()})

    def written_columns(self) -> np.ndarray:
        """(384,) bool: the attr slots that hold a value other than ±0 in some token (computed by
        the validation of a large batch on its way through memory, otherwise on first use)."""
        if self._written is None:
            object.__setattr__(self, "_written", written_columns(self.attr))
        assert self._written is not None
        return self._written

    # -- views -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.emb.shape[0])

    def __getitem__(self, index: int | slice | np.ndarray) -> TokenBatch:
        """A sub-batch (an int gives a one-token batch, so the result is always a batch)."""
        if isinstance(index, (int, np.integer)):
            n = len(self)
            if not -n <= index < n:
                raise IndexError(f"token index {index} out of range for {n} tokens")
            index = slice(index, index + 1 if index != -1 else None)
        return TokenBatch(
            emb=np.ascontiguousarray(self.emb[index]),
            attr=np.ascontiguousarray(self.attr[index]),
            modality=self.modality,
            offsets={k: np.ascontiguousarray(v[index]) for k, v in self.offsets.items()},
            source=self.source,
        )

    def __eq__(self, other: object) -> bool:
        """Bit-exact equality of every array and field."""
        if not isinstance(other, TokenBatch):
            return NotImplemented
        return (
            self.modality == other.modality
            and self.source == other.source
            and _bit_equal(self.emb, other.emb)
            and _bit_equal(self.attr, other.attr)
            and self.offsets.keys() == other.offsets.keys()
            and all(
                _bit_equal(v, other.offsets[k]) and v.dtype == other.offsets[k].dtype for k, v in self.offsets.items()
            )
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        offsets = ", ".join(self.offsets) or "none"
        return f"TokenBatch(modality={self.modality!r}, n={len(self)}, offsets: {offsets}, source={self.source!r})"

    # -- conversions -----------------------------------------------------------------------
    def to_array(self) -> np.ndarray:
        """The batch as one ``(N, 640)`` float32 array: ``emb`` then ``attr``."""
        return np.concatenate([self.emb, self.attr], axis=1)

    @classmethod
    def from_array(
        cls, array: Any, modality: str, *, offsets: Mapping[str, Any] | None = None, source: str | None = None
    ) -> TokenBatch:
        """Build a batch from an ``(N, 640)`` float32 array (validated like any batch)."""
        array = np.asarray(array)
        if array.ndim != 2 or array.shape[1] != TOKEN_DIM:
            raise ContractViolation("shape", f"a token array must have shape (N, {TOKEN_DIM})", value=array.shape)
        return cls(
            emb=np.ascontiguousarray(array[:, :EMB_DIM]),
            attr=np.ascontiguousarray(array[:, EMB_DIM:]),
            modality=modality,
            offsets=offsets,
            source=source,
        )

    def to_torch(self, device: Any = None) -> Any:
        """The batch as a ``(N, 640)`` float32 torch tensor (imports torch on first use)."""
        import torch

        return torch.from_numpy(self.to_array()).to(device) if device is not None else torch.from_numpy(self.to_array())

    @classmethod
    def from_torch(
        cls, tensor: Any, modality: str, *, offsets: Mapping[str, Any] | None = None, source: str | None = None
    ) -> TokenBatch:
        """Build a batch from a ``(N, 640)`` float32 torch tensor on any device."""
        return cls.from_array(tensor.detach().cpu().numpy(), modality, offsets=offsets, source=source)

    def to_arrow(self) -> Any:
        """The batch as a ``pyarrow.Table``, one row per token (schema: :mod:`v22sdk.tabular`).

        Needs pyarrow (``pip install 'v22sdk[arrow]'``), imported on first use;
        :meth:`from_arrow` restores the batch bit-exactly.
        """
        from ._arrow import to_table

        return to_table([self])

    @classmethod
    def from_arrow(cls, table: Any) -> TokenBatch:
        """The batch of a one-batch token table (see :meth:`to_arrow`); validated like any batch."""
        from ._arrow import from_table

        found = from_table(table)
        if len(found) != 1:
            raise InputError("<arrow>", f"holds {len(found)} token batches, expected 1")
        return cls(**found[0])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict. Floats are written exactly (float32 → float64 → repr is lossless)."""
        return {
            "format": "v22sdk.tokens",
            "version": _FORMAT_VERSION,
            "modality": self.modality,
            "source": self.source,
            "emb": self.emb.tolist(),
            "attr": self.attr.tolist(),
            "offsets": {k: {"dtype": v.dtype.str, "data": v.tolist()} for k, v in self.offsets.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TokenBatch:
        if data.get("format") != "v22sdk.tokens":
            raise InputError("<tokens>", "not a v22sdk token document (missing format: v22sdk.tokens)")
        if data.get("version") != _FORMAT_VERSION:
            raise InputError("<tokens>", f"unsupported token format version {data.get('version')!r}")
        emb = np.asarray(data["emb"], dtype=np.float32).reshape(-1, EMB_DIM)
        attr = np.asarray(data["attr"], dtype=np.float32).reshape(-1, ATTR_DIM)
        offsets = {k: np.asarray(v["data"], dtype=np.dtype(v["dtype"])) for k, v in data.get("offsets", {}).items()}
        return cls(emb=emb, attr=attr, modality=data["modality"], offsets=offsets, source=data.get("source"))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> TokenBatch:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError("<tokens>", f"invalid JSON: {exc}") from None
        return cls.from_dict(data)

    def save_npz(self, path: str | os.PathLike[str]) -> None:
        """Write the batch to ``path`` (``.npz``); :meth:`load_npz` restores it bit-exactly."""
        save_batches(path, [self])

    @classmethod
    def load_npz(cls, path: str | os.PathLike[str]) -> TokenBatch:
        batches = load_batches(path)
        if len(batches) != 1:
            raise InputError(str(path), f"holds {len(batches)} token batches, expected 1")
        return batches[0]

    @classmethod
    def concat(cls, batches: Sequence[TokenBatch], *, source: str | None = None) -> TokenBatch:
        """Concatenate batches of one modality; offsets present in every batch are kept."""
        if not batches:
            raise ValueError("concat needs at least one batch")
        modality = batches[0].modality
        if any(b.modality != modality for b in batches):
            raise ContractViolation(
                "modality",
                "cannot concatenate batches of different modalities",
                value=sorted({b.modality for b in batches}),
            )
        keys = set(batches[0].offsets).intersection(*(b.offsets for b in batches[1:]))
        return cls(
            emb=np.concatenate([b.emb for b in batches]),
            attr=np.concatenate([b.attr for b in batches]),
            modality=modality,
            offsets={k: np.concatenate([b.offsets[k] for b in batches]) for k in sorted(keys)},
            source=source if source is not None else batches[0].source,
        )


class TokenBuffer:
    """Output memory that ``Modality.tokenize(data, out=buffer)`` writes the tokens into, reused
    from call to call.

    A fresh 2,560-byte token costs the kernel a page fault and a zeroed page before the first
    write (a 1 MB text is 2 GB of tokens: about as much system CPU as the tokenizing itself).
    Tokenizing many inputs through one buffer pays that once, for the largest input. The batch
    returned with ``out=buffer`` holds read-only views of the buffer's first N rows, like numpy's
    ``out=``: **the next call with the same buffer overwrites it** (copy it, or use one buffer
    per batch you keep). A call that needs more rows than the buffer holds replaces its memory
    with a larger one; batches from earlier calls keep the old memory and stay intact.

    ``capacity``: rows to allocate now (0: allocate at the first call, exactly as many as it needs).
    """

    def __init__(self, capacity: int = 0):
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 0:
            raise ValueError(f"capacity must be a non-negative integer, got {capacity!r}")
        self._emb = np.empty((0, EMB_DIM), dtype=np.float32)
        self._attr = np.empty((0, ATTR_DIM), dtype=np.float32)
        self._zero = (ATTR_DIM, 0)  # attr[:rows, col:] is known to hold zeros: (col, rows)
        if capacity:
            self.rows(int(capacity))

    @property
    def capacity(self) -> int:
        """Rows the buffer holds without allocating."""
        return int(self._emb.shape[0])

    def rows(self, n: int, *, zero_from: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Writable ``(emb (n, 256), attr (n, 384))`` views of the first ``n`` rows, growing the
        buffer (new memory, old contents dropped) when ``n`` exceeds its capacity.

        The values are whatever the last call left, and the writer sets every element, except
        with ``zero_from=c``: then ``attr[:, c:]`` holds zeros on return and the writer promises
        to leave it so (a modality whose slots all lie below ``c``). The buffer remembers which
        rows it knows to be zero there, so a run of such calls clears them once, not every time.
        """
        if n > self.capacity:
            self._emb = np.empty((n, EMB_DIM), dtype=np.float32)
            self._attr = np.zeros((n, ATTR_DIM), dtype=np.float32)  # calloc: zero pages from the kernel
            self._zero = (0, n)
        emb, attr = self._emb[:n], self._attr[:n]
        if zero_from is None:
            self._zero = (ATTR_DIM, 0)
            return emb, attr
        col, known = self._zero
        known = known if col <= zero_from else 0
        if known < n:
            attr[known:, zero_from:] = 0.0
        self._zero = (zero_from, max(n, known))
        return emb, attr

    def holds(self, array: np.ndarray) -> bool:
        """Whether ``array`` is a view of this buffer's memory (what an encoder that writes into
        the buffer returns)."""
        return array.base is self._emb or array.base is self._attr

    def __repr__(self) -> str:
        return f"TokenBuffer(capacity={self.capacity})"


def _bit_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def save_batches(path: str | os.PathLike[str], batches: Iterable[TokenBatch]) -> None:
    """Write several batches to one ``.npz`` file (``b{i}.emb``, ``b{i}.attr``, ...)."""
    arrays: dict[str, np.ndarray] = {}
    header = []
    for i, batch in enumerate(batches):
        arrays[f"b{i}.emb"] = batch.emb
        arrays[f"b{i}.attr"] = batch.attr
        for key, value in batch.offsets.items():
            arrays[f"b{i}.offsets.{key}"] = value
        header.append({"modality": batch.modality, "source": batch.source, "offsets": list(batch.offsets)})
    arrays["header"] = np.frombuffer(
        json.dumps({"format": "v22sdk.tokens", "version": _FORMAT_VERSION, "batches": header}).encode(), dtype=np.uint8
    )
    from ._io import atomic_output

    with atomic_output(path) as fh:  # a failure keeps the previous file whole
        np.savez(fh, **arrays)  # type: ignore[arg-type]  # numpy's stub reads **kwds as allow_pickle


def load_batches(path: str | os.PathLike[str]) -> list[TokenBatch]:
    """Read the batches written by :func:`save_batches` (never unpickles objects)."""
    import zipfile

    try:
        if not zipfile.is_zipfile(path):
            raise InputError(str(path), "not a v22sdk token file (not a complete .npz archive)")
        with np.load(path, allow_pickle=False) as npz:
            header = json.loads(npz["header"].tobytes().decode())
            if not isinstance(header, dict) or header.get("format") != "v22sdk.tokens":
                raise InputError(str(path), "not a v22sdk token file")
            return [
                TokenBatch(
                    emb=npz[f"b{i}.emb"],
                    attr=npz[f"b{i}.attr"],
                    modality=h["modality"],
                    offsets={k: npz[f"b{i}.offsets.{k}"] for k in h["offsets"]},
                    source=h["source"],
                )
                for i, h in enumerate(header["batches"])
            ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, EOFError, zipfile.BadZipFile) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(str(path), f"cannot read token file: {type(exc).__name__}: {exc}") from None
