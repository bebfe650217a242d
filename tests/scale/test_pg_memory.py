"""The PostgreSQL memory tier against a real server on loopback: the SQLite tier's reliability
tests (kill -9 of a writer and of the server, two writers, restart equivalence, a failing COMMIT
is not acknowledged), schema migrations, and result parity with the SQLite tier."""

import os
import random
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from _checks import (
    acks,
    assert_rows_are_the_stream,
    assert_same_answers,
    assert_two_writers_union,  # noqa: E402
    finish,
    restart_queries,
)
from scale_turns import NAMES, make_turn

from v22sdk.errors import MemoryStoreError

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 not installed: pip install 'v22sdk[postgres]'")
pytest.importorskip("psycopg_pool", reason="psycopg_pool not installed: pip install 'v22sdk[postgres]'")

from v22sdk.memory.postgres import SCHEMA_VERSION, PostgresTier  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WRITER = os.path.join(HERE, "pg_writer.py")
ENV = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}


def spawn(dsn, tag, count):
    p = subprocess.Popen(
        [sys.executable, WRITER, dsn, tag, str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    line = p.stdout.readline().strip()
    assert line == "READY", p.stderr.read()
    return p


def test_tier_interface_and_migrations(pg_dsn):
    with PostgresTier(pg_dsn) as l3:
        assert l3.migrations()[0] == (1, "turns, attribute vocabulary, id/recency counters")
        assert not l3.pgvector  # Debian 12: no pgvector; the exact scan runs
        stored = l3.commit([make_turn(i) for i in range(1, 4)])
        assert [t.id for t in stored] == [1, 2, 3] and [t.touched for t in stored] == [1, 2, 3]
        assert l3.batched_contains([1, 2, 3, 4]) == [True, True, True, False]
        got = l3.batched_get([3, 9, 1])
        assert got[1] is None and got[0].same_content(stored[2]) and got[2].same_content(stored[0])
        assert l3.batched_remove([2, 2]) == [True, False]
        l3.put(make_turn(4))
        assert l3.max_id() == 4 and len(l3) == 3  # ids are never reused after a remove
        assert l3.integrity_check() == ["ok"]
        assert l3.stats()["search"] == "exact client-side scan"
    # A database migrated by a newer v22sdk is refused, not written to.
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(
            "INSERT INTO v22_schema_migrations (version, description) VALUES (%s, 'future')", (SCHEMA_VERSION + 7,)
        )
    with pytest.raises(MemoryStoreError, match="upgrade v22sdk"):
        PostgresTier(pg_dsn)


def test_concurrent_first_open_migrates_once(pg_dsn):
    tiers, errors = [], []

    def opener():
        try:
            tiers.append(PostgresTier(pg_dsn, pool_size=1))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors and len(tiers) == 4
    assert [v for v, _ in tiers[0].migrations()] == [1]
    [t.close() for t in tiers]


def test_no_dsn_is_a_typed_error(monkeypatch):
    monkeypatch.delenv("V22SDK_PG_DSN", raising=False)
    with pytest.raises(MemoryStoreError, match="V22SDK_PG_DSN"):
        PostgresTier()
    with pytest.raises(MemoryStoreError, match="cannot open"):
        PostgresTier("postgresql://v22@127.0.0.1:1/none", timeout_s=1)


def test_search_is_bit_identical_to_the_sqlite_tier(pg_dsn, tmp_path):
    from v22sdk.memory import SQLiteTier

    turns = [make_turn(i) for i in range(1, 301)]
    rng = np.random.default_rng(7)
    src = rng.integers(0, 300, 40)
    q = np.stack([turns[i].sent_vec for i in src]) + rng.standard_normal((40, 256)).astype(np.float32)
    from v22sdk.memory.scoring import unit_rows

    q = unit_rows(q)
    attr_sets = [turns[i].attrs if j % 2 else frozenset(NAMES[j : j + 3]) for j, i in enumerate(src)]
    results = []
    for tier in (SQLiteTier(str(tmp_path / "m.db")), PostgresTier(pg_dsn)):
        with tier:
            tier.commit(turns[:150])
            tier.commit(turns[150:])
            qm = np.stack([tier.vocab.mask(a) for a in attr_sets])
            qc = np.array([len(a) for a in attr_sets], np.int32)
            ids, sc = tier.search(q, qm, qc, k=3, exclude=np.array([5, 9], np.int64), chunk=64)
            results.append((ids, sc))
    (i1, s1), (i2, s2) = results
    assert np.array_equal(i1, i2) and s1.tobytes() == s2.tobytes()
    assert not np.isin(i2, [5, 9]).any() and (i2 > 0).all()


def test_kill_9_of_writer_loses_no_acknowledged_turn(pg_dsn):
    PostgresTier(pg_dsn).close()
    rng = random.Random(1234)
    acked, before = [], 0
    for _ in range(8):
        p = spawn(pg_dsn, "t", 100_000)
        time.sleep(rng.uniform(0.0, 0.2))
        p.send_signal(signal.SIGKILL)
        out, _ = finish(p)
        assert p.returncode == -signal.SIGKILL
        now = acks(out)
        acked += now
        with PostgresTier(pg_dsn) as store:
            n = assert_rows_are_the_stream(store)
            assert store.integrity_check() == ["ok"]
        last = max([before] + [a for a, _ in now])
        assert all(a <= n for a, _ in acked)
        assert last <= n <= last + 1  # at most the one in flight when killed
        assert all(a == k for a, k in acked)
        before = n
    assert len(acked) > 8


@pytest.mark.slow  # ~10 s: crash recovery of the server
def test_kill_9_of_the_server_loses_no_acknowledged_turn(pg_server, pg_dsn):
    """SIGKILL of the postmaster and its backends mid-write (a crash), then WAL recovery."""
    PostgresTier(pg_dsn).close()
    p = spawn(pg_dsn, "t", 100_000)
    time.sleep(0.4)
    pg_server.kill9()
    out, err = finish(p, 60)
    assert p.returncode == 3, err  # the writer saw the failure as an error, not a success
    fails = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    assert len(fails) == 1 and ("NOT acknowledged" in fails[0] or "nothing was stored" in fails[0]), out
    acked = acks(out)
    assert len(acked) > 3
    pg_server.start(init=False)
    with PostgresTier(pg_dsn) as store:
        n = assert_rows_are_the_stream(store)
        assert acked[-1][0] <= n <= acked[-1][0] + 1
        assert store.commit([make_turn(n + 1)])[0].id == n + 1  # the counter survived the crash


def test_two_writer_processes_union_survives(pg_dsn):
    PostgresTier(pg_dsn).close()
    a, b = spawn(pg_dsn, "A", 120), spawn(pg_dsn, "B", 120)
    (oa, ea), (ob, eb) = finish(a), finish(b)
    assert a.returncode == 0 and b.returncode == 0, ea + eb
    with PostgresTier(pg_dsn) as store:
        assert_two_writers_union(store, oa, ob)


def test_a_failing_commit_is_not_acknowledged(pg_dsn):
    """A deferred constraint trigger makes COMMIT itself fail: nothing stored, no id consumed."""
    store = PostgresTier(pg_dsn)
    store.commit([make_turn(k) for k in range(1, 6)])
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute("""CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                     BEGIN IF NEW.digest = 'poison' THEN RAISE EXCEPTION 'refused at commit'; END IF;
                     RETURN NULL; END $$""")
        c.execute(
            "CREATE CONSTRAINT TRIGGER refuse AFTER INSERT ON turns DEFERRABLE INITIALLY DEFERRED "
            "FOR EACH ROW EXECUTE FUNCTION refuse()"
        )
    poison = make_turn(99, "p")
    poison = type(poison)(poison.sent_vec, poison.mem_emb, frozenset({"brand.new.slot"}), digest="poison")
    with pytest.raises(MemoryStoreError, match="refused at commit.*|nothing was stored"):
        store.commit([make_turn(6), poison])
    assert len(store) == 5 and store.max_id() == 5
    assert "brand.new.slot" not in store.vocab.bits  # names of the failed batch were not adopted
    store.close()
    with PostgresTier(pg_dsn) as again:
        assert assert_rows_are_the_stream(again) == 5
        assert "brand.new.slot" not in again.vocab.bits
        assert again.commit([make_turn(6)])[0].id == 6  # no gap left by the failure


def _copy_database(src_dsn, dst_dsn):
    """A consistent snapshot of a memory database into another (schema by migration, rows by COPY)."""
    PostgresTier(dst_dsn).close()
    with psycopg.connect(src_dsn) as src, psycopg.connect(dst_dsn) as dst:
        src.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        for table in ("turns", "attr_vocab", "v22_counters"):
            dst.execute(f"DELETE FROM {table}")
            with (
                src.cursor().copy(f"COPY {table} TO STDOUT (FORMAT binary)") as out,
                dst.cursor().copy(f"COPY {table} FROM STDIN (FORMAT binary)") as into,
            ):
                for chunk in out:
                    into.write(chunk)


def test_restart_equivalence_100_queries(pg_server, pg_dsn):
    """Same state before and after a restart -> the same 100 answers (ids, scores, order)."""
    import torch

    from v22sdk.memory.postgres import PostgresMemory

    mem = PostgresMemory(pg_dsn, l1_size=8, l2_size=60, hit_threshold=0.7)
    assert mem.name == "postgres"
    turns = [make_turn(i) for i in range(1, 201)]
    for s in range(0, 200, 25):
        b = turns[s : s + 25]
        mem.write(
            torch.from_numpy(np.stack([t.sent_vec for t in b])),
            torch.from_numpy(np.stack([t.mem_emb for t in b])),
            [t.attrs for t in b],
        )
    copy_dsn = pg_server.create_db(f"copy{os.getpid()}")
    _copy_database(pg_dsn, copy_dsn)
    restarted = PostgresMemory(copy_dsn, l1_size=8, l2_size=60, hit_threshold=0.7)
    assert_same_answers(mem, restarted, *restart_queries(turns))
    r = mem.read(torch.from_numpy(turns[2].sent_vec[None].copy()), [turns[2].attrs])
    assert r.ids == [3] and torch.equal(r.values[0], torch.from_numpy(turns[2].mem_emb.copy()))
    mem.close(), restarted.close()
    third = PostgresMemory(pg_dsn, l1_size=8, l2_size=60, hit_threshold=0.7)
    assert 3 in third.l2.slot  # the promotion persisted on the server
    third.close()


def test_two_workers_share_one_memory(pg_dsn):
    """A turn written by one worker is recalled exactly by another (L3 is shared)."""
    import torch

    from v22sdk.memory.postgres import PostgresMemory

    a = PostgresMemory(pg_dsn, l1_size=2, l2_size=4)
    b = PostgresMemory(pg_dsn, l1_size=2, l2_size=4)
    t = make_turn(42, "x")
    (tid,) = a.write(torch.from_numpy(t.sent_vec[None].copy()), torch.from_numpy(t.mem_emb[None].copy()), [t.attrs])
    r = b.read(torch.from_numpy(t.sent_vec[None].copy()), [t.attrs])
    assert r.ids == [tid] and torch.equal(r.values[0], torch.from_numpy(t.mem_emb.copy()))
    a.close(), b.close()
