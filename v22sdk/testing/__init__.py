"""The contract test kit: prove that a modality plugin keeps the 640-D token contract.

::

    from v22sdk.testing import check_modality, parametrize_with_checks

    print(check_modality(MyModality()))            # a report: one line per named check

    @parametrize_with_checks([MyModality()])      # one pytest item per (modality, check)
    def test_contract(modality, check):
        check(modality)

Checks are plain functions in :mod:`v22sdk.testing.checks` (``check_unit_norm_emb`` ...), each
property-based over the plugin's own ``sample_inputs()`` and over inputs the kit derives itself
from ``input_spec``; :data:`CONTRACT_VERSION` and each check's ``since`` keep plugins pinned to an
older contract from running newer checks. The command line runs the same on an installed plugin:
``v22sdk check-plugin NAME``. See docs/contract-kit.md.

Module layers (each imports only those above it in this list; ``tests/kit/test_layering.py``
keeps it so):

1. ``_registry``: :class:`CheckFailure`, :class:`CheckSkipped`, :class:`ContractWarning`, the
   contract version and the ``contract_check`` marker;
2. ``_settings``: :class:`KitSettings` and the seed streams; ``_format``: values, inputs and
   reproductions in messages; ``_judge``: the token rules on one encoding; ``_inputs``: the kit's
   own inputs; ``_worker``: the fresh process;
3. ``_property``: the hypothesis runner;
4. ``checks``: the checks;
5. ``catalog``: ``all_checks`` / ``list_checks`` / ``get_check`` (reads ``checks``);
6. ``report``: :func:`check_modality`;
7. ``pytest_api`` and ``cli``: the pytest front-ends and ``v22sdk check-plugin``;
   ``pytest_plugin`` imports none of the kit at module level.

The names are imported on first use (PEP 562), because the kit's pytest plugin lives in this
package and is imported by every pytest run in an environment that has v22sdk: that import must
not pull in pytest-side helpers, the checks or hypothesis.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see; at run time __getattr__ below imports on first use
    from . import checks as checks
    from ._format import load_example as load_example
    from ._format import save_example as save_example
    from ._registry import CONTRACT_VERSION as CONTRACT_VERSION
    from ._registry import CheckFailure as CheckFailure
    from ._registry import CheckSkipped as CheckSkipped
    from ._registry import ContractWarning as ContractWarning
    from ._settings import KitSettings as KitSettings
    from .catalog import get_check as get_check
    from .catalog import list_checks as list_checks
    from .pytest_api import ModalityContractTests as ModalityContractTests
    from .pytest_api import configuration_id as configuration_id
    from .pytest_api import parametrize_with_checks as parametrize_with_checks
    from .report import CheckResult as CheckResult
    from .report import ContractReport as ContractReport
    from .report import check_modality as check_modality

_NAMES = {
    "CONTRACT_VERSION": "._registry",
    "CheckFailure": "._registry",
    "CheckSkipped": "._registry",
    "ContractWarning": "._registry",
    "KitSettings": "._settings",
    "get_check": ".catalog",
    "list_checks": ".catalog",
    "checks": ".checks",
    "load_example": "._format",
    "save_example": "._format",
    "ModalityContractTests": ".pytest_api",
    "parametrize_with_checks": ".pytest_api",
    "configuration_id": ".pytest_api",
    "CheckResult": ".report",
    "ContractReport": ".report",
    "check_modality": ".report",
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
