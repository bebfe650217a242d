"""P7's parameter-only terms (the vocabulary's keys and values, the meta gates) are kept between
inference calls and give the same bits as computing them again; any change of a parameter, the
vocabulary or the loss vector, and every training-mode or gradient call, computes them afresh
(issue 21: at batch 1 they were 7.4 of a call's 16.1 MFLOP)."""

import torch
import torch.nn.functional as F

from v22sdk.engine.config import preset
from v22sdk.engine.stages import P7CrossSentence


def _setup(seed=0):
    torch.manual_seed(seed)
    p7 = P7CrossSentence(preset("small"))
    x = F.normalize(torch.randn(3, 5, 256), dim=-1)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1, 3:] = False
    vocab = F.normalize(torch.randn(40, 256), dim=-1)
    loss_vec = torch.rand(12)
    return p7, x, mask, vocab, loss_vec


def _same(a, b):
    return all(torch.equal(u, v) for u, v in zip(a, b))


def test_cached_inference_is_bit_identical_and_computed_once():
    p7, x, mask, vocab, loss_vec = _setup()
    p7.eval()
    with torch.enable_grad():
        ref = [t.detach() for t in p7(x, mask, vocab, loss_vec)]  # gradients on: never cached
    assert "_inference_cache" not in p7.__dict__
    calls = []
    orig = p7._vocab_kv
    p7._vocab_kv = lambda v: calls.append(1) or orig(v)
    with torch.no_grad():
        first = p7(x, mask, vocab, loss_vec)
        second = p7(x, mask, vocab, loss_vec)
    assert calls == [1]  # the second call reused them
    assert _same(first, ref) and _same(second, ref)


def test_a_changed_parameter_vocabulary_or_loss_vector_is_seen():
    p7, x, mask, vocab, loss_vec = _setup()
    p7.eval()
    with torch.no_grad():
        before = p7(x, mask, vocab, loss_vec)
        p7.k_proj.weight.mul_(1.5)  # as an optimiser step would
        after = p7(x, mask, vocab, loss_vec)
        assert not torch.equal(before[0], after[0])
        with torch.enable_grad():
            fresh = [t.detach() for t in p7(x, mask, vocab, loss_vec)]
        assert _same(after, fresh)
        vocab.mul_(-1.0)  # the vocabulary buffer changes
        assert _same(p7(x, mask, vocab, loss_vec), [t.detach() for t in _fresh(p7, x, mask, vocab, loss_vec)])
        loss_vec.add_(0.5)  # the loss vector changes
        assert _same(p7(x, mask, vocab, loss_vec), [t.detach() for t in _fresh(p7, x, mask, vocab, loss_vec)])


def test_a_stale_cache_would_be_caught():
    """The check can fail: serving a stale cache after a parameter change gives other outputs."""
    p7, x, mask, vocab, loss_vec = _setup()
    p7.eval()
    with torch.no_grad():
        p7(x, mask, vocab, loss_vec)
        cache = dict(p7._inference_cache)
        p7.v_heads.mul_(2.0)
        key = tuple((t.data_ptr(), t._version) for t in (vocab, *p7.parameters()))
        p7._inference_cache["kv"] = (key, cache["kv"][1])  # forge a hit on the old values
        stale = p7(x, mask, vocab, loss_vec)
    assert not _same(stale, [t.detach() for t in _fresh(p7, x, mask, vocab, loss_vec)])


def test_training_mode_never_uses_the_cache():
    p7, x, mask, vocab, loss_vec = _setup()
    p7.train()
    with torch.no_grad():
        p7(x, mask, vocab, loss_vec)
    assert "_inference_cache" not in p7.__dict__


def _fresh(p7, x, mask, vocab, loss_vec):
    with torch.enable_grad():
        return p7(x, mask, vocab, loss_vec)
