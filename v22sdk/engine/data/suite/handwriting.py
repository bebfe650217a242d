"""Handwriting: scikit-learn's bundled digits (real scans), as PNG images for the vision plugin.

``sklearn.datasets.load_digits`` is the *test* set of the UCI "Optical Recognition of Handwritten
Digits" data: 1,797 digits written by 13 people (the UCI data has 43 writers in all; the other
30 wrote its training set, which scikit-learn does not ship). Each digit is a 32×32 binary
bitmap reduced by NIST's preprocessing to 8×8 counts of ink pixels (0..16) per 4×4 block.

Rendering: ink = count/16, drawn dark on white (255·(1 − ink)), upsampled 4× back to the
bitmap's original 32×32 with bicubic interpolation (OpenCV ``INTER_CUBIC``, clipped to 0..255),
saved as 8-bit greyscale PNG.

Split: the writer of each scan is not in the data, so the split cannot be by writer. It is
stratified by digit and seeded: for each digit a permutation of its scans (``rng_for(seed,
"handwriting", digit)``) puts 20 % in test, 10 % in val, the rest in train. Test scans are
therefore unseen scans, very likely by writers who also wrote training scans: a held-out figure
here measures new samples of known hands, not new hands.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from ....errors import MissingDependency
from .common import DIGIT_LABELS, Record, first_per_split, rng_for, sha256_bytes, sha256_file, split_counts

PART = "handwriting"
SIZE = 32  # pixels: the bitmaps' size before NIST's 4×4 block counting


def require_sklearn() -> str:
    """scikit-learn's version; :class:`MissingDependency` when it is not installed."""
    try:
        import sklearn.datasets  # noqa: F401  (the loader is what the suite needs)
        from sklearn import __version__
    except ImportError:
        raise MissingDependency(
            "the Python package 'scikit-learn'", "pip install scikit-learn (or: pip install 'v22sdk[suite]')"
        ) from None
    return __version__


def _load():
    version = require_sklearn()
    from sklearn.datasets import load_digits

    digits = load_digits()
    return digits.images, digits.target, version


def _data_file() -> Path | None:
    try:
        from importlib.resources import files

        p = Path(str(files("sklearn.datasets.data") / "digits.csv.gz"))
        return p if p.is_file() else None
    except (ImportError, ModuleNotFoundError, TypeError):
        return None


def render(counts: np.ndarray) -> bytes:
    """One 8×8 array of ink counts (0..16) → the bytes of a 32×32 greyscale PNG."""
    import cv2

    grey = 255.0 * (1.0 - counts.astype(np.float32) / 16.0)
    up = cv2.resize(grey, (SIZE, SIZE), interpolation=cv2.INTER_CUBIC)
    ok, buf = cv2.imencode(".png", np.clip(np.rint(up), 0, 255).astype(np.uint8))
    if not ok:  # pragma: no cover - OpenCV always encodes a valid uint8 array
        raise RuntimeError("PNG encoding failed")
    return buf.tobytes()


def build(
    out: Path, seed: int, per_digit: dict[str, int] | None, log: Callable[[str], None]
) -> tuple[list[Record], dict]:
    """Write the PNGs under ``out/handwriting/`` and return their records and the source's record.

    ``per_digit``: how many scans of each digit to keep per split (None: all 1,797)."""
    images, target, version = _load()
    split_of: dict[int, str] = {}
    rank: dict[int, int] = {}
    for d in range(10):
        idx = np.flatnonzero(target == d)
        order = idx[rng_for(seed, PART, d).permutation(len(idx))]
        counts = split_counts(len(order))
        for r, i in enumerate(order.tolist()):
            split_of[i] = "test" if r < counts["test"] else ("val" if r < counts["test"] + counts["val"] else "train")
            rank[i] = r
    keep = []
    for d in range(10):
        idx = np.flatnonzero(target == d).tolist()
        keep += first_per_split(idx, split_of.get, per_digit, rank.get)
    keep.sort()
    log(f"handwriting: {len(keep)} of {len(target)} scans")
    records = []
    for i in keep:
        d = int(target[i])
        rel = f"{PART}/{d}/{i:04d}.png"
        data = render(images[i])
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
        records.append(
            Record(
                rel,
                "vision",
                DIGIT_LABELS[d],
                split_of[i],
                PART,
                f"scan:{i}",
                {"digit": d, "index": i},
                sha256_bytes(data),
            )
        )
    arrays = sha256_bytes(
        np.ascontiguousarray(images, dtype=np.uint8).tobytes() + np.ascontiguousarray(target, dtype=np.uint8).tobytes()
    )
    data_file = _data_file()
    source = {
        "name": "UCI Optical Recognition of Handwritten Digits (test set), as bundled by scikit-learn",
        "loader": "sklearn.datasets.load_digits",
        "version": f"scikit-learn {version}",
        "licence": "scikit-learn: BSD-3-Clause; the UCI data set: CC BY 4.0 (Alpaydin & Kaynak, 1998)",
        "writers": "13 (the UCI test set; not recorded per scan)",
        "sha256": {
            "arrays (images as uint8, then targets as uint8)": arrays,
            **({f"file {data_file.name}": sha256_file(data_file)} if data_file else {}),
        },
        "rendering": f"ink = count/16, grey = 255·(1 − ink), {SIZE}×{SIZE} bicubic, 8-bit greyscale PNG",
        "split_by": "digit (stratified)",
        "split": "stratified by digit, seeded; writers are not recorded, so train and test share writers",
    }
    return records, source
