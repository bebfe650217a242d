"""Ray Data tokenization and batch inference end to end on a local Ray cluster (loopback)."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'v22sdk[ray]'")
pytest.importorskip("pandas", reason="ray[data] needs pandas")

# A local Ray cluster takes ~10 s to start on 2 cores: run with -m slow (.ci/run does).
pytestmark = pytest.mark.slow

DEMO = Path(__file__).resolve().parents[2] / "v22sdk" / "engine" / "data" / "demo"


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture
def inputs(tmp_path):
    d = tmp_path / "in"
    (d / "sub").mkdir(parents=True)
    for i, wav in enumerate(sorted((DEMO / "audio").glob("*.wav"))[:3]):
        shutil.copy(wav, d / "sub" / f"c{i}.wav")
    (d / "a.txt").write_text("因为下雨，所以我们没有去公园。", encoding="utf-8")
    (d / "b.txt").write_text("Hello, world!", encoding="utf-8")
    (d / "broken.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEnot really")  # a decoder error
    (d / "notes.xyz").write_text("no modality reads this")
    return d


def test_ray_tokenize_shards_equal_single_process_and_report_bad_files(local_ray, inputs, tmp_path):
    from v22sdk.plugins import get_registry
    from v22sdk.scale.ray_jobs import tokenize
    from v22sdk.scale.shards import load_shards

    out = tmp_path / "out"
    summary = tokenize(inputs, out, num_workers=2, shard_size=2, progress=False)
    assert summary["inputs"] == 7 and summary["tokenized"] == 5 and summary["errors"] == 2
    errors = json.loads((out / "errors.json").read_text())
    by_input = {Path(e["input"]).name: e for e in errors}
    assert by_input["notes.xyz"]["stage"] == "resolve" and "no installed modality" in by_input["notes.xyz"]["error"]
    assert by_input["broken.wav"]["stage"] == "tokenize" and "broken.wav" in by_input["broken.wav"]["error"]
    assert len(list(out.glob("shard-*.npz"))) >= 2  # really sharded
    batches, items = load_shards(out)
    reg = get_registry()
    assert [Path(i["source"]).name for i in items] == ["a.txt", "b.txt", "c0.wav", "c1.wav", "c2.wav"]
    for b, it in zip(batches, items):  # bit-identical to the single-process tokenizer
        want = reg.modality(it["modality"]).tokenize_file(it["source"])
        assert b == want and it["tokens"] == len(want)
    with pytest.raises(Exception, match="already holds"):
        tokenize(inputs, out, num_workers=1, progress=False)


def test_ray_tokenize_reads_a_manifest(local_ray, tmp_path):
    from v22sdk.scale.ray_jobs import tokenize
    from v22sdk.scale.shards import load_shards

    man = tmp_path / "m.jsonl"
    shutil.copy(DEMO / "images" / "apple_00.png", tmp_path / "apple.png")
    man.write_text(
        "\n".join(
            [
                json.dumps({"input": "apple.png", "modality": "vision", "target": "苹果"}),
                json.dumps({"input": "你好", "modality": "text", "target": "hi"}),
                "{not json",
                json.dumps({"input": "gone.png", "modality": "vision"}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    summary = tokenize(man, tmp_path / "o", num_workers=2, shard_size=1, progress=False)
    assert (summary["tokenized"], summary["errors"]) == (2, 2)
    batches, items = load_shards(tmp_path / "o")
    assert [i["target"] for i in items] == ["苹果", "hi"] and batches[0].modality == "vision"


def test_ray_batch_inference_matches_the_runner(local_ray, inputs, tmp_path):
    from v22sdk.engine.runner import Runner
    from v22sdk.scale.ray_jobs import run

    summary = run(inputs, tmp_path / "r", num_workers=2, batch_size=2, progress=False)
    assert summary["ran"] == 5 and summary["errors"] == 2
    results = [json.loads(line) for line in (tmp_path / "r" / "results.jsonl").read_text().splitlines()]
    runner = Runner()
    for r in results:
        want = runner.run(r["input"], r["modality"])
        assert r["output"] == want["output"] and np.isclose(r["confidence"], want["confidence"], rtol=1e-5)
    assert [Path(r["input"]).name for r in results] == ["a.txt", "b.txt", "c0.wav", "c1.wav", "c2.wav"]
