"""The contract test kit: prove that a modality plugin keeps the 640-D token contract.

::

    from v22sdk.testing import check_modality, parametrize_with_checks

    print(check_modality(MyModality()))            # a report: one line per named check

    @parametrize_with_checks([MyModality()])      # one pytest item per (modality, check)
    def test_contract(modality, check):
        check(modality)

Checks are plain functions in :mod:`v22sdk.testing.checks` (``check_unit_norm_emb`` ...),
each property-based over the plugin's own ``sample_inputs()``; :data:`CONTRACT_VERSION` and each
check's ``since`` keep plugins pinned to an older contract from running newer checks.
See docs/contract-kit.md.

The names are imported on first use (PEP 562), because the kit's pytest plugin lives in this
package and is imported by every pytest run in an environment that has v22sdk: that import must
not pull in pytest-side helpers, the checks or hypothesis.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see; at run time __getattr__ below imports on first use
    from . import checks as checks
    from ._registry import CONTRACT_VERSION as CONTRACT_VERSION
    from ._registry import CheckFailure as CheckFailure
    from ._registry import get_check as get_check
    from ._registry import list_checks as list_checks
    from .pytest_api import ModalityContractTests as ModalityContractTests
    from .pytest_api import parametrize_with_checks as parametrize_with_checks
    from .report import CheckResult as CheckResult
    from .report import ContractReport as ContractReport
    from .report import check_modality as check_modality

_NAMES = {
    "CONTRACT_VERSION": "._registry", "CheckFailure": "._registry", "get_check": "._registry",
    "list_checks": "._registry", "checks": ".checks",
    "ModalityContractTests": ".pytest_api", "parametrize_with_checks": ".pytest_api",
    "CheckResult": ".report", "ContractReport": ".report", "check_modality": ".report",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module 'v22sdk.testing' has no attribute {name!r}")
    module = importlib.import_module(_NAMES[name], __name__)
    value = module if name == "checks" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_NAMES))
