"""The pytest side of the kit, end to end with pytester: item ids and outcomes of
parametrize_with_checks and ModalityContractTests, strict xfails, the xfails file, the options,
the hypothesis profile and the v22sdk_check fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from v22sdk.testing import list_checks

REFERENCE = (Path(__file__).parent / "reference.py").read_text(encoding="utf-8")
BROKEN = """
import numpy as np
from reference import WordsModality

class NonUnit(WordsModality):
    name = "non_unit"

    def embed(self, counts):
        return (super().embed(counts) * 2).astype(np.float32)
"""


N = len(list_checks())


@pytest.fixture
def project(pytester, author_environment):
    pytester.makepyfile(reference=REFERENCE, broken=BROKEN)
    return pytester


@pytest.fixture
def author_environment():
    """A plugin author's run: hypothesis' default profile, not this project's (tests/conftest.py)."""
    from hypothesis import settings

    outer = settings.get_current_profile_name()
    settings.load_profile("default")
    yield
    settings.load_profile(outer)


def test_parametrize_with_checks_gives_one_item_per_modality_and_check(project):
    project.makepyfile(
        test_it="""
        from v22sdk.testing import parametrize_with_checks
        from reference import WordsModality
        from broken import NonUnit

        def expected(modality):
            return {"check_unit_norm_emb": "raw counts"} if modality.name == "non_unit" else {}

        @parametrize_with_checks([WordsModality(), NonUnit()], expected_failed_checks=expected)
        def test_contract(modality, check):
            check(modality)
    """
    )
    result = project.runpytest("-v", "-rx", "--v22sdk-max-examples=5")
    result.assert_outcomes(passed=2 * N - 1, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_contract[[]words-check_schema[]] PASSED*",
            "*test_contract[[]words-check_unit_norm_emb[]] PASSED*",
            "*test_contract[[]non_unit-check_unit_norm_emb[]] XFAIL*",
            "*test_contract[[]non_unit-check_offsets[]] PASSED*",
            f"v22sdk contract kit: {2 * N} checks ran: {2 * N - 1} passed, 1 xfailed",
            "XFAIL test_it.py::test_contract[[]non_unit-check_unit_norm_emb[]] - raw counts",
        ]
    )


def test_a_failing_item_names_the_rule_and_the_falsifying_input(project):
    project.makepyfile(
        test_it="""
        from v22sdk.testing import parametrize_with_checks
        from broken import NonUnit

        @parametrize_with_checks([NonUnit()])
        def test_contract(modality, check):
            check(modality)
    """
    )
    result = project.runpytest("-k", "unit_norm or finite", "--v22sdk-max-examples=5")
    result.assert_outcomes(passed=1, failed=1, deselected=N - 2)
    result.stdout.fnmatch_lines(
        [
            "*CheckFailure: ‖emb[[]0[]]‖ = * must be 1 ± 0.0001",
            "*falsifying example: Sample(data=*",
            "FAILED test_it.py::test_contract[[]non_unit-check_unit_norm_emb[]]*",
        ]
    )


def test_a_stale_expected_failure_turns_red(project):
    project.makepyfile(
        test_it="""
        from v22sdk.testing import parametrize_with_checks
        from reference import WordsModality

        @parametrize_with_checks([WordsModality()], expected_failed_checks={"check_finite": "NaN on blanks"})
        def test_contract(modality, check):
            check(modality)
    """
    )
    result = project.runpytest("--v22sdk-max-examples=5")
    result.assert_outcomes(passed=N - 1, failed=1)
    result.stdout.fnmatch_lines(
        ["*[[]XPASS(strict)[]] NaN on blanks*", f"v22sdk contract kit: {N} checks ran: {N - 1} passed, 1 xpassed"]
    )


def test_modality_contract_tests_base_class(project):
    project.makepyfile(
        test_it="""
        import pytest
        from v22sdk.testing import ModalityContractTests
        from reference import WordsModality
        from broken import NonUnit

        class TestWords(ModalityContractTests):
            modality_class = WordsModality

        class TestNonUnit(ModalityContractTests):
            modality_class = NonUnit
            expected_failed_checks = {"check_unit_norm_emb": "raw counts"}

        class TestConfigured(ModalityContractTests):
            @pytest.fixture
            def modality(self):
                return WordsModality(max_words=8)
    """
    )
    result = project.runpytest("-v", "--v22sdk-max-examples=5")
    result.assert_outcomes(passed=3 * N - 1, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "*TestWords::test_contract[[]check_determinism[]] PASSED*",
            "*TestNonUnit::test_contract[[]check_unit_norm_emb[]] XFAIL*",
            "*TestConfigured::test_contract[[]check_offsets[]] PASSED*",
        ]
    )


