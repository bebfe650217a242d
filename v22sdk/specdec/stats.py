"""Paired confidence intervals and the pre-registered criterion for RFC hook (1).

Criterion (fixed before any run, see docs/findings-speculative-decoding.md): the ``sphere`` arm
(F.normalize) beats the ``rmsnorm`` arm (DeepSpec status quo) on analytic tau when the paired 95%
t-interval of the per-seed difference excludes 0 *and* the relative gain is at least 2%, at both
temperatures (0 and 1) and on both corpora.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

MIN_GAIN = 0.02


@dataclass(frozen=True)
class PairedDiff:
    """``a - b`` over paired seeds: mean, 95% t-interval, relative gain ``mean / mean(b)``."""

    n: int
    mean_a: float
    mean_b: float
    diff: float
    lo: float
    hi: float
    rel_gain: float

    @property
    def excludes_zero(self) -> bool:
        return self.lo > 0 or self.hi < 0

    @property
    def passes(self) -> bool:
        """Pre-registered win for ``a``: interval above 0 and gain >= :data:`MIN_GAIN`."""
        return self.lo > 0 and self.rel_gain >= MIN_GAIN

    def as_dict(self) -> dict:
        return asdict(self) | {"excludes_zero": self.excludes_zero, "passes": self.passes}


def paired_diff(a, b) -> PairedDiff:
    """Paired difference of per-seed values ``a`` and ``b`` (same length >= 2)."""
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = a - b
    n = len(d)
    half = float(stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / math.sqrt(n)) if n > 1 else float("inf")
    m = float(d.mean())
    return PairedDiff(
        n=n,
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        diff=m,
        lo=m - half,
        hi=m + half,
        rel_gain=m / float(b.mean()),
    )


def mean_ci(x) -> tuple[float, float]:
    """Mean and 95% normal half-width of ``x`` (for the many-rounds empirical tau)."""
    x = np.asarray(x, dtype=float)
    return float(x.mean()), float(1.96 * x.std(ddof=1) / math.sqrt(len(x)))
