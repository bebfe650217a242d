"""Calibrated confidence: temperature scaling of P6's logits, fitted on a calibration split.

P6 decodes every output position in parallel and independently given the input, so the
probability the engine gives its answer is the product, over the answer's characters and its
``<eos>``, of each position's largest softmax probability (:func:`string_confidence`). A trained
engine is over-confident: on held-out inputs "1.000" is wrong too often. Temperature scaling
(Guo et al. 2017) divides every logit by one number ``T`` fitted on held-out data; it changes no
answer (the argmax of each position stays), only how sure the engine says it is.

``T`` is fitted on the checkpoint's validation split (the calibration split; never the test
split, which measures the result) by minimising the log loss of the *statement the engine
prints*: "my answer is right with probability c". The answers' correctness is fixed (it does not
depend on T), so this is a one-parameter logistic fit of exact match on the string's confidence,
found by a deterministic search over log T in [1/20, 20]. (The token-level alternative, the
cross-entropy of every target character, is available as ``objective="token"``; the measurement
that chose between them is in docs/results.md, "Calibration and the open set".)

Shapes: ``logits`` (N, P, V) float; ``ids`` (N, P) int (the argmax per position); ``targets``
(N, P) int, padded with ``PAD`` after ``<eos>``. This module needs torch only for tensors passed
in; the fitting itself is numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .vocab import EOS, PAD

#: the search range of T: beyond it a checkpoint is broken, not miscalibrated
T_MIN, T_MAX = 0.05, 20.0
#: equal-width confidence bins of the expected calibration error and the reliability diagram
ECE_BINS = 10


def _np(x) -> np.ndarray:
    return x.detach().float().cpu().numpy() if hasattr(x, "detach") else np.asarray(x, dtype=np.float64)


def log_softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64) / temperature
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def answer_lengths(ids: np.ndarray) -> np.ndarray:
    """(N,) positions that make up each decoded answer: its characters plus the ``<eos>``
    (or ``<pad>``) that ends it, or all P positions when nothing ends it."""
    ids = np.asarray(ids)
    stop = (ids == EOS) | (ids == PAD)
    first = np.where(stop.any(1), stop.argmax(1), ids.shape[1] - 1)
    return first + 1


def string_confidence(logits, temperature: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(ids (N, P), confidence (N,)): the decoded ids and the probability of the decoded string
    (the product of each position's largest probability, up to and including its end marker)."""
    lp = log_softmax(_np(logits), temperature)
    ids = lp.argmax(-1)
    best = lp.max(-1)  # (N, P) log-probabilities
    n = answer_lengths(ids)
    keep = np.arange(ids.shape[1])[None, :] < n[:, None]
    return ids, np.exp((best * keep).sum(1))


def _token_nll(lp_fn, targets: np.ndarray) -> Any:
    valid = targets != PAD
    safe = np.where(valid, targets, 0)

    def loss(t: float) -> float:
        lp = lp_fn(t)
        picked = np.take_along_axis(lp, safe[..., None], -1)[..., 0]
        return float(-(picked * valid).sum() / max(valid.sum(), 1))

    return loss


