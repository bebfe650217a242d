"""Predicting rejection of drafted tokens, and schedulers that use the prediction (RFC hook 2).

Per drafted position the lab records the draft's own signals (:func:`~.sampler.draft_signals`:
max q, entropy, top-2 margin of its temperature-1 distribution) and, optionally, the 384
attribute values of the drafted character in its context (:mod:`.attributes`). A small
L2-regularised logistic model (:func:`fit_logistic`; numpy + scipy, no scikit-learn needed at run
time) turns either set, or both, into a probability of rejection; :func:`auroc` and :func:`ece`
score it on held-out positions.

Schedulers (all :class:`~.sampler.RoundScheduler`, all non-anticipating):

- :class:`AcceptanceScheduler`: keep drafting position ``k`` while the predicted probability that
  positions ``0..k`` are all accepted, ``prod_{i<k} a_past(i) * a_next(k)``, stays at or above a
  threshold. ``a_next`` uses only the draft's signals at ``k`` (token ``k`` is not drawn yet);
  ``a_past(i)`` may also use the attributes of the already drawn token ``i`` in its context.
  Without attributes it is the confidence-only version of the same rule.
- :class:`~.sampler.ConfidenceRoundScheduler`: stop when max q falls below a threshold.

Because every scheduler only cuts the fixed-gamma round (same uniforms, same tokens), the outcome
of any threshold can be computed from one fixed-gamma round (:func:`stop_lengths_cumulative`,
:func:`stop_lengths_confidence`, :func:`cut_round`); the experiment tunes thresholds that way on
validation rounds and then runs the chosen scheduler for real on test rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from v22sdk.specdec.sampler import RoundRecord, draft_signals

SIGNAL_NAMES = ("max_q", "entropy", "top2_margin")
L2_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
MIN_ACCEPT = 1e-6


# --------------------------------------------------------------------------- logistic model


@dataclass(frozen=True)
class LogisticModel:
    """``P(y = 1 | x) = sigmoid(bias + coef . z)``, ``z`` = the kept columns of ``x``, standardised.

    ``keep (D,)`` bool: columns that varied in the fitting data (the others carry no information);
    ``mean``/``scale``: their standardisation; ``coef`` the weights on standardised columns (so
    their sizes compare across features); ``l2`` the penalty chosen by cross-validation.
    """

    keep: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    bias: float
    l2: float

    def logit(self, x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=np.float64)[..., self.keep] - self.mean) / self.scale
        return z @ self.coef + self.bias

    def predict(self, x: np.ndarray) -> np.ndarray:
        """``x (..., D)`` -> probabilities ``(...)``."""
        return 1.0 / (1.0 + np.exp(-self.logit(x)))


def _fit(z: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    from scipy.optimize import minimize

    n, d = z.shape

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        t = z @ w[:d] + w[d]
        # log(1 + e^t) - y t, computed stably; its gradient is sigmoid(t) - y
        val = np.logaddexp(0.0, t) - y * t
        g = 1.0 / (1.0 + np.exp(-t)) - y
        grad = np.empty(d + 1)
        grad[:d] = z.T @ g / n + l2 * w[:d]
        grad[d] = g.mean()
        return float(val.mean() + 0.5 * l2 * w[:d] @ w[:d]), grad

    res = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return res.x[:d], float(res.x[d])


def _log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(-(y * np.log(p) + (1 - y) * np.log1p(-p)).mean())


def fit_logistic(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray | None = None, folds: int = 5, l2_grid: tuple[float, ...] = L2_GRID
) -> LogisticModel:
    """Fit on ``x (N, D)``, ``y (N,)`` in {0, 1}; the L2 penalty is chosen from ``l2_grid`` by
    ``folds``-fold cross-validated log-loss, folds made of whole ``groups`` (e.g. rounds, whose
    positions are correlated; default: each row its own group). Deterministic."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(f"x must be (N, D) and y (N,), got {x.shape} and {y.shape}")
    if len(np.unique(y)) < 2:
        raise ValueError("both classes are needed to fit a logistic model")
    sd = x.std(axis=0)
    keep = sd > 1e-9
    mean, scale = x[:, keep].mean(axis=0), sd[keep]
    z = (x[:, keep] - mean) / scale
    fold = (np.arange(len(y)) if groups is None else np.asarray(groups)) % folds
    best, best_loss = l2_grid[0], math.inf
    if len(l2_grid) > 1:
        for l2 in l2_grid:
            losses = []
            for f in range(folds):
                tr, te = fold != f, fold == f
                if not te.any() or len(np.unique(y[tr])) < 2:
                    continue
                w, b = _fit(z[tr], y[tr], l2)
                losses.append(_log_loss(1 / (1 + np.exp(-(z[te] @ w + b))), y[te]) * te.sum())
            cv = sum(losses) / len(y)
            if cv < best_loss - 1e-12:
                best, best_loss = l2, cv
    w, b = _fit(z, y, best)
    return LogisticModel(keep=keep, mean=mean, scale=scale, coef=w, bias=b, l2=best)


# --------------------------------------------------------------------------- scores


