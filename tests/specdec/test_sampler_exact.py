"""Unbiasedness of the speculative sampler (float64, seeded; DeepSpec PR #48 style).

Pass thresholds are p-value > 1e-6 (false-fail ~1e-6 per assert, and the seeds are fixed anyway);
every chi-square test has a negative control that must fail with p-value < 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from v22sdk.specdec.errors import DistributionError
from v22sdk.specdec.sampler import (
    ConfidenceRoundScheduler,
    confidence_scheduler,
    draft_signals,
    greedy_generate,
    sample_from,
    scheduled_round_batch,
    speculative_generate,
    speculative_generate_batch,
    speculative_round,
    speculative_round_batch,
    verify,
)
from v22sdk.specdec.toy import MarkovModel, TargetAsDraft, UniformDraft

F64 = torch.float64
PASS, FAIL = 1e-6, 1e-12


def dirichlet(v: int, seed: int, alpha: float = 1.0) -> torch.Tensor:
    x = np.random.default_rng(seed).dirichlet(np.full(v, alpha))
    return torch.tensor(x, dtype=F64)


def chi2_pvalue(tokens: torch.Tensor, probs: torch.Tensor) -> float:
    counts = torch.bincount(tokens, minlength=probs.numel()).double().numpy()
    expected = probs.numpy() * counts.sum()
    keep = expected > 0
    assert counts[~keep].sum() == 0, "a token with target probability 0 was emitted"
    return float(stats.chisquare(counts[keep], expected[keep]).pvalue)


def one_position(p: torch.Tensor, q: torch.Tensor, n: int, seed: int, proposal: torch.Tensor | None = None):
    """``n`` single-token rounds (gamma = 1): draw from ``proposal`` (default q), declare q."""
    g = torch.Generator().manual_seed(seed)
    u = torch.rand(3, n, generator=g, dtype=F64)
    src = q if proposal is None else proposal
    drafted = sample_from(src.expand(n, -1), u[0]).unsqueeze(1)
    pp = p.expand(n, 2, -1)
    verdict = verify(pp, q.expand(n, 1, -1), drafted, u[1].unsqueeze(1), u[2])
    emitted = torch.where(verdict.n_accepted == 1, drafted[:, 0], verdict.next_token)
    return emitted, verdict.n_accepted


def test_single_position_matches_target_and_acceptance_rate():
    p, q = dirichlet(8, 1), dirichlet(8, 2)
    n = 200_000
    emitted, n_acc = one_position(p, q, n, seed=3)
    assert chi2_pvalue(emitted, p) > PASS
    alpha = float(torch.minimum(p, q).sum())
    rate = float(n_acc.double().mean())
    assert abs(rate - alpha) < 5 * np.sqrt(alpha * (1 - alpha) / n)


def test_negative_control_proposal_not_from_declared_q_fails():
    """Tokens drawn from r != q while q is declared (the #31 bug pattern) must fail chi-square."""
    p, q, r = dirichlet(8, 1), dirichlet(8, 2), dirichlet(8, 4)
    n = 200_000
    # Analytic output distribution of the broken sampler, to record the test's power.
    ratio = torch.clamp(p / q, max=1.0)
    resid = (p - q).clamp(min=0)
    out = r * ratio + (r * (1 - ratio)).sum() * resid / resid.sum()
    noncentrality = n * float(((out - p) ** 2 / p).sum())
    assert noncentrality > 1000, "negative control lost its power; pick r further from q"
    emitted, _ = one_position(p, q, n, seed=3, proposal=r)
    assert chi2_pvalue(emitted, p) < FAIL


def test_zero_draft_probability_token_reached_through_residual():
    p = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=F64)
    q = torch.tensor([0.0, 0.5, 0.5, 0.0], dtype=F64)  # q(x)=0 where p(x)>0 for x = 0 and 3
    emitted, _ = one_position(p, q, 100_000, seed=5)
    assert chi2_pvalue(emitted, p) > PASS
    assert int((emitted == 0).sum()) > 0 and int((emitted == 3).sum()) > 0


def test_p_equal_q_never_rejects():
    p = dirichlet(8, 7)
    emitted, n_acc = one_position(p, p.clone(), 50_000, seed=6)
    assert bool((n_acc == 1).all())
    assert chi2_pvalue(emitted, p) > PASS


