"""The training data loader reads `v22sdk tokenize --backend ray` shards directly (no Ray needed here:
the shards are written by the same functions the Ray workers call)."""

from __future__ import annotations

import numpy as np
import pytest

from v22sdk.engine.data import load_dataset
from v22sdk.errors import InputError
from v22sdk.scale.shards import tokenize_rows, write_manifest


def _shards(tmp_path, targets=True):
    rows = [
        {"idx": i, "input": text, "modality": "text", "is_file": False, "target": (t if targets else None)}
        for i, (text, t) in enumerate([("你好吗？", "我很好"), ("今天下雨了", "带伞"), ("why not?", "because")])
    ]
    status = tokenize_rows(rows[:2], tmp_path) + tokenize_rows(rows[2:], tmp_path)  # two shards
    write_manifest(tmp_path, status, [])
    return rows


def test_load_dataset_reads_shards_as_they_are(tmp_path):
    from v22sdk import get_registry

    rows = _shards(tmp_path)
    ds = load_dataset(tmp_path)
    assert [e.target for e in ds.examples] == ["我很好", "带伞", "because"]
    text = get_registry().modality("text")
    for row, batch in zip(rows, ds.batches):
        assert batch == text.tokenize(row["input"])  # bit-identical to tokenizing again
    assert len(ds.attr_sets) == 3 and ds.digest == load_dataset(tmp_path).digest
    assert len(load_dataset(tmp_path, sample=2, seed=0).examples) == 2


def test_shards_without_targets_cannot_be_trained_on(tmp_path):
    _shards(tmp_path, targets=False)
    with pytest.raises(InputError, match="no target"):
        load_dataset(tmp_path)


def test_a_tiny_engine_trains_from_shards(tmp_path):
    from v22sdk.engine.config import preset
    from v22sdk.engine.pipeline import train_engine

    (tmp_path / "shards").mkdir()
    _shards(tmp_path / "shards")
    cfg = preset("tiny", epochs=2, seed=0)
    result = train_engine(tmp_path / "shards", cfg, tmp_path / "m.pt", val_frac=0.0, test_frac=0.0, progress=False)
    assert (tmp_path / "m.pt").is_file() and np.isfinite(result["metrics"]["final_loss"])
