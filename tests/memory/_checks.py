"""Reliability checks shared by the SQLite tests and the PostgreSQL ones (tests/scale): both
backends promise the same durability and answer the same queries, so one body checks both."""

from __future__ import annotations

import numpy as np
from _gen import NAMES, make_turn


def finish(p, timeout=120):
    """All output of a writer subprocess ``p`` (read through the same buffered pipes that read
    READY, which ``communicate()`` would bypass, losing lines already buffered) and its status."""
    out, err = p.stdout.read(), p.stderr.read()
    p.wait(timeout)
    return out, err


def acks(text):
    """``(id, k)`` of every ``ACK id k`` line a writer printed."""
    return [(int(a), int(b)) for tag, a, b, *_ in (ln.split() for ln in text.splitlines()) if tag == "ACK"]


def assert_rows_are_the_stream(store, tag="t"):
    """Every row i is turn i of ``tag`` (bit-identical vectors), ids 1..n without gaps; returns n."""
    rows = list(store.iter_turns())
    assert [t.id for t in rows] == list(range(1, len(rows) + 1))
    for t in rows:
        want = make_turn(t.id, tag)
        assert t.digest == want.digest and t.attrs == want.attrs
        assert t.sent_vec.tobytes() == want.sent_vec.tobytes()
        assert t.mem_emb.tobytes() == want.mem_emb.tobytes()
    return len(rows)


def assert_two_writers_union(store, out_a, out_b, n=120):
    """Two writers ``A`` and ``B`` of ``n`` turns each: the store holds exactly the union of what
    both acknowledged, bit-identical, ids 1..2n without gaps, each writer's ids increasing."""
    want = {("A", k) for _, k in acks(out_a)} | {("B", k) for _, k in acks(out_b)}
    assert len(want) == 2 * n
    rows = list(store.iter_turns())
    assert store.integrity_check() == ["ok"]
    assert [t.id for t in rows] == list(range(1, 2 * n + 1))
    got = set()
    for t in rows:
        tag, k = t.conversation, int(t.digest.split("-")[1])
        ref = make_turn(k, tag)
        assert t.sent_vec.tobytes() == ref.sent_vec.tobytes() and t.attrs == ref.attrs
        got.add((tag, k))
    assert got == want
    ids_a = [i for i, _ in acks(out_a)]
    assert ids_a == sorted(ids_a)


def restart_queries(turns, seed=3):
    """100 queries near stored turns (hits in L1, L2 and L3) and random ones (misses: L3 scans)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, len(turns), 100)
    noise = rng.standard_normal((100, 256)).astype(np.float32) * rng.choice([0.05, 0.5, 5.0], (100, 1))
    qs = np.stack([turns[i].sent_vec for i in src]) + noise
    qa = [turns[i].attrs if j % 2 else frozenset(NAMES[j % 40 : j % 40 + 3]) for j, i in enumerate(src)]
    return qs, qa


def assert_same_answers(mem, restarted, qs, qa):
    """``mem`` and ``restarted`` give the same top-3 (ids, scores bit for bit, order) to every
    query, asked in batches of 10 as stage E reads, and end with the same L2."""
    import torch

    def run(m):
        return [
            tuple(a.copy() for a in m.search(torch.from_numpy(qs[j : j + 10]), qa[j : j + 10], k=3))
            for j in range(0, len(qs), 10)
        ]

    for (i1, s1), (i2, s2) in zip(run(mem), run(restarted)):
        assert np.array_equal(i1, i2) and s1.tobytes() == s2.tobytes()
    assert sorted(mem.l2.slot) == sorted(restarted.l2.slot)
    assert min(mem.l2.slot) <= 140  # some answers came from L3 and were promoted
