"""Templates of a generated plugin package (``string.Template``: ``${name}``, ``${cls}`` ...).

Placeholders: ``name`` (modality name, also the slot prefix), ``dist`` (v22sdk-NAME),
``package`` (v22sdk_NAME), ``cls`` (class name), ``zone``, ``input_kind``.
Every generated tokenizer normalises its embedding rows in ``_unit_rows``; the scaffold's own
tests break that function on purpose and expect the generated tests to fail.
"""

PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "${dist}"
version = "0.1.0"
description = "The ${name} modality for v22sdk (${zone} zone)"
readme = "README.md"
requires-python = ">=3.10"
# numpy, attrs, hypothesis and pytest come with v22sdk.
dependencies = ["v22sdk>=0.1"]

# This entry point is how v22sdk finds the plugin: name = module with the @hookimpl.
[project.entry-points.v22sdk]
${name} = "${package}"

[tool.setuptools.packages.find]
where = ["src"]
"""

INIT = '''\
"""${dist}: the ${name} modality for v22sdk (${zone} zone).

Keep this module cheap to import: v22sdk imports it to list plugins.
"""

from v22sdk import hookimpl

from .modality import ${cls}

__version__ = "0.1.0"
__all__ = ["${cls}"]


@hookimpl
def v22sdk_register_modalities():
    return [${cls}]
'''

_COMMON = '''\
SEED = 12345  # seed of the fixed projection: changing it changes every token
#: Largest accepted |value|: beyond it the squares in the statistics overflow to inf and NaN.
MAX_ABS = 1e150


@functools.cache
def _projection(rows: int, cols: int) -> np.ndarray:
    """A fixed (rows, cols) matrix with orthonormal columns (QR of a seeded Gaussian, signs fixed)."""
    q, r = np.linalg.qr(np.random.default_rng(SEED).standard_normal((rows, cols)))
    return q * np.sign(np.diag(r))


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    """(N, 256) float64 -> float32 rows of unit L2 norm; an all-zero row gets a fixed unit vector."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    zero = norms[:, 0] < 1e-12
    fallback = np.full(vectors.shape[1], 1.0 / np.sqrt(vectors.shape[1]))
    rows = np.where(zero[:, None], fallback[None, :], vectors / np.where(zero[:, None], 1.0, norms))
    return rows.astype(np.float32)
'''

_VISION = '''\
"""The ${name} modality: a 2-D array (H, W) -> one token in the ${zone} zone.

emb: the array area-averaged onto a 16x16 grid, made zero-mean and unit-std, projected by a
fixed seeded orthogonal matrix and L2-normalised. attr: the ``${name}.*`` slots below.
Replace the statistics with the features of your signal; keep the contract (the kit checks it).
"""

from __future__ import annotations

import functools

import attrs
import numpy as np

from v22sdk import AttributeSchema, Encoding, InputError, InputSpec, Modality, Sample
from v22sdk.decoding import load_npy

GRID = 16

SCHEMA = AttributeSchema.build("${zone}", [
    ("${name}.mean", "mean value of the array", "tanh(mean)"),
    ("${name}.std", "standard deviation of the array", "x / (1 + x)"),
    ("${name}.range", "max - min of the array", "x / (1 + x)"),
    ("${name}.gradient", "mean absolute difference between neighbours (texture, edges)", "x / (1 + x)"),
    ("${name}.lr_balance", "mean of the left half minus mean of the right half", "tanh(difference)"),
])

${common}

