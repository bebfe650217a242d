"""Hostile input to ``v22sdk train / eval / run``: every bad value is a typed error naming the
input, raised before any work is done; nothing is silently wrong and no output is destroyed."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import types

import pytest
from click.testing import CliRunner

from v22sdk import hookimpl
from v22sdk.engine import pipeline
from v22sdk.engine.cli import eval_, run, train
from v22sdk.engine.config import ConfigError, EngineConfig, preset
from v22sdk.engine.data import read_examples
from v22sdk.engine.runner import format_result
from v22sdk.errors import CheckpointError, InputError, OutputError, UnknownNameError

TRAIN = ["--preset", "tiny", "--epochs", "1", "--no-progress", "--set", "batch_size=4"]


@pytest.fixture
def no_training(monkeypatch):
    """Training must not start: validation comes first."""

    def refuse(*a, **k):
        raise AssertionError("training started before the input was validated")

    monkeypatch.setattr(pipeline, "train_engine", refuse)


def _train(cli, data, out, *extra):
    return cli.invoke(train, [str(data), *TRAIN, "-o", str(out), *extra])


# -- 1. every EngineConfig field is range-checked; --set names the bad pair -------------------
@pytest.mark.parametrize(
    "pair, words",
    [
        ("max_len=0", "max_len must be an integer ≥ 1"),
        ("max_len=-3", "max_len must be an integer ≥ 1"),
        ("batch_size=0", "batch_size must be an integer ≥ 1"),
        ("memory_capacity=0", "memory_capacity"),
        ("out_positions=0", "out_positions must be an integer ≥ 2"),
        ("lr=-1", "lr must be > 0"),
        ("lr=nan", "lr must be a finite number"),
        ("lr=inf", "lr must be a finite number"),
        ("spike_floor=-1", "spike_floor must be > 0"),
        ("w_d=-0.5", "w_d must be ≥ 0"),
        ("p3l_groups=[]", "p3l_groups must be a non-empty list"),
        ('lr_mult={"p7": -1}', "lr_mult must map"),
        ("p7_head_dim=8", "p7_heads × p7_head_dim must be 256"),
        ("engine=foo", "has its own option: use --engine"),
        ("preset=nonsense", "has its own option: use --preset"),
        ("seed=3", "has its own option: use --seed"),
        ("epochs=-5", "has its own option: use --epochs"),
    ],
)
def test_bad_set_values_are_input_errors_naming_the_pair(registry, text_manifest, tmp_path, no_training, pair, words):
    r = CliRunner().invoke(train, [str(text_manifest), "--preset", "tiny", "--set", pair, "-o", str(tmp_path / "m.pt")])
    assert isinstance(r.exception, InputError), r.output
    assert r.exception.source == f"--set {pair}" and words in r.exception.problem
    assert not (tmp_path / "m.pt").exists()


def test_config_checks_every_construction():
    with pytest.raises(ConfigError, match="max_len"):
        preset("tiny", max_len=0)
    with pytest.raises(ValueError, match="unknown"):  # ConfigError is an InputError, a ValueError
        preset("nonsense")
    with pytest.raises(ConfigError, match="seed"):
        EngineConfig(seed=-1)
    assert preset("tiny", p3l_groups=[4, 4]).p3l_groups == (4, 4)  # JSON lists become the tuple
    bad = preset("tiny").to_dict()
    bad["batch_size"] = 0  # a tampered checkpoint config
    with pytest.raises(CheckpointError, match="batch_size"):
        EngineConfig.from_dict(bad)


# -- 2. option ranges ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, option",
    [
        (["--epochs", "0"], "--epochs"),
        (["--epochs", "-1"], "--epochs"),
        (["--sample", "-3"], "--sample"),
        (["--val-frac", "nan"], "--val-frac"),
        (["--val-frac", "-0.1"], "--val-frac"),
        (["--test-frac", "1.5"], "--test-frac"),
        (["--seed", "-1"], "--seed"),
        (["--threads", "-2"], "--threads"),
        (["--nproc", "0"], "--nproc"),
    ],
)
def test_train_option_ranges(registry, text_manifest, no_training, args, option):
    r = CliRunner().invoke(train, [str(text_manifest), "--preset", "tiny", *args])
    assert r.exit_code == 2 and f"Invalid value for '{option}'" in r.output


def test_fractions_must_leave_a_train_split(registry, text_manifest, no_training):
    r = CliRunner().invoke(train, [str(text_manifest), "--val-frac", "0.5", "--test-frac", "0.5"])
    assert isinstance(r.exception, InputError) and "sum < 1" in str(r.exception)


def test_end_to_end_exit_codes_and_one_line(text_manifest, tmp_path):
    """Through ``v22sdk.cli.main``: exit 2 and one line on stderr, never a signal or 'internal error'."""
    code = "import sys; from v22sdk.cli import main; sys.argv[0] = 'v22sdk'; main()"
    env = {**os.environ, "V22SDK_CACHE": str(tmp_path / "cache")}
    for args, named in (
        (["--set", "max_len=0"], "error: --set max_len=0: max_len must be"),
        (["--epochs", "0"], "error: Invalid value for '--epochs'"),
    ):
        p = subprocess.run(
            [
                sys.executable,
                "-c",
                code,
                "train",
                str(text_manifest),
                "--preset",
                "tiny",
                *args,
                "-o",
                str(tmp_path / "m.pt"),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert p.returncode == 2, p.stderr  # was -8 (SIGFPE) for max_len=0
        assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith(named), p.stderr


# -- 3. output paths -------------------------------------------------------------------------------
def test_outputs_are_checked_before_training(registry, text_manifest, tmp_path, no_training):
    cli = CliRunner()
    folder = tmp_path / "somefolder"
    folder.mkdir()
    r = _train(cli, text_manifest, folder)
    assert isinstance(r.exception, InputError) and "is a folder" in str(r.exception)
    assert r.exception.source.startswith("--out")
    assert sorted(set(os.listdir(tmp_path)) - {"cache"}) == ["pairs.jsonl", "somefolder"]  # no somefolder.tmp
    for extra, words in (
        (["--log", str(folder)], "is a folder"),
        (["--plot", str(tmp_path / "loss.jpg")], ".png"),
        (["--plot", str(tmp_path / "nodir" / "l.png")], "does not exist"),
        (["--log", str(tmp_path / "m.pt")], "is also --out"),
        (["--log", str(text_manifest)], "is also DATA"),
    ):
        r = _train(cli, text_manifest, tmp_path / "m.pt", *extra)
        assert isinstance(r.exception, InputError) and words in str(r.exception), (extra, r.exception)
    r = _train(cli, text_manifest, tmp_path / "nodir" / "m.pt")
    assert isinstance(r.exception, InputError) and "does not exist" in str(r.exception)


def test_a_device_node_is_written_through_never_replaced(registry, text_manifest, tmp_path):
    node = tmp_path / "full"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 7))  # our own /dev/full: every write fails ENOSPC
    except (PermissionError, OSError):
        pytest.skip("needs permission to create a device node")
    r = _train(CliRunner(), text_manifest, node)
    assert isinstance(r.exception, OutputError) and str(node) in str(r.exception)
    assert stat.S_ISCHR(node.stat().st_mode)  # still the device, not a regular file
    assert sorted(set(os.listdir(tmp_path)) - {"cache"}) == ["full", "pairs.jsonl"]  # no temporary file left


def test_plot_formats_and_atomic_checkpoint(registry, text_manifest, tmp_path):
    out, svg = tmp_path / "m.pt", tmp_path / "loss.svg"
    out.write_bytes(b"old")
    r = _train(CliRunner(), text_manifest, out, "--plot", str(svg))
    assert r.exit_code == 0, r.output
    assert svg.read_text().lstrip().startswith("<?xml") and out.stat().st_size > 1000
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


# -- 4. a checkpoint refuses a modality it was not trained on ---------------------------------------
@pytest.fixture
def text_only(registry, text_manifest, tmp_path):
    out = tmp_path / "textonly.pt"
    r = _train(CliRunner(), text_manifest, out, "--val-frac", "0", "--test-frac", "0")
    assert r.exit_code == 0, r.output
    return out


def test_run_and_eval_refuse_an_untrained_modality(text_only, mixed_manifest, tmp_path):
    cli = CliRunner()
    r = cli.invoke(run, [str(tmp_path / "b0.blip"), "-c", str(text_only), "--no-memory"])
    assert isinstance(r.exception, InputError)
    assert "is blip input" in str(r.exception) and "trained on toytext only" in str(r.exception)
    r = cli.invoke(eval_, [str(text_only), str(mixed_manifest)])
    assert isinstance(r.exception, InputError)
    assert "holds blip input (6 of 12 examples)" in str(r.exception) and "toytext" in str(r.exception)
    r = cli.invoke(run, ["你好吗?", "-m", "toytext", "-c", str(text_only), "--no-memory"])  # its own modality runs
    assert r.exit_code == 0 and "confidence" in r.output


# -- 5. truncation is said in the human output ------------------------------------------------------
def test_run_says_when_the_engine_read_only_the_first_tokens(text_only):
    r = CliRunner().invoke(run, ["你好" * 20, "-m", "toytext", "-c", str(text_only), "--no-memory"])
    assert r.exit_code == 0, r.output
    assert "40 tokens, the engine read the first 16" in r.output  # tiny: max_len 16
    short = {
        "output": "x",
        "confidence": 0.5,
        "modality": "text",
        "tokens": 3,
        "truncated_to": 3,
        "engine": "v22",
        "attributes": [],
    }
    assert "3 token(s), engine" in format_result(short) and "first" not in format_result(short)


# -- 6. integer options of eval / run --------------------------------------------------------------
@pytest.mark.parametrize(
    "command, args, option",
    [
        (run, ["x", "--top", "-3"], "--top"),
        (run, ["x", "--workers", "0"], "--workers"),
        (eval_, ["m.pt", "--threads", "-1"], "--threads"),
    ],
)
def test_run_and_eval_option_ranges(registry, command, args, option):
    r = CliRunner().invoke(command, args)
    assert r.exit_code == 2 and f"Invalid value for '{option}'" in r.output


# -- 7. folders: hidden files skipped; --modality chooses between modalities of one extension -------
def _blip_folder(tmp_path):
    root = tmp_path / "blips"
    for label, pitches in (("低", (-0.8, -0.7, -0.75)), ("高", (0.8, 0.7, 0.75))):
        (root / label).mkdir(parents=True)
        for i, p in enumerate(pitches):
            (root / label / f"{i}.blip").write_text(json.dumps({"pitch": p}))
    (root / ".DS_Store").write_bytes(b"\0\1junk")
    (root / "低" / ".DS_Store").write_bytes(b"\0\1junk")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.blip").write_text(json.dumps({"pitch": 0.1}))
    return root


def test_folder_data_sets_skip_hidden_entries(registry, tmp_path):
    examples = read_examples(_blip_folder(tmp_path), registry)
    assert len(examples) == 6 and {e.target for e in examples} == {"低", "高"}
    assert all(e.modality == "blip" for e in examples)


def test_train_modality_option_settles_an_ambiguous_extension(registry, tmp_path):
    blip2 = type("Blip2", (registry.get_class("modalities", "blip"),), {"name": "blip2"})  # reads .blip too
    registry.register(
        types.SimpleNamespace(__name__="blip2_plugin", v22sdk_register_modalities=hookimpl(lambda: [blip2])), "blip2"
    )
    folder = _blip_folder(tmp_path)
    with pytest.raises(UnknownNameError, match="several modalities"):
        read_examples(folder, registry)
    assert {e.modality for e in read_examples(folder, registry, modality="blip2")} == {"blip2"}
    cli, out = CliRunner(), tmp_path / "b.pt"
    r = _train(cli, folder, out, "--modality", "nope")
    assert isinstance(r.exception, UnknownNameError)
    r = _train(cli, folder, out, "--modality", "blip2")
    assert r.exit_code == 0, r.output
    r = cli.invoke(eval_, [str(out), "--split", "all", "--json"])  # eval re-reads the data as it was trained
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["metrics"]["blip2"]["n"] == 6


# -- 8. an empty split is refused, naming the checkpoint -------------------------------------------
def test_eval_of_an_empty_test_split_is_refused(text_only):
    r = CliRunner().invoke(eval_, [str(text_only)])
    assert isinstance(r.exception, InputError) and r.exception.source == str(text_only)
    assert "test split" in str(r.exception) and "is empty" in str(r.exception)
    assert "10 train, 0 val, 0 test" in str(r.exception)
    r = CliRunner().invoke(eval_, [str(text_only), "--split", "all", "--json"])  # all of its data still works
    assert r.exit_code == 0 and json.loads(r.output)["metrics"]["all"]["n"] == 10


def test_train_reports_held_out_targets_no_model_could_match(tmp_path):
    """A held-out target with a character no training target has can only decode as <unk>; the
    metrics count such examples, and those longer than the decoder, so figures are read honestly."""
    import types

    from v22sdk.engine.data import Example
    from v22sdk.engine.pipeline import unreachable_targets
    from v22sdk.engine.vocab import OutputVocab

    examples = [
        Example(text, "text", target, False)
        for text, target in (("a", "好"), ("b", "好好"), ("c", "坏"), ("d", "好" * 20), ("a", "好"))
    ]
    from v22sdk.engine.data import content_digest

    ds = types.SimpleNamespace(examples=examples, contents=[content_digest(ex) for ex in examples])
    vocab = OutputVocab.build(["好", "好好"], use_text_plugin=False)
    got = unreachable_targets(ds, {"train": [0, 1], "val": [2], "test": [3, 4]}, vocab, out_positions=8)
    assert got == {
        "val": {"n": 1, "unseen_chars": 1, "truncated": 0, "in_train": 0},
        "test": {"n": 2, "unseen_chars": 0, "truncated": 1, "in_train": 1},
    }  # "a" again
