"""Token batches <-> Apache Arrow tables (the schema is documented in :mod:`v22sdk.tabular`).

Kept apart from the contract so that ``TokenBatch.to_arrow`` can import it on first use and the
contract stays light; it imports pyarrow only inside its functions, and knows token batches only
by their attributes (``emb``, ``attr``, ``modality``, ``offsets``, ``source``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import InputError

#: the token's two parts (as in :mod:`v22sdk.contract`; a test checks they agree)
EMB_DIM = 256
ATTR_DIM = 384
#: value of the ``format`` field of the ``v22sdk`` schema metadata
ARROW_FORMAT = "v22sdk.tokens.arrow"
ARROW_VERSION = 1
#: the standard offset fields (``contract.OFFSET_FIELDS``): the column's numpy dtype and trailing shape
STANDARD_OFFSETS: dict[str, tuple[str, tuple[int, ...]]] = {
    "char": ("<i8", ()),
    "time": ("<f8", (2,)),
    "box": ("<i8", (4,)),
    "item": ("<i8", ()),
}
if TYPE_CHECKING:
    import pyarrow as pa


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise InputError("pyarrow", "Arrow and Parquet token files need pyarrow: pip install 'v22sdk[arrow]'") from None
    return pyarrow


def _value_type(pa: Any, dtype: np.dtype[Any], width: int) -> Any:
    base = pa.from_numpy_dtype(dtype)
    return base if width == 0 else pa.list_(base, width)


def _standard() -> dict[str, tuple[np.dtype[Any], tuple[int, ...]]]:
    return {k: (np.dtype(d), s) for k, (d, s) in STANDARD_OFFSETS.items()}


def _offset_columns(batches: list[Any]) -> dict[str, tuple[np.dtype[Any], tuple[int, ...]]]:
    """Offset name -> (column dtype, trailing shape) over all batches, standard fields first."""
    columns = _standard()
    for b in batches:
        for k, v in b.offsets.items():
            trailing = tuple(int(d) for d in v.shape[1:])
            if k in columns:
                dtype, shape = columns[k]
                if shape != trailing:
                    raise InputError(
                        f"offsets[{k!r}]",
                        f"trailing shape {trailing} in one batch and {shape} in "
                        "another: one Arrow column cannot hold both",
                    )
                columns[k] = (np.result_type(dtype, v.dtype), shape)
            else:
                columns[k] = (v.dtype, trailing)
    return columns


def token_schema(extra_offsets: dict[str, tuple[np.dtype[Any], tuple[int, ...]]] | None = None) -> pa.Schema:
    """The Arrow schema of a token table (the standard offsets plus ``extra_offsets``), without metadata."""
    pa = _pyarrow()
    offsets = _standard()
    offsets.update(extra_offsets or {})
    return pa.schema(
        [
            ("batch", pa.int32()),
            ("token", pa.int32()),
            ("modality", pa.string()),
            ("source", pa.string()),
            ("emb", pa.list_(pa.float32(), EMB_DIM)),
            ("attr", pa.list_(pa.float32(), ATTR_DIM)),
            (
                "offsets",
                pa.struct(
                    [
                        (k, _value_type(pa, d, int(np.prod(s, dtype=np.int64)) if s else 0))
                        for k, (d, s) in offsets.items()
                    ]
                ),
            ),
        ]
    )


def _column(pa: Any, arrays: list[np.ndarray | int], dtype: np.dtype[Any], width: int) -> Any:
    """One Arrow array from per-batch numpy arrays (an int: that many null rows)."""
    typ = _value_type(pa, dtype, width)
    chunks = []
    for a in arrays:
        if isinstance(a, int):
            chunks.append(pa.nulls(a, typ))
            continue
        cast = a.astype(dtype, copy=False)
        if not np.array_equal(cast.astype(a.dtype), a):
            raise InputError("offsets", f"{a.dtype} values do not fit the column type {dtype} without loss")
        flat = pa.array(np.ascontiguousarray(cast).reshape(-1), type=pa.from_numpy_dtype(dtype))
        chunks.append(flat if width == 0 else pa.FixedSizeListArray.from_arrays(flat, width))
    return pa.concat_arrays(chunks) if chunks else pa.array([], type=typ)


def to_table(batches: Iterable[Any]) -> pa.Table:
    """Token batches (:class:`~v22sdk.contract.TokenBatch`) as one Arrow table; see :mod:`v22sdk.tabular`."""
    pa = _pyarrow()
    batches = list(batches)
    columns = _offset_columns(batches)
    sizes = [len(b) for b in batches]
    n = int(sum(sizes))
    batch_ids = np.repeat(np.arange(len(batches), dtype=np.int32), sizes)
    positions = np.concatenate([np.arange(s, dtype=np.int32) for s in sizes]) if batches else np.zeros(0, np.int32)
    emb = np.concatenate([b.emb for b in batches]) if batches else np.zeros((0, EMB_DIM), np.float32)
    attr = np.concatenate([b.attr for b in batches]) if batches else np.zeros((0, ATTR_DIM), np.float32)
    fields = []
    for k, (dtype, trailing) in columns.items():
        width = int(np.prod(trailing, dtype=np.int64)) if trailing else 0
        per_batch: list[np.ndarray | int] = [b.offsets[k] if k in b.offsets else len(b) for b in batches]
        fields.append(_column(pa, per_batch, dtype, width))
    offsets = (
        pa.StructArray.from_arrays(fields, names=list(columns))
        if n
        else pa.array([], type=pa.struct([(k, f.type) for k, f in zip(columns, fields)]))
    )
    meta = {
        "format": ARROW_FORMAT,
        "version": ARROW_VERSION,
        "batches": [
            {
                "modality": b.modality,
                "source": b.source,
                "n": len(b),
                "offsets": {k: {"dtype": v.dtype.str, "shape": list(v.shape[1:])} for k, v in b.offsets.items()},
            }
            for b in batches
        ],
    }
    table = pa.table(
        {
            "batch": pa.array(batch_ids, type=pa.int32()),
            "token": pa.array(positions, type=pa.int32()),
            "modality": pa.array([b.modality for b, s in zip(batches, sizes) for _ in range(s)], type=pa.string()),
            "source": pa.array([b.source for b, s in zip(batches, sizes) for _ in range(s)], type=pa.string()),
            "emb": pa.FixedSizeListArray.from_arrays(pa.array(emb.reshape(-1), type=pa.float32()), EMB_DIM),
            "attr": pa.FixedSizeListArray.from_arrays(pa.array(attr.reshape(-1), type=pa.float32()), ATTR_DIM),
            "offsets": offsets,
        }
    )
    return table.replace_schema_metadata({"v22sdk": json.dumps(meta)})


def _numpy(column: Any, rows: int, width: int) -> np.ndarray:
    """A (rows,) or (rows, width) numpy array from a chunked/plain Arrow array without nulls."""
    arr = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if width:
        arr = arr.flatten()
    values = arr.to_numpy(zero_copy_only=False)
    return np.asarray(values).reshape(rows, width) if width else np.asarray(values)


def from_table(table: pa.Table, *, source: str = "<arrow>") -> list[dict[str, Any]]:
    """The ``TokenBatch`` keyword arguments of each batch of a token table (not yet validated).

    A table that is not a token table is an :class:`~v22sdk.errors.InputError` naming ``source``.
    """
    pa = _pyarrow()
    missing = [c for c in ("batch", "modality", "emb", "attr") if c not in table.column_names]
    if missing:
        raise InputError(source, f"not a v22sdk token table: no column(s) {', '.join(missing)}")
    raw = (table.schema.metadata or {}).get(b"v22sdk")
    meta = json.loads(raw) if raw else None
    if meta is not None and (meta.get("format") != ARROW_FORMAT or meta.get("version") != ARROW_VERSION):
        raise InputError(source, f"unsupported token table {meta.get('format')!r} version {meta.get('version')!r}")
    ids = _numpy(table.column("batch"), table.num_rows, 0).astype(np.int64)
    if ids.size and (np.any(np.diff(ids) < 0) or ids[0] < 0):
        raise InputError(source, "rows of a token table must be grouped by 'batch', in order")
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if ids.size else np.zeros(0, np.int64)
    ends = np.r_[starts[1:], ids.size].astype(np.int64)
    if meta is not None and [b["n"] for b in meta["batches"]] != (ends - starts).tolist():
        raise InputError(source, "the token table's rows do not match its v22sdk metadata (rows were filtered?)")
    has_offsets = "offsets" in table.column_names
    offsets_col = table.column("offsets").combine_chunks() if has_offsets else None
    out: list[dict[str, Any]] = []
    for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
        rows = table.slice(a, b - a)
        info = meta["batches"][i] if meta is not None else None
        emb = _numpy(rows.column("emb"), b - a, EMB_DIM).astype(np.float32, copy=False)
        attr = _numpy(rows.column("attr"), b - a, ATTR_DIM).astype(np.float32, copy=False)
        offsets: dict[str, np.ndarray] = {}
        if offsets_col is not None:
            struct = offsets_col.slice(a, b - a)
            for j, field in enumerate(struct.type):
                child = struct.field(j)
                if info is not None:
                    if field.name not in info["offsets"]:
                        continue
                    spec = info["offsets"][field.name]
                    dtype, shape = np.dtype(spec["dtype"]), tuple(spec["shape"])
                elif child.null_count == len(child):
                    continue
                else:
                    dtype = np.dtype(
                        child.type.value_type.to_pandas_dtype()
                        if pa.types.is_fixed_size_list(child.type)
                        else child.type.to_pandas_dtype()
                    )
                    shape = (child.type.list_size,) if pa.types.is_fixed_size_list(child.type) else ()
                if child.null_count:
                    raise InputError(source, f"offsets.{field.name} has nulls inside batch {i}")
                width = int(np.prod(shape, dtype=np.int64)) if shape else 0
                offsets[field.name] = _numpy(child, b - a, width).reshape((b - a, *shape)).astype(dtype)
        modality = info["modality"] if info is not None else rows.column("modality")[0].as_py()
        src = (
            info["source"]
            if info is not None
            else (rows.column("source")[0].as_py() if "source" in rows.column_names else None)
        )
        out.append(
            {
                "emb": np.ascontiguousarray(emb),
                "attr": np.ascontiguousarray(attr),
                "modality": modality,
                "offsets": offsets,
                "source": src,
            }
        )
    return out
