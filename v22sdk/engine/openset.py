"""The open set: a score for "this input is unlike anything the checkpoint was trained on".

A trained engine answers *something* for every input: a photo of a cat gets a digit's label. A
scorer here measures how unlike the training data an input is (higher: less familiar), and a
threshold fitted on the validation split turns that into "familiar" or "unfamiliar".

Scorers (each ``score(features, modalities) -> (scores, nearest labels)``, where ``features`` is
:func:`features_of` one forward pass):

* :class:`GaussianScorer` — class-conditional Gaussians (Lee et al. 2018, "Mahalanobis"): one mean
  per (modality, label) of the training split, one covariance per modality pooled over its labels
  and shrunk towards a multiple of the identity; the score is the smallest squared Mahalanobis
  distance to a mean of the input's modality, the *nearest label* that mean's. ``relative``
  subtracts the distance to one Gaussian of the whole modality (Ren et al. 2021). The feature is
  the engine's pooled ``sent_vec`` or the input's mean token (``tokens``: the raw 640 values);
* :class:`NeighbourScorer` — cosine distance to the k-th nearest training example of the modality
  (Sun et al. 2022);
* :class:`ConfidenceScorer` — 1 − the calibrated confidence of the answer (``msp``), or the
  negative free energy of the first output position (``energy``, Liu et al. 2020).

Which one a checkpoint ships is chosen on the validation split and a development set of
out-of-distribution inputs (``scripts/train_default.py``); docs/results.md ("Calibration and the
open set") gives the comparison and the held-out figures.

The threshold of a modality is the ``QUANTILE`` quantile of the validation split's scores: by
construction about 5 % of familiar inputs are called unfamiliar (the false-alarm rate is measured
on the test split and reported with the AUROC).

A checkpoint stores a scorer as plain tensors, numbers, strings and lists (``to_state`` /
:func:`scorer_from_state`), so it loads with ``torch.load(weights_only=True)``. Scoring one input
is a few small matrix products in numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: the validation quantile that sets a modality's threshold (≈ 5 % false alarms on familiar inputs)
QUANTILE = 0.95
#: the fewest validation scores a modality's threshold is set from: below it the 95 % quantile is
#: little more than the largest score (a toy set's 5 validation inputs gave a threshold that called
#: a plain held-out query unfamiliar), so the modality's inputs are not judged at all
MIN_THRESHOLD_EXAMPLES = 20
#: shrinkage of each modality's covariance towards (trace / D) · I: the classes have a few hundred
#: examples in 256 dimensions, and a bare sample covariance would be singular
SHRINKAGE = 0.1


def _as_np(x) -> np.ndarray:
    return x.detach().float().cpu().numpy() if hasattr(x, "detach") else np.asarray(x, dtype=np.float64)


class Scorer:
    """What every scorer has: per-modality thresholds and the verdict they give."""

    kind = ""

    def __init__(self, thresholds: dict[str, float] | None = None):
        self.thresholds = dict(thresholds or {})

    @property
    def method(self) -> str:
        return self.kind

    def score(self, features: dict[str, Any], modalities: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        raise NotImplementedError

    def to_state(self) -> dict[str, Any]:
        """What the checkpoint keeps of the fitted scorer (read back by :func:`scorer_from_state`)."""
        raise NotImplementedError

    def set_thresholds(self, scores: np.ndarray, modalities: Sequence[str], quantile: float = QUANTILE) -> None:
        """Each modality's threshold: the ``quantile`` quantile of its (validation) scores; a modality
        with fewer than :data:`MIN_THRESHOLD_EXAMPLES` finite scores gets none (not judged)."""
        scores = np.asarray(scores, dtype=np.float64)
        for mod in sorted(set(modalities)):
            s = scores[[i for i, m in enumerate(modalities) if m == mod]]
            s = s[np.isfinite(s)]
            if s.size >= MIN_THRESHOLD_EXAMPLES:
                self.thresholds[mod] = float(np.quantile(s, quantile))

    def familiar(self, score: float, modality: str) -> bool | None:
        t = self.thresholds.get(modality)
        return None if t is None else bool(score <= t)

    def _state(self, **fields: Any) -> dict[str, Any]:
        return {
            "method": self.kind,
            "thresholds": {m: float(t) for m, t in self.thresholds.items()},
            "quantile": QUANTILE,
            **fields,
        }


def features_of(out: dict, tokens, mask, confidence=None, decoded=None) -> dict[str, Any]:
    """What the scorers read from one forward pass: ``sent_vec`` (B, 256), ``tokens`` (B, 640: the
    input's mean token), ``logits`` (B, P, V), and the decoded answers' ``confidence`` (B,) and
    ``decoded`` texts when given."""
    m = _as_np(mask).astype(np.float64)[..., None]
    feats = {
        "sent_vec": _as_np(out["sent_vec"]),
        "logits": _as_np(out["logits"]),
        "tokens": (_as_np(tokens) * m).sum(1) / np.maximum(m.sum(1), 1.0),
    }
    if confidence is not None:
        feats["confidence"] = np.asarray(confidence, dtype=np.float64)
    if decoded is not None:
        feats["decoded"] = list(decoded)
    return feats


def _feature(features, name: str) -> np.ndarray:
    return _as_np(features[name] if isinstance(features, dict) else features).astype(np.float64)


class GaussianScorer(Scorer):
    """Class-conditional Gaussians with one shared covariance per modality.

    ``score(features, modalities)`` → (scores (N,), nearest labels); a modality the scorer has no
    statistics for scores ``inf`` (nothing of it was ever seen). ``features`` is a dict from
    :func:`features_of` or the (N, D) feature array itself.
    """

    kind = "mahalanobis"

    def __init__(
        self,
        feature: str,
        groups: list[tuple[str, str]],
        means: np.ndarray,
        precisions: dict[str, np.ndarray],
        thresholds: dict[str, float] | None = None,
        *,
        relative: bool = False,
        backgrounds: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
    ):
        super().__init__(thresholds)
        self.feature = feature
        self.groups = [(str(m), str(label)) for m, label in groups]
        self.means = np.asarray(means, dtype=np.float64)
        self.precisions = {m: np.asarray(p, dtype=np.float64) for m, p in precisions.items()}
        self.relative = relative
        self.backgrounds = backgrounds or {}

    @property
    def method(self) -> str:
        return f"{'relative ' if self.relative else ''}mahalanobis({self.feature})"

    @classmethod
    def fit(
        cls,
        features,
        labels: Sequence[str],
        modalities: Sequence[str],
        *,
        feature: str = "sent_vec",
        shrinkage: float = SHRINKAGE,
        relative: bool = False,
    ) -> GaussianScorer:
        x = _feature(features, feature)
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
        x = _feature(features, self.feature)
        scores = np.full(len(x), np.inf)
        nearest: list[str | None] = [None] * len(x)
        for mod in set(modalities):
            rows = [i for i, m in enumerate(modalities) if m == mod]
            ks = [k for k, (m, _) in enumerate(self.groups) if m == mod]
            if not ks or mod not in self.precisions:
                continue
            prec = self.precisions[mod]
            d = x[rows][:, None, :] - self.means[ks][None, :, :]  # (n, G_mod, D)
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

    # -- the checkpoint's form: plain tensors, numbers, strings and lists ---------------------------
    def to_state(self) -> dict[str, Any]:
        import torch

        mods = sorted(self.precisions)
        # 640-D token features would make 1.6 MB per modality in float32: stored as float16 (scores
        # then agree to ~1e-3 relative), the 256-D sent_vec's in float32
        wide = np.float16 if self.means.shape[1] > 256 else np.float32
        state = self._state(
            feature=self.feature,
            relative=self.relative,
            groups=[list(g) for g in self.groups],
            modalities=mods,
            means=torch.from_numpy(self.means.astype(np.float32)),
            precisions=torch.from_numpy(np.stack([self.precisions[m] for m in mods]).astype(wide)),
        )
        if self.relative:
            state["background_means"] = torch.from_numpy(
                np.stack([self.backgrounds[m][0] for m in mods]).astype(np.float32)
            )
            state["background_precisions"] = torch.from_numpy(
                np.stack([self.backgrounds[m][1] for m in mods]).astype(wide)
            )
        return state

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> GaussianScorer:
        mods = list(state["modalities"])
        prec = _as_np(state["precisions"])
        backgrounds = {}
        if state.get("relative"):
            bm, bp = _as_np(state["background_means"]), _as_np(state["background_precisions"])
            backgrounds = {m: (bm[i], bp[i]) for i, m in enumerate(mods)}
        return cls(
            state["feature"],
            [tuple(g) for g in state["groups"]],
            _as_np(state["means"]),
            {m: prec[i] for i, m in enumerate(mods)},
            dict(state.get("thresholds", {})),
            relative=bool(state.get("relative")),
            backgrounds=backgrounds,
        )


class NeighbourScorer(Scorer):
    """Cosine distance to the ``k``-th nearest training example of the same modality; the nearest
    label is the label of the nearest one. Stores the training features (float16)."""

    kind = "knn"

    def __init__(
        self,
        feature: str,
        bank,
        labels: Sequence[str],
        modalities: Sequence[str],
        k: int = 5,
        thresholds: dict[str, float] | None = None,
    ):
        super().__init__(thresholds)
        self.feature, self.k = feature, int(k)
        bank = _feature(bank, feature)
        self.bank = bank / np.maximum(np.linalg.norm(bank, axis=1, keepdims=True), 1e-12)
        self.labels, self.modalities = list(labels), np.asarray(list(modalities))

    @property
    def method(self) -> str:
        return f"knn(k={self.k}, {self.feature})"

    @classmethod
    def fit(
        cls, features, labels: Sequence[str], modalities: Sequence[str], *, feature: str = "sent_vec", k: int = 5
    ) -> NeighbourScorer:
        return cls(feature, features, labels, modalities, k)

    def score(self, features, modalities: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        x = _feature(features, self.feature)
        x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        scores = np.full(len(x), np.inf)
        nearest: list[str | None] = [None] * len(x)
        for mod in set(modalities):
            rows = [i for i, m in enumerate(modalities) if m == mod]
            idx = np.flatnonzero(self.modalities == mod)
            if not idx.size:
                continue
            sim = x[rows] @ self.bank[idx].T
            order = np.argsort(-sim, axis=1)
            kk = min(self.k, idx.size) - 1
            scores[rows] = 1.0 - sim[np.arange(len(rows)), order[:, kk]]
            for r, j in zip(rows, order[:, 0]):
                nearest[r] = self.labels[idx[j]]
        return scores, nearest

    def to_state(self) -> dict[str, Any]:
        import torch

        return self._state(
            feature=self.feature,
            k=self.k,
            labels=self.labels,
            modalities=self.modalities.tolist(),
            bank=torch.from_numpy(self.bank.astype(np.float16)),
        )

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> NeighbourScorer:
        return cls(
            state["feature"],
            _as_np(state["bank"]),
            state["labels"],
            state["modalities"],
            state["k"],
            dict(state.get("thresholds", {})),
        )


class ConfidenceScorer(Scorer):
    """Scores from the answer itself: ``msp`` = 1 − its calibrated confidence, ``energy`` = the
    negative free energy of the first output position. The nearest label is the answer."""

    def __init__(self, kind: str, thresholds: dict[str, float] | None = None):
        if kind not in ("msp", "energy"):
            raise ValueError(f"kind must be 'msp' or 'energy', not {kind!r}")
        super().__init__(thresholds)
        self.kind = kind

    def score(self, features, modalities: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        if self.kind == "msp":
            scores = 1.0 - np.asarray(features["confidence"], dtype=np.float64)
        else:
            scores = energy_score(features["logits"])
        return scores, list(features.get("decoded") or [None] * len(scores))

    def to_state(self) -> dict[str, Any]:
        return self._state()

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> ConfidenceScorer:
        return cls(state["method"], dict(state.get("thresholds", {})))


def scorer_from_state(state: dict[str, Any]) -> Scorer:
    """The scorer a checkpoint stores (its ``open_set`` entry)."""
    kinds: dict[str, Any] = {
        "mahalanobis": GaussianScorer,
        "knn": NeighbourScorer,
        "msp": ConfidenceScorer,
        "energy": ConfidenceScorer,
    }
    if state.get("method") not in kinds:
        from ..errors import CheckpointError

        raise CheckpointError(f"unknown open-set method {state.get('method')!r} in the checkpoint")
    return kinds[state["method"]].from_state(state)


def _shrunk_inverse(centred: np.ndarray, shrinkage: float) -> np.ndarray:
    """Inverse of the sample covariance of ``centred`` (n, D) shrunk towards (trace / D) · I."""
    n, dim = centred.shape
    cov = centred.T @ centred / max(n - 1, 1)
    scale = float(np.trace(cov)) / dim
    if scale <= 0:
        scale = 1.0
    cov = (1 - shrinkage) * cov + shrinkage * scale * np.eye(dim)
    return np.linalg.inv(cov)


# -- helpers of the scores and of their measurement --------------------------------------------------


def energy_score(logits, temperature: float = 1.0) -> np.ndarray:
    """Negative free energy of the first output position, −T·logsumexp(z / T) (Liu et al. 2020),
    negated so that higher means less familiar."""
    z = _as_np(logits).astype(np.float64)[:, 0, :] / temperature
    m = z.max(-1)
    return -(temperature * (m + np.log(np.exp(z - m[:, None]).sum(-1))))


def auroc(familiar_scores, unfamiliar_scores) -> float:
    """Area under the ROC curve of telling unfamiliar (higher score) from familiar inputs: the
    probability that a random unfamiliar input scores above a random familiar one (ties count ½)."""
    a = np.asarray(familiar_scores, dtype=np.float64)
    b = np.asarray(unfamiliar_scores, dtype=np.float64)
    if not a.size or not b.size:
        return float("nan")
    a = np.sort(a)
    below = np.searchsorted(a, b, side="left")  # familiar scores strictly below each b
    not_above = np.searchsorted(a, b, side="right")  # ... and those equal to it, counted half
    return float((below + not_above).sum() / (2.0 * a.size * b.size))


def auroc_interval(
    familiar_scores, unfamiliar_scores, *, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the AUROC (each group resampled on its own)."""
    a = np.asarray(familiar_scores, dtype=np.float64)
    b = np.asarray(unfamiliar_scores, dtype=np.float64)
    rng = np.random.default_rng(seed)
    stats = [auroc(a[rng.integers(0, a.size, a.size)], b[rng.integers(0, b.size, b.size)]) for _ in range(resamples)]
    q = (1 - level) / 2
    return float(np.quantile(stats, q)), float(np.quantile(stats, 1 - q))


#: the scorers a checkpoint can ship, by name (the name is also what ``run`` reports as the method)
CANDIDATES = (
    "msp",
    "energy",
    "mahalanobis(sent_vec)",
    "relative mahalanobis(sent_vec)",
    "mahalanobis(tokens)",
    "knn(k=5, sent_vec)",
)


def fit_scorer(name: str, train_features: dict[str, Any], labels: Sequence[str], modalities: Sequence[str]) -> Scorer:
    """The scorer ``name`` (one of :data:`CANDIDATES`) fitted on a training split's features."""
    if name in ("msp", "energy"):
        return ConfidenceScorer(name)
    if name == "mahalanobis(sent_vec)":
        return GaussianScorer.fit(train_features, labels, modalities, feature="sent_vec")
    if name == "relative mahalanobis(sent_vec)":
        return GaussianScorer.fit(train_features, labels, modalities, feature="sent_vec", relative=True)
    if name == "mahalanobis(tokens)":
        return GaussianScorer.fit(train_features, labels, modalities, feature="tokens")
    if name == "knn(k=5, sent_vec)":
        return NeighbourScorer.fit(train_features, labels, modalities, feature="sent_vec", k=5)
    raise ValueError(f"unknown open-set scorer {name!r}; choose one of {', '.join(CANDIDATES)}")


def _take(features: dict[str, Any], rows) -> dict[str, Any]:
    rows = list(rows)
    return {k: ([v[i] for i in rows] if isinstance(v, list) else np.asarray(v)[rows]) for k, v in features.items()}


def choose_scorer(
    train: dict[str, Any],
    val: dict[str, Any],
    dev: dict[str, Any],
    dev_categories: Sequence[str],
    candidates: Sequence[str] = CANDIDATES,
) -> tuple[str, dict[str, dict[str, float]]]:
    """The candidate with the highest mean AUROC over the development set's categories, each
    category's unfamiliar inputs against the validation inputs of its modality; and every
    candidate's AUROC per category. ``train``/``val``/``dev`` are feature dicts with
    ``modalities`` (and ``labels`` for train). Ties go to the earlier candidate."""
    table: dict[str, dict[str, float]] = {}
    for name in candidates:
        scorer = fit_scorer(name, train, train["labels"], train["modalities"])
        vs, _ = scorer.score(val, val["modalities"])
        ds, _ = scorer.score(dev, dev["modalities"])
        row = {}
        for cat in sorted(set(dev_categories)):
            idx = [i for i, c in enumerate(dev_categories) if c == cat]
            mod = dev["modalities"][idx[0]]
            fam = vs[[i for i, m in enumerate(val["modalities"]) if m == mod]]
            row[cat] = auroc(_finite(fam), _finite(ds[idx]))
        row["mean"] = float(np.mean([v for k, v in row.items()]))
        table[name] = row
    best = max(candidates, key=lambda n: (table[n]["mean"], -list(candidates).index(n)))
    return best, table


def _finite(x: np.ndarray) -> np.ndarray:
    """Scores with +inf (a modality never seen) kept as the largest finite value + 1, so they rank last."""
    x = np.asarray(x, dtype=np.float64)
    if np.isinf(x).any():
        top = np.nanmax(np.where(np.isinf(x), np.nan, x)) if np.isfinite(x).any() else 0.0
        x = np.where(np.isinf(x), top + 1.0, x)
    return x
