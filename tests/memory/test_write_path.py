"""The per-turn write path's shortcuts (issue 21) give exactly what the general path gives: the same
unit rows, attribute text, ring state and acknowledged mark, and a failed one-turn write leaves nothing."""

import json
import os

import numpy as np
import pytest
from _gen import NAMES, make_turn

from v22sdk.errors import MemoryStoreError
from v22sdk.memory import SQLiteTier, TieredMemory
from v22sdk.memory.ring import RingTier
from v22sdk.memory.scoring import AttrVocab, unit_row, unit_rows
from v22sdk.memory.sqlite_checks import AckMark, read_ack
from v22sdk.memory.sqlite_tier import _attrs_json


def test_unit_row_is_unit_rows_bit_for_bit():
    rng = np.random.default_rng(3)
    rows = [rng.standard_normal(256).astype(np.float32) * np.float32(10.0**e) for e in range(-40, 38, 3)]
    rows += [rng.standard_normal(256).astype(np.float32) for _ in range(500)]
    one_hot = np.zeros(256, np.float32)
    one_hot[17] = -3.0
    rows += [np.zeros(256, np.float32), np.full(256, 3e38, np.float32), np.full(256, 1e-45, np.float32), one_hot]
    for x in rows:
        assert unit_row(x).tobytes() == unit_rows(x[None])[0].tobytes()
    assert not unit_row(np.zeros(256, np.float32)).any()


def test_attrs_json_is_json_dumps():
    names = sorted(["a", 'quo"te', "back\\slash", "ctl\x01", "nl\n", "é中文😀", "\u2028", "\ud800lone"])
    for x in ([], names[:1], names):
        assert _attrs_json(x) == json.dumps(x, ensure_ascii=False)


def _ring_state(r: RingTier):
    w = r.masks.shape[1]
    return (
        r.ids.tolist(),
        r.sent.tobytes(),
        r.units.tobytes(),
        r.mem.tobytes(),
        r.masks[:, :w].tolist(),
        r.counts.tolist(),
        r.times.tolist(),
        r.touched.tolist(),
        r.text,
        r.slot,
        r.head,
        r.filled,
        r.holes,
    )


def test_insert_one_leaves_the_ring_as_the_block_path_does():
    """One turn at a time (insert_one) and two at a time (the array path) give the same ring, across
    eviction, a hole left by a removal and a vocabulary that outgrows one mask word."""
    vocab = AttrVocab(NAMES)
    one, block = RingTier(6, vocab), RingTier(6, vocab)
    extra = [f"extra.slot{i:02d}" for i in range(30)]  # 48 + 30 names: masks of two words
    turns = [make_turn(i).with_id(i, 1000.0 + i, 50 + i) for i in range(1, 13)]
    for k in range(0, 12, 2):
        if k == 6:
            for name in extra:
                vocab.add(name)
            turns[k] = type(turns[k]).from_rows(
                turns[k].sent_vec, turns[k].mem_emb, frozenset(extra[-3:]) | turns[k].attrs, "t", "text", "d", "s"
            )
            turns[k] = turns[k].with_id(k + 1, 1000.0 + k + 1, 51 + k)
        pair = turns[k : k + 2]
        for t in pair:
            one.insert_one(
                t.id,
                t.sent_vec,
                unit_row(t.sent_vec),
                t.mem_emb,
                vocab.mask_int(t.attrs),
                t.time,
                t.touched,
                (t.conversation, t.modality, t.digest, t.summary),
            )
        block.batched_put(pair)
        if k == 2:
            assert one.remove(3) and block.remove(3)
        assert _ring_state(one)[:4] == _ring_state(block)[:4]
        assert _ring_state(one)[5:] == _ring_state(block)[5:]
        w = one.masks.shape[1]
        assert one.masks.tolist() == block.masks[:, :w].tolist() and not block.masks[:, w:].any()
    assert one.masks.shape[1] == 2
    assert one.get(11).same_content(turns[10]) and one.get(7).attrs == turns[6].attrs


