"""The three gaps the second pre-registered mutation round found, closed as general rules.

* batches: ``tokenize_batch`` must equal the singles on the kit's own inputs too, long and thin
  ones included, each in a batch with a short one (``check_edge_inputs``);
* configurations: ``from_config(config())`` must rebuild every configured attribute exactly, and
  the rebuilt modality must tokenize every one of the kit's inputs as the original does, units
  where they meet the configuration's numbers on a multiple of 1/2 included
  (``check_config_roundtrip``);
* shapes: the kit's inputs include thin-and-long arrays, length 1 and 2 on one axis and the long
  length on another (``check_edge_inputs``).

Each rule is shown failing a small broken plugin of this file and the round-2 mutant that survived
it, loaded in this process from ``tests/kit/mutants``, and passing the reference plugins.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys

import numpy as np
import pytest

from v22sdk import InputSpec, Sample, TokenBatch, Unit
from v22sdk.testing import check_modality, checks
from v22sdk.testing._inputs import config_numbers, kit_inputs, rounding_values

from .mutants import apply, targets

hello = pytest.importorskip("v22sdk_hello.modality", reason="pip install -e contrib/v22sdk-hello")
HelloModality = hello.HelloModality


def _mutant_class(target_name: str, mutant_name: str, tmp_path):
    """The mutated plugin class, imported in this process under a package name of its own."""
    target, mutants = targets()[target_name]
    mutant = next(m for m in mutants if m.name == mutant_name)
    root = apply(target, mutant, tmp_path)
    # A name fixed by the mutant, not a random one: the kit's derandomized draws are keyed by the
    # class's module, so a random name would make every check here draw different examples each run.
    package = f"kit_mutant_{target.package}_{mutant.name}"
    for loaded in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[loaded]  # the same mutant loaded again (another test) comes from its new copy
    spec = importlib.util.spec_from_file_location(
        package, root / target.package / "__init__.py", submodule_search_locations=[str(root / target.package)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    spec.loader.exec_module(module)
    module_name, _, qualname = target.cls.partition(":")
    inner = importlib.import_module(package + module_name[len(target.package) :])
    return getattr(inner, qualname)


def _run(modality, *names, **options):
    options.setdefault("fresh_process", False)
    return check_modality(modality, checks=list(names), **options)


# -- gap 1: long items in batches -----------------------------------------------------------------
class LongBatchDecimated(HelloModality):
    """A batch 'fast path': items over 8192 samples are decimated 2x (at half the rate) first."""

    name = "hello_long_batch"

    def tokenize_batch(self, items):
        parts = []
        for item in items:
            x = np.asarray(item.data)
            if x.size > 8192:
                item = Sample(x[::2].copy(), {"sample_rate": item.units["sample_rate"] / 2}, item.source)
            parts.append(self.tokenize(item))
        joined = TokenBatch.concat(parts)
        index = np.repeat(np.arange(len(parts), dtype=np.int64), [len(p) for p in parts])
        return TokenBatch(joined.emb, joined.attr, self.name, {**joined.offsets, "item": index})


def test_batches_mix_the_kits_long_inputs_with_short_ones():
    batches = checks._edge_batches(checks.kit_run(HelloModality()).inputs)
    large = [b for b in batches if any(ki.family in ("long", "thin") for ki in b) and len(b) < 4]  # not crowded
    assert large and all(len(b) == 2 and sum(ki.family in ("long", "thin") for ki in b) == 1 for b in large)
    assert {ki.family for b in large for ki in b} - {"long", "thin"}  # each with a short partner
    assert max(np.asarray(ki.sample.data).size for b in large for ki in b) > 20_000


def test_check_edge_inputs_finds_a_batch_path_that_treats_long_items_differently():
    assert _run(LongBatchDecimated(), "check_batch_equals_singles").ok  # the author's inputs are short
    report = _run(LongBatchDecimated(), "check_edge_inputs")
    assert report.failed == ["check_edge_inputs"], str(report)
    reason = report["check_edge_inputs"].reason
    assert reason.startswith("[rule check_batch_equals_singles]"), reason
    assert "kit input: a batch of" in reason and "'long:" in reason, reason


def test_the_round_2_survivor_batch_long_items_coarser_is_caught(tmp_path):
    cls = _mutant_class("hello", "batch_long_items_coarser", tmp_path)
    report = _run(cls(), "check_batch_equals_singles", "check_edge_inputs")
    assert report.failed == ["check_edge_inputs"], str(report)
    assert "tokenize_batch gave" in report["check_edge_inputs"].reason


# -- gap 2: the configuration's round trip --------------------------------------------------------
class FrameUnderAnotherName(HelloModality):
    """Its configuration carries the frame in single precision, under a key that is no attribute:
    the rebuilt modality's frame is a sample longer wherever frame x rate is a half-integer."""

    name = "hello_frame_name"

    def config(self):
        return {"frame": float(np.float32(self.frame_seconds))}

    @classmethod
    def from_config(cls, config):
        return cls(frame_seconds=config["frame"])


