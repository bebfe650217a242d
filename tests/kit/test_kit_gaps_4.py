"""The gaps the fourth pre-registered mutation round found, closed as one general rule: the kit
crosses its input families (see ``v22sdk.testing._inputs.cross_inputs`` and ``tiny_inputs``).

* every accepted dtype (bool included), in a varied pattern, at every large size regime (long at
  odd lengths just over powers of two, thin and long), at each unit's minimum and maximum, plain
  and with the dtype's special values planted off any grid -- a seeded, bounded selection;
* long lengths where a duration (length / rate) rounds up in float32, and offsets judged in
  float64 (``check_offsets``);
* tiny values in every float dtype: the smallest subnormal, the smallest normal and its roots;
* NaN and ±inf planted off any grid in a large input must be an InputError (``check_input_spec``).

Each part is shown failing a small broken plugin of this file and the round-4 mutant that survived
it, and the reference plugins pass.
"""

from __future__ import annotations

import numpy as np
import pytest

from v22sdk import Sample
from v22sdk.modality import Encoding
from v22sdk.testing import checks
from v22sdk.testing._inputs import CROSS_MAX, KIND_DTYPES, cross_inputs, invalid_inputs, kit_inputs, off_grid_positions

from .test_kit_gaps import _mutant_class, _run, references

hello = pytest.importorskip("v22sdk_hello.modality", reason="pip install -e contrib/v22sdk-hello")
vision = pytest.importorskip("v22sdk_vision.modality")
HelloModality = hello.HelloModality
VisionModality = vision.VisionModality

HELLO_BASE = Sample(np.linspace(-0.5, 0.5, 1999), {"sample_rate": 24_000.0})
VISION_BASE = Sample(np.random.default_rng(0).random((40, 30, 3)).astype(np.float32), {})


# -- the crossing itself ------------------------------------------------------------------------
def test_crossed_inputs_cover_every_dtype_shape_and_unit_setting_within_the_budget():
    crossed = cross_inputs(HelloModality().input_spec, HELLO_BASE)
    dtypes = {ki.sample.data.dtype.name for ki in crossed}
    assert dtypes == {d for k in "if" for d in KIND_DTYPES[k]}
    rates = {ki.sample.units["sample_rate"] for ki in crossed}
    assert rates == {100.0, 384_000.0, 24_000.0}
    lengths = {ki.sample.data.shape[0] for ki in crossed}
    assert all(n % 2 == 1 for n in lengths) and 2**16 + 1 in lengths and 2**12 + 1 in lengths
    pairs = {(ki.sample.data.shape, ki.sample.units["sample_rate"]) for ki in crossed}
    base_lengths = [n for n in lengths if n in (2**12 + 1, 2**16 + 1)]
    assert {(n,) for n in base_lengths} <= {shape for shape, _ in pairs}
    assert all(((n,), r) in pairs for n in base_lengths for r in rates)
    # a length whose duration rounds up in float32, at every rate
    for rate in rates:
        assert any(float(np.float32(n / rate)) > n / rate and n > 2**16 for (n,), r in pairs if r == rate), rate
    assert len(crossed) <= max(CROSS_MAX, len(pairs) + 9)
    assert any("special values off the grid" in ki.label for ki in crossed)
    assert [ki.label for ki in crossed] == [ki.label for ki in cross_inputs(HelloModality().input_spec, HELLO_BASE)]


def test_crossed_inputs_reach_big_varied_images_in_every_dtype_bool_included():
    crossed = cross_inputs(VisionModality().input_spec, VISION_BASE)
    spec = VisionModality().input_spec
    assert {ki.sample.data.dtype.name for ki in crossed} == {
        d for k in spec.dtypes if k in KIND_DTYPES for d in KIND_DTYPES[k]
    }
    big_bools = [ki for ki in crossed if ki.sample.data.dtype == bool and max(ki.sample.data.shape[:2]) > 1024]
    assert big_bools and all(ki.sample.data.any() and not ki.sample.data.all() for ki in big_bools)
    planted = [ki for ki in crossed if "special values" in ki.label and ki.sample.data.dtype.kind == "f"]
    assert planted
    data = planted[0].sample.data
    assert data.flat[off_grid_positions(data.shape)[0]] == np.finfo(data.dtype).max


def test_off_grid_positions_avoid_every_regular_grid():
    positions = off_grid_positions((4099, 35, 3))
    assert np.unravel_index(positions[0], (4099, 35, 3)) == (1, 1, 1)
    assert positions[-1] == 4099 * 35 * 3 - 1
    assert all(np.unravel_index(p, (4099, 35, 3))[0] % 4 for p in positions)


def test_tiny_values_in_every_float_dtype():
    tiny = [ki for ki in kit_inputs(HelloModality(), [HELLO_BASE]) if ki.label.startswith("tiny")]
    values = {float(abs(ki.sample.data.flat[0])) for ki in tiny if ki.sample.data.dtype == np.float64}
    assert 5e-324 in values and float(np.finfo(np.float64).smallest_normal) in values
    assert any(1e-104 < v < 1e-100 for v in values)  # cubes underflow to 0
    assert {ki.sample.data.dtype.name for ki in tiny} == {"float16", "float32", "float64"}


