"""The gaps the tenth pre-registered mutation round found, closed as general rules.

* bytes and dates at either shape: ``S1``/``S3``/``S4`` and datetime64/timedelta64 arrays at the
  base's shape and at it without its last axis (three bytes viewed as three channels add an axis,
  so only the shorter shape shows a plugin that does so);
* two layout changes at once: non-native byte order together with a strided view and with Fortran
  order (a byte swap through ``np.frombuffer`` fails only on a buffer that is not contiguous);
* range siblings: in every accepted integer dtype wider than 8 bits, noise of 12 bits and then noise
  over the full range, 320 a side (or 8192 samples), met in the other order by a fresh instance (a
  bit depth learned once per instance from its first big frame);
* unit ladders: each unit at a quarter, a half and all of its maximum, which the fresh process meets
  first of the kit's inputs, lowest first (state kept from the largest setting seen so far).

Each rule is shown failing a small broken plugin of this file and the round-10 mutant that survived
it, and the reference plugins pass.
"""

from __future__ import annotations

import numpy as np
import pytest

from v22sdk import Sample
from v22sdk.testing import checks
from v22sdk.testing._inputs import LADDER, RANGE_LENGTH, RANGE_SIDE, invalid_inputs, kit_inputs

from .test_kit_gaps import _run, references
from .test_kit_gaps_5 import _importable_mutant_class

hello = pytest.importorskip("v22sdk_hello.modality", reason="pip install -e contrib/v22sdk-hello")
vision = pytest.importorskip("v22sdk_vision.modality")
HelloModality = hello.HelloModality
VisionModality = vision.VisionModality

HELLO_BASE = Sample(np.linspace(-0.5, 0.5, 1999).astype(np.float32), {"sample_rate": 24_000.0})
VISION_BASE = Sample(np.random.default_rng(0).integers(0, 256, (40, 30, 3), dtype=np.uint8), {})


# -- the inputs -----------------------------------------------------------------------------------
def test_bytes_and_dates_come_at_the_base_shape_and_without_its_last_axis():
    cases = {label: case.data for label, case in invalid_inputs(VisionModality().input_spec, VISION_BASE)}
    for width in (1, 3, 4):
        for shape in ((40, 30, 3), (40, 30)):
            data = cases[f"dtype kind 'S' (bytes of {width}), not declared: shape {shape}"]
            assert data.dtype == np.dtype(f"S{width}") and data.shape == shape
    for kind, unit in (("M", "datetime64[s]"), ("m", "timedelta64[s]")):
        data = cases[f"dtype kind {kind!r} ({unit} ramp), not declared: shape (40, 30)"]
        assert data.dtype == np.dtype(unit) and data.shape == (40, 30)


def test_byte_swapped_views_that_are_also_strided_or_fortran():
    inputs = kit_inputs(VisionModality(), [VISION_BASE])
    both = [ki for ki in inputs if "non-native byte order, a strided view" in ki.label]
    fortran = [ki for ki in inputs if "non-native byte order and Fortran order" in ki.label]
    assert both and fortran
    for ki in both + fortran:
        x = ki.sample.data
        assert not x.dtype.isnative and not x.flags.c_contiguous, ki.label
        assert np.array_equal(x, inputs[ki.same_as].sample.data), ki.label


def test_range_siblings_in_every_wide_integer_dtype():
    inputs = kit_inputs(VisionModality(), [VISION_BASE])
    pairs = [(inputs[ki.twin_of], ki) for ki in inputs if ki.twin_of is not None and "range siblings" in ki.label]
    assert [a.sample.data.dtype.name for a, _ in pairs] == ["uint16"]  # vision: uint8 and uint16
    a, b = pairs[0][0].sample.data, pairs[0][1].sample.data
    assert a.shape == b.shape == (RANGE_SIDE, RANGE_SIDE, 3)
    assert a.max() < 4096 and b.max() > 60_000
    signal = kit_inputs(HelloModality(), [HELLO_BASE])
    names = [ki.sample.data.dtype.name for ki in signal if "range siblings" in ki.label and ki.twin_of is not None]
    assert names == ["int16", "int32", "int64"]
    assert all(ki.sample.data.shape == (RANGE_LENGTH,) for ki in signal if "range siblings" in ki.label)


def test_each_unit_ladder_goes_up_to_its_maximum_and_comes_first_in_the_fresh_process():
    modality = HelloModality(frame_seconds=0.2)
    rates = [ki.sample.units["sample_rate"] for ki in kit_inputs(modality, [HELLO_BASE]) if ki.family == LADDER]
    assert rates == [96_000.0, 192_000.0, 384_000.0]
    run = checks.kit_run(modality)
    ref = checks._reference_inputs(modality, run, None)
    high = [i for i, s in enumerate(ref) if float(s.units.get("sample_rate", 0)) > 48_000]
    assert [ref[i].units["sample_rate"] for i in high[:3]] == [96_000.0, 192_000.0, 384_000.0]


