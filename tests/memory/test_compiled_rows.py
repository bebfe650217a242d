"""The compiled row work of the per-turn write (v22sdk/memory/_rows.c) against the numpy path it
replaces: the same unit rows bit for bit, the same ring state after any sequence of inserts,
evictions, removals and wider masks, the same rows in L3 and the same errors from
TieredMemory.write; and its own refusals of arrays of the wrong kind."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch
from _gen import NAMES
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from v22sdk.engine.memory_head import TurnInfo
from v22sdk.errors import InputError
from v22sdk.memory import ring as ring_module
from v22sdk.memory import tiered as tiered_module
from v22sdk.memory.device_tier import DeviceTier
from v22sdk.memory.ring import RingTier
from v22sdk.memory.scoring import AttrVocab, unit_row
from v22sdk.memory.tiered import TieredMemory

_rows = ring_module._rows


def test_the_compiled_rows_are_built():
    # setup.py builds them on install (pip install -e .); a missing C compiler leaves the numpy path
    assert ring_module.ROWS == "compiled", "v22sdk.memory._rows is not built: reinstall with a C compiler"


@contextlib.contextmanager
def numpy_path():
    """The numpy path of the write, as an install without the extension runs it."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ring_module, "_rows", None)
        m.setattr(tiered_module, "_load", None)
        yield


def outs():
    return np.empty(256, np.float32), np.empty(256, np.float32), np.empty(384, np.float32)


float32_rows = hnp.arrays(
    np.float32,
    (1, 256),
    elements=st.floats(width=32, allow_nan=False, allow_infinity=False, allow_subnormal=True),
)


@settings(max_examples=300, deadline=None)
@given(float32_rows, st.integers(0, 2**32 - 1))
def test_load_copies_the_rows_and_gives_unit_row_bits(sent, seed):
    mem = np.random.default_rng(seed).standard_normal((1, 384)).astype(np.float32)
    s, u, m = outs()
    assert _rows.load(sent, mem, s, u, m) is True
    assert s.tobytes() == sent[0].tobytes() and m.tobytes() == mem[0].tobytes()
    assert u.tobytes() == unit_row(sent[0]).tobytes()


def test_load_on_wide_magnitudes_and_zero_rows():
    rng = np.random.default_rng(0)
    s, u, m = outs()
    mem = np.zeros((1, 384), np.float32)
    for scale in (1e-38, 1e-20, 1.0, 1e20, 1e37):
        sent = (rng.standard_normal((1, 256)) * scale).astype(np.float32)
        assert _rows.load(sent, mem, s, u, m)
        assert u.tobytes() == unit_row(sent[0]).tobytes(), scale
    assert _rows.load(np.zeros((1, 256), np.float32), mem, s, u, m)
    assert not u.any()


def test_load_reads_strided_and_tensor_arrays():
    s, u, m = outs()
    big = np.arange(3 * 512, dtype=np.float32).reshape(3, 512)
    mem = torch.arange(384, dtype=torch.float32).reshape(1, 384)
    assert _rows.load(big[1:2, ::2], mem.numpy(), s, u, m)
    assert s.tobytes() == big[1, ::2].tobytes() and m.tobytes() == mem.numpy()[0].tobytes()


@pytest.mark.parametrize(
    "sent, mem",
    [
        (np.full((1, 256), np.nan, np.float32), np.zeros((1, 384), np.float32)),
        (np.zeros((1, 256), np.float32), np.full((1, 384), np.inf, np.float32)),
        (np.zeros((1, 256), np.float64), np.zeros((1, 384), np.float32)),  # another type
        (np.zeros((1, 256), ">f4"), np.zeros((1, 384), np.float32)),  # another byte order
        (np.zeros(256, np.float32), np.zeros((1, 384), np.float32)),  # another shape
        (np.zeros((2, 256), np.float32), np.zeros((1, 384), np.float32)),
        (np.zeros((1, 255), np.float32), np.zeros((1, 384), np.float32)),
        (None, np.zeros((1, 384), np.float32)),  # no buffer at all
        ([0.0] * 256, np.zeros((1, 384), np.float32)),
    ],
)
def test_load_refuses_what_the_general_path_must_convert_or_name(sent, mem):
    assert _rows.load(sent, mem, *outs()) is False


def test_load_names_a_wrong_out_buffer():
    s, u, m = outs()
    ok = np.zeros((1, 256), np.float32), np.zeros((1, 384), np.float32)
    with pytest.raises(ValueError, match="units_out holds 512 bytes"):
        _rows.load(*ok, s, u[:128], m)
    with pytest.raises(ValueError, match="mem_out"):
        _rows.load(*ok, s, u, m[:10])
    with pytest.raises(ValueError, match="mem_out is not a writable"):
        _rows.load(*ok, s, u, bytes(1536))


