"""Run the checks on one modality and report every outcome: :func:`check_modality`.

The report says what ran, passed, failed, was expected to fail (xfailed), was expected to fail
but passed (xpassed: a stale expectation, which makes the report not ok), was skipped (a check of
a newer contract version than the plugin pins, or one that cannot run on it) and what warned (a
quality check's finding: reported, not a failure unless ``strict_warnings``). A run with zero
checks is never ok.

A failure is attributed to the rule it breaks (``CheckResult.rule``): when ``check_determinism``
draws an input on which the embedding is NaN, the failure is ``check_finite``'s rule, seen by
``check_determinism``. An expected failure of ``check_finite`` covers it wherever it is seen.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ..modality import Modality
from ._registry import CheckFailure, CheckSkipped, ContractWarning, resolve_version
from ._settings import _UNSET, active, resolve
from .catalog import all_checks, list_checks
from .checks import forget_reported

STATUSES = ("passed", "failed", "xfailed", "xpassed", "skipped", "warned")


@attrs.frozen
class CheckResult:
    """Outcome of one check: ``status`` is one of :data:`STATUSES`; ``reason`` says why (the failure
    message, the expected-failure reason, why it was skipped, the warning). ``rule`` is the check
    whose rule a failure breaks (its own name, or another check's when it saw another rule broken);
    ``reproduction`` replays the falsifying input, ``saved_to`` is where a large one was saved and
    ``traceback`` the plugin's own traceback when it crashed."""

    name: str
    status: str = attrs.field(validator=attrs.validators.in_(STATUSES))
    reason: str = ""
    since: int = 1
    seconds: float = 0.0
    level: str = "error"
    rule: str = ""
    reproduction: str = ""
    saved_to: str = ""
    traceback: str = ""

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class ContractReport:
    """All check results of one modality under one contract version."""

    modality: str
    contract_version: int
    results: tuple[CheckResult, ...]
    settings: dict[str, Any] = attrs.field(factory=dict)
    strict_warnings: bool = False

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
    def warned(self) -> list[str]:
        return self._named("warned")

    @property
    def broken_rules(self) -> list[str]:
        """The rules (by owning check) that failed, whichever check saw them, in run order."""
        order = {name: i for i, name in enumerate(all_checks())}
        rules = {r.rule or r.name for r in self.results if r.status == "failed"}
        return sorted(rules, key=lambda name: order.get(name, len(order)))

    @property
    def ok(self) -> bool:
        """True when something ran, nothing failed, no expected failure passed, and (with
        ``strict_warnings``) nothing warned."""
        return bool(self.ran) and not self.failed and not self.xpassed and not (self.strict_warnings and self.warned)

    def __getitem__(self, name: str) -> CheckResult:
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(f"no check {name!r} in this report")

    def counts(self) -> dict[str, int]:
        return {"ran": len(self.ran), **{s: len(self._named(s)) for s in STATUSES}}

    def to_dict(self) -> dict[str, Any]:
        return {
            "modality": self.modality,
            "contract_version": self.contract_version,
            "ok": self.ok,
            "counts": self.counts(),
            "broken_rules": self.broken_rules,
            "settings": dict(self.settings),
            "results": [r.to_dict() for r in self.results],
        }

    def __str__(self) -> str:
        width = max((len(r.name) for r in self.results), default=10)
        lines = [
            f"v22sdk contract v{self.contract_version} — modality {self.modality!r}: {'OK' if self.ok else 'FAILED'}"
        ]
        for r in self.results:
            reason = r.reason.splitlines()
            first = f"  {reason[0]}" if reason else ""
            lines.append(f"  {r.name:<{width}}  {r.status:<7} {r.seconds:6.2f}s{first}")
            lines += [f"  {'':<{width}}  {'':<7} {'':>7}   {more}" for more in reason[1:]]
        c = self.counts()
        lines.append(
            f"  {c['ran']} ran: {c['passed']} passed, {c['failed']} failed, {c['xfailed']} xfailed, "
            f"{c['xpassed']} xpassed, {c['warned']} warned; {c['skipped']} skipped"
        )
        if self.settings:
            s = self.settings
            how = (
                "derandomized"
                if s.get("derandomize")
                else (f"seed {s['seed']}" if s.get("seed") is not None else "random seed")
            )
            lines.append(f"  {s.get('max_examples')} examples per check, {how}")
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
        raise ValueError(
            f"expected_failed_checks names unknown check(s) {', '.join(unknown)}; known: {', '.join(all_checks())}"
        )
    return expected


def run_check(
    name: str,
    modality: Modality,
    *,
    expected: Mapping[str, str] | None = None,
    expected_reason: str | None = None,
    max_examples: int | None = None,
) -> CheckResult:
    """Run one check and classify its outcome (never raises for a failing check).

    ``expected`` maps rules to the reason they are expected to fail; a failure attributed to an
    expected rule is xfailed whichever check saw it.
    """
    expected = dict(expected or {})
    if expected_reason is not None:
        expected[name] = expected_reason
    check = all_checks()[name]
    since = check.since  # type: ignore[attr-defined]
    level = getattr(check, "level", "error")
    start = time.perf_counter()
    failure: CheckFailure | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ContractWarning)
        try:
            check(modality, max_examples=max_examples)
        except CheckSkipped as exc:
            return CheckResult(name, "skipped", str(exc), since, time.perf_counter() - start, level)
        except CheckFailure as exc:
            failure = exc
        except Exception as exc:  # a check that crashes is a failure of the modality, reported as such
            failure = CheckFailure(f"the check crashed with {type(exc).__name__}: {exc}", rule=name)
    seconds = time.perf_counter() - start
    if failure is not None:
        rule = failure.rule or name
        extra = dict(
            rule=rule,
            reproduction=failure.reproduction or "",
            saved_to=failure.saved_to or "",
            traceback=failure.author_traceback or "",
        )
        if rule in expected:
            first = str(failure).splitlines()[0] if str(failure) else ""
            return CheckResult(name, "xfailed", f"{expected[rule]} (failed: {first})", since, seconds, level, **extra)
        return CheckResult(name, "failed", str(failure), since, seconds, level, **extra)
    if name in expected:
        return CheckResult(name, "xpassed", f"expected to fail ({expected[name]}) but passed", since, seconds, level)
    found = [str(w.message) for w in caught if issubclass(w.category, ContractWarning)]
    if found:
        return CheckResult(name, "warned", "\n".join(found), since, seconds, level)
    for w in caught:  # other warnings are the caller's business: pass them on
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return CheckResult(name, "passed", "", since, seconds, level)