# -- broken plugins of this file ------------------------------------------------------------------
class BytesAsGrey(VisionModality):
    """Reads an array of single bytes as grey pixels."""

    name = "vision_bytes_as_grey"

    def encode(self, data, **units):
        if isinstance(data, np.ndarray) and data.dtype == np.dtype("S1"):
            data = data.view(np.uint8)
        return super().encode(data, **units)


class SwapThroughTheBuffer(HelloModality):
    """Brings non-native samples to native order through the raw buffer, which a non-contiguous
    array does not expose (ValueError)."""

    name = "hello_swap_through_buffer"

    def encode(self, data, *, sample_rate):
        if isinstance(data, np.ndarray) and not data.dtype.isnative:
            data = np.frombuffer(memoryview(data), dtype=data.dtype).astype(data.dtype.newbyteorder("="))
        return super().encode(data, sample_rate=sample_rate)


_DEPTHS: dict[int, float] = {}


class DepthLearnedOnce(HelloModality):
    """Learns, per instance, from its first int32 signal of 8192 samples or more whether the PCM
    holds 12 bits (a sensor) and reads every later one on that scale."""

    name = "hello_depth_learned_once"

    def encode(self, data, *, sample_rate):
        if isinstance(data, np.ndarray) and data.dtype == np.int32 and data.size >= 8192:
            depth = _DEPTHS.setdefault(id(self), 4096.0 if int(np.abs(data).max()) < 4096 else 2.0**31)
            data = np.clip(data.astype(np.float64) / depth, -1.0, 1.0)
        return super().encode(data, sample_rate=sample_rate)


_HIGHEST: list[float] = []


class TurnByHighestRate(HelloModality):
    """Above 50 kHz, turns every embedding by an angle from the highest rate this process has seen."""

    name = "hello_turn_by_highest_rate"

    def encode(self, data, *, sample_rate):
        enc = super().encode(data, sample_rate=sample_rate)
        if sample_rate <= 50_000:
            return enc
        _HIGHEST[:] = [max([sample_rate, *_HIGHEST])]
        angle = 0.1 * np.log2(_HIGHEST[0] / 50_000)
        p = hello.projection()
        emb = enc.emb.astype(np.float64) * np.cos(angle) + np.sin(angle) * p[:, -1]
        emb /= np.linalg.norm(emb, axis=1, keepdims=True)
        return type(enc)(emb.astype(np.float32), enc.attr, enc.offsets)


def test_bytes_read_as_pixels_are_caught():
    report = _run(BytesAsGrey(), "check_input_spec")
    assert report.failed == ["check_input_spec"], str(report)
    assert "dtype kind 'S' (bytes of 1), not declared: shape (" in report["check_input_spec"].reason


def test_a_byte_swap_that_needs_a_contiguous_buffer_is_caught():
    report = _run(SwapThroughTheBuffer(), "check_edge_inputs")
    assert report.failed == ["check_edge_inputs"], str(report)
    reason = report["check_edge_inputs"].reason
    assert "non-native byte order" in reason and "strided" in reason, reason


def test_a_bit_depth_learned_once_is_caught_by_a_fresh_instance():
    report = _run(DepthLearnedOnce(), "check_fresh_instance")
    assert report.failed == ["check_fresh_instance"], str(report)
    assert "range siblings: int32" in report["check_fresh_instance"].reason


def test_state_from_the_highest_unit_value_is_caught_by_a_fresh_process():
    _HIGHEST.clear()
    report = _run(TurnByHighestRate(), "check_fresh_process", fresh_process=True)
    assert report.failed == ["check_fresh_process"], str(report)


# -- the round-10 survivors ------------------------------------------------------------------------
@pytest.mark.slow  # each applies a real mutant and runs its checks: in the slow pass, which CI runs
@pytest.mark.parametrize(
    ("target", "mutant", "names", "config"),
    [
        ("hello", "big_band_table_sliced", ("check_fresh_process",), {"frame_seconds": 0.2}),
        ("vision", "uint16_depth_learned_once", ("check_fresh_instance",), {}),
        ("vision", "swapped_by_frombuffer", ("check_edge_inputs",), {}),
        ("vision", "byte_string_pixels_viewed", ("check_input_spec",), {}),
    ],
)
def test_the_round_10_survivors_are_caught(target, mutant, names, config, tmp_path, monkeypatch):
    cls = _importable_mutant_class(target, mutant, tmp_path, monkeypatch)
    report = _run(cls(**config), *names, fresh_process=True)
    assert report.failed == list(names), str(report)


# -- the references pass the changed checks ------------------------------------------------------
@pytest.mark.slow
@references()
def test_references_pass_the_round_10_rules(make):
    report = _run(
        make(),
        "check_input_spec",
        "check_edge_inputs",
        "check_fresh_instance",
        "check_fresh_process",
        fresh_process=True,
    )
    assert report.ok, str(report)
