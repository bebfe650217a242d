"""The gaps the sixth pre-registered mutation round found, closed as general rules.

* undeclared dtype kinds: ``check_input_spec`` tries **every** dtype of each kind the input spec
  does not declare (int8 ... int64, uint8 and uint16, float16 ... float64, bool, complex64 and
  complex128), each with zeros, with values that a declared kind could also hold (0/1, whole
  numbers 0..127) and with values of either sign: a plugin that reads an undeclared dtype as a
  declared one when its values happen to fit is refused nowhere (it had tried one dtype of each
  kind, all zeros);
* twins in every dtype: for every accepted dtype, one pair of twin inputs of that dtype (the first
  half at full scale, and its mirror image), which ``check_fresh_instance`` and
  ``check_fresh_process`` tokenize in the other order than the long-used instance did (the twins
  had been of the base's dtype only): a conversion cached per shape shows;
* twins that agree on their borders: a second large pair, zero on a border of a quarter of each
  side at either end (the first and last rows and columns included), the first half of the interior
  at full scale against its mirror image: one shape, dtype, mean and edges, other interiors
  (the large pair had differed in its edge rows): a memo keyed on an input's edges shows.

Each rule is shown failing a small broken plugin of this file and the round-6 mutant that survived
it, and the reference plugins pass.
"""

from __future__ import annotations

import numpy as np
import pytest

from v22sdk import InputError, Sample
from v22sdk.testing import checks
from v22sdk.testing._inputs import (
    KIND_DTYPES,
    TWIN_BORDER,
    TWIN_LARGE_LENGTH,
    TWIN_LARGE_SIDE,
    UNDECLARED_DTYPES,
    invalid_inputs,
    kit_inputs,
)

from .test_kit_gaps import _run, references
from .test_kit_gaps_5 import _importable_mutant_class

hello = pytest.importorskip("v22sdk_hello.modality", reason="pip install -e contrib/v22sdk-hello")
vision = pytest.importorskip("v22sdk_vision.modality")
HelloModality = hello.HelloModality
VisionModality = vision.VisionModality

HELLO_BASE = Sample(np.linspace(-0.5, 0.5, 1999).astype(np.float32), {"sample_rate": 24_000.0})
VISION_BASE = Sample(np.random.default_rng(0).integers(0, 256, (40, 30, 3), dtype=np.uint8), {})


def _pairs(inputs):
    """The twin pairs (one shape; the large siblings, of two shapes, are tested in test_kit_gaps_8)."""
    return [(inputs[ki.twin_of], ki) for ki in inputs if ki.twin_of is not None and "siblings" not in ki.label]


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


def test_a_pair_of_twins_in_every_accepted_dtype():
    for modality, base in ((VisionModality(), VISION_BASE), (HelloModality(), HELLO_BASE)):
        pairs = _pairs(kit_inputs(modality, [base]))
        accepted = {d for k in modality.input_spec.dtypes if k in KIND_DTYPES for d in KIND_DTYPES[k]}
        by_dtype = {a.sample.data.dtype.name for a, b in pairs if a.family == "twin"}
        assert by_dtype == accepted, (modality.name, sorted(by_dtype))
        for a, b in pairs:
            x, y = a.sample.data, b.sample.data
            assert x.shape == y.shape and x.dtype == y.dtype and not np.array_equal(x, y), a.label
            assert x.astype(np.float64).mean() == y.astype(np.float64).mean(), a.label


def test_a_large_pair_of_twins_agrees_on_its_borders_and_differs_inside():
    for modality, base, spatial in (
        (HelloModality(), HELLO_BASE, (TWIN_LARGE_LENGTH,)),
        (VisionModality(), VISION_BASE, (TWIN_LARGE_SIDE, TWIN_LARGE_SIDE)),
    ):
        large = [(a, b) for a, b in _pairs(kit_inputs(modality, [base])) if a.sample.data.shape[:2] == spatial]
        assert len(large) == 2 and all(a.family == b.family == "long" for a, b in large)
        bordered = [(a.sample.data, b.sample.data) for a, b in large if "zero borders" in a.label]
        assert len(bordered) == 1, [a.label for a, _ in large]
        x, y = bordered[0]
        assert x.dtype == y.dtype and x.mean() == y.mean() and not np.array_equal(x, y)
        for axis, n in enumerate(spatial):
            band = int(n * TWIN_BORDER)
            edge = np.r_[0:band, n - band : n]
            assert np.array_equal(np.take(x, edge, axis=axis), np.take(y, edge, axis=axis)), axis
        for x_, y_ in ((x[0], y[0]), (x[-1], y[-1])):  # the first and last rows: what the survivor compared
            assert np.array_equal(x_, y_)
        if len(spatial) == 2:
            assert np.array_equal(x[:, 0], y[:, 0]) and np.array_equal(x[:, -1], y[:, -1])  # and columns
        other = next(a.sample.data for a, _ in large if "zero borders" not in a.label)
        assert not np.array_equal(other[0], np.flip(other, len(spatial) - 1)[0])  # the other pair: edges differ


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


