"""The IMU modality: a 6-axis IMU recording → one audio-zone token per window.

Input to :meth:`IMUModality.tokenize`: a finite (T, 6) array — columns ax, ay, az (m/s²) and
gx, gy, gz (rad/s) — plus the unit ``sample_rate`` (Hz). Files: CSV, see :mod:`v22sdk_imu.io`.

Windows are ``window_s`` long (default 2.56 s) every ``hop_s`` (default 1.28 s), starting at 0,
while ``start + length <= T``; a trailing part shorter than a hop is not covered, and a signal
shorter than one window gives one short window (``imu.coverage`` < 1).
``offsets["time"]`` (N, 2) holds each window's start and end in seconds from the first sample.
``emb``: per-axis Hann-window amplitude spectra resampled onto 40 fixed frequencies
(0.25–20 Hz), ``log1p``, plus the six axis means, projected by a fixed seeded matrix
(seed :data:`~v22sdk_imu.features.PROJECTION_SEED`) and L2-normalised.
"""

from __future__ import annotations

import os
from typing import Any

import attrs
import numpy as np

from v22sdk import Encoding, InputError, InputSpec, Modality, Sample, Unit

from . import features
from .slots import SCHEMA

#: Largest accepted |reading| (m/s² or rad/s): far beyond any accelerometer or gyroscope.
MAX_ABS = 1e6


def _positive(instance: Any, attribute: attrs.Attribute, value: float) -> None:
    if not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0):
        raise ValueError(f"{attribute.name} must be a positive number of seconds, got {value!r}")


@attrs.frozen
class IMUModality(Modality):
    """6-axis IMU (accelerometer m/s², gyroscope rad/s) → one audio-zone token per window."""

    name = "imu"
    extensions = (".csv",)
    schema = SCHEMA
    input_spec = InputSpec(
        kind="array", dtypes=("u", "i", "f"), ndim=(2,),
        units=(Unit("sample_rate", "Hz", 1.0, 10_000.0, "IMU sample rate"),),
        description="(T, 6): ax, ay, az in m/s², gx, gy, gz in rad/s",
    )

    #: Window length in seconds (2.56 s: 256 samples at 100 Hz).
    window_s: float = attrs.field(default=2.56, validator=_positive)
    #: Hop between window starts in seconds.
    hop_s: float = attrs.field(default=1.28, validator=_positive)

    def load(self, path: str | os.PathLike[str]) -> Sample:
        from .io import load_csv

        return load_csv(path)

    def encode(self, data: Any, *, sample_rate: float) -> Encoding:
        signal = _as_signal(data, "<imu array>")
        length = max(1, int(round(self.window_s * sample_rate)))
        hop = max(1, int(round(self.hop_s * sample_rate)))
        win, starts = features.windows(signal, length, hop)
        emb = features.embed(win, sample_rate).astype(np.float32)
        stats = features.statistics(win, sample_rate, length)
        attr = np.zeros((win.shape[0], 384), dtype=np.float32)
        for name, values in stats.items():
            attr[:, SCHEMA.index(f"imu.{name}")] = values
        attr[np.abs(attr) < 1e-9] = 0.0  # float round-off where the true value is 0
        time = np.stack([starts, starts + win.shape[1]], axis=1).astype(np.float64) / sample_rate
        return Encoding(emb=emb, attr=attr, offsets={"time": time})

    def invalid_inputs(self, valid: Sample) -> list[tuple[str, Sample]]:
        data = np.asarray(valid.data)
        extra = [("wrong_columns", Sample(data[:, :5], valid.units, valid.source))] if data.ndim == 2 else []
        return super().invalid_inputs(valid) + extra

    @classmethod
    def sample_inputs(cls):
        """Valid recordings: raw arrays of each accepted dtype and synthetic still/walk/turn signals."""
        from hypothesis import strategies as st
        from hypothesis.extra import numpy as hnp

        from . import synthetic

        rows = st.integers(1, 700)
        raw = st.one_of(
            hnp.arrays(np.float32, st.tuples(rows, st.just(6)), elements=st.floats(-80, 80, width=32)),
            hnp.arrays(np.float64, st.tuples(rows, st.just(6)), elements=st.floats(-80, 80)),
            hnp.arrays(np.int16, st.tuples(rows, st.just(6)), elements=st.integers(-2000, 2000)),
        )
        made = st.builds(
            lambda kind, seconds, rate, seed: synthetic.SIGNALS[kind](seconds, rate, seed=seed),
            st.sampled_from(sorted(synthetic.SIGNALS)), st.floats(0.2, 8.0), st.sampled_from([50.0, 100.0]),
            st.integers(0, 2**16),
        )
        return st.one_of(
            st.builds(lambda d, sr: Sample(d, {"sample_rate": sr}, "<imu array>"),
                      raw, st.sampled_from([20.0, 50.0, 100.0, 200.0])),
            made.map(lambda pair: Sample(pair[0], {"sample_rate": pair[1]}, "<imu array>")),
        )


def _as_signal(data: Any, source: str) -> np.ndarray:
    """Validate and return the (T, 6) float64 signal."""
    if not isinstance(data, np.ndarray):
        raise InputError(source, f"expected a numpy array, got {type(data).__name__}")
    if data.dtype.kind not in "uif":
        raise InputError(source, f"dtype {data.dtype} is not numeric (unsigned, signed int or float)")
    if data.ndim != 2:
        raise InputError(source, f"expected a 2-D (T, 6) array, got {data.ndim}-D shape {data.shape}")
    if data.shape[1] != 6:
        raise InputError(source, f"expected 6 columns (ax, ay, az, gx, gy, gz), got {data.shape[1]}")
    if data.shape[0] == 0:
        raise InputError(source, "the recording is empty (0 samples)")
    signal = data.astype(np.float64)
    if not np.isfinite(signal).all():
        raise InputError(source, "the recording holds NaN or infinite values")
    peak = float(np.abs(signal).max())
    if peak > MAX_ABS:
        # far beyond any sensor (±2000 g is ~2e4 m/s²); squaring such values overflows to inf/NaN
        raise InputError(source, f"a reading of magnitude {peak:g} is not physical (at most {MAX_ABS:g} "
                                 "m/s² or rad/s)")
    return signal
