"""pytest plugin of the contract test kit (entry point ``pytest11: v22sdk``).

Loaded by every pytest run in an environment where v22sdk is installed, so it imports only
pytest at module level; the kit itself is imported when a test uses it.

It adds:

* options ``--v22sdk-max-examples N`` (examples per property check, default 20),
  ``--v22sdk-seed N`` (the base seed of every check's example stream), ``--v22sdk-derandomize``,
  ``--v22sdk-strict-warnings`` (the quality checks fail instead of warning),
  ``--v22sdk-failures-dir DIR`` (where large falsifying inputs are saved) and
  ``--v22sdk-xfails-file FILE`` (JSON ``{"check_name": "reason"}`` or
  ``{"<modality>-check_name": "reason"}``: strict expected failures for every kit item);
* the hypothesis profile ``v22sdk`` (deadline=None, max_examples as above, derandomized with no
  example database on CI machines only), loaded unless the run chose another profile (the ``ci``
  profile hypothesis loads by itself on CI machines does not count as a choice); a profile the
  author chose is kept, and the kit's checks follow its example count, seed and database;
* the marker ``v22sdk_check(modality, check)`` that kit items carry;
* the fixture ``v22sdk_check``: ``check_modality`` bound to those options;
* a terminal summary line counting the kit's items by outcome.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

#: ``--v22sdk-max-examples`` of the running session (None: the kit's default); read by the kit.
active_max_examples: int | None = None
#: The kit options of the running session (max_examples, seed, derandomize, strict_warnings,
#: failures_dir), read by :mod:`v22sdk.testing._settings`.
active_options: dict[str, Any] = {}

_PREVIOUS = pytest.StashKey[tuple[Any, ...]]()
_XFAILS = pytest.StashKey[dict[str, Any]]()
_KIT_ITEMS = pytest.StashKey[set[Any]]()
_TALLY = pytest.StashKey[dict[str, Any]]()


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("v22sdk", "v22sdk contract test kit")
    group.addoption(
        "--v22sdk-max-examples",
        type=int,
        default=None,
        metavar="N",
        help="hypothesis examples per contract check (default 20)",
    )
    group.addoption(
        "--v22sdk-xfails-file",
        default=None,
        metavar="FILE",
        help='JSON file {"check_name": "reason"} of contract checks expected to fail',
    )
    group.addoption(
        "--v22sdk-seed",
        type=int,
        default=None,
        metavar="N",
        help="base seed of the contract checks' example streams (default: random, derandomized on CI)",
    )
    group.addoption(
        "--v22sdk-derandomize",
        action="store_true",
        default=None,
        help="derandomize the contract checks (the default on CI machines)",
    )
    group.addoption(
        "--v22sdk-strict-warnings",
        action="store_true",
        default=False,
        help="the contract kit's quality checks fail instead of warning",
    )
    group.addoption(
        "--v22sdk-failures-dir",
        default=None,
        metavar="DIR",
        help="where the contract kit saves large falsifying inputs (default: the temp folder)",
    )


def _read_xfails(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise pytest.UsageError(f"--v22sdk-xfails-file {path}: cannot read it as JSON: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise pytest.UsageError(f'--v22sdk-xfails-file {path}: must hold a JSON object {{"check_name": "reason", ...}}')
    return data


def pytest_configure(config: Any) -> None:
    global active_max_examples, active_options
    config.addinivalue_line("markers", "v22sdk_check(modality, check): an item of the v22sdk contract kit")
    chosen = config.getoption("v22sdk_max_examples", None)
    if chosen is not None and chosen < 1:
        raise pytest.UsageError("--v22sdk-max-examples must be at least 1")
    config.stash[_XFAILS] = _read_xfails(config.getoption("v22sdk_xfails_file", None))
    config.stash[_KIT_ITEMS] = set()
    config.stash[_TALLY] = {}
    previous_profile = _load_profile(config, chosen)
    config.stash[_PREVIOUS] = (active_max_examples, active_options, previous_profile)
    active_max_examples = chosen
    active_options = {
        "max_examples": chosen,
        "seed": config.getoption("v22sdk_seed", None),
        "derandomize": config.getoption("v22sdk_derandomize", None),
        "strict_warnings": bool(config.getoption("v22sdk_strict_warnings", False)),
        "failures_dir": config.getoption("v22sdk_failures_dir", None),
    }


def _load_profile(config: Any, chosen: int | None) -> tuple[str, Any] | None:
    """Register the ``v22sdk`` profile and load it unless the run chose another one.

    Returns the profile to restore at unconfigure (name and settings), or None when untouched.
    """
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # pragma: no cover - hypothesis is a dependency of v22sdk
        return None
    current = settings.get_current_profile_name()
    previous = (current, settings.get_profile(current))
    automatic = current in ("default", "v22sdk") or _hypothesis_chose_ci(current)
    # on a CI machine keep what hypothesis' own "ci" profile adds (print_blob) under ours
    parent = settings.get_profile("ci") if current == "ci" and automatic else None
    ci = _in_ci()
    extra = {"derandomize": True, "database": None} if ci else {}
    settings.register_profile(
        "v22sdk",
        parent,
        deadline=None,
        max_examples=chosen or 20,
        suppress_health_check=[HealthCheck.too_slow],
        **extra,
    )
    if config.getoption("hypothesis_profile", None) or not automatic:
        # the user chose a profile (option, or settings.load_profile in a conftest): keep it
        if current == "v22sdk":
            settings.register_profile("v22sdk", parent=previous[1])
        return None
    settings.load_profile("v22sdk")
    return previous


def _in_ci() -> bool:
    try:
        from hypothesis._settings import is_in_ci
    except ImportError:  # pragma: no cover - private helper moved
        import os

        return bool(os.environ.get("CI"))
    return bool(is_in_ci())


def _hypothesis_chose_ci(current: str) -> bool:
    """True when the active profile is the ``ci`` one hypothesis loads by itself on a CI machine.

    Hypothesis loads its built-in ``ci`` profile at import when it sees a CI environment variable
    (``CI``, ``GITHUB_ACTIONS``, ...). That is not the user's choice, so the ``v22sdk`` profile
    and ``--v22sdk-max-examples`` still apply there; a ``ci`` profile the user registered or
    chose with ``--hypothesis-profile`` is kept.
    """
    if current != "ci":
        return False
    try:
        from hypothesis import _settings as hypothesis_settings
    except ImportError:  # pragma: no cover - private module moved; treat the profile as chosen
        return False
    builtin = getattr(hypothesis_settings, "CI", None)
    return builtin is not None and hypothesis_settings.settings.get_profile("ci") is builtin


def pytest_sessionstart(session: Any) -> None:
    import sys

    checks = sys.modules.get("v22sdk.testing.checks")
    if checks is not None:  # an outer session (pytester) may have reported rules of the same modality
        checks._REPORTED.clear()


def pytest_unconfigure(config: Any) -> None:
    global active_max_examples, active_options
    previous = config.stash.get(_PREVIOUS, None)
    if previous is None:
        return
    active_max_examples, active_options, profile = previous
    if profile is not None:  # an outer pytester run's profile, or hypothesis' default
        from hypothesis import settings

        name, saved = profile
        settings.register_profile(name, parent=saved)
        settings.load_profile(name)


def _expected_reason(xfails: dict[str, str], modality: str | None, check: str) -> str | None:
    if modality and f"{modality}-{check}" in xfails:
        return xfails[f"{modality}-{check}"]
    return xfails.get(check)


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    xfails = config.stash.get(_XFAILS, {})
    if xfails:
        from v22sdk.testing import list_checks

        known = set(list_checks())
        unknown = sorted(k for k in xfails if k.rsplit("-", 1)[-1] not in known)
        if unknown:
            raise pytest.UsageError(f"--v22sdk-xfails-file names unknown check(s): {', '.join(unknown)}")
    kit_items = config.stash.get(_KIT_ITEMS, set())
    for item in items:
        mark = item.get_closest_marker("v22sdk_check")
        if mark is None:
            continue
        kit_items.add(item.nodeid)
        reason = _expected_reason(xfails, mark.kwargs.get("modality"), mark.kwargs.get("check", ""))
        if reason is not None and item.get_closest_marker("xfail") is None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"{reason} (from --v22sdk-xfails-file)"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    report = yield
    kit_items = item.config.stash.get(_KIT_ITEMS, None)
    if kit_items and item.nodeid in kit_items:
        _tally(item.config, report)
    return report


def _tally(config: Any, report: Any) -> None:
    """Count a kit item's outcome once: its call, or its setup when that did not pass."""
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        if hasattr(report, "wasxfail"):
            status = "xfailed" if report.skipped else "xpassed"
        else:
            status = report.outcome
        if report.when == "call" and report.failed and "XPASS(strict)" in str(report.longrepr):
            status = "xpassed"
        tally = config.stash[_TALLY]
        tally[status] = tally.get(status, 0) + 1


def pytest_terminal_summary(terminalreporter: Any, config: Any) -> None:
    tally = config.stash.get(_TALLY, {})
    if not tally:
        return
    parts = ", ".join(f"{tally[k]} {k}" for k in ("passed", "failed", "xfailed", "xpassed", "skipped") if k in tally)
    terminalreporter.write_line(f"v22sdk contract kit: {sum(tally.values())} checks ran: {parts}")


@pytest.fixture
def v22sdk_check(request: Any) -> Any:
    """``check_modality`` bound to the session's ``--v22sdk-*`` options and ``--v22sdk-xfails-file``:
    ``report = v22sdk_check(MyModality()); report.raise_for_failures()``."""
    from v22sdk.testing import check_modality
    from v22sdk.testing.report import as_modality

    xfails = request.config.stash.get(_XFAILS, {})

    def run(modality: Any, expected_failed_checks: dict[str, str] | None = None, **options: Any) -> Any:
        instance = as_modality(modality)
        from_file = {k: v for k, v in xfails.items() if "-" not in k}
        from_file.update({k.split("-", 1)[1]: v for k, v in xfails.items() if k.split("-", 1)[0] == instance.name})
        return check_modality(instance, {**from_file, **(expected_failed_checks or {})}, **options)

    return run
