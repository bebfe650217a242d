"""The built-in ``audio`` modality: sound -> one token per 0.5 s segment.

Input: a WAV/FLAC/OGG file, or a numpy array of samples with an explicit ``sample_rate`` (Hz):
shape (n,) mono or (n, channels) with channels last; integer dtypes are read as PCM (full scale =
2**(bits-1), unsigned offset by 2**(bits-1)), floats as full scale 1.0. Channels are averaged to
mono and resampled to 16 kHz. See docs/audio-modality.md for every slot and constant.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import attrs
import numpy as np

from v22sdk import Encoding, InputError, InputSpec, Modality, Sample, TokenBuffer, Unit

from .slots import SCHEMA

_SOURCE = "<audio array>"


@attrs.frozen
class AudioModality(Modality):
    """Audio tokenizer: (n,) or (n, ch) samples + sample_rate -> N = ceil(seconds / 0.5) tokens.

    ``emb`` (N, 256): the segment's 512-bin magnitude spectrum through a fixed orthogonal 512->256
    projection; ``attr`` (N, 384): 128 named slots ``aud.*`` in attr 256..383; ``offsets["time"]``
    (N, 2) float64: start and end of each segment in seconds. No configuration fields: the analysis
    constants are fixed so that tokens from different runs are comparable.
    """

    name: ClassVar[str] = "audio"
    #: the tokenizer's version: bumped whenever the tokens of some input change. 0.2.0: the
    #: analysis range (bins 0-1 left out, a gate 60 dB below the clip's strongest bin subtracted),
    #: the embedding's floor there too, silence = the flat spectrum: storage noise no longer reaches
    #: the tokens (docs/audio-modality.md, "The analysis range"). 0.3.0: on an 8- to 12-bit sample
    #: lattice the gate is raised above the lattice's rounding noise (finer samples' tokens unchanged)
    version: ClassVar[str] = "0.3.0"
    extensions: ClassVar[tuple[str, ...]] = (".wav", ".flac", ".ogg")
    priority: ClassVar[int] = 10  # built-in: keeps its extensions when a plugin also claims them (plugins.py)
    schema: ClassVar = SCHEMA
    #: a lower source rate keeps less of the band (v22sdk.engine.fidelity)
    fidelity_slots: ClassVar[tuple[str, ...]] = ("aud.clip.source_rate",)
    #: every file is mixed to mono before the analysis: the channel count says only how it was
    #: stored, so an engine reads it as mono (v22sdk.engine.canonical)
    storage_slots: ClassVar[Mapping[str, float]] = MappingProxyType({"aud.clip.channels": 0.0})
    input_spec: ClassVar[InputSpec] = InputSpec(
        kind="array",
        dtypes=("u", "i", "f"),
        ndim=(1, 2),
        units=(Unit("sample_rate", "Hz", 1_000.0, 384_000.0, "samples per second of the input"),),
        description="(n,) mono or (n, channels) samples, channels last; ints are PCM, floats full scale 1.0",
    )

    def load(self, path: str | os.PathLike[str]) -> Sample:
        from .decode import read

        data, rate = read(path)
        return Sample(data, {"sample_rate": float(rate)}, str(path))

    def encode(self, data: Any, **units: float) -> Encoding:
        from v22sdk import UnitsError
        from v22sdk.blas import single_blas_thread

        from .analysis import analyse
        from .frontend import check_rate, to_float

        if units.get("sample_rate") is None:
            raise UnitsError(_SOURCE, "missing sample_rate (Hz): the audio modality needs it explicitly")
        rate = check_rate(float(units["sample_rate"]), _SOURCE)
        x = to_float(data, _SOURCE)
        try:
            with single_blas_thread():  # matrix products: the one-thread bits, whatever the caller's setting
                emb, attr, time = analyse(x, rate)
        except MemoryError:
            raise InputError(_SOURCE, f"too long to analyse in memory ({x.shape[0]} samples)") from None
        return Encoding(emb=emb, attr=attr, offsets={"time": time})

    def tokenize(self, data: Any, *, out: TokenBuffer | None = None, **units: float):
        """As :meth:`Modality.tokenize`; errors about a loaded file name the file, not "<audio array>"."""
        try:
            return super().tokenize(data, out=out, **units)
        except InputError as exc:
            if isinstance(data, Sample) and data.source and exc.source == _SOURCE:
                raise type(exc)(data.source, exc.problem) from None
            raise

    @classmethod
    def sample_inputs(cls) -> Any:
        """Hypothesis strategy of valid Samples: noise, tones, silence, clipped tones, clicks;
        1 sample to 3 s; rates 8-96 kHz; uint8/int16/int32/float32/float64; 1 or 2 channels."""
        from .strategies import samples

        return samples()

    def invalid_inputs(self, valid: Sample) -> list[tuple[str, Sample]]:
        cases = super().invalid_inputs(valid)
        data = np.asarray(valid.data)
        units = valid.units
        cases.append(("channels_first", Sample(np.zeros((2, 4000), dtype=np.float32), units, valid.source)))
        cases.append(("non_integer_rate", Sample(data, {**units, "sample_rate": 44_100.5}, valid.source)))
        cases.append(("rate_out_of_range", Sample(data, {**units, "sample_rate": 10.0}, valid.source)))
        cases.append(("bool_dtype", Sample(np.ones(data.shape, dtype=bool), units, valid.source)))
        return cases
