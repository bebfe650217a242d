"""The compiled top-1 scan (v22sdk/memory/_scan.c) against the numpy path it replaces for a
single-query top-1 read of L2: the same id and the same score bits, on random rings (ties, empty
attribute sets, unknown names, near-duplicates) and on the benchmark's workload."""

from __future__ import annotations

import numpy as np
import pytest
from _gen import NAMES
from hypothesis import given, settings
from hypothesis import strategies as st

from v22sdk.memory import ring as ring_module
from v22sdk.memory.device_tier import DeviceTier
from v22sdk.memory.ring import RingTier
from v22sdk.memory.scoring import AttrVocab, exact_scores, pick_topk, unit_rows
from v22sdk.testing.memory_workload import NAMES as WORKLOAD_NAMES
from v22sdk.testing.memory_workload import Workload


def test_the_compiled_scan_is_built():
    # setup.py builds it on install (pip install -e .); a missing C compiler leaves the numpy path
    assert ring_module.SCAN == "compiled", "v22sdk.memory._scan is not built: reinstall with a C compiler"


def both(ring: RingTier, q, qm, qc):
    """(compiled, numpy) results of one top-1 read."""
    got = ring.search(q, qm, qc, 1)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ring_module, "_compiled", None)
        ref = ring.search(q, qm, qc, 1)
    return got, ref


def fill(ring: RingTier, units: np.ndarray, masks: np.ndarray, ids: np.ndarray) -> None:
    n = len(ids)
    ring.insert_block(
        ids, units, np.zeros((n, 384), np.float32), masks, np.ones(n), ids, [("", "", "", "")] * n, units=units
    )


