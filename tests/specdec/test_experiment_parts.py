"""Models, metrics, statistics, corpus and CLI of the speculative-decoding lab (fast, seeded)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from v22sdk.errors import InputError
from v22sdk.specdec.cli import specdec
from v22sdk.specdec.corpus import UNK, decode, encode, load_corpus
from v22sdk.specdec.errors import SpecDecError
from v22sdk.specdec.experiment import ExperimentConfig, run_experiment, verdict
from v22sdk.specdec.metrics import analytic_tau, empirical_tau
from v22sdk.specdec.models import CharTransformer, EagleDraft, EagleDraftRunner, TargetConfig, TransformerTarget
from v22sdk.specdec.sampler import greedy_generate, speculative_generate
from v22sdk.specdec.stats import paired_diff
from v22sdk.specdec.toy import MarkovModel, TargetAsDraft, UniformDraft

SMALL = TargetConfig(d=32, n_layer=2, n_head=2, block=40, feature_layers=(1, 2))


@pytest.fixture(scope="module")
def tiny_target():
    torch.manual_seed(0)
    model = CharTransformer(SMALL).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


@pytest.mark.parametrize("arm", ["none", "rmsnorm", "sphere", "perlayer", "nofeat"])
def test_draft_runner_reproduces_training_time_test(tiny_target, arm):
    """Drafting step by step (runner) gives the same q as the training-time forward on the window."""
    torch.manual_seed(1)
    draft = EagleDraft(tiny_target, arm, d_draft=32, warmup=8).eval()
    tokens = torch.randint(0, SMALL.vocab, (3, 20))
    _, feats = tiny_target(tokens)  # features of the whole sequence; causal, so a prefix sees only itself
    window = slice(6, 6 + 8 + 4)  # warmup 8, then 4 drafted positions
    with torch.no_grad():
        ref = torch.softmax(draft.train_logits(tokens[:, window], feats[:, window]).double(), -1)
    runner = EagleDraftRunner(draft)
    state = runner.begin(tokens[:, : 6 + 8])
    got = [runner.distribution(state, 1.0)]
    for j in range(6 + 8, 6 + 8 + 3):
        state = runner.advance(state, tokens[:, j])
        got.append(runner.distribution(state, 1.0))
    torch.testing.assert_close(torch.stack(got, 1), ref[:, 7:11], atol=1e-5, rtol=1e-4)


def test_injection_arms_do_what_they_claim(tiny_target):
    feats = torch.randn(5, 2 * SMALL.d) * 40.0
    norms = {}
    for arm in ("none", "rmsnorm", "sphere", "perlayer", "nofeat"):
        torch.manual_seed(2)
        with torch.no_grad():
            norms[arm] = EagleDraft(tiny_target, arm, d_draft=32).inject(feats).norm(dim=-1)
    torch.testing.assert_close(norms["sphere"], torch.ones(5), atol=1e-5, rtol=0)
    torch.testing.assert_close(norms["rmsnorm"], torch.full((5,), math.sqrt(32)), atol=1e-3, rtol=0)
    assert bool((norms["nofeat"] == 0).all())
    assert float(norms["none"].mean()) > 2 * math.sqrt(32)  # raw scale passes through unnormalised
    counts = {arm: EagleDraft(tiny_target, arm, d_draft=32).n_params() for arm in ("none", "rmsnorm", "sphere")}
    assert counts["rmsnorm"] - counts["none"] == 32 and counts["sphere"] == counts["none"]
    with pytest.raises(SpecDecError, match="unknown draft arm"):
        EagleDraft(tiny_target, "layernorm")


def test_transformer_target_rows_match_model(tiny_target):
    target = TransformerTarget(tiny_target)
    seq = torch.randint(0, SMALL.vocab, (2, 15))
    p = target.distributions(seq[:, :10], seq[:, 10:], 1.0)
    logits, _ = tiny_target(seq)
    torch.testing.assert_close(p, torch.softmax(logits[:, 9:].double(), -1), atol=1e-6, rtol=1e-5)


def test_greedy_bit_identical_with_transformer_target_and_eagle_draft(tiny_target):
    torch.manual_seed(3)
    target = TransformerTarget(tiny_target)
    runner = EagleDraftRunner(EagleDraft(tiny_target, "sphere", d_draft=32, warmup=8))
    ctx = torch.randint(0, SMALL.vocab, (1, 10))
    ref = greedy_generate(target, ctx, 25)
    out, _ = speculative_generate(target, runner, ctx, 25, gamma=5, temperature=0.0)
    assert out == ref


def _exact_tau_markov(target: MarkovModel, draft: MarkovModel, start: int, gamma: int) -> float:
    """Expected tokens per round by brute-force enumeration of accepted prefixes."""
    p, q = target.transition, draft.transition
    total = 1.0
    for k in range(1, gamma + 1):
        prob = 0.0
        for path in itertools.product(range(p.shape[0]), repeat=k):
            prev, w = start, 1.0
            for x in path:
                w *= float(torch.minimum(p[prev, x], q[prev, x]))
                prev = x
            prob += w
        total += prob
    return total


def test_analytic_and_empirical_tau_match_exact_enumeration():
    target = MarkovModel.random(4, seed=81, concentration=0.7)
    draft = MarkovModel.random(4, seed=82, concentration=0.7)
    gamma, n = 3, 40_000
    exact = _exact_tau_markov(target, draft, start=2, gamma=gamma)
    ctx = torch.full((n, 1), 2)
    tau, alpha = analytic_tau(target, draft, ctx, gamma, 1.0, seed=83)
    emp = empirical_tau(target, draft, ctx, gamma, 1.0, seed=84)
    assert alpha.shape == (n, gamma)
    assert abs(float(tau.mean()) - exact) < 5 * float(tau.std()) / math.sqrt(n)
    assert abs(float(emp.mean()) - exact) < 5 * float(emp.std()) / math.sqrt(n)
    # The analytic estimator is the low-noise one (why it is the primary metric).
    assert float(tau.std()) < float(emp.std())


def test_controls_give_their_known_tau():
    target = MarkovModel.random(5, seed=91)
    ctx = torch.full((50, 1), 0)
    tau, _ = analytic_tau(target, TargetAsDraft(target), ctx, 7, 1.0, seed=1)
    assert bool((tau == 8.0).all())
    emp = empirical_tau(target, TargetAsDraft(target), ctx, 7, 0.0, seed=2)
    assert bool((emp == 8.0).all())
    tau_u, alpha_u = analytic_tau(target, UniformDraft(5), ctx, 7, 1.0, seed=3)
    expect_first = float(torch.minimum(target.transition[0], torch.tensor(0.2, dtype=torch.float64)).sum())
    torch.testing.assert_close(alpha_u[:, 0], torch.full((50,), expect_first, dtype=torch.float64))
    assert 1.0 < float(tau_u.mean()) < float(tau.mean())


def test_paired_diff_and_criterion():
    b = [5.0, 5.1, 4.9, 5.0, 5.05]
    a_same = [x + d for x, d in zip(b, [0.01, -0.02, 0.015, -0.01, 0.0])]
    a_win = [x * 1.05 + d for x, d in zip(b, [0.01, -0.01, 0.0, 0.02, -0.02])]
    d0 = paired_diff(a_same, b)
    assert not d0.excludes_zero and not d0.passes
    d1 = paired_diff(a_win, b)
    assert d1.excludes_zero and d1.passes and d1.rel_gain == pytest.approx(0.05, abs=0.01)
    small = paired_diff([x * 1.01 for x in b], b)  # CI excludes 0 but gain 1% < 2%
    assert small.excludes_zero and not small.passes
    cell = lambda d: {"sphere-rmsnorm": d.as_dict()}  # noqa: E731
    res = {"corpora": {c: {"comparisons": {"T=0": cell(d1), "T=1": cell(d1)}} for c in ("a", "b")}}
    assert verdict(res)["text"].startswith("hook (1) SUPPORTED")
    res["corpora"]["b"]["comparisons"]["T=1"] = cell(d0)
    assert verdict(res)["text"].startswith("INCONSISTENT")
    # no cell passes: "not supported", with the largest gain the intervals leave open, never "no effect"
    for c in ("a", "b"):
        res["corpora"][c]["comparisons"] = {"T=0": cell(d0), "T=1": cell(d0)}
    v = verdict(res)
    assert v["text"].startswith("NOT SUPPORTED: no detectable difference")
    assert v["upper_gain_not_excluded"] == pytest.approx(d0.hi / d0.mean_b)
    assert f"gains up to {100 * d0.hi / d0.mean_b:+.1f}% are not excluded" in v["text"]


def test_corpus_encoding_and_loading():
    ids = encode("Hi\n~é")
    assert ids.tolist() == [ord("H") - 31, ord("i") - 31, 0, 95, UNK]
    assert decode(encode("def f(x):\n    return x")) == "def f(x):\n    return x"
    c = load_corpus("pydoc-topics")
    assert c.n_chars > 100_000 and len(c.train) > 17 * len(c.test)
    assert load_corpus("pydoc-topics").sha256 == c.sha256  # deterministic
    with pytest.raises(InputError, match="unknown corpus"):
        load_corpus("tiny-shakespeare")


def test_micro_experiment_end_to_end_and_report(tmp_path):
    cfg = ExperimentConfig(
        corpora=("pydoc-topics",),
        target_steps=3,
        n_distill_seq=8,
        n_val_ctx=6,
        n_test_ctx=6,
        draft_steps=3,
        draft_batch=8,
        lrs=(3e-3,),
        seeds=2,
        gamma=3,
        empirical_repeats=1,
        threads=1,
        prefix=8,
        ctx_new=8,
    )
    res = run_experiment(cfg, tmp_path)
    r = res["corpora"]["pydoc-topics"]
    assert r["controls"]["P+ target-as-draft"]["analytic"] == {"T=0": 4.0, "T=1": 4.0}
    assert r["controls"]["P+ target-as-draft"]["empirical"]["T=1"][0] == 4.0
    assert set(r["arms"]) == {"none", "rmsnorm", "sphere", "perlayer", "nofeat"}
    for arm in r["arms"].values():
        assert all(1.0 <= s["analytic"]["T=1"] <= 4.0 for s in arm["seeds"])
    doc = json.loads((tmp_path / "results.json").read_text())
    saved = doc["data"]
    assert saved["verdict"]["text"] == res["verdict"]["text"]
    # a result file: provenance, the criterion, and the tables the findings render
    assert doc["provenance"]["commit"] and doc["criterion"]["min_gain"] == 0.02
    arms = [row[1] for row in doc["tables"]["arms"]["rows"]]
    assert arms == ["P+ target-as-draft", "P- uniform", "none", "rmsnorm", "sphere", "perlayer", "nofeat"]
    assert doc["values"]["verdict"] == res["verdict"]["text"]
    out = CliRunner().invoke(specdec, ["report", "--out", str(tmp_path)])
    assert out.exit_code == 0 and "sphere-rmsnorm" in out.output and "Verdict" in out.output


def test_cli_report_without_results_is_a_typed_error(tmp_path):
    out = CliRunner().invoke(specdec, ["report", "--out", str(tmp_path / "nothing")])
    assert out.exit_code != 0
    assert "not found" in str(out.exception)
    (tmp_path / "results.json").write_text("{broken")
    out = CliRunner().invoke(specdec, ["report", "--out", str(tmp_path)])
    assert "unreadable" in str(out.exception)
    help_out = CliRunner().invoke(specdec, ["run", "--help"])
    assert help_out.exit_code == 0 and "--quick" in help_out.output


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not UTF-8 text (byte 0x89 at offset 0)"),
        (b"\xff\xfe{\x00}\x00", "not UTF-8 text"),
        (b"[1, 2, 3]", "not a specdec results file"),
        (b'{"corpora": 7}', "not a specdec results file"),
        (b"[" * 100_000, "unreadable"),
        ("fifo", "is a FIFO (named pipe), not a regular file"),
        ("folder", "is a directory"),
    ],
)
def test_report_on_a_file_that_is_not_results_names_it_in_one_line(tmp_path, content, problem):
    """A binary results.json was an internal UnicodeDecodeError that did not name the file."""
    import os

    from v22sdk.specdec.errors import ResultsError

    path = tmp_path / "results.json"
    if content == "fifo":
        os.mkfifo(path)
    elif content == "folder":
        path.mkdir()
    else:
        path.write_bytes(content)
    out = CliRunner().invoke(specdec, ["report", "--out", str(tmp_path)])
    assert isinstance(out.exception, ResultsError), out.exception
    message = str(out.exception)
    assert message.startswith(str(path)) and problem in message and "\n" not in message


@pytest.mark.slow
def test_quick_run_via_cli(tmp_path):
    out = CliRunner().invoke(specdec, ["run", "--quick", "--corpus", "pydoc-topics", "--out", str(tmp_path)])
    assert out.exit_code == 0, out.output
    res = json.loads((tmp_path / "results.json").read_text())["data"]
    agree = res["corpora"]["pydoc-topics"]["agreement"]
    assert np.mean([v["within_95ci"] for a in agree.values() for v in a.values()]) >= 0.8
