"""Project-wide test set-up. pytester drives the contract kit's pytest plugin end to end
(tests/kit); it must be enabled here, at the top level, not in a sub-folder's conftest.
skip_policy turns skips into failures where every test must run (CI; see tests/skip_policy.py)."""

pytest_plugins = ["pytester", "skip_policy"]