@st.composite
def rings(draw):
    n = draw(st.integers(9, 300))
    capacity = draw(st.integers(n, n + 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    vocab = AttrVocab(NAMES[: draw(st.integers(1, len(NAMES)))])
    units = unit_rows(rng.standard_normal((n, 256)).astype(np.float32))
    dup = draw(st.integers(0, n // 3))  # identical rows: ties broken by the higher id
    if dup:
        units[rng.choice(n, dup)] = units[0]
    names = list(vocab.bits)
    sets = [frozenset(rng.choice(names, int(rng.integers(0, min(8, len(names)) + 1)), replace=False)) for _ in range(n)]
    masks = np.stack([vocab.mask(s) for s in sets])
    ids = rng.permutation(np.arange(1, 10 * n))[:n].astype(np.int64)
    ring = RingTier(capacity, vocab)
    fill(ring, units, masks, ids)
    kind = draw(st.sampled_from(["random", "near", "exact"]))
    row = int(rng.integers(n))
    if kind == "random":
        q = rng.standard_normal(256).astype(np.float32)
    else:
        q = units[row] + (0.0 if kind == "exact" else 0.3 / 16) * rng.standard_normal(256).astype(np.float32)
    qattrs = set(rng.choice(names, int(rng.integers(0, min(6, len(names)) + 1)), replace=False))
    if kind != "random":
        qattrs |= sets[row]
    if draw(st.booleans()):
        qattrs.add("not.a.known.slot")  # counts in |query|, has no bit
    qa = frozenset(qattrs)
    return ring, unit_rows(q[None]), vocab.mask(qa)[None], np.array([len(qa)], np.int32)


@settings(max_examples=150, deadline=None)
@given(rings())
def test_compiled_scan_gives_the_numpy_paths_id_and_score_bits(case):
    ring, q, qm, qc = case
    got, ref = both(ring, q, qm, qc)
    assert got[0].tolist() == ref[0].tolist()
    assert got[1].tobytes() == ref[1].tobytes()


@pytest.mark.parametrize("kind", ["near", "fresh"])
def test_compiled_scan_on_the_benchmark_workload(kind):
    """10,000 rows of the benchmark's topics, its near-duplicate and fresh queries: the same winner
    and score as the numpy path and as the exhaustive scan."""
    w = Workload(0)
    sent, masks = w.block_masks(0, 10_000)
    vocab = AttrVocab(WORKLOAD_NAMES)
    ring = RingTier(10_000, vocab)
    units = unit_rows(sent)
    ids = np.arange(1, 10_001)
    fill(ring, units, masks, ids)
    sent_q, attrs, _ = w.queries(kind, 24, 10_000, seed=1)
    qs = unit_rows(sent_q)
    qm = np.stack([vocab.mask(a) for a in attrs])
    qc = np.array([len(a) for a in attrs], np.int32)
    counts = np.bitwise_count(masks).sum(axis=1, dtype=np.int32)
    for i in range(24):
        got, ref = both(ring, qs[i : i + 1], qm[i : i + 1], qc[i : i + 1])
        assert got[0].tolist() == ref[0].tolist() and got[1].tobytes() == ref[1].tobytes()
        # the oracle: every row scored exactly, no pruning
        sel, sc = pick_topk(ids, exact_scores(units, masks, counts, qs[i], qm[i], int(qc[i])), 1)
        assert got[0][0].tolist() == ids[sel].tolist()
        assert got[1][0].tobytes() == sc.tobytes()


def test_rings_with_holes_and_few_rows_read_by_numpy(monkeypatch):
    vocab = AttrVocab(NAMES)
    rng = np.random.default_rng(3)
    units = unit_rows(rng.standard_normal((40, 256)).astype(np.float32))
    masks = np.stack([vocab.mask(frozenset(NAMES[i % 7 : i % 7 + 3])) for i in range(40)])
    ring = RingTier(40, vocab)
    fill(ring, units, masks, np.arange(1, 41))
    calls = []
    real = ring_module._compiled

    class Spy:
        def top1(self, *a):
            calls.append(1)
            return real.top1(*a)

    monkeypatch.setattr(ring_module, "_compiled", Spy())
    q, qm, qc = units[5:6], vocab.mask(frozenset(NAMES[5:8]))[None], np.array([3], np.int32)
    assert ring.search(q, qm, qc, 1)[0].tolist() == [[6]] and calls == [1]
    ring.remove(6)  # a hole: the compiled scan does not know removed rows
    assert ring.search(q, qm, qc, 1)[0][0, 0] != 6 and calls == [1]
    small = RingTier(8, vocab)
    fill(small, units[:8], masks[:8], np.arange(1, 9))
    assert small.search(units[2:3], qm, qc, 1)[0].tolist() == [[3]] and calls == [1]
    assert ring.search(np.repeat(q, 2, axis=0), np.repeat(qm, 2, axis=0), np.array([3, 3]), 1)[0].shape == (2, 1)
    assert calls == [1]  # two queries: the numpy path


def test_device_tier_keeps_its_own_cosines():
    assert DeviceTier.compiled_scan is False and RingTier.compiled_scan is True


def test_the_scan_refuses_buffers_too_short_for_its_rows():
    scan = ring_module._compiled
    f32, i64, i32 = np.zeros(10 * 256, np.float32), np.zeros(10, np.int64), np.zeros(10, np.int32)
    masks, q, qm = np.zeros(10, np.uint64), np.zeros(256, np.float32), np.zeros(1, np.uint64)
    assert scan.top1(f32, masks, 1, 10, i32, i64, 10, q, qm, 0, 1e-4, 1e-5)[0] == 0  # ties: the first row
    with pytest.raises(ValueError, match="units holds 10240 bytes, needs 11264"):
        scan.top1(f32, masks, 1, 10, np.zeros(11, np.int32), np.zeros(11, np.int64), 11, q, qm, 0, 1e-4, 1e-5)
    with pytest.raises(ValueError, match="masks"):
        scan.top1(f32, masks, 1, 10, i32, i64, 10, q, np.zeros(2, np.uint64), 1, 1e-4, 1e-5)
    with pytest.raises(ValueError, match="n > 0"):
        scan.top1(f32, masks, 1, 10, i32, i64, 0, q, qm, 0, 1e-4, 1e-5)
    with pytest.raises(TypeError):  # not a buffer
        scan.top1(f32, masks, 1, 10, i32, i64, 10, [0.0] * 256, qm, 0, 1e-4, 1e-5)


def test_concurrent_reads_of_one_ring_agree_with_sequential_ones():
    """The scan releases the GIL and keeps its work arrays per call: threads reading one ring at
    once get what one thread gets."""
    import threading

    w = Workload(1)
    sent, masks = w.block_masks(0, 3_000)
    vocab = AttrVocab(WORKLOAD_NAMES)
    ring = RingTier(3_000, vocab)
    fill(ring, unit_rows(sent), masks, np.arange(1, 3_001))
    sent_q, attrs, _ = w.queries("fresh", 40, 3_000, seed=2)
    qs, qm = unit_rows(sent_q), np.stack([vocab.mask(a) for a in attrs])
    qc = np.array([len(a) for a in attrs], np.int32)
    want = [ring.search(qs[i : i + 1], qm[i : i + 1], qc[i : i + 1], 1) for i in range(40)]
    got: dict[int, list] = {}

    def reader(t: int) -> None:
        got[t] = [ring.search(qs[i : i + 1], qm[i : i + 1], qc[i : i + 1], 1) for i in range(40) for _ in range(5)]

    threads = [threading.Thread(target=reader, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for t in range(4):
        for j, (ids, sc) in enumerate(got[t]):
            assert ids.tolist() == want[j // 5][0].tolist() and sc.tobytes() == want[j // 5][1].tobytes()


def test_a_build_for_another_score_is_not_used():
    """An extension whose weights differ from scoring's (a stale build) leaves the numpy path."""
    real = ring_module._compiled
    assert ring_module._usable(real) is real

    class Stale:
        W_COS, W_JAC, MAX_WORDS = 0.5, 0.5, real.MAX_WORDS

    class Older:  # a build from before the module carried its weights
        top1 = real.top1

    assert ring_module._usable(Stale()) is None
    assert ring_module._usable(Older()) is None
    assert ring_module._usable(None) is None
