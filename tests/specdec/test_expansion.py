"""Giving a trained draft a new feature block (RFC hook 5): each method does what it claims at step 0."""

from __future__ import annotations

import pytest
import torch

from v22sdk.specdec.errors import SpecDecError
from v22sdk.specdec.expansion import METHODS, expand
from v22sdk.specdec.models import CharTransformer, EagleDraft, EagleDraftRunner, TargetConfig
from v22sdk.specdec.train import DistillData, fit_draft

SMALL = TargetConfig(d=32, n_layer=3, n_head=2, block=40, feature_layers=(1, 2, 3))


@pytest.fixture(scope="module")
def target():
    torch.manual_seed(0)
    model = CharTransformer(SMALL).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


@pytest.fixture(scope="module")
def base(target):
    torch.manual_seed(1)
    d = EagleDraft(target, "rmsnorm", d_draft=32, warmup=8, layers=(0,))
    with torch.no_grad():  # a "trained" draft: non-default values everywhere
        for p in d.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return d.eval()


def _u(draft, target, seed=2):
    tokens = torch.randint(0, SMALL.vocab, (4, 12), generator=torch.Generator().manual_seed(seed))
    _, feats = target(tokens)
    with torch.no_grad():
        return draft.inject(feats), feats


def test_layer_selection_reads_only_the_named_blocks(target, base):
    u, feats = _u(base, target)
    changed = feats.clone()
    changed[..., SMALL.d :] += 100.0  # blocks 1 and 2: not read by a draft on block 0
    with torch.no_grad():
        torch.testing.assert_close(base.inject(changed), u)
        assert not torch.allclose(base.inject(feats + 1.0), u)
    assert base.fc.in_features == SMALL.d
    with pytest.raises(SpecDecError, match="layers"):
        EagleDraft(target, "rmsnorm", layers=(3,))


def test_step0_disruption_of_each_method(target, base):
    u, feats = _u(base, target)
    out, drafts = {}, {}
    for m in METHODS:
        torch.manual_seed(3)
        d = drafts[m] = expand(base, m, (2,)).eval()
        with torch.no_grad():
            out[m] = d.inject(feats)
        for name, p in base.state_dict().items():  # the trained base is copied, never modified
            if name != "fc.weight" or m != "concat":
                torch.testing.assert_close(d.state_dict()[name], p)
    torch.testing.assert_close(out["zero-additive"], u, rtol=0, atol=0)
    rfc_change = (out["rfc-additive"] - u).norm(dim=-1)
    torch.testing.assert_close(rfc_change, torch.full_like(rfc_change, 0.01 * 32**0.5), rtol=1e-4, atol=1e-6)
    # 1 % of the RMS-normalised stream it joins (|u| = sqrt(d) * |gain| ~ sqrt(d))
    assert float((rfc_change / u.norm(dim=-1)).mean()) == pytest.approx(0.01, rel=0.2)
    with torch.no_grad():  # ordinary init: u moves by the fresh branch's whole output
        torch.testing.assert_close(out["additive"] - u, drafts["additive"].new(feats[..., 2 * SMALL.d :]))
    assert float((out["additive"] - u).norm()) > 0 and float((out["concat"] - u).norm()) > 0
    concat = expand(base, "concat", (2,))
    assert concat.layers == (0, 2) and concat.fc.in_features == 2 * SMALL.d
    torch.testing.assert_close(concat.fc.weight[:, : SMALL.d], base.fc.weight)
    with pytest.raises(SpecDecError, match="unknown expansion"):
        expand(base, "gated", (2,))


def test_expanded_draft_runs_in_the_sampler_and_fine_tunes(target, base):
    torch.manual_seed(4)
    d = expand(base, "rfc-additive", (2,))
    tokens = torch.randint(0, SMALL.vocab, (16, 30), generator=torch.Generator().manual_seed(5))
    logits, feats = target(tokens)
    data = DistillData(tokens=tokens, feats=feats, probs=torch.softmax(logits, -1))
    seen = []
    fit_draft(d, data, gamma=3, steps=4, batch=4, lr=1e-2, seed=0, on_step=lambda s, _d: seen.append(s))
    assert seen == [0, 1, 2, 3, 4]
    assert float(d.new_gain.detach()) != pytest.approx(0.01)  # the gain is learned
    runner = EagleDraftRunner(d)
    q = runner.distribution(runner.begin(tokens[:2, :20]), 1.0)
    assert q.shape == (2, SMALL.vocab) and torch.allclose(q.sum(-1), torch.ones(2, dtype=q.dtype))
