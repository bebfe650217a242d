"""Hypothesis strategies of valid audio Samples (imported only by tests and the contract kit)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from v22sdk import Sample

RATES = (8_000, 11_025, 16_000, 22_050, 32_000, 44_100, 48_000, 96_000)
DTYPES = ("uint8", "int16", "int32", "float32", "float64")
KINDS = ("noise", "sine", "silence", "clipped", "clicks", "chirp")


def synth(kind: str, n: int, rate: int, channels: int, seed: int, freq: float, level: float) -> np.ndarray:
    """(n,) or (n, channels) float64 full-scale signal of one kind (deterministic in ``seed``)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / rate
    if kind == "noise":
        x = rng.standard_normal(n) * level / 3
    elif kind == "sine":
        x = level * np.sin(2 * np.pi * freq * t + rng.uniform(0, 2 * np.pi))
    elif kind == "clipped":
        x = np.clip(2.0 * np.sin(2 * np.pi * freq * t), -1.0, 1.0)
    elif kind == "clicks":
        x = np.zeros(n)
        x[:: max(1, int(rate / 4))] = level
    elif kind == "chirp":
        x = level * np.sin(2 * np.pi * (freq * t + 200.0 * t * t))
    else:
        x = np.zeros(n)
    x = np.clip(x, -1.0, 1.0)
    if channels > 1:
        x = np.stack([x, x * 0.5 + rng.standard_normal(n) * 1e-3], axis=1)
    return x


def as_dtype(x: np.ndarray, dtype: str) -> np.ndarray:
    """Full-scale float -> PCM/float array of ``dtype``."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return x.astype(dt)
    bits = dt.itemsize * 8
    top = 2 ** (bits - 1)
    q = np.clip(np.round(x * top), -top, top - 1)
    return (q + top).astype(dt) if dt.kind == "u" else q.astype(dt)


@st.composite
def samples(draw, max_seconds: float = 3.0) -> Sample:
    rate = draw(st.sampled_from(RATES) | st.integers(8_000, 96_000))
    n = draw(st.integers(1, max(1, int(max_seconds * rate))))
    kind = draw(st.sampled_from(KINDS))
    channels = draw(st.sampled_from((1, 1, 2)))
    x = synth(
        kind,
        n,
        rate,
        channels,
        draw(st.integers(0, 2**32 - 1)),
        draw(st.floats(50.0, min(2_000.0, rate / 2.5))),
        draw(st.floats(1e-3, 1.0)),
    )
    return Sample(as_dtype(x, draw(st.sampled_from(DTYPES))), {"sample_rate": float(rate)}, None)
