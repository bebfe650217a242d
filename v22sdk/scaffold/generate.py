"""Render the plugin templates for a name and a zone into a new directory."""

from __future__ import annotations

import keyword
import re
from pathlib import Path
from string import Template

from ..errors import V22Error
from . import templates

#: Zones a generated plugin can write, and the kind of input its tokenizer starts from.
ZONES = {"vision": "2-D image array", "audio": "1-D signal with a sample rate", "language": "text"}
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,38}$")


class ScaffoldError(V22Error):
    """The plugin cannot be generated (bad name or zone, a name already taken, or the target
    directory exists). Bad usage, so the CLI exits with 2."""

    exit_code = 2


def names_for(name: str) -> dict[str, str]:
    """The names derived from a plugin name: ``dist`` (v22sdk-NAME), ``package`` (v22sdk_NAME), ``cls``."""
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise ScaffoldError(
            f"plugin name {name!r} must be a lower-case identifier: a letter, then letters, "
            f"digits or '_' (at most 39 characters), e.g. 'thermal' or 'eeg'"
        )
    return {
        "name": name,
        "dist": f"v22sdk-{name}",
        "package": f"v22sdk_{name}",
        "cls": "".join(part.capitalize() for part in name.split("_") if part) + "Modality",
    }


def generate(name: str, zone: str = "vision", directory: str | Path = ".") -> Path:
    """Write the package ``<directory>/v22sdk-<name>/`` and return its path.

    Raises :class:`ScaffoldError` for a bad name or zone, or when the target exists (nothing is
    overwritten).
    """
    if zone not in ZONES:
        raise ScaffoldError(f"unknown zone {zone!r}; choose one of {', '.join(ZONES)}")
    values = {**names_for(name), "zone": zone, "input_kind": ZONES[zone]}
    root = Path(directory) / values["dist"]
    if root.exists():
        raise ScaffoldError(f"{root} already exists; choose another --dir or remove it")
    files = {
        "pyproject.toml": templates.PYPROJECT,
        "README.md": templates.README,
        f"src/{values['package']}/__init__.py": templates.INIT,
        f"src/{values['package']}/modality.py": templates.MODALITY[zone],
        "tests/test_contract.py": templates.TEST_CONTRACT,
        "tests/test_tokens.py": templates.TEST_TOKENS[zone],
        "examples/make_manifest.py": templates.MAKE_MANIFEST[zone],
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(text).substitute(values), encoding="utf-8")
    return root
