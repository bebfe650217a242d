"""pytest front-ends of the kit: :func:`parametrize_with_checks` and :class:`ModalityContractTests`.

Both make one pytest item per (modality, check), id ``<modality>-<check>``, so
``pytest -k check_determinism`` selects one rule and the item name says which rule broke.
Expected failures become strict xfails: a check that starts passing turns the item red (XPASS
strict), so stale expectations are noticed.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

import pytest

from ._registry import get_check, list_checks, resolve_version
from .report import as_modality, validate_expected

ExpectedFailures = Mapping[str, str] | Callable[[Any], Mapping[str, str] | None] | None


def _marks(modality_name: str | None, check: str, expected: Mapping[str, str]) -> list[Any]:
    marks = [pytest.mark.v22sdk_check(modality=modality_name, check=check)]
    if check in expected:
        marks.append(pytest.mark.xfail(strict=True, reason=expected[check]))
    return marks


def parametrize_with_checks(modalities: Iterable[Any], expected_failed_checks: ExpectedFailures = None, *,
                            contract_version: int | None = None) -> Any:
    """A ``pytest.mark.parametrize`` over ``(modality, check)`` for every modality and check.

    ``modalities`` are instances (classes are instantiated with no arguments).
    ``expected_failed_checks`` is ``{check_name: reason}`` for all of them, or a callable
    ``modality -> {check_name: reason}``. The test body calls ``check(modality)``::

        @parametrize_with_checks([HelloModality()])
        def test_contract(modality, check):
            check(modality)
    """
    params = []
    for given in modalities:
        modality = as_modality(given)
        raw = expected_failed_checks(modality) if callable(expected_failed_checks) else expected_failed_checks
        expected = validate_expected(raw)
        for name in list_checks(resolve_version(contract_version, modality)):
            params.append(pytest.param(modality, get_check(name), id=f"{modality.name}-{name}",
                                       marks=_marks(modality.name, name, expected)))
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
        metafunc.parametrize("contract_check_name", [
            pytest.param(check, id=check, marks=_marks(name, check, expected)) for check in list_checks(version)])

    def test_contract(self, modality: Any, contract_check_name: str) -> None:
        get_check(contract_check_name)(modality)
