"""What a failure says: values never shown inside their bound, reproductions that replay the input
(inline, or from a saved .npz when it is large), the public CheckFailure, and the settings."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from v22sdk import Encoding, Sample
from v22sdk.testing import CheckFailure, check_modality, checks, load_example, save_example
from v22sdk.testing._format import describe, number
from v22sdk.testing._settings import KitSettings, active, resolve

from .reference import SCHEMA, WordsModality


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (np.float32(1.0000001), "1.0000001"),
        (np.float64(1.0001000001), "1.0001000001"),
        (np.float32(-1.0000001), "-1.0000001"),
        (np.float64(1.00010001), "1.00010001"),
        (1.5, "1.5"),
        (np.float32(3e-8), "3e-08"),
        (np.float64(6.5e20), "6.5e+20"),
        (float("nan"), "nan"),
        (np.int16(-32768), "-32768"),
    ],
)
def test_numbers_are_shown_with_the_digits_that_identify_them(value, shown):
    assert number(value) == shown


class JustOver(WordsModality):
    """Writes a share of 1.0000001: out of bounds by one float32 step."""

    name = "just_over"

    def attributes(self, text, word, n):
        attr = super().attributes(text, word, n)
        attr[:, SCHEMA.index("words.upper")] = np.nextafter(np.float32(1), np.float32(2))
        return attr


def test_a_value_just_outside_its_bound_never_reads_as_the_bound():
    reason = check_modality(JustOver(), checks=["check_attr_bounds"], max_examples=5)["check_attr_bounds"].reason
    assert "(words.upper) = 1.0000001 is outside [-1, 1]" in reason, reason


class NaNOnLongText(WordsModality):
    """NaN once a text has more than 500 words (only the kit's long input has that many)."""

    name = "nan_long"

    def embed(self, counts):
        emb = super().embed(counts)
        if len(counts) > 500:
            emb[-1] = np.nan
        return emb


def test_a_large_falsifying_input_is_saved_and_replays(tmp_path):
    report = check_modality(
        NaNOnLongText(max_words=100_000), checks=["check_finite"], failures_dir=tmp_path, max_examples=5
    )
    result = report["check_finite"]
    assert result.status == "failed" and "kit input: long: base 0 repeated" in result.reason
    assert result.saved_to.startswith(str(tmp_path)) and result.saved_to.endswith(".npz")
    assert f"sample = load_example({result.saved_to!r})" in result.reproduction
    sample = load_example(result.saved_to)
    assert isinstance(sample.data, str) and len(sample.data) >= 20_000
    with pytest.raises(Exception, match="finite"):  # the reproduction replays the failure
        NaNOnLongText(max_words=100_000).tokenize(sample)


def test_a_small_falsifying_input_is_printed_as_code_that_replays():
    failure = None
    try:
        checks.check_attr_bounds(JustOver(), max_examples=5)
    except CheckFailure as exc:
        failure = exc
    assert failure is not None and failure.rule == "check_attr_bounds" and failure.check == "check_attr_bounds"
    assert isinstance(failure.example, Sample) and failure.saved_to is None
    namespace: dict = {}
    code = failure.reproduction.replace("from tests.kit.", "from kit.")
    exec(code.rsplit("\n", 1)[0], namespace)  # everything but the final tokenize call
    assert namespace["sample"].data == failure.example.data
    assert "modality.tokenize(sample)" in failure.reproduction


@pytest.mark.parametrize(
    "data",
    [
        np.arange(12, dtype=">i2").reshape(3, 4),
        np.asfortranarray(np.ones((3, 2), np.float32)),
        "text with a lone surrogate \ud800",
        np.zeros(0, np.float64),
    ],
)
def test_saved_examples_keep_values_dtype_and_layout(tmp_path, data):
    sample = Sample(data, {"sample_rate": 8000.0}, "<src>")
    back = load_example(save_example(sample, tmp_path / "x.npz"))
    assert back.units == {"sample_rate": 8000.0} and back.source == "<src>"
    if isinstance(data, str):
        assert back.data == data
    else:
        assert back.data.dtype == data.dtype and np.array_equal(back.data, data)
        assert back.data.flags.f_contiguous == data.flags.f_contiguous


def test_describe_says_layout_and_non_finite_values():
    text = describe(np.array([[1.0, np.nan], [2.0, 3.0]], dtype=">f8").T)
    assert "non-native byte order" in text and "Fortran order" in text and "1 non-finite" in text


def test_settings_default_to_random_locally_and_derandomized_on_ci(monkeypatch):
    from hypothesis import settings

    outer = settings.get_current_profile_name()
    settings.load_profile("default")  # an author's environment, not this project's profile
    try:
        for name in ("CI", "GITHUB_ACTIONS", "TF_BUILD", "BUILDKITE", "CIRCLECI", "CODEBUILD_BUILD_ID", "GITLAB_CI"):
            monkeypatch.delenv(name, raising=False)
        local = resolve()
        assert not local.derandomize and local.database is not None and local.max_examples == 20
        monkeypatch.setenv("CI", "true")
        assert resolve().derandomize and resolve().database is None
        settings.register_profile("author", max_examples=7, derandomize=False, database=None)
        settings.load_profile("author")  # the author's own profile is respected
        mine = resolve()
        assert mine.max_examples == 7 and not mine.derandomize and mine.database is None
        assert resolve(max_examples=3).max_examples == 3  # an explicit argument wins
    finally:
        settings.load_profile(outer)


def test_the_hypothesis_seed_option_seeds_the_kit(monkeypatch):
    import hypothesis.core

    monkeypatch.setattr(hypothesis.core, "global_force_seed", 1234)
    assert resolve(derandomize=False).seed == 1234


def test_a_random_run_reports_its_seed_and_replays_with_it():
    report = check_modality(WordsModality(), derandomize=False, seed=None, checks=["check_schema"])
    seed = report.settings["seed"]
    assert isinstance(seed, int) and f"seed {seed}" in str(report)
    assert KitSettings().max_examples == 20


def test_settings_apply_inside_an_active_block():
    with active(resolve(max_examples=4, seed=9)):
        assert resolve().max_examples == 4 and resolve().seed == 9
    assert resolve().seed != 9 or resolve().max_examples != 4


def test_check_failure_is_public_and_an_assertion():
    exc = CheckFailure("broken", rule="check_finite", check="check_determinism")
    assert isinstance(exc, AssertionError) and str(exc) == "broken"
    assert type(exc).__module__ == "v22sdk.testing" and exc.rule == "check_finite"
    assert [f.name for f in attrs.fields(Encoding)] == ["emb", "attr", "offsets"]  # as docs/contract-kit.md says
