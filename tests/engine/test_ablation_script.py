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


@pytest.mark.slow  # about 13 s on 2 cores: the default run must stay under 10 minutes in CI
def test_a_short_run_reports_measured_figures(ablate, tmp_path, capsys):
    out = tmp_path / "ablation.json"
    assert ablate.main(["--variants", "gain_1,default", "--seeds", "2", "--epochs", "2", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text(encoding="utf-8"))
    runs = doc["data"]["runs"]
    assert "ablate_engine.py" in doc["provenance"]["command"] and doc["criterion"]["correction"].startswith("Holm")
    assert list(runs) == ["default", "gain_1"]  # the reference row first
    for rows in runs.values():
        assert [r["seed"] for r in rows] == [0, 1]
        for r in rows:
            assert len(r["losses"]) == 2 and r["final_loss"] == r["losses"][-1]
            assert r["test_n"] == 42 and 0.0 <= r["test_exact"] <= 1.0
    # one held-out split for every seed (train_engine alone would re-draw the free text pairs)
    assert runs["default"][0]["test_indices"] == runs["default"][1]["test_indices"] == runs["gain_1"][1]["test_indices"]
    # the result file's table is the printed one
    (table_row,) = [r for r in doc["tables"]["ablation"]["rows"] if r[0] == "`gain_1`"]
    assert table_row[1].startswith(f"{sum(r['test_exact'] for r in runs['gain_1']) / 2:.3f}")
    # the switch changes training: same seed, different losses
    assert runs["default"][0]["losses"] != runs["gain_1"][0]["losses"]
    # seeds differ from each other, and the table shows the runs' own means
    assert runs["default"][0]["losses"] != runs["default"][1]["losses"]
    mean = sum(r["test_exact"] for r in runs["gain_1"]) / 2
    row = next(line for line in printed.splitlines() if line.startswith("| `gain_1`"))
    assert row.split("|")[2].strip().startswith(f"{mean:.3f}")


def test_holm_adjusts_step_down_and_stays_monotone(ablate):
    # textbook example: p = 0.01, 0.04, 0.03, 0.005 over m = 4 -> 0.03, 0.06, 0.06, 0.02
    adj = ablate.holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005})
    assert adj == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06, "d": 0.02})
    assert ablate.holm({"a": 0.5, "b": 0.6}) == {"a": 1.0, "b": 1.0}  # capped at 1


def test_paired_comparison_matches_scipy_and_widens_under_bonferroni(ablate):
    from scipy import stats

    ref = [{"x": v} for v in (0.90, 0.88, 0.93, 0.86, 0.90)]
    var = [{"x": v} for v in (0.86, 0.85, 0.90, 0.85, 0.86)]
    c = ablate.paired(var, ref, "x", m=8)
    t = stats.ttest_rel([r["x"] for r in var], [r["x"] for r in ref])
    assert c["p"] == pytest.approx(t.pvalue) and c["mean"] == pytest.approx(-0.03)
    assert c["lo_bonf"] < c["lo"] < c["mean"] < c["hi"] < c["hi_bonf"]
    # a difference that clears 0.05 alone can fail once 8 comparisons are accounted for
    comps = ablate.comparisons({"default": ref, "v": var} | {f"z{i}": ref for i in range(7)}, key="x")
    assert comps["v"]["p"] < 0.05 and comps["v"]["p_holm"] == pytest.approx(min(1, 8 * comps["v"]["p"]))


def test_an_unknown_variant_is_a_usage_error(ablate, capsys):
    with pytest.raises(SystemExit) as exc:
        ablate.main(["--variants", "default,warp_drive"])
    assert exc.value.code == 2 and "warp_drive" in capsys.readouterr().err
