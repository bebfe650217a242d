"""The audio analysis' own reductions give NumPy's bits (they replace NumPy calls for speed)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from v22sdk_audio.masked import percentiles

_values = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64)
_rows = st.tuples(st.integers(1, 12), st.integers(1, 90))
_qs = st.tuples(*[st.sampled_from([0, 5, 20, 33.3, 50, 66.7, 80, 95, 99.9, 100])] * 2)


@given(arrays(np.float64, _rows, elements=_values), _qs)
def test_percentiles_are_numpys_bit_for_bit(v, qs):
    assert np.array_equal(percentiles(v, qs), np.percentile(v, qs, axis=1))


@given(arrays(np.float64, _rows, elements=st.sampled_from([-2.0, 0.0, 0.5, 3.0])), _qs)
def test_percentiles_with_ties(v, qs):
    assert np.array_equal(percentiles(v, qs), np.percentile(v, qs, axis=1))


def test_the_contrast_bands_quantiles_on_real_rows():
    rng = np.random.default_rng(0)
    for k in (1, 2, 7, 13, 26, 52, 103, 308):  # band widths in bins, and edge cases
        pdb = 10.0 * np.log10(rng.gamma(0.5, size=(40, k)) + 1e-10)
        assert np.array_equal(percentiles(pdb, (80, 20)), np.percentile(pdb, [80, 20], axis=1)), k


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_value_is_left_to_numpy(bad):
    v = np.arange(12.0).reshape(2, 6)
    v[1, 3] = bad
    with np.errstate(invalid="ignore"):  # inf - inf in NumPy's interpolation
        np.testing.assert_array_equal(percentiles(v, (80, 20)), np.percentile(v, [80, 20], axis=1))


def test_the_check_catches_a_wrong_interpolation():
    """A plain a + d * g everywhere (without _lerp's switch at g >= 0.5) differs in the last bit
    for some rows: the comparison above would see it."""
    rng = np.random.default_rng(1)
    v = np.sort(rng.standard_normal((2000, 12)), axis=1)
    vi = 11 * 0.8  # g = 0.8: the b - d * (1 - g) branch
    lo = int(vi)
    naive = v[:, lo] + (v[:, lo + 1] - v[:, lo]) * (vi - lo)
    assert not np.array_equal(naive, np.percentile(v, 80, axis=1))
    assert np.array_equal(percentiles(v, (80,))[0], np.percentile(v, 80, axis=1))