def test_invalid_inputs_plant_nan_and_inf_off_the_grid_in_a_large_input():
    cases = invalid_inputs(VisionModality().input_spec, VISION_BASE)
    big = [(label, s) for label, s in cases if "holding" in label and max(s.data.shape[:2]) > 1024]
    assert big and any("at (1, 1, 1)" in label for label, _ in big)
    for _, s in big:
        bad = ~np.isfinite(s.data)
        assert bad.sum() == 1 and np.isfinite(s.data[::4, ::4]).all()


# -- broken plugins of this file -----------------------------------------------------------------
class BigBoolFlippedInPlace(VisionModality):
    """Clears the caller's bool image after tokenizing it, when it is over 1024 pixels a side."""

    name = "vision_big_bool_in_place"

    def encode(self, data, **units):
        enc = super().encode(data, **units)
        if isinstance(data, np.ndarray) and data.dtype == bool and max(data.shape[:2]) > 1024 and data.flags.writeable:
            data[...] = False
        return enc


class BigNaNProbedStrided(VisionModality):
    """Checks a big float image for NaN on every 4th pixel only and zeroes the rest."""

    name = "vision_big_nan_strided"

    def encode(self, data, **units):
        if (
            isinstance(data, np.ndarray)
            and data.dtype.kind == "f"
            and data.ndim >= 2
            and max(data.shape[:2]) > 1024
            and np.isfinite(data[::4, ::4]).all()
        ):
            data = np.nan_to_num(data, nan=0.0, posinf=1.0, neginf=0.0)
        return super().encode(data, **units)


class FourthPowerNorm(HelloModality):
    """Flushes subnormal samples to zero (as DSP code often does), then adds 0 x 1/sum(x^4) for a
    non-zero signal: inf x 0 = NaN where the fourth powers of normal values underflow."""

    name = "hello_fourth_power"

    def encode(self, data, *, sample_rate):
        enc = super().encode(data, sample_rate=sample_rate)
        x = np.asarray(data, dtype=np.float64)
        x = np.where(np.abs(x) < np.finfo(np.float64).smallest_normal, 0.0, x)
        if x.size and x.any():
            with np.errstate(all="ignore"):
                enc = Encoding(enc.emb + np.float32(0 * (1.0 / np.sum(x**4))), enc.attr, enc.offsets)
        return enc


class LongTimeSingle(HelloModality):
    """Keeps time offsets in float32 for signals over 2**16 samples."""

    name = "hello_long_time_single"

    def encode(self, data, *, sample_rate):
        enc = super().encode(data, sample_rate=sample_rate)
        if np.asarray(data).size > 2**16:
            enc = Encoding(enc.emb, enc.attr, {**enc.offsets, "time": enc.offsets["time"].astype(np.float32)})
        return enc


def test_a_big_bool_image_changed_in_place_is_caught():
    report = _run(BigBoolFlippedInPlace(), "check_edge_inputs")
    assert report.failed == ["check_edge_inputs"], str(report)
    assert "modified its input in place" in str(report) and "crossed: bool" in str(report), str(report)


def test_nan_off_the_grid_of_a_big_image_must_be_an_input_error():
    report = _run(BigNaNProbedStrided(), "check_input_spec")
    assert report.failed == ["check_input_spec"], str(report)
    assert "holding nan at (1, 1" in str(report), str(report)


def test_tiny_values_whose_fourth_powers_underflow_are_caught():
    report = _run(FourthPowerNorm(), "check_finite")
    assert report.failed == ["check_finite"], str(report)
    assert "kit input: tiny" in str(report), str(report)


def test_long_time_offsets_in_float32_are_caught():
    report = _run(LongTimeSingle(), "check_offsets")
    assert report.failed == ["check_offsets"], str(report)
    assert "after the input's end" in str(report) and "crossed" in str(report), str(report)


# -- the round-4 survivors -------------------------------------------------------------------------
@pytest.mark.slow  # each applies a real mutant and runs its checks: in the slow pass, which CI runs
@pytest.mark.parametrize(
    ("target", "mutant", "names"),
    [
        ("hello", "silence_by_exact_zero_power", ("check_finite", "check_edge_inputs")),
        ("hello", "long_time_float32", ("check_offsets", "check_edge_inputs")),
        ("vision", "big_bool_scaled_in_view", ("check_determinism", "check_edge_inputs")),
        ("vision", "big_finite_scan_strided", ("check_input_spec",)),
    ],
)
def test_the_round_4_survivors_are_caught(target, mutant, names, tmp_path):
    cls = _mutant_class(target, mutant, tmp_path)
    report = _run(cls(), *names)
    assert not report.ok, str(report)


# -- the references pass the changed checks ------------------------------------------------------
@pytest.mark.slow
@references("text")  # text takes no crossed inputs (no array input)
def test_references_pass_the_crossed_inputs(make):
    modality = make()
    report = _run(
        modality, "check_edge_inputs", "check_finite", "check_offsets", "check_input_spec", "check_determinism"
    )
    assert report.ok, str(report)
    assert any(ki.label.startswith("crossed") for ki in checks.kit_run(modality).inputs)
