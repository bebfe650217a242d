"""``hello``: a tiny level meter for 1-D signals, the reference third-party modality.

Input: a 1-D numpy array of samples (float: full scale ±1; integer: PCM, full scale = the
dtype's range) plus its ``sample_rate`` in Hz. Output: one token per frame of
``frame_seconds`` (the last frame may be shorter), with

* ``emb`` (N, 256) float32, unit norm: the frame's 16-band log power spectrum, normalised and
  mapped by a fixed orthonormal projection (seed :data:`SEED`); a silent frame gets the
  projection's 17th column, a documented unit vector orthogonal to every non-silent embedding;
* ``attr`` (N, 384) float32: the six ``hello.*`` slots of the audio zone (see :data:`SCHEMA`),
  every other slot 0;
* ``offsets["time"]`` (N, 2) float64: each frame's start and end in seconds.
"""

from __future__ import annotations

import functools
import os
import wave
from typing import Any

import attrs
import numpy as np

from v22sdk import AttributeSchema, Encoding, InputError, InputSpec, Modality, Sample, Unit
from v22sdk.decoding import check_budget, check_regular_file

#: Seed of the fixed 17→256 orthonormal projection (never change it: embeddings would move).
SEED = 22_0001
N_BANDS = 16
#: A frame whose band-energy vector has a norm at or below this is silent.
SILENCE = 1e-12
#: Largest |sample| accepted for float input (full scale is 1; far beyond is not a signal).
MAX_FLOAT_AMPLITUDE = 1e3
SOURCE = "<hello signal>"
#: Peak bytes per frame of reading a WAV (besides its raw bytes) and computing its tokens, and a
#: fixed part: what :func:`v22sdk.decoding.check_budget` is given before a file is read.
BYTES_PER_SAMPLE = 64
BASE_BYTES = 16 << 20

SCHEMA = AttributeSchema.build("audio", [
    ("hello.level.rms_db", "RMS level of the frame in dB full scale",
     "clip(dBFS / 30 + 1, -1, 1): 0 dBFS -> 1, -30 dBFS -> 0, -60 dBFS or silence -> -1"),
    ("hello.level.peak", "largest absolute sample value of the frame (full scale = 1)", "clip(peak, 0, 1)"),
    ("hello.shape.zcr", "zero-crossing rate: share of adjacent sample pairs of opposite sign",
     "fraction in [0, 1]"),
    ("hello.shape.dc", "mean sample value, the DC offset (full scale = 1)", "clip(mean, -1, 1)"),
    ("hello.spec.centroid", "spectral centroid of the frame", "centroid / Nyquist in [0, 1]; silence -> 0"),
    ("hello.time.position", "frame centre within the whole signal", "centre / duration in [0, 1]"),
])


@functools.cache
def projection() -> np.ndarray:
    """(256, 17) float64 with orthonormal columns: 16 band columns, then the silence column."""
    q, _ = np.linalg.qr(np.random.default_rng(SEED).standard_normal((256, N_BANDS + 1)))
    q.flags.writeable = False
    return q


def _positive(instance: Any, attribute: Any, value: float) -> None:
    if not (isinstance(value, (int, float)) and 0.001 <= value <= 10.0):
        raise ValueError(f"{attribute.name} must be a number of seconds in [0.001, 10], got {value!r}")


def as_signal(data: Any, source: str = SOURCE) -> np.ndarray:
    """Validate a signal and return it as float64 full scale (InputError on anything else)."""
    if not isinstance(data, np.ndarray):
        raise InputError(source, f"expected a 1-D numpy array of samples, got {type(data).__name__}")
    if data.dtype.kind not in "if":
        raise InputError(source, f"samples must be integer PCM or float, got dtype {data.dtype}")
    if data.ndim != 1:
        raise InputError(source, f"expected a 1-D (mono) signal, got shape {data.shape}")
    if data.size == 0:
        raise InputError(source, "the signal is empty")
    if data.dtype.kind == "i":
        return data.astype(np.float64) / (float(np.iinfo(data.dtype).max) + 1.0)
    x = data.astype(np.float64)
    bad = ~np.isfinite(x)
    if bad.any():
        raise InputError(source, f"sample {int(np.argmax(bad))} is {x[bad][0]}; samples must be finite")
    if np.abs(x).max() > MAX_FLOAT_AMPLITUDE:
        raise InputError(source, f"float samples must be full scale ±1 (found {np.abs(x).max():g}); "
                                 f"values beyond ±{MAX_FLOAT_AMPLITUDE:g} are not a signal")
    return x