# -- Ring.insert against RingTier.insert_one's numpy path -----------------------------------------


def state(r: RingTier) -> tuple:
    arrays = tuple(getattr(r, a).tobytes() for a in ("sent", "units", "mem", "masks", "counts", "ids", "times"))
    return (*arrays, r.touched.tobytes(), list(r.text), dict(r.slot), r.head, r.filled, r.holes, r.masks.shape)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 7), st.integers(0, 2**32 - 1), st.lists(st.integers(0, 9), min_size=1, max_size=40))
def test_ring_insert_leaves_the_numpy_paths_state(capacity, seed, ops):
    """Inserts (with eviction once full), removals (holes refilled) and a vocabulary that grows
    past 64 names (wider masks, a new compiled writer) give identical rings either way."""
    rng = np.random.default_rng(seed)
    names = [f"n{i}" for i in range(200)]
    vocab_c, vocab_n = AttrVocab(names[:3]), AttrVocab(names[:3])
    compiled, reference = RingTier(capacity, vocab_c), RingTier(capacity, vocab_n)
    next_id = 0  # from 0: an id the ring holds is any id >= 0 (-1 marks an empty slot)
    for op in ops:
        if op == 0 and compiled.slot:  # remove a held turn
            victim = int(rng.choice(sorted(compiled.slot)))
            assert compiled.remove(victim) == reference.remove(victim)
            continue
        if op == 1:  # the vocabulary grows: masks wider than the ring's
            for v in (vocab_c, vocab_n):
                for n in names[len(v) : len(v) + 70]:
                    v.add(n)
        sent = rng.standard_normal(256).astype(np.float32)
        mem = rng.standard_normal(384).astype(np.float32)
        k = int(rng.integers(0, len(vocab_c) + 1))  # up to every name: counts past a byte's bits
        attrs = frozenset(rng.choice(names[: len(vocab_c)], k, replace=False).tolist())
        args = (
            next_id,
            sent,
            unit_row(sent),
            mem,
            vocab_c.mask_int(attrs),
            float(next_id) / 3,
            2 * next_id,
            (
                "c",
                "m",
                str(next_id),
                "",
            ),
        )
        got = compiled.insert_one(*args)
        with numpy_path():
            want = reference.insert_one(*args)
        assert got == want
        assert state(compiled) == state(reference)
        next_id += 1
    for t in list(reference.slot):
        a, b = compiled.get(t), reference.get(t)
        assert a is not None and b is not None and a.same_content(b)


def ring_with_one_turn() -> RingTier:
    r = RingTier(4, AttrVocab(NAMES))
    x = np.ones(256, np.float32)
    r.insert_one(1, x, unit_row(x), np.zeros(384, np.float32), 0b101, 1.0, 1, ("", "", "", ""))
    return r


def test_ring_insert_refuses_rows_of_another_kind_and_changes_nothing():
    r = ring_with_one_turn()
    before = state(r)
    x, m = np.ones(256, np.float32), np.zeros(384, np.float32)
    cases = [
        (x.astype(np.float64)[:128], unit_row(x), m, "sent is not 256 contiguous float32"),
        (x, x[::2], m, "units is not 256"),
        (x, unit_row(x), m[:300], "mem is not 384"),
    ]
    for s, u, mm, msg in cases:
        with pytest.raises(ValueError, match=msg):
            r.insert_one(2, s, u, mm, 1, 2.0, 2, ("", "", "", ""))
        assert state(r) == before
    view = r._view
    wide = 8 * (r.masks.shape[1] + 1)
    with pytest.raises(ValueError, match=f"mask holds {wide} bytes"):  # wider than the ring's masks
        view.insert(r, 2, x, unit_row(x), m, bytes(wide), 2.0, 2, ("", "", "", ""))
    assert state(r) == before


def test_ring_refuses_arrays_of_another_layout():
    r = RingTier(4, AttrVocab(NAMES))
    arrays = [r.sent, r.units, r.mem, r.masks, r.counts, r.ids, r.times, r.touched]
    for i, bad, msg in [
        (0, np.zeros((4, 256), np.float64), "sent is not a 2-D array of format 'f'"),
        (4, np.zeros(4, np.int64), "counts is not a 1-D array of format 'i'"),
        (5, np.zeros(5, np.int64), "ids does not have"),
        (2, np.zeros((4, 384), np.float32, order="F"), "mem is not a writable C-contiguous array"),
    ]:
        with pytest.raises(ValueError, match=msg):
            _rows.Ring(*arrays[:i], bad, *arrays[i + 1 :])
    ro = r.times.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="times is not a writable array"):
        _rows.Ring(*arrays[:6], ro, arrays[7])