@pytest.mark.slow  # about 21 s on 2 cores: the default run must stay under 10 minutes in CI
def test_joint_distribution_of_three_tokens_on_markov_target():
    """Full loop (acceptance, residual, bonus), gamma = 3, all 125 joint outcomes of 3 tokens."""
    vocab, n = 5, 15_000
    target = MarkovModel.random(vocab, seed=11, concentration=3.0)
    draft = MarkovModel.random(vocab, seed=12, concentration=3.0)
    g = torch.Generator().manual_seed(13)
    ctx = torch.tensor([[0]])
    codes = []
    for _ in range(n):
        out, _ = speculative_generate(target, draft, ctx, 3, gamma=3, temperature=1.0, generator=g)
        codes.append(out[0] * 25 + out[1] * 5 + out[2])
    t = target.transition
    joint = (t[0][:, None, None] * t[:, :, None] * t[None, :, :]).reshape(-1)  # P(x1) P(x2|x1) P(x3|x2)
    assert float(joint.min()) * n > 4
    assert chi2_pvalue(torch.tensor(codes), joint) > PASS
    # Negative control: the draft's own joint distribution is rejected by the same test.
    d = draft.transition
    wrong = (d[0][:, None, None] * d[:, :, None] * d[None, :, :]).reshape(-1)
    assert chi2_pvalue(torch.tensor(codes), wrong) < FAIL


@pytest.mark.parametrize("gamma", [1, 4, 7])
def test_greedy_speculative_is_bit_identical_to_greedy(gamma):
    target = MarkovModel.random(12, seed=21, concentration=0.5)
    draft = MarkovModel.random(12, seed=22, concentration=0.5)
    for start in range(12):
        ctx = torch.tensor([[start]])
        ref = greedy_generate(target, ctx, 40)
        out, stats_ = speculative_generate(target, draft, ctx, 40, gamma=gamma, temperature=0.0)
        assert out == ref
        assert stats_.rounds <= 40


def test_target_as_draft_accepts_everything_tau_is_gamma_plus_one():
    target = MarkovModel.random(6, seed=31)
    gamma = 5
    out, st = speculative_generate(target, TargetAsDraft(target), torch.tensor([[0]]), 60, gamma=gamma)
    assert all(a == gamma for a in st.accepted)
    assert st.tau == gamma + 1 and len(out) == 60


@pytest.mark.slow  # about 6 s on 2 cores: the default run must stay under 10 minutes in CI
def test_uniform_draft_is_still_exact():
    target = MarkovModel.random(6, seed=41, concentration=0.3)
    g = torch.Generator().manual_seed(42)
    firsts = [
        speculative_generate(target, UniformDraft(6), torch.tensor([[2]]), 1, gamma=3, generator=g)[0][0]
        for _ in range(8000)
    ]
    assert chi2_pvalue(torch.tensor(firsts), target.transition[2]) > PASS


def test_eos_inside_accepted_prefix_truncates_output():
    # Deterministic chain 0 -> 1 -> 2 (EOS) -> 3 -> 3 ...; the draft is the target, so all 5 drafted
    # tokens [1, 2, 3, 3, 3] are accepted and EOS sits inside the accepted prefix.
    t = torch.zeros(4, 4, dtype=F64)
    t[0, 1] = t[1, 2] = t[2, 3] = t[3, 3] = 1.0
    target = MarkovModel(t)
    out, st = speculative_generate(target, TargetAsDraft(target), torch.tensor([[0]]), 20, gamma=5, eos_id=2)
    assert out == [1, 2]
    assert st.rounds == 1 and st.accepted == [5]


def test_draft_token_is_drawn_from_the_reported_q():
    """#31 regression: the token the sampler drafts is the inverse-CDF draw of the q it accepts with."""
    target = MarkovModel.random(9, seed=51)
    draft = TargetAsDraft(target)  # accepts everything, so emitted[:gamma] are the drafted tokens
    gamma, seed = 4, 52
    emitted, n, _ = speculative_round(
        target, draft, torch.tensor([[3]]), gamma, 1.0, torch.Generator().manual_seed(seed)
    )
    u = torch.rand(gamma, generator=torch.Generator().manual_seed(seed), dtype=F64)
    prev, expect = 3, []
    for k in range(gamma):
        prev = int(sample_from(target.transition[prev], u[k]))
        expect.append(prev)
    assert n == gamma and emitted[:gamma] == expect


# ----------------------------------------------------------------- scheduler non-anticipation


