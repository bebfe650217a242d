"""The suite's classical baselines (v22sdk.engine.data.suite.baselines) and the statistics of the
experiment scripts (Holm, paired t-test, intervals, the transfer criterion's decision)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from v22sdk.contract import TokenBatch

pytest.importorskip("sklearn", reason="scikit-learn is not installed (pip install 'v22sdk[suite]')")
from v22sdk.engine.data.suite import baselines as bl  # noqa: E402

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def script(name: str):
    sys.path.insert(0, str(SCRIPTS))
    try:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS))


def batch(values: np.ndarray) -> TokenBatch:
    emb = np.zeros((len(values), 256), np.float32)
    emb[:, 0] = 1.0
    attr = np.zeros((len(values), 384), np.float32)
    attr[:, 0] = values
    return TokenBatch(emb, attr, "toy")


def test_token_features_are_mean_std_max_over_tokens():
    f = bl.token_features([batch(np.array([0.2, -0.4, 0.8])), batch(np.array([0.5]))])
    assert f.shape == (2, 1920)
    assert f[0, 256] == pytest.approx(0.2) and f[0, 640 + 256] == pytest.approx(np.std([0.2, -0.4, 0.8]))
    assert f[0, 1280 + 256] == pytest.approx(0.8) and f[0, 0] == 1.0 and f[0, 640] == 0.0
    assert f[1, 256] == f[1, 1280 + 256] == pytest.approx(0.5) and f[1, 640 + 256] == 0.0  # one token: std 0
    assert np.allclose(bl.mean_tokens([batch(np.array([0.2, 0.4]))])[0, 256], 0.3)


def test_logistic_regression_picks_c_on_val_and_predicts():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 5)) * 3
    y = np.repeat(np.array(["甲", "乙", "丙"]), 40)
    x = centres[np.repeat(np.arange(3), 40)] + rng.normal(size=(120, 5))
    tr, va, te = np.arange(0, 120, 3), np.arange(1, 120, 3), np.arange(2, 120, 3)
    predict, info = bl.fit_logistic(x[tr], y[tr], x[va], y[va])
    assert info["C"] in bl.C_GRID and set(info["val_accuracy"]) == {str(c) for c in bl.C_GRID}
    assert info["val_accuracy"][str(info["C"])] == max(info["val_accuracy"].values())
    assert np.mean(predict(x[te]) == y[te]) > 0.9
    # labels that the features do not predict: chance, not a perfect score
    shuffled = rng.permutation(y)
    predict, _ = bl.fit_logistic(x[tr], shuffled[tr], x[va], shuffled[va])
    assert np.mean(predict(x[te]) == shuffled[te]) < 0.7


def test_nearest_neighbour_is_cosine():
    train = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert list(bl.nearest_neighbour(train, ["东", "北"], np.array([[5.0, 1.0], [0.1, 0.2], [0.0, 0.0]]))) == [
        "东",
        "北",
        "东",
    ]  # scale does not matter; a zero row takes the first on a tie


def test_raw_features_from_real_files(tmp_path):
    import cv2
    import soundfile

    img = np.full((32, 32), 255, np.uint8)
    img[8:24, 14:18] = 0
    cv2.imwrite(str(tmp_path / "a.png"), img)
    cv2.imwrite(str(tmp_path / "b.png"), np.full((64, 64), 128, np.uint8))
    px = bl.pixel_features([tmp_path / "a.png", tmp_path / "b.png"])
    assert px.shape == (2, 1024) and px[0].min() == 0.0 and px[0].max() == 1.0
    assert np.allclose(px[1], 128 / 255)
    t = np.arange(22050) / 22050
    soundfile.write(str(tmp_path / "low.wav"), 0.3 * np.sin(2 * np.pi * 220 * t), 22050)
    soundfile.write(str(tmp_path / "high.wav"), 0.3 * np.sin(2 * np.pi * 1760 * t), 22050)
    m = bl.mfcc_features([tmp_path / "low.wav", tmp_path / "high.wav", tmp_path / "low.wav"])
    assert m.shape == (3, 80) and np.array_equal(m[0], m[2]) and not np.allclose(m[0], m[1])
    grams = bl.char_ngram_features(["七号", "seven"], {"test": ["第七", "eight"]})["test"]
    assert grams.shape[0] == 2 and grams[0].nnz > 0 and grams[1].nnz > 0  # 七 and e, ... are known


def test_holm_and_paired_t():
    ab = script("ablate_suite")
    adj = ab.holm({"a": 0.01, "b": 0.04, "c": 0.03})
    assert adj == pytest.approx({"a": 0.03, "c": 0.06, "b": 0.06})  # 3·0.01, 2·0.03, max(0.06, 1·0.04)
    assert ab.paired_p([0.0] * 5) == 1.0
    assert ab.paired_p([0.1, 0.12, 0.09, 0.11, 0.1]) < 0.001
    assert ab.paired_p([0.1, -0.1, 0.05, -0.05, 0.0]) > 0.5


def test_transfer_criterion_decisions():
    tr = script("eval_transfer")
    assert tr.decide([0.05, 0.06, 0.04, 0.05, 0.07])[0] == "supported"
    assert tr.decide([0.01, 0.012, 0.011, 0.009, 0.01])[0] == "not detected"  # above 0 but under the margin
    assert tr.decide([-0.05, -0.06, -0.04, -0.05, -0.07])[0] == "contradicted"
    assert tr.decide([0.1, -0.1, 0.05, -0.05, 0.0])[0] == "not detected"
    assert tr.CRITERION["primary_k"] in tr.CRITERION["k"] and tr.CRITERION["seeds"] == [0, 1, 2, 3, 4]


def test_interval_formatting():
    lab = script("suite_lab")
    mean, lo, hi = lab.t_interval([0.8, 0.9, 1.0])
    assert mean == pytest.approx(0.9) and lo == pytest.approx(0.9 - 4.303 * 0.1 / 3**0.5, abs=1e-3)
    assert lab.fmt_ci([0.5]) == "0.500 [0.500, 0.500]" and lab.fmt_ci([0.1, 0.3], signed=True).startswith("+0.200 [")


def _fake_seed(seed: int, acc: float) -> dict:
    ev = script("eval_suite")
    parts = ("handwriting", "speech", "instruments", "text", "all")
    return {
        "seed": seed,
        "n": {p: 10 for p in parts[:4]},
        "n_train": 100,
        "methods": {m: {"accuracy": {p: {"acc": acc, "n": 10} for p in parts}, "cpu_s": 1.0} for m in ev.METHODS},
    }


def test_eval_suite_combines_one_seed_per_process(tmp_path):
    ev = script("eval_suite")
    from v22sdk.evidence import read_result, write_result

    def part(name, seeds, epochs=30):
        data = {"size": "small", "epochs": epochs, "select_every": ev.SELECT_EVERY, "per_seed": seeds}
        return write_result(tmp_path / name, data, name="suite-accuracy")

    a = part("a.json", [_fake_seed(0, 0.5), _fake_seed(1, 0.7)])
    b = part("b.json", [_fake_seed(3, 0.9), _fake_seed(1, 0.7)])  # seed 1 twice, same figures: kept once
    out = tmp_path / "all.json"
    assert ev.main(["--combine", str(b), str(a), "--seeds", "4", "--out", str(out)]) == 0
    doc = read_result(out)
    assert doc["data"]["seeds"] == [0, 1, 3] and doc["data"]["seeds_planned"] == [0, 1, 2, 3]
    assert doc["data"]["complete"] is False and len(doc["data"]["combined_from"]) == 2
    assert doc["tables"]["accuracy"]["rows"][0][1].startswith("0.700 [")  # mean of 0.5, 0.7, 0.9
    with pytest.raises(SystemExit, match="differs"):  # the same seed with other figures
        ev.main(["--combine", str(a), str(part("c.json", [_fake_seed(0, 0.6)])), "--out", str(out)])
    with pytest.raises(SystemExit, match="epochs"):
        ev.main(["--combine", str(a), str(part("d.json", [_fake_seed(2, 0.6)], epochs=50)), "--out", str(out)])


def test_eval_transfer_combines_seed_groups(tmp_path):
    tr = script("eval_transfer")
    from v22sdk.evidence import read_result, write_result

    settings = {"size": "small", "seeds": 5, "k": [10], "min_epochs": 30, "min_steps": 600}

    def part(name, seeds, gain, **changed):
        runs = [
            {
                "seed": s,
                "k": 10,
                "condition": c,
                "test_acc": 0.5 + (gain * (s + 1) if c != "images" else 0.0),
                "lr_control": {"test_acc": 0.9},
            }
            for s in seeds
            for c in ("images", "images+speech+text")
        ]
        return write_result(tmp_path / name, {"runs": runs, "settings": settings | changed}, name="transfer")

    a, b = part("a.json", [0, 1, 2], 0.02), part("b.json", [3, 4], 0.02)
    out = tmp_path / "all.json"
    assert tr.main(["--k", "10", "--combine", str(a), str(b), "--out", str(out)]) == 0
    doc = read_result(out)
    assert doc["data"]["seeds_run"] == [0, 1, 2, 3, 4] and doc["criterion"] == tr.CRITERION
    assert doc["data"]["diffs"]["10"] == pytest.approx([0.02, 0.04, 0.06, 0.08, 0.10])
    assert doc["data"]["verdict"]["10"] == "supported"  # mean +0.06, interval above 0
    with pytest.raises(SystemExit, match="differs"):
        tr.main(["--k", "10", "--combine", str(a), str(part("c.json", [2], 0.05)), "--out", str(out)])
    with pytest.raises(SystemExit, match="settings"):
        tr.main(["--k", "10", "--combine", str(a), str(part("d.json", [3], 0.02, min_steps=5)), "--out", str(out)])
