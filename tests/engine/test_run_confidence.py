"""What `train` stores for confidence (calibration, open set, labels) and how `run` reports it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from v22sdk.engine.checkpoint import read_checkpoint
from v22sdk.engine.cli import run
from v22sdk.engine.config import preset
from v22sdk.engine.pipeline import train_engine


def _write_blips(folder):
    lines = []
    rng = np.random.default_rng(0)
    for i, pitch in enumerate(np.r_[rng.uniform(-0.9, -0.6, 40), rng.uniform(0.6, 0.9, 40)]):
        f = folder / f"b{i}.blip"
        f.write_text(json.dumps({"pitch": float(pitch)}))
        lines.append({"input": f.name, "target": "低" if pitch < 0 else "高"})
    path = folder / "blips.jsonl"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained_once(module_registry, tmp_path_factory):
    """One calibrated checkpoint for the module (training is the slow part)."""
    folder = tmp_path_factory.mktemp("blips")
    manifest = _write_blips(folder)
    out = folder / "m.pt"
    train_engine(
        manifest,
        preset("tiny", epochs=4, batch_size=8),
        out,
        registry=module_registry,
        use_text_plugin=False,
        val_frac=0.25,
        sources=[{"name": "toy blips", "licence": "MIT"}],
    )
    return out, manifest


@pytest.fixture
def blip_manifest(trained_once, registry):
    return trained_once[1]


@pytest.fixture
def calibrated(trained_once, registry):
    return trained_once[0]


def test_training_with_a_validation_split_stores_calibration_open_set_and_labels(calibrated):
    doc = read_checkpoint(calibrated)
    cal = doc["calibration"]
    assert cal["method"] == "temperature" and cal["split"] == "val" and cal["n"] == 20
    assert 0.05 <= cal["temperature"] <= 20 and 0 <= cal["val_ece_after"] <= 1
    assert doc["open_set"]["feature"] == "sent_vec" and set(doc["open_set"]["thresholds"]) == {"blip"}
    assert sorted(label for _, label in doc["open_set"]["groups"]) == ["低", "高"]
    assert doc["data"]["labels"] == {"blip": ["低", "高"]}
    assert doc["data"]["sources"] == [{"name": "toy blips", "licence": "MIT"}]
    assert doc["data"]["fidelity_floors"] == {}  # the toy modality declares no fidelity slot
    assert doc["metrics"]["calibration"]["temperature"] == cal["temperature"]


def test_without_a_validation_split_there_is_no_calibration(registry, blip_manifest, tmp_path):
    out = tmp_path / "m.pt"
    train_engine(
        blip_manifest,
        preset("tiny", epochs=1, batch_size=8),
        out,
        registry=registry,
        use_text_plugin=False,
        val_frac=0.0,
    )
    doc = read_checkpoint(out)
    assert doc["calibration"] is None and doc["open_set"] is None
    r = CliRunner().invoke(
        run, [str(blip_manifest.parent / "b0.blip"), "-c", str(out), "--no-memory", "--json"], catch_exceptions=False
    )
    res = json.loads(r.output)
    assert res["calibrated"] is False and res["familiar"] is None and res["open_set"] is None
    assert res["output"] == res["decoded"]
    r = CliRunner().invoke(run, [str(blip_manifest.parent / "b0.blip"), "-c", str(out), "--no-memory"])
    assert "confidence (uncalibrated)" in r.output


def test_runner_reports_familiar_and_unfamiliar_inputs(calibrated, blip_manifest):
    from v22sdk.engine.runner import Runner, format_result

    blip = str(blip_manifest.parent / "b0.blip")
    with Runner(calibrated) as runner:
        res = runner.run(blip)
        o = res["open_set"]
        assert (
            res["calibrated"] is True and o["method"] == "mahalanobis(sent_vec)" and o["nearest_label"] in ("低", "高")
        )
        assert o["threshold"] == pytest.approx(runner.open_set.thresholds["blip"], abs=1e-4)
        assert res["familiar"] is (o["score"] <= o["threshold"])
        runner.open_set.thresholds["blip"] = math.inf  # everything familiar
        res = runner.run(blip)
        assert res["familiar"] is True and res["output"] == res["decoded"] in ("低", "高")
        assert format_result(res).splitlines()[0].startswith(res["output"] + "    confidence ")
        runner.open_set.thresholds["blip"] = -1.0  # nothing familiar
        res = runner.run(blip)
        assert res["familiar"] is False and res["output"] is None and res["decoded"] in ("低", "高")
        text = format_result(res)
        assert text.startswith("unfamiliar input") and f"nearest label {o['nearest_label']}" in text
        assert "> threshold -1.0" in text and f"the decoder would say {res['decoded']}" in text


def test_an_input_far_from_the_training_data_is_unfamiliar(calibrated, tmp_path):
    """A blip nobody trained on (pitch 0: its embedding seeds were never seen) scores far above
    the threshold, which the validation split set."""
    from v22sdk.engine.runner import Runner

    odd = tmp_path / "odd.blip"
    odd.write_text(json.dumps({"pitch": 0.0}))
    with Runner(calibrated) as runner:
        res = runner.run(str(odd))
    assert res["familiar"] is False and res["open_set"]["score"] > res["open_set"]["threshold"]


def test_knows_lists_labels_sources_and_how_answers_are_judged(calibrated):
    cli = CliRunner()
    r = cli.invoke(run, ["--knows", "-c", str(calibrated)], catch_exceptions=False)
    assert r.exit_code == 0
    assert "blip labels: 低 高" in r.output and "source: toy blips (licence MIT)" in r.output
    assert "calibrated, temperature" in r.output and "mahalanobis(sent_vec) above blip" in r.output
    doc = json.loads(cli.invoke(run, ["--knows", "--json", "-c", str(calibrated)]).output)
    assert doc["labels"] == {"blip": ["低", "高"]} and doc["open_set"]["method"] == "mahalanobis(sent_vec)"
    r = cli.invoke(run, ["--knows", "x.blip", "-c", str(calibrated)])
    assert r.exit_code == 2 and "--knows takes no INPUT" in r.output
    r = cli.invoke(run, ["-c", str(calibrated)])
    assert r.exit_code == 2 and "missing INPUT" in r.output


def test_a_modality_with_too_few_validation_inputs_gets_no_threshold_and_is_not_judged():
    """A 95 % quantile of a handful of scores is little more than their maximum (a toy set's five
    validation inputs called a plain held-out query unfamiliar): below MIN_THRESHOLD_EXAMPLES the
    modality gets no threshold, and run says its inputs are not judged instead of calling them
    familiar or unfamiliar."""
    from v22sdk.engine.openset import MIN_THRESHOLD_EXAMPLES, Scorer
    from v22sdk.engine.runner import format_result

    scorer = Scorer()
    n = MIN_THRESHOLD_EXAMPLES
    scores = np.r_[np.arange(n - 1, dtype=float), np.arange(n, dtype=float)]
    scorer.set_thresholds(scores, ["few"] * (n - 1) + ["enough"] * n)
    assert "few" not in scorer.thresholds and scorer.familiar(0.0, "few") is None
    assert scorer.thresholds["enough"] == pytest.approx(np.quantile(np.arange(n, dtype=float), 0.95))
    r = {
        "tokens": 3,
        "truncated_to": 3,
        "familiar": None,
        "output": "高",
        "decoded": "高",
        "confidence": 0.9,
        "calibrated": True,
        "modality": "few",
        "engine": "v22",
        "attributes": [],
        "memory": None,
        "open_set": {"score": 5.0, "threshold": None, "nearest_label": "高", "method": "mahalanobis(sent_vec)"},
    }
    text = format_result(r)
    assert text.startswith("高    confidence 0.900") and "familiarity not judged" in text and "≤" not in text
