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


# -- the CLI starts numpy's OpenBLAS with one thread in commands that multiply no large matrices ----
_REPORT_THREADS = """
import atexit, sys
def report():
    from threadpoolctl import threadpool_info
    counts = [i["num_threads"] for i in threadpool_info() if i["internal_api"] == "openblas"]
    print("OPENBLAS", counts[0], file=sys.stderr)
atexit.register(report)
from v22sdk.cli import main
main(sys.argv[1:])
"""


def _cli_openblas_threads(args: list[str], **env: str) -> int:
    import os
    import subprocess
    import sys

    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    r = subprocess.run(
        [sys.executable, "-c", _REPORT_THREADS, *args],
        capture_output=True,
        text=True,
        env={**clean, **env},
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return int(r.stderr.split("OPENBLAS")[-1].split()[0])


def test_plugins_list_and_tokenize_start_openblas_on_one_thread(tmp_path):
    import os

    assert _cli_openblas_threads(["plugins", "list"]) == 1
    assert _cli_openblas_threads(["tokenize", "--text", "七", "--out", str(tmp_path / "t.npz")]) == 1
    # what the setting prevents: a command that does not set it starts one OpenBLAS thread per CPU
    # (``--version`` imports no numpy; the report then loads it, as any later import would); on a
    # one-CPU machine that is one thread too, and the comparison says nothing
    if (os.cpu_count() or 1) > 1:
        assert _cli_openblas_threads(["--version"]) > 1


def test_a_users_thread_count_is_kept():
    assert _cli_openblas_threads(["plugins", "list"], OPENBLAS_NUM_THREADS="2") == 2


def test_nothing_changes_once_numpy_is_loaded(monkeypatch):
    import os

    from v22sdk.cli import _one_blas_thread_from_start

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    _one_blas_thread_from_start()  # numpy is loaded in this process: too late to matter, so untouched
    assert "OPENBLAS_NUM_THREADS" not in os.environ
