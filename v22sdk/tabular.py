"""Token batches as Apache Arrow tables and Parquet files: tokens for the data tools people use.

One row per token, tokens of a batch in order and contiguous. The schema (``token_schema()``):

=============  =====================================  =================================================
column         Arrow type                             meaning
=============  =====================================  =================================================
``batch``      ``int32``                              index of the token's batch in the table (0, 1, ...)
``token``      ``int32``                              position of the token in its batch
``modality``   ``string``                             the modality that made the token (``text`` ...)
``source``     ``string`` (nullable)                  the input it came from (a path, ``<text>``)
``emb``        ``fixed_size_list<float>[256]``        the unit-norm embedding, float32
``attr``       ``fixed_size_list<float>[384]``        the 384 named attribute slots, float32 in [-1, 1]
``offsets``    ``struct``                             one field per offset name, null where a batch
                                                      has none: ``char: int64``,
                                                      ``time: fixed_size_list<double>[2]``,
                                                      ``box: fixed_size_list<int64>[4]``, ``item: int64``,
                                                      then any other offset a plugin writes
=============  =====================================  =================================================

The schema's metadata key ``v22sdk`` holds JSON (``format``, ``version`` and per batch the numpy
dtype and trailing shape of each offset), so that :func:`batches_from_arrow` restores every batch
bit-exactly (an ``int32`` offset comes back ``int32``). Without that metadata (a table that went
through another tool) batches are rebuilt from the columns alone, with the column's types.

pyarrow is an optional dependency (``pip install 'v22sdk[arrow]'``), imported by these functions
only, so the token contract stays light. ``TokenBatch.to_arrow()`` / ``TokenBatch.from_arrow()``
convert one batch; :class:`v22sdk.token_dataset.TokenDataset` serves token files to torch.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _arrow
from ._arrow import ARROW_FORMAT, ARROW_VERSION, STANDARD_OFFSETS
from .contract import TokenBatch, load_batches, save_batches
from .errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "ARROW_FORMAT",
    "ARROW_VERSION",
    "STANDARD_OFFSETS",
    "token_schema",
    "batches_to_arrow",
    "batches_from_arrow",
    "write_parquet",
    "read_parquet",
    "save_tokens",
    "load_tokens",
]


def token_schema(extra_offsets: dict[str, tuple[np.dtype[Any], tuple[int, ...]]] | None = None) -> pa.Schema:
    """The Arrow schema of a token table: the standard offsets plus ``extra_offsets`` (name -> dtype, trailing shape)."""
    return _arrow.token_schema(extra_offsets)


def batches_to_arrow(batches: Iterable[TokenBatch]) -> pa.Table:
    """Token batches as one Arrow table, one row per token (schema above); bit-exact both ways."""
    return _arrow.to_table(list(batches))


def batches_from_arrow(table: pa.Table, *, source: str = "<arrow>") -> list[TokenBatch]:
    """The token batches of a table made by :func:`batches_to_arrow` (or read from its Parquet file).

    Each batch is validated like any :class:`~v22sdk.contract.TokenBatch`; a table that is not a
    token table is an :class:`~v22sdk.errors.InputError` naming ``source`` and what is wrong.
    """
    return [TokenBatch(**kw) for kw in _arrow.from_table(table, source=source)]


def write_parquet(path: str | os.PathLike[str], batches: Iterable[TokenBatch]) -> None:
    """Write token batches to a Parquet file (atomically: a failure keeps the previous file whole)."""
    table = batches_to_arrow(batches)
    import pyarrow.parquet as pq

    from ._io import atomic_output

    with atomic_output(path) as fh:
        pq.write_table(table, fh)


def read_parquet(path: str | os.PathLike[str]) -> list[TokenBatch]:
    """The token batches of a Parquet file written by :func:`write_parquet` (bit-exact)."""
    pa = _arrow._pyarrow()
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise InputError(str(path), f"cannot read Parquet token file: {exc}") from None
    return batches_from_arrow(table, source=str(path))


def save_tokens(path: str | os.PathLike[str], batches: Iterable[TokenBatch]) -> None:
    """Write batches to ``path`` in the format its suffix names: ``.parquet``, else ``.npz``."""
    if str(path).lower().endswith(".parquet"):
        write_parquet(path, batches)
    else:
        save_batches(path, batches)


def load_tokens(path: str | os.PathLike[str]) -> list[TokenBatch]:
    """Read a token file written by :func:`save_tokens` (``.parquet`` or ``.npz``)."""
    if str(path).lower().endswith(".parquet"):
        return read_parquet(path)
    return load_batches(path)