P_T = torch.tensor([0.7, 0.3], dtype=F64)
P_D = torch.tensor([0.5, 0.5], dtype=F64)


def test_lookahead_scheduler_is_biased_dspark_appendix_a():
    """Verifying only when the drawn token is A (else sampling the target) gives (0.85, 0.15)."""
    n = 100_000
    g = torch.Generator().manual_seed(61)
    u = torch.rand(3, n, generator=g, dtype=F64)
    drafted = sample_from(P_D.expand(n, -1), u[0]).unsqueeze(1)
    verdict = verify(P_T.expand(n, 2, -1), P_D.expand(n, 1, -1), drafted, u[1].unsqueeze(1), u[2])
    verified = torch.where(verdict.n_accepted == 1, drafted[:, 0], verdict.next_token)
    plain = sample_from(P_T.expand(n, -1), u[2])  # gamma = 0: one plain target sample
    emitted = torch.where(drafted[:, 0] == 0, verified, plain)  # the look-ahead decision
    share_a = float((emitted == 0).double().mean())
    assert abs(share_a - 0.85) < 5 * np.sqrt(0.85 * 0.15 / n)
    assert chi2_pvalue(emitted, P_T) < FAIL


@pytest.mark.slow  # about 14 s on 2 cores: the default run must stay under 10 minutes in CI
def test_causal_confidence_scheduler_is_exact():
    """A scheduler that sees q_k but not the token keeps the output exact (2-token joint)."""
    vocab, n = 4, 12_000
    target = MarkovModel.random(vocab, seed=71, concentration=1.0)
    draft = MarkovModel.random(vocab, seed=72, concentration=0.4)
    sched = confidence_scheduler(0.5)
    maxes = draft.transition.max(-1).values
    assert bool((maxes < 0.5).any()) and bool((maxes >= 0.5).any()), "scheduler would never/always stop"
    g = torch.Generator().manual_seed(73)
    codes, lengths = [], set()
    for _ in range(n):
        out, st = speculative_generate(target, draft, torch.tensor([[1]]), 2, gamma=3, generator=g, scheduler=sched)
        codes.append(out[0] * vocab + out[1])
        lengths.update(st.proposed)
    assert len(lengths) > 1  # it really varied the round length
    t = target.transition
    joint = (t[1][:, None] * t).reshape(-1)
    assert chi2_pvalue(torch.tensor(codes), joint) > PASS


# ----------------------------------------------------------------- batched scheduled rounds


def test_scheduled_round_without_scheduler_is_the_fixed_gamma_round():
    target = MarkovModel.random(7, seed=101, concentration=0.8)
    draft = MarkovModel.random(7, seed=102, concentration=0.8)
    ctx = torch.randint(0, 7, (500, 3), generator=torch.Generator().manual_seed(103))
    drafted, ref = speculative_round_batch(target, draft, ctx, 5, 1.0, torch.Generator().manual_seed(104))
    rec = scheduled_round_batch(target, draft, ctx, 5, 1.0, torch.Generator().manual_seed(104))
    assert torch.equal(rec.drafted, drafted) and torch.equal(rec.n_accepted, ref.n_accepted)
    assert torch.equal(rec.next_token, ref.next_token)
    assert bool((rec.lengths == 5).all()) and bool((rec.draft_steps == 5).all())
    assert rec.signals.shape == (500, 5, 3)


def test_verify_lengths_cut_the_round_and_end_with_a_bonus_from_p():
    """A row proposing g < G tokens: padding is never accepted and a full prefix ends with p[g]."""
    p = dirichlet(6, 111).expand(4, 4, -1).clone()
    q = p[:, :3].clone()
    p[:, 2] = torch.tensor([0, 0, 0, 0, 0, 1.0], dtype=F64)  # p >= q at token 5: it would be accepted
    drafted = torch.tensor([[0, 1, 5]] * 4)
    u = torch.full((4, 3), 0.5, dtype=F64)
    v = verify(p, q, drafted, u, torch.full((4,), 0.3, dtype=F64), lengths=torch.tensor([0, 1, 2, 3]))
    assert v.n_accepted.tolist() == [0, 1, 2, 3]
    assert int(v.next_token[2]) == 5  # drawn from p[2], not from a residual of the padding column
    same = verify(p, q, drafted, u, torch.full((4,), 0.3, dtype=F64), lengths=torch.full((4,), 3))
    full = verify(p, q, drafted, u, torch.full((4,), 0.3, dtype=F64))
    assert torch.equal(same.n_accepted, full.n_accepted) and torch.equal(same.next_token, full.next_token)
    with pytest.raises(DistributionError, match="lengths"):
        verify(p, q, drafted, u, u[:, 0], lengths=torch.tensor([0, 1, 2, 4]))


