"""pytest front-ends of the kit: :func:`parametrize_with_checks` and :class:`ModalityContractTests`.

Both make one pytest item per (modality, check). The id names the configuration, as
scikit-learn's does: ``hello-check_finite`` for the default configuration,
``hello(frame_seconds=0.2)-check_finite`` for another, so ``pytest -k check_determinism`` selects
one rule and the item name says which rule broke in which configuration. Expected failures become
strict xfails: a check that starts passing turns the item red (XPASS strict), so stale expectations
are noticed. A failure another check sees on an expected rule is an xfail too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

from ._registry import CheckFailure, resolve_version
from ._settings import active, resolve
from .catalog import get_check, list_checks
from .report import as_modality, validate_expected

ExpectedFailures = Mapping[str, str] | Callable[[Any], Mapping[str, str] | None] | None


def configuration_id(modality: Any) -> str:
    """``name`` for the default configuration, ``name(key=value, ...)`` for the fields that differ."""
    name = getattr(modality, "name", type(modality).__name__)
    try:
        config = modality.config()
        default = type(modality)().config()
    except Exception:
        return name
    changed = {k: v for k, v in config.items() if default.get(k, object()) != v} if isinstance(config, dict) else {}
    if not changed:
        return name
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in sorted(changed.items()))})"


class KitCheck:
    """A check bound to a run: call it with the modality. It runs under the session's settings and
    the modality's contract version, and turns a failure of an expected rule seen by this check into
    an xfail."""

    def __init__(self, check: Callable[..., None], expected: Mapping[str, str], contract_version: int | None):
        self.check = check
        self.expected = dict(expected)
        self.contract_version = contract_version
        functools.update_wrapper(self, check)

    def __call__(self, modality: Any, *, max_examples: int | None = None) -> None:
        __tracebackhide__ = True
        version = resolve_version(self.contract_version, modality)
        with active(resolve(contract_version=version)):
            try:
                self.check(modality, max_examples=max_examples)
            except CheckFailure as exc:
                rule = exc.rule or self.check.__name__
                if rule != self.check.__name__ and rule in self.expected:
                    pytest.xfail(f"{self.expected[rule]} (rule {rule}, seen by {self.check.__name__})")
                raise

    def __repr__(self) -> str:
        return self.check.__name__


def _marks(modality_name: str | None, check: str, expected: Mapping[str, str]) -> list[Any]:
    marks = [pytest.mark.v22sdk_check(modality=modality_name, check=check)]
    if check in expected:
        marks.append(pytest.mark.xfail(strict=True, reason=expected[check]))
    return marks


def parametrize_with_checks(
    modalities: Iterable[Any], expected_failed_checks: ExpectedFailures = None, *, contract_version: int | None = None
) -> Any:
    """A ``pytest.mark.parametrize`` over ``(modality, check)`` for every modality and check.

    ``modalities`` are instances (classes are instantiated with no arguments).
    ``expected_failed_checks`` is ``{check_name: reason}`` for all of them, or a callable
    ``modality -> {check_name: reason}``. The test body calls ``check(modality)``::

        @parametrize_with_checks([HelloModality(), HelloModality(frame_seconds=0.2)])
        def test_contract(modality, check):
            check(modality)
    """
    params = []
    seen: dict[str, int] = {}
    for given in modalities:
        modality = as_modality(given)
        raw = expected_failed_checks(modality) if callable(expected_failed_checks) else expected_failed_checks
        expected = validate_expected(raw)
        ident = configuration_id(modality)
        seen[ident] = seen.get(ident, 0) + 1
        if seen[ident] > 1:
            ident = f"{ident}#{seen[ident]}"
        version = resolve_version(contract_version, modality)
        for name in list_checks(version):
            params.append(
                pytest.param(
                    modality,
                    KitCheck(get_check(name), expected, version),
                    id=f"{ident}-{name}",
                    marks=_marks(modality.name, name, expected),
                )
            )
    return pytest.mark.parametrize(("modality", "check"), params)


class ModalityContractTests:
    """Subclass as ``TestMyModality`` and set ``modality_class`` (or override the ``modality``
    fixture) to get one test item per contract check, ``test_contract[<check_name>]``.

    ``expected_failed_checks`` (``{check_name: reason}``) become strict xfails;
    ``contract_version`` pins an older contract (default: ``modality_class.contract_version`` or
    the newest).
    """

    modality_class: type | None = None
    expected_failed_checks: Mapping[str, str] = {}
    contract_version: int | None = None

    @pytest.fixture
    def modality(self) -> Any:
        if self.modality_class is None:
            raise TypeError(f"{type(self).__name__} must set modality_class or override the 'modality' fixture")
        return self.modality_class()

    def pytest_generate_tests(self, metafunc: Any) -> None:
        if "contract_check_name" not in metafunc.fixturenames:
            return
        expected = validate_expected(self.expected_failed_checks)
        version = resolve_version(self.contract_version, self.modality_class)
        name = getattr(self.modality_class, "name", None)
        metafunc.parametrize(
            "contract_check_name",
            [pytest.param(check, id=check, marks=_marks(name, check, expected)) for check in list_checks(version)],
        )

    def test_contract(self, modality: Any, contract_check_name: str) -> None:
        __tracebackhide__ = True
        version = resolve_version(self.contract_version, self.modality_class or modality)
        KitCheck(get_check(contract_check_name), validate_expected(self.expected_failed_checks), version)(modality)
