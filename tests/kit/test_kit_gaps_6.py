"""The gaps the sixth pre-registered mutation round found, closed as general rules.

* undeclared dtype kinds: ``check_input_spec`` tries **every** dtype of each kind the input spec
  does not declare (int8 ... int64, uint8 and uint16, float16 ... float64, bool, complex64 and
  complex128), each with zeros, with values that a declared kind could also hold (0/1, whole
  numbers 0..127) and with values of either sign: a plugin that reads an undeclared dtype as a
  declared one when its values happen to fit is refused nowhere (it had tried one dtype of each
  kind, all zeros).

Each rule is shown failing a small broken plugin of this file and the round-6 mutant that survived
it, and the reference plugins pass.
"""

from __future__ import annotations

import numpy as np
import pytest

from v22sdk import InputError, Sample
from v22sdk.testing._inputs import UNDECLARED_DTYPES, invalid_inputs

from .test_kit_gaps import _run, references
from .test_kit_gaps_5 import _importable_mutant_class

hello = pytest.importorskip("v22sdk_hello.modality", reason="pip install -e contrib/v22sdk-hello")
vision = pytest.importorskip("v22sdk_vision.modality")
HelloModality = hello.HelloModality
VisionModality = vision.VisionModality

HELLO_BASE = Sample(np.linspace(-0.5, 0.5, 1999).astype(np.float32), {"sample_rate": 24_000.0})
VISION_BASE = Sample(np.random.default_rng(0).integers(0, 256, (40, 30, 3), dtype=np.uint8), {})


# -- the inputs -----------------------------------------------------------------------------------
def test_every_dtype_of_an_undeclared_kind_is_tried_with_values_a_declared_kind_holds():
    for modality, base in ((VisionModality(), VISION_BASE), (HelloModality(), HELLO_BASE)):
        spec = modality.input_spec
        cases = [s.data for label, s in invalid_inputs(spec, base) if "not declared" in label and "dtype" in label]
        for kind, dtype_names in UNDECLARED_DTYPES.items():
            for dtype_name in dtype_names:
                found = [d for d in cases if d.dtype == dtype_name]
                assert bool(found) == (kind not in spec.dtypes), (modality.name, dtype_name)
                if not found:
                    continue
                assert all(d.shape == base.data.shape for d in found)
                assert any(not d.any() for d in found), dtype_name  # zeros
                assert any(set(np.unique(d).tolist()) == {0, 1} for d in found), dtype_name  # 0/1: any kind holds them
                if kind != "b":  # whole numbers 0..127: any integer or float dtype holds them
                    assert any(d.real.min() == 0 and d.real.max() == 127 for d in found), dtype_name
                if kind in "ifc":  # either sign
                    assert any(d.real.min() < 0 < d.real.max() for d in found), dtype_name
    labels = [label for label, _ in invalid_inputs(VisionModality().input_spec, VISION_BASE)]
    assert "dtype kind 'i' (int8), not declared" in labels  # the round-6 survivor's input: int8 zeros


# -- broken plugins of this file ------------------------------------------------------------------
class Uint16ReadAsInt16(HelloModality):
    """Reads 16-bit PCM stored unsigned as signed when no sample is above 32767 (a WAV reader's
    buffer, say): uint16 is of a dtype kind the input spec does not declare, of which the kit had
    tried uint8 only."""

    name = "hello_uint16_as_int16"

    def encode(self, data, *, sample_rate):
        if isinstance(data, np.ndarray) and data.dtype == np.uint16 and data.size and data.max() <= 32767:
            data = data.view(np.int16)
        return super().encode(data, sample_rate=sample_rate)


class IntegersByTheirMaximum(VisionModality):
    """Reads integer pixels at the bit depth their maximum implies: 0..255 as uint8. A blank image
    (no maximum above 0) is refused, so integer zeros, the one undeclared input the kit had made of
    them, were refused; any other image of small whole numbers is tokenized."""

    name = "vision_ints_by_maximum"

    def encode(self, data, **units):
        x = np.asarray(data)
        if x.dtype.kind == "i" and x.size:
            if x.max() <= 0:
                raise InputError("<vision array>", "cannot infer the bit depth of a blank integer image")
            if x.min() >= 0 and x.max() <= 255:
                data = x.astype(np.uint8)
        return super().encode(data, **units)


def test_an_undeclared_dtype_of_a_kind_already_tried_is_caught():
    report = _run(Uint16ReadAsInt16(), "check_input_spec")
    assert report.failed == ["check_input_spec"], str(report)
    reason = report["check_input_spec"].reason
    assert "dtype kind 'u' (uint16), not declared: garbage" in reason, reason
    assert "dtype kind 'u' (uint8)" not in reason, reason  # what the kit had tried is refused


def test_an_undeclared_dtype_refused_only_when_blank_is_caught():
    report = _run(IntegersByTheirMaximum(), "check_input_spec")
    assert report.failed == ["check_input_spec"], str(report)
    reason = report["check_input_spec"].reason
    assert "dtype kind 'i' (int16, alternating 0/1), not declared: garbage" in reason, reason
    assert "(int8, whole numbers 0..127), not declared: garbage" in reason, reason
    assert "dtype kind 'i' (int16), not declared" not in reason, reason  # the zeros are refused
    assert "alternating minimum/maximum" not in reason, reason  # negative values are refused


# -- the round-6 survivors -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mutant", "names"),
    [
        ("nonnegative_int8_viewed_as_uint8", ("check_input_spec",)),
    ],
)
def test_the_round_6_survivors_are_caught(mutant, names, tmp_path, monkeypatch):
    cls = _importable_mutant_class("vision", mutant, tmp_path, monkeypatch)
    report = _run(cls(), *names, fresh_process=True)
    assert report.failed == list(names), str(report)


# -- the references pass the changed checks ------------------------------------------------------
@pytest.mark.slow
@references()
def test_references_pass_the_round_6_rules(make):
    report = _run(make(), "check_input_spec")
    assert report.ok, str(report)
