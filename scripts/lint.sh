#!/usr/bin/env bash
# Lint (ruff check, rules in pyproject.toml [tool.ruff]) and, with --format, the formatting check.
#
#   bash scripts/lint.sh            # ruff check: must pass
#   bash scripts/lint.sh --format   # also `ruff format --check` (what CI runs)
set -euo pipefail
cd "$(dirname "$0")/.."
ruff=".venv/bin/ruff"
[ -x "$ruff" ] || ruff="ruff"
"$ruff" check .
if [ "${1:-}" = "--format" ]; then
    "$ruff" format --check .
fi
