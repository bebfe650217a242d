"""Work items of a scale-out job: every input of a folder or a manifest, with its modality.

Sources:

* a folder: every file under it (recursively, sorted by path); its modality comes from the
  extension (``--modality`` forces one). Files no installed modality reads are NOT dropped
  silently: they become error records (``unknown_modality``) in the job's errors manifest;
* a ``.jsonl`` manifest: one ``{"input": ..., ["modality": ...], ["target": ...]}`` per line
  (the engine's manifest format: ``input`` is a path relative to the manifest, or the text itself
  for text modalities); a bad line becomes an error record, not a failed job;
* a ``.txt`` list: one path per line (relative to the list's folder).

Each item is a plain dict (``idx``, ``input``, ``modality``, ``is_file``, ``target``), so it
travels to Ray workers as an Arrow row.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .._paths import display, is_file
from ..errors import InputError, UnknownNameError
from ..inputs import looks_like_path, special_kind


def list_items(
    source: str | os.PathLike[str], modality: str | None = None, registry=None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(items, errors)`` of ``source``; errors are records ``{input, stage, error}``."""
    from ..plugins import get_registry

    registry = registry or get_registry()
    if modality is not None:
        registry.get_class("modalities", modality)  # unknown name: one typed error, up front
    src = Path(source)
    if not src.exists():
        raise InputError(str(src), "no such folder or manifest")
    items: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []

    def add_file(path: Path, name: str | None, target: str | None = None, where: str | None = None) -> None:
        try:
            str(path).encode("utf-8")
        except UnicodeEncodeError:  # Arrow (Ray Data's blocks) holds only UTF-8 strings: report, don't abort
            errors.append(
                {
                    "input": display(str(path)),
                    "stage": "resolve",
                    "error": "the file name is not valid UTF-8; rename it",
                    **({"line": where} if where else {}),
                }
            )
            return
        if name is None:
            try:  # several readers of one extension: content, the user's default, priority (plugins.py)
                name = registry.resolve_path(path).modality
            except UnknownNameError as exc:
                why = str(exc).removeprefix(f"{path}: ")
                errors.append(
                    {"input": str(path), "stage": "resolve", "error": why, **({"line": where} if where else {})}
                )
                return
        items.append({"idx": len(items), "input": str(path), "modality": name, "is_file": True, "target": target})

    if src.is_dir():
        for path in sorted(p for p in src.rglob("*") if p.is_file()):
            add_file(path, modality)
    elif src.suffix.lower() == ".jsonl":
        for n, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{src}:{n}"
            try:
                rec = json.loads(line)
                if not isinstance(rec, dict) or not isinstance(rec.get("input"), str):
                    raise ValueError('a manifest line needs {"input": str}')
            except ValueError as exc:
                errors.append({"input": where, "stage": "manifest", "error": str(exc)})
                continue
            name = rec.get("modality") or modality
            target = rec.get("target") if isinstance(rec.get("target"), str) else None
            file = src.parent / rec["input"]
            takes_text = (
                name is not None
                and name in registry.names("modalities")
                and getattr(registry.get_class("modalities", name).input_spec, "kind", "") == "text"
            )
            problem = (
                None
                if rec.get("literal") is True
                else _named_problem(file, rec["input"], registry, name is None or takes_text)
            )
            if problem:
                errors.append({"input": where, "stage": "resolve", "error": problem})
            elif takes_text and (rec.get("literal") is True or not is_file(file)):
                items.append(
                    {"idx": len(items), "input": rec["input"], "modality": name, "is_file": False, "target": target}
                )
            elif name is not None and name not in registry.names("modalities"):
                errors.append({"input": where, "stage": "resolve", "error": f"unknown modality {name!r}"})
            elif not is_file(file):
                errors.append({"input": where, "stage": "resolve", "error": f"input file {rec['input']!r} not found"})
            else:
                add_file(file, name, target, where)
    else:
        for n, line in enumerate(src.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip() and not line.startswith("#"):
                file = src.parent / line.strip()
                if is_file(file):
                    add_file(file, modality)
                else:
                    errors.append({"input": f"{src}:{n}", "stage": "resolve", "error": f"{line.strip()!r} not found"})
    return items, errors


def _named_problem(file: Path, given: str, registry, text_ok: bool) -> str | None:
    """Why a manifest input cannot be read by the rule of :mod:`v22sdk.inputs` (None: it can)."""
    try:
        st = os.stat(file)
    except (OSError, ValueError):
        if text_ok and looks_like_path(given, registry.extensions()):
            return (
                f"input {given!r} looks like a file name but no such file exists next to the manifest "
                '(add "literal": true to the line to read it as text)'
            )
        return None
    kind = special_kind(st.st_mode)
    return f"input {given!r} is {kind}, not a regular file" if kind else None
