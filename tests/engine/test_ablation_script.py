"""scripts/ablate_engine.py: every variant is a real EngineConfig change, and the table is built
from the runs' own figures."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ablate_engine.py"


@pytest.fixture(scope="module")
def ablate():
    spec = importlib.util.spec_from_file_location("ablate_engine", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_variant_is_a_valid_config_that_differs_from_the_default(ablate):
    from v22sdk.engine.config import preset

    default = preset("small")
    for name, overrides in ablate.VARIANTS.items():
        cfg = preset("small", **overrides)
        changed = {k for k in overrides if getattr(cfg, k) != getattr(default, k)}
        assert changed == set(overrides), name  # no override is a no-op


def test_a_short_run_reports_measured_figures(ablate, tmp_path, capsys):
    out = tmp_path / "ablation.json"
    assert ablate.main(["--variants", "gain_1,default", "--seeds", "2", "--epochs", "2", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    runs = json.loads(out.read_text(encoding="utf-8"))["runs"]
    assert list(runs) == ["default", "gain_1"]  # the reference row first
    for rows in runs.values():
        assert [r["seed"] for r in rows] == [0, 1]
        for r in rows:
            assert len(r["losses"]) == 2 and r["final_loss"] == r["losses"][-1]
            assert r["test_n"] == 42 and 0.0 <= r["test_exact"] <= 1.0
    # the switch changes training: same seed, different losses
    assert runs["default"][0]["losses"] != runs["gain_1"][0]["losses"]
    # seeds differ from each other, and the table shows the runs' own means
    assert runs["default"][0]["losses"] != runs["default"][1]["losses"]
    mean = sum(r["test_exact"] for r in runs["gain_1"]) / 2
    row = next(line for line in printed.splitlines() if line.startswith("| `gain_1`"))
    assert row.split("|")[2].strip().startswith(f"{mean:.3f}")


def test_an_unknown_variant_is_a_usage_error(ablate, capsys):
    with pytest.raises(SystemExit) as exc:
        ablate.main(["--variants", "default,warp_drive"])
    assert exc.value.code == 2 and "warp_drive" in capsys.readouterr().err
