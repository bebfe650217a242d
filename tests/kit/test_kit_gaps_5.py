"""The gaps the fifth pre-registered mutation round found, closed as general rules.

* files: a file ``save()`` wrote from a valid input must load with the declared units only and
  tokenize; ``tokenize_file`` refusing it is a failure of ``check_files`` (it was taken as "a file
  this configuration does not take");
* extremes: every accepted float dtype at its largest finite value and its most negative one, each
  sign alone (and every integer dtype at its minimum and its maximum everywhere): a range check on
  one side only lets the other side through;
* twins: one pair of the twin inputs is large (over 1024 pixels a side for an image, over 2**16
  samples for a signal), where a plugin may memoise big inputs by a summary (``check_fresh_process``);
* awkward sizes: images over 1024 pixels on one side with an odd other side at which a scale back
  from a power-of-two working size rounds up in float64 (``check_offsets``).

After the round-5 fixes, one more rule (the fifth round had flagged ``rate_capped_at_192k`` as an
equivalence candidate, since refusing a valid input was allowed): ``check_input_spec`` holds the
declared unit ranges to the same standard as the declared dtype kinds and ranks -- each unit at
its declared minimum and at its declared maximum is accepted by some input the kit makes.

Each rule is shown failing a small broken plugin of this file and the round-5 mutant that survived
it, and the reference plugins pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from v22sdk import Sample
from v22sdk.modality import Encoding
from v22sdk.testing import checks
from v22sdk.testing._inputs import (
    AWKWARD_LONG,
    KIND_DTYPES,
    TWIN_LARGE_LENGTH,
    TWIN_LARGE_SIDE,
    _scale_back_rounds_up,
    awkward_sides,
    kit_inputs,
)

from .test_kit_gaps import _mutant_class, _run, references

hello = pytest.importorskip("v22sdk_hello.modality", reason="pip install -e contrib/v22sdk-hello")
vision = pytest.importorskip("v22sdk_vision.modality")
HelloModality = hello.HelloModality
VisionModality = vision.VisionModality

HELLO_BASE = Sample(np.linspace(-0.5, 0.5, 1999), {"sample_rate": 24_000.0})
VISION_BASE = Sample(np.random.default_rng(0).integers(0, 256, (40, 30, 3), dtype=np.uint8), {})


# -- the inputs -----------------------------------------------------------------------------------
def test_every_float_dtype_at_its_extremes_with_either_sign_alone():
    inputs = kit_inputs(HelloModality(), [HELLO_BASE])
    for dtype_name in KIND_DTYPES["f"]:
        big = float(np.finfo(dtype_name).max)
        constants = {
            float(ki.sample.data.flat[0])
            for ki in inputs
            if ki.family == "dtype"
            and ki.sample.data.dtype == dtype_name
            and ki.sample.data.size
            and (ki.sample.data == ki.sample.data.flat[0]).all()
        }
        assert {big, -big} <= constants, dtype_name
    for dtype_name in KIND_DTYPES["i"]:
        info = np.iinfo(dtype_name)
        labels = {ki.label for ki in inputs if ki.family == "dtype" and ki.sample.data.dtype == dtype_name}
        assert any(label.startswith(f"{dtype_name} minimum everywhere") for label in labels), dtype_name
        assert any(label.startswith(f"{dtype_name} maximum everywhere") for label in labels), dtype_name
        assert info.min < 0


def test_one_pair_of_twins_is_large_with_one_shape_dtype_and_mean():
    for modality, base, shape in (
        (HelloModality(), HELLO_BASE, (TWIN_LARGE_LENGTH,)),
        (VisionModality(), VISION_BASE, (TWIN_LARGE_SIDE, TWIN_LARGE_SIDE, 3)),
    ):
        inputs = kit_inputs(modality, [base])
        large = [
            (inputs[ki.twin_of].sample.data, ki.sample.data)
            for ki in inputs
            if ki.twin_of is not None and ki.sample.data.shape == shape
        ]
        # two since round 6: the second agrees on its borders (tests/kit/test_kit_gaps_6.py)
        assert len(large) == 2, [ki.label for ki in inputs if ki.family == "twin"]
        for a, b in large:
            assert a.dtype == b.dtype and a.mean() == b.mean() and not np.array_equal(a, b)
    assert TWIN_LARGE_SIDE > 1024 and TWIN_LARGE_LENGTH > 2**16


def test_awkward_sizes_round_up_when_scaled_back():
    assert 653 % 2 and (1024, "floor") in _scale_back_rounds_up(653, 2048)  # the round-5 survivor's size
    for long in AWKWARD_LONG:
        sides = awkward_sides(long, 2**20 // (long * 3))
        assert sides and all(n % 2 and _scale_back_rounds_up(n, long) for n in sides), long
        for n in sides:  # e.g. 89 x 2048: 44 working rows, 44 * (89 / 44) > 89
            m = int(np.floor(n * 1024 / long))
            assert m * (n / m) > n
    shapes = {ki.sample.data.shape[:2] for ki in kit_inputs(VisionModality(), [VISION_BASE]) if "awkward" in ki.label}
    assert {max(s) for s in shapes} == set(AWKWARD_LONG) and all(min(s) % 2 for s in shapes)
    assert {s[::-1] for s in shapes} == shapes  # both orientations
    assert not [ki for ki in kit_inputs(HelloModality(), [HELLO_BASE]) if "awkward" in ki.label]  # 1-D: none


# -- broken plugins of this file ------------------------------------------------------------------
class LoadAddsChannels(HelloModality):
    """``load`` reports the file's channel count as a unit, which the input spec does not declare."""

    name = "hello_load_channels"

    def load(self, path):
        sample = super().load(path)
        return Sample(sample.data, {**sample.units, "channels": 1.0}, sample.source)


