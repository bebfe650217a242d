"""A tiny modality used by the core tests (the built-ins have their own tests)."""

from __future__ import annotations

import attrs
import numpy as np

from v22sdk import AttributeSchema, Encoding, InputError, InputSpec, Modality, Sample, Unit

SCHEMA = AttributeSchema.build(
    "audio",
    [
        ("ramp.level", "mean level of the segment", "tanh(mean)"),
        ("ramp.spread", "standard deviation of the segment", "tanh(std)"),
    ],
)


@attrs.frozen
class RampModality(Modality):
    """Signal in, one token per `window` samples: emb = normalised resampled segment."""

    name = "ramp"
    extensions = (".ramp",)
    schema = SCHEMA
    input_spec = InputSpec(kind="array", dtypes=("f", "i"), ndim=(1,), units=(Unit("sample_rate", "Hz", 1, 1e6),))
    window: int = 8

    def load(self, path):
        try:
            data = np.loadtxt(path, dtype=np.float64, ndmin=1)
        except (ValueError, OSError) as exc:  # OSError: missing, a folder, unreadable
            raise InputError(str(path), f"not a readable list of numbers: {exc}") from None
        return Sample(data, {"sample_rate": 100.0}, str(path))

    def encode(self, data, *, sample_rate):
        x = np.asarray(data)
        if x.dtype.kind not in "fi" or x.ndim != 1:
            raise InputError("<ramp>", f"need a 1-D real array, got {x.dtype} rank {x.ndim}")
        if x.size == 0 or not np.isfinite(x).all():
            raise InputError("<ramp>", "empty or non-finite")
        if np.abs(x).max() > 1e100:  # the projection would overflow to inf and NaN
            raise InputError("<ramp>", "values beyond ±1e100")
        n = -(-x.size // self.window)
        seg = np.zeros((n, self.window))
        seg.flat[: x.size] = x
        rng = np.random.default_rng(0)
        proj = rng.standard_normal((self.window, 256))
        emb = seg @ proj + 1e-3
        emb /= np.linalg.norm(emb, axis=1, keepdims=True)
        attr = np.zeros((n, 384), np.float32)
        attr[:, SCHEMA.index("ramp.level")] = np.tanh(seg.mean(1))
        attr[:, SCHEMA.index("ramp.spread")] = np.tanh(seg.std(1))
        t0 = np.arange(n) * self.window / sample_rate
        t1 = np.minimum(t0 + self.window / sample_rate, x.size / sample_rate)  # the padded end is not input
        return Encoding(emb.astype(np.float32), attr, {"time": np.stack([t0, t1], 1)})

    @classmethod
    def sample_inputs(cls):
        from hypothesis import strategies as st
        from hypothesis.extra.numpy import arrays

        return arrays(np.float64, st.integers(1, 40), elements=st.floats(-3, 3)).map(
            lambda a: Sample(a, {"sample_rate": 100.0})
        )


def make_plugin(*classes):
    """A plugin object registering ``classes`` as modalities."""
    from v22sdk import hookimpl

    class Plugin:
        @hookimpl
        def v22sdk_register_modalities(self):
            return list(classes)

    return Plugin()
