"""The kit's modules import only the layers below them (no import circle; see v22sdk/testing/__init__)."""

from __future__ import annotations

import ast
from pathlib import Path

import v22sdk.testing

#: Bottom to top: a module may import (at any depth: module level or inside a function) only the
#: modules before it in this list.
LAYERS = [
    "_registry",
    "_settings",
    "_format",
    "_judge",
    "_inputs",
    "_worker",
    "_property",
    "checks",
    "catalog",
    "report",
    "pytest_api",
    "cli",
]
#: Imported by every pytest run: it imports no module of the kit at all at module level.
ISOLATED = ["pytest_plugin"]


def _kit_imports(path: Path, module_level_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:  # from . import x / from .x import y
                found.update([node.module.split(".")[0]] if node.module else [a.name for a in node.names])
            elif node.level == 0 and node.module and node.module.startswith("v22sdk.testing"):
                rest = node.module[len("v22sdk.testing") :].lstrip(".")
                found.update([rest.split(".")[0]] if rest else [a.name for a in node.names])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("v22sdk.testing."):
                    found.add(alias.name.split(".")[2])
    return found


def test_every_kit_module_has_a_layer_or_stands_alone():
    """A module of the package outside the kit's layers (test helpers other parts of v22sdk keep
    here, like memory_workload) imports no module of the kit, so it cannot close a circle."""
    folder = Path(v22sdk.testing.__file__).parent
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__"}
    assert set(LAYERS) | set(ISOLATED) <= modules
    for name in sorted(modules - set(LAYERS) - set(ISOLATED)):
        assert _kit_imports(folder / f"{name}.py") == set(), f"v22sdk/testing/{name}.py imports the kit"


def test_modules_import_only_lower_layers():
    folder = Path(v22sdk.testing.__file__).parent
    for i, name in enumerate(LAYERS):
        imported = _kit_imports(folder / f"{name}.py")
        higher = imported - set(LAYERS[:i])
        assert not higher, f"v22sdk/testing/{name}.py imports {sorted(higher)}, which are not below it"


def test_the_pytest_plugin_imports_no_kit_module_at_import_time():
    folder = Path(v22sdk.testing.__file__).parent
    assert _kit_imports(folder / "pytest_plugin.py", module_level_only=True) == set()


def test_the_layer_check_sees_an_upward_import(tmp_path):
    (tmp_path / "m.py").write_text("from .catalog import list_checks\nimport v22sdk.testing.report\n")
    assert _kit_imports(tmp_path / "m.py") == {"catalog", "report"}
