"""The checks of contract version 2, each shown catching a deliberately broken plugin that the
version-1 checks (over the plugin's own sample_inputs()) let through, and passing the references."""

from __future__ import annotations

import re
import time
import warnings

import numpy as np
import pytest

from v22sdk import Encoding, InputError, Sample
from v22sdk.testing import CheckFailure, ContractWarning, check_modality, checks
from v22sdk.testing._settings import active, resolve

from .reference import WordsModality

hello = pytest.importorskip("v22sdk_hello.modality", reason="pip install -e contrib/v22sdk-hello")
HelloModality = hello.HelloModality


# -- broken variants of hello, each wrong only where its own sample_inputs() never go ---------------
class Float64Crash(HelloModality):
    """Handles the float32 and int16 its strategy draws, and dies on valid float64 with a TypeError."""

    name = "hello_f64"

    def encode(self, data, *, sample_rate):
        if (
            isinstance(data, np.ndarray)
            and data.dtype == np.float64
            and data.size
            and np.isfinite(data).all()
            and np.abs(data).max() <= hello.MAX_FLOAT_AMPLITUDE
        ):
            raise TypeError("float64 samples are not supported by the fast path")
        return super().encode(data, sample_rate=sample_rate)


class PeakOverflow(HelloModality):
    """Scales integer PCM by 16-bit full scale whatever its width and writes the peak unclipped:
    int16 (all its strategy draws) is right, int32 gives peaks up to 65536."""

    name = "hello_peak"

    def encode(self, data, *, sample_rate):
        enc = super().encode(data, sample_rate=sample_rate)
        if isinstance(data, np.ndarray) and data.dtype.kind == "i" and data.dtype.itemsize > 2 and data.size:
            attr = enc.attr.copy()
            attr[:, hello.SCHEMA.index("hello.level.peak")] = np.abs(data.astype(np.float64)).max() / 32768.0
            return Encoding(enc.emb, attr, enc.offsets)
        return enc


class HiResFlag(HelloModality):
    """Marks hi-res audio (over 96 kHz) in slot 270, which its schema never declares."""

    name = "hello_hires"

    def encode(self, data, *, sample_rate):
        enc = super().encode(data, sample_rate=sample_rate)
        if sample_rate > 96_000:
            attr = enc.attr.copy()
            attr[:, 270] = 1.0
            return Encoding(enc.emb, attr, enc.offsets)
        return enc


class ByteOrderBlind(HelloModality):
    """Reads the samples' bytes as native-endian whatever the array's byte order says."""

    name = "hello_byteorder"

    def encode(self, data, *, sample_rate):
        if isinstance(data, np.ndarray) and data.dtype.byteorder not in ("=", "|"):
            data = np.frombuffer(data.tobytes(), dtype=data.dtype.newbyteorder("="))
        return super().encode(data, sample_rate=sample_rate)


class RejectsNonNative(HelloModality):
    """Refuses arrays in non-native byte order (which a WAV or a network buffer may well give)."""

    name = "hello_native_only"

    def encode(self, data, *, sample_rate):
        if isinstance(data, np.ndarray) and not data.dtype.isnative:
            raise InputError("<hello signal>", "convert the samples to native byte order first")
        return super().encode(data, sample_rate=sample_rate)


class AcceptsUnsigned(HelloModality):
    """Declares int and float samples, and silently reads uint8 too (as if signed)."""

    name = "hello_uint"

    def encode(self, data, *, sample_rate):
        if isinstance(data, np.ndarray) and data.dtype.kind == "u":
            data = data.astype(np.int16)
        return super().encode(data, sample_rate=sample_rate)


class NaNOnlyChecked32(HelloModality):
    """Checks for NaN in float32 only: a NaN in float64 input flows into the tokens."""

    name = "hello_nan64"

    def encode(self, data, *, sample_rate):
        if isinstance(data, np.ndarray) and data.dtype == np.float64 and not np.isfinite(data).all():
            enc = super().encode(np.nan_to_num(data), sample_rate=sample_rate)
            return Encoding(np.full_like(enc.emb, np.nan), enc.attr, enc.offsets)
        return super().encode(data, sample_rate=sample_rate)


