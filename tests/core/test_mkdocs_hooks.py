"""The site's mkdocs hook strips the evidence markers and keeps the rendered values."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _hooks():
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_markers_go_and_values_stay():
    text = (
        "took <!-- value: results/x.json#tables.cold[v22sdk run image][CPU / import torch] -->0.87<!-- /value -->×\n"
        "<!-- table: results/x.json#cold -->\n| a |\n|---|\n| 1 |\n<!-- /table -->\n<!-- a plain comment -->\n"
    )
    out = _hooks().on_page_markdown(text, page=None)
    assert "took 0.87×" in out and "| 1 |" in out
    assert "value:" not in out and "table:" not in out and "][" not in out
    assert "<!-- a plain comment -->" in out  # only the evidence markers are removed
