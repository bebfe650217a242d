"""Write docs/slots.md: every named slot of every installed modality, from the schemas themselves.

Run after changing a schema: ``.venv/bin/python scripts/gen_slot_docs.py``. A test checks that the
committed file matches what this script would write, so the table cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

from v22sdk import get_registry

BUILT_IN = ("text", "vision", "audio")
OUT = Path(__file__).resolve().parents[1] / "docs" / "slots.md"


def render(names: tuple[str, ...] = BUILT_IN) -> str:
    registry = get_registry()
    parts = [
        "# Every named attribute slot of the built-in modalities",
        "",
        "Generated from the schemas by `scripts/gen_slot_docs.py`; do not edit by hand. `slot` is the",
        "position in `attr` (0..383); the position in the full 640-D token is `256 + slot`.",
        "",
    ]
    for name in names:
        cls = registry.get_class("modalities", name)
        schema = cls.schema
        parts += [f"## `{name}` ({schema.zone} zone, {len(schema)} slots)", "", schema.markdown_table(), ""]
    return "\n".join(parts)


def main() -> int:
    OUT.write_text(render())
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    sys.exit(main())
