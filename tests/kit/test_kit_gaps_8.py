"""The gaps the eighth pre-registered mutation round found, closed as general rules.

* layouts in every dtype at whole-frame lengths: every accepted dtype, at the base's shape and at a
  length of whole frames of the plugin's configuration (``frame_seconds`` x ``sample_rate``), plain
  and strided, negative-stride, Fortran, byte-swapped and read-only -- a zero-copy frame view built
  with the wrong strides shows only for a dtype needing no conversion at a whole-frame length;
* crowded batches: batches of four and six inputs of different sizes (the largest first), where a
  batch path that switches on the item count (a shared padded layout) shows;
* large siblings: two large images with one long side and other aspect ratios, tokenized in the other
  order by a fresh instance and a fresh process (a resize plan memo keyed on the long side);
* large inputs in every accepted rank: a grey image over 1024 pixels a side, where the base is RGB;
* every other dtype kind refused: structured records (one field per channel), opaque void, bytes,
  datetime64 and timedelta64;
* save under another format's name: ``44100.wav`` or ``.img`` for an image -- save writes that path
  or raises InputError, never another exception.

Each rule is shown failing a small broken plugin of this file and the round-8 mutant that survived
it, and the reference plugins pass.
"""

from __future__ import annotations

import numpy as np
import pytest

