"""Training: the loss falls, and each safeguard catches the fault it guards against."""

import math

import pytest
import torch

from v22sdk.engine.config import preset
from v22sdk.engine.data import load_dataset, make_split
from v22sdk.engine.train import Trainer
from v22sdk.engine.vocab import OutputVocab


@pytest.fixture
def setup(registry, mixed_manifest):
    ds = load_dataset(mixed_manifest, registry)
    split = make_split(ds.examples, 0)
    vocab = OutputVocab.build([ds.examples[i].target for i in split["train"]], use_text_plugin=False)
    return ds, split, vocab


def _trainer(setup, **cfg):
    ds, split, vocab = setup
    return Trainer(preset("tiny", **{"batch_size": 4, **cfg}), ds, split, vocab)


@pytest.mark.parametrize("engine", ["v22", "baseline"])
def test_loss_falls(setup, engine):
    t = _trainer(setup, engine=engine)
    hist = t.fit(epochs=8, eval_every=100)
    assert hist[-1]["ce"] < 0.7 * hist[0]["ce"]
    assert t.rollbacks == 0 and t.spikes == 0
    assert "val" in hist[-1]  # evaluated on the last epoch


def test_aux_losses_present_and_switchable(setup):
    t = _trainer(setup)
    r = t.train_step([0, 1, 2, 3])
    assert r["la"] > 0 and r["lb"] > 0 and r["lc"] > 0
    off = _trainer(setup, loss_a=False, loss_b=False, loss_c=False, loss_d=False)
    r = off.train_step([0, 1, 2, 3])
    assert r["la"] == r["lb"] == r["lc"] == r["ld"] == 0
    assert math.isclose(r["loss"], r["ce"], rel_tol=1e-6)


def test_ce_spike_is_clamped_and_starts_self_heal(setup):
    t = _trainer(setup)
    seen = {}

    def spike(tr, parts):
        if tr.step == 3:
            parts["ce"] = parts["ce"] * 100.0
            seen["raw"] = float(parts["ce"].detach())

    t.hooks["loss"] = spike
    results = [t.train_step([0, 1, 2, 3]) for _ in range(5)]
    assert t.spikes == 1 and results[3]["spike"]
    assert seen["raw"] > 50
    # the step's loss used the clamped CE, not the spike
    assert results[3]["loss"] < t.cfg.spike_floor + 5
    assert t.cool_down == 50 - 2 and t.aux < 0.95  # self-heal: aux decays during the cool-down
    aux_low = t.aux
    t.hooks.clear()
    t.cool_down = 0
    t.train_step([0, 1, 2, 3])
    assert t.aux > aux_low  # and recovers afterwards


def test_ac_explosion_starts_cool_down(setup):
    t = _trainer(setup)
    t.ac_ema = 1e-6  # any ‖ac‖ now looks like an explosion
    t.train_step([0, 1, 2, 3])
    assert t.ac_alarms == 1 and t.cool_down == 29


def test_nan_gradient_rolls_back_to_last_good_state(setup):
    t = _trainer(setup)
    t.train_step([0, 1, 2, 3])
    t._snapshot()
    good = {k: v.clone() for k, v in t.model.state_dict().items()}
    mem_before = len(t.model.memory)
    t.train_step([4, 5, 6, 7])  # moves the weights (and writes memory)

    def poison(tr):
        next(tr.model.p6.parameters()).grad.fill_(float("nan"))

    t.hooks["after_backward"] = poison
    assert t.train_step([0, 1, 2, 3]) is None
    assert t.rollbacks == 1
    for k, v in t.model.state_dict().items():
        assert torch.equal(v, good[k]), k
    assert len(t.model.memory) == mem_before
    t.hooks.clear()
    r = t.train_step([0, 1, 2, 3])  # training goes on, finite
    assert r is not None and math.isfinite(r["loss"])


def test_nan_loss_rolls_back(setup):
    t = _trainer(setup)
    t.hooks["loss"] = lambda tr, parts: parts.__setitem__("lb", parts["lb"] * float("nan"))
    before = {k: v.clone() for k, v in t.model.state_dict().items()}
    assert t.train_step([0, 1, 2, 3]) is None and t.rollbacks == 1
    assert all(torch.equal(v, before[k]) for k, v in t.model.state_dict().items())


def test_auto_stop(setup):
    t = _trainer(setup, stop_loss=1e9)
    hist = t.fit(epochs=50)
    assert len(hist) == 1 and t.stopped_early
    t = _trainer(setup)
    assert len(t.fit(epochs=2)) == 2 and not t.stopped_early


def test_training_is_deterministic(setup):
    a = _trainer(setup).fit(epochs=2)
    b = _trainer(setup).fit(epochs=2)
    assert [h["loss"] for h in a] == [h["loss"] for h in b]


