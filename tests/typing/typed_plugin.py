"""A small modality plugin written the way a plugin author writes one, fully annotated.

scripts/ci_sdk.sh type-checks it with ``mypy --strict`` against the installed wheel (not the
source tree): it must pass without a single ``type: ignore``, which only works because the wheel
ships ``py.typed`` and typed public names. ``typed_plugin_wrong.py`` is its twin with type errors,
which the same check must reject (so the check cannot pass by seeing everything as ``Any``).
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from v22sdk import (
    EMB_DIM,
    AttributeSchema,
    Encoding,
    InputError,
    InputSpec,
    Modality,
    Sample,
    TokenBatch,
    Unit,
    hookimpl,
)
from v22sdk.testing import check_modality

SCHEMA = AttributeSchema.build(
    "audio",
    [
        ("typed.level.mean", "mean of the frame", "clip(mean, -1, 1)"),
    ],
)


@attrs.frozen
class TypedModality(Modality):
    """One token per block of ``block`` samples: a fixed embedding and the block's mean."""

    name = "typed"
    extensions = ()
    schema = SCHEMA
    input_spec = InputSpec(
        kind="array", dtypes=("f",), ndim=(1,), units=(Unit("sample_rate", "Hz", 1.0, 1e6, "samples per second"),)
    )
    block: int = 4

    def encode(self, data: Any, *, sample_rate: float) -> Encoding:
        if not isinstance(data, np.ndarray) or data.dtype.kind != "f" or data.ndim != 1 or data.size == 0:
            raise InputError("<typed>", "expected a non-empty 1-D float array")
        if not np.isfinite(data).all():
            raise InputError("<typed>", "samples must be finite")
        n = -(-data.size // self.block)
        padded = np.zeros(n * self.block)
        padded[: data.size] = np.clip(data, -1.0, 1.0)
        emb = np.zeros((n, EMB_DIM), dtype=np.float32)
        emb[:, 0] = 1.0
        attr = np.zeros((n, 384), dtype=np.float32)
        attr[:, SCHEMA.index("typed.level.mean")] = padded.reshape(n, self.block).mean(axis=1)
        starts = np.arange(n) * self.block
        ends = np.minimum(starts + self.block, data.size)
        return Encoding(emb, attr, {"time": np.stack([starts, ends], axis=1) / sample_rate})

    @classmethod
    def sample_inputs(cls) -> Any:
        from hypothesis import strategies as st
        from hypothesis.extra.numpy import arrays

        return st.builds(
            lambda a: Sample(a, {"sample_rate": 8000.0}),
            arrays(np.float64, st.integers(1, 64), elements=st.floats(-1, 1)),
        )


@hookimpl
def v22sdk_register_modalities() -> list[type[Modality]]:
    return [TypedModality]


def first_token_norm(batch: TokenBatch) -> float:
    return float(np.linalg.norm(batch.emb[0]))


def main() -> None:
    batch: TokenBatch = TypedModality().tokenize(np.linspace(-1, 1, 10), sample_rate=8000.0)
    assert len(batch) == 3 and abs(first_token_norm(batch) - 1.0) < 1e-6
    report = check_modality(TypedModality, max_examples=5)
    report.raise_for_failures()


if __name__ == "__main__":
    main()