def check_modality(
    modality_or_class: Any,
    expected_failed_checks: Mapping[str, str] | None = None,
    *,
    contract_version: int | None = None,
    max_examples: int | None = None,
    seed: Any = _UNSET,
    derandomize: bool | None = None,
    strict_warnings: bool | None = None,
    failures_dir: Any = _UNSET,
    fresh_process: bool | None = None,
    time_budget: float | None = None,
    checks: Sequence[str] | None = None,
) -> ContractReport:
    """Run every check of the contract version on a modality and return the report.

    ``expected_failed_checks`` maps check names to the reason they are expected to fail;
    ``contract_version`` defaults to the modality's ``contract_version`` attribute, else the newest.
    Checks newer than that version are reported as skipped. ``max_examples``, ``seed``,
    ``derandomize``, ``strict_warnings``, ``failures_dir``, ``fresh_process`` and ``time_budget``
    override the run's settings (see :mod:`v22sdk.testing._settings`: by default 20 examples per
    check, derandomized on CI machines only, the author's hypothesis profile respected); ``checks``
    runs only the named ones. Never raises for a failing check.
    """
    modality = as_modality(modality_or_class)
    expected = validate_expected(expected_failed_checks)
    version = resolve_version(contract_version, modality)
    if checks is not None:
        unknown = sorted(set(checks) - set(all_checks()))
        if unknown:
            raise ValueError(f"unknown check(s) {', '.join(unknown)}; known: {', '.join(all_checks())}")
    settings = resolve(
        max_examples=max_examples,
        seed=seed,
        derandomize=derandomize,
        database=_UNSET,
        contract_version=version,
        failures_dir=failures_dir,
        strict_warnings=strict_warnings,
        fresh_process=fresh_process,
        time_budget=time_budget,
    )
    if settings.seed is None and not settings.derandomize:
        # a random run still says which seed it used, so a failure can be replayed with seed=...
        import random

        settings = attrs.evolve(settings, seed=random.SystemRandom().randrange(1 << 32))
    selected = set(list_checks(version))
    results = []
    with active(settings):
        forget_reported(modality)
        for name, check in all_checks().items():
            if checks is not None and name not in checks:
                continue
            if name not in selected:
                results.append(
                    CheckResult(
                        name,
                        "skipped",
                        f"added in contract version {check.since}; "  # type: ignore[attr-defined]
                        f"this run uses version {version}",
                        check.since,  # type: ignore[attr-defined]
                        level=getattr(check, "level", "error"),
                    )
                )
                continue
            results.append(run_check(name, modality, expected=expected))
    results = _attribute(results, expected)
    return ContractReport(
        getattr(modality, "name", type(modality).__name__),
        version,
        tuple(results),
        settings.describe(),
        settings.strict_warnings,
    )


def _attribute(results: list[CheckResult], expected: Mapping[str, str]) -> list[CheckResult]:
    """An expected failure whose own check passed while its rule failed elsewhere is xfailed."""
    broken_elsewhere = {
        r.rule: r.name for r in results if r.status in ("failed", "xfailed") and r.rule and r.rule != r.name
    }
    out = []
    for r in results:
        if r.status == "xpassed" and r.name in broken_elsewhere:
            r = attrs.evolve(
                r,
                status="xfailed",
                reason=f"{expected[r.name]} (the rule failed in {broken_elsewhere[r.name]})",
                rule=r.name,
            )
        out.append(r)
    return out
