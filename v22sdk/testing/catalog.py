"""The catalogue of checks: :func:`all_checks`, :func:`list_checks`, :func:`get_check`.

It sits above :mod:`.checks` (which it imports) and below the runners (:mod:`.report`, the pytest
front-ends, the command line), so no module of the kit imports one above it.
"""

from __future__ import annotations

from . import _registry, checks
from ._registry import Check, resolve_version


def all_checks() -> dict[str, Check]:
    """Every check by name, in run order, whatever its version."""
    found = {
        name: fn
        for name, fn in vars(checks).items()
        if name.startswith("check_") and getattr(fn, "is_contract_check", False)
    }
    return {**found, **_registry._EXTRA}


def list_checks(contract_version: int | None = None, *, level: str | None = None) -> list[str]:
    """Names of the checks in ``contract_version`` (default: the newest), in run order; ``level``
    ``"error"`` or ``"warning"`` keeps only the contract checks or only the quality checks."""
    version = resolve_version(contract_version)
    return [
        name
        for name, fn in all_checks().items()
        if fn.since <= version and (level is None or getattr(fn, "level", "error") == level)  # type: ignore[attr-defined]
    ]


def get_check(name: str) -> Check:
    """The check function called ``name``; an unknown name is a ``KeyError`` listing the known ones."""
    known = all_checks()
    try:
        return known[name]
    except KeyError:
        raise KeyError(f"no contract check named {name!r}; known checks: {', '.join(known)}") from None
