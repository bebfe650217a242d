"""single_blas_thread: matrix products give the one-thread bits whatever the caller's BLAS setting."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from v22sdk.blas import _blas_controllers, single_blas_thread


def _blas_threads() -> list[int]:
    """Thread counts of the BLAS libraries single_blas_thread governs (numpy's)."""
    return [lib.get_num_threads() for lib in _blas_controllers()]


def test_the_caller_setting_is_restored_after_nested_use():
    assert _blas_threads(), "numpy's BLAS was not found"
    with threadpool_limits(2, user_api="blas"):
        before = _blas_threads()
        with single_blas_thread():
            assert set(_blas_threads()) == {1}
            with single_blas_thread():
                assert set(_blas_threads()) == {1}
            assert set(_blas_threads()) == {1}  # the outer use still holds one thread
        assert _blas_threads() == before


def test_products_under_it_match_one_thread_bitwise():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((600, 513)), rng.standard_normal((513, 5))
    with threadpool_limits(1, user_api="blas"):
        ref = a @ b
    with threadpool_limits(2, user_api="blas"):
        with single_blas_thread():
            got = a @ b
    assert np.array_equal(got, ref)


def test_audio_tokens_do_not_depend_on_the_callers_blas_threads():
    """Before single_blas_thread, a 5 s 44.1 kHz harmonic tone gave other bits with two BLAS threads."""
    from v22sdk_audio import AudioModality

    t = np.arange(44_100 * 5) / 44_100
    x = 0.3 * sum(np.sin(2 * np.pi * 140 * k * t) / k for k in range(1, 12))
    with threadpool_limits(1, user_api="blas"):
        ref = AudioModality().tokenize(x, sample_rate=44_100)
    with threadpool_limits(2, user_api="blas"):
        got = AudioModality().tokenize(x, sample_rate=44_100)
    assert np.array_equal(ref.emb, got.emb) and np.array_equal(ref.attr, got.attr)
