import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: slower tests, not in the default run")


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "memory.sqlite3")
