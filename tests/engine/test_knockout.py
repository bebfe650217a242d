"""Inference-time knock-outs (v22sdk.engine.knockout): each zeroes what it says, changes nothing
else, and leaves the model as it was."""

from __future__ import annotations

import pytest
import torch

from v22sdk.engine.config import preset
from v22sdk.engine.knockout import KNOCKOUTS, knocked_out, mean_gate
from v22sdk.engine.v22 import build_model
from v22sdk.errors import InputError


@pytest.fixture
def model():
    torch.manual_seed(0)
    vocab = torch.nn.functional.normalize(torch.randn(12, 256), dim=-1)
    m = build_model(preset("tiny", seed=0), vocab).eval()
    # trained-looking weights: the near-zero initial gains would hide a knock-out's effect
    with torch.no_grad():
        for p in m.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return m


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randn(6, 5, 640, generator=g) * 0.5
    mask = torch.ones(6, 5, dtype=torch.bool)
    mask[0, 3:] = False
    return tokens, mask


def run(model, batch):
    model.stage_e.write_enabled = False
    with torch.no_grad():
        return model(*batch)


def probe(module, seen, key):
    return module.register_forward_hook(lambda _m, _a, out: seen.__setitem__(key, out))


def test_each_knockout_zeroes_its_stage_and_nothing_else(model, batch):
    intact = run(model, batch)
    g = mean_gate(model, *batch)
    for name in KNOCKOUTS:
        seen: dict = {}
        with knocked_out(model, [name], gate_value=g):
            # probes registered after the knock-out's hooks see what the rest of the model sees
            hooks = [
                probe(model.stage_e, seen, "e"),
                probe(model.me_to_sent, seen, "me_to_sent"),
                probe(model.abc_prime, seen, "abc"),
                probe(model.abc_prime.to_sent, seen, "abc_sent"),
                probe(model.p3l, seen, "p3l"),
                probe(model.stage_a, seen, "a"),
                probe(model.stage_c, seen, "c"),
                probe(model.gate, seen, "gate"),
            ]
            out = run(model, batch)
            for h in hooks:
                h.remove()
        zeroed = {
            "E": ["e", "me_to_sent"],
            "ABC'": ["abc", "abc_sent"],
            "P3-L": ["p3l"],
            "A/C": ["a", "c"],
            "gate": [],
            "memory": [],
        }[name]
        for key in zeroed:
            value = seen[key]
            tensors = [v for v in (value if isinstance(value, tuple) else (value,)) if v.is_floating_point()]
            assert all(torch.count_nonzero(t) == 0 for t in (tensors[:1] if key == "p3l" else tensors)), (name, key)
        if name == "P3-L":  # the ids P3-L picked are kept: only its feature is removed
            assert torch.equal(seen["p3l"][1], intact_ids(model, batch))
        if name == "gate":
            assert torch.equal(seen["gate"], g.expand(6, 256))
        if name != "memory":  # memory is empty in an untrained model: clearing it changes nothing
            assert not torch.allclose(out["logits"], intact["logits"]), name
    after = run(model, batch)  # every hook is gone
    assert torch.equal(after["logits"], intact["logits"])


def intact_ids(model, batch):
    return model.p3l(batch[0][..., 256:], batch[1])[1]


def test_clearing_the_memory_removes_the_recall(model, batch):
    model.stage_e.write_enabled = True
    with torch.no_grad():
        model(*batch)  # fill the memory with this batch's turns
    filled = run(model, batch)
    assert filled["gates"].shape == (6, 256)
    with knocked_out(model, ["memory"]):
        assert model.stage_e.memory is None
        cleared = run(model, batch)
    assert model.stage_e.memory is not None and len(model.stage_e.memory) > 0
    assert not torch.allclose(cleared["logits"], filled["logits"])
    with knocked_out(model, ["E"]):
        e_out = run(model, batch)
    # with E knocked out, memory no longer matters
    with knocked_out(model, ["E", "memory"]):
        both = run(model, batch)
    assert torch.allclose(e_out["logits"], both["logits"], atol=1e-6)


def test_hooks_are_removed_after_an_error(model, batch):
    intact = run(model, batch)
    with pytest.raises(RuntimeError, match="inside"):
        with knocked_out(model, list(KNOCKOUTS), gate_value=torch.full((256,), 0.5)):
            raise RuntimeError("inside")
    assert torch.equal(run(model, batch)["logits"], intact["logits"]) and model.stage_e.memory is not None


def test_bad_knockouts_are_input_errors(model):
    with pytest.raises(InputError, match="unknown stage"):
        with knocked_out(model, ["P7"]):
            pass
    with pytest.raises(InputError, match="gate_value"):
        with knocked_out(model, ["gate"]):
            pass
    baseline = build_model(preset("tiny", engine="baseline"), torch.randn(12, 256))
    with pytest.raises(InputError, match="no V22 stages"):
        with knocked_out(baseline, ["E"]):
            pass
    with knocked_out(baseline, []):  # nothing to knock out: fine for any engine
        pass
