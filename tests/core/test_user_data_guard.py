"""tests/conftest.py points the memory store and the token cache of the whole test session (and
of every subprocess a test starts) into a temporary folder: no test can reach the user's."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path


def test_the_session_memory_and_cache_are_temporary():
    import platformdirs

    from v22sdk.engine.data import cache_dir
    from v22sdk.memory.paths import default_memory_path

    tmp = Path(tempfile.gettempdir()).resolve()
    for path in (default_memory_path(), cache_dir()):
        assert tmp in path.resolve().parents, path
        assert Path(platformdirs.user_data_dir("v22sdk", appauthor=False)) not in path.parents
        assert Path(platformdirs.user_cache_dir("v22sdk")) not in path.parents


def test_a_subprocess_inherits_the_temporary_places():
    code = "from v22sdk.memory.paths import default_memory_path; print(default_memory_path())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == os.environ["V22SDK_MEMORY"]