class SpecClaimsBool(HelloModality):
    """Declares bool samples in its input spec but rejects every bool array."""

    name = "hello_bool"
    input_spec = hello.InputSpec(kind="array", dtypes=("i", "f", "b"), ndim=(1,), units=HelloModality.input_spec.units)

    def encode(self, data, *, sample_rate):
        if isinstance(data, np.ndarray) and data.dtype.kind == "b":
            raise InputError("<hello signal>", "bool samples are not supported")
        return super().encode(data, sample_rate=sample_rate)


_INSTANCE_CACHE: dict = {}


class InstanceShapeCache(HelloModality):
    """Caches each instance's last result by (shape, dtype, rate): another signal of the same
    length returns the cached tokens."""

    name = "hello_icache"

    def encode(self, data, *, sample_rate):
        key = (id(self), np.shape(data), getattr(data, "dtype", None), sample_rate)
        if key not in _INSTANCE_CACHE:
            _INSTANCE_CACHE[key] = super().encode(data, sample_rate=sample_rate)
        return _INSTANCE_CACHE[key]


_MODULE_CACHE: dict = {}


class ModuleShapeCache(HelloModality):
    """The same cache at module level, shared by every instance: consistent within one process
    (the same shape always gives the same tokens), wrong for the second signal of a shape."""

    name = "hello_mcache"

    def encode(self, data, *, sample_rate):
        key = (np.shape(data), getattr(data, "dtype", None), sample_rate)
        if key not in _MODULE_CACHE:
            _MODULE_CACHE[key] = super().encode(data, sample_rate=sample_rate)
        return _MODULE_CACHE[key]


_FIRST_CALL = [True]


class FirstCallDiffers(HelloModality):
    """The first call in a process takes a "warm-up" path that rounds the embedding to float16."""

    name = "hello_first"

    def encode(self, data, *, sample_rate):
        enc = super().encode(data, sample_rate=sample_rate)
        if _FIRST_CALL[0]:
            _FIRST_CALL[0] = False
            emb = enc.emb.astype(np.float16).astype(np.float64)
            emb /= np.linalg.norm(emb, axis=1, keepdims=True)
            return Encoding(emb.astype(np.float32), enc.attr, enc.offsets)
        return enc


class RateFromFileName(HelloModality):
    """Reads the sample rate from a number before 'hz' in the file name, when there is one."""

    name = "hello_guess"

    def load(self, path):
        sample = super().load(path)
        found = re.search(r"(\d+(?:\.\d+)?)hz", str(path).lower())
        if found:
            return Sample(sample.data, {"sample_rate": float(found.group(1))}, sample.source)
        return sample


class TruncationCrash(HelloModality):
    """Reads WAV frames without checking the byte count: a truncated file dies in numpy."""

    name = "hello_truncated"

    def load(self, path):
        import wave

        try:
            with wave.open(str(path), "rb") as wav:
                rate, raw = wav.getframerate(), wav.readframes(wav.getnframes())
        except (OSError, EOFError, wave.Error) as exc:
            raise InputError(str(path), f"not a readable PCM WAV file: {exc}") from None
        return Sample(np.frombuffer(raw, dtype="<i2").copy(), {"sample_rate": float(rate)}, str(path))


class Collapsed(HelloModality):
    """Every frame gets the silence vector: contract-valid tokens that carry no information."""

    name = "hello_collapsed"

    def encode(self, data, *, sample_rate):
        enc = super().encode(data, sample_rate=sample_rate)
        emb = np.tile(hello.projection()[:, hello.N_BANDS].astype(np.float32), (len(enc.emb), 1))
        return Encoding(emb, enc.attr, enc.offsets)


class FixedFrames(HelloModality):
    """Frames of 64 samples whatever the rate: tokens per second follow the sample rate."""

    name = "hello_fixed"

    def encode(self, data, *, sample_rate):
        return HelloModality(frame_seconds=max(0.001, 64 / sample_rate)).encode(data, sample_rate=sample_rate)


class Slow(HelloModality):
    name = "hello_slow"

    def encode(self, data, *, sample_rate):
        time.sleep(0.003)
        return super().encode(data, sample_rate=sample_rate)


