"""The |cos| figures of docs/text-modality.md (results/text/embedding-cosines.json) are what the
embedding gives today: its vectors are bit-identical everywhere, so the file must match exactly."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_committed_cosine_figures_are_todays():
    spec = importlib.util.spec_from_file_location(
        "measure_text_embedding", ROOT / "scripts" / "measure_text_embedding.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    committed = json.loads((ROOT / "results" / "text" / "embedding-cosines.json").read_text(encoding="utf-8"))
    now = mod.measure()
    assert committed["data"] == now
    assert now["pairs"] == now["code_points"] * (now["code_points"] - 1) // 2
    assert abs(now["mean"] - now["independent_mean"]) < 0.002  # near-orthogonal, as for random directions
