"""How a kit run draws its examples: :class:`KitSettings`, resolved once per run.

Precedence, for each setting: the argument given to :func:`~v22sdk.testing.check_modality` (or to
a check), then the pytest options (``--v22sdk-max-examples``, ``--v22sdk-seed`` ...), then the
plugin author's own hypothesis profile when one is loaded (its ``max_examples``, ``derandomize``,
``database``; ``--hypothesis-seed``), then the kit's defaults: 20 examples per check,
**derandomized only on a CI machine** (where hypothesis loads its ``ci`` profile), otherwise a
fresh random seed per run with hypothesis' example database, so repeated local runs explore new
inputs and replay the ones that failed before -- hypothesis' own advice.

Every check draws from its own seed stream: the seed (or, derandomized, the digest) is keyed by
the check's name and the modality's configuration, so seven checks see seven different sets of
inputs, and a second configuration of the same modality sees different inputs again.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import attrs

from ._registry import CONTRACT_VERSION

#: Examples per property check when nothing else says otherwise.
DEFAULT_MAX_EXAMPLES = 20
#: Seconds of ``encode`` per example above which the speed check warns.
DEFAULT_TIME_BUDGET = 2.0

_UNSET: Any = object()


@attrs.frozen
class KitSettings:
    """The settings of one kit run (see the module docstring for where each comes from).

    ``seed``: the base seed of every check's stream (None: random unless ``derandomize``);
    ``database``: a hypothesis example database or None; ``failures_dir``: where falsifying inputs
    too large to print are saved (None: the system's temporary folder); ``strict_warnings``: the
    quality checks fail instead of warning; ``fresh_process``: compare against a reference
    computed in a new Python process; ``time_budget``: seconds per example for the speed check.
    """

    max_examples: int = DEFAULT_MAX_EXAMPLES
    derandomize: bool = False
    seed: int | None = None
    database: Any = None
    contract_version: int = CONTRACT_VERSION
    failures_dir: str | None = None
    strict_warnings: bool = False
    fresh_process: bool = True
    time_budget: float = DEFAULT_TIME_BUDGET

    def describe(self) -> dict[str, Any]:
        """The settings as JSON-ready values (the database by its type)."""
        return {
            "max_examples": self.max_examples,
            "derandomize": self.derandomize,
            "seed": self.seed,
            "database": None if self.database is None else type(self.database).__name__,
            "contract_version": self.contract_version,
            "strict_warnings": self.strict_warnings,
            "fresh_process": self.fresh_process,
            "time_budget": self.time_budget,
        }


_ACTIVE: contextvars.ContextVar[KitSettings | None] = contextvars.ContextVar("v22sdk_kit_settings", default=None)


def _pytest_options() -> dict[str, Any]:
    """The options of the running pytest session, as the kit's pytest plugin recorded them."""
    plugin = sys.modules.get("v22sdk.testing.pytest_plugin")
    return dict(getattr(plugin, "active_options", None) or {}) if plugin else {}


def _author_profile() -> Any:
    """The hypothesis settings of a profile the author loaded, or None when the profile in force is
    hypothesis' own default, its automatic ``ci`` profile, or the kit's ``v22sdk`` profile."""
    try:
        from hypothesis import _settings as hypothesis_settings
        from hypothesis import settings
    except ImportError:  # pragma: no cover - hypothesis is a dependency of v22sdk
        return None
    name = settings.get_current_profile_name()
    if name in ("default", "v22sdk"):
        return None
    if name == "ci" and settings.get_profile("ci") is getattr(hypothesis_settings, "CI", None):
        return None
    return settings.get_profile(name)


def in_ci() -> bool:
    """True on a CI machine, as hypothesis decides it (``CI``, ``GITHUB_ACTIONS`` ... set)."""
    try:
        from hypothesis._settings import is_in_ci
    except ImportError:  # pragma: no cover - private helper moved
        return bool(os.environ.get("CI"))
    return bool(is_in_ci())


def _forced_seed() -> int | None:
    """``--hypothesis-seed`` of the running session, if any."""
    core = sys.modules.get("hypothesis.core")
    seed = getattr(core, "global_force_seed", None) if core else None
    return (
        None
        if seed is None
        else int(seed)
        if isinstance(seed, int)
        else int.from_bytes(hashlib.sha256(str(seed).encode()).digest()[:8], "big")
    )


def resolve(
    *,
    max_examples: int | None = None,
    seed: Any = _UNSET,
    derandomize: bool | None = None,
    database: Any = _UNSET,
    contract_version: int | None = None,
    failures_dir: Any = _UNSET,
    strict_warnings: bool | None = None,
    fresh_process: bool | None = None,
    time_budget: float | None = None,
) -> KitSettings:
    """Settings from the arguments, then the active run, then pytest's options, the author's
    hypothesis profile and the defaults."""
    active = _ACTIVE.get()
    if active is not None:
        base = active
    else:
        options = _pytest_options()
        author = _author_profile()
        base_derandomize = (
            author.derandomize
            if author is not None
            else (options.get("derandomize") if options.get("derandomize") is not None else in_ci())
        )
        base_seed = options.get("seed")
        if base_seed is None:
            base_seed = _forced_seed()
        base_database = None
        if not base_derandomize:
            if author is not None:
                base_database = author.database
            else:
                from hypothesis import settings as hypothesis_settings

                default = hypothesis_settings.default  # None only while hypothesis loads its profiles
                base_database = default.database if default is not None else None
        base = KitSettings(
            max_examples=int(
                options.get("max_examples") or (author.max_examples if author is not None else DEFAULT_MAX_EXAMPLES)
            ),
            derandomize=bool(base_derandomize),
            seed=base_seed,
            database=base_database,
            failures_dir=options.get("failures_dir"),
            strict_warnings=bool(options.get("strict_warnings")),
            fresh_process=options.get("fresh_process", True) is not False,
        )
    changes: dict[str, Any] = {}
    if max_examples is not None:
        if isinstance(max_examples, bool) or not isinstance(max_examples, int) or max_examples < 1:
            raise ValueError(f"max_examples must be a positive int, got {max_examples!r}")
        changes["max_examples"] = max_examples
    if seed is not _UNSET:
        changes["seed"] = None if seed is None else int(seed)
    if derandomize is not None:
        changes["derandomize"] = bool(derandomize)
        if derandomize and database is _UNSET:
            changes["database"] = None
    if database is not _UNSET:
        changes["database"] = database
    if contract_version is not None:
        changes["contract_version"] = contract_version
    if failures_dir is not _UNSET:
        changes["failures_dir"] = None if failures_dir is None else os.fspath(failures_dir)
    if strict_warnings is not None:
        changes["strict_warnings"] = bool(strict_warnings)
    if fresh_process is not None:
        changes["fresh_process"] = bool(fresh_process)
    if time_budget is not None:
        changes["time_budget"] = float(time_budget)
    return attrs.evolve(base, **changes) if changes else base


def current(max_examples: int | None = None) -> KitSettings:
    """The settings in force for a check called now (``max_examples`` overrides the count)."""
    return resolve(max_examples=max_examples)


@contextlib.contextmanager
def active(settings: KitSettings) -> Iterator[KitSettings]:
    """Run the checks inside the block with ``settings``."""
    token = _ACTIVE.set(settings)
    try:
        yield settings
    finally:
        _ACTIVE.reset(token)


def configuration_key(modality: Any) -> str:
    """A stable text naming the modality's class and configuration (the seed streams' key)."""
    try:
        config = json.dumps(modality.config(), sort_keys=True, default=repr)
    except Exception:  # a broken config() is check_config_roundtrip's finding, not a reason to crash
        config = "<config() failed>"
    cls = type(modality)
    return f"{cls.__module__}.{cls.__qualname__}|{getattr(modality, 'name', '?')}|{config}"


def stream_key(check: str, modality: Any, purpose: str = "") -> bytes:
    """The key of one check's example stream for one configuration."""
    return f"v22sdk-kit|{check}|{purpose}|{configuration_key(modality)}".encode()


def stream_seed(base: int, key: bytes) -> int:
    """A 64-bit seed derived from the run's base seed and a stream key."""
    return int.from_bytes(hashlib.sha256(str(base).encode() + b"|" + key).digest()[:8], "big")
