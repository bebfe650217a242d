"""mkdocs hooks for the documentation site (mkdocs.yml ``hooks:``).

The docs carry the evidence markers of ``scripts/render_docs.py`` (``<!-- value: FILE#NAME -->``,
``<!-- table: FILE#NAME -->`` and their closing comments) around every rendered figure. A cell
marker names its row and column as ``tables.T[row][column]``, which Python-Markdown reads as a
reference link inside a paragraph, so the site strips the markers before parsing; the rendered
values between them stay.
"""

from __future__ import annotations

import re
from typing import Any

_MARKER = re.compile(r"<!--\s*/?(?:value|table)\b.*?-->", re.DOTALL)


def strip_evidence_markers(markdown: str) -> str:
    return _MARKER.sub("", markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return strip_evidence_markers(markdown)
