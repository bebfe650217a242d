"""The bundled checkpoint with the real built-in plugins (skipped when either is missing)."""

import json

import pytest
from click.testing import CliRunner

from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT

DEMO = DEFAULT_CHECKPOINT.parent / "demo"


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
    r = cli.invoke(run, [str(DEMO / "images" / "apple_00.png"), "--json"], catch_exceptions=False)
    res = json.loads(r.output)
    assert res["modality"] == "vision" and res["output"] == "苹果"
    assert any(a["name"].startswith("vis.") for a in res["attributes"])
    r = cli.invoke(run, [str(DEMO / "audio" / "tone_110hz.wav"), "--json"], catch_exceptions=False)
    assert json.loads(r.output)["output"] == "低音"


def test_eval_reproduces_the_documented_held_out_figures(real, tmp_path, monkeypatch):
    """docs/results.md: 42 held-out examples, exact 0.929, char 0.940. The checkpoint records the
    identity of its examples, so plugin edits since it was trained do not orphan its split."""
    from v22sdk.engine.pipeline import evaluate_checkpoint

    monkeypatch.setenv("V22SDK_CACHE", str(tmp_path / "cache"))
    m = evaluate_checkpoint(DEFAULT_CHECKPOINT)["metrics"]
    assert m["all"]["n"] == 42 and round(m["all"]["exact"], 3) == 0.929 and round(m["all"]["char"], 3) == 0.940
    assert m["vision"]["exact"] == 1.0 and m["audio"]["exact"] == 1.0
