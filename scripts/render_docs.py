"""Rewrite every table the docs embed from its committed result file (see ``v22sdk/evidence.py``).

python scripts/render_docs.py            # rewrite docs/*.md and README.md in place
python scripts/render_docs.py --check    # exit 1 and name each doc whose tables are stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from v22sdk.evidence import render_doc  # noqa: E402


def docs(root: Path = ROOT) -> list[Path]:
    return sorted((root / "docs").rglob("*.md")) + [root / "README.md"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report stale docs, change nothing")
    args = ap.parse_args(argv)
    stale = []
    for doc in docs():
        if not doc.is_file():
            continue
        text = doc.read_text(encoding="utf-8")
        try:
            new = render_doc(text, ROOT)
        except ValueError as exc:
            print(f"{doc.relative_to(ROOT)}: {exc}", file=sys.stderr)
            return 2
        if new != text:
            stale.append(doc)
            if not args.check:
                doc.write_text(new, encoding="utf-8")
    for doc in stale:
        print(f"{'stale' if args.check else 'rewrote'}: {doc.relative_to(ROOT)}")
    return 1 if (stale and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
