"""Where every test must run (CI), a skip is a failure.

A test that needs a service or a package (PostgreSQL, Ray, espeak-ng, librosa, ...) skips with
its reason on a developer's machine that lacks it. In CI that same skip would let the run go
green without the test: there, ``scripts/ci_services.sh`` and the requirements files install
everything, so a skip means an install or a service start failed, and it is reported as a
failure naming the skip's reason.

"Where every test must run" is ``V22SDK_REQUIRE_SERVICES=1`` (``.ci/run`` sets it) or ``CI`` set
to anything but ``0``/``false`` (what hosted CI systems set); ``V22SDK_REQUIRE_SERVICES=0``
turns the rule off even under ``CI``. Expected failures (``xfail``) are not skips and are left
alone. Loaded by ``tests/conftest.py``.
"""

from __future__ import annotations

import os

import pytest

_OFF = ("", "0", "false", "no", "off")


def every_test_must_run(environ=os.environ) -> bool:
    own = environ.get("V22SDK_REQUIRE_SERVICES")
    if own is not None:
        return own.strip().lower() not in _OFF
    return environ.get("CI", "").strip().lower() not in _OFF


def _reason(longrepr) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (file, line, "Skipped: reason")
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _fail(report) -> None:
    report.outcome = "failed"
    report.longrepr = (
        "skipped where every test must run (V22SDK_REQUIRE_SERVICES or CI is set): "
        + _reason(report.longrepr)
        + "\n(scripts/ci_services.sh and requirements-dev.txt must install what this test needs)"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and every_test_must_run():
        _fail(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and every_test_must_run():  # a module-level importorskip
        _fail(report)
