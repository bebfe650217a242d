"""The plugin registry: loads the ``v22sdk`` entry points with per-plugin isolation.

Environment switches:

``V22SDK_LOAD_PLUGINS=a,b``
    load only the entry points named ``a`` and ``b`` (an empty value loads none);
``V22SDK_DISABLE_PLUGINS=a,b``
    skip the named entry points;
``V22SDK_STRICT_PLUGINS=1``
    a plugin that fails to import or register is fatal instead of being reported and skipped;
``V22SDK_EXTENSIONS=.png=vision,.npy=depth``
    the user's default modality per file extension, where several installed modalities read it
    (see :meth:`Registry.resolve_path`).

When several modalities read one extension (the contrib depth plugin and the built-in vision
both read ``.png``), :meth:`Registry.resolve_path` chooses, in this order:

1. modalities whose :meth:`~v22sdk.modality.Modality.sniff` rejects the file's first bytes drop
   out (a colour PNG is no depth map); if one reader is left, it reads the file;
2. the user's default for the extension (``V22SDK_EXTENSIONS``), if it is still in the running;
3. the one reader whose ``sniff`` recognises the file (a 16-bit grey PNG is a depth map);
4. the highest :attr:`~v22sdk.modality.Modality.priority` (built-in modalities: 10, others:
   0 unless they declare more), so installing a plugin never takes an extension from a built-in
   unless the file's content says it is the plugin's;
5. a tie is an error that asks for ``--modality`` or a default.

An automatic choice among readers that all accept the file (steps 3 and 4) comes with a one-line
notice (:attr:`ExtensionChoice.notice`) that the CLI prints on stderr.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from . import hookspecs
from .errors import DuplicateNameError, PluginError, UnknownNameError

if TYPE_CHECKING:
    from .modality import Modality

ENTRY_POINT_GROUP = "v22sdk"
EXTENSIONS_ENV = "V22SDK_EXTENSIONS"
#: Bytes of a file that ``sniff`` is shown (enough for every common header).
SNIFF_BYTES = 4096
KINDS = ("modalities", "engines", "memory_backends")
_SINGULAR = {"modalities": "modality", "engines": "engine", "memory_backends": "memory backend"}


@attrs.define
class PluginInfo:
    """One loaded (or broken) plugin: where it comes from and what it registered."""

    name: str
    dist: str
    version: str
    module: str
    provides: dict[str, list[str]] = attrs.field(factory=lambda: {k: [] for k in KINDS})
    error: str | None = None
    traceback: str | None = attrs.field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        d = {
            "name": self.name,
            "dist": self.dist,
            "version": self.version,
            "module": self.module,
            **{k: v for k, v in self.provides.items()},
            "ok": self.ok,
        }
        if self.error:
            d["error"] = self.error
        return d


def _env_list(var: str) -> set[str] | None:
    value = os.environ.get(var)
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


@attrs.frozen
class ExtensionChoice:
    """Which modality reads a file, and why: ``reason`` is ``"only"`` (one reader of the
    extension), ``"content"`` (the others' ``sniff`` rejected the file, or only this one's
    recognised it), ``"setting"`` (the user's ``V22SDK_EXTENSIONS``) or ``"priority"``."""

    path: str
    modality: str
    reason: str
    #: the other modalities that read the extension and did not reject the file
    others: tuple[str, ...] = ()

    @property
    def notice(self) -> str | None:
        """One line naming an automatic choice among several possible readers, or None."""
        if self.reason not in ("content", "priority") or not self.others:
            return None
        ext = Path(self.path).suffix.lower()
        why = "by its content" if self.reason == "content" else "by plugin priority"
        return (
            f"note: {self.path}: read as {self.modality} ({why}); {', '.join(self.others)} also "
            f"read{'s' if len(self.others) == 1 else ''} '{ext}' files: choose with --modality NAME "
            f"or {EXTENSIONS_ENV}={ext}=NAME"
        )


def extension_defaults(value: str | None = None) -> dict[str, str]:
    """The user's default modality per extension: ``".png=vision,.npy=depth"`` -> {".png": "vision", ...}.

    ``value`` defaults to the ``V22SDK_EXTENSIONS`` environment variable; a malformed entry is a
    :class:`~v22sdk.errors.PluginError` naming it."""
    value = os.environ.get(EXTENSIONS_ENV, "") if value is None else value
    out: dict[str, str] = {}
    for part in value.split(","):
        if not part.strip():
            continue
        ext, sep, name = part.strip().partition("=")
        ext, name = ext.strip().lower(), name.strip()
        if not sep or not name or not ext.startswith(".") or len(ext) < 2:
            raise PluginError(f"{EXTENSIONS_ENV}: expected entries like '.png=vision', got {part.strip()!r}")
        out[ext] = name
    return out


def _head(path: str | os.PathLike[str]) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(SNIFF_BYTES)
    except (OSError, ValueError):  # not a file (yet): no content to go by
        return b""


def strict_from_env() -> bool:
    return os.environ.get("V22SDK_STRICT_PLUGINS", "").lower() in {"1", "true", "yes", "on"}


class Registry:
    """Plugins and the classes they registered, by kind and name."""

    def __init__(
        self,
        *,
        entry_points: bool = True,
        strict: bool | None = None,
        only: Iterable[str] | None = None,
        disabled: Iterable[str] | None = None,
    ):
        self.strict = strict_from_env() if strict is None else strict
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.plugins: dict[str, PluginInfo] = {}
        self._classes: dict[str, dict[str, tuple[type, str]]] = {k: {} for k in KINDS}
        if entry_points:
            only_set = set(only) if only is not None else _env_list("V22SDK_LOAD_PLUGINS")
            disabled_set = set(disabled or ()) | (_env_list("V22SDK_DISABLE_PLUGINS") or set())
            self._load_entry_points(only_set, disabled_set)

    # -- loading ---------------------------------------------------------------------------
    def _load_entry_points(self, only: set[str] | None, disabled: set[str]) -> None:
        seen: set[str] = set()
        # sorted, so that which of two clashing plugins wins does not depend on sys.path order
        for ep in sorted(md.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            if ep.name in seen or ep.name in disabled or (only is not None and ep.name not in only):
                continue
            seen.add(ep.name)
            dist = ep.dist.metadata["Name"] if ep.dist else "?"
            version = ep.dist.version if ep.dist else "?"
            info = PluginInfo(ep.name, dist, version, ep.value)
            try:
                obj = ep.load()
            except Exception as exc:  # a broken plugin must not take the others down
                self._broken(info, f"import failed: {type(exc).__name__}: {exc}", exc)
                continue
            self.register(obj, name=ep.name, info=info)

    def register(self, plugin: Any, name: str | None = None, *, info: PluginInfo | None = None) -> PluginInfo:
        """Register a plugin object (a module or any object with ``@hookimpl`` functions).

        Tests use this to add a throwaway plugin; entry points go through it too.
        """
        name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
        info = info or PluginInfo(
            name, "<registered>", getattr(plugin, "__version__", "?"), getattr(plugin, "__name__", repr(plugin))
        )
        try:
            self.pm.register(plugin, name=name)
            self.pm.check_pending()
        except Exception as exc:
            if self.pm.is_registered(plugin):
                self.pm.unregister(plugin)
            return self._broken(info, f"registration failed: {type(exc).__name__}: {exc}", exc)
        staged: dict[str, dict[str, type]] = {}
        try:
            for kind in KINDS:
                staged[kind] = self._collect(plugin, kind, info)
        except Exception as exc:
            self.pm.unregister(plugin)
            return self._broken(info, f"{type(exc).__name__}: {exc}", exc)
        for kind, classes in staged.items():
            for key, cls in classes.items():
                self._classes[kind][key] = (cls, info.name)
                info.provides[kind].append(key)
        self.plugins[info.name] = info
        return info

    def _collect(self, plugin: Any, kind: str, info: PluginInfo) -> dict[str, type]:
        hook = getattr(self.pm.hook, f"v22sdk_register_{kind}")
        impls = [impl for impl in hook.get_hookimpls() if impl.plugin is plugin]
        out: dict[str, type] = {}
        for impl in impls:
            result = impl.function()
            if result is None:
                continue
            for cls in result if isinstance(result, (list, tuple)) else [result]:
                key = getattr(cls, "name", None)
                if not isinstance(cls, type) or not key or not isinstance(key, str):
                    raise PluginError(f"{kind} hook returned {cls!r}, which is not a class with a 'name'")
                if key in out or key in self._classes[kind]:
                    other = self.plugins[self._classes[kind][key][1]].dist if key in self._classes[kind] else info.dist
                    raise DuplicateNameError(
                        f"{_SINGULAR[kind]} name {key!r} is registered by both "
                        f"distribution {other!r} and distribution {info.dist!r}"
                    )
                out[key] = cls
        return out

    def _broken(self, info: PluginInfo, message: str, exc: BaseException) -> PluginInfo:
        info.error = message
        info.traceback = "".join(traceback.format_exception(exc))
        self.plugins[info.name] = info
        if self.strict:
            cls = type(exc) if isinstance(exc, PluginError) else PluginError
            raise cls(f"plugin {info.name!r} ({info.dist}): {message}") from exc
        return info

    # -- lookups ---------------------------------------------------------------------------
    @property
    def broken(self) -> list[PluginInfo]:
        return [p for p in self.plugins.values() if not p.ok]

    def names(self, kind: str) -> list[str]:
        return sorted(self._classes[kind])

    def get_class(self, kind: str, name: str) -> type[Any]:
        try:
            return self._classes[kind][name][0]
        except KeyError:
            pass
        label = _SINGULAR[kind]
        installed = ", ".join(self.names(kind)) or "none"
        hint = ""
        for info in self.broken:
            if name == info.name or name in info.module:
                hint = f"; plugin {info.name!r} that may provide it is broken: {info.error}"
        raise UnknownNameError(f"unknown {label} {name!r}; installed: {installed}{hint}")

    def provider(self, kind: str, name: str) -> PluginInfo:
        self.get_class(kind, name)
        return self.plugins[self._classes[kind][name][1]]

    def modality(self, name: str, **config: Any) -> Modality:
        """An instance of the modality called ``name``, built with ``config``."""
        modality: Modality = self.get_class("modalities", name)(**config)
        return modality

    def readers(self, suffix: str) -> list[str]:
        """Names of the modalities whose ``extensions`` include ``suffix`` (".png"), sorted."""
        suffix = suffix.lower()
        return [
            n for n in self.names("modalities") if suffix in getattr(self.get_class("modalities", n), "extensions", ())
        ]

    def extensions(self) -> set[str]:
        """Every file extension (lower-case, with the dot) an installed modality reads."""
        return {
            ext.lower()
            for n in self.names("modalities")
            for ext in getattr(self.get_class("modalities", n), "extensions", ())
        }

    def modality_for_path(self, path: str | os.PathLike[str]) -> str:
        """The name of the modality that reads the file (see :meth:`resolve_path`)."""
        return self.resolve_path(path).modality

    def resolve_path(self, path: str | os.PathLike[str], defaults: dict[str, str] | None = None) -> ExtensionChoice:
        """Which installed modality reads the file at ``path``, and why (the order is in this
        module's docstring). ``defaults`` replaces the ``V22SDK_EXTENSIONS`` setting.

        Raises :class:`UnknownNameError` when no modality reads the extension, or several do and
        nothing decides between them."""
        suffix = Path(path).suffix.lower()
        readers = self.readers(suffix)
        if len(readers) == 1:
            return ExtensionChoice(str(path), readers[0], "only")
        if not readers:
            raise UnknownNameError(
                f"{path}: no installed modality reads '{suffix or '(no extension)'}' files; "
                f"pass --modality (installed: {', '.join(self.names('modalities')) or 'none'})"
            )
        classes = {n: self.get_class("modalities", n) for n in readers}
        head = _head(path)
        verdict = {n: _sniff(classes[n], path, head) for n in readers}
        running = [n for n in readers if verdict[n] is not False] or readers
        if len(running) == 1:
            return ExtensionChoice(str(path), running[0], "content")
        chosen = (extension_defaults() if defaults is None else defaults).get(suffix)
        if chosen is not None and chosen not in self.names("modalities"):
            raise UnknownNameError(
                f"{EXTENSIONS_ENV} reads '{suffix}' files with {chosen!r}, which is not "
                f"installed (installed readers of '{suffix}': {', '.join(readers)})"
            )
        if chosen in running:
            return ExtensionChoice(str(path), chosen, "setting", tuple(n for n in running if n != chosen))
        sure = [n for n in running if verdict[n] is True]
        if len(sure) == 1:
            return ExtensionChoice(str(path), sure[0], "content", tuple(n for n in running if n != sure[0]))
        pool = sure or running
        rank = {n: int(getattr(classes[n], "priority", 0)) for n in pool}
        top = max(rank.values())
        best = [n for n in pool if rank[n] == top]
        if len(best) == 1:
            return ExtensionChoice(str(path), best[0], "priority", tuple(n for n in running if n != best[0]))
        raise UnknownNameError(
            f"{path}: several modalities read '{suffix}' files ({', '.join(best)}) and nothing "
            f"decides between them; pass --modality NAME or set {EXTENSIONS_ENV}={suffix}=NAME"
        )


def _sniff(cls: type, path: str | os.PathLike[str], head: bytes) -> bool | None:
    """``cls.sniff(path, head)``; a plugin's sniff that raises counts as "cannot tell"."""
    sniff = getattr(cls, "sniff", None)
    if sniff is None or not head:
        return None
    try:
        verdict = sniff(path, head)
    except Exception:  # a plugin's bug must not decide (or break) the choice for the others
        return None
    return verdict if verdict in (True, False) else None


_default: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, loaded from entry points on first use."""
    global _default
    if _default is None:
        _default = Registry()
    return _default


def reset_registry(factory: Callable[[], Registry] | None = None) -> Registry | None:
    """Drop (or replace) the process-wide registry; used by tests and the ``--strict`` flag."""
    global _default
    _default = factory() if factory else None
    return _default
