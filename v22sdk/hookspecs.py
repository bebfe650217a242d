"""The whole plugin contract of v22sdk: three hooks, each returning classes keyed by a name.

A plugin is a module (or any object) with functions marked ``@hookimpl``, advertised through an
entry point in the ``v22sdk`` group of its distribution::

    # pyproject.toml of the plugin
    [project.entry-points.v22sdk]
    depth = "v22sdk_depth"

    # v22sdk_depth/__init__.py
    from v22sdk import hookimpl

    @hookimpl
    def v22sdk_register_modalities():
        return [DepthModality]

Built-in plugins (``plugins/``) are registered through the very same entry points. Each hook is
called once per plugin when the registry loads, with no arguments, and may return one class, a
list of classes, or None. Every class carries its registry key as the class attribute ``name``.
Two classes of one kind with the same name are an error that names both distributions. A plugin
whose import or hook raises is recorded as broken and skipped (``V22SDK_STRICT_PLUGINS=1`` or
``--strict`` makes it fatal); it never takes the CLI down.

Hook-API changes follow pluggy's rules: new hooks and new optional arguments are added; an
argument is deprecated (``warn_on_impl_args``) for a minor series before removal.
:data:`HOOK_API_VERSION` counts those changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from .modality import Modality

PROJECT = "v22sdk"
HOOK_API_VERSION = 1

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def v22sdk_register_modalities() -> type[Modality] | Sequence[type[Modality]] | None:
    """Return the :class:`~v22sdk.modality.Modality` subclasses this plugin provides.

    Called once per plugin when the registry loads (``v22sdk plugins list``, ``tokenize``,
    ``run`` ...). Keep the module cheap to import: import heavy libraries (torch, OpenCV, scipy)
    inside ``load``/``encode``, not at module level, so that listing plugins stays fast.

    :returns: a class or a list of classes, each with a unique ``name`` class attribute.
    """


@hookspec
def v22sdk_register_engines() -> type | Sequence[type] | None:
    """Return engine classes (each with a ``name`` class attribute).

    An engine class builds a trainable model from a config and is selected with
    ``v22sdk train --engine NAME``; see :mod:`v22sdk.engine` for the interface it implements.
    The built-in engines are ``v22`` and the baseline ``baseline``.
    """


@hookspec
def v22sdk_register_memory_backends() -> type | Sequence[type] | None:
    """Return memory backend classes (each a :class:`~v22sdk.engine.memory_head.MemoryHead`
    subclass with a ``name`` class attribute), selected with ``--memory-backend NAME``.

    The built-in backends are ``fifo`` (upstream's in-RAM FIFO) and ``tiered`` (L1/L2/L3 with
    SQLite).
    """
