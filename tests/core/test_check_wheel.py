"""scripts/check_wheel.py catches a wheel that lacks what users need: the compiled memory scan
and write rows among it (a wheel built without a C compiler)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load():
    spec = importlib.util.spec_from_file_location("check_wheel", ROOT / "scripts" / "check_wheel.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_complete_wheel_passes_and_one_without_a_compiled_part_does_not():
    cw = load()
    scan = "v22sdk/memory/_scan.cpython-311-x86_64-linux-gnu.so"
    rows = "v22sdk/memory/_rows.cpython-311-x86_64-linux-gnu.so"
    complete = [*cw.REQUIRED, scan, rows]
    assert cw.problems(complete) == []
    missing = cw.problems([*cw.REQUIRED, rows])
    assert len(missing) == 1 and "compiled scan" in missing[0]
    missing = cw.problems([*cw.REQUIRED, scan])
    assert len(missing) == 1 and "compiled write rows" in missing[0]
    assert cw.problems([*complete, "tests/test_x.py"]) != []  # and anything not the SDK
