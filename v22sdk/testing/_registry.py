"""The list of contract checks, each tagged with the contract version that introduced it.

A check is a plain function ``check_<rule>(modality, *, max_examples=None)`` that returns
None when the modality keeps the rule and raises :class:`CheckFailure` (an ``AssertionError``)
naming what is wrong otherwise. :func:`contract_check` registers it with ``since``, the first
:data:`CONTRACT_VERSION` that contains it, so a plugin pinned to an older version never runs a
newer check (new rules cannot break a plugin's CI until it opts in).
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

#: The newest contract version this kit knows. Bumped when a check is added or tightened;
#: plugins pin a version with a ``contract_version`` class attribute (see docs/contract-kit.md).
CONTRACT_VERSION = 1

Check = Callable[..., None]

#: Checks registered outside :mod:`v22sdk.testing.checks` (tests of the kit, experiments).
_EXTRA: dict[str, Check] = {}


class CheckFailure(AssertionError):
    """A modality broke a contract rule; the message names the rule, the case and the input."""


def contract_check(*, since: int) -> Callable[[Check], Check]:
    """Mark a check function, first run in contract version ``since``.

    The kit's checks are found by reading :mod:`v22sdk.testing.checks` in definition order (not
    kept in a list here), so re-importing either module, as pytester's module snapshots do,
    never loses or doubles a check.
    """

    def register(fn: Check) -> Check:
        if not fn.__name__.startswith("check_"):
            raise ValueError(f"contract check names start with 'check_', got {fn.__name__!r}")
        fn.since = since  # type: ignore[attr-defined]
        fn.is_contract_check = True  # type: ignore[attr-defined]
        if fn.__module__ != "v22sdk.testing.checks":
            _EXTRA[fn.__name__] = fn
        return fn

    return register


def resolve_version(contract_version: int | None, modality: Any = None) -> int:
    """The contract version to run: the argument, else the modality's pin, else the newest.

    A version newer than this kit knows is an error (upgrade v22sdk), never silently downgraded.
    """
    version = contract_version
    if version is None and modality is not None:
        version = getattr(modality, "contract_version", None)
    if version is None:
        return CONTRACT_VERSION
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"contract_version must be a positive int, got {version!r}")
    if version > CONTRACT_VERSION:
        raise ValueError(f"contract version {version} is newer than this v22sdk test kit "
                         f"(which knows up to {CONTRACT_VERSION}); upgrade v22sdk")
    return version


def list_checks(contract_version: int | None = None) -> list[str]:
    """Names of the checks in ``contract_version`` (default: the newest), in run order."""
    version = resolve_version(contract_version)
    return [name for name, fn in all_checks().items() if fn.since <= version]  # type: ignore[attr-defined]


def all_checks() -> dict[str, Check]:
    """Every check by name, in run order, whatever its version."""
    module = importlib.import_module("v22sdk.testing.checks")
    found = {name: fn for name, fn in vars(module).items()
             if name.startswith("check_") and getattr(fn, "is_contract_check", False)}
    return {**found, **_EXTRA}


def get_check(name: str) -> Check:
    """The check function called ``name``; an unknown name is a ``KeyError`` listing the known ones."""
    checks = all_checks()
    try:
        return checks[name]
    except KeyError:
        raise KeyError(f"no contract check named {name!r}; known checks: {', '.join(checks)}") from None
