"""Tier behaviour (deterministic traces), the TieredMemory read/write path and restart equivalence."""

import sqlite3

import numpy as np
import pytest
import torch
from _checks import assert_same_answers, restart_queries
from _gen import NAMES, make_turn

from v22sdk.engine.memory_head import MemoryHead, TurnInfo
from v22sdk.errors import InputError
from v22sdk.memory import SQLiteTier, TieredMemory
from v22sdk.memory.ring import RingTier
from v22sdk.memory.scoring import AttrVocab


def test_ring_eviction_trace():
    ring = RingTier(3, AttrVocab(NAMES))
    ring.batched_put([make_turn(i).with_id(i, 0.0, i) for i in range(1, 6)])
    assert sorted(ring.slot) == [3, 4, 5] and len(ring) == 3
    assert ring.remove(4) and not ring.remove(4) and not ring.contains(4)
    ring.put(make_turn(6).with_id(6, 0.0, 6))  # FIFO: overwrites the oldest slot (turn 3)
    assert sorted(ring.slot) == [5, 6]
    ring.put(make_turn(7).with_id(7, 0.0, 7))  # fills the hole left by 4
    assert sorted(ring.slot) == [5, 6, 7]
    ring.put(make_turn(5).with_id(5, 0.0, 5))  # already held: no-op
    assert sorted(ring.slot) == [5, 6, 7]
    got = ring.get(6)
    assert got.same_content(make_turn(6).with_id(6, 0.0, 6))
    # search never returns a removed turn
    ring.remove(7)
    ids, _ = ring.search(np.stack([make_turn(7).sent_vec]), np.zeros((1, 8), np.uint64), np.array([0]), k=3)
    assert 7 not in ids[0] and ids[0][-1] == -1


def test_sqlite_tier_contains_get_put_remove(db):
    with SQLiteTier(db) as l3:
        stored = l3.commit([make_turn(i) for i in range(1, 4)])
        assert [t.id for t in stored] == [1, 2, 3]
        assert l3.batched_contains([1, 2, 3, 4]) == [True, True, True, False]
        got = l3.batched_get([3, 9, 1])
        assert got[1] is None and got[0].same_content(stored[2]) and got[2].same_content(stored[0])
        assert l3.batched_remove([2, 2]) == [True, False]
        l3.put(make_turn(4))
        assert l3.max_id() == 4 and len(l3) == 3  # ids are never reused after a remove
        assert l3.integrity_check() == ["ok"]
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert c.execute("PRAGMA user_version").fetchone()[0] == 1


def _batch(turns):
    s = torch.from_numpy(np.stack([t.sent_vec for t in turns]))
    m = torch.from_numpy(np.stack([t.mem_emb for t in turns]))
    return s, m, [t.attrs for t in turns]


def test_write_then_read_recalls_the_turn(db):
    mem = TieredMemory(db, l1_size=4, l2_size=16)
    assert isinstance(mem, MemoryHead) and TieredMemory.name == "tiered"
    empty = mem.read(torch.zeros(2, 256), [frozenset()] * 2)
    assert not empty.found.any() and empty.ids == [None, None] and float(empty.values.abs().sum()) == 0
    turns = [make_turn(i) for i in range(1, 11)]
    s, m, a = _batch(turns)
    info = [TurnInfo("c1", "text", f"d{i}", f"turn {i}") for i in range(10)]
    ids = mem.write(s, m, a, info)
    assert ids == list(range(1, 11)) and len(mem) == 10
    r = mem.read(s[[9, 2]], [a[9], a[2]])
    assert r.ids == [10, 3] and r.found.all()
    assert torch.equal(r.values, m[[9, 2]])  # turn 10 from L1 (device), turn 3 from L2 (host)
    assert r.info[1] == info[2] and r.times[0] > 0
    assert abs(float(r.scores[0]) - (0.6 + 0.4 * (1.0 if a[9] else 0.0))) < 1e-5
    with pytest.raises(InputError, match="sent_vec"):
        mem.read(torch.zeros(2, 255), [frozenset()] * 2)
    with pytest.raises(InputError, match="batch sizes"):
        mem.write(s, m[:3], a)
    mem.close()