class LoadUnscaled(VisionModality):
    """``load`` gives the file's integer pixels as float32 without scaling them to [0, 1], so every
    file with a pixel above 1 is refused by ``tokenize`` (float pixels lie in [0, 1])."""

    name = "vision_load_unscaled"

    def load(self, path):
        sample = super().load(path)
        return Sample(np.asarray(sample.data, dtype=np.float32), dict(sample.units), sample.source)


class NegativePeakUnchecked(HelloModality):
    """Checks float samples' peak on the positive side only: a signal far below -1000 everywhere is
    accepted, and its power (the mean square) overflows: the embedding is NaN."""

    name = "hello_negative_peak"

    def encode(self, data, *, sample_rate):
        x = np.asarray(data)
        if x.dtype.kind == "f" and x.size and np.isfinite(x).all() and x.max() <= 1e3 < -x.min():
            enc = super().encode(np.clip(x, -1.0, 1.0), sample_rate=sample_rate)
            with np.errstate(all="ignore"):
                power = np.mean(x.astype(np.float64) ** 2)
                return Encoding(enc.emb * np.float32(power / power), enc.attr, enc.offsets)
        return super().encode(data, sample_rate=sample_rate)


_LONG_MEMO: dict = {}


class LongSignalMemo(HelloModality):
    """Memoises signals over 2**16 samples by (length, dtype, rate, mean) in the module: consistent
    within one process, wrong for the second of two long signals of one mean."""

    name = "hello_long_memo"

    def encode(self, data, *, sample_rate):
        x = np.asarray(data)
        if x.ndim == 1 and x.size > 2**16 and x.dtype.kind in "if":
            key = (x.size, x.dtype.str, sample_rate, float(x.mean()))
            if key not in _LONG_MEMO:
                _LONG_MEMO[key] = super().encode(data, sample_rate=sample_rate)
            return _LONG_MEMO[key]
        return super().encode(data, sample_rate=sample_rate)


class BoxesScaledBack(VisionModality):
    """Computes boxes in the working image (the longer side at 1024 pixels) and scales their ends
    back with a ceiling: an end m * (n / m) that rounds up in float64 lands a pixel past the image."""

    name = "vision_boxes_scaled_back"

    def encode(self, data, **units):
        enc = super().encode(data, **units)
        x = np.asarray(data)
        height, width = x.shape[:2]
        scale = 1024 / max(height, width)
        if scale >= 1:
            return enc
        h, w = max(1, round(height * scale)), max(1, round(width * scale))
        boxes = enc.offsets["box"].copy()
        boxes[:, 2] = np.ceil(np.round(boxes[:, 2] * (w / width)) * (width / w))
        boxes[:, 3] = np.ceil(np.round(boxes[:, 3] * (h / height)) * (height / h))
        return Encoding(enc.emb, enc.attr, {"box": boxes.astype(np.int64)})


def test_load_giving_an_undeclared_unit_is_caught():
    report = _run(LoadAddsChannels(), "check_files")
    assert report.failed == ["check_files"], str(report)
    assert "gave units the input spec does not declare (channels)" in report["check_files"].reason, str(report)


@pytest.mark.slow  # about 7 s on 2 cores: the default run must stay under 10 minutes in CI
def test_tokenize_file_refusing_a_file_the_kit_saved_is_caught():
    report = _run(LoadUnscaled(), "check_files")
    assert report.failed == ["check_files"], str(report)
    reason = report["check_files"].reason
    assert "tokenize_file refused" in reason and "a file save() wrote from a valid input" in reason, reason
    assert report["check_files"].rule == "check_files"


