"""The open set: a score for "this input is unlike anything the checkpoint was trained on".

A trained engine answers *something* for every input: a photo of a cat gets a digit's label. The
scorer here measures how far an input's features lie from the training data, and a threshold
fitted on the validation split turns that into "familiar" or "unfamiliar".

The shipped method is a class-conditional Gaussian on the engine's pooled ``sent_vec`` (Lee et
al. 2018, "Mahalanobis"): one mean per (modality, label) of the training split, one covariance per
modality pooled over its labels, shrunk towards a multiple of the identity. An input's score is
its smallest squared Mahalanobis distance to a mean of its modality; the label of that mean is
the *nearest label*. Other scores (the answer's confidence, energy, nearest neighbours, distances
on the raw tokens) are implemented here too, so ``scripts/measure_confidence.py`` can compare
them on the same inputs; which one ships, and why, is in docs/results.md ("Calibration and the
open set").

The threshold of a modality is the ``QUANTILE`` quantile of the validation split's scores: by
construction about 5 % of familiar inputs are called unfamiliar (the false-alarm rate is measured
on the test split and reported with the AUROC).

Everything a checkpoint stores is plain tensors, numbers, strings and lists
(:meth:`GaussianScorer.to_state` / :meth:`GaussianScorer.from_state`), so it loads with
``torch.load(weights_only=True)``. Scoring one input is a few small matrix products in numpy.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

#: the validation quantile that sets a modality's threshold (≈ 5 % false alarms on familiar inputs)
QUANTILE = 0.95
#: shrinkage of each modality's covariance towards (trace / D) · I: the classes have a few hundred
#: examples in 256 dimensions, and a bare sample covariance would be singular
SHRINKAGE = 0.1


def _as_np(x) -> np.ndarray:
    return x.detach().float().cpu().numpy() if hasattr(x, "detach") else np.asarray(x, dtype=np.float64)


class GaussianScorer:
    """Class-conditional Gaussians with one shared covariance per modality.

    ``score(features (N, D), modalities)`` → (scores (N,), nearest labels); a modality the scorer
    has no statistics for scores ``inf`` (nothing of it was ever seen).
    """

    def __init__(self, feature: str, groups: list[tuple[str, str]], means: np.ndarray,
                 precisions: dict[str, np.ndarray], thresholds: dict[str, float] | None = None,
                 *, relative: bool = False, backgrounds: dict[str, tuple[np.ndarray, np.ndarray]] | None = None):
        self.feature = feature
        self.groups = [(str(m), str(label)) for m, label in groups]
        self.means = np.asarray(means, dtype=np.float64)
        self.precisions = {m: np.asarray(p, dtype=np.float64) for m, p in precisions.items()}
        self.thresholds = dict(thresholds or {})
        self.relative = relative
        self.backgrounds = backgrounds or {}

    @property
    def method(self) -> str:
        return f"{'relative ' if self.relative else ''}mahalanobis({self.feature})"

    @classmethod
    def fit(cls, features, labels: Sequence[str], modalities: Sequence[str], *, feature: str = "sent_vec",
            shrinkage: float = SHRINKAGE, relative: bool = False) -> "GaussianScorer":
        x = _as_np(features).astype(np.float64)
        labels, modalities = list(labels), list(modalities)
        groups = sorted(set(zip(modalities, labels)))
        means = np.stack([x[[i for i, g in enumerate(zip(modalities, labels)) if g == grp]].mean(0) for grp in groups])
        index = {g: k for k, g in enumerate(groups)}
        precisions, backgrounds = {}, {}
        for mod in sorted(set(modalities)):
            rows = [i for i, m in enumerate(modalities) if m == mod]
            centred = x[rows] - means[[index[(mod, labels[i])] for i in rows]]
            precisions[mod] = _shrunk_inverse(centred, shrinkage)
            if relative:
                mu = x[rows].mean(0)
                backgrounds[mod] = (mu, _shrunk_inverse(x[rows] - mu, shrinkage))
        return cls(feature, groups, means, precisions, relative=relative, backgrounds=backgrounds)

    def score(self, features, modalities: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        x = _as_np(features).astype(np.float64)
        scores = np.full(len(x), np.inf)
        nearest: list[str | None] = [None] * len(x)
        for mod in set(modalities):
            rows = [i for i, m in enumerate(modalities) if m == mod]
            ks = [k for k, (m, _) in enumerate(self.groups) if m == mod]
            if not ks or mod not in self.precisions:
                continue
            prec = self.precisions[mod]
            d = x[rows][:, None, :] - self.means[ks][None, :, :]                 # (n, G_mod, D)
            dist = np.einsum("ngd,de,nge->ng", d, prec, d)
            best = dist.argmin(1)
            s = dist[np.arange(len(rows)), best]
            if self.relative and mod in self.backgrounds:
                mu, bprec = self.backgrounds[mod]
                b = x[rows] - mu
                s = s - np.einsum("nd,de,ne->n", b, bprec, b)
            scores[rows] = s
            for r, k in zip(rows, best):
                nearest[r] = self.groups[ks[k]][1]
        return scores, nearest

    def set_thresholds(self, scores: np.ndarray, modalities: Sequence[str], quantile: float = QUANTILE) -> None:
        """Each modality's threshold: the ``quantile`` quantile of its (validation) scores."""
        scores = np.asarray(scores, dtype=np.float64)
        for mod in sorted(set(modalities)):
            s = scores[[i for i, m in enumerate(modalities) if m == mod]]
            s = s[np.isfinite(s)]
            if s.size:
                self.thresholds[mod] = float(np.quantile(s, quantile))

    def familiar(self, score: float, modality: str) -> bool | None:
        t = self.thresholds.get(modality)
        return None if t is None else bool(score <= t)

    # -- the checkpoint's form: plain tensors, numbers, strings and lists ---------------------------
    def to_state(self) -> dict[str, Any]:
        import torch

        mods = sorted(self.precisions)
        state = {"method": "mahalanobis", "feature": self.feature, "relative": self.relative,
                 "groups": [list(g) for g in self.groups], "modalities": mods,
                 "means": torch.from_numpy(self.means.astype(np.float32)),
                 "precisions": torch.from_numpy(np.stack([self.precisions[m] for m in mods]).astype(np.float32)),
                 "thresholds": {m: float(t) for m, t in self.thresholds.items()}, "quantile": QUANTILE}
        if self.relative:
            state["background_means"] = torch.from_numpy(np.stack([self.backgrounds[m][0] for m in mods]).astype(np.float32))
            state["background_precisions"] = torch.from_numpy(
                np.stack([self.backgrounds[m][1] for m in mods]).astype(np.float32))
        return state

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "GaussianScorer":
        mods = list(state["modalities"])
        prec = _as_np(state["precisions"])
        backgrounds = {}
        if state.get("relative"):
            bm, bp = _as_np(state["background_means"]), _as_np(state["background_precisions"])
            backgrounds = {m: (bm[i], bp[i]) for i, m in enumerate(mods)}
        return cls(state["feature"], [tuple(g) for g in state["groups"]], _as_np(state["means"]),
                   {m: prec[i] for i, m in enumerate(mods)}, dict(state.get("thresholds", {})),
                   relative=bool(state.get("relative")), backgrounds=backgrounds)


