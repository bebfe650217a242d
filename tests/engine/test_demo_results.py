"""scripts/make_demo_data.py: the verification table and its values are built from the runs' own
figures (the result file docs/results.md renders)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_demo_data.py"


@pytest.fixture(scope="module")
def demo():
    spec = importlib.util.spec_from_file_location("make_demo_data", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(engine, **kw):
    row = {
        "engine": engine,
        "parameters": 3257922,
        "epochs": 120,
        "final_loss": 2.4e-3,
        "stopped_early": False,
        "train_exact": 1.0,
        "train_n": 28,
        "heldout_exact": 1.0,
        "heldout_char": 1.0,
        "heldout_n": 20,
        "safeguards": {"spikes": 0, "rollbacks": 0, "ac_alarms": 0},
    }
    return row | kw


def test_verification_table_and_values_come_from_the_runs(demo):
    results = {
        "text memorisation (--sample 10)": [
            _row(
                "v22",
                epochs=158,
                final_loss=9.9e-5,
                stopped_early=True,
                train_n=8,
                heldout_exact=0.0,
                heldout_char=0.0,
                heldout_n=2,
            ),
            _row(
                "baseline",
                parameters=2158592,
                epochs=57,
                stopped_early=True,
                train_exact=0.875,
                train_n=8,
                heldout_exact=0.5,
                heldout_char=0.25,
                heldout_n=2,
                safeguards={"spikes": 2, "rollbacks": 1, "ac_alarms": 0},
            ),
        ],
        "image → label (28 pairs, apple/sun)": [_row("v22"), _row("baseline", epochs=10, stopped_early=True)],
    }
    table = demo.verification_table(results)
    assert len(table["rows"]) == 4 and all(len(r) == len(table["columns"]) for r in table["rows"])
    text_v22, text_base, image_v22, image_base = table["rows"]
    assert text_v22[2:] == ["V22", "3,257,922", "158 (auto-stop)", "9.9e-05", "8/8", "**0/2** (char 0.00)"]
    assert text_base[0] == "" and text_base[6:] == ["7/8", "**1/2** (char 0.25)"]
    assert image_v22[7] == "**20/20** unseen images" and image_base[4] == "10 (auto-stop)"
    values = demo.verification_values(results)
    assert values["text.baseline.train"] == "7 of 8" and values["text.baseline.heldout"] == "1 of 2"
    assert values["image.baseline.epochs"] == "10"
    assert values["safeguards"] == "2 CE spikes, 1 NaN rollbacks, 0 ac alarms"