def test_rounding_values_meet_the_configuration_on_halves():
    spec = InputSpec(kind="array", dtypes=("f",), ndim=(1,), units=(Unit("sample_rate", "Hz", 100.0, 384_000.0, "r"),))
    assert config_numbers({"frame_seconds": 0.05, "on": True, "nested": [{"k": 3}, -1.0, "x"]}) == [0.05, 3.0]
    found = rounding_values(spec, {"sample_rate": 16_003.0}, {"frame_seconds": 0.05})
    values = [v for _, v, _ in found]
    assert values[:3] == [110.0, 120.0, 130.0]  # 100 (the minimum) is tried already: 5.5, 6, 6.5 samples
    assert 16_000.0 in values and 16_010.0 in values
    assert all((v * 0.05 * 2) == pytest.approx(round(v * 0.05 * 2)) for v in values)
    assert rounding_values(spec, {}, {}) == []  # no configuration number, nothing to meet


def test_check_config_roundtrip_requires_configured_attributes_exactly(tmp_path):
    cls = _mutant_class("hello", "config_float32_rounded", tmp_path)
    assert check_modality(cls(), checks=["check_config_roundtrip"], contract_version=1).ok  # the old check
    report = _run(cls(), "check_config_roundtrip")
    assert report.failed == ["check_config_roundtrip"], str(report)
    reason = report["check_config_roundtrip"].reason
    assert "frame_seconds is 0.05 here and 0.05000000074505806 rebuilt" in reason, reason


def test_check_config_roundtrip_compares_the_rebuilt_modality_on_the_kits_inputs():
    assert check_modality(FrameUnderAnotherName(), checks=["check_config_roundtrip"], contract_version=1).ok
    report = _run(FrameUnderAnotherName(), "check_config_roundtrip")
    assert report.failed == ["check_config_roundtrip"], str(report)
    reason = report["check_config_roundtrip"].reason
    assert "the modality rebuilt from its config tokenizes differently" in reason, reason
    assert re.search(r"kit input: sample_rate = [0-9.]+: × 0\.05\d* from the configuration is \d+\.5", reason), reason


# -- gap 3: thin and long shapes ------------------------------------------------------------------
vision = pytest.importorskip("v22sdk_vision.modality")


class ThinCrash(vision.VisionModality):
    """Area-downscales images over 1024 pixels without keeping a side of at least one pixel."""

    name = "vision_thin"

    def encode(self, data, **units):
        x = np.asarray(data)
        if x.ndim >= 2 and x.size and max(x.shape[:2]) > 1024:
            scale = 1024 / max(x.shape[:2])
            if min(round(x.shape[0] * scale), round(x.shape[1] * scale)) == 0:
                raise ZeroDivisionError("a side of 0 pixels after downscaling")
        return super().encode(data, **units)


def test_the_kits_inputs_include_thin_and_long_shapes():
    base = Sample(np.random.default_rng(0).integers(0, 255, (40, 30, 3), dtype=np.uint8))
    shapes = {ki.sample.data.shape for ki in kit_inputs(vision.VisionModality(), [base]) if ki.family == "thin"}
    for short in (1, 2):
        assert (short, 4096, 3) in shapes and (4096, short, 3) in shapes
        assert (4096, 30, short) in shapes and (40, 4096, short) in shapes
    grey = Sample(base.data[..., 0].copy())
    assert {ki.sample.data.shape for ki in kit_inputs(vision.VisionModality(), [grey]) if ki.family == "thin"} == {
        (1, 4096),
        (2, 4096),
        (4096, 1),
        (4096, 2),
    }


def test_check_edge_inputs_finds_a_crash_on_thin_and_long_images():
    report = _run(ThinCrash(), "check_edge_inputs")
    assert report.failed == ["check_edge_inputs"], str(report)
    reason = report["check_edge_inputs"].reason
    assert "encode raised ZeroDivisionError instead of InputError" in reason
    assert "kit input: thin and long: length 1 on axis" in reason, reason


def test_the_round_2_survivor_thin_downscale_zero_side_is_caught(tmp_path):
    cls = _mutant_class("vision", "thin_downscale_zero_side", tmp_path)
    report = _run(cls(), "check_edge_inputs")
    assert report.failed == ["check_edge_inputs"], str(report)
    assert "kit input: thin and long" in report["check_edge_inputs"].reason


# -- the references pass the changed checks ------------------------------------------------------
#: every reference plugin configuration the kit's new rules are run on (the later gap tests share it)
REFERENCES = {
    "hello": HelloModality,
    "hello-0.2": lambda: HelloModality(frame_seconds=0.2),
    "hello-0.0123": lambda: HelloModality(frame_seconds=0.0123),
    "vision": vision.VisionModality,
    "vision-grid-2": lambda: vision.VisionModality(grid=2),
    "audio": lambda: pytest.importorskip("v22sdk_audio.modality").AudioModality(),
    "text": lambda: pytest.importorskip("v22sdk_text.modality").TextModality(),
}


def references(*leave_out: str):
    """``pytest.mark.parametrize`` over :data:`REFERENCES` (slow: audio alone is most of a minute)."""
    names = [n for n in REFERENCES if n not in leave_out]
    return pytest.mark.parametrize("make", [REFERENCES[n] for n in names], ids=names)


@pytest.mark.slow
@references()
def test_references_pass_the_changed_checks(make):
    report = _run(make(), "check_edge_inputs", "check_config_roundtrip", "check_batch_equals_singles")
    assert report.ok, str(report)
