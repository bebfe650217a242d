"""Calibration (temperature scaling, ECE) and the open-set scorer, on synthetic cases with known answers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from v22sdk.engine.calibration import (
    answer_lengths,
    ece_interval,
    expected_calibration_error,
    fit_temperature,
    reliability,
    string_confidence,
)
from v22sdk.engine.openset import (
    ConfidenceScorer,
    GaussianScorer,
    NeighbourScorer,
    auroc,
    auroc_interval,
    energy_score,
    features_of,
    scorer_from_state,
)
from v22sdk.engine.vocab import EOS, PAD


def _logits(ids: np.ndarray, margin: np.ndarray, vocab: int = 6) -> np.ndarray:
    """(N, P, V) logits whose argmax is ``ids`` with the given margin over every other entry."""
    n, p = ids.shape
    z = np.zeros((n, p, vocab))
    z[np.arange(n)[:, None], np.arange(p)[None, :], ids] = margin[:, None]
    return z


def test_string_confidence_is_the_product_up_to_the_end_marker():
    ids = np.array([[3, EOS, 4, 4], [3, 4, EOS, PAD], [3, 4, 5, 3]])
    z = _logits(ids, np.array([2.0, 2.0, 2.0]))
    got_ids, conf = string_confidence(z)
    assert (got_ids == ids).all()
    assert answer_lengths(ids).tolist() == [2, 3, 4]
    p = np.exp(2.0) / (np.exp(2.0) + 5)  # each position's largest probability
    np.testing.assert_allclose(conf, [p**2, p**3, p**4])
    # temperature changes the confidence, never the answer
    ids_t, conf_t = string_confidence(z, 4.0)
    assert (ids_t == ids).all() and (conf_t < conf).all()  # T > 1 softens


def test_decode_of_the_engine_agrees_with_string_confidence():
    from v22sdk.engine.train import decode
    from v22sdk.engine.vocab import OutputVocab

    vocab = OutputVocab.build(["七", "八九"], use_text_plugin=False)
    rng = np.random.default_rng(0)
    z = rng.normal(size=(5, 4, len(vocab))) * 3
    texts, confs = decode(torch.from_numpy(z).float(), vocab, temperature=1.7)
    _, conf = string_confidence(z, 1.7)
    np.testing.assert_allclose(confs, conf, rtol=1e-5)


def _miscalibrated(n: int, true_t: float, seed: int = 0):
    """Answers drawn from softmax(z / true_t): a model reporting softmax(z) is off by true_t."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 1, 5)) * 3.0
    p = np.exp(z[:, 0] / true_t)
    p /= p.sum(1, keepdims=True)
    truth = np.array([rng.choice(5, p=row) for row in p])
    z2 = np.concatenate([z, np.full((n, 1, 5), -50.0)], 1)  # position 1: certain <eos>
    z2[:, 1, EOS] = 50.0
    correct = z[:, 0].argmax(1) == truth
    return z2, correct, truth


def test_fit_temperature_recovers_the_temperature_that_made_the_data():
    z, correct, truth = _miscalibrated(4000, true_t=2.5)
    t = fit_temperature(z, correct)
    assert t == pytest.approx(2.5, rel=0.12)
    _, before = string_confidence(z)
    _, after = string_confidence(z, t)
    assert expected_calibration_error(after, correct) < 0.02 < expected_calibration_error(before, correct)
    targets = np.stack([truth, np.full(len(truth), EOS)], 1)
    assert fit_temperature(z, targets=targets, objective="token") == pytest.approx(2.5, rel=0.12)


def test_fit_temperature_stays_in_range_when_no_answer_is_wrong():
    z, _, _ = _miscalibrated(200, true_t=1.0)
    t = fit_temperature(z, np.ones(200, bool))
    assert 0.05 <= t <= 0.06  # as sure as it may get, not beyond


