"""A connection to the PostgreSQL memory that drops in the middle of a write, through a real TCP
proxy (pg_proxy.py) between psycopg and a real server on loopback.

The promise under test (docs/scaling.md, "PostgreSQL memory tier"): a write that returned is
durable; a write that raised raised :class:`MemoryStoreError` (never a raw psycopg error, never a
silent success), naming the store and the cause; a connection lost before COMMIT was sent is run
again on a fresh connection; one lost after COMMIT was sent is reported as "commit in doubt" and
the turn is then whole or absent; ids stay gap-free; the same memory object keeps working once
the network heals."""

import random

import numpy as np
import pytest
from pg_proxy import PgProxy
from scale_turns import make_turn

from v22sdk.errors import MemoryCommitInDoubt, MemoryStoreError

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 not installed: pip install 'v22sdk[postgres]'")
pytest.importorskip("psycopg_pool", reason="psycopg_pool not installed: pip install 'v22sdk[postgres]'")

from v22sdk.memory.postgres import _RECONNECTS, PostgresMemory  # noqa: E402

IN_DOUBT = "commit in doubt"


@pytest.fixture
def proxied(pg_server, pg_dsn):
    """(memory through the proxy, the proxy, the direct DSN of the same database)."""
    proxy = PgProxy("127.0.0.1", pg_server.port)
    mem = PostgresMemory(proxy.dsn(pg_dsn.rsplit("/", 1)[1]), l1_size=4, l2_size=16)
    yield mem, proxy, pg_dsn
    mem.close()
    proxy.close()


def put(mem, k, tag="t"):
    """Write turn ``k`` of stream ``tag``; returns its id."""
    return mem.add_turns([make_turn(k, tag)])[0].id


def stored(dsn):
    """Reconnect with a fresh PostgresMemory (no proxy): {(tag, k): id}; checks every row."""
    with PostgresMemory(dsn, l1_size=1, l2_size=1) as fresh:
        assert fresh.l3.integrity_check() == ["ok"]  # every checksum holds: no partial row
        rows = list(fresh.l3.iter_turns())
    assert [t.id for t in rows] == list(range(1, len(rows) + 1))  # gap-free
    out = {}
    for t in rows:
        tag, k = t.conversation, int(t.digest.split("-")[1])
        want = make_turn(k, tag)
        assert t.sent_vec.tobytes() == want.sent_vec.tobytes() and t.mem_emb.tobytes() == want.mem_emb.tobytes()
        assert t.attrs == want.attrs and (tag, k) not in out  # whole, and never twice
        out[(tag, k)] = t.id
    return out


def assert_typed(err, mem, *phrases):
    """A v22sdk error that names the store and the cause (the psycopg error is only its __cause__)."""
    assert isinstance(err, MemoryStoreError)
    msg = str(err)
    assert mem.l3.path in msg and "dbname=" in msg
    assert "OperationalError" in msg and "server closed the connection" in msg
    assert isinstance(err.__cause__, psycopg.OperationalError)
    for p in phrases:
        assert p in msg, msg
    assert isinstance(err, MemoryCommitInDoubt) == (IN_DOUBT in phrases)  # callers test the type, not the text


@pytest.mark.parametrize(
    "cut, outcome", [("before_commit", "absent"), ("after_commit", "present"), ("after_commit_nowait", "either")]
)
def test_cut_around_commit_is_reported_in_doubt(proxied, cut, outcome):
    """(a) COMMIT never reaches the server; (b) it commits but its answer is lost; (b') the cut
    races the commit. The client cannot tell these apart: each is "commit in doubt", never run again,
    and the turn is whole or absent. The same memory then writes the next turn with the next id."""
    mem, proxy, dsn = proxied
    assert [put(mem, k) for k in (1, 2, 3)] == [1, 2, 3]
    rule = proxy.arm(cut)
    with pytest.raises(MemoryStoreError) as ei:
        put(mem, 4)
    assert rule.fired == 1 and rule.event.wait(5)
    assert_typed(ei.value, mem, IN_DOUBT, "NOT acknowledged", "outcome is unknown")
    assert not mem.l2.contains(4) and not mem.l1.contains(4)  # not acknowledged: not published

    rows = stored(dsn)
    present = ("t", 4) in rows
    assert {"absent": not present, "present": present, "either": True}[outcome]
    assert set(rows) - {("t", 4)} == {("t", k) for k in (1, 2, 3)}
    if present:
        assert rows[("t", 4)] == 4 and mem.get(4).digest == "t-4"  # the caller can find it

    # The same object (its pool) recovers at once; the next id follows the stored ones.
    assert put(mem, 5) == 4 + present
    assert stored(dsn)[("t", 5)] == 4 + present
    assert mem.l2.contains(4 + present)


