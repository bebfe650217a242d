"""Project-wide test set-up. pytester drives the contract kit's pytest plugin end to end
(tests/kit); it must be enabled here, at the top level, not in a sub-folder's conftest."""

pytest_plugins = ["pytester"]