def test_ece_and_reliability_on_a_known_case():
    conf = np.array([0.95] * 10 + [0.55] * 10)
    correct = np.array([1] * 9 + [0] + [1] * 5 + [0] * 5, bool)
    rows = reliability(conf, correct)
    assert rows[9]["n"] == 10 and rows[9]["accuracy"] == pytest.approx(0.9)
    assert rows[5]["n"] == 10 and rows[5]["accuracy"] == pytest.approx(0.5)
    assert expected_calibration_error(conf, correct) == pytest.approx(0.05)
    lo, hi = ece_interval(conf, correct, resamples=300)
    assert lo <= 0.05 <= hi + 0.05 and hi < 0.4


def test_auroc_matches_its_definition_and_has_an_interval():
    a, b = np.array([0.0, 1, 2, 3]), np.array([2.0, 4, 5])
    # pairs (b > a): 2 vs {0,1} = 2 and a tie with 2 = 0.5; 4 and 5 beat all 4
    assert auroc(a, b) == pytest.approx((2.5 + 4 + 4) / 12)
    assert auroc(b + 100, a) == 0.0 and auroc(a, a) == pytest.approx(0.5)
    lo, hi = auroc_interval(
        np.random.default_rng(0).normal(size=200), np.random.default_rng(1).normal(2, 1, 200), resamples=300
    )
    assert lo < 0.92 < hi


def _clusters(seed=0):
    rng = np.random.default_rng(seed)
    means = {
        ("vision", "七"): np.r_[5.0, 0, 0, 0],
        ("vision", "八"): np.r_[-5.0, 0, 0, 0],
        ("audio", "七"): np.r_[0, 5.0, 0, 0],
    }
    x, labels, mods = [], [], []
    for (m, label), mu in means.items():
        x.append(mu + rng.normal(size=(200, 4)))
        labels += [label] * 200
        mods += [m] * 200
    return np.concatenate(x), labels, mods


def test_gaussian_scorer_finds_the_nearest_label_and_flags_far_inputs():
    x, labels, mods = _clusters()
    scorer = GaussianScorer.fit(x, labels, mods)
    val, vlabels, vmods = _clusters(seed=1)
    scores, nearest = scorer.score(val, vmods)
    assert nearest == vlabels  # every held-out point: its own cluster
    scorer.set_thresholds(scores, vmods)
    assert set(scorer.thresholds) == {"vision", "audio"}
    far = np.array([[0, 0, 30.0, 0], [0, 0, 0, -30.0]])
    far_scores, far_nearest = scorer.score(far, ["vision", "audio"])
    assert (far_scores > max(scorer.thresholds.values()) * 10).all()
    assert scorer.familiar(float(far_scores[0]), "vision") is False
    assert scorer.familiar(float(scores[0]), "vision") is True
    assert scorer.familiar(0.0, "text") is None  # a modality it never saw: no verdict
    inf, none = scorer.score(far[:1], ["text"])
    assert np.isinf(inf[0]) and none == [None]
    # familiar points score like chi-square with 4 degrees of freedom: ~95 % under the 0.95 quantile
    assert 0.9 < np.mean(scores <= np.array([scorer.thresholds[m] for m in vmods])) <= 0.97
    assert auroc(scores, far_scores) == 1.0


def test_gaussian_scorer_round_trips_through_a_weights_only_checkpoint(tmp_path):
    x, labels, mods = _clusters()
    scorer = GaussianScorer.fit(x, labels, mods, relative=True)
    scorer.set_thresholds(scorer.score(x, mods)[0], mods)
    path = tmp_path / "s.pt"
    torch.save({"open_set": scorer.to_state()}, path)
    back = GaussianScorer.from_state(torch.load(path, weights_only=True)["open_set"])
    probe = np.random.default_rng(3).normal(size=(7, 4)) * 4
    m = ["vision"] * 4 + ["audio"] * 3
    np.testing.assert_allclose(back.score(probe, m)[0], scorer.score(probe, m)[0], rtol=1e-4)
    assert back.thresholds == pytest.approx(scorer.thresholds) and back.method == "relative mahalanobis(sent_vec)"


