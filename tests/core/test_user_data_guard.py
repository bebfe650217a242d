"""tests/conftest.py points the memory store, the token cache and the home folders of the whole
test session (and of every subprocess a test starts) into a temporary folder: no test can reach
the user's."""

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


def test_the_session_home_is_temporary_too():
    """Tools the tests drive (Ray, matplotlib, espeak-ng's PulseAudio client) write under the
    home and XDG folders: for the session those are in the temporary folder, in subprocesses too."""
    session = Path(os.environ["V22SDK_MEMORY"]).parent
    assert Path.home() == session / "home"
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        assert session / "home" in Path(os.environ[var]).parents, var
    code = "from pathlib import Path; print(Path.home())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == str(session / "home")
