"""The gaps the seventh pre-registered mutation round found, closed as general rules.

* files in every dtype: ``check_files`` saves, loads and tokenizes one of the kit's inputs in every
  dtype the modality tokenizes, not only the author's samples (which drew float32 and int16): a
  ``save`` that writes some dtype in a format ``load`` refuses shows on that dtype;
* save writes exactly its path: a name whose extension differs in case, and one with no
  extension, must be written as given (never with an extension added or changed) and load back;
* paths are not arrays: ``check_input_spec`` gives ``tokenize`` a str and a ``pathlib.Path`` that
  name a real file ``save`` wrote, which must be refused (only ``load``/``tokenize_file`` take paths);
* global random state: the fresh process of ``check_fresh_process`` seeds NumPy's global generator
  and Python's ``random`` with a value no one else uses before its first call, so tokens that depend
  on global random state (drawn once, consistent within a process) differ from the parent's;
* a level sweep: a constant at each of the 256 levels of an 8-bit sample, encoded once and judged
  by every rule, so a path taken for a narrow band of levels shows;
* sides at integer-type boundaries: 2**k - 1, 2**k and 2**k + 1 for k = 8 and 16 on each of the
  first two axes, where a size or index kept in the smallest integer type that holds it wraps.

Each rule is shown failing a small broken plugin of this file and the round-7 mutant that survived
it, and the reference plugins pass.
"""

from __future__ import annotations

import os
import random
import wave
from pathlib import Path

import numpy as np
import pytest

from v22sdk import Sample
from v22sdk.testing import checks
from v22sdk.testing._inputs import BOUNDARY_POWERS, ENCODED_ONCE, LEVEL_ELEMENTS, kit_inputs, level_inputs

from .test_kit_gaps import _run, references
from .test_kit_gaps_5 import _importable_mutant_class

hello = pytest.importorskip("v22sdk_hello.modality", reason="pip install -e contrib/v22sdk-hello")
vision = pytest.importorskip("v22sdk_vision.modality")
HelloModality = hello.HelloModality
VisionModality = vision.VisionModality

HELLO_BASE = Sample(np.linspace(-0.5, 0.5, 1999).astype(np.float32), {"sample_rate": 24_000.0})
VISION_BASE = Sample(np.random.default_rng(0).integers(0, 256, (40, 30, 3), dtype=np.uint8), {})


# -- the inputs -----------------------------------------------------------------------------------
def test_the_level_sweep_holds_every_8_bit_level_once_in_the_lowest_rank():
    vis = [ki for ki in kit_inputs(VisionModality(), [VISION_BASE]) if ki.family == "levels"]
    assert len(vis) == 256 and "levels" in ENCODED_ONCE
    assert sorted(int(ki.sample.data.flat[0]) for ki in vis) == list(range(256))
    for ki in vis:
        x = ki.sample.data
        assert x.dtype == np.uint8 and x.ndim == 2 and x.size <= LEVEL_ELEMENTS, ki.label  # a grey image
        assert (x == x.flat[0]).all()
    # hello declares "i" and "f", not "u": int8 levels, a mono signal
    found = level_inputs(HelloModality().input_spec, HELLO_BASE)
    assert [int(ki.sample.data[0]) for ki in found] == list(range(-128, 128))
    assert all(ki.sample.data.dtype == np.int8 and ki.sample.units == HELLO_BASE.units for ki in found)


def test_sides_at_integer_type_boundaries_on_each_of_the_first_two_axes():
    inputs = kit_inputs(VisionModality(), [VISION_BASE])
    for axis in (0, 1):
        sides = {
            ki.sample.data.shape[axis]
            for ki in inputs
            if "integer-type boundary" in ki.label and f"axis {axis}" in ki.label
        }
        assert sides == {2**p + d for p in BOUNDARY_POWERS for d in (-1, 0, 1)}, (axis, sorted(sides))
    long_sides = [ki for ki in inputs if "integer-type boundary" in ki.label and ki.sample.data.shape[0] == 2**16]
    assert long_sides and all(ki.family == "long" and ki.sample.data.size <= 2**20 for ki in long_sides)
    signal = [
        ki.sample.data.size for ki in kit_inputs(HelloModality(), [HELLO_BASE]) if "integer-type boundary" in ki.label
    ]
    assert sorted(signal) == sorted(2**p + d for p in BOUNDARY_POWERS for d in (-1, 0, 1))  # one axis only


