"""Project-wide test set-up.

* pytester drives the contract kit's pytest plugin end to end (tests/kit); it must be enabled
  here, at the top level, not in a sub-folder's conftest.
* skip_policy turns skips into failures where every test must run (CI; see tests/skip_policy.py).
* Users' data is sacred: for the whole session the memory store and the token cache
  (``V22SDK_MEMORY``, ``V22SDK_CACHE``) point into a temporary folder, inherited by every
  subprocess a test starts, so no test can write into the user's real ones even by omission.
  tests/integration/test_user_data.py checks the benchmarks, examples and a CLI session the same way.
  ``HOME`` and the XDG folders point into that folder too, so the tools the tests drive write
  there, not into the user's home (Ray's ``~/.ray/auth_token``, matplotlib's config folder,
  PulseAudio's runtime link that espeak-ng leaves).
* The project's own test runs are reproducible: every hypothesis test, and every contract-kit
  check, draws derandomized examples (20 per test, no example database), whether or not the
  machine is a CI machine. Plugin authors get hypothesis' advice instead (random locally,
  derandomized on CI): this profile is this project's choice, which the kit respects like any
  author's profile.
"""

import os
import shutil
import tempfile

from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester", "skip_policy"]

settings.register_profile(
    "v22sdk-repo",
    deadline=None,
    derandomize=True,
    database=None,
    max_examples=20,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("v22sdk-repo")

_GUARDED = {
    "V22SDK_MEMORY": "memory.sqlite3",
    "V22SDK_CACHE": "cache",
    "HOME": "home",
    "XDG_CONFIG_HOME": "home/.config",
    "XDG_CACHE_HOME": "home/.cache",
    "XDG_DATA_HOME": "home/.local/share",
    "XDG_STATE_HOME": "home/.local/state",
}
_saved: dict[str, str | None] = {}


def pytest_configure(config):
    folder = tempfile.mkdtemp(prefix="v22sdk-tests-")
    _saved["folder"] = folder
    os.makedirs(os.path.join(folder, "home"))
    for var, name in _GUARDED.items():
        _saved[var] = os.environ.get(var)
        os.environ[var] = os.path.join(folder, name)


def pytest_unconfigure(config):
    for var in _GUARDED:
        if _saved.get(var) is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = _saved[var]
    if _saved.get("folder"):
        shutil.rmtree(_saved.pop("folder"), ignore_errors=True)