def test_scheduled_round_is_the_fixed_round_cut_at_its_length():
    """Same uniforms: a scheduled round proposes a prefix of the fixed round and ends where it is cut."""
    target = MarkovModel.random(6, seed=121, concentration=0.6)
    draft = MarkovModel.random(6, seed=122, concentration=0.3)
    ctx = torch.randint(0, 6, (2000, 2), generator=torch.Generator().manual_seed(123))
    fixed = scheduled_round_batch(target, draft, ctx, 4, 1.0, torch.Generator().manual_seed(124))
    rec = scheduled_round_batch(
        target, draft, ctx, 4, 1.0, torch.Generator().manual_seed(124), ConfidenceRoundScheduler(0.45)
    )
    assert len(set(rec.lengths.tolist())) > 2  # the scheduler really varied the round length
    assert torch.equal(rec.n_accepted, torch.minimum(fixed.n_accepted, rec.lengths))
    assert torch.equal(rec.draft_steps, torch.where(rec.lengths < 4, rec.lengths + 1, 4))
    g = rec.drafted.shape[1]
    assert torch.equal(rec.drafted, fixed.drafted[:, :g])
    torch.testing.assert_close(draft_signals(draft.transition)[ctx[:, -1], 0], rec.signals[:, 0, 0])


def _joint_pvalues(scheduler, temperature=1.0, n=12_000):
    vocab = 4
    target = MarkovModel.random(vocab, seed=71, concentration=1.0)
    draft = MarkovModel.random(vocab, seed=72, concentration=0.4)
    ctx = torch.ones((n, 1), dtype=torch.int64)
    outs, stats_ = speculative_generate_batch(
        target,
        draft,
        ctx,
        2,
        gamma=3,
        temperature=temperature,
        generator=torch.Generator().manual_seed(131),
        scheduler=scheduler,
    )
    codes = torch.tensor([o[0] * vocab + o[1] for o in outs])
    t, d = target.transition, draft.transition
    lengths = {x for s in stats_ for x in s.proposed}
    return (
        chi2_pvalue(codes, (t[1][:, None] * t).reshape(-1)),
        chi2_pvalue(codes, (d[1][:, None] * d).reshape(-1)),
        lengths,
    )


def test_batched_confidence_scheduler_is_exact():
    """Joint of 2 tokens through the batched generator with a causal scheduler: chi-square passes,
    and the draft's own joint is rejected by the same samples (negative control)."""
    ok, wrong, lengths = _joint_pvalues(ConfidenceRoundScheduler(0.5))
    assert len(lengths) > 1
    assert ok > PASS and wrong < FAIL


def test_batched_generation_greedy_is_bit_identical():
    target = MarkovModel.random(12, seed=21, concentration=0.5)
    draft = MarkovModel.random(12, seed=22, concentration=0.5)
    ctx = torch.arange(12).unsqueeze(1)
    outs, _ = speculative_generate_batch(
        target, draft, ctx, 30, gamma=4, temperature=0.0, scheduler=ConfidenceRoundScheduler(0.6)
    )
    assert outs == [greedy_generate(target, ctx[i : i + 1], 30) for i in range(12)]


# ----------------------------------------------------------------- bad input


def test_verify_rejects_bad_inputs():
    p = dirichlet(4, 1).expand(1, 2, -1)
    q = dirichlet(4, 2).expand(1, 1, -1).clone()
    tok = torch.tensor([[1]])
    u1, u0 = torch.zeros(1, 1, dtype=F64), torch.zeros(1, dtype=F64)
    q0 = q.clone()
    q0[0, 0, 1] = 0.0
    with pytest.raises(DistributionError, match="q = 0"):
        verify(p, q0, tok, u1, u0)
    with pytest.raises(DistributionError, match="negative"):
        verify(-p, q, tok, u1, u0)
    with pytest.raises(DistributionError, match="shape"):
        verify(p[:, :1], q, tok, u1, u0)
    with pytest.raises(DistributionError, match="temperature"):
        speculative_generate(MarkovModel.random(4, 1), UniformDraft(4), torch.tensor([[0]]), 3, temperature=-1.0)
