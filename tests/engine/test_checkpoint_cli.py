"""Checkpoints (safe loading, config mismatch) and the train / eval / run commands."""

import json
import os
import pickle
import sys

import pytest
import torch
from click.testing import CliRunner

from v22sdk.engine.checkpoint import load_checkpoint, read_checkpoint, save_checkpoint
from v22sdk.engine.cli import eval_, run, train
from v22sdk.engine.config import preset
from v22sdk.engine.pipeline import train_engine
from v22sdk.errors import CheckpointError, InputError


@pytest.fixture
def trained(registry, mixed_manifest, tmp_path):
    out = tmp_path / "m.pt"
    res = train_engine(
        mixed_manifest, preset("tiny", epochs=3, batch_size=4), out, registry=registry, use_text_plugin=False
    )
    return out, res


def test_round_trip_gives_identical_outputs(trained):
    out, res = trained
    model, cfg, vocab, doc = load_checkpoint(out)
    assert cfg == res["trainer"].cfg and vocab.chars == res["vocab"].chars
    assert doc["split"] == res["split"] and doc["metrics"]["test"]["all"]["n"] == len(res["split"]["test"])
    assert len(model.memory) == len(res["trainer"].model.memory)
    x = torch.zeros(2, 4, 640)
    x[..., 0] = 1.0
    mask = torch.ones(2, 4, dtype=torch.bool)
    ref = res["trainer"].model.eval()
    ref.stage_e.write_enabled = model.stage_e.write_enabled = False
    with torch.no_grad():
        assert torch.equal(model(x, mask)["logits"], ref(x, mask)["logits"])


def test_other_config_is_refused_clearly(trained, tmp_path):
    out, _ = trained
    with pytest.raises(CheckpointError, match="another configuration.*out_positions"):
        load_checkpoint(out, expect=preset("tiny", out_positions=9))
    doc = read_checkpoint(out)
    doc["config"]["out_positions"] = 9  # config and weights now disagree
    bad = tmp_path / "bad.pt"
    torch.save(doc, bad)
    with pytest.raises(CheckpointError, match="does not fit"):
        load_checkpoint(bad)


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_loading_never_unpickles_objects(tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    path = tmp_path / "evil.pt"
    torch.save({"format": "v22sdk.checkpoint", "x": Evil()}, path)  # a well-formed zip, hostile pickle
    with pytest.raises(CheckpointError, match="cannot be read safely"):
        read_checkpoint(path)
    assert not marker.exists()
    legacy = tmp_path / "legacy.pt"  # a bare pickle stream is not even opened
    with open(legacy, "wb") as fh:
        pickle.dump({"format": "v22sdk.checkpoint", "x": Evil()}, fh)
    with pytest.raises(CheckpointError, match="not a complete torch.save zip archive"):
        read_checkpoint(legacy)
    assert not marker.exists()
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError):
        read_checkpoint(tmp_path / "junk.pt")
    with pytest.raises(CheckpointError, match="does not exist"):
        read_checkpoint(tmp_path / "missing.pt")


