"""The generated docs must match the code they describe."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_slots_md_is_up_to_date():
    spec = importlib.util.spec_from_file_location("gen_slot_docs", ROOT / "scripts" / "gen_slot_docs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    committed = (ROOT / "docs" / "slots.md").read_text()
    assert committed == gen.render(), "docs/slots.md is stale: run scripts/gen_slot_docs.py"
    assert committed.count("\n| ") >= 3 * 129  # header + 128 slots per built-in zone


def test_cli_md_is_up_to_date():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", ROOT / "scripts" / "gen_cli_docs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    committed = (ROOT / "docs" / "cli.md").read_text()
    assert committed == gen.render(), "docs/cli.md is stale: run scripts/gen_cli_docs.py"
    for command in ("tokenize", "explain", "run", "train", "eval", "memory search", "new-plugin", "specdec run"):
        assert f"### `v22sdk {command}`" in committed
