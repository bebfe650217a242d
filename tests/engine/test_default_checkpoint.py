"""The bundled checkpoint with the real built-in plugins (skipped when either is missing)."""

import hashlib
import json

import pytest
from click.testing import CliRunner

from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT
from v22sdk.evidence import ROOT, read_result

DEMO = DEFAULT_CHECKPOINT.parent / "demo"
RESULT = ROOT / "results" / "engine" / "default-checkpoint.json"


def _real_registry():
    from v22sdk.plugins import Registry

    reg = Registry()
    if not {"text", "vision", "audio"} <= set(reg.names("modalities")):
        pytest.skip("built-in modality plugins not installed")
    return reg


@pytest.fixture
def real(monkeypatch):
    if not DEFAULT_CHECKPOINT.is_file():
        pytest.skip("no default checkpoint (python scripts/make_demo_data.py --train)")
    reg = _real_registry()
    import v22sdk.plugins as plugins

    monkeypatch.setattr(plugins, "_default", reg)
    return reg


def test_checkpoint_is_small_enough():
    if not DEFAULT_CHECKPOINT.is_file():
        pytest.skip("no default checkpoint")
    assert DEFAULT_CHECKPOINT.stat().st_size <= 10 * 1024 * 1024


@pytest.mark.slow
def test_run_on_a_training_image_and_tone(real):
    from v22sdk.engine.cli import run

    cli = CliRunner()
    r = cli.invoke(run, [str(DEMO / "images" / "apple_00.png"), "--json", "--no-memory"], catch_exceptions=False)
    res = json.loads(r.output)
    assert res["modality"] == "vision" and res["output"] == "苹果"
    assert any(a["name"].startswith("vis.") for a in res["attributes"])
    r = cli.invoke(run, [str(DEMO / "audio" / "tone_110hz.wav"), "--json", "--no-memory"], catch_exceptions=False)
    assert json.loads(r.output)["output"] == "低音"


@pytest.mark.regression_pin
def test_pin_eval_reproduces_the_recorded_held_out_figures(real, tmp_path, monkeypatch):
    """REGRESSION PIN, not evidence: the figures it compares with are the checkpoint's own output,
    recorded in results/engine/default-checkpoint.json by ``make_demo_data.py --train`` (docs/results.md
    renders them). It catches a change (a plugin or engine edit that changes the shipped model's
    answers, or a retrained checkpoint whose result file was not rewritten), not an error: that
    the figures are right is checked against an independent count in the next test. The
    checkpoint records the identity of its examples, so plugin edits since it was trained do not
    orphan its split."""
    from v22sdk.engine.pipeline import evaluate_checkpoint

    monkeypatch.setenv("V22SDK_CACHE", str(tmp_path / "cache"))
    recorded = read_result(RESULT)["data"]
    assert recorded["sha256"] == hashlib.sha256(DEFAULT_CHECKPOINT.read_bytes()).hexdigest(), \
        "the default checkpoint changed: rerun python scripts/make_demo_data.py --report-default"
    m = evaluate_checkpoint(DEFAULT_CHECKPOINT)["metrics"]
    assert set(m) == set(recorded["heldout"])
    for split, figures in recorded["heldout"].items():
        assert m[split] == pytest.approx(figures), split


@pytest.mark.slow
def test_held_out_figures_match_an_independent_count(real):
    """Oracle independent of ``evaluate``: every held-out example of the checkpoint's own split is run
    one at a time through the user-facing ``Runner`` (file → tokenizer → engine → decoded text),
    and exact match and character accuracy are counted here against the manifest's targets. They
    must equal the figures the result file (and so docs/results.md) quotes."""
    from v22sdk.engine.checkpoint import read_checkpoint
    from v22sdk.engine.data import read_examples
    from v22sdk.engine.runner import Runner

    split = read_checkpoint(DEFAULT_CHECKPOINT)["split"]["test"]
    examples = read_examples(DEMO / "demo.jsonl")
    exact, chars = [], []
    with Runner(DEFAULT_CHECKPOINT) as runner:
        for i in split:
            ex = examples[i]
            out = runner.run(ex.input, ex.modality)["output"]
            exact.append(out == ex.target)
            chars.append(sum(a == b for a, b in zip(out, ex.target)) / len(ex.target))
    values = read_result(RESULT)["values"]
    assert len(split) == int(values["n_heldout"])
    assert f"{sum(exact) / len(exact):.3f}" == values["exact_all"]
    assert f"{sum(chars) / len(chars):.3f}" == values["char_all"]