def test_other_scores_order_inputs_as_they_should(tmp_path):
    z = np.zeros((2, 3, 4))
    z[0, 0, 1] = 10.0  # a peaked first position: familiar
    e = energy_score(z)
    assert e[0] < e[1]
    knn = NeighbourScorer.fit(np.array([[1.0, 0], [0, 1.0], [0.9, 0.1]]), ["七", "八", "七"], ["a", "a", "a"], k=1)
    k, near = knn.score(np.array([[1.0, 0.1], [-1.0, -1.0]]), ["a", "a"])
    assert k[0] < 0.01 < 1.0 < k[1] and near == ["七", "七"]
    msp = ConfidenceScorer("msp")
    feats = {"confidence": np.array([0.9, 0.2]), "decoded": ["七", "八"], "logits": z}
    s, n = msp.score(feats, ["a", "a"])
    np.testing.assert_allclose(s, [0.1, 0.8])
    assert n == ["七", "八"]
    # every kind round-trips through a weights-only checkpoint
    msp.thresholds = {"a": 0.5}
    for scorer in (knn, msp, ConfidenceScorer("energy")):
        torch.save({"o": scorer.to_state()}, tmp_path / "s.pt")
        back = scorer_from_state(torch.load(tmp_path / "s.pt", weights_only=True)["o"])
        assert type(back) is type(scorer) and back.method == scorer.method and back.thresholds == scorer.thresholds
        inp = {"sent_vec": np.array([[1.0, 0.1], [-1.0, -1.0]]), **feats}
        np.testing.assert_allclose(
            back.score(inp, ["a", "a"])[0], scorer.score(inp, ["a", "a"])[0], atol=1e-3
        )  # float16 bank


def test_features_of_averages_only_the_real_tokens():
    tokens = torch.zeros(1, 3, 640)
    tokens[0, 0, 5], tokens[0, 1, 5], tokens[0, 2, 5] = 1.0, 3.0, 100.0
    mask = torch.tensor([[True, True, False]])
    f = features_of({"sent_vec": torch.ones(1, 256), "logits": torch.zeros(1, 2, 4)}, tokens, mask, [0.5], ["七"])
    assert f["tokens"][0, 5] == 2.0 and f["confidence"].tolist() == [0.5] and f["decoded"] == ["七"]


def test_choose_calibration_prefers_per_modality_temperatures_when_modalities_differ():
    from v22sdk.engine.calibration import calibrated_confidence, choose_calibration, fit_calibration

    za, ca, ta = _miscalibrated(1500, true_t=0.4, seed=1)  # one modality under-confident
    zb, cb, tb = _miscalibrated(1500, true_t=3.0, seed=2)  # the other over-confident
    z, correct = np.concatenate([za, zb]), np.concatenate([ca, cb])
    targets = np.stack([np.r_[ta, tb], np.full(3000, EOS)], 1)
    mods = ["a"] * 1500 + ["b"] * 1500
    best, losses = choose_calibration(z, correct, targets, mods)
    assert best == "per_modality" and losses["per_modality"] < losses["global"]
    cal = fit_calibration("per_modality", z, correct, targets, mods)
    assert cal["per_modality"]["a"] == pytest.approx(0.4, rel=0.2) and cal["per_modality"]["b"] == pytest.approx(
        3.0, rel=0.2
    )
    conf = calibrated_confidence(z, cal, mods)
    assert expected_calibration_error(conf, correct) < 0.03


def test_choose_scorer_picks_the_one_that_separates_the_development_set():
    from v22sdk.engine.openset import choose_scorer

    x, labels, mods = _clusters()
    v, _, vmods = _clusters(seed=1)
    far = np.random.default_rng(5).normal(size=(60, 4)) * 2 + np.r_[0, 0, 12.0, 0]

    def feats(f, m, lab=None):
        z = np.zeros((len(f), 2, 4))
        d = {
            "sent_vec": f,
            "tokens": f,
            "logits": z,
            "confidence": np.full(len(f), 0.9),
            "decoded": ["七"] * len(f),
            "modalities": m,
        }
        return {**d, "labels": lab} if lab is not None else d

    best, table = choose_scorer(
        feats(x, mods, labels),
        feats(v, vmods),
        feats(far, ["vision"] * 60),
        ["photo"] * 60,
        candidates=("msp", "mahalanobis(sent_vec)"),
    )
    assert best == "mahalanobis(sent_vec)" and table[best]["photo"] == 1.0 and table["msp"]["photo"] == 0.5