def test_cut_mid_insert_runs_again_on_a_fresh_connection(proxied):
    """(c) The connection drops half-way through the INSERT's row data: the server rolls the
    transaction back, so the write is run again on a new connection and returns normally, stored
    once, with no id used by the lost attempt."""
    mem, proxy, dsn = proxied
    assert [put(mem, k) for k in (1, 2)] == [1, 2]
    before = proxy.accepted
    rule = proxy.arm("mid_insert")
    assert put(mem, 3) == 3
    assert rule.fired == 1 and proxy.accepted > before  # it really was cut, and reconnected
    assert stored(dsn) == {("t", 1): 1, ("t", 2): 2, ("t", 3): 3}


def test_persistent_cut_mid_insert_raises_nothing_stored_then_heals(proxied):
    """(c) with a network that cuts every attempt: after the bounded retries the write raises
    "nothing was stored" (true: no attempt reached COMMIT); after healing the same memory writes."""
    mem, proxy, dsn = proxied
    put(mem, 1)
    rule = proxy.arm("mid_insert", times=None)
    with pytest.raises(MemoryStoreError) as ei:
        put(mem, 2)
    assert rule.fired == 1 + _RECONNECTS
    assert_typed(ei.value, mem, "nothing was stored", "after a lost connection")
    assert IN_DOUBT not in str(ei.value)
    assert stored(dsn) == {("t", 1): 1}
    proxy.heal()
    assert put(mem, 3) == 2  # the failed write used no id
    assert stored(dsn) == {("t", 1): 1, ("t", 3): 2}


def test_idle_pool_connections_cut_are_invisible(proxied):
    """A network blip while the pool is idle leaves it holding dead connections: the next write
    must not fail on them."""
    mem, proxy, dsn = proxied
    put(mem, 1)
    assert proxy.kill_all() >= 1
    assert put(mem, 2) == 2
    assert mem.search(np.stack([make_turn(2).sent_vec]), [make_turn(2).attrs], k=1)[0][0, 0] == 2
    assert stored(dsn) == {("t", 1): 1, ("t", 2): 2}


def test_random_cuts_keep_the_promise(proxied):
    """40 writes, each with a seeded random cut (or none). Every write either returned (then it
    is stored), raised "nothing was stored" (then it is not), or raised "commit in doubt" (then
    it is whole or absent); nothing else may happen, and the stored ids stay gap-free."""
    mem, proxy, dsn = proxied
    rng = random.Random(22)
    acked, failed, doubt = set(), set(), set()
    for k in range(1, 41):
        proxy.heal()
        action = rng.choice(
            [
                "none",
                "none",
                "before_commit",
                "after_commit",
                "after_commit_nowait",
                "mid_insert",
                "mid_insert_always",
                "blip",
            ]
        )
        if action == "mid_insert_always":
            proxy.arm("mid_insert", times=None)
        elif action == "blip":
            proxy.kill_all()
        elif action != "none":
            proxy.arm(action)
        try:
            put(mem, k)
            acked.add(("t", k))
        except MemoryStoreError as e:  # anything else (a raw psycopg error) fails the test
            assert isinstance(e, MemoryCommitInDoubt) == (IN_DOUBT in str(e))
            (doubt if isinstance(e, MemoryCommitInDoubt) else failed).add(("t", k))
            assert IN_DOUBT in str(e) or "nothing was stored" in str(e), str(e)
    proxy.heal()
    rows = stored(dsn)
    assert acked <= set(rows) <= acked | doubt
    assert not failed & set(rows)
    assert sorted(rows, key=lambda tk: tk[1]) == sorted(rows, key=rows.get)  # ids follow write order
    assert len(acked) >= 10 and failed and doubt  # every outcome was exercised
    assert put(mem, 99) == len(rows) + 1


def test_proxy_sees_a_commit_sent_over_the_extended_protocol(pg_server, pg_dsn):
    """The proxy itself: psycopg sends COMMIT as a simple Query, but a COMMIT run through a
    cursor in autocommit mode travels as Parse/Bind/Execute; that one must be caught too."""
    PostgresMemory(pg_dsn, l1_size=1, l2_size=1).close()  # create the schema
    with PgProxy("127.0.0.1", pg_server.port) as proxy:
        rule = proxy.arm("before_commit")
        with psycopg.connect(proxy.dsn(pg_dsn.rsplit("/", 1)[1]), autocommit=True) as conn:
            conn.execute("BEGIN")
            conn.execute(
                "INSERT INTO turns VALUES (1, 0, 'x', 'text', 'd', 's', '[]', ''::bytea, %s, %s, 1, 0)",
                (bytes(1024), bytes(1536)),
            )
            with pytest.raises(psycopg.OperationalError):
                conn.execute("COMMIT")
        assert rule.fired == 1
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM turns").fetchone()[0] == 0