def auroc(score: np.ndarray, label: np.ndarray) -> float:
    """Area under the ROC curve of ``score`` for ``label == 1`` (ties count one half; NaN when a
    class is missing). Mann-Whitney form with average ranks."""
    from scipy.stats import rankdata

    score = np.asarray(score, dtype=np.float64)
    label = np.asarray(label).astype(bool)
    n1, n0 = int(label.sum()), int((~label).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    ranks = rankdata(score)
    return float((ranks[label].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def ece(prob: np.ndarray, label: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error: ``sum_b n_b/N |mean(prob_b) - mean(label_b)|`` over ``bins``
    equal-width bins of ``prob``."""
    prob = np.asarray(prob, dtype=np.float64)
    label = np.asarray(label, dtype=np.float64)
    idx = np.minimum((prob * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        m = idx == b
        if m.any():
            total += m.sum() * abs(prob[m].mean() - label[m].mean())
    return float(total / len(prob))


# --------------------------------------------------------------------------- positions of a round


def judged(rec: RoundRecord) -> tuple[np.ndarray, np.ndarray]:
    """``(judged (B, G), rejected (B, G))`` bool: position ``i`` was judged by the target when all
    before it were accepted (``i <= n_accepted``) and it was proposed (``i < length``); it was
    rejected when it is the first one that was not accepted."""
    g = rec.drafted.shape[1]
    pos = np.arange(g)[None, :]
    n_acc = rec.n_accepted.numpy()[:, None]
    length = rec.lengths.numpy()[:, None]
    was_judged = (pos <= n_acc) & (pos < length)
    return was_judged, was_judged & (pos == n_acc)


def past_features(signals: np.ndarray, attrs: np.ndarray | None) -> np.ndarray:
    """Features of a drawn token: its signals ``(..., 3)``, then its attributes ``(..., 384)`` if given."""
    return signals if attrs is None else np.concatenate([signals, attrs], axis=-1)


# --------------------------------------------------------------------------- schedulers


class FixedLengthScheduler:
    """Draft exactly ``length`` tokens per round (``length <= gamma``)."""

    def __init__(self, length: int):
        self.length = int(length)

    def start(self, contexts: torch.Tensor) -> None:  # noqa: ARG002
        return None

    def keep(self, k, drafted, q_k, q1_k, active):  # noqa: ARG002
        return torch.full((q1_k.shape[0],), k < self.length, dtype=torch.bool)


class AcceptanceScheduler:
    """Draft position ``k`` while ``prod_{i<k} a_past(i) * a_next(k) >= threshold`` (position 0
    always), where ``a = 1 - P(reject)`` of two fitted logistic models.

    ``next_model`` reads the draft's signals at ``k`` only; ``past_model`` reads the signals of the
    drawn token ``i`` and, when ``attributes`` (a :class:`~.attributes.ContextAttributes`) is given,
    its 384 attributes in the context ``context + drafted[:i+1]``. Nothing here sees token ``k``.
    """

    def __init__(self, next_model: LogisticModel, past_model: LogisticModel, threshold: float, attributes=None):
        self.next_model, self.past_model = next_model, past_model
        self.log_threshold = math.log(threshold) if threshold > 0 else -math.inf
        self.attributes = attributes
        self._contexts: np.ndarray | None = None
        self._log_s: np.ndarray | None = None
        self._prev: np.ndarray | None = None

    def start(self, contexts: torch.Tensor) -> None:
        self._contexts = contexts.numpy()
        self._log_s = np.zeros(contexts.shape[0])
        self._prev = None

    def keep(self, k, drafted, q_k, q1_k, active):  # noqa: ARG002
        sig = draft_signals(q1_k).numpy()
        if k > 0:
            act = np.flatnonzero(active.numpy())
            attrs = None
            if self.attributes is not None:
                rows = [np.concatenate([self._contexts[b], drafted[b].numpy()]) for b in act]
                attrs = self.attributes.last(rows)
            a_past = 1.0 - self.past_model.predict(past_features(self._prev[act], attrs))
            self._log_s[act] += np.log(np.maximum(a_past, MIN_ACCEPT))
        self._prev = sig
        if k == 0:
            return torch.ones(sig.shape[0], dtype=torch.bool)
        a_next = 1.0 - self.next_model.predict(sig)
        return torch.from_numpy(self._log_s + np.log(np.maximum(a_next, MIN_ACCEPT)) >= self.log_threshold)


def stop_lengths_cumulative(a_past: np.ndarray, a_next: np.ndarray, threshold: float) -> np.ndarray:
    """Lengths :class:`AcceptanceScheduler` proposes given per-position ``a_past``, ``a_next``
    ``(B, G)`` from a fixed-gamma round (same accumulation order as the scheduler)."""
    log_t = math.log(threshold) if threshold > 0 else -math.inf
    bsz, g = a_next.shape
    log_s = np.zeros(bsz)
    length = np.full(bsz, g)
    alive = np.ones(bsz, dtype=bool)
    for k in range(1, g):
        log_s = log_s + np.log(np.maximum(a_past[:, k - 1], MIN_ACCEPT))
        stop = alive & (log_s + np.log(np.maximum(a_next[:, k], MIN_ACCEPT)) < log_t)
        length[stop] = k
        alive &= ~stop
    return length


def stop_lengths_confidence(max_q: np.ndarray, threshold: float) -> np.ndarray:
    """Lengths :class:`~.sampler.ConfidenceRoundScheduler` proposes given ``max_q (B, G)``."""
    bsz, g = max_q.shape
    below = max_q < threshold
    below[:, 0] = False
    first = np.where(below.any(axis=1), below.argmax(axis=1), g)
    return first.astype(np.int64)


def cut_round(n_accepted: np.ndarray, lengths: np.ndarray, gamma: int) -> tuple[np.ndarray, np.ndarray]:
    """Outcome of a fixed-gamma round cut at ``lengths``: (tokens emitted, draft steps) per row."""
    emitted = np.minimum(n_accepted, lengths) + 1
    steps = np.where(lengths < gamma, lengths + 1, gamma)
    return emitted, steps