def test_cli_train_eval_run(registry, mixed_manifest, tmp_path):
    cli = CliRunner()
    ckpt, log, png = tmp_path / "c.pt", tmp_path / "log.jsonl", tmp_path / "loss.png"
    r = cli.invoke(
        train,
        [
            str(mixed_manifest),
            "--preset",
            "tiny",
            "--epochs",
            "3",
            "-o",
            str(ckpt),
            "--log",
            str(log),
            "--plot",
            str(png),
            "--set",
            "batch_size=4",
            "--no-progress",
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    assert "parameters" in r.output and ckpt.is_file() and png.stat().st_size > 1000
    assert len(log.read_text().splitlines()) == 3
    r = cli.invoke(eval_, [str(ckpt), "--json"], catch_exceptions=False)
    doc = json.loads(r.output)
    assert doc["split"] == "test" and set(doc["metrics"]) >= {"all"}
    blip = tmp_path / "b0.blip"
    r = cli.invoke(run, [str(blip), "-c", str(ckpt), "--json"], catch_exceptions=False)
    res = json.loads(r.output)
    assert res["modality"] == "blip" and 0 <= res["confidence"] <= 1
    assert res["attributes"][0]["name"] == "blip.pitch" and res["attributes"][0]["value"] == pytest.approx(-0.8)
    r = cli.invoke(run, ["你好吗?", "-m", "toytext", "-c", str(ckpt)], catch_exceptions=False)
    assert "confidence" in r.output and "toy.mood.question" in r.output


def _damage(src, dst, *, where: str) -> None:
    """Copy a checkpoint, flipping bytes inside its largest tensor's data or truncating it."""
    import zipfile

    data = bytearray(src.read_bytes())
    if where == "truncate":
        dst.write_bytes(data[: len(data) // 2])
        return
    with zipfile.ZipFile(src) as archive:
        entry = max(archive.infolist(), key=lambda i: i.file_size)
    start = entry.header_offset + 100  # past the local header, inside the stored tensor bytes
    for k in range(8):
        data[start + 37 * k] ^= 0x40
    dst.write_bytes(data)


@pytest.mark.parametrize("where", ["weights", "truncate"])
def test_a_damaged_checkpoint_is_refused_not_loaded(trained, tmp_path, where):
    out, _ = trained
    bad = tmp_path / "damaged.pt"
    _damage(out, bad, where=where)
    message = "fails its CRC-32 check" if where == "weights" else "not a complete torch.save zip archive"
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(bad)
    r = CliRunner().invoke(run, ["x", "-c", str(bad)])
    assert isinstance(r.exception, CheckpointError) and "damaged.pt" in str(r.exception)


def test_cli_typed_errors(registry, mixed_manifest, tmp_path):
    cli = CliRunner()
    r = cli.invoke(train, [str(mixed_manifest), "--set", "nonsense=1"])
    assert isinstance(r.exception, InputError)
    r = cli.invoke(run, ["x", "-c", str(tmp_path / "none.pt")])
    assert isinstance(r.exception, CheckpointError)
    r = cli.invoke(run, ["missing.blip", "-m", "blip", "-c", str(tmp_path / "none.pt")])
    assert isinstance(r.exception, CheckpointError)


def test_run_refuses_a_missing_file(trained):
    out, _ = trained
    cli = CliRunner()
    r = cli.invoke(run, ["missing.blip", "-c", str(out)])
    assert isinstance(r.exception, InputError) and "no such file" in str(r.exception)
    r = cli.invoke(run, ["missing.blip", "-m", "blip", "-c", str(out)])
    assert isinstance(r.exception, InputError)


def test_run_refuses_a_folder_unless_told_it_is_text(trained, tmp_path):
    out, _ = trained
    folder = tmp_path / "inputs"
    folder.mkdir()
    r = CliRunner().invoke(run, [str(folder), "-c", str(out), "--no-memory"])
    assert isinstance(r.exception, InputError) and "is a folder" in str(r.exception)
    assert "--backend ray" in str(r.exception)


def test_save_checkpoint_is_atomic(trained, tmp_path):
    out, res = trained
    t = res["trainer"]
    path = save_checkpoint(tmp_path / "x.pt", t.model, t.cfg, res["vocab"])
    assert path.is_file() and not (tmp_path / "x.pt.tmp").exists()


def test_float16_storage_halves_the_file_and_loads_as_float32(trained, tmp_path):
    out, res = trained
    t = res["trainer"]
    half = save_checkpoint(tmp_path / "h.pt", t.model, t.cfg, res["vocab"], storage="float16")
    assert half.stat().st_size < 0.6 * out.stat().st_size
    model, _, vocab, doc = load_checkpoint(half)
    assert doc["storage"] == "float16" and doc["state"]["vocab_emb"].dtype == torch.float32
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert torch.equal(model.vocab_emb, t.model.vocab_emb)
    w = dict(t.model.named_parameters())["p6.heads"]
    assert torch.allclose(dict(model.named_parameters())["p6.heads"], w, atol=1e-3)


_BLAS_PROBE = """
import json, threadpoolctl, numpy, scipy.linalg
try:
    import faiss  # a wheel's OpenMP-threaded OpenBLAS, when installed
except ImportError:
    pass
from v22sdk.engine.cli import _openblas_one_thread
with threadpoolctl.threadpool_limits(2, user_api="blas"):
    before = [(i["filepath"], i["num_threads"]) for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openblas"]
    _openblas_one_thread()
    after = [(i["filepath"], i["num_threads"]) for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openblas"]
print(json.dumps({"before": before, "after": after}))
"""


def test_run_sets_numpy_blas_to_one_thread():
    """``v22sdk run`` tells every already-loaded OpenBLAS (numpy's, scipy's, faiss's) to use one thread
    (spinning BLAS threads made a tokenizer's small QR 20–200× slower on the shared machine).

    Checked in a fresh process: in the test process, other tests' threads (a tokenizer restoring
    its caller's BLAS count on leaving :func:`~v22sdk.blas.single_blas_thread`) may set a count
    between the call and the check."""
    import subprocess

    pytest.importorskip("threadpoolctl")
    if sys.platform != "linux":
        pytest.skip("the fallback reads /proc/self/maps")
    r = subprocess.run(
        [sys.executable, "-c", _BLAS_PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"},
    )
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    if not got["before"] or any(n != 2 for _, n in got["before"]):
        pytest.skip(f"no OpenBLAS with two threads to limit here: {got['before']}")
    assert all(n == 1 for _, n in got["after"]), got["after"]


@pytest.mark.slow
def test_run_imports_only_what_its_input_needs():
    """A cold ``v22sdk run`` on a text imports no image, sound or plotting library, nor rich."""
    import subprocess
    import sys

    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT
    from v22sdk.plugins import Registry

    if not DEFAULT_CHECKPOINT.is_file() or "text" not in Registry().names("modalities"):
        pytest.skip("needs the default checkpoint and the text plugin")
    code = (
        "import sys\nfrom v22sdk.engine.cli import run\n"
        "run(['--modality', 'text', '你好吗？', '--json'], standalone_mode=False)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(eval(out.strip().splitlines()[-1]))  # a list literal we printed ourselves
    assert "v22sdk_text" in loaded  # the check sees the text tokenizer's own modules (jieba itself is no
    # longer imported: its dictionary is read from an index, issue 21)
    assert not loaded & {"cv2", "scipy", "librosa", "soundfile", "matplotlib", "rich"}


def test_a_plugin_edit_keeps_the_recorded_split_but_a_data_edit_does_not(
    trained, registry, mixed_manifest, monkeypatch
):
    from v22sdk.engine import data as data_module
    from v22sdk.engine.pipeline import evaluate_checkpoint

    out, _ = trained
    before = evaluate_checkpoint(out)["metrics"]
    data_module.code_digest.cache_clear()
    monkeypatch.setattr(data_module, "code_digest", lambda cls: "the tokenizer was edited")
    assert evaluate_checkpoint(out)["metrics"] == before  # token cache key changed, identity did not
    lines = mixed_manifest.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"target": "', '"target": "X', 1)  # one target edited
    mixed_manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CheckpointError, match="changed since checkpoint"):
        evaluate_checkpoint(out)