from v22sdk import InputError, Sample
from v22sdk.testing import checks
from v22sdk.testing._inputs import (
    FRAME_COUNT,
    SIBLING_EIGHTHS,
    SIBLING_SIDES,
    TWIN_LARGE_SIDE,
    VIEWS,
    compared_only,
    frame_lengths,
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


# -- the inputs -----------------------------------------------------------------------------------
def test_whole_frame_lengths_come_from_the_configuration_and_the_units():
    spec = HelloModality().input_spec
    assert frame_lengths(spec, {"sample_rate": 24_000.0}, {"frame_seconds": 0.05}) == [
        (1200, {"sample_rate": 24_000.0})
    ]
    # 0.05 s at 22.05 kHz is 1102.5 samples: the first listed rate where it is whole
    assert frame_lengths(spec, {"sample_rate": 22_050.0}, {"frame_seconds": 0.05}) == [(800, {"sample_rate": 16_000.0})]
    assert frame_lengths(spec, {"sample_rate": 8000.0}, {"size": 64}) == [(64, {"sample_rate": 8000.0})]


def test_every_accepted_dtype_comes_in_every_layout_at_a_whole_frame_length():
    inputs = kit_inputs(HelloModality(), [HELLO_BASE])
    length = FRAME_COUNT * 1200
    for dtype_name in ("int8", "int16", "int32", "int64", "float16", "float32", "float64"):
        mine = [
            (i, ki)
            for i, ki in enumerate(inputs)
            if ki.label.startswith(f"layout: {dtype_name} ") and ki.sample.data.shape == (length,)
        ]
        plain = [i for i, ki in mine if ki.same_as is None]
        assert len(plain) == 1, (dtype_name, [ki.label for _, ki in mine])
        views = [ki for _, ki in mine if ki.same_as == plain[0]]
        strided = [ki for ki in views if "a strided view" in ki.label]
        assert strided and strided[0].sample.data.strides[0] == 2 * np.dtype(dtype_name).itemsize
        assert any(ki.sample.data.strides[0] < 0 for ki in views), dtype_name
        assert any(not ki.sample.data.flags.writeable for ki in views), dtype_name
        for ki in views:
            assert np.array_equal(ki.sample.data, inputs[plain[0]].sample.data), ki.label


def test_vision_gets_large_siblings_and_a_large_grey_image():
    inputs = kit_inputs(VisionModality(), [VISION_BASE])
    siblings = [ki for ki in inputs if "large siblings" in ki.label]
    assert len(siblings) == 2
    for ki in siblings:
        if ki.twin_of is not None:
            first = inputs[ki.twin_of].sample.data.shape
            second = ki.sample.data.shape
            side = max(first[:2])
            assert side in SIBLING_SIDES and max(second[:2]) == side and first != second
            assert sorted({min(first[:2]), min(second[:2])}) == [side * k // 8 for k in SIBLING_EIGHTHS]
    others = {max(ki.sample.data.shape[:2]) for ki in inputs if "large siblings" not in ki.label}
    assert not others & set(SIBLING_SIDES)  # no other input fills a memo keyed on their long side
    grey = [ki for ki in inputs if ki.label.startswith("large in rank 2")]
    shapes = {ki.sample.data.shape for ki in grey}
    assert (TWIN_LARGE_SIDE, TWIN_LARGE_SIDE) in shapes and all(len(s) == 2 for s in shapes), shapes
    assert all(ki.family == "long" and ki.rank == 2 for ki in grey)


def test_every_other_dtype_kind_is_among_the_inputs_to_refuse():
    kinds = {
        case.data.dtype.kind
        for _, case in invalid_inputs(VisionModality().input_spec, VISION_BASE)
        if isinstance(case.data, np.ndarray)
    }
    assert {"V", "S", "U", "O", "M", "m", "c", "i"} <= kinds, kinds
    records = [
        case.data
        for label, case in invalid_inputs(VisionModality().input_spec, VISION_BASE)
        if "structured, 3" in label
    ]
    assert {r.shape for r in records} == {(40, 30, 3), (40, 30)} and all(len(r.dtype.names) == 3 for r in records)


def test_crowded_batches_hold_four_and_six_inputs_of_different_sizes():
    inputs = kit_inputs(HelloModality(), [HELLO_BASE])
    batches = checks._edge_batches(inputs)
    crowded = [b for b in batches if len(b) >= 4]
    assert {len(b) for b in crowded} == {4, 6}, [len(b) for b in crowded]
    for batch in crowded:
        sizes = [ki.sample.data.size for ki in batch]
        assert len(set(sizes)) == len(sizes) and sizes[0] == max(sizes), sizes
    assert any(b[0].family == "long" for b in crowded)  # a large input first, short ones after
    assert sum(b[0].family == "long" for b in crowded) == 1


def test_views_are_compared_not_tokenized_again_or_batched():
    inputs = kit_inputs(HelloModality(), [HELLO_BASE])
    views = [ki for ki in inputs if compared_only(ki)]
    assert views and all(ki.family == VIEWS and inputs[ki.same_as].family == VIEWS for ki in views)
    batched = {id(ki) for batch in checks._edge_batches(inputs) for ki in batch}
    assert not batched & {id(ki) for ki in views}
    assert batched & {id(ki) for ki in inputs if ki.family == VIEWS and ki.same_as is None}


# -- broken plugins of this file ------------------------------------------------------------------
class FramesFromTheBuffer(HelloModality):
    """For int16 samples filling whole frames, reads the frames straight from the buffer
    ("zero-copy"), which for a strided view of the samples holds other values."""

    name = "hello_frames_from_buffer"

    def encode(self, data, *, sample_rate):
        x = np.asarray(data)
        size = max(1, int(round(self.frame_seconds * sample_rate)))
        if x.dtype == np.int16 and x.size and x.size % size == 0 and x.base is not None:
            flat = np.frombuffer(x.base.tobytes(), dtype=np.int16)[: x.size]
            return super().encode(flat.copy(), sample_rate=sample_rate)
        return super().encode(data, sample_rate=sample_rate)


class CrowdPaddedToTheFirst(HelloModality):
    """From five items on, pads every item to the first one's length ("one FFT plan per batch")."""

    name = "hello_crowd_padded"

    def tokenize_batch(self, items):
        if len(items) < 5:
            return super().tokenize_batch(items)
        n = np.asarray(items[0].data).size
        padded = []
        for it in items:
            x = np.asarray(it.data)
            padded.append(Sample(np.pad(x, (0, max(0, n - x.size))) if x.ndim == 1 else x, it.units, it.source))
        return super().tokenize_batch(padded)


_SIZES: dict[int, tuple[int, int]] = {}


class WorkingSizeByLongSide(VisionModality):
    """Downscales an image over 1024 pixels a side to the working size first planned for its long
    side (a memo of the plan), whatever the other side."""

    name = "vision_working_size_memo"

    def encode(self, data, **units):
        x = np.asarray(data)
        if x.ndim >= 2 and max(x.shape[:2]) > 1024:
            h, w = _SIZES.setdefault(max(x.shape[:2]), x.shape[:2])
            import cv2

            x = cv2.resize(np.ascontiguousarray(x), (w, h), interpolation=cv2.INTER_NEAREST)
        return super().encode(x, **units)


class GreyNeedsChannels(VisionModality):
    """Handles a big image by splitting its channels (``x.shape[2]``), which a 2-D grey one lacks."""

    name = "vision_grey_channels"

    def encode(self, data, **units):
        x = np.asarray(data)
        if x.ndim >= 2 and max(x.shape[:2]) > 1024:
            _ = [x[..., c] for c in range(x.shape[2])]
        return super().encode(data, **units)


class DatesAsIntegers(HelloModality):
    """Reads datetime64 and timedelta64 samples as the integers underneath."""

    name = "hello_dates_as_integers"

    def encode(self, data, *, sample_rate):
        if isinstance(data, np.ndarray) and data.dtype.kind in "mM":
            data = data.view(np.int64)
        return super().encode(data, sample_rate=sample_rate)


class SaveByExtension(HelloModality):
    """Picks the format from the file's extension and raises ValueError for one it does not know."""

    name = "hello_save_by_extension"

    def save(self, sample, path):
        if str(path).lower().endswith((".png", ".img", ".txt", ".bin")):
            raise ValueError(f"unknown format for {path}")
        return super().save(sample, path)


class SaveRefusesOtherExtensions(HelloModality):
    """A control: refuses (InputError) to write a name with another format's extension."""

    name = "hello_save_refuses_other_extensions"

    def save(self, sample, path):
        if str(path).lower().endswith((".png", ".img", ".txt", ".bin")):
            raise InputError(str(path), "hello writes WAV files only")
        return super().save(sample, path)


def test_a_frame_view_of_the_wrong_buffer_is_caught():
    report = _run(FramesFromTheBuffer(), "check_edge_inputs")
    assert report.failed == ["check_edge_inputs"], str(report)
    reason = report["check_edge_inputs"].reason
    assert "layout: int16" in reason and "whole frames of" in reason, reason


def test_a_batch_path_for_five_items_and_more_is_caught():
    report = _run(CrowdPaddedToTheFirst(), "check_edge_inputs")
    assert report.failed == ["check_edge_inputs"], str(report)
    assert "a batch of" in report["check_edge_inputs"].reason


def test_a_working_size_memo_keyed_on_the_long_side_is_caught():
    _SIZES.clear()
    report = _run(WorkingSizeByLongSide(), "check_fresh_process", fresh_process=True)
    assert report.failed == ["check_fresh_process"], str(report)  # a memo of the module: every instance shares it


def test_a_big_grey_image_that_crashes_is_caught():
    report = _run(GreyNeedsChannels(), "check_edge_inputs")
    assert report.failed == ["check_edge_inputs"], str(report)
    reason = report["check_edge_inputs"].reason
    assert "IndexError" in reason and "large in rank 2" in reason, reason


def test_dates_read_as_integers_are_caught():
    modality = DatesAsIntegers()
    assert len(modality.tokenize(Sample(np.zeros(800, "datetime64[s]"), {"sample_rate": 8000.0})))
    report = _run(modality, "check_input_spec")
    assert report.failed == ["check_input_spec"], str(report)
    assert "dtype kind 'M'" in report["check_input_spec"].reason


def test_a_save_that_crashes_on_another_format_name_is_caught_and_one_that_refuses_is_not():
    report = _run(SaveByExtension(), "check_files")
    assert report.failed == ["check_files"], str(report)
    reason = report["check_files"].reason
    assert "save() raised ValueError" in reason and "unknown format" in reason, reason
    assert _run(SaveRefusesOtherExtensions(), "check_files").ok


# -- the round-8 survivors -------------------------------------------------------------------------
@pytest.mark.slow  # each applies a real mutant and runs its checks: in the slow pass, which CI runs
@pytest.mark.parametrize(
    ("target", "mutant", "names"),
    [
        ("hello", "as_strided_frames_float64", ("check_edge_inputs",)),
        ("hello", "batch_of_four_padded_to_longest", ("check_batch_equals_singles",)),
        ("vision", "resize_plan_cached_by_long_side", ("check_fresh_process",)),
        ("vision", "structured_rgb_viewed", ("check_input_spec",)),
        ("vision", "big_grey_channel_axis_restored", ("check_edge_inputs",)),
        ("vision", "save_format_from_suffix", ("check_files",)),
    ],
)
def test_the_round_8_survivors_are_caught(target, mutant, names, tmp_path, monkeypatch):
    cls = _importable_mutant_class(target, mutant, tmp_path, monkeypatch)
    checks_run = ("check_edge_inputs",) if names == ("check_batch_equals_singles",) else names  # its batches
    report = _run(cls(), *checks_run, fresh_process=True)
    assert report.failed == list(checks_run), str(report)


# -- the references pass the changed checks ------------------------------------------------------
@pytest.mark.slow
@references()
def test_references_pass_the_round_8_rules(make):
    report = _run(
        make(),
        "check_input_spec",
        "check_edge_inputs",
        "check_fresh_instance",
        "check_files",
        "check_fresh_process",
        fresh_process=True,
    )
    assert report.ok, str(report)