def test_metrics_log_is_jsonl(setup, tmp_path):
    import json

    ds, split, vocab = setup
    log = tmp_path / "m.jsonl"
    Trainer(preset("tiny", batch_size=4), ds, split, vocab, log_path=log).fit(epochs=2)
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert [x["epoch"] for x in lines] == [1, 2] and all("loss" in x and "aux" in x for x in lines)


def _logits_only_engine(registry, *, sent_vec: bool):
    """Register 'lean', a stranger's engine whose forward pass returns ``logits`` (and ``sent_vec``
    when asked); returns a counter of its forward passes."""
    import types

    from torch import nn

    from v22sdk import hookimpl

    calls = {"n": 0}

    class Lean(nn.Module):
        memory = None

        def __init__(self, cfg, vocab_emb):
            super().__init__()
            self.register_buffer("vocab_emb", vocab_emb.float().clone())
            self.proj = nn.Linear(640, 256)
            self.pos = nn.Parameter(torch.randn(cfg.out_positions, 256) * 0.1)

        def stage_groups(self):
            return {"input": list(self.parameters())}

        def update_loss_state(self, acc, ce):
            pass

        def forward(self, tokens, mask, attr_sets=None):
            calls["n"] += 1
            m = mask.to(tokens.dtype).unsqueeze(-1)
            h = torch.tanh(self.proj((tokens * m).sum(1) / m.sum(1).clamp_min(1)))
            out = {"logits": (h.unsqueeze(1) + self.pos) @ self.vocab_emb.t()}
            return out | {"sent_vec": h} if sent_vec else out

    class LeanSpec:
        name = "lean"
        description = "mean of the tokens, one linear map"

        @staticmethod
        def build_model(cfg, vocab_emb):
            return Lean(cfg, vocab_emb)

    mod = types.SimpleNamespace(v22sdk_register_engines=hookimpl(lambda: [LeanSpec]))
    mod.__name__ = "lean_plugin"
    registry.register(mod, "lean")
    return calls


def test_an_engine_without_sent_vec_is_refused_before_training_when_a_validation_split_needs_it(
    registry, text_manifest, tmp_path
):
    """Calibration and the open set are fitted on ``sent_vec`` after training: an engine that does
    not return it is named with the missing output at the first step, not after the whole run."""
    from v22sdk.engine.pipeline import train_engine
    from v22sdk.errors import EngineOutputError, PluginError

    calls = _logits_only_engine(registry, sent_vec=False)
    cfg = preset("tiny", engine="lean", epochs=50, batch_size=4, loss_a=False, loss_b=False, loss_c=False, loss_d=False)
    with pytest.raises(EngineOutputError, match=r"engine 'lean'.*no 'sent_vec' \(it returned: logits\)") as err:
        train_engine(text_manifest, cfg, tmp_path / "lean.pt", registry=registry, use_text_plugin=False)
    assert isinstance(err.value, PluginError) and err.value.output == "sent_vec" and "open set" in str(err.value)
    assert calls["n"] == 1 and not (tmp_path / "lean.pt").exists()
    # without a validation split nothing reads sent_vec: logits are enough
    result = train_engine(
        text_manifest,
        cfg.replace(epochs=2),
        tmp_path / "lean.pt",
        registry=registry,
        use_text_plugin=False,
        val_frac=0.0,
    )
    assert (tmp_path / "lean.pt").is_file() and result["metrics"]["epochs"] == 2


def test_an_engine_with_sent_vec_trains_and_gets_its_open_set(registry, text_manifest, tmp_path):
    from v22sdk.engine.checkpoint import load_checkpoint
    from v22sdk.engine.pipeline import train_engine

    _logits_only_engine(registry, sent_vec=True)
    cfg = preset("tiny", engine="lean", epochs=2, batch_size=4, loss_a=False, loss_b=False, loss_c=False, loss_d=False)
    train_engine(text_manifest, cfg, tmp_path / "lean.pt", registry=registry, use_text_plugin=False)
    _, _, _, doc = load_checkpoint(tmp_path / "lean.pt")
    assert doc["open_set"]["method"] and doc["calibration"]["temperature"] > 0


def test_an_engine_model_without_the_training_surface_is_refused(setup, monkeypatch):
    """The trainer reads stage_groups(), update_loss_state() and memory of the engine's model
    (EngineModel); a model without them is an InputError naming the engine, not an AttributeError."""
    from torch import nn

    from v22sdk.engine import train
    from v22sdk.errors import InputError

    monkeypatch.setattr(train, "build_model", lambda cfg, emb: nn.Linear(640, 256))
    with pytest.raises(InputError, match=r"engine 'v22'.*stage_groups\(\)"):
        _trainer(setup)
    assert not train.is_engine_model(nn.Linear(2, 2))
