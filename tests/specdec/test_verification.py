"""Rejection prediction, attribute extraction and the attribute-aware scheduler (RFC hook 2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from v22sdk.specdec.attributes import ATTR_DIM, ContextAttributes
from v22sdk.specdec.corpus import CharVocab
from v22sdk.specdec.sampler import draft_signals, scheduled_round_batch, speculative_generate_batch
from v22sdk.specdec.toy import MarkovModel
from v22sdk.specdec.verification import (
    AcceptanceScheduler,
    FixedLengthScheduler,
    LogisticModel,
    auroc,
    cut_round,
    ece,
    fit_logistic,
    judged,
    stop_lengths_cumulative,
)

F64 = torch.float64
PASS, FAIL = 1e-6, 1e-12
CHARS = ("因", "a", "，", "。")  # a Han character, a Latin letter, a comma, a full stop


def test_auroc_matches_definition_with_ties_and_ece_catches_miscalibration():
    rng = np.random.default_rng(0)
    y = rng.random(3000) < 0.3
    s = np.round(y * 0.8 + rng.normal(size=3000), 1)  # rounded: many ties
    pos, neg = s[y], s[~y]
    brute = (pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()
    assert auroc(s, y) == pytest.approx(brute, abs=1e-12)
    assert auroc(-s, y) == pytest.approx(1 - brute, abs=1e-12)
    assert np.isnan(auroc(s, np.zeros(3000)))
    p = rng.random(200_000)
    calibrated = rng.random(200_000) < p
    assert ece(p, calibrated) < 0.01
    assert ece(np.clip(p + 0.2, 0, 1), calibrated) > 0.15  # the check catches a biased score


def test_fit_logistic_recovers_a_known_model_and_matches_sklearn():
    rng = np.random.default_rng(1)
    x = np.c_[rng.normal(size=(4000, 3)) * [1.0, 5.0, 0.1], np.ones(4000)]  # last column constant
    w = np.array([1.5, -0.4, 20.0])
    y = (rng.random(4000) < 1 / (1 + np.exp(-(x[:, :3] @ w - 0.5)))).astype(float)
    m = fit_logistic(x, y, l2_grid=(1e-6,))
    assert m.keep.tolist() == [True, True, True, False]
    np.testing.assert_allclose(m.coef / m.scale, w, rtol=0.15)  # back on the raw scale
    sk = pytest.importorskip("sklearn.linear_model")
    ref = sk.LogisticRegression(C=1 / (1e-2 * 4000), tol=1e-10, max_iter=10_000).fit((x[:, :3] - m.mean) / m.scale, y)
    mine = fit_logistic(x, y, l2_grid=(1e-2,))
    np.testing.assert_allclose(mine.coef, ref.coef_[0], atol=2e-4)
    assert mine.bias == pytest.approx(ref.intercept_[0], abs=2e-4)
    cv = fit_logistic(x, y, groups=np.arange(4000) // 7)
    assert cv.l2 in (1e-4, 1e-3, 1e-2)  # a strong penalty would underfit this clean signal
    with pytest.raises(ValueError, match="both classes"):
        fit_logistic(x, np.zeros(4000))


@pytest.fixture(scope="module")
def attributes():
    return ContextAttributes(CharVocab(CHARS))


def test_context_attributes_are_the_plugin_row_of_the_last_character(attributes):
    from v22sdk.plugins import get_registry

    text = get_registry().modality("text")
    ids = [0, 2, 1, 3]  # 因，a。
    got = attributes.last([ids[:2], ids])
    assert got.shape == (2, ATTR_DIM)
    np.testing.assert_array_equal(got[1], text.encode("因，a。").attr[-1])
    np.testing.assert_array_equal(got[0], text.encode("因，").attr[-1])
    han = attributes.schema.index("lang.script.han")
    assert attributes.last([[1, 0]])[0, han] == 1.0 and attributes.last([[0, 1]])[0, han] == 0.0
    before = attributes.calls
    attributes.last([ids, ids])
    assert attributes.calls == before and attributes.lookups == 6  # memoised, but every lookup counted
    assert attributes.slot_name(han) == "lang.script.han" and attributes.slot_name(300) == "attr[300]"


def _models(attributes) -> tuple[LogisticModel, LogisticModel]:
    """Hand-set models: rejection likely after a Han character (a_past 0.27), else a = 0.88."""
    d = 3 + ATTR_DIM
    coef = np.zeros(d)
    coef[3 + attributes.schema.index("lang.script.han")] = 3.0
    past = LogisticModel(keep=np.ones(d, bool), mean=np.zeros(d), scale=np.ones(d), coef=coef, bias=-2.0, l2=0.0)
    nxt = LogisticModel(keep=np.ones(3, bool), mean=np.zeros(3), scale=np.ones(3), coef=np.zeros(3), bias=-2.0, l2=0.0)
    return nxt, past


def _chains():
    return (MarkovModel.random(4, seed=71, concentration=1.0), MarkovModel.random(4, seed=72, concentration=0.4))


def test_attribute_scheduler_reads_attributes_and_equals_the_cut_fixed_round(attributes):
    target, draft = _chains()
    nxt, past = _models(attributes)
    sched = AcceptanceScheduler(nxt, past, threshold=0.5, attributes=attributes)
    n = 800
    ctx = torch.randint(0, 4, (n, 1), generator=torch.Generator().manual_seed(5))  # few distinct texts
    fixed = scheduled_round_batch(target, draft, ctx, 3, 1.0, torch.Generator().manual_seed(6))
    rec = scheduled_round_batch(target, draft, ctx, 3, 1.0, torch.Generator().manual_seed(6), sched)
    first_han = fixed.drafted[:, 0] == 0
    # after a Han first token 0.27 * 0.88 < 0.5: stop at 1; otherwise 0.88 * 0.88 >= 0.5: go on
    assert bool((rec.lengths[first_han] == 1).all()) and bool((rec.lengths[~first_han] >= 2).all())
    # the same lengths, computed from the fixed round alone (how the experiment tunes thresholds)
    attrs = np.stack(
        [
            attributes.last([np.r_[ctx[b].numpy(), fixed.drafted[b, : i + 1].numpy()] for b in range(n)])
            for i in range(3)
        ],
        axis=1,
    )
    sig = fixed.signals.numpy()
    a_past = 1 - past.predict(np.concatenate([sig, attrs], -1))
    a_next = 1 - nxt.predict(sig)
    lengths = stop_lengths_cumulative(a_past, a_next, 0.5)
    assert np.array_equal(lengths, rec.lengths.numpy())
    emitted, steps = cut_round(fixed.n_accepted.numpy(), lengths, 3)
    assert np.array_equal(emitted, rec.emitted.numpy()) and np.array_equal(steps, rec.draft_steps.numpy())
    mask, rejected = judged(rec)
    assert mask.sum(1).tolist() == np.minimum(rec.n_accepted.numpy() + 1, rec.lengths.numpy()).tolist()
    assert (rejected.sum(1) == (rec.n_accepted < rec.lengths).numpy()).all()


def test_attribute_scheduler_is_exact(attributes):
    """Joint of 2 tokens with the attribute-reading scheduler: chi-square passes; the draft's own
    joint is rejected by the same samples (negative control); round lengths really varied."""
    target, draft = _chains()
    nxt, past = _models(attributes)
    n = 12_000
    outs, st = speculative_generate_batch(
        target,
        draft,
        torch.ones((n, 1), dtype=torch.int64),
        2,
        gamma=3,
        generator=torch.Generator().manual_seed(131),
        scheduler=AcceptanceScheduler(nxt, past, 0.5, attributes=attributes),
    )
    assert len({x for s in st for x in s.proposed}) > 1
    codes = torch.tensor([o[0] * 4 + o[1] for o in outs])
    counts = torch.bincount(codes, minlength=16).double().numpy()
    t, d = target.transition, draft.transition
    for ref, ok in (((t[1][:, None] * t).reshape(-1), True), ((d[1][:, None] * d).reshape(-1), False)):
        pval = stats.chisquare(counts, ref.numpy() * n).pvalue
        assert (pval > PASS) if ok else (pval < FAIL)


def test_fixed_length_scheduler_and_signals():
    target, draft = _chains()
    ctx = torch.zeros((10, 1), dtype=torch.int64)
    rec = scheduled_round_batch(target, draft, ctx, 5, 0.0, torch.Generator().manual_seed(0), FixedLengthScheduler(2))
    assert rec.lengths.tolist() == [2] * 10 and rec.draft_steps.tolist() == [3] * 10 and rec.drafted.shape == (10, 2)
    sig = draft_signals(torch.tensor([[0.5, 0.3, 0.2], [1.0, 0.0, 0.0]], dtype=F64))
    np.testing.assert_allclose(sig.numpy(), [[0.5, 1.0296530, 0.2], [1.0, 0.0, 1.0]], atol=1e-6)