def test_ack_mark_keeps_the_larger_id_through_its_map(tmp_path):
    path = str(tmp_path / "s.db")
    a, b = AckMark(path, 1.5), AckMark(path, 1.5)
    a.advance(5)  # creates the file (pwrite), then maps it
    assert read_ack(path, 1.5) == 5 and a._map is not None
    a.advance(6)  # through the map: a reader sees it at once
    assert read_ack(path, 1.5) == 6
    b.advance(9)
    a.advance(7)  # another writer went further: its mark is kept
    assert read_ack(path, 1.5) == 9 and a.read() == 9
    assert read_ack(path, 2.5) == 0  # the mark of another store (another creation time)
    a.close(), b.close()
    assert os.path.getsize(path + "-ack") == 24


def test_one_turn_write_on_a_full_disk_leaves_nothing(db):
    """The one-turn path (one autocommit INSERT) on SQLite's full-disk error: nothing stored, no
    transaction left open, the mark unchanged; the next write takes the next id."""
    store = SQLiteTier(db)
    store.commit([make_turn(k, "t") for k in range(1, 4)])
    known = make_turn(1, "t")  # names all known: the single-statement path
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")
    for _ in range(30):  # the page holding the rows fills up after a few turns
        try:
            store.commit([known])
        except MemoryStoreError as e:
            assert "full" in str(e)
            break
    else:
        pytest.fail("the page limit was never reached")
    n = len(store)
    assert not store._conn.in_transaction and store.max_id() == n
    assert read_ack(db, store._ack.created) == n
    store._conn.execute("PRAGMA max_page_count = 1000000")
    assert store.commit([make_turn(99, "t")])[0].id == n + 1
    assert store.integrity_check() == ["ok"]
    store.close()


def test_tiered_write_one_turn_publishes_what_a_restart_rebuilds(db):
    import torch

    turns = [make_turn(i, "w") for i in range(1, 40)]
    with TieredMemory(db, l1_size=8, l2_size=16) as mem:
        for t in turns:
            mem.write(torch.from_numpy(t.sent_vec[None].copy()), torch.from_numpy(t.mem_emb[None].copy()), [t.attrs])
        live = (_ring_state(mem.l2), _ring_state(mem.l1))
    with TieredMemory(db, l1_size=8, l2_size=16) as mem:
        rebuilt = (_ring_state(mem.l2), _ring_state(mem.l1))
    for a, b in zip(live, rebuilt):  # same turns in the same order, bit for bit (ring layout differs)
        ka, kb = sorted(a[9]), sorted(b[9])
        assert ka == kb
        for i in ka:
            sa, sb = a[9][i], b[9][i]
            assert a[1][1024 * sa : 1024 * (sa + 1)] == b[1][1024 * sb : 1024 * (sb + 1)]  # sent
            assert a[2][1024 * sa : 1024 * (sa + 1)] == b[2][1024 * sb : 1024 * (sb + 1)]  # units
            assert a[4][sa] == b[4][sb] and a[5][sa] == b[5][sb] and a[7][sa] == b[7][sb] and a[8][sa] == b[8][sb]


def _rows(db):
    """Every stored row but its write time (and the CRC, which covers the time)."""
    import sqlite3

    c = sqlite3.connect(db)
    try:
        cols = "id, conversation, modality, digest, summary, attrs, attr_mask, sent_vec, mem_emb, touched"
        return c.execute(f"SELECT {cols} FROM turns ORDER BY id").fetchall()
    finally:
        c.close()


def _without_times(state):
    return state[:6] + state[7:]


