"""Shapes and switches of the V22 stages, the baseline, and modality-independence."""

import pytest
import torch
import torch.nn.functional as F

from v22sdk.engine.config import EngineConfig, preset
from v22sdk.engine.fifo import FifoMemory
from v22sdk.engine.stages import ABCPrime, P3LAttributeLinkage, P6Decoder, ThreeChannelGate
from v22sdk.engine.v22 import BaselineModel, build_model, parameter_count


def _vocab(v=12):
    torch.manual_seed(1)
    return F.normalize(torch.randn(v, 256), dim=-1)


def _tokens(b=3, n=7, zone=0):
    torch.manual_seed(2)
    x = torch.zeros(b, n, 640)
    x[..., :256] = F.normalize(torch.randn(b, n, 256), dim=-1)
    x[..., 256 + zone : 256 + zone + 10] = torch.rand(b, n, 10) * 2 - 1
    mask = torch.ones(b, n, dtype=torch.bool)
    mask[0, 4:] = False
    return x, mask


def test_v22_forward_shapes_and_units():
    cfg = preset("tiny")
    m = build_model(cfg, _vocab())
    out = m(*_tokens())
    assert out["logits"].shape == (3, cfg.out_positions, 12)
    assert out["a_logits"].shape == (3, 20) and out["ct"].shape == (3, 384) and out["ac"].shape == (3, 48)
    assert out["rel_logits"].shape == (3, 11) and out["sent_vec"].shape == (3, 256)
    assert torch.allclose(out["rd"].norm(dim=-1), torch.ones(3), atol=1e-5)  # spherical
    assert torch.allclose(out["me"].norm(dim=-1), torch.ones(3), atol=1e-5)
    assert (out["ac"].norm(dim=-1) < 1).all()  # soft normalisation
    assert ((out["gates"] > 0) & (out["gates"] < 1)).all()
    for v in out.values():
        assert torch.isfinite(v).all()


def test_spherical_switch_off_leaves_rd_unnormalised():
    m = build_model(preset("tiny", spherical=False), _vocab())
    out = m(*_tokens())
    assert not torch.allclose(out["rd"].norm(dim=-1), torch.ones(3), atol=1e-3)


def test_memory_is_read_and_written_at_inference():
    m = build_model(preset("tiny"), _vocab()).eval()
    assert isinstance(m.memory, FifoMemory) and len(m.memory) == 0
    x, mask = _tokens()
    with torch.no_grad():
        out = m(x, mask)
        assert len(m.memory) == 3  # written at inference
        # recalling its own me leaves me's direction unchanged; plant another value under its key
        planted = F.normalize(torch.randn(3, 384), dim=-1)
        m.memory.clear()
        m.memory.write(out["sent_vec"], planted, [frozenset()] * 3)
        again = m(x, mask)["me"]
    assert len(m.memory) == 6
    before = (out["me"] * planted).sum(-1)
    after = (again * planted).sum(-1)
    assert (after > before + 0.01).all()  # me moved toward the recalled prior


def test_engine_ignores_which_zone_the_slots_are_in_but_uses_them():
    m = build_model(preset("tiny", memory=False), _vocab()).eval()
    with torch.no_grad():
        lang = m(*_tokens(zone=0))["logits"]
        vis = m(*_tokens(zone=128))["logits"]
        aud = m(*_tokens(zone=256))["logits"]
    assert not torch.allclose(lang, vis) and not torch.allclose(vis, aud)


def test_p3l_ids_are_slot_and_sign():
    attr = torch.zeros(1, 2, 384)
    attr[0, 0, 5] = 0.9
    attr[0, 1, 5] = -0.2  # peak of slot 5 is +0.9
    attr[0, 1, 300] = -0.7
    ids, signed, m = P3LAttributeLinkage.active_ids(attr, torch.ones(1, 2, dtype=torch.bool), 4)
    got = {int(i) for i, ok in zip(ids[0], m[0]) if ok}
    assert got == {10, 601}
    assert int(m.sum()) == 2


def test_p3l_features_depend_on_active_attributes():
    p = P3LAttributeLinkage(preset("tiny"))
    a = torch.zeros(2, 3, 384)
    a[0, :, 1:4] = 0.5
    a[1, :, 200:203] = -0.5
    f, _, _ = p(a, torch.ones(2, 3, dtype=torch.bool))
    assert f.shape == (2, 128) and not torch.allclose(f[0], f[1])


def test_abc_prime_starts_near_zero():
    cfg = preset("tiny")
    out = ABCPrime(cfg)(torch.randn(4, cfg.p3l_feat))
    assert out.abs().max() < 1e-3


@pytest.mark.parametrize("variant", ["sigmoid", "vmf"])
def test_gate_variants_start_near_half(variant):
    cfg = preset("tiny", gate=variant)
    g = ThreeChannelGate(cfg)(torch.randn(5, 12), torch.randn(5, cfg.c_dim), torch.randn(5, 256), 1.0)
    assert g.shape == (5, 256)
    assert abs(float(g.detach().mean()) - 0.5) < 0.05


def test_p6_is_tied_to_the_vocabulary():
    cfg = preset("tiny")
    p6 = P6Decoder(cfg)
    sent = torch.randn(2, 256)
    vocab = _vocab()
    logits = p6(sent, None, vocab)
    assert logits.shape == (2, cfg.out_positions, 12)
    # swapping two vocabulary rows swaps the two logit columns: the weights are the embeddings
    swapped = vocab[[1, 0] + list(range(2, 12))]
    assert torch.allclose(p6(sent, None, swapped)[..., 0], logits[..., 1])


def test_baseline_shapes():
    cfg = preset("tiny", engine="baseline")
    m = build_model(cfg, _vocab())
    assert isinstance(m, BaselineModel)
    assert m(*_tokens())["logits"].shape == (3, cfg.out_positions, 12)


def test_full_preset_has_upstream_dimensions():
    cfg = preset("full")
    assert cfg.out_positions == 128 and sum(cfg.p3l_groups) == 416 and len(cfg.p3l_groups) == 29
    assert cfg.p7_heads == 16 and cfg.p7_head_dim == 16


def test_config_round_trip_and_checks():
    cfg = preset("small", gate="sigmoid")
    assert EngineConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError):
        preset("tiny", gate="softmax")
    with pytest.raises(ValueError):
        preset("tiny", p7_heads=8)


def test_every_stage_in_an_optimiser_group():
    m = build_model(preset("tiny"), _vocab())
    grouped = {id(p) for ps in m.stage_groups().values() for p in ps}
    assert grouped == {id(p) for p in m.parameters()}
    assert parameter_count(m) == sum(p.numel() for p in m.parameters())


def test_the_committed_parameter_counts_are_the_models_of_today():
    """docs/engine.md's stage table renders from results/engine/parameters.json: a change to a
    stage's size must come with the file rewritten (python scripts/count_parameters.py --out ...)."""
    import importlib.util
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("count_parameters", root / "scripts" / "count_parameters.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    committed = json.loads((root / "results" / "engine" / "parameters.json").read_text(encoding="utf-8"))
    now = mod.count()
    assert committed["data"] == now
    assert now["small"]["v22_total"] == sum(now["small"]["stages"].values()) == 3_257_922
    assert committed["tables"]["stages"] == mod.table(now)
