"""The kit's own tests: pytester drives the pytest plugin end to end."""

pytest_plugins = ["pytester"]
