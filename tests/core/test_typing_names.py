"""``v22sdk.testing`` imports its names on first use (PEP 562), so type checkers and editors see
them through an ``if TYPE_CHECKING:`` block: that block must name exactly the lazy names, from the
same modules, or a plugin author's ``mypy --strict`` breaks (or, worse, sees a stale name)."""

from __future__ import annotations

import ast
from pathlib import Path

import v22sdk.testing as kit


def _type_checking_imports(path: Path) -> dict[str, str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom), ast.dump(imp)
                for alias in imp.names:
                    assert alias.asname == alias.name, f"re-export {alias.name} as itself (PEP 484)"
                    out[alias.name] = "." * imp.level + (imp.module or "")
    return out


def test_the_type_checking_block_matches_the_lazy_names():
    seen = _type_checking_imports(Path(kit.__file__))
    expected = {name: ("." if name == "checks" else module) for name, module in kit._NAMES.items()}
    assert seen == expected


def test_every_lazy_name_resolves():
    for name in kit._NAMES:
        assert getattr(kit, name) is not None
