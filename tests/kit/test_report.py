"""check_modality's report, expected failures, and contract-version pinning."""

from __future__ import annotations

import json

import pytest

from v22sdk.testing import (
    CONTRACT_VERSION,
    CheckResult,
    ContractReport,
    _registry,
    check_modality,
    get_check,
    list_checks,
)

from .broken import NonUnitEmb
from .reference import WordsModality

V1 = [
    "check_schema",
    "check_shape_dtype",
    "check_finite",
    "check_unit_norm_emb",
    "check_attr_bounds",
    "check_declared_slots",
    "check_offsets",
    "check_determinism",
    "check_batch_equals_singles",
    "check_invalid_inputs",
    "check_config_roundtrip",
]
V2 = ["check_input_spec", "check_edge_inputs", "check_fresh_instance", "check_fresh_process", "check_files"]
QUALITY = ["check_quality_embedding_spread", "check_quality_token_rate", "check_quality_speed"]
ALL = V1 + V2 + QUALITY


def test_contract_versions_one_and_two_and_their_named_checks():
    assert CONTRACT_VERSION == 2
    assert list_checks(1) == V1 and list_checks() == list_checks(2) == ALL
    assert list_checks(level="warning") == QUALITY and list_checks(1, level="warning") == []
    assert all(get_check(name).since == 1 and get_check(name).__doc__ for name in V1)
    assert all(get_check(name).since == 2 and get_check(name).__doc__ for name in V2 + QUALITY)
    with pytest.raises(ValueError, match="newer than this v22sdk test kit"):
        list_checks(3)
    with pytest.raises(KeyError, match="no contract check named 'check_nope'"):
        get_check("check_nope")


def test_expected_failure_is_xfailed_with_its_reason():
    report = check_modality(NonUnitEmb(), {"check_unit_norm_emb": "emb is raw counts, fixed in 2.0"})
    result = report["check_unit_norm_emb"]
    assert result.status == "xfailed" and result.reason.startswith("emb is raw counts, fixed in 2.0 (failed: ‖emb[")
    assert report.ok and report.xfailed == ["check_unit_norm_emb"] and not report.failed
    assert len(report.ran) == len(ALL) and len(report.passed) == len(ALL) - 1


def test_stale_expected_failure_is_xpassed_and_not_ok():
    report = check_modality(WordsModality, {"check_finite": "NaN on blanks"})
    assert report.xpassed == ["check_finite"] and not report.ok
    assert "expected to fail (NaN on blanks) but passed" in report["check_finite"].reason
    with pytest.raises(AssertionError, match="check_finite +xpassed"):
        report.raise_for_failures()


def test_unknown_expected_check_is_an_error():
    with pytest.raises(ValueError, match="unknown check.*check_unit_norm"):
        check_modality(WordsModality(), {"check_unit_norm": "typo"})


def test_report_renders_and_serialises():
    report = check_modality(NonUnitEmb(), max_examples=5)
    text = str(report)
    assert text.splitlines()[0] == "v22sdk contract v2 — modality 'non_unit_emb': FAILED"
    assert all(name in text for name in ALL)
    assert f"{len(ALL)} ran: {len(ALL) - 1} passed, 1 failed, 0 xfailed, 0 xpassed, 0 warned; 0 skipped" in text
    assert text.splitlines()[-1] == "  5 examples per check, derandomized"
    data = json.loads(json.dumps(report.to_dict()))
    assert data["ok"] is False and data["counts"]["failed"] == 1 and data["contract_version"] == 2
    assert data["broken_rules"] == ["check_unit_norm_emb"] and data["settings"]["max_examples"] == 5
    assert [r["name"] for r in data["results"]] == ALL
    failed = data["results"][ALL.index("check_unit_norm_emb")]
    assert failed["rule"] == "check_unit_norm_emb" and "modality.tokenize(sample)" in failed["reproduction"]
    with pytest.raises(AssertionError, match="check_unit_norm_emb +failed"):
        report.raise_for_failures()
    check_modality(WordsModality(), max_examples=5).raise_for_failures()


def test_a_report_where_nothing_ran_is_not_ok():
    report = ContractReport("x", 1, (CheckResult("check_schema", "skipped", "pinned"),))
    assert report.ran == [] and not report.ok
    with pytest.raises(ValueError):
        CheckResult("check_schema", "maybe")


def test_a_crashing_check_is_recorded_not_raised():
    class NoSchema(WordsModality):
        name = "no_schema"
        schema = None

    report = check_modality(NoSchema(), max_examples=3, checks=["check_schema", "check_declared_slots"])
    assert "schema must be an AttributeSchema, got NoneType" in report["check_schema"].reason
    # no schema declares no slot, so every written slot is undeclared
    assert "is written but slot 0 is not declared" in report["check_declared_slots"].reason

    class OddSchema(WordsModality):
        name = "odd_schema"
        schema = type("NotASchema", (), {"slots": 5})()

    result = check_modality(OddSchema(), max_examples=3, checks=["check_declared_slots"])["check_declared_slots"]
    assert result.status == "failed" and result.reason.startswith("the check crashed with TypeError")


@pytest.fixture
def version_three(monkeypatch):
    """Pretend a newer kit: contract version 3 adds check_future."""
    monkeypatch.setattr(_registry, "_EXTRA", {})
    monkeypatch.setattr(_registry, "CONTRACT_VERSION", 3)

    @_registry.contract_check(since=3)
    def check_future(modality, *, max_examples=None):
        raise _registry.CheckFailure("a rule of contract version 3")

    return check_future


def test_new_checks_skip_plugins_pinned_to_an_older_version(version_three):
    assert list_checks() == ALL + ["check_future"] and list_checks(2) == ALL and list_checks(1) == V1
    assert check_modality(WordsModality(), max_examples=3, checks=["check_schema", "check_future"]).failed == [
        "check_future"
    ]

    class Pinned(WordsModality):
        contract_version = 2

    report = check_modality(Pinned(), max_examples=3, fresh_process=False)
    assert report.ok and report.contract_version == 2
    assert report.skipped == ["check_fresh_process", "check_future"]
    assert report["check_future"].reason == "added in contract version 3; this run uses version 2"
    one = check_modality(WordsModality(), contract_version=1, max_examples=3)
    assert one.ok and one.skipped == V2 + QUALITY + ["check_future"]
    with pytest.raises(ValueError, match="check names start with 'check_'"):
        _registry.contract_check(since=2)(lambda m: None)
