"""The gaps the ninth pre-registered mutation round found, closed as general rules.

* an undeclared higher rank at several shapes: with its new trailing axis 1, 2, 3 and 4 long (mono
  as ``(T, 1)``, stereo ``(T, 2)``, RGB, RGBA) and two copies stacked on a new leading axis -- a
  plugin that takes one shape of a rank it does not declare (stereo mixed down) shows there;
* object arrays of numbers: the base's values, zeros and Python floats boxed as objects must be
  refused like the object array of ``None`` -- a plugin that unboxes numbers tokenizes them.

Each rule is shown failing a small broken plugin of this file and the round-9 mutant that survived
it, and the reference plugins pass.
"""

from __future__ import annotations

import numpy as np
import pytest

from v22sdk import Sample
from v22sdk.testing._inputs import HIGHER_RANK_SIDES, invalid_inputs

from .test_kit_gaps import _run, references
from .test_kit_gaps_5 import _importable_mutant_class

hello = pytest.importorskip("v22sdk_hello.modality", reason="pip install -e contrib/v22sdk-hello")
vision = pytest.importorskip("v22sdk_vision.modality")
HelloModality = hello.HelloModality
VisionModality = vision.VisionModality

HELLO_BASE = Sample(np.linspace(-0.5, 0.5, 1999).astype(np.float32), {"sample_rate": 24_000.0})
VISION_BASE = Sample(np.random.default_rng(0).integers(0, 256, (40, 30, 3), dtype=np.uint8), {})


# -- the inputs -----------------------------------------------------------------------------------
def test_an_undeclared_higher_rank_comes_at_every_channel_count_and_stacked():
    shapes = [
        case.data.shape
        for label, case in invalid_inputs(HelloModality().input_spec, HELLO_BASE)
        if label.startswith("rank 2, not declared")
    ]
    assert shapes == [(1999, n) for n in HIGHER_RANK_SIDES] + [(2, 1999)], shapes
    for label, case in invalid_inputs(HelloModality().input_spec, HELLO_BASE):
        if label.startswith("rank 2, not declared"):
            x = case.data
            columns = [x[:, j] for j in range(x.shape[1])] if x.shape[0] == 1999 else list(x)
            assert all(np.array_equal(c, HELLO_BASE.data) for c in columns), label  # the base's values
    vision_shapes = [
        case.data.shape
        for label, case in invalid_inputs(VisionModality().input_spec, VISION_BASE)
        if label.startswith("rank 4, not declared")
    ]
    assert vision_shapes == [(40, 30, 3, n) for n in HIGHER_RANK_SIDES] + [(2, 40, 30, 3)], vision_shapes


def test_object_arrays_of_numbers_are_among_the_inputs_to_refuse():
    cases = {label: case.data for label, case in invalid_inputs(VisionModality().input_spec, VISION_BASE)}
    boxed = cases["an object array of the base's numbers"]
    assert boxed.dtype == object and np.array_equal(boxed.astype(np.uint8), VISION_BASE.data)
    assert cases["an object array of zeros"].dtype == object
    assert all(v == 0.5 for v in cases["an object array of Python floats 0.5"].flat)


# -- broken plugins of this file ------------------------------------------------------------------
class TakesFirstOfManyChannels(HelloModality):
    """Takes a (T, C) array of three or more channels as its first channel ("a multichannel
    recording's reference channel"), where the spec declares 1-D signals only; (T, 1) and (T, 2)
    are refused as before."""

    name = "hello_first_of_many_channels"

    def encode(self, data, *, sample_rate):
        if isinstance(data, np.ndarray) and data.ndim == 2 and data.shape[1] >= 3:
            data = np.ascontiguousarray(data[:, 0])
        return super().encode(data, sample_rate=sample_rate)


class UnboxesObjectPixels(VisionModality):
    """Reads an object array as float32 pixels when every element is a number."""

    name = "vision_unboxes_objects"

    def encode(self, data, **units):
        if isinstance(data, np.ndarray) and data.dtype == object:
            try:
                data = data.astype(np.float32)
            except (TypeError, ValueError):
                pass
            else:
                if data.size and data.max() > 1:
                    data = data / 255.0
        return super().encode(data, **units)


def test_a_rank_taken_at_one_channel_count_is_caught():
    report = _run(TakesFirstOfManyChannels(), "check_input_spec")
    assert report.failed == ["check_input_spec"], str(report)
    reason = report["check_input_spec"].reason
    assert "rank 2, not declared: shape (" in reason and ", 3): garbage" in reason, reason
    assert ", 2): garbage" not in reason, reason  # stereo is still refused


def test_object_arrays_unboxed_as_numbers_are_caught():
    report = _run(UnboxesObjectPixels(), "check_input_spec")
    assert report.failed == ["check_input_spec"], str(report)
    reason = report["check_input_spec"].reason
    assert "an object array of the base's numbers: garbage" in reason, reason
    assert "an object array: garbage" not in reason, reason  # None is still refused


# -- the round-9 survivors -------------------------------------------------------------------------
@pytest.mark.slow  # each applies a real mutant and runs its checks: in the slow pass, which CI runs
@pytest.mark.parametrize(("target", "mutant"), [("hello", "stereo_downmixed"), ("vision", "object_pixels_unboxed")])
def test_the_round_9_survivors_are_caught(target, mutant, tmp_path, monkeypatch):
    cls = _importable_mutant_class(target, mutant, tmp_path, monkeypatch)
    report = _run(cls(), "check_input_spec")
    assert report.failed == ["check_input_spec"], str(report)


# -- the references pass the changed checks ------------------------------------------------------
@pytest.mark.slow
@references()
def test_references_pass_the_round_9_rules(make):
    report = _run(make(), "check_input_spec", "check_invalid_inputs")
    assert report.ok, str(report)