def _shrunk_inverse(centred: np.ndarray, shrinkage: float) -> np.ndarray:
    """Inverse of the sample covariance of ``centred`` (n, D) shrunk towards (trace / D) · I."""
    n, dim = centred.shape
    cov = centred.T @ centred / max(n - 1, 1)
    scale = float(np.trace(cov)) / dim
    if scale <= 0:
        scale = 1.0
    cov = (1 - shrinkage) * cov + shrinkage * scale * np.eye(dim)
    return np.linalg.inv(cov)


# -- the other candidate scores (compared in scripts/measure_confidence.py) ---------------------------

def energy_score(logits, temperature: float = 1.0) -> np.ndarray:
    """Negative free energy of the first output position, −T·logsumexp(z / T) (Liu et al. 2020),
    negated so that higher means less familiar."""
    z = _as_np(logits).astype(np.float64)[:, 0, :] / temperature
    m = z.max(-1)
    return -(temperature * (m + np.log(np.exp(z - m[:, None]).sum(-1))))


def knn_score(train_features, features, train_modalities: Sequence[str], modalities: Sequence[str],
              k: int = 1) -> np.ndarray:
    """Cosine distance to the k-th nearest training example of the same modality (Sun et al. 2022)."""
    a = _as_np(train_features).astype(np.float64)
    b = _as_np(features).astype(np.float64)
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    out = np.full(len(b), np.inf)
    tm = np.asarray(train_modalities)
    for mod in set(modalities):
        rows = [i for i, m in enumerate(modalities) if m == mod]
        bank = a[tm == mod]
        if not len(bank):
            continue
        sim = b[rows] @ bank.T
        kk = min(k, bank.shape[0])
        out[rows] = 1.0 - np.sort(sim, axis=1)[:, -kk]
    return out


def auroc(familiar_scores, unfamiliar_scores) -> float:
    """Area under the ROC curve of telling unfamiliar (higher score) from familiar inputs: the
    probability that a random unfamiliar input scores above a random familiar one (ties count ½)."""
    a = np.asarray(familiar_scores, dtype=np.float64)
    b = np.asarray(unfamiliar_scores, dtype=np.float64)
    if not a.size or not b.size:
        return float("nan")
    a = np.sort(a)
    below = np.searchsorted(a, b, side="left")          # familiar scores strictly below each b
    not_above = np.searchsorted(a, b, side="right")     # ... and those equal to it, counted half
    return float((below + not_above).sum() / (2.0 * a.size * b.size))


def auroc_interval(familiar_scores, unfamiliar_scores, *, resamples: int = 2000, seed: int = 0,
                   level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the AUROC (each group resampled on its own)."""
    a = np.asarray(familiar_scores, dtype=np.float64)
    b = np.asarray(unfamiliar_scores, dtype=np.float64)
    rng = np.random.default_rng(seed)
    stats = [auroc(a[rng.integers(0, a.size, a.size)], b[rng.integers(0, b.size, b.size)])
             for _ in range(resamples)]
    q = (1 - level) / 2
    return float(np.quantile(stats, q)), float(np.quantile(stats, 1 - q))
