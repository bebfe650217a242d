"""The fused kernels (default) compute what the explicit reference formulation computes.

P7 and P3-L run their attention through torch's fused CPU flash-attention kernel, and P3-L takes
its attention statistics from the rows' log-sum-exp instead of the (B, H, K, K) matrix. These
tests hold each fused path against the reference (``stages.set_fused(model, False)``): the
statistics' algebra exactly (float64), the kernels to float32 rounding, forward and gradients.
"""

import pytest
import torch
import torch.nn.functional as F

from v22sdk.engine.config import preset
from v22sdk.engine.stages import P3LAttributeLinkage, P7CrossSentence, attention_lse, set_fused
from v22sdk.engine.v22 import build_model


def _attr(b=6, n=5, seed=3):
    """Samples with many active slots, partial token masks, exactly one active slot, none."""
    g = torch.Generator().manual_seed(seed)
    attr = (torch.rand(b, n, 384, generator=g) * 2 - 1) * (torch.rand(b, n, 384, generator=g) < 0.05)
    mask = torch.ones(b, n, dtype=torch.bool)
    mask[1, 2:] = False
    attr[2] = 0
    attr[2, 0, 17] = -0.6  # one active id: statistics must be zero
    attr[3] = 0  # no active id at all: zeros, not NaN
    attr[4, :, :] = 0
    attr[4, 1, 5], attr[4, 3, 9] = 0.3, -0.8  # exactly two
    return attr, mask


def _peaked(p3l: P3LAttributeLinkage, gain: float = 40.0) -> P3LAttributeLinkage:
    """Scale q and k so that attention is far from uniform (at init it is nearly uniform, and the
    attention std is then float rounding noise in either formulation)."""
    with torch.no_grad():
        p3l.q.weight.mul_(gain)
        p3l.k.weight.mul_(gain)
    return p3l


def _qk_lse(p3l, attr, mask, dtype):
    ids, signed, m = p3l.active_ids(attr.to(dtype), mask, p3l.k_active)
    e = p3l.id_embed(ids)
    q, k = p3l.q(e).transpose(1, 2), p3l.k(e).transpose(1, 2)
    bias = (~m).to(dtype).mul(-1e4)[:, None, None, :]
    s = q.unsqueeze(-1) * k.unsqueeze(-2) / p3l.temperature + bias
    return q, k, s, m


def test_p3l_statistics_from_lse_equal_those_of_the_matrix():
    """The algebra, in float64: peak, std and range from q, k and the log-sum-exp are the ones
    read off the full attention matrix, for every kind of sample."""
    cfg = preset("small", p3l_groups=(3, 5, 8, 16))
    p = _peaked(P3LAttributeLinkage(cfg)).double()
    attr, mask = _attr()
    with torch.no_grad():
        q, k, s, m = _qk_lse(p, attr, mask, torch.float64)
        ref = p._stats(torch.softmax(s, -1), m)
        got = p._stats_from_lse(q, k, torch.logsumexp(s, -1), m)
    assert ref.shape == got.shape == (6, 12)
    assert ref.abs().max() > 0.05  # the statistics are not all zero
    assert torch.equal(ref[[2, 3]], torch.zeros(2, 12))  # < 2 active ids
    torch.testing.assert_close(got, ref, rtol=1e-9, atol=1e-12)
    # the comparison can fail: the statistics of a different temperature are not these
    p.temperature = 0.5
    with torch.no_grad():
        other = p._stats_from_lse(q, k, torch.logsumexp(s, -1), m)
    assert not torch.allclose(other, ref, atol=1e-6)


def test_p3l_fused_matches_reference_forward_and_gradients():
    cfg = preset("small", p3l_groups=(3, 5, 8, 16))
    torch.manual_seed(0)
    p = _peaked(P3LAttributeLinkage(cfg))
    attr, mask = _attr()
    results = []
    for fused in (False, True):
        p.fused = fused
        p.zero_grad(set_to_none=True)
        feat, ids, m = p(attr, mask)
        feat.square().sum().backward()
        results.append((feat.detach(), {n: q.grad.clone() for n, q in p.named_parameters()}))
    (ref, ref_grads), (got, got_grads) = results
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got, ref, rtol=1e-4, atol=2e-5)
    for name, g in ref_grads.items():
        torch.testing.assert_close(got_grads[name], g, rtol=1e-3, atol=1e-6 * (1 + float(g.abs().max())), msg=name)


def test_p7_fused_matches_reference_forward_and_gradients():
    cfg = preset("tiny")
    torch.manual_seed(0)
    p = P7CrossSentence(cfg)
    x = torch.randn(3, 7, 256)
    mask = torch.ones(3, 7, dtype=torch.bool)
    mask[0, 4:] = False
    vocab = F.normalize(torch.randn(30, 256), dim=-1)
    results = []
    for fused in (False, True):
        p.fused = fused
        p.zero_grad(set_to_none=True)
        states, sent, gate = p(x, mask, vocab, torch.zeros(12))
        (states.square().mean() + sent.square().mean()).backward()
        results.append((states.detach(), sent.detach(), {n: q.grad.clone() for n, q in p.named_parameters()}))
    (s0, v0, g0), (s1, v1, g1) = results
    torch.testing.assert_close(s1, s0, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(v1, v0, rtol=1e-5, atol=1e-6)
    assert g1["temperature"].abs() > 0  # the learned scale still gets its gradient
    for name, g in g0.items():
        torch.testing.assert_close(g1[name], g, rtol=1e-4, atol=1e-7 * (1 + float(g.abs().max())), msg=name)


def test_v22_model_fused_matches_reference():
    torch.manual_seed(0)
    m = build_model(preset("tiny", memory=False), F.normalize(torch.randn(12, 256), dim=-1))
    x = torch.zeros(6, 5, 640)
    x[..., :256] = F.normalize(torch.randn(6, 5, 256), dim=-1)
    attr, mask = _attr()
    x[..., 256:] = attr
    outs = []
    for fused in (False, True):
        set_fused(m, fused)
        outs.append(m(x, mask)["logits"].detach())
    torch.testing.assert_close(outs[1], outs[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("with_bias", [False, True])
def test_attention_lse_kernel_and_explicit_agree(with_bias):
    torch.manual_seed(1)
    q, k, v = torch.randn(2, 3, 9, 4), torch.randn(2, 3, 11, 4), torch.randn(2, 3, 11, 4)
    bias = (torch.rand(2, 1, 1, 11) < 0.3).float() * -1e4 if with_bias else None
    out_f, lse_f = attention_lse(q, k, v, bias, 0.7)
    out_r, lse_r = attention_lse(q, k, v, bias, 0.7, fused=False)
    torch.testing.assert_close(out_f, out_r, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(lse_f, lse_r, rtol=1e-5, atol=1e-5)
