"""Distributed training: 2 processes on this machine, started by torch.distributed.run (gloo)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO_TSV = ROOT / "v22sdk" / "engine" / "data" / "demo" / "text.tsv"


def _torchrun(nproc, workdir, out, report, epochs=4):
    env = {**os.environ, "V22SDK_CACHE": str(workdir / "cache"), "PYTHONPATH": str(ROOT)}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nnodes",
        "1",
        "--nproc_per_node",
        str(nproc),
        "-m",
        "v22sdk.scale.ddp",
        str(workdir / "pairs.tsv"),
        "--out",
        str(out),
        "--preset",
        "tiny",
        "--epochs",
        str(epochs),
        "--report",
        str(report),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=workdir)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # two torch.distributed processes: about 17 s
def test_two_processes_train_like_one(tmp_path):
    shutil.copy(DEMO_TSV, tmp_path / "pairs.tsv")
    two = _torchrun(2, tmp_path, tmp_path / "two" / "m.pt", tmp_path / "r2")
    one = _torchrun(1, tmp_path, tmp_path / "one" / "m.pt", tmp_path / "r1")
    assert two["world_size"] == 2 and one["world_size"] == 1
    r0, r1 = (json.loads((tmp_path / f"r2.rank{r}.json").read_text()) for r in (0, 1))
    # every step kept the ranks' parameters bit-identical
    assert r0["params_sha256"] == r1["params_sha256"] and r0["steps"] == r1["steps"]
    # the same number of optimiser steps as one process, and the same loss curve up to the
    # token weighting of the shards (see v22sdk/scale/ddp.py)
    solo = json.loads((tmp_path / "r1.rank0.json").read_text())
    assert r0["steps"] == solo["steps"]
    l2 = [h["loss"] for h in r0["history"]]
    l1 = [h["loss"] for h in solo["history"]]
    assert abs(l2[0] - l1[0]) / l1[0] < 0.01  # first epoch: same batches, same start
    assert l2[-1] < 0.75 * l2[0] and l1[-1] < 0.75 * l1[0]
    assert abs(l2[-1] - l1[-1]) / l1[-1] < 0.2
    # one checkpoint, written by rank 0, holding exactly the ranks' parameters
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == ["m.pt"]
    from v22sdk.engine.checkpoint import load_checkpoint
    from v22sdk.scale.ddp import _params_digest

    model, cfg, vocab, doc = load_checkpoint(tmp_path / "two" / "m.pt")
    assert doc["metrics"]["world_size"] == 2
    assert _params_digest(model) == r0["params_sha256"]


def test_ddp_entry_point_refuses_to_run_outside_torchrun(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "v22sdk.scale.ddp", str(DEMO_TSV)],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")},
    )
    assert p.returncode == 2 and "torchrun" in p.stderr