def test_xfails_file_marks_items_and_feeds_the_fixture(project):
    project.makefile(".json", xfails='{"non_unit-check_unit_norm_emb": "raw counts"}')
    project.makepyfile(
        test_it="""
        from v22sdk.testing import parametrize_with_checks
        from reference import WordsModality
        from broken import NonUnit

        @parametrize_with_checks([WordsModality(), NonUnit()])
        def test_contract(modality, check):
            check(modality)

        def test_fixture(v22sdk_check):
            report = v22sdk_check(NonUnit)
            assert report.ok and report.xfailed == ["check_unit_norm_emb"], str(report)
            given = v22sdk_check(NonUnit, {"check_unit_norm_emb": "given here"})  # overrides the file
            assert given["check_unit_norm_emb"].reason.startswith("given here (failed:")
    """
    )
    result = project.runpytest("-rx", "--v22sdk-xfails-file=xfails.json", "--v22sdk-max-examples=5")
    result.assert_outcomes(passed=2 * N, xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL *non_unit-check_unit_norm_emb[]] - raw counts (from --v22sdk-xfails-file)"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"check_nope": "typo"}', "*--v22sdk-xfails-file names unknown check(s): check_nope*"),
        ("not json", "*--v22sdk-xfails-file xfails.json: cannot read it as JSON*"),
        ('["check_finite"]', "*must hold a JSON object*"),
    ],
)
def test_a_bad_xfails_file_is_a_usage_error(project, content, message):
    project.makefile(".json", xfails=content)
    project.makepyfile(test_it="def test_nothing():\n    pass\n")
    result = project.runpytest("--v22sdk-xfails-file=xfails.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_max_examples_option_and_hypothesis_profile(project, monkeypatch):
    for name in (
        "CI",
        "GITHUB_ACTIONS",
        "TF_BUILD",
        "BUILDKITE",
        "CIRCLECI",
        "CIRRUS_CI",
        "CODEBUILD_BUILD_ID",
        "GITLAB_CI",
        "HEROKU_TEST_RUN_ID",
        "TEAMCITY_VERSION",
        "bamboo.buildKey",
    ):
        monkeypatch.delenv(name, raising=False)
    from hypothesis import settings

    from v22sdk.testing._property import default_max_examples

    outer = (settings.get_current_profile_name(), default_max_examples())
    project.makepyfile(
        test_it="""
        from hypothesis import settings
        from v22sdk.testing._property import default_max_examples
        from reference import WordsModality

        calls = []

        class Counting(WordsModality):
            name = "counting"
            def encode(self, data):
                calls.append(data)
                return super().encode(data)

        def test_profile():
            assert settings.get_current_profile_name() == "v22sdk"
            current = settings()
            # derandomized (and no example database) on CI machines only, as hypothesis advises
            assert current.deadline is None and not current.derandomize and current.database is not None
            assert current.max_examples == 7 and default_max_examples() == 7

        def test_fixture_uses_the_option(v22sdk_check):
            from v22sdk.testing import checks
            from v22sdk.testing._settings import active, resolve
            with active(resolve(contract_version=1)):  # version 1: no inputs of the kit's own
                checks.check_finite(Counting())
            assert 1 <= len(calls) <= 7
    """
    )
    project.runpytest("--v22sdk-max-examples=7").assert_outcomes(passed=2)
    assert (settings.get_current_profile_name(), default_max_examples()) == outer  # restored
    result = project.runpytest("--v22sdk-max-examples=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_a_profile_the_user_chose_is_kept(project):
    project.makeconftest("""
        from hypothesis import settings
        settings.register_profile("mine", max_examples=3)
        settings.load_profile("mine")
    """)
    project.makepyfile(
        test_it="""
        from hypothesis import settings

        def test_profile():
            assert settings.get_current_profile_name() == "mine" and settings().max_examples == 3
    """
    )
    project.runpytest().assert_outcomes(passed=1)


def test_on_a_ci_machine_the_kit_profile_and_option_still_apply(project, monkeypatch):
    # hypothesis loads its own "ci" profile at import when it sees CI=...; that is not a choice
    # the user made, so --v22sdk-max-examples must still work there (a CI run once failed on it)
    monkeypatch.setenv("CI", "true")
    project.makepyfile(
        test_it="""
        import os
        from hypothesis import settings

        def test_profile():
            assert os.environ["CI"] == "true"
            assert settings.get_current_profile_name() == "v22sdk"
            current = settings()
            assert current.max_examples == 7 and current.derandomize and current.deadline is None
            assert current.database is None and current.print_blob  # kept from hypothesis' ci profile
    """
    )
    project.runpytest_subprocess("--v22sdk-max-examples=7").assert_outcomes(passed=1)


def test_the_ci_profile_chosen_on_the_command_line_is_kept(project, monkeypatch):
    monkeypatch.setenv("CI", "true")
    project.makepyfile(
        test_it="""
        from hypothesis import settings

        def test_profile():
            assert settings.get_current_profile_name() == "ci" and settings().max_examples == 100
    """
    )
    project.runpytest_subprocess("--hypothesis-profile=ci").assert_outcomes(passed=1)


def test_the_plugin_module_is_cheap_to_import():
    import subprocess
    import sys

    code = (
        "import sys, v22sdk.testing.pytest_plugin; "
        "print(sorted(m for m in ('numpy', 'hypothesis', 'v22sdk.testing.checks', 'torch') if m in sys.modules))"
    )
    # the v22sdk package itself imports numpy; the plugin must add nothing beyond it
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "hypothesis" not in out and "v22sdk.testing.checks" not in out and "torch" not in out


def test_item_ids_name_the_configuration(project):
    project.makepyfile(
        test_it="""
        from v22sdk.testing import parametrize_with_checks
        from reference import WordsModality

        @parametrize_with_checks([WordsModality(), WordsModality(max_words=8), WordsModality(max_words=8)])
        def test_contract(modality, check):
            check(modality)
    """
    )
    result = project.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "*test_contract[[]words-check_finite[]]",
            "*test_contract[[]words(max_words=8)-check_finite[]]",
            "*test_contract[[]words(max_words=8)#2-check_finite[]]",
        ]
    )
    assert "check_finite0" not in result.stdout.str()


