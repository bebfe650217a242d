"""A deterministic unit vector per Unicode code point: no vocabulary file, any script.

Each of the 256 components of code point ``c`` comes from one 64-bit counter-based hash
(SplitMix64 finaliser) of ``(SEED, c, component)``. The hash's four 16-bit quarters are summed
and centred (an Irwin-Hall approximation of a Gaussian, integer-exact), then the vector is scaled
to unit L2 norm. Only integer operations, one square root and one division are used, all exactly
rounded, so the vectors are bit-identical on every machine and numpy build (no libm calls).
Independent zero-mean components make distinct characters near-orthogonal: ``|cos| ~ 1/sqrt(256)``
(measured figures in docs/text-modality.md).
"""

from __future__ import annotations

import numpy as np

#: Documented seed of the text embedding. Changing it changes every text embedding.
SEED = 0x5EED_7E47_2022
EMB_DIM = 256
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_BASE = np.uint64((SEED * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)  # seed spread over 64 bits
_CHUNK = 4096  # code points per block: bounds the (chunk, 256) uint64 temporaries to 8 MiB


def _splitmix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser over a uint64 array (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def code_point_vectors(code_points: np.ndarray) -> np.ndarray:
    """(U,) integer code points -> (U, 256) float32 unit vectors (same code point, same row)."""
    cps = np.asarray(code_points, dtype=np.uint64).ravel()
    out = np.empty((cps.size, EMB_DIM), dtype=np.float32)
    comp = np.arange(EMB_DIM, dtype=np.uint64)
    base = _BASE
    mask = np.uint64(0xFFFF)
    with np.errstate(over="ignore"):
        for lo in range(0, cps.size, _CHUNK):
            block = cps[lo : lo + _CHUNK]
            h = _splitmix64(base + (block[:, None] << np.uint64(8)) + comp[None, :])
            s = (h & mask) + ((h >> np.uint64(16)) & mask) + ((h >> np.uint64(32)) & mask) + (h >> np.uint64(48))
            x = s.astype(np.int64) - 2 * 65535  # centred, integer, |x| <= 131070
            sq = (x * x).sum(axis=1)  # exact: < 256 * 2^34 < 2^53
            out[lo : lo + _CHUNK] = (x / np.sqrt(sq.astype(np.float64))[:, None]).astype(np.float32)
    return out


def embed_code_points(cps: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """(N,) code points of a text -> (N, 256) float32, computed once per distinct code point.

    ``out``: a C-contiguous (N, 256) float32 array to write the rows into (returned)."""
    cps = np.asarray(cps, dtype=np.int64).ravel()
    if out is None:
        out = np.empty((cps.size, EMB_DIM), dtype=np.float32)
    if cps.size == 0:
        return out
    if cps.size < 65536:
        uniq, inverse = np.unique(cps, return_inverse=True)
        return np.take(code_point_vectors(uniq), inverse.ravel(), axis=0, out=out, mode="clip")
    # long text: distinct code points and their ranks from a presence table, not a sort (N log N)
    present = np.zeros(int(cps.max()) + 1, dtype=bool)
    present[cps] = True
    uniq = np.flatnonzero(present)
    rank = np.cumsum(present, dtype=np.int32) - 1
    return np.take(code_point_vectors(uniq), rank[cps], axis=0, out=out, mode="clip")  # "raise" would buffer