_EDGE_MEMO: dict = {}


class LongSignalEdgeMemo(HelloModality):
    """Memoises signals over 2**16 samples in the module by (length, dtype, rate, the first and the
    last 256 samples): consistent within one process, wrong for the second of two long signals that
    agree on their ends."""

    name = "hello_long_edge_memo"

    def encode(self, data, *, sample_rate):
        x = np.asarray(data)
        if x.ndim == 1 and x.size > 2**16 and x.dtype.kind in "if":
            key = (x.size, x.dtype.str, sample_rate, x[:256].tobytes(), x[-256:].tobytes())
            if key not in _EDGE_MEMO:
                _EDGE_MEMO[key] = super().encode(data, sample_rate=sample_rate)
            return _EDGE_MEMO[key]
        return super().encode(data, sample_rate=sample_rate)


_CONVERTED: dict = {}


class Float64ConvertedOncePerLength(HelloModality):
    """Keeps the full-scale form of a valid float64 signal once per instance and length: an instance
    that has tokenized one float64 signal tokenizes the next valid one of that length as the first.
    The author's strategy draws float32 and int16, and the twins had been of the base's dtype only."""

    name = "hello_float64_once_per_length"

    def encode(self, data, *, sample_rate):
        if isinstance(data, np.ndarray) and data.dtype.kind == "f" and data.dtype.itemsize == 8 and data.ndim == 1:
            converted = hello.as_signal(data)  # refuses what it must; either byte order
            data = _CONVERTED.setdefault((id(self), data.shape), converted)
        return super().encode(data, sample_rate=sample_rate)


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


def test_long_signals_memoised_by_their_ends_are_caught_by_a_fresh_process():
    _EDGE_MEMO.clear()
    report = _run(LongSignalEdgeMemo(), "check_fresh_instance", "check_fresh_process", fresh_process=True)
    assert report.failed == ["check_fresh_process"], str(report)  # consistent within a process
    assert "a fresh process (call" in report["check_fresh_process"].reason, str(report)


def test_a_conversion_cached_per_instance_and_length_in_another_dtype_is_caught():
    _CONVERTED.clear()
    report = _run(Float64ConvertedOncePerLength(), "check_fresh_instance")
    assert report.failed == ["check_fresh_instance"], str(report)
    reason = report["check_fresh_instance"].reason
    assert "float64: the first half at full scale, mirrored" in reason, reason
    assert "tokenized in the other order by a fresh instance" in reason, reason


# -- the round-6 survivors -------------------------------------------------------------------------
@pytest.mark.slow  # each applies a real mutant and runs its checks: in the slow pass, which CI runs
@pytest.mark.parametrize(
    ("mutant", "names"),
    [
        ("nonnegative_int8_viewed_as_uint8", ("check_input_spec",)),
        ("big_image_cache_by_edge_rows", ("check_fresh_process",)),
        ("float16_conversion_cached_by_shape", ("check_fresh_instance",)),
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
    modality = make()
    report = _run(
        modality,
        "check_input_spec",
        "check_edge_inputs",
        "check_config_roundtrip",
        "check_fresh_instance",
        "check_fresh_process",
        fresh_process=True,
    )
    assert report.ok, str(report)
    if modality.input_spec.kind == "array":
        labels = [ki.label for ki in checks.kit_run(modality).inputs]
        assert any("zero borders" in label for label in labels)
        for kind in modality.input_spec.dtypes:
            for dtype_name in KIND_DTYPES[kind]:
                assert any(f": {dtype_name}: the first half at full scale" in label for label in labels), dtype_name