def test_a_crash_shows_the_authors_traceback_and_hides_the_kits(project):
    project.makepyfile(
        test_it="""
        from v22sdk.testing import parametrize_with_checks
        from reference import WordsModality

        def _ratio(text):
            return len(text) / text.count("\\x00")

        class Crashy(WordsModality):
            name = "crashy"

            def encode(self, data):
                _ratio(str(data))  # every input crashes: no sample holds a NUL
                return super().encode(data)

        @parametrize_with_checks([Crashy()])
        def test_contract(modality, check):
            check(modality)
    """
    )
    result = project.runpytest("-k", "check_finite", "--v22sdk-max-examples=10")
    result.assert_outcomes(failed=1, deselected=N - 1)
    out = result.stdout.str()
    assert "def _ratio(text):" in out and "test_it.py:5: ZeroDivisionError" in out
    assert "The above exception was the direct cause of the following exception" in out
    assert "v22sdk.testing.CheckFailure: encode raised ZeroDivisionError on a valid input from sample_inputs()" in out
    assert "v22sdk/testing/checks.py:" not in out and "v22sdk/testing/_property.py:" not in out


def test_quality_warnings_are_warnings_unless_strict(project):
    project.makepyfile(
        test_it="""
        import numpy as np
        from v22sdk import Encoding
        from v22sdk.testing import parametrize_with_checks
        from reference import WordsModality, projection

        class Constant(WordsModality):
            name = "constant"

            def embed(self, counts):
                return np.tile(projection()[:, 26].astype(np.float32), (len(counts), 1))

        @parametrize_with_checks([Constant()])
        def test_contract(modality, check):
            check(modality)
    """
    )
    result = project.runpytest("-k", "quality_embedding", "--v22sdk-max-examples=10")
    result.assert_outcomes(passed=1, deselected=N - 1)
    result.stdout.fnmatch_lines(["*ContractWarning: check_quality_embedding_spread: embeddings collapse*"])
    strict = project.runpytest("-k", "quality_embedding", "--v22sdk-max-examples=10", "--v22sdk-strict-warnings")
    strict.assert_outcomes(failed=1, deselected=N - 1)