def fit_temperature(
    logits, correct: Sequence[bool] | np.ndarray | None = None, targets=None, *, objective: str = "string"
) -> float:
    """The temperature that minimises the calibration split's log loss.

    ``objective="string"`` (the default) needs ``correct`` (N,) — whether each decoded answer is
    the target — and fits the printed confidence to it; ``"token"`` needs ``targets`` (N, P) and
    minimises the cross-entropy of the target characters (standard temperature scaling).
    """
    z = _np(logits).astype(np.float64)
    if objective == "string":
        if correct is None:
            raise ValueError("objective='string' needs correct")
        y = np.asarray(correct, dtype=np.float64)

        def loss(t: float) -> float:
            _, c = string_confidence(z, t)
            c = np.clip(c, 1e-12, 1 - 1e-12)
            return float(-(y * np.log(c) + (1 - y) * np.log1p(-c)).mean())
    elif objective == "token":
        if targets is None:
            raise ValueError("objective='token' needs targets")
        loss = _token_nll(lambda t: log_softmax(z, t), np.asarray(_np(targets), dtype=np.int64))
    else:
        raise ValueError(f"objective must be 'string' or 'token', not {objective!r}")
    # a coarse grid over log T, then golden-section refinement around its best point: deterministic,
    # and safe for the flat or one-sided losses a split with no errors gives
    grid = np.exp(np.linspace(np.log(T_MIN), np.log(T_MAX), 121))
    values = [loss(float(t)) for t in grid]
    i = int(np.argmin(values))
    lo, hi = np.log(grid[max(i - 1, 0)]), np.log(grid[min(i + 1, len(grid) - 1)])
    g = (np.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = loss(float(np.exp(a))), loss(float(np.exp(b)))
    for _ in range(40):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = loss(float(np.exp(a)))
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = loss(float(np.exp(b)))
    best = float(np.exp((lo + hi) / 2))
    return best if loss(best) <= values[i] else float(grid[i])


def reliability(confidence, correct, bins: int = ECE_BINS) -> list[dict[str, Any]]:
    """Per equal-width confidence bin (the last one closed): n, mean confidence, accuracy (None when empty)."""
    c = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(correct, dtype=np.float64)
    which = np.minimum((c * bins).astype(np.int64), bins - 1)
    out = []
    for k in range(bins):
        sel = which == k
        n = int(sel.sum())
        out.append(
            {
                "lo": k / bins,
                "hi": (k + 1) / bins,
                "n": n,
                "confidence": float(c[sel].mean()) if n else None,
                "accuracy": float(y[sel].mean()) if n else None,
            }
        )
    return out


def expected_calibration_error(confidence, correct, bins: int = ECE_BINS) -> float:
    """ECE: the n-weighted mean |accuracy − mean confidence| over equal-width confidence bins."""
    c = np.asarray(confidence, dtype=np.float64)
    if c.size == 0:
        return float("nan")
    rows = reliability(c, correct, bins)
    return float(sum(r["n"] * abs(r["accuracy"] - r["confidence"]) for r in rows if r["n"]) / c.size)


def ece_interval(
    confidence, correct, *, bins: int = ECE_BINS, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the ECE (examples resampled with replacement). The ECE of a
    finite sample is biased upwards (noise alone puts accuracy off the mean confidence), so the
    interval is conservative for "ECE ≤ target"."""
    c = np.asarray(confidence, dtype=np.float64)
    y = np.asarray(correct, dtype=np.float64)
    rng = np.random.default_rng(seed)
    stats = [
        expected_calibration_error(c[idx], y[idx], bins)
        for idx in (rng.integers(0, c.size, c.size) for _ in range(resamples))
    ]
    a = (1 - level) / 2
    return float(np.quantile(stats, a)), float(np.quantile(stats, 1 - a))


#: the calibration methods :func:`choose_calibration` compares
METHODS = ("global", "token", "per_modality")


def log_loss(confidence, correct) -> float:
    """Mean log loss of the statement "right with probability c" (the string objective)."""
    c = np.clip(np.asarray(confidence, dtype=np.float64), 1e-12, 1 - 1e-12)
    y = np.asarray(correct, dtype=np.float64)
    return float(-(y * np.log(c) + (1 - y) * np.log1p(-c)).mean())


def fit_calibration(method: str, logits, correct, targets, modalities: Sequence[str]) -> dict[str, Any]:
    """The stored form of a calibration: ``{"temperature": T}``, plus ``"per_modality"``: {m: T_m}."""
    z = _np(logits)
    if method == "global":
        return {"temperature": fit_temperature(z, correct)}
    if method == "token":
        return {"temperature": fit_temperature(z, targets=targets, objective="token")}
    if method == "per_modality":
        mods = np.asarray(list(modalities))
        y = np.asarray(correct)
        return {
            "temperature": fit_temperature(z, y),
            "per_modality": {m: fit_temperature(z[mods == m], y[mods == m]) for m in sorted(set(mods.tolist()))},
        }
    raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")


def calibrated_confidence(logits, calibration: dict[str, Any], modalities: Sequence[str]) -> np.ndarray:
    """(N,) confidences under a stored calibration (:func:`fit_calibration`)."""
    z = _np(logits)
    per = calibration.get("per_modality") or {}
    out = np.empty(len(z))
    for m in set(modalities):
        rows = np.array([i for i, mm in enumerate(modalities) if mm == m])
        out[rows] = string_confidence(z[rows], per.get(m, calibration["temperature"]))[1]
    return out


def choose_calibration(
    logits, correct, targets, modalities: Sequence[str], *, folds: int = 5, seed: int = 0
) -> tuple[str, dict[str, float]]:
    """The method of :data:`METHODS` with the lowest ``folds``-fold cross-validated log loss on
    the calibration split (each fold scored by a calibration fitted on the others), and every
    method's loss. Uses the calibration split only: the test split never chooses."""
    z = _np(logits)
    y = np.asarray(correct)
    tg = np.asarray(_np(targets), dtype=np.int64)
    mods = list(modalities)
    order = np.random.default_rng(seed).permutation(len(z))
    parts = np.array_split(order, folds)
    losses = {}
    for method in METHODS:
        total = 0.0
        for k in range(folds):
            held = parts[k]
            fit_idx = np.concatenate([parts[j] for j in range(folds) if j != k])
            cal = fit_calibration(method, z[fit_idx], y[fit_idx], tg[fit_idx], [mods[i] for i in fit_idx])
            conf = calibrated_confidence(z[held], cal, [mods[i] for i in held])
            total += log_loss(conf, y[held]) * len(held)
        losses[method] = total / len(z)
    return min(METHODS, key=lambda m: (losses[m], METHODS.index(m))), losses


def wilson_interval(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval (95 % by default) of a proportion ``k / n``; (0, 1) when n = 0."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))
