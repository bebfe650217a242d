"""scripts/measure_knockouts.py: its statistics and its knock-outs (the run itself is a script)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "measure_knockouts.py"


@pytest.fixture(scope="module")
def ko():
    spec = importlib.util.spec_from_file_location("measure_knockouts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mcnemar_is_the_binomial_test_on_discordant_pairs(ko):
    right = np.ones(12, bool)
    wrong = right.copy()
    wrong[:10] = False  # 10 discordant pairs, all one way
    assert ko.mcnemar_exact(right, wrong) == pytest.approx(2 * 0.5**10)
    assert ko.mcnemar_exact(right, right) == 1.0  # no discordant pair
    mixed = right.copy()
    mixed[:3] = False
    other = right.copy()
    other[3:6] = False  # 3 one way, 3 the other
    assert ko.mcnemar_exact(mixed, other) == pytest.approx(1.0)


def test_holm_adjusts_in_order_and_stays_monotone(ko):
    adj = ko.holm({"a": 0.01, "b": 0.04, "c": 0.03})
    assert adj == pytest.approx({"a": 0.03, "c": 0.06, "b": 0.06})
    assert ko.holm({"x": 0.6, "y": 0.7}) == {"x": 1.0, "y": 1.0}


def test_paired_interval_of_a_known_difference(ko):
    a = np.array([True] * 50 + [False] * 50)
    assert ko.paired_difference_interval(a, a) == (0.0, 0.0)
    lo, hi = ko.paired_difference_interval(a, np.ones(100, bool))
    assert 0.35 < lo < 0.5 < hi < 0.65


def test_nearest_neighbour_stays_within_the_modality(ko):
    bank = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.1]])
    labels, mods = ["x", "y", "z"], ["audio", "audio", "vision"]
    query = np.array([[2.0, 0.1], [0.1, 3.0], [0.0, 1.0]])
    # the third query is nearest to 'y' by cosine, but only 'z' is of its modality
    assert ko.nearest_neighbour(bank, labels, mods, query, ["audio", "audio", "vision"]) == ["x", "y", "z"]


def test_knocked_out_replaces_outputs_and_restores_the_model(ko):
    torch = pytest.importorskip("torch")
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.g = nn.Linear(2, 2), nn.Linear(2, 2)

        def forward(self, x):
            return self.g(self.a(x)) + 1.0

    net = Net()
    x = torch.randn(3, 2)
    before = net(x)
    with ko.knocked_out(net, [("a", "zero")]):
        assert torch.allclose(net(x), net.g.bias + 1.0)  # g sees zeros
    with ko.knocked_out(net, [("g", "val_mean")], gate_mean=torch.full((1, 2), 5.0)):
        assert torch.equal(net(x), torch.full((3, 2), 6.0))
    assert torch.equal(net(x), before)  # hooks removed


def test_every_knockout_names_a_module_of_the_shipped_engine(ko):
    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT, load_checkpoint

    if not DEFAULT_CHECKPOINT.is_file():
        pytest.skip("no default checkpoint")
    model = load_checkpoint(DEFAULT_CHECKPOINT)[0]
    for spec in ko.KNOCKOUTS.values():
        for path, how in spec:
            model.get_submodule(path)
            assert how in ("zero", "zero_first", "val_mean")


def test_two_independent_counts_of_the_shipped_checkpoints_test_accuracy_agree():
    """results/engine/default-checkpoint.json's held-out accuracy was counted by train_default.py
    (pipeline.evaluate); results/engine/knockouts.json counted the intact checkpoint's answers again,
    by other code (its own tokenization, forward pass and string comparison), on the same suite's
    test split. For the same checkpoint file, the counts must agree."""
    import hashlib

    from v22sdk.engine.checkpoint import DEFAULT_CHECKPOINT
    from v22sdk.evidence import ROOT, read_result

    ko_file = read_result(ROOT / "results" / "engine" / "knockouts.json")["data"]
    trained = read_result(ROOT / "results" / "engine" / "default-checkpoint.json")["data"]["test_accuracy"]
    if DEFAULT_CHECKPOINT.is_file():
        sha = hashlib.sha256(DEFAULT_CHECKPOINT.read_bytes()).hexdigest()
        assert ko_file["summary"]["sha256"] == sha, "the bundled checkpoint changed: rerun measure_knockouts.py"
    intact = ko_file["variants"]["intact"]["accuracy"]
    for modality in ("audio", "text", "vision"):
        assert intact[modality]["n"] == trained[modality]["n"], modality
        assert intact[modality]["correct"] == trained[modality]["correct"], modality
    # and the per-example answers the file holds give the same count
    answers, targets = ko_file["answers"]["intact"], ko_file["targets"]
    assert sum(a == t for a, t in zip(answers, targets)) == intact["all"]["correct"]
