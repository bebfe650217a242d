"""The lab's corpora beyond hook 1 and the ``--experiment`` dispatch (hooks 2 and 5, quick mode)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from v22sdk.errors import InputError
from v22sdk.specdec.cli import specdec
from v22sdk.specdec.corpus import ASCII_VOCAB, CharVocab, load_corpus, read_poems
from v22sdk.specdec.errors import SpecDecError
from v22sdk.specdec.experiments import EXPERIMENTS, experiment_of, get

POEMS = Path("/usr/share/games/fortunes/tang300")
needs_poems = pytest.mark.skipif(
    not POEMS.is_file(), reason="Debian fortunes-zh not installed (scripts/ci_services.sh)"
)


def test_char_vocab_round_trip_and_unknowns():
    v = CharVocab(("\n", "a", "月", "。"))
    ids = v.encode("a月\nb。")
    assert ids.tolist() == [1, 2, 0, v.unk, 3] and v.size == 5 and ids.dtype == np.int64
    assert v.decode(ids) == "a月\n\ufffd。"
    assert ASCII_VOCAB.size == 97 and ASCII_VOCAB.unk == 96 and ASCII_VOCAB.digest() != v.digest()
    with pytest.raises(ValueError, match="distinct"):
        CharVocab(("a", "a"))


@needs_poems
def test_tang_song_corpus_splits_whole_poems_and_grows_the_vocabulary():
    c = load_corpus("tang-song-poems")
    info = c.info()
    assert info["package"].startswith("fortunes-zh") and "GPL-3.0" in info["licence"]
    assert 2000 < c.vocab.size < 4000 and c.vocab.chars[:96] == ASCII_VOCAB.chars  # ASCII ids unchanged
    assert c.n_chars > 30_000 and len(c.train) > 10 * len(c.test)
    assert float(np.mean(c.train == c.vocab.unk)) == 0.0  # the vocabulary is the train split's
    assert 0 < info["unk_share_test"] < 0.1
    poems = read_poems()
    assert len(poems) > 400 and "\x1b" not in "".join(poems) and not any(p.startswith("%") for p in poems)
    assert c.vocab.decode(c.test).startswith(poems[19].split("\n")[0] + "\n")  # poem 19: the first test poem
    assert load_corpus("tang-song-poems").sha256 == c.sha256


def test_missing_poems_are_a_typed_error(tmp_path):
    with pytest.raises(InputError, match="fortunes-zh"):
        read_poems(tmp_path)


def test_registry_names_every_experiment_and_reads_results_files():
    assert set(EXPERIMENTS) >= {"hook1", "hook2", "hook5"}
    for exp in EXPERIMENTS.values():
        mod = exp.load()
        for attr in ("FULL", "QUICK", "run_experiment", "total_ticks", "render_report"):
            assert hasattr(mod, attr), (exp.name, attr)
        assert mod.total_ticks(mod.QUICK) > 0 and {"corpora", "seeds", "threads"} <= set(vars(mod.FULL))
    assert experiment_of({"data": {"experiment": "hook2"}}) == "hook2" and experiment_of({"corpora": {}}) == "hook1"
    with pytest.raises(SpecDecError, match="unknown experiment"):
        get("hook9")


def _run_quick(tmp_path, experiment: str, corpus: str) -> dict:
    out = CliRunner().invoke(
        specdec, ["run", "--experiment", experiment, "--quick", "--corpus", corpus, "--out", str(tmp_path)]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["provenance"]["command"] and doc["data"]["experiment"] == experiment
    rep = CliRunner().invoke(specdec, ["report", "--out", str(tmp_path)])
    assert rep.exit_code == 0 and "Verdict" in rep.output
    return doc


@pytest.mark.slow  # about 7 s on 2 cores: the default run must stay under 10 minutes in CI
def test_hook2_quick_run(tmp_path):
    doc = _run_quick(tmp_path, "hook2", "pydoc-topics")
    r = doc["data"]["corpora"]["pydoc-topics"]
    for s in r["seeds"]:
        for k in ("T=0", "T=1"):
            assert all(0.0 <= v <= 1.0 for v in s[k]["auroc"].values())
            sched = s[k]["schedulers"]
            # every scheduler really ran; its outcome is the fixed round cut where its rule says
            assert all(x["mismatched_rounds"] == 0 for x in sched.values())
            assert sched["fixed"]["draft_steps"] == doc["data"]["config"]["gamma"]
    assert r["costs_ms"]["attribute_ms"] > 0 and r["attribute_plugin"]["lookups"] >= r["attribute_plugin"]["calls"]
    assert {"auroc", "schedulers", "scheduler_diffs", "costs", "slots"} <= set(doc["tables"])


@pytest.mark.slow  # about 8 s on 2 cores: the default run must stay under 10 minutes in CI
def test_hook5_quick_run(tmp_path):
    doc = _run_quick(tmp_path, "hook5", "stdlib-source")
    for s in doc["data"]["corpora"]["stdlib-source"]["seeds"]:
        assert s["arms"]["zero-additive"]["step0"] == s["before"]  # exactly the trained draft at step 0
        assert abs(s["arms"]["rfc-additive"]["step0"]["T=1"] - s["before"]["T=1"]) < 0.05
        assert set(s["arms"]) == {"control", "rfc-additive", "additive", "zero-additive", "concat"}
    assert {"tau", "criterion_cells", "references", "curve"} <= set(doc["tables"])


@pytest.mark.slow  # about 7 s on 2 cores: the default run must stay under 10 minutes in CI
def test_a_run_stopped_part_way_leaves_its_finished_seeds(tmp_path):
    """Results are written after every seed from the second on; a stopped run keeps them, marked partial."""
    from dataclasses import replace

    from v22sdk.specdec import hook5

    class Stop(Exception):
        pass

    def say(text):
        if "seed 2:" in text:
            raise Stop(text)

    cfg = replace(hook5.QUICK, corpora=("stdlib-source",), seeds=3)
    with pytest.raises(Stop):
        hook5.run_experiment(cfg, tmp_path, say=say)
    doc = json.loads((tmp_path / "results.json").read_text())
    r = doc["data"]["corpora"]["stdlib-source"]
    assert [s["seed"] for s in r["seeds"]] == [0, 1]
    assert r["comparisons"] and "partial run" in doc["data"]["verdict"]["text"]
    assert doc["data"]["cpu_s"] > 0 and "(CPU " in hook5.render_report(doc)  # CPU time: load-independent


@pytest.mark.slow
@needs_poems
def test_hook2_quick_run_on_the_chinese_corpus(tmp_path):
    doc = _run_quick(tmp_path, "hook2", "tang-song-poems")
    assert doc["data"]["corpora"]["tang-song-poems"]["info"]["vocab_size"] > 2000


def _fake_hook2(auc_gain: dict[str, float], sched_gain: float = 0.0, n_seeds: int = 5) -> dict:
    """A hook-2 data dict whose AUROC gain per cell is ``auc_gain[cell]`` (noise sd 0.005)."""
    from v22sdk.specdec.hook2 import SCHEDULER_BASELINES
    from v22sdk.specdec.stats import paired_diff

    rng = np.random.default_rng(0)
    corpora: dict = {}
    for cell, g in auc_gain.items():
        name, k = cell.split("/")
        a = 0.7 + rng.normal(0, 0.01, n_seeds)
        comp = {"auroc both-signals": paired_diff(a + g + rng.normal(0, 0.005, n_seeds), a).as_dict()}
        for base in SCHEDULER_BASELINES:
            b = 1.0 + rng.normal(0, 0.01, n_seeds)
            comp[f"tokens_per_ms logistic-attributes-{base}"] = paired_diff(
                b * (1 + sched_gain) + rng.normal(0, 0.002, n_seeds), b
            ).as_dict()
        corpora.setdefault(name, {"comparisons": {}, "seeds": [{}] * n_seeds})["comparisons"][k] = comp
    return {"corpora": corpora}


def test_hook2_verdict_applies_the_pre_registered_criterion():
    from v22sdk.specdec.hook2 import CRITERION, verdict

    cells = ["a/T=0", "a/T=1", "b/T=0", "b/T=1"]
    assert CRITERION["primary"]["min_gain"] == 0.02 and CRITERION["seeds"] == 5
    v = verdict(_fake_hook2(dict.fromkeys(cells, 0.05), sched_gain=0.05))
    assert v["text"].startswith("hook (2) SUPPORTED") and "(criterion met)" in v["text"]
    v = verdict(_fake_hook2({**dict.fromkeys(cells, 0.05), "b/T=1": 0.0}))
    assert v["text"].startswith("INCONSISTENT") and not v["cells"]["b/T=1"]["passes"]
    v = verdict(_fake_hook2(dict.fromkeys(cells, 0.01)))  # detected, but below the bar
    assert v["text"].startswith("NOT DETECTED") and "a smaller gain" in v["text"] and "(criterion not met)" in v["text"]
    v = verdict(_fake_hook2({"a/T=0": 0.05, "a/T=1": 0.05}))  # one corpus only: never SUPPORTED
    assert v["text"].startswith("hook (2) PASSING SO FAR") and "partial run" in v["text"]


def _fake_hook5(step0: float, after: float, n_seeds: int = 5) -> dict:
    """A hook-5 data dict where every method's step-0 and after-budget relative change is given."""
    from v22sdk.specdec.expansion import METHODS
    from v22sdk.specdec.stats import paired_diff

    rng = np.random.default_rng(1)
    corpora: dict = {}
    for name in ("a", "b"):
        for k in ("T=0", "T=1"):
            before = 4.8 + rng.normal(0, 0.05, n_seeds)
            control = before * 1.005
            comp = {}
            for m in METHODS:
                comp[f"step0 {m}-before"] = paired_diff(
                    before * (1 + step0) + rng.normal(0, 0.003, n_seeds), before
                ).as_dict()
                comp[f"after {m}-control"] = paired_diff(
                    control * (1 + after) + rng.normal(0, 0.003, n_seeds), control
                ).as_dict()
            corpora.setdefault(name, {"comparisons": {}, "seeds": [{}] * n_seeds})["comparisons"][k] = comp
    return {"corpora": corpora}


