"""The plugin generator: names, errors, the click command, and generated packages that pass their
own contract tests and fail them when the generated tokenizer is broken."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from v22sdk.scaffold import ScaffoldError, generate, names_for
from v22sdk.scaffold.cli import new_plugin

PYTHON = sys.executable
#: The text edit that breaks every generated tokenizer's emb normalisation.
NORMALISED = "vectors / np.where(zero[:, None], 1.0, norms)"
BROKEN = "vectors * 1.5"


def _pytest(pkg: Path, *args: str, pythonpath: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ}
    if pythonpath:
        env["PYTHONPATH"] = str(pkg / "src")
    return subprocess.run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", *args, str(pkg / "tests")],
                          cwd=pkg, env=env, capture_output=True, text=True, timeout=300)


def test_names_are_derived_from_the_plugin_name():
    assert names_for("thermal_cam") == {"name": "thermal_cam", "dist": "v22sdk-thermal_cam",
                                        "package": "v22sdk_thermal_cam", "cls": "ThermalCamModality"}


@pytest.mark.parametrize("bad", ["Thermal", "1x", "my-plugin", "", "class", "a" * 40])
def test_bad_names_are_refused(bad, tmp_path):
    with pytest.raises(ScaffoldError, match="lower-case identifier"):
        generate(bad, "vision", tmp_path)


def test_unknown_zone_and_existing_target_are_refused(tmp_path):
    with pytest.raises(ScaffoldError, match="unknown zone"):
        generate("x", "smell", tmp_path)
    generate("x", "vision", tmp_path)
    marker = tmp_path / "v22sdk-x" / "README.md"
    before = marker.read_text()
    with pytest.raises(ScaffoldError, match="already exists"):
        generate("x", "audio", tmp_path)
    assert marker.read_text() == before  # nothing overwritten


def test_cli_command_generates_and_reports(tmp_path):
    result = CliRunner().invoke(new_plugin, ["lidar", "--zone", "vision", "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    root = tmp_path / "v22sdk-lidar"
    assert f"created {root}" in result.output
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        "README.md", "pyproject.toml", "src/v22sdk_lidar/__init__.py", "src/v22sdk_lidar/modality.py",
        "tests/test_contract.py", "tests/test_tokens.py"]
    pyproject = (root / "pyproject.toml").read_text()
    assert '[project.entry-points.v22sdk]\nlidar = "v22sdk_lidar"' in pyproject
    assert 'dependencies = ["v22sdk>=0.1"]' in pyproject
    again = CliRunner().invoke(new_plugin, ["lidar", "--dir", str(tmp_path)])
    assert again.exit_code == 1 and "already exists" in again.output
    bad = CliRunner().invoke(new_plugin, ["lidar", "--zone", "smell", "--dir", str(tmp_path)])
    assert bad.exit_code == 2


# vision runs by default; the other two zones take ~20 s each on 2 shared cores, so they are slow.
@pytest.mark.parametrize("zone", ["vision", pytest.param("audio", marks=pytest.mark.slow),
                                  pytest.param("language", marks=pytest.mark.slow)])
def test_generated_package_passes_its_tests_and_fails_them_when_broken(zone, tmp_path):
    root = generate(f"gen_{zone[:3]}", zone, tmp_path)
    ok = _pytest(root, "--v22sdk-max-examples", "8")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"{13 + (zone == 'audio')} passed" in ok.stdout  # the audio package also tests its file loader
    modality = root / "src" / f"v22sdk_gen_{zone[:3]}" / "modality.py"
    text = modality.read_text()
    assert text.count(NORMALISED) == 1
    modality.write_text(text.replace(NORMALISED, BROKEN))
    broken = _pytest(root, "--v22sdk-max-examples", "8", "-k", "check_unit_norm_emb or check_schema or test_one")
    assert broken.returncode == 1, broken.stdout
    # The kit names the broken rule; the schema check (no tokenizing) still passes.
    summary = broken.stdout.split("short test summary")[-1]
    assert f"FAILED tests/test_contract.py::test_contract[gen_{zone[:3]}-check_unit_norm_emb]" in summary
    assert "check_schema]" not in summary
    assert "2 failed, 1 passed" in broken.stdout


def _train_and_run(name: str, tmp_path: Path) -> dict:
    """Train a tiny engine on the generated modality from a manifest, then `v22sdk run` one held-out input."""
    import json

    import numpy as np

    rng = np.random.default_rng(0)
    data = tmp_path / "data"
    data.mkdir()
    lines = []
    for i in range(16):  # bright vs dark arrays: an easy, learnable label
        bright = i % 2 == 0
        arr = (rng.uniform(0.6, 1.0, (12, 12)) if bright else rng.uniform(0.0, 0.3, (12, 12))).astype(np.float32)
        np.save(data / f"x{i}.npy", arr)
        lines.append(json.dumps({"input": f"x{i}.npy", "modality": name, "target": "亮" if bright else "暗"}))
    (data / "train.jsonl").write_text("\n".join(lines) + "\n")
    held_out = data / "query.npy"
    np.save(held_out, rng.uniform(0.6, 1.0, (12, 12)).astype(np.float32))
    cli = [PYTHON, "-c", "from v22sdk.cli import main; main()"]
    trained = subprocess.run([*cli, "train", str(data / "train.jsonl"), "--preset", "tiny", "--epochs", "40",
                              "--no-progress", "-o", str(tmp_path / "model.pt")],
                             capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    ran = subprocess.run([*cli, "run", "--modality", name, "--checkpoint", str(tmp_path / "model.pt"),
                          str(held_out), "--json"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def test_generate_install_list_and_test_end_to_end(tmp_path):
    """generate -> pip install -e into this venv -> the registry lists it -> its pytest passes ->
    an engine trains on it from a manifest -> `v22sdk run` uses it."""
    name = f"e2e{uuid.uuid4().hex[:8]}"
    root = generate(name, "vision", tmp_path)
    pip = [PYTHON, "-m", "pip"]
    try:
        subprocess.run([*pip, "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(root)],
                       check=True, capture_output=True, text=True, timeout=300)
        listed = subprocess.run(
            [PYTHON, "-c", "from v22sdk import Registry; r = Registry(); "
                           f"print(r.names('modalities')); print(r.provider('modalities', '{name}').dist)"],
            capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert listed.returncode == 0, listed.stderr
        assert f"'{name}'" in listed.stdout and f"v22sdk-{name}" in listed.stdout
        tested = _pytest(root, pythonpath=False)  # the installed package, not src/ on a path
        assert tested.returncode == 0, tested.stdout + tested.stderr
        assert "13 passed" in tested.stdout
        result = _train_and_run(name, tmp_path)
        assert result["modality"] == name and result["output"] in {"亮", "暗"}
        assert 0.0 <= result["confidence"] <= 1.0 and result["attributes"][0]["name"].startswith(f"{name}.")
    finally:
        subprocess.run([*pip, "uninstall", "-y", "-q", f"v22sdk-{name}"], capture_output=True, timeout=300)
    after = subprocess.run([PYTHON, "-c", "from v22sdk import Registry; print(Registry().names('modalities'))"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert f"'{name}'" not in after.stdout
