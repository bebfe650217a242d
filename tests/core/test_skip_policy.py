"""tests/skip_policy.py: in CI a skipped test (a missing service or package) fails the run."""

from __future__ import annotations

import pytest
from skip_policy import every_test_must_run

SKIPPING = """
import pytest
pytest.importorskip("no_such_module_v22sdk", reason="the module-level kind")

def test_x():
    pass
"""
SKIPPING_INSIDE = """
import pytest

def test_needs_a_service():
    pytest.skip("no PostgreSQL binaries")

@pytest.mark.xfail(reason="known", strict=True)
def test_expected_failure():
    assert False

def test_ok():
    pass
"""


@pytest.mark.parametrize(
    "env, expected",
    [
        ({}, False),
        ({"CI": "true"}, True),
        ({"CI": "0"}, False),
        ({"CI": "false"}, False),
        ({"V22SDK_REQUIRE_SERVICES": "1"}, True),
        ({"CI": "true", "V22SDK_REQUIRE_SERVICES": "0"}, False),
        ({"V22SDK_REQUIRE_SERVICES": ""}, False),
    ],
)
def test_when_every_test_must_run(env, expected):
    assert every_test_must_run(env) is expected


def test_a_skip_fails_where_every_test_must_run(pytester, monkeypatch):
    pytester.makepyfile(test_a=SKIPPING_INSIDE, test_b=SKIPPING)
    monkeypatch.setenv("V22SDK_REQUIRE_SERVICES", "1")
    result = pytester.runpytest("-p", "skip_policy", "-p", "no:cacheprovider", "test_a.py")
    result.assert_outcomes(passed=1, failed=1, xfailed=1)
    result.stdout.fnmatch_lines(["*skipped where every test must run*no PostgreSQL binaries*"])
    result = pytester.runpytest("-p", "skip_policy", "-p", "no:cacheprovider", "test_b.py")
    assert result.ret != 0  # a collection error stops the session
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*skipped where every test must run*the module-level kind*"])


def test_a_skip_stays_a_skip_on_a_developer_machine(pytester, monkeypatch):
    pytester.makepyfile(test_a=SKIPPING_INSIDE, test_b=SKIPPING)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("V22SDK_REQUIRE_SERVICES", "0")
    result = pytester.runpytest("-p", "skip_policy", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=2, xfailed=1)