def test_the_level_sweep_is_not_batched_or_tokenized_again():
    inputs = kit_inputs(VisionModality(), [VISION_BASE])
    accepted = [ki for ki in inputs if ki.family != "invalid"]
    assert not any(ki.family in ENCODED_ONCE for batch in checks._edge_batches(accepted) for ki in batch)


# -- broken plugins of this file ------------------------------------------------------------------
class Float64SavedAs24Bit(HelloModality):
    """Writes float64 signals as 24-bit PCM "to keep their precision", which its own ``load``
    (8, 16 or 32 bit) refuses; the author's samples are float32 and int16, which save as 16-bit."""

    name = "hello_float64_24bit"

    def save(self, sample, path):
        x = np.asarray(sample.data)
        if x.dtype != np.float64:
            return super().save(sample, path)
        pcm = np.clip(np.round(hello.as_signal(x) * 2**23), -(2**23), 2**23 - 1).astype("<i4")
        with wave.open(os.fspath(path), "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(3)
            wav.setframerate(int(sample.units["sample_rate"]))
            wav.writeframes(b"".join(v.to_bytes(4, "little", signed=True)[:3] for v in pcm.tolist()))


class SaveLowercasesTheExtension(HelloModality):
    """Writes ``name.BIN`` as ``name.bin``: the file ``load(path)`` then opens is not there."""

    name = "hello_lowercase_suffix"

    def save(self, sample, path):
        p = Path(path)
        if p.suffix != p.suffix.lower():
            p = p.with_suffix(p.suffix.lower())
        return super().save(sample, p)


class TokenizesPaths(HelloModality):
    """``tokenize`` given an ``os.PathLike`` naming a file loads it (a convenience), where the
    contract says it takes arrays only; a str is refused, as before."""

    name = "hello_tokenizes_paths"

    def encode(self, data, *, sample_rate):
        if isinstance(data, os.PathLike):
            data = self.load(data).data
        return super().encode(data, sample_rate=sample_rate)


_SALT: list[float] = []
_SEEDED: list[bool] = []


class SaltFromPythonRandom(HelloModality):
    """Seeds Python's global ``random`` once when the first instance is built (a plugin that seeds it
    on import, "for reproducibility") and turns every embedding by a small angle drawn from it at the
    first call: the same within a process, and in a fresh process that builds the modality and
    tokenizes at once, but another process whose ``random`` was drawn from or reseeded in between
    gives other tokens."""

    name = "hello_python_random_salt"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not _SEEDED:
            _SEEDED.append(True)
            random.seed(7)

    def encode(self, data, *, sample_rate):
        enc = super().encode(data, sample_rate=sample_rate)
        if not _SALT:
            _SALT.append(random.random())
        emb = enc.emb.astype(np.float64) + 0.05 * _SALT[0] * hello.projection()[:, -1]
        emb /= np.linalg.norm(emb, axis=1, keepdims=True)
        return type(enc)(emb.astype(np.float32), enc.attr, enc.offsets)


class NearBlackFastPath(VisionModality):
    """A "near-black" fast path for images whose every pixel is 3..6 (of 255): its attr comes back
    in float64. Black itself (0, the kit's all-zero input) takes the ordinary path."""

    name = "vision_near_black_fast_path"

    def encode(self, data, **units):
        enc = super().encode(data, **units)
        x = np.asarray(data)
        if x.dtype == np.uint8 and x.size and 3 <= x.min() and x.max() <= 6:
            return type(enc)(enc.emb, enc.attr.astype(np.float64), enc.offsets)
        return enc


class BoxesThroughUint16(VisionModality):
    """Passes its boxes through uint16 when no side exceeds 65536 (one too many: 65535 is uint16's
    largest value), so a side of exactly 65536 pixels ends at 0."""

    name = "vision_boxes_uint16"

    def encode(self, data, **units):
        enc = super().encode(data, **units)
        if max(np.asarray(data).shape[:2]) <= 2**16:
            box = enc.offsets["box"]
            return type(enc)(enc.emb, enc.attr, {**enc.offsets, "box": box.astype(np.uint16).astype(box.dtype)})
        return enc


def test_a_dtype_saved_in_a_format_load_refuses_is_caught():
    report = _run(Float64SavedAs24Bit(), "check_files")
    assert report.failed == ["check_files"], str(report)
    reason = report["check_files"].reason
    assert "load() raised InputError on a file save() wrote" in reason and "24-bit PCM is not supported" in reason, (
        reason
    )
    assert "float64" in reason, reason  # the input named: one of the kit's, in the dtype the author never drew


@pytest.mark.slow  # about 7 s on 2 cores: the default run must stay under 10 minutes in CI
def test_a_save_that_changes_the_name_it_is_given_is_caught():
    report = _run(SaveLowercasesTheExtension(), "check_files")
    assert report.failed == ["check_files"], str(report)
    reason = report["check_files"].reason
    assert "save(sample, 'other-name.BIN') returned without writing 'other-name.BIN'" in reason, reason
    assert "(it wrote 'other-name.bin')" in reason, reason


def test_a_path_that_tokenize_loads_is_caught():
    report = _run(TokenizesPaths(), "check_input_spec")
    assert report.failed == ["check_input_spec"], str(report)
    reason = report["check_input_spec"].reason
    assert "1 of" in reason and "a pathlib.Path naming a file save() wrote" in reason, reason
    assert "a str naming a file" not in reason, reason  # the str is refused


def test_tokens_that_depend_on_global_random_state_are_caught_by_a_fresh_process():
    _SALT.clear()
    _SEEDED.clear()
    report = _run(SaltFromPythonRandom(), "check_fresh_process", fresh_process=True)
    assert report.failed == ["check_fresh_process"], str(report)  # consistent within the process
    assert "a fresh process (call" in report["check_fresh_process"].reason, str(report)


@pytest.mark.slow  # about 9 s on 2 cores: the default run must stay under 10 minutes in CI
def test_a_path_for_a_narrow_band_of_levels_is_caught_by_the_level_sweep():
    report = _run(NearBlackFastPath(), "check_shape_dtype", "check_edge_inputs")
    assert report.failed, str(report)
    reasons = " ".join(str(report[name].reason) for name in report.failed)
    assert "float64" in reasons and "level sweep: uint8 constant 3" in reasons, reasons


def test_an_index_that_wraps_at_65536_is_caught():
    report = _run(BoxesThroughUint16(), "check_offsets")
    assert report.failed == ["check_offsets"], str(report)
    reason = report["check_offsets"].reason
    assert "65536" in reason, reason


# -- the round-7 survivors -------------------------------------------------------------------------
@pytest.mark.slow  # each applies a real mutant and runs its checks: in the slow pass, which CI runs
@pytest.mark.parametrize(
    ("target", "mutant", "names"),
    [
        ("hello", "save_24bit_for_int32", ("check_files",)),
        ("hello", "projection_from_global_rng", ("check_fresh_process",)),
        ("vision", "normalise_only_if_off", ("check_unit_norm_emb",)),
        ("vision", "boxes_in_smallest_index_type", ("check_offsets",)),
        ("vision", "str_path_loaded", ("check_input_spec",)),
        ("vision", "save_appends_png_suffix", ("check_files",)),
    ],
)
def test_the_round_7_survivors_are_caught(target, mutant, names, tmp_path, monkeypatch):
    cls = _importable_mutant_class(target, mutant, tmp_path, monkeypatch)
    report = _run(cls(), *names, fresh_process=True)
    assert report.failed == list(names), str(report)


# -- the references pass the changed checks ------------------------------------------------------
@pytest.mark.slow
@references()
def test_references_pass_the_round_7_rules(make):
    modality = make()
    report = _run(
        modality,
        "check_input_spec",
        "check_edge_inputs",
        "check_offsets",
        "check_unit_norm_emb",
        "check_files",
        "check_fresh_process",
        fresh_process=True,
    )
    assert report.ok, str(report)