def test_a_device_tier_off_the_cpu_mirrors_each_insert():
    """L1 on a device copies every written slot there (here a CPU copy posing as a device)."""
    l1 = DeviceTier(3, AttrVocab(NAMES))
    l1.shared, l1.mirrored = False, True
    l1.units_dev, l1.mem_dev = torch.zeros(3, 256), torch.zeros(3, 384)
    rng = np.random.default_rng(1)
    for i in range(1, 6):
        x = rng.standard_normal(256).astype(np.float32)
        l1.insert_one(i, x, unit_row(x), rng.standard_normal(384).astype(np.float32), 1, 1.0, i, ("", "", "", ""))
        assert torch.equal(l1.units_dev, torch.from_numpy(l1.units))
        assert torch.equal(l1.mem_dev, torch.from_numpy(l1.mem))
    ids = np.arange(10, 12, dtype=np.int64)
    rows = rng.standard_normal((2, 256)).astype(np.float32)
    l1.insert_block(
        ids, rows, np.ones((2, 384), np.float32), np.ones((2, 1), np.uint64), np.ones(2), ids, [("",) * 4] * 2
    )
    assert torch.equal(l1.units_dev, torch.from_numpy(l1.units))
    assert torch.equal(l1.mem_dev, torch.from_numpy(l1.mem))


# -- TieredMemory.write: compiled and numpy paths store the same --------------------------------


def stored(mem: TieredMemory) -> list:
    """Every L3 row but its time and crc (the time differs between two stores), and the rings."""
    rows = mem.l3._require().execute(
        "SELECT id, conversation, modality, digest, summary, attrs, attr_mask, sent_vec, mem_emb, touched FROM turns "
        "ORDER BY id"
    )
    return [list(rows), state(mem.l2)[:6], state(mem.l1)[:6]]


def test_write_stores_the_same_either_way(tmp_path):
    rng = np.random.default_rng(2)
    a = TieredMemory(tmp_path / "a.db", l1_size=3, l2_size=5)
    b = TieredMemory(tmp_path / "b.db", l1_size=3, l2_size=5)
    kept = []
    for i in range(12):
        sent = torch.from_numpy(rng.standard_normal((1, 256)).astype(np.float32))
        mem = rng.standard_normal((1, 384)).astype(np.float32)
        attrs = frozenset(rng.choice(NAMES, int(rng.integers(0, 5)), replace=False).tolist())
        # every third turn with its info (a summary with an undecodable byte, mended for display)
        info = None if i % 3 else [TurnInfo(f"c{i}", "audio", "d" * i, "s\udcff" * (i % 2))]
        assert a.write(sent, mem, [attrs], info) == [i + 1]
        with numpy_path():
            assert b.write(sent, mem, [attrs], info) == [i + 1]
        kept.append((sent.numpy()[0].copy(), mem[0].copy()))
    assert stored(a) == stored(b)
    # the memory's own rows are reused by the next write: what it stored stays what was written
    for i, (s, m) in enumerate(kept, 1):
        t = a.l3.get(i)
        assert t is not None and t.sent_vec.tobytes() == s.tobytes() and t.mem_emb.tobytes() == m.tobytes()
    a.close(), b.close()


@pytest.mark.parametrize(
    "sent, mem, attrs",
    [
        (np.full((1, 256), np.nan, np.float32), np.zeros((1, 384), np.float32), {"a"}),
        (np.zeros((1, 256), np.float32), np.full((1, 384), -np.inf, np.float32), {"a"}),
        (np.zeros((1, 255), np.float32), np.zeros((1, 384), np.float32), {"a"}),
        (np.full((1, 256), np.nan, np.float32), np.zeros((1, 384), np.float32), {""}),  # rows named first
        (np.zeros((1, 256), np.float32), np.zeros((1, 384), np.float32), {""}),
        (np.zeros((1, 256), np.float32), np.zeros((1, 384), np.float32), {"bad\udc80"}),
    ],
)
def test_write_refuses_the_same_inputs_with_the_same_words_and_stores_nothing(tmp_path, sent, mem, attrs):
    a = TieredMemory(tmp_path / "a.db")
    b = TieredMemory(tmp_path / "b.db")
    with pytest.raises(InputError) as got:
        a.write(sent, mem, [attrs])
    with numpy_path(), pytest.raises(InputError) as want:
        b.write(sent, mem, [attrs])
    assert str(got.value) == str(want.value)
    assert len(a) == 0 and len(a.l2) == 0 and len(a.l1) == 0
    a.close(), b.close()