def _report(modality, *names, **options):
    options.setdefault("max_examples", 10)
    return check_modality(modality, checks=list(names) + ["check_shape_dtype", "check_determinism"], **options)


# -- the references pass -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "modality",
    [HelloModality(), HelloModality(frame_seconds=0.2), WordsModality()],
    ids=["hello", "hello(frame_seconds=0.2)", "words"],
)
def test_references_pass_every_version_2_check(modality):
    report = check_modality(
        modality,
        checks=[c for c in checks.__dict__ if c.startswith("check_") and getattr(checks.__dict__[c], "since", 1) == 2],
    )
    assert report.ok and not report.warned, str(report)
    assert len(report.ran) == 8


# -- each new check, and each old check on the kit's own inputs ---------------------------------
@pytest.mark.parametrize(
    ("broken", "failed", "phrase"),
    [
        (Float64Crash, {"check_edge_inputs"}, "encode raised TypeError instead of InputError"),
        (PeakOverflow, {"check_attr_bounds"}, "(hello.level.peak) = 65536 is outside [-1, 1]"),
        (HiResFlag, {"check_declared_slots"}, "slot 270 is not declared"),
        (ByteOrderBlind, {"check_edge_inputs"}, "the same values in another memory layout give other tokens"),
        (RejectsNonNative, {"check_edge_inputs"}, "rejects values it tokenizes in another memory layout"),
        (AcceptsUnsigned, {"check_input_spec"}, "dtype kind 'u' (uint8), not declared: garbage"),
        (NaNOnlyChecked32, {"check_input_spec"}, "float64 holding nan: garbage"),
        (
            SpecClaimsBool,
            {"check_input_spec"},
            "input_spec declares dtype kind 'b', but none of the",
        ),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else None,
)
@pytest.mark.slow  # about 44 s on 2 cores: the default run must stay under 10 minutes in CI
def test_the_kit_finds_bugs_outside_the_authors_strategy(broken, failed, phrase):
    version_one = check_modality(broken(), contract_version=1, max_examples=10)
    assert version_one.ok, str(version_one)  # the author's strategy never reaches the bug
    report = check_modality(broken(), max_examples=10, fresh_process=False)
    assert set(report.failed) == failed, str(report)
    reason = report[sorted(failed)[0]].reason
    assert phrase in reason, reason
    assert "kit input:" in reason or "inputs the input spec excludes" in reason or "declares" in reason


def test_check_fresh_instance_finds_a_cache_keyed_on_the_shape():
    report = _report(InstanceShapeCache(), "check_fresh_instance", "check_fresh_process")
    # a fresh process may see it too (its instance is fresh, its second signal of a length is not)
    assert "check_fresh_instance" in report.failed, str(report)
    assert set(report.failed) <= {"check_fresh_instance", "check_fresh_process"}
    reason = report["check_fresh_instance"].reason
    # the kit's twin inputs (one shape, other detail) find it first; the author's inputs and their variants too
    assert "other data of the same shape" in reason or "tokenized in the other order by a fresh instance" in reason


def test_check_fresh_process_finds_a_module_level_cache_keyed_on_the_shape():
    _MODULE_CACHE.clear()
    report = _report(ModuleShapeCache(), "check_fresh_instance", "check_fresh_process")
    # consistent within this process: only a fresh process shows the stale tokens
    assert report.failed == ["check_fresh_process"], str(report)
    assert "a fresh process (call" in report["check_fresh_process"].reason


def test_check_fresh_process_finds_output_that_differs_on_the_first_call():
    report = _report(FirstCallDiffers(), "check_fresh_instance", "check_fresh_process")
    assert report.failed == ["check_fresh_process"], str(report)
    assert "call 1 of" in report["check_fresh_process"].reason


def test_check_fresh_process_is_skipped_for_a_class_no_process_can_import():
    class Local(HelloModality):
        name = "hello_local"

    report = _report(Local(), "check_fresh_process")
    assert report.skipped == ["check_fresh_process"] and report.ok
    assert "not importable from another process" in report["check_fresh_process"].reason


def test_check_files_finds_units_guessed_from_the_file_name():
    report = _report(RateFromFileName(), "check_files")
    assert report.failed == ["check_files"], str(report)
    reason = report["check_files"].reason
    assert re.search(r"the same file bytes load differently as '.*hz\.bin' and as 'input\.bin'", reason), reason
    assert "never its name" in reason


@pytest.mark.slow  # about 9 s on 2 cores: the default run must stay under 10 minutes in CI
def test_check_files_finds_a_crash_on_a_truncated_file():
    report = _report(TruncationCrash(), "check_files")
    assert report.failed == ["check_files"], str(report)
    assert re.search(
        r"(truncated|without its last byte).*raised ValueError instead of InputError", report["check_files"].reason
    )


def test_check_files_without_save_checks_only_bad_files():
    class Unsaved(TruncationCrash):
        name = "hello_unsaved"

        def save(self, sample, path):
            raise NotImplementedError

    assert _report(Unsaved(), "check_files").ok  # the truncation crash needs a valid file to truncate


# -- quality checks warn, and fail only when asked ----------------------------------------------
@pytest.mark.parametrize(
    ("broken", "check", "phrase", "options"),
    [
        (Collapsed, "check_quality_embedding_spread", "embeddings collapse", {}),
        (FixedFrames, "check_quality_token_rate", "tokens per second range from", {}),
        (Slow, "check_quality_speed", "the median sample input takes", {"time_budget": 0.001}),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else None,
)
@pytest.mark.slow  # about 9 s on 2 cores: the default run must stay under 10 minutes in CI
def test_quality_checks_warn_and_fail_only_when_asked(broken, check, phrase, options):
    report = check_modality(broken(), checks=[check], **options)
    assert report.ok and report.warned == [check], str(report)
    assert phrase in report[check].reason
    strict = check_modality(broken(), checks=[check], strict_warnings=True, **options)
    assert not strict.ok and strict.failed == [check]
    with pytest.warns(ContractWarning, match=phrase), active(resolve(**options)):
        getattr(checks, check)(broken())


def test_a_version_1_plugin_does_not_run_the_new_checks():
    class Pinned(Float64Crash):
        contract_version = 1

    report = check_modality(Pinned(), max_examples=5)
    assert report.ok and report.contract_version == 1
    assert "check_edge_inputs" in report.skipped and "check_fresh_process" in report.skipped


@pytest.mark.slow  # about 7 s on 2 cores: the default run must stay under 10 minutes in CI
def test_a_violation_seen_by_any_check_fails_the_run_attributed_to_its_rule():
    """A NaN that only a tokenize_batch path shows: check_finite never sees it (it calls encode on
    single inputs), check_batch_equals_singles does, and reports it as check_finite's rule."""

    class BatchNaN(WordsModality):
        name = "batch_nan"

        def tokenize(self, data, **units):
            self.check_units({**(data.units if isinstance(data, Sample) else {}), **units}, "<text>")
            text = data.data if isinstance(data, Sample) else data
            if isinstance(text, str) and text.count(" ") >= 2:
                enc = self.encode(text)
                emb = enc.emb.copy()
                emb[0, 0] = np.nan
                from v22sdk import TokenBatch

                return TokenBatch(emb, enc.attr, self.name, enc.offsets)
            return super().tokenize(data, **units)

    subset = ["check_finite", "check_determinism", "check_batch_equals_singles", "check_edge_inputs"]
    report = check_modality(BatchNaN(), max_examples=20, checks=subset)
    assert report.broken_rules == ["check_finite"], str(report)
    failing = report[report.failed[0]]
    assert failing.rule == "check_finite" and failing.reason.startswith("[rule check_finite]")
    # expected failures follow the rule, whichever check sees it
    expected = check_modality(BatchNaN(), {"check_finite": "NaN in batches, see #3"}, max_examples=20, checks=subset)
    assert expected.ok, str(expected)
    assert set(expected.xfailed) == {"check_finite", *report.failed}


def test_a_warning_is_a_warning_in_the_checks_plain_call():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ContractWarning)
        with pytest.raises(ContractWarning):
            checks.check_quality_embedding_spread(Collapsed())
    with pytest.raises(CheckFailure):
        with active(resolve(strict_warnings=True)):
            checks.check_quality_embedding_spread(Collapsed())