def test_l3_hit_is_promoted_into_l2_and_survives_restart(db):
    mem = TieredMemory(db, l1_size=2, l2_size=5)
    turns = [make_turn(i) for i in range(1, 21)]
    mem.write(*_batch(turns))
    assert sorted(mem.l2.slot) == [16, 17, 18, 19, 20] and sorted(mem.l1.slot) == [19, 20]
    r = mem.read(torch.from_numpy(turns[2].sent_vec[None].copy()), [turns[2].attrs])
    assert r.ids == [3] and torch.equal(r.values[0], torch.from_numpy(turns[2].mem_emb.copy()))
    assert mem.l2.contains(3) and not mem.l2.contains(16)  # promoted, oldest evicted
    before = sorted(mem.l2.slot)
    mem.close()
    mem = TieredMemory(db, l1_size=2, l2_size=5)
    assert sorted(mem.l2.slot) == before and sorted(mem.l1.slot) == [19, 20]
    mem.close()


def test_restart_equivalence_100_queries(tmp_path):
    """Same state before and after a restart -> the same 100 answers (ids, scores, order)."""
    live_path, copy_path = str(tmp_path / "live.db"), str(tmp_path / "copy.db")
    mem = TieredMemory(live_path, l1_size=8, l2_size=60, hit_threshold=0.7)
    turns = [make_turn(i) for i in range(1, 201)]
    for s in range(0, 200, 25):
        mem.write(*_batch(turns[s : s + 25]))
    with sqlite3.connect(copy_path) as dst:  # a consistent snapshot of the state to restart from
        mem.l3._conn.backup(dst)
    restarted = TieredMemory(copy_path, l1_size=8, l2_size=60, hit_threshold=0.7)
    assert_same_answers(mem, restarted, *restart_queries(turns))
    mem.close(), restarted.close()
    # and the promoted state persisted: a third open sees the same L2 again
    third = TieredMemory(live_path, l1_size=8, l2_size=60, hit_threshold=0.7)
    assert sorted(third.l2.slot) == sorted(restarted.l2.slot)
    third.close()


def test_exhaustive_search_is_the_global_best(db):
    mem = TieredMemory(db, l1_size=2, l2_size=4, hit_threshold=-1.0)  # threshold -1: L1 always "hits"
    turns = [make_turn(i) for i in range(1, 31)]
    mem.write(*_batch(turns))
    q = torch.from_numpy(turns[4].sent_vec[None].copy())
    quick, _ = mem.search(q, [turns[4].attrs])
    full, sc = mem.search(q, [turns[4].attrs], exhaustive=True)
    assert quick[0, 0] in (29, 30) and full[0, 0] == 5 and sc[0, 0] > 0.99
    mem.close()
    bounded = TieredMemory(db, l1_size=2, l2_size=4, scan_l3=False)  # never scans L3 on read
    q = torch.from_numpy(turns[9].sent_vec[None].copy())
    r = bounded.read(q, [turns[9].attrs])
    assert r.ids[0] in (5, 27, 28, 29, 30) and not bounded.l2.contains(10)  # 5: promoted above
    assert bounded.search(q, [turns[9].attrs], exhaustive=True)[0][0, 0] == 10
    bounded.close()


def test_a_turn_removed_between_search_and_recall_is_a_store_error(db, monkeypatch):
    """A read fetches from L3 the turns that neither L1 nor L2 holds; one that another process
    removed after the search found it is a MemoryStoreError naming it (not an AttributeError)."""
    from v22sdk.errors import MemoryStoreError

    mem = TieredMemory(db, l1_size=2, l2_size=4)
    turns = [make_turn(i) for i in range(1, 11)]
    mem.write(*_batch(turns))
    assert not mem.l1.contains(3) and not mem.l2.contains(3)
    cpu = torch.device("cpu")
    found = mem._recall(np.array([[3]]), np.array([[0.95]]), cpu)  # read from L3
    assert found.ids == [3] and np.allclose(found.values[0].numpy(), turns[2].mem_emb)
    monkeypatch.setattr(mem.l3, "get", lambda turn_id: None)  # what L3 answers once turn 3 is gone
    with pytest.raises(MemoryStoreError, match="turn 3 was removed while it was being read"):
        mem._recall(np.array([[3]]), np.array([[0.95]]), cpu)
    mem.close()
