"""Exact counts of small integer codes, shared by the geometry (Euler bit-quads) and texture (GLCM)."""

from __future__ import annotations

import numpy as np


def count_codes(codes: np.ndarray, n: int) -> np.ndarray:
    """Occurrences of each value 0..n-1 (n ≤ 256) in a uint8 array, as int64: ``np.bincount``'s counts.

    OpenCV's 8-bit histogram with one bin per value is about 3× faster; its float32 counts are
    exact integers below 2**24, so it is used up to that many codes."""
    import cv2

    if codes.size < 2**24:
        return cv2.calcHist([np.ascontiguousarray(codes)], [0], None, [n], [0, n]).ravel().astype(np.int64)
    return np.bincount(codes.ravel(), minlength=n)
