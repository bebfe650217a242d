"""scripts/explain_shuffled.py: the data-randomisation follow-up's subset, its verdicts, and a short run."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture(scope="module")
def script():
    sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location("explain_shuffled", SCRIPTS / "explain_shuffled.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)
    sys.path.remove(str(SCRIPTS))


def test_the_subset_is_a_seeded_draw_of_each_part_from_the_train_split(script):
    parts = ["a"] * 10 + ["b"] * 3 + ["c"] * 5
    train = list(range(0, 18, 1))[:-2]  # the last two "c" are not in the train split
    got = script.subset(parts, train, 4, seed=7)
    assert got == sorted(got) and set(got) <= set(train)
    by_part = {p: sum(parts[i] == p for i in got) for p in "abc"}
    assert by_part == {"a": 4, "b": 3, "c": 3}  # a part smaller than the draw gives all it has
    assert script.subset(parts, train, 4, seed=7) == got
    assert script.subset(parts, train, 4, seed=8) != got


def _rows(rho_slots: float, n: int = 12) -> list[dict]:
    spread = [(-1) ** i * 0.05 for i in range(n)]
    return [
        {"slots/ig": rho_slots + s, "slots/occlusion": 0.1 + s, "tokens/ig": 0.9 if i < 3 else None}
        for i, s in enumerate(spread)
    ]


def test_the_verdict_passes_only_a_fitted_engine_whose_maps_all_differ(script):
    summary, table, verdict = script.judge(_rows(0.1), fitted=True)
    assert verdict == "PASSED"
    assert summary["slots/ig"]["differs"] and summary["slots/ig"]["hi"] < 0.5
    # three inputs are reported, not judged, whatever their rho
    assert summary["tokens/ig"]["n"] == 3 and not summary["tokens/ig"]["judged"]
    assert ["tokens", "ig", "3"] == table[-1][:3] and table[-1][-1] == "too few inputs"


def test_maps_that_follow_the_shuffled_engine_fail_the_check(script):
    summary, table, verdict = script.judge(_rows(0.8), fitted=True)
    assert verdict == "FAILED" and not summary["slots/ig"]["differs"]
    assert any(row[:2] == ["slots", "ig"] and row[-1] == "does not differ" for row in table)


def test_an_engine_that_did_not_fit_its_random_labels_makes_the_check_not_valid(script):
    assert script.judge(_rows(0.1), fitted=False)[2] == "NOT VALID"


@pytest.mark.slow
def test_a_short_run_trains_saves_and_judges(script, tmp_path, monkeypatch):
    import shutil

    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT

    if not DEFAULT_CHECKPOINT.is_file():
        pytest.skip("no default checkpoint")
    pytest.importorskip("sklearn", reason="the data suite needs scikit-learn (pip install 'v22sdk[suite]')")
    if not (shutil.which("espeak-ng") and shutil.which("fluidsynth")):
        pytest.skip("the data suite needs espeak-ng and fluidsynth (scripts/ci_services.sh)")
    from v22sdk.engine.data.suite import build_suite

    suite = build_suite(tmp_path / "suite", size="tiny")
    monkeypatch.setenv("V22SDK_CACHE", str(tmp_path / "cache"))
    model, out = tmp_path / "shuffled.pt", tmp_path / "s.json"
    common = ["--data", str(suite), "--limit", "1", "--subset", "2"]
    assert script.main([*common, "--max-epochs", "2", "--train-only", str(model)]) == 0
    assert script.main([*common, "--shuffled-model", str(model), "--out", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["criterion"] == script.CRITERION
    fit = doc["data"]["shuffled_fit"]
    assert fit["examples"] == 8 and fit["epochs"] == 2 and len(fit["history"]) >= 1
    # two epochs do not fit random labels: the check must say so rather than pass
    assert fit["fitted"] is (fit["train_exact_on_shuffled"] >= 0.95)
    if fit["fitted"]:
        assert doc["data"]["verdict"] in ("PASSED", "FAILED")
    else:
        assert doc["data"]["verdict"] == "NOT VALID"
    assert doc["data"]["inputs"] == 4 and len(doc["data"]["rows"]) == 4
    assert set(doc["tables"]) == {"sanity_shuffled", "shuffled_fit"}