def test_one_turn_write_stores_and_publishes_what_the_general_path_does(tmp_path):
    """write() of one (1, D) float32 turn (the shortcut: no Turn, no (1, D) arrays) and the same
    turns through the general path (float64 inputs, which the shortcut leaves to it) give the same
    rows in L3 and the same L1 and L2, across new names, known names, info and no info, and a
    summary holding a lone surrogate (mended for display on both paths)."""
    import torch

    from v22sdk.engine.memory_head import TurnInfo

    turns = [make_turn(i, "w") for i in range(1, 30)]
    dbs = str(tmp_path / "one.db"), str(tmp_path / "general.db")
    with TieredMemory(dbs[0], l1_size=4, l2_size=8) as one, TieredMemory(dbs[1], l1_size=4, l2_size=8) as gen:
        for k, t in enumerate(turns):
            info = (
                None if k % 3 == 0 else [TurnInfo(t.conversation, t.modality, t.digest, t.summary + "\udcff" * (k % 2))]
            )
            sent, mem = t.sent_vec[None].copy(), t.mem_emb[None].copy()
            if k % 2:
                sent, mem = torch.from_numpy(sent), torch.from_numpy(mem)
            [a] = one.write(sent, mem, [t.attrs], info)
            [b] = gen.write(t.sent_vec[None].astype(np.float64), t.mem_emb[None].astype(np.float64), [t.attrs], info)
            assert a == b == k + 1
            assert one.l3.vocab.names == gen.l3.vocab.names
        assert _without_times(_ring_state(one.l2)) == _without_times(_ring_state(gen.l2))
        assert _without_times(_ring_state(one.l1)) == _without_times(_ring_state(gen.l1))
        assert one.get(29).summary == gen.get(29).summary and "\\x" in one.get(2).summary
    assert _rows(dbs[0]) == _rows(dbs[1])
    for path in dbs:
        with SQLiteTier(path) as s:
            assert [t.id for t in s.iter_turns()] == list(range(1, 30))  # every row passes its checksum


@pytest.mark.filterwarnings("error")  # no numpy warning (overflow, invalid) on the way either
def test_one_turn_write_refuses_what_the_general_path_refuses(db):
    """The shortcut leaves a row it cannot vouch for to the general path: the same error, nothing
    stored; large finite values (whose squares overflow float32) are stored."""
    from v22sdk.engine.memory_head import TurnInfo
    from v22sdk.errors import InputError

    t = make_turn(1, "r")
    s, m = t.sent_vec[None].copy(), t.mem_emb[None].copy()
    bad_s, bad_m = s.copy(), m.copy()
    bad_s[0, 7], bad_m[0, 300] = np.nan, -np.inf
    with TieredMemory(db) as mem:
        cases = [
            ((bad_s, m, [t.attrs]), "sent_vec.*non-finite"),
            ((s, bad_m, [t.attrs]), "mem_emb.*non-finite"),
            ((s[:, :255], m, [t.attrs]), r"sent_vec.*\(B, 256\)"),
            ((s, m, [frozenset({""})]), "non-empty slot names"),
            ((s, m, [frozenset({"a\ud800"})]), "not valid UTF-8"),
            ((s, m, [t.attrs], [TurnInfo(conversation="c\udcff")]), "conversation.*not valid UTF-8"),
            ((s, m, [t.attrs], [TurnInfo(conversation="a\nb")]), "control character"),
        ]
        for args, match in cases:
            with pytest.raises(InputError, match=match):
                mem.write(*args)
        assert len(mem) == 0 and len(mem.l2) == 0 and len(mem.l1) == 0
        big = np.full((1, 384), 3e38, np.float32)
        [i] = mem.write(s, big, [t.attrs])
        assert mem.get(i).mem_emb.tobytes() == big[0].tobytes()
        assert mem.l3.get(i).mem_emb.tobytes() == big[0].tobytes()


def test_one_turn_write_keeps_no_reference_to_the_callers_buffers(db):
    t = make_turn(1, "c")
    s, m = t.sent_vec[None].copy(), t.mem_emb[None].copy()
    with TieredMemory(db) as mem:
        [i] = mem.write(s, m, [t.attrs])
        s[:] = 0.0
        m[:] = 0.0
        assert mem.l2.get(i).sent_vec.tobytes() == t.sent_vec.tobytes()
        assert mem.l1.get(i).mem_emb.tobytes() == t.mem_emb.tobytes()
        assert mem.l3.get(i).same_content(mem.l2.get(i))