def test_float_samples_far_below_the_range_on_one_side_are_caught():
    report = _run(NegativePeakUnchecked(), "check_finite")
    assert report.failed == ["check_finite"], str(report)
    assert "float64 the most negative finite value everywhere" in str(report), str(report)


def test_long_signals_memoised_by_their_mean_are_caught_by_a_fresh_process():
    _LONG_MEMO.clear()
    report = _run(LongSignalMemo(), "check_fresh_process", fresh_process=True)
    assert report.failed == ["check_fresh_process"], str(report)
    assert "a fresh process (call" in report["check_fresh_process"].reason, str(report)


def test_boxes_scaled_back_past_an_awkward_image_are_caught():
    report = _run(BoxesScaledBack(), "check_offsets")
    assert report.failed == ["check_offsets"], str(report)
    reason = report["check_offsets"].reason
    assert "is not a non-empty box inside the image" in reason and "awkward size" in reason, reason


class RateCapped(HelloModality):
    """Declares sample rates up to 384 kHz, refuses any over 192 kHz."""

    name = "hello_rate_capped"

    def encode(self, data, **units):
        from v22sdk import InputError

        if float(units.get("sample_rate", 0.0)) > 192_000.0:
            raise InputError("hello", "sample rates over 192 kHz are not supported")
        return super().encode(data, **units)


class RateFloorRaised(HelloModality):
    """Declares sample rates from 100 Hz, refuses any under 1 kHz."""

    name = "hello_rate_floor"

    def encode(self, data, **units):
        from v22sdk import InputError

        if float(units.get("sample_rate", 1e9)) < 1_000.0:
            raise InputError("hello", "sample rates under 1 kHz are not supported")
        return super().encode(data, **units)


@pytest.mark.parametrize(("plugin", "end"), [(RateCapped, "maximum"), (RateFloorRaised, "minimum")])
def test_a_declared_unit_end_that_no_input_is_accepted_at_is_caught(plugin, end):
    report = _run(plugin(), "check_input_spec")
    assert report.failed == ["check_input_spec"], str(report)
    reason = report["check_input_spec"].reason
    assert "declares unit sample_rate from 100 to 384000 Hz, but none of the" in reason, reason
    assert f"inputs the kit made at its {end} was accepted" in reason, reason
    other = "minimum" if end == "maximum" else "maximum"
    assert f"at its {other} was accepted" not in reason, reason


def test_the_reference_hello_takes_both_ends_of_its_rate():
    assert _run(HelloModality(), "check_input_spec").ok


# -- the round-5 survivors -------------------------------------------------------------------------
def _importable_mutant_class(target: str, mutant: str, tmp_path, monkeypatch):
    """:func:`_mutant_class`, its package also on ``sys.path`` under its own name, so the fresh
    process of ``check_fresh_process`` (given this process's path) imports the same mutant."""
    cls = _mutant_class(target, mutant, tmp_path)
    package = cls.__module__.split(".")[0]
    where = tmp_path / "importable"
    where.mkdir()
    (where / package).symlink_to(Path(sys.modules[package].__file__).parent, target_is_directory=True)
    monkeypatch.syspath_prepend(str(where))
    return cls


@pytest.mark.slow  # each applies a real mutant and runs its checks: in the slow pass, which CI runs
@pytest.mark.parametrize(
    ("target", "mutant", "names", "config"),
    [
        ("hello", "amplitude_checked_on_max_only", ("check_finite",), {}),
        ("vision", "load_adds_dpi_unit", ("check_files",), {}),
        ("vision", "big_image_cache_by_mean", ("check_fresh_process",), {}),
        ("vision", "grid_boxes_scaled_back_ceil", ("check_offsets",), {"grid": 2}),
        ("hello", "rate_capped_at_192k", ("check_input_spec",), {}),
    ],
)
def test_the_round_5_survivors_are_caught(target, mutant, names, config, tmp_path, monkeypatch):
    cls = _importable_mutant_class(target, mutant, tmp_path, monkeypatch)
    report = _run(cls(**config), *names, fresh_process=True)
    assert report.failed == list(names), str(report)


# -- the references pass the changed checks ------------------------------------------------------
@pytest.mark.slow
@references()
def test_references_pass_the_round_5_rules(make):
    modality = make()
    report = _run(
        modality,
        "check_files",
        "check_finite",
        "check_input_spec",
        "check_offsets",
        "check_edge_inputs",
        "check_fresh_instance",
        "check_fresh_process",
        fresh_process=True,
    )
    assert report.ok, str(report)
    if modality.input_spec.kind == "array":
        assert any("large:" in ki.label for ki in checks.kit_run(modality).inputs)
