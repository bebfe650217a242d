"""Classical baselines for the suite, on identical splits: what a standard model gets from the same
640-D tokens, from the raw signal, and a nearest neighbour with no training.

* :func:`token_features`: per input, the mean, standard deviation and maximum over its tokens of
  each of the 640 token values (1,920 numbers; one token gives std 0 and max = mean);
* raw signals, the field's standard cheap representation: :func:`pixel_features` (the PNG's grey
  pixels), :func:`mfcc_features` (20 MFCCs and their deltas at 16 kHz, mean and standard
  deviation over frames: 80 numbers), :func:`char_ngram_features` (TF-IDF of character 1–3-grams,
  fitted on the training texts);
* :func:`fit_logistic`: standardised features, multinomial logistic regression (L2), with C
  picked from a fixed grid by accuracy on the val split, then refitted on train only;
* :func:`nearest_neighbour`: 1-NN by cosine similarity of the mean token (640), no training.

Needs scikit-learn (the ``suite`` extra) and, for MFCCs, librosa (the ``test`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

C_GRID = (0.01, 0.1, 1.0, 10.0)


def token_features(batches) -> np.ndarray:
    """(N, 1920) float64: mean, std and max over each input's tokens of the 640 values."""
    out = np.zeros((len(batches), 3 * 640))
    for i, b in enumerate(batches):
        t = np.concatenate([b.emb, b.attr], axis=1).astype(np.float64)  # (L, 640)
        out[i] = np.concatenate([t.mean(0), t.std(0), t.max(0)])
    return out


def mean_tokens(batches) -> np.ndarray:
    """(N, 640) float64: the mean token of each input."""
    return np.stack([np.concatenate([b.emb, b.attr], axis=1).astype(np.float64).mean(0) for b in batches])


def pixel_features(paths: Sequence[str], size: int = 32) -> np.ndarray:
    """(N, size²) grey pixels in [0, 1] (OpenCV decodes; resized with INTER_AREA when not size×size)."""
    import cv2

    out = np.zeros((len(paths), size * size))
    for i, p in enumerate(paths):
        img = cv2.imread(str(p), cv2.IMREAD_GRAYSCALE)
        if img is None:
            from ....errors import InputError

            raise InputError(str(p), "not a readable image")
        if img.shape != (size, size):
            img = cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA)
        out[i] = img.ravel() / 255.0
    return out


def mfcc_features(paths: Sequence[str], rate: int = 16000, n_mfcc: int = 20) -> np.ndarray:
    """(N, 4·n_mfcc): mean and std over frames of the MFCCs and of their deltas (librosa; 25 ms
    windows, 10 ms hop, at ``rate`` after a polyphase resample of the mono mix)."""
    from math import gcd

    import librosa
    import soundfile
    from scipy.signal import resample_poly

    out = np.zeros((len(paths), 4 * n_mfcc))
    for i, p in enumerate(paths):
        x, sr = soundfile.read(str(p), dtype="float64", always_2d=True)
        x = x.mean(1)
        if sr != rate:
            g = gcd(sr, rate)
            x = resample_poly(x, rate // g, sr // g)
        m = librosa.feature.mfcc(
            y=x.astype(np.float32), sr=rate, n_mfcc=n_mfcc, n_fft=512, win_length=400, hop_length=160
        )
        d = (
            librosa.feature.delta(m, width=min(9, m.shape[1] - (1 - m.shape[1] % 2)))
            if m.shape[1] >= 3
            else np.zeros_like(m)
        )
        out[i] = np.concatenate([m.mean(1), m.std(1), d.mean(1), d.std(1)])
    return out


def char_ngram_features(train_texts: Sequence[str], texts_by_split: dict[str, Sequence[str]]):
    """TF-IDF of character 1–3-grams (fitted on ``train_texts``) → {split: sparse matrix}."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(analyzer="char", ngram_range=(1, 3), lowercase=False, sublinear_tf=True)
    vec.fit(train_texts)
    return {k: vec.transform(list(v)) for k, v in texts_by_split.items()}


def fit_logistic(x_train, y_train, x_val, y_val, *, grid: Sequence[float] = C_GRID, seed: int = 0):
    """Multinomial L2 logistic regression on standardised features, C picked on val.

    Returns ``(predict, info)``: ``predict(x) → labels`` and ``{"C", "val_accuracy": {C: acc}}``.
    Sparse inputs (TF-IDF) are not standardised (their scale is already comparable)."""
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    y_train, y_val = np.asarray(y_train), np.asarray(y_val)
    sparse = sp.issparse(x_train)

    def make(c: float):
        lr = LogisticRegression(C=c, max_iter=3000, random_state=seed)
        return lr if sparse else make_pipeline(StandardScaler(), lr)

    scores = {}
    for c in grid:
        model = make(c).fit(x_train, y_train)
        scores[c] = float(np.mean(model.predict(x_val) == y_val)) if len(y_val) else 0.0
    best = max(grid, key=lambda c: (scores[c], -abs(np.log10(c))))  # ties: the C nearest 1
    model = make(best).fit(x_train, y_train)
    return model.predict, {"C": best, "val_accuracy": {str(c): s for c, s in scores.items()}}


def nearest_neighbour(x_train: np.ndarray, y_train: Sequence[str], x: np.ndarray) -> np.ndarray:
    """The label of each row of ``x``'s most cosine-similar training row (ties: the first)."""

    def unit(a):
        n = np.linalg.norm(a, axis=1, keepdims=True)
        return a / np.where(n > 0, n, 1.0)

    sims = unit(x) @ unit(x_train).T
    return np.asarray(y_train)[sims.argmax(1)]