def _band_matrix(bins: int) -> np.ndarray:
    """(bins, 16) one-hot map from rfft bin to band, bands of equal width up to Nyquist."""
    frac = np.arange(bins) / max(bins - 1, 1)
    band = np.minimum((frac * N_BANDS).astype(np.int64), N_BANDS - 1)
    return np.eye(N_BANDS)[band]


@attrs.frozen
class HelloModality(Modality):
    """Per-frame level, shape and spectrum of a mono signal (see the module docstring)."""

    name = "hello"
    extensions = ()  # .wav belongs to the built-in audio modality: use --modality hello
    schema = SCHEMA
    input_spec = InputSpec(kind="array", dtypes=("i", "f"), ndim=(1,),
                           units=(Unit("sample_rate", "Hz", 100.0, 384_000.0, "samples per second"),),
                           description="mono signal, float full scale ±1 or integer PCM")
    frame_seconds: float = attrs.field(default=0.05, validator=_positive)

    def load(self, path: str | os.PathLike[str]) -> Sample:
        """Read a PCM WAV file (8, 16 or 32 bit; channels are averaged to mono)."""
        check_regular_file(path)  # a FIFO would block, /dev/zero never end
        try:
            with wave.open(os.fspath(path), "rb") as wav:
                width, channels, rate, count = (wav.getsampwidth(), wav.getnchannels(),
                                                wav.getframerate(), wav.getnframes())
                # The header first: refuse what would not fit the decode budget before reading it.
                check_budget(str(path), count * channels * width + BYTES_PER_SAMPLE * count + BASE_BYTES,
                             f"a WAV of {count:,} frames of {channels} channel(s), which")
                raw = wav.readframes(count)
        except (OSError, EOFError, wave.Error) as exc:
            raise InputError(str(path), f"not a readable PCM WAV file: {exc}") from None
        dtypes = {1: np.uint8, 2: np.int16, 4: np.int32}
        if width not in dtypes:
            raise InputError(str(path), f"{8 * width}-bit PCM is not supported (8, 16 or 32 bit)")
        if len(raw) != count * width * channels:
            raise InputError(str(path), f"truncated: {len(raw)} bytes of sample data, header says "
                                        f"{count * width * channels}")
        samples = np.frombuffer(raw, dtype=np.dtype(dtypes[width]).newbyteorder("<")).reshape(-1, channels)
        if width == 1:  # 8-bit WAV is unsigned with 128 as zero
            samples = (samples.astype(np.int16) - 128).astype(np.int8)
        mono = samples[:, 0] if channels == 1 else (samples.mean(axis=1) / (float(np.iinfo(samples.dtype).max) + 1))
        return Sample(np.ascontiguousarray(mono), {"sample_rate": float(rate)}, str(path))

    def save(self, sample: Sample, path: str | os.PathLike[str]) -> None:
        """Write a signal as a mono 16-bit PCM WAV file (what :meth:`load` reads back).

        Float samples are scaled to 16 bits (full scale ±1, rounded); integer samples must fit in
        16 bits. A WAV header holds a whole number of samples per second, so a fractional
        ``sample_rate`` -- or float samples beyond full scale -- is an :class:`InputError`.
        """
        x = as_signal(sample.data, str(path))
        rate = float(sample.units.get("sample_rate", 0.0))
        if not (rate.is_integer() and 1 <= rate < 2 ** 31):
            raise InputError(str(path), f"a WAV file needs a whole number of samples per second, got {rate!r}")
        if np.abs(x).max() > 1.0:
            raise InputError(str(path), "float samples beyond full scale ±1 do not fit 16-bit PCM")
        pcm = np.clip(np.round(x * 32768.0), -32768, 32767).astype("<i2")
        with wave.open(os.fspath(path), "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(int(rate))
            wav.writeframes(pcm.tobytes())

    def encode(self, data: Any, *, sample_rate: float) -> Encoding:
        x = as_signal(data)
        n = x.size
        size = max(1, int(round(self.frame_seconds * sample_rate)))
        count = -(-n // size)
        frames = np.zeros(count * size)
        frames[:n] = x
        frames = frames.reshape(count, size)                       # (N, size), zero-padded tail
        starts = np.arange(count) * size
        lengths = np.minimum(size, n - starts)                     # real samples per frame

        power = np.abs(np.fft.rfft(frames, axis=1)) ** 2           # (N, size // 2 + 1)
        bands = np.log1p(power @ _band_matrix(power.shape[1]) / size)   # (N, 16)
        norm = np.linalg.norm(bands, axis=1, keepdims=True)
        silent = norm[:, 0] <= SILENCE
        q = projection()
        direction = np.where(silent[:, None], 0.0, bands / np.where(silent, 1.0, norm[:, 0])[:, None])
        emb = direction @ q[:, :N_BANDS].T + silent[:, None] * q[:, N_BANDS]
        emb /= np.linalg.norm(emb, axis=1, keepdims=True)          # float64 renorm, then cast

        rms = np.sqrt((frames ** 2).sum(axis=1) / lengths)
        db = 20.0 * np.log10(np.maximum(rms, 1e-30))
        crossings = (frames[:, 1:] * frames[:, :-1] < 0).sum(axis=1)  # padding zeros never cross
        freq = np.arange(power.shape[1]) / max(power.shape[1] - 1, 1)
        total = power.sum(axis=1)
        centroid = np.where(silent | (total <= 0), 0.0, (power @ freq) / np.where(total > 0, total, 1.0))
        duration = n / sample_rate
        ends = (starts + lengths) / sample_rate

        attr = np.zeros((count, 384), dtype=np.float32)
        columns = {
            "hello.level.rms_db": np.clip(db / 30.0 + 1.0, -1.0, 1.0),
            "hello.level.peak": np.clip(np.abs(frames).max(axis=1), 0.0, 1.0),
            "hello.shape.zcr": crossings / np.maximum(lengths - 1, 1),
            "hello.shape.dc": np.clip(frames.sum(axis=1) / lengths, -1.0, 1.0),
            "hello.spec.centroid": np.clip(centroid, 0.0, 1.0),
            "hello.time.position": np.clip((starts / sample_rate + ends) / 2.0 / duration, 0.0, 1.0),
        }
        for slot, values in columns.items():
            attr[:, SCHEMA.index(slot)] = values
        time = np.stack([starts / sample_rate, ends], axis=1)
        return Encoding(emb.astype(np.float32), attr, {"time": time})

    @classmethod
    def sample_inputs(cls) -> Any:
        """Silence, tones and noise, float32 or int16 PCM, 1..2000 samples at 100 Hz..48 kHz."""
        from hypothesis import strategies as st
        from hypothesis.extra.numpy import arrays

        @st.composite
        def samples(draw: Any) -> Sample:
            rate = draw(st.sampled_from([100.0, 8000.0, 16000.0, 44100.0]) | st.floats(100.0, 48000.0))
            n = draw(st.integers(1, 2000))
            kind = draw(st.sampled_from(["silence", "tone", "noise", "pcm"]))
            if kind == "silence":
                data = np.zeros(n, dtype=draw(st.sampled_from([np.float32, np.int16])))
            elif kind == "tone":
                freq = draw(st.floats(0.0, rate / 2))
                amp = draw(st.floats(0.0, 1.0))
                data = (amp * np.sin(2 * np.pi * freq * np.arange(n) / rate)).astype(np.float32)
            elif kind == "noise":
                data = draw(arrays(np.float32, n, elements=st.floats(-1, 1, width=32)))
            else:
                data = draw(arrays(np.int16, n))
            return Sample(data, {"sample_rate": rate})

        return samples()

    def invalid_inputs(self, valid: Sample) -> list[tuple[str, Sample]]:
        """The defaults plus out-of-range units, a list instead of an array and a huge float signal."""
        cases = super().invalid_inputs(valid)
        for rate in (0.0, -8000.0, float("nan"), 1e9):
            cases.append(("bad_units", Sample(valid.data, {"sample_rate": rate}, valid.source)))
        cases.append(("wrong_type", Sample(list(np.asarray(valid.data).tolist()), valid.units, valid.source)))
        cases.append(("out_of_range", Sample(np.full(4, 1e6, dtype=np.float64), valid.units, valid.source)))
        return cases