@attrs.frozen
class ${cls}(Modality):
    """(H, W) arrays of integers or floats -> one ${zone}-zone token."""

    name = "${name}"
    extensions = (".npy",)
    schema = SCHEMA
    input_spec = InputSpec(kind="array", dtypes=("u", "i", "f"), ndim=(2,))

    def load(self, path) -> Sample:
        # header first: the array's size is checked against the decode budget before it is
        # read, and an object array (a pickle) is refused, never loaded
        return Sample(load_npy(path), {}, str(path))

    def encode(self, data, **units) -> Encoding:
        source = "<${name} array>"
        if not isinstance(data, np.ndarray) or data.dtype.kind not in "uif":
            raise InputError(source, f"expected a numeric numpy array, got {getattr(data, 'dtype', type(data).__name__)}")
        if data.ndim != 2 or data.size == 0:
            raise InputError(source, f"expected a non-empty 2-D (H, W) array, got shape {data.shape}")
        x = data.astype(np.float64)
        if not np.isfinite(x).all():
            raise InputError(source, "the array holds NaN or infinite values")
        if np.abs(x).max() > MAX_ABS:  # their squares would overflow the statistics to inf and NaN
            raise InputError(source, f"values beyond ±{MAX_ABS:g} are not supported")
        h, w = x.shape
        # Area-average onto the grid: each pixel adds to the cell it falls in.
        cell = ((np.arange(h) * GRID) // h)[:, None] * GRID + ((np.arange(w) * GRID) // w)[None, :]
        total = np.bincount(cell.ravel(), weights=x.ravel(), minlength=GRID * GRID)
        count = np.bincount(cell.ravel(), minlength=GRID * GRID)
        grid = np.where(count > 0, total / np.maximum(count, 1), 0.0)
        grid[count == 0] = grid[count > 0].mean()
        grid = grid - grid.mean()
        std = grid.std()
        grid = grid / std if std > 1e-12 else np.zeros_like(grid)
        emb = _unit_rows((_projection(256, GRID * GRID) @ grid)[None, :])
        spread = float(x.std())
        rng = float(x.max() - x.min())
        diffs = [np.abs(np.diff(x, axis=a)).ravel() for a in (0, 1) if x.shape[a] > 1]
        grad = float(np.concatenate(diffs).mean()) if diffs else 0.0
        lr = float(x[:, : w // 2].mean() - x[:, (w + 1) // 2:].mean()) if w > 1 else 0.0
        attr = SCHEMA.vector({
            "${name}.mean": np.tanh(x.mean()), "${name}.std": spread / (1 + spread),
            "${name}.range": rng / (1 + rng), "${name}.gradient": grad / (1 + grad),
            "${name}.lr_balance": np.tanh(lr),
        })
        return Encoding(emb=emb, attr=attr[None, :], offsets={"box": np.array([[0, 0, w, h]], dtype=np.int64)})

    @classmethod
    def sample_inputs(cls):
        """Valid inputs for the contract kit: 2-D arrays of every accepted dtype."""
        from hypothesis import strategies as st
        from hypothesis.extra import numpy as hnp

        shapes = hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=32)
        arrays = st.one_of(
            hnp.arrays(np.uint8, shapes),
            hnp.arrays(np.int32, shapes, elements=st.integers(-1000, 1000)),
            hnp.arrays(np.float32, shapes, elements=st.floats(-100, 100, width=32)),
        )
        return arrays.map(lambda a: Sample(a, {}, "<${name} array>"))
'''

_AUDIO = '''\
"""The ${name} modality: a 1-D signal plus its sample rate -> one ${zone}-zone token per segment.

Segments are ``segment_s`` seconds (the last one may be shorter). emb: each segment resampled to
256 points, its log power spectrum (129 bins, as shares of the segment's power) made zero-mean
and unit-std, projected by a fixed seeded orthogonal matrix and L2-normalised. attr: the ``${name}.*`` slots below. offsets["time"]: segment start/end in seconds.
"""

from __future__ import annotations

import functools

import attrs
import numpy as np

from v22sdk import AttributeSchema, Encoding, InputError, InputSpec, Modality, Sample, Unit
from v22sdk.decoding import load_npz

POINTS = 256
BINS = POINTS // 2 + 1

SCHEMA = AttributeSchema.build("${zone}", [
    ("${name}.rms", "root mean square of the segment", "x / (1 + x)"),
    ("${name}.peak", "largest absolute value in the segment", "x / (1 + x)"),
    ("${name}.mean", "mean of the segment (offset)", "tanh(mean)"),
    ("${name}.zero_cross", "zero-crossing rate of the mean-removed segment", "crossings per sample, in [0, 1]"),
])

${common}

@attrs.frozen
class ${cls}(Modality):
    """1-D signals -> one ${zone}-zone token per ``segment_s`` seconds."""

    name = "${name}"
    extensions = (".npz",)
    schema = SCHEMA
    input_spec = InputSpec(kind="array", dtypes=("u", "i", "f"), ndim=(1,),
                           units=(Unit("sample_rate", "Hz", 1.0, 1e6),))
    segment_s: float = 0.5

    def load(self, path) -> Sample:
        """An ``.npz`` holding ``signal`` (1-D) and ``sample_rate`` (Hz): the file carries its unit."""
        arrays = load_npz(path)  # headers first, checked against the decode budget; no pickles
        missing = [k for k in ("signal", "sample_rate") if k not in arrays]
        if missing:
            raise InputError(str(path), f"an .npz with arrays 'signal' and 'sample_rate' is needed; missing {missing}")
        signal, rate = arrays["signal"], arrays["sample_rate"]
        if rate.size != 1:
            raise InputError(str(path), f"'sample_rate' must be one number, got shape {rate.shape}")
        return Sample(signal, {"sample_rate": float(rate.ravel()[0])}, str(path))

    def encode(self, data, *, sample_rate) -> Encoding:
        source = "<${name} signal>"
        if not isinstance(data, np.ndarray) or data.dtype.kind not in "uif":
            raise InputError(source, f"expected a numeric numpy array, got {getattr(data, 'dtype', type(data).__name__)}")
        if data.ndim != 1 or data.size == 0:
            raise InputError(source, f"expected a non-empty 1-D signal, got shape {data.shape}")
        x = data.astype(np.float64)
        if not np.isfinite(x).all():
            raise InputError(source, "the signal holds NaN or infinite values")
        if np.abs(x).max() > MAX_ABS:  # their squares would overflow the statistics to inf and NaN
            raise InputError(source, f"values beyond ±{MAX_ABS:g} are not supported")
        seg = max(1, int(round(self.segment_s * sample_rate)))
        starts = np.arange(0, x.size, seg)
        ends = np.minimum(starts + seg, x.size)
        # Pad to whole segments; every statistic below only looks at each segment's own samples.
        n = starts.size
        padded = np.zeros(n * seg)
        padded[: x.size] = x
        frames = padded.reshape(n, seg)
        valid = (np.arange(seg)[None, :] < (ends - starts)[:, None])
        length = valid.sum(axis=1)
        # Resample each segment (its own samples only) to POINTS by linear interpolation.
        pos = np.linspace(0.0, 1.0, POINTS)[None, :] * (length[:, None] - 1)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, length[:, None] - 1)
        frac = pos - lo
        rows = np.arange(n)[:, None]
        res = frames[rows, lo] * (1 - frac) + frames[rows, hi] * frac
        # Log power spectrum, not the waveform: two tones of one pitch but different phase must
        # be near neighbours. Shares of the segment's power, so loudness is left to the slots.
        power = np.abs(np.fft.rfft(res - res.mean(axis=1, keepdims=True), axis=1)) ** 2   # (n, POINTS // 2 + 1)
        total = power.sum(axis=1, keepdims=True)
        spec = np.log10(1e-6 + power / np.where(total > 1e-300, total, 1.0))
        spec = spec - spec.mean(axis=1, keepdims=True)
        std = spec.std(axis=1, keepdims=True)
        spec = np.where(std > 1e-12, spec / np.where(std > 1e-12, std, 1.0), 0.0)
        emb = _unit_rows(spec @ _projection(256, BINS).T)
        mean = (frames * valid).sum(axis=1) / length
        rms = np.sqrt((frames ** 2 * valid).sum(axis=1) / length)
        peak = np.abs(frames * valid).max(axis=1)
        centred = np.where(valid, frames - mean[:, None], 0.0)
        signs = np.signbit(centred)
        crossings = ((signs[:, 1:] != signs[:, :-1]) & valid[:, 1:]).sum(axis=1) / np.maximum(length - 1, 1)
        attr = np.zeros((n, 384), dtype=np.float32)
        for slot, values in (("rms", rms / (1 + rms)), ("peak", peak / (1 + peak)), ("mean", np.tanh(mean)),
                             ("zero_cross", crossings)):
            attr[:, SCHEMA.index(f"${name}.{slot}")] = values
        time = np.stack([starts, ends], axis=1) / sample_rate
        return Encoding(emb=emb, attr=attr, offsets={"time": time.astype(np.float64)})

    @classmethod
    def sample_inputs(cls):
        """Valid inputs for the contract kit: 1-D signals of every accepted dtype and a sample rate."""
        from hypothesis import strategies as st
        from hypothesis.extra import numpy as hnp

        lengths = st.integers(1, 400)
        signals = st.one_of(
            hnp.arrays(np.int16, lengths, elements=st.integers(-32768, 32767)),
            hnp.arrays(np.float32, lengths, elements=st.floats(-1, 1, width=32)),
            hnp.arrays(np.float64, lengths, elements=st.floats(-10, 10)),
        )
        return st.builds(lambda s, sr: Sample(s, {"sample_rate": sr}, "<${name} signal>"),
                         signals, st.sampled_from([100.0, 400.0, 1000.0]))
'''

_LANGUAGE = '''\
"""The ${name} modality: text -> one ${zone}-zone token per whitespace-separated word.

emb: the word's character trigrams (with boundary marks) hashed (CRC-32) into 1024 counts,
projected by a fixed seeded matrix with orthonormal columns and L2-normalised.
attr: the ``${name}.*`` slots below. offsets["char"]: index of the word's first character.
"""

from __future__ import annotations

import functools
import os
import re
import zlib

import attrs
import numpy as np

from v22sdk import AttributeSchema, Encoding, InputError, InputSpec, Modality, Sample
from v22sdk.decoding import check_budget

BUCKETS = 1024
_WORD = re.compile(r"\\S+")

SCHEMA = AttributeSchema.build("${zone}", [
    ("${name}.length", "number of characters in the word", "min(length / 20, 1)"),
    ("${name}.upper", "fraction of upper-case characters", "fraction in [0, 1]"),
    ("${name}.digit", "fraction of digits", "fraction in [0, 1]"),
    ("${name}.punct", "fraction of characters that are neither letters nor digits", "fraction in [0, 1]"),
    ("${name}.position", "position of the word in the text", "index / max(1, words - 1), in [0, 1]"),
])

${common}

@attrs.frozen
class ${cls}(Modality):
    """Text -> one ${zone}-zone token per whitespace-separated word."""

    name = "${name}"
    extensions = (".txt",)
    schema = SCHEMA
    input_spec = InputSpec(kind="text")

    def load(self, path) -> Sample:
        try:
            with open(path, encoding="utf-8") as fh:
                # a word token per 2 bytes at most, 2.5 KiB each: refuse before reading what cannot fit
                check_budget(str(path), os.fstat(fh.fileno()).st_size * 1300, "the text file")
                return Sample(fh.read(), {}, str(path))
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(str(path), f"cannot read UTF-8 text: {exc}") from None

    def encode(self, data, **units) -> Encoding:
        source = "<${name} text>"
        if not isinstance(data, str):
            raise InputError(source, f"expected str, got {type(data).__name__}")
        words = [(m.start(), m.group()) for m in _WORD.finditer(data)]
        if not words:
            raise InputError(source, "the text holds no word (it is empty or only whitespace)")
        n = len(words)
        counts = np.zeros((n, BUCKETS))
        for i, (_, word) in enumerate(words):  # hashing is per string; the maths below is batched
            padded = f"<{word}>"
            for j in range(len(padded) - 2):
                counts[i, zlib.crc32(padded[j:j + 3].encode("utf-8", "surrogatepass")) % BUCKETS] += 1
        emb = _unit_rows(counts @ _projection(BUCKETS, 256))
        length = np.array([len(w) for _, w in words], dtype=np.float64)
        def share(test):
            return np.array([sum(map(test, w)) for _, w in words], dtype=np.float64) / length
        attr = np.zeros((n, 384), dtype=np.float32)
        for slot, values in (("length", np.minimum(length / 20, 1)), ("upper", share(str.isupper)),
                             ("digit", share(str.isdigit)), ("punct", share(lambda c: not c.isalnum())),
                             ("position", np.arange(n) / max(1, n - 1))):
            attr[:, SCHEMA.index(f"${name}.{slot}")] = values
        return Encoding(emb=emb, attr=attr, offsets={"char": np.array([s for s, _ in words], dtype=np.int64)})

    @classmethod
    def sample_inputs(cls):
        """Valid inputs for the contract kit: texts with at least one word."""
        from hypothesis import strategies as st

        texts = st.text(min_size=1, max_size=60).filter(lambda t: t.split())
        return texts.map(lambda t: Sample(t, {}, "<${name} text>"))
'''

MODALITY = {
    zone: Template_text.replace("${common}", _COMMON)
    for zone, Template_text in (("vision", _VISION), ("audio", _AUDIO), ("language", _LANGUAGE))
}

TEST_CONTRACT = '''\
"""The v22sdk contract kit, one pytest item per check: pytest -v shows which rule broke."""

from v22sdk.testing import parametrize_with_checks

from ${package} import ${cls}

# A check your plugin cannot pass yet goes here, with the reason, e.g.
# {"check_offsets": "offsets are not written yet (issue #3)"}; it then reports as xfailed.
EXPECTED_FAILED_CHECKS: dict[str, str] = {}


@parametrize_with_checks([${cls}()], expected_failed_checks=EXPECTED_FAILED_CHECKS)
def test_contract(modality, check):
    check(modality)
'''

_TEST_TOKENS_HEAD = '''\
"""Value tests of the ${name} tokenizer: known inputs, known answers. Extend them with yours."""

import numpy as np
import pytest

from v22sdk import InputError

from ${package} import ${cls}


'''

TEST_TOKENS = {
    "vision": _TEST_TOKENS_HEAD
    + """\
def test_one_unit_norm_token_with_named_values():
    x = np.zeros((8, 8), dtype=np.float32)
    x[:, :4] = 2.0  # left half brighter
    tokens = ${cls}().tokenize(x)
    assert len(tokens) == 1
    assert np.linalg.norm(tokens.emb[0].astype(np.float64)) == pytest.approx(1.0, abs=1e-6)
    values = ${cls}.schema.values(tokens.attr[0])
    assert values["${name}.lr_balance"] == pytest.approx(np.tanh(2.0), abs=1e-6)
    assert values["${name}.mean"] == pytest.approx(np.tanh(1.0), abs=1e-6)


def test_bad_input_is_a_typed_error():
    with pytest.raises(InputError):
        ${cls}().tokenize(np.zeros((2, 2, 2, 2)))


def test_a_file_of_python_objects_is_refused_without_suggesting_to_unpickle_it(tmp_path):
    np.save(tmp_path / "p.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match="never loads") as err:
        ${cls}().tokenize_file(tmp_path / "p.npy")
    assert "allow_pickle" not in str(err.value) and "pickle.load" not in str(err.value)
""",
    "audio": _TEST_TOKENS_HEAD
    + """\
def test_one_unit_norm_token_per_segment():
    sr = 1000.0
    x = np.sin(2 * np.pi * 50 * np.arange(1200) / sr)
    tokens = ${cls}().tokenize(x, sample_rate=sr)
    assert len(tokens) == 3  # 0.5 s segments: 0-0.5, 0.5-1.0, 1.0-1.2 s
    assert tokens.offsets["time"].tolist() == [[0.0, 0.5], [0.5, 1.0], [1.0, 1.2]]
    assert np.allclose(np.linalg.norm(tokens.emb.astype(np.float64), axis=1), 1.0, atol=1e-6)
    rms = ${cls}.schema.values(tokens.attr[0])["${name}.rms"]
    assert rms == pytest.approx(np.sqrt(0.5) / (1 + np.sqrt(0.5)), abs=1e-3)


def test_missing_sample_rate_is_a_typed_error():
    with pytest.raises(InputError):
        ${cls}().tokenize(np.zeros(10))


def test_a_file_of_python_objects_is_refused_without_suggesting_to_unpickle_it(tmp_path):
    np.savez(tmp_path / "p.npz", signal=np.array([{"x": 1}], dtype=object), sample_rate=1000.0)
    with pytest.raises(InputError, match="never loads") as err:
        ${cls}().tokenize_file(tmp_path / "p.npz")
    assert "allow_pickle" not in str(err.value) and "pickle.load" not in str(err.value)


def test_npz_files_carry_their_sample_rate(tmp_path):
    x = np.sin(2 * np.pi * 50 * np.arange(700) / 1000.0)
    np.savez(tmp_path / "a.npz", signal=x, sample_rate=1000.0)
    from_file = ${cls}().tokenize_file(tmp_path / "a.npz")
    direct = ${cls}().tokenize(x, sample_rate=1000.0)
    assert np.array_equal(from_file.emb, direct.emb) and np.array_equal(from_file.attr, direct.attr)
    assert from_file.source == str(tmp_path / "a.npz")
    np.savez(tmp_path / "b.npz", signal=x)  # no sample rate in the file
    with pytest.raises(InputError, match="sample_rate"):
        ${cls}().tokenize_file(tmp_path / "b.npz")
""",
    "language": _TEST_TOKENS_HEAD
    + """\
def test_one_unit_norm_token_per_word():
    tokens = ${cls}().tokenize("Hello world 42")
    assert len(tokens) == 3
    assert tokens.offsets["char"].tolist() == [0, 6, 12]
    assert np.allclose(np.linalg.norm(tokens.emb.astype(np.float64), axis=1), 1.0, atol=1e-6)
    assert ${cls}.schema.values(tokens.attr[2])["${name}.digit"] == 1.0


def test_empty_text_is_a_typed_error():
    with pytest.raises(InputError):
        ${cls}().tokenize("   ")
""",
}

README = """\
# ${dist}

The `${name}` modality for v22sdk: ${input_kind} → 640-D tokens
whose attribute slots live in the **${zone}** zone.

Generated by `v22sdk new-plugin ${name} --zone ${zone}`. The tokenizer in
`src/${package}/modality.py` is simple but real (a fixed seeded projection plus a few named
statistics); replace its features with those of your signal and keep the contract.

## Install and check

```bash
pip install -e .
python -c "from v22sdk import Registry; print(Registry().names('modalities'))"   # lists '${name}'
pytest tests            # runs the v22sdk contract kit: one item per check
```

## Train and run on a toy data set

```bash
python examples/make_manifest.py data      # seeded toy files + data/manifest.jsonl + a held-out data/query.*
v22sdk train data/manifest.jsonl --preset tiny --epochs 40 -o ${name}.pt
v22sdk run --modality ${name} --checkpoint ${name}.pt data/query.*
```

`examples/make_manifest.py` writes a small, learnable set in this plugin's own file format
(two classes); replace its `make` with real recordings of your signal.

`tests/test_contract.py` runs every contract check on `${cls}()`. A check you cannot pass yet
goes into `EXPECTED_FAILED_CHECKS` with its reason; it then shows as xfailed (and turns red
when it starts passing, so the entry is removed).

## Slots

See `SCHEMA` in `src/${package}/modality.py`; `${cls}.schema.markdown_table()` prints them.

## Publish

`python -m build` and upload the wheel; users `pip install ${dist}` and v22sdk finds the
modality through the `v22sdk` entry point in `pyproject.toml`.
"""

# -- examples/make_manifest.py: a seeded toy data set in the plugin's own file format ----------
# One head (what the script is) + one zone part (how an example is made and saved) + one tail
# (the manifest writer, shared). The manifest is what `v22sdk train` reads (v22sdk.engine.data):
# one {"input", "modality", "target"} per line, ``input`` a path relative to the manifest, or,
# for a text modality, the text itself.

_MANIFEST_HEAD = '''\
"""Write a small, learnable toy data set for the ${name} modality.

    python examples/make_manifest.py DIR

DIR receives ${what},
``manifest.jsonl`` (one {"input", "modality": "${name}", "target"} per line: what
``v22sdk train`` reads) and ``${query}``, one held-out input of class ${first!r}. The data are
seeded, so every run writes the same bytes. Replace ``make`` with real recordings of your signal.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

MODALITY = "${name}"
SEED = 0
PER_CLASS = 24
'''

_MANIFEST_VISION = '''\
SUFFIX = ".npy"
LABELS = ("亮", "暗")  # bright, dark
INLINE = False  # manifest inputs are file paths


def make(rng: np.random.Generator, label: str) -> np.ndarray:
    """A (12, 12) float32 scene, a warm disc on a cooler ground, lit at a level in [0.7, 1] (bright)
    or [0.1, 0.3] (dark), plus a little noise. One scene for all: only the brightness tells the
    classes apart, so nothing else can be learnt by heart."""
    low, high = (0.7, 1.0) if label == LABELS[0] else (0.1, 0.3)
    y, x = np.mgrid[:12, :12] - 5.5
    scene = 0.6 + 0.4 * np.exp(-(x ** 2 + y ** 2) / 12.0)
    return (rng.uniform(low, high) * scene + rng.normal(0.0, 0.01, scene.shape)).astype(np.float32)


def save(path: Path, data: np.ndarray) -> None:
    np.save(path, data)
'''

_MANIFEST_AUDIO = '''\
SUFFIX = ".npz"
LABELS = ("低", "高")  # low tone, high tone
INLINE = False  # manifest inputs are file paths
SAMPLE_RATE = 1000.0  # Hz


def make(rng: np.random.Generator, label: str) -> np.ndarray:
    """1 s of float32 signal at SAMPLE_RATE: a 20-40 Hz (low) or 150-250 Hz (high) tone plus noise."""
    low, high = (20.0, 40.0) if label == LABELS[0] else (150.0, 250.0)
    t = np.arange(int(SAMPLE_RATE)) / SAMPLE_RATE
    tone = 0.5 * np.sin(2 * np.pi * rng.uniform(low, high) * t + rng.uniform(0, 2 * np.pi))
    return (tone + rng.normal(0.0, 0.02, t.size)).astype(np.float32)


def save(path: Path, data: np.ndarray) -> None:
    np.savez(path, signal=data, sample_rate=np.float64(SAMPLE_RATE))  # the file carries its unit
'''

_MANIFEST_LANGUAGE = '''\
SUFFIX = ".txt"
LABELS = ("数", "词")  # numbers, words
# v22sdk train reads a text modality's manifest "input" as the text itself, so the training
# examples live in the manifest; only the held-out query is a file (v22sdk run reads files).
INLINE = True


def make(rng: np.random.Generator, label: str) -> str:
    """3-6 space-separated words: digit strings (numbers) or lower-case letter strings (words)."""
    chars = "0123456789" if label == LABELS[0] else "abcdefghijklmnopqrstuvwxyz"
    sizes = (2, 6) if label == LABELS[0] else (3, 9)
    words = ["".join(rng.choice(list(chars), size=rng.integers(*sizes))) for _ in range(rng.integers(3, 7))]
    return " ".join(words)


def save(path: Path, data: str) -> None:
    path.write_text(data + "\\n", encoding="utf-8")
'''

_MANIFEST_TAIL = """\


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=f"Write a toy {MODALITY} data set: files, manifest.jsonl, query{SUFFIX}.")
    parser.add_argument("dir", type=Path, help="output folder (created; files of the same names are replaced)")
    out = parser.parse_args(argv).dir
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    lines = []
    for i in range(2 * PER_CLASS):
        label = LABELS[i % 2]
        data = make(rng, label)
        if INLINE:
            source = data
        else:
            source = f"{i:03d}{SUFFIX}"
            save(out / source, data)
        lines.append(json.dumps({"input": source, "modality": MODALITY, "target": label}, ensure_ascii=False))
    manifest = out / "manifest.jsonl"
    manifest.write_text("\\n".join(lines) + "\\n", encoding="utf-8")
    query = out / f"query{SUFFIX}"
    save(query, make(rng, LABELS[0]))
    kind = "inline texts" if INLINE else f"{SUFFIX} files"
    print(f"wrote {len(lines)} examples ({PER_CLASS} {LABELS[0]}, {PER_CLASS} {LABELS[1]}; {kind}) to {manifest}")
    print(f"held-out query: {query} (class {LABELS[0]})")


if __name__ == "__main__":
    main()
"""

#: zone -> (description of the files written, query file name, the query's class)
_MANIFEST_FILES = {
    "vision": ("48 ``.npy`` arrays (12x12 float32; 24 bright 亮, 24 dark 暗)", "query.npy", "亮", _MANIFEST_VISION),
    "audio": (
        "48 ``.npz`` files (``signal``: 1 s at 1000 Hz, ``sample_rate``; 24 low tones 低, 24 high 高)",
        "query.npz",
        "低",
        _MANIFEST_AUDIO,
    ),
    "language": (
        "no input files: the 48 texts (24 of numbers 数, 24 of words 词) go into the manifest",
        "query.txt",
        "数",
        _MANIFEST_LANGUAGE,
    ),
}

MAKE_MANIFEST = {
    zone: _MANIFEST_HEAD.replace("${what}", what).replace("${query}", query).replace("${first!r}", repr(first))
    + "\n"
    + body
    + _MANIFEST_TAIL
    for zone, (what, query, first, body) in _MANIFEST_FILES.items()
}
