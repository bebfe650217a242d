"""Run the checks on one modality and report every outcome: :func:`check_modality`.

The report says what ran, passed, failed, was expected to fail (xfailed), was expected to fail
but passed (xpassed: a stale expectation, which makes the report not ok) and what was skipped
because the plugin pins an older contract version. A run with zero checks is never ok.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import attrs

from ..modality import Modality
from ._registry import CheckFailure, all_checks, list_checks, resolve_version

STATUSES = ("passed", "failed", "xfailed", "xpassed", "skipped")


@attrs.frozen
class CheckResult:
    """Outcome of one check: ``status`` is one of :data:`STATUSES`; ``reason`` says why
    (the failure message, the expected-failure reason, or why it was skipped)."""

    name: str
    status: str = attrs.field(validator=attrs.validators.in_(STATUSES))
    reason: str = ""
    since: int = 1
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class ContractReport:
    """All check results of one modality under one contract version."""

    modality: str
    contract_version: int
    results: tuple[CheckResult, ...]

    def _named(self, status: str) -> list[str]:
        return [r.name for r in self.results if r.status == status]

    @property
    def ran(self) -> list[str]:
        """Checks that ran (every status but skipped)."""
        return [r.name for r in self.results if r.status != "skipped"]

    @property
    def passed(self) -> list[str]:
        return self._named("passed")

    @property
    def failed(self) -> list[str]:
        return self._named("failed")

    @property
    def xfailed(self) -> list[str]:
        return self._named("xfailed")

    @property
    def xpassed(self) -> list[str]:
        return self._named("xpassed")

    @property
    def skipped(self) -> list[str]:
        return self._named("skipped")

    @property
    def ok(self) -> bool:
        """True when something ran, nothing failed and no expected failure passed."""
        return bool(self.ran) and not self.failed and not self.xpassed

    def __getitem__(self, name: str) -> CheckResult:
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(f"no check {name!r} in this report")

    def counts(self) -> dict[str, int]:
        return {"ran": len(self.ran), **{s: len(self._named(s)) for s in STATUSES}}

    def to_dict(self) -> dict[str, Any]:
        return {"modality": self.modality, "contract_version": self.contract_version, "ok": self.ok,
                "counts": self.counts(), "results": [r.to_dict() for r in self.results]}

    def __str__(self) -> str:
        width = max((len(r.name) for r in self.results), default=10)
        lines = [f"v22sdk contract v{self.contract_version} — modality {self.modality!r}: "
                 f"{'OK' if self.ok else 'FAILED'}"]
        for r in self.results:
            reason = r.reason.splitlines()
            first = f"  {reason[0]}" if reason else ""
            lines.append(f"  {r.name:<{width}}  {r.status:<7} {r.seconds:6.2f}s{first}")
            lines += [f"  {'':<{width}}  {'':<7} {'':>7}   {more}" for more in reason[1:]]
        c = self.counts()
        lines.append(f"  {c['ran']} ran: {c['passed']} passed, {c['failed']} failed, {c['xfailed']} xfailed, "
                     f"{c['xpassed']} xpassed; {c['skipped']} skipped")
        return "\n".join(lines)

    def raise_for_failures(self) -> None:
        """Raise ``AssertionError`` with the whole report unless :attr:`ok`."""
        if not self.ok:
            raise AssertionError(str(self))


def as_modality(modality_or_class: Any) -> Modality:
    """An instance: a class is instantiated with no arguments (its default config)."""
    modality: Modality = modality_or_class() if isinstance(modality_or_class, type) else modality_or_class
    return modality


def validate_expected(expected_failed_checks: Mapping[str, str] | None) -> dict[str, str]:
    """Check names must exist: a typo must not silently expect nothing."""
    expected = dict(expected_failed_checks or {})
    unknown = sorted(set(expected) - set(all_checks()))
    if unknown:
        raise ValueError(f"expected_failed_checks names unknown check(s) {', '.join(unknown)}; "
                         f"known: {', '.join(all_checks())}")
    return expected


def run_check(name: str, modality: Modality, *, expected_reason: str | None = None,
              max_examples: int | None = None) -> CheckResult:
    """Run one check and classify its outcome (never raises for a failing check)."""
    check = all_checks()[name]
    start = time.perf_counter()
    try:
        check(modality, max_examples=max_examples)
        message = None
    except CheckFailure as exc:
        message = str(exc)
    except Exception as exc:  # a check that crashes is a failure of the modality, reported as such
        message = f"the check crashed with {type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start
    since = check.since  # type: ignore[attr-defined]
    if expected_reason is None:
        return CheckResult(name, "passed" if message is None else "failed", message or "", since, seconds)
    if message is None:
        return CheckResult(name, "xpassed", f"expected to fail ({expected_reason}) but passed", since, seconds)
    first = message.splitlines()[0]
    return CheckResult(name, "xfailed", f"{expected_reason} (failed: {first})", since, seconds)


def check_modality(modality_or_class: Any, expected_failed_checks: Mapping[str, str] | None = None, *,
                   contract_version: int | None = None, max_examples: int = 20) -> ContractReport:
    """Run every check of the contract version on a modality and return the report.

    ``expected_failed_checks`` maps check names to the reason they are expected to fail;
    ``contract_version`` defaults to the modality's ``contract_version`` attribute, else the newest.
    Checks newer than that version are reported as skipped. Never raises for a failing check.
    """
    modality = as_modality(modality_or_class)
    expected = validate_expected(expected_failed_checks)
    version = resolve_version(contract_version, modality)
    selected = set(list_checks(version))
    results = []
    for name, check in all_checks().items():
        if name not in selected:
            results.append(CheckResult(name, "skipped", f"added in contract version {check.since}; "  # type: ignore[attr-defined]
                                       f"this run uses version {version}", check.since))  # type: ignore[attr-defined]
            continue
        results.append(run_check(name, modality, expected_reason=expected.get(name), max_examples=max_examples))
    return ContractReport(getattr(modality, "name", type(modality).__name__), version, tuple(results))