def test_hook5_verdict_applies_the_pre_registered_criterion():
    from v22sdk.specdec.hook5 import CRITERION, verdict

    assert CRITERION["cold_start_safe"]["max_loss"] == 0.01 and CRITERION["worth_adding"]["min_gain"] == 0.01
    assert verdict(_fake_hook5(0.0, 0.03))["text"].startswith("hook (5) SUPPORTED")
    v = verdict(_fake_hook5(0.0, 0.0))
    assert v["text"].startswith("NOT SUPPORTED: the RFC injection is cold-start-safe") and "not excluded" in v["text"]
    v = verdict(_fake_hook5(-0.05, 0.03))  # a 5% drop at step 0 is not cold-start-safe
    assert "not cold-start-safe in 4 of 4" in v["text"] and not v["cells"]["concat"]["a/T=0"]["safe"]
    assert not verdict(_fake_hook5(0.0, 0.005))["cells"]["rfc-additive"]["b/T=1"]["worth"]  # below +1%


def _part(tmp_path, src: Path, corpus: str, **config) -> Path:
    """A copy of a committed part with its one corpus renamed (and config fields changed)."""
    doc = json.loads(src.read_text())
    data = doc["data"]
    (old,) = list(data["corpora"])
    data["corpora"] = {corpus: data["corpora"][old]}
    data["config"].update(corpora=[corpus], **config)
    out = tmp_path / f"{corpus}.json"
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("experiment", ["hook2", "hook5"])
def test_combine_joins_per_corpus_runs_and_reapplies_the_criterion(tmp_path, experiment, capsys):
    src = Path(__file__).resolve().parents[2] / "results" / "specdec" / experiment / "parts" / "pydoc-topics.json"
    mod = get(experiment).load()
    one = json.loads(src.read_text())
    a, b = _part(tmp_path, src, "pydoc-topics"), _part(tmp_path, src, "stdlib-source")
    # through the main CLI: invoking the group standalone would cache click's help option without "-h"
    # on the command object, and tests/core/test_docs.py would then see another --help text
    from v22sdk.cli import cli

    out = CliRunner().invoke(cli, ["specdec", "combine", str(a), str(b), "--out", str(tmp_path / "joined")])
    assert out.exit_code == 0, out.output
    doc = json.loads((tmp_path / "joined" / "results.json").read_text())
    data = doc["data"]
    assert list(data["corpora"]) == ["pydoc-topics", "stdlib-source"] == data["config"]["corpora"]
    assert [p["provenance"]["commit"] for p in data["parts"]] == [one["provenance"]["commit"]] * 2
    assert data["verdict"] == mod.verdict(data) and doc["criterion"] == mod.CRITERION
    cells = data["verdict"]["cells"]
    if experiment == "hook2":  # each corpus keeps its own cells, as measured
        assert (
            cells["stdlib-source/T=0"]
            == cells["pydoc-topics/T=0"]
            == one["data"]["verdict"]["cells"]["pydoc-topics/T=0"]
        )
    else:
        assert (
            cells["rfc-additive"]["stdlib-source/T=1"]
            == one["data"]["verdict"]["cells"]["rfc-additive"]["pydoc-topics/T=1"]
        )
    # parts that cannot be joined: a corpus twice, another configuration, another criterion, one part
    bad = [
        ([str(a), str(a)], "already in another part"),
        ([str(a), str(_part(tmp_path, src, "stdlib-source", gamma=3))], "configuration differs .* gamma"),
        ([str(a)], "at least two"),
        ([str(a), str(tmp_path)], "is a directory"),
        ([str(a), "/dev/null"], "not a regular file"),
    ]
    crit = json.loads(b.read_text())
    crit["criterion"]["seeds"] = 3
    (tmp_path / "crit.json").write_text(json.dumps(crit))
    bad.append(([str(a), str(tmp_path / "crit.json")], "another criterion"))
    for parts, msg in bad:
        with pytest.raises(SpecDecError, match=msg):
            from v22sdk.specdec.experiments import combine

            combine(parts, tmp_path / "x")
    from v22sdk.cli import main

    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["specdec", "combine", str(a), str(tmp_path / "missing.json"), "--out", str(tmp_path / "y")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "missing.json: not found" in err
