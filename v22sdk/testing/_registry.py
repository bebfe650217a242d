"""The bottom layer of the kit: :class:`CheckFailure`, the contract version and the check marker.

This module imports nothing else from the kit (see the layering note in ``__init__``). A check is
a plain function ``check_<rule>(modality, *, max_examples=None)`` that returns None when the
modality keeps the rule and raises :class:`CheckFailure` (an ``AssertionError``) naming what is
wrong otherwise. :func:`contract_check` tags it with ``since``, the first :data:`CONTRACT_VERSION`
that contains it, so a plugin pinned to an older version never runs a newer check, and with
``level`` (``"error"``, or ``"warning"`` for the quality checks that only fail when asked).
The catalogue of checks (:mod:`.catalog`) sits above :mod:`.checks`, which sits above this module.
"""

from __future__ import annotations

import unittest
from collections.abc import Callable
from typing import Any

#: The newest contract version this kit knows. Bumped when a check is added or tightened;
#: plugins pin a version with a ``contract_version`` class attribute (see docs/contract-kit.md).
CONTRACT_VERSION = 2

#: Levels of a check: an error fails the run; a warning is reported and fails only when asked.
LEVELS = ("error", "warning")

Check = Callable[..., None]

#: Checks registered outside :mod:`v22sdk.testing.checks` (tests of the kit, experiments).
_EXTRA: dict[str, Check] = {}


class CheckFailure(AssertionError):
    """A modality broke a contract rule.

    ``str(failure)`` names the rule, the case and the input. The attributes say the same for
    programs: ``rule`` is the name of the check that owns the broken rule (``"check_finite"``),
    ``check`` the check that saw it (they differ when, say, ``check_determinism`` drew an input on
    which the embedding is NaN), ``example`` the falsifying :class:`~v22sdk.modality.Sample` (or
    None), ``reproduction`` a few lines of Python that replay it, ``saved_to`` the ``.npz`` file the
    input was saved to when it is too large to print (load it with
    :func:`v22sdk.testing.load_example`), and ``author_traceback`` the plugin's own traceback when
    the plugin crashed (the exception is also chained as ``__cause__``).
    """

    def __init__(
        self,
        message: str = "",
        *,
        rule: str | None = None,
        check: str | None = None,
        example: Any = None,
        reproduction: str | None = None,
        saved_to: str | None = None,
        author_traceback: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.rule = rule
        self.check = check
        self.example = example
        self.reproduction = reproduction
        self.saved_to = saved_to
        self.author_traceback = author_traceback

    def __str__(self) -> str:
        return self.message


class CheckSkipped(unittest.SkipTest):
    """A check could not run on this modality (say, a class a fresh process cannot import); the
    reason says why. pytest reports it as skipped; :func:`check_modality` as ``skipped``."""


class ContractWarning(UserWarning):
    """A warning-level (quality) check found something: reported, not a failure unless asked."""


# Public under v22sdk.testing: tracebacks and reprs name them there.
CheckFailure.__module__ = CheckSkipped.__module__ = ContractWarning.__module__ = "v22sdk.testing"


def contract_check(*, since: int, level: str = "error") -> Callable[[Check], Check]:
    """Mark a check function, first run in contract version ``since``.

    The kit's checks are found by reading :mod:`v22sdk.testing.checks` in definition order (not
    kept in a list here), so re-importing either module, as pytester's module snapshots do,
    never loses or doubles a check.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")

    def register(fn: Check) -> Check:
        if not fn.__name__.startswith("check_"):
            raise ValueError(f"contract check names start with 'check_', got {fn.__name__!r}")
        fn.since = since  # type: ignore[attr-defined]
        fn.level = level  # type: ignore[attr-defined]
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
        raise ValueError(
            f"contract version {version} is newer than this v22sdk test kit "
            f"(which knows up to {CONTRACT_VERSION}); upgrade v22sdk"
        )
    return version
