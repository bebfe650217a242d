import json

import numpy as np
import pytest

from v22sdk import ContractViolation, InputError, TokenBatch, load_batches, save_batches


def unit_rows(n, seed=0):
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((n, 256))
    return (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)


def batch(n=5, seed=0, **kw):
    rng = np.random.default_rng(seed)
    attr = rng.uniform(-1, 1, (n, 384)).astype(np.float32)
    return TokenBatch(unit_rows(n, seed), attr, kw.pop("modality", "test"), **kw)


def test_valid_batch_is_read_only():
    b = batch()
    assert len(b) == 5
    with pytest.raises(ValueError):
        b.emb[0, 0] = 1.0


@pytest.mark.parametrize(
    "rule, mutate, index",
    [
        ("dtype", lambda e, a: (e.astype(np.float64), a), None),
        ("shape", lambda e, a: (e[:, :255], a), None),
        ("shape", lambda e, a: (e, a[:4]), None),
        ("finite", lambda e, a: (e, _set(a, 3, 7, np.nan)), 3),
        ("finite", lambda e, a: (_set(e, 2, 0, np.inf), a), 2),
        ("unit_norm_emb", lambda e, a: (_scale(e, 4, 1.001), a), 4),
        ("attr_bounds", lambda e, a: (e, _set(a, 1, 300, 1.5)), 1),
    ],
)
def test_contract_rules_name_rule_token_and_value(rule, mutate, index):
    b = batch()
    emb, attr = mutate(b.emb.copy(), b.attr.copy())
    with pytest.raises(ContractViolation) as info:
        TokenBatch(emb, attr, "test")
    assert info.value.rule == rule
    assert info.value.index == index
    assert rule in str(info.value)


@pytest.mark.parametrize(
    "rule, mutate",
    [
        ("finite", lambda e, a: (e, _set(a, 2500, 7, np.nan))),
        ("finite", lambda e, a: (_set(e, 2500, 0, np.inf), a)),
        ("unit_norm_emb", lambda e, a: (_scale(e, 2500, 1.001), a)),
        ("attr_bounds", lambda e, a: (e, _set(a, 2500, 300, -1.5))),
    ],
)
def test_a_broken_token_past_the_first_blocks_is_caught(rule, mutate):
    # the fast check reads the batch in blocks of rows: a fault in a later block must still fail it
    b = batch(3000)
    emb, attr = mutate(b.emb.copy(), b.attr.copy())
    with pytest.raises(ContractViolation) as info:
        TokenBatch(emb, attr, "test")
    assert (info.value.rule, info.value.index) == (rule, 2500)


def _set(a, i, j, v):
    a[i, j] = v
    return a


def _scale(e, i, s):
    e[i] *= s
    return e


def test_norm_tolerance_edge():
    e = unit_rows(2)
    e[0] *= np.float32(1 + 5e-5)  # inside 1e-4
    TokenBatch(e, np.zeros((2, 384), np.float32), "t")


def test_offsets_validated():
    with pytest.raises(ContractViolation, match="offsets"):
        batch(offsets={"char": np.arange(4)})
    with pytest.raises(ContractViolation, match="offsets"):
        batch(offsets={"time": np.zeros((5, 3))})
    b = batch(offsets={"char": np.arange(5), "time": np.zeros((5, 2))})
    assert b.offsets["char"].tolist() == [0, 1, 2, 3, 4]


def test_array_roundtrip_and_views():
    b = batch(offsets={"char": np.arange(5)}, source="x")
    arr = b.to_array()
    assert arr.shape == (5, 640) and arr.dtype == np.float32
    back = TokenBatch.from_array(arr, "test", offsets={"char": np.arange(5)}, source="x")
    assert back == b
    one = b[2]
    assert len(one) == 1 and one.offsets["char"].tolist() == [2]
    assert b[-1].offsets["char"].tolist() == [4]
    with pytest.raises(IndexError):
        b[5]


def test_torch_roundtrip():
    torch = pytest.importorskip("torch")
    b = batch()
    t = b.to_torch()
    assert t.shape == (5, 640) and t.dtype == torch.float32
    assert TokenBatch.from_torch(t, "test") == b


def test_json_roundtrip_is_bit_exact():
    b = batch(offsets={"time": np.array([[0.1, 0.2]] * 5), "char": np.arange(5, dtype=np.int32)}, source="s")
    back = TokenBatch.from_json(b.to_json())
    assert back == b
    assert back.offsets["char"].dtype == np.int32
    assert json.loads(b.to_json())["format"] == "v22sdk.tokens"


def test_npz_roundtrip_is_bit_exact(tmp_path):
    b1, b2 = batch(seed=1, offsets={"char": np.arange(5)}), batch(seed=2, modality="other")
    save_batches(tmp_path / "t.npz", [b1, b2])
    assert load_batches(tmp_path / "t.npz") == [b1, b2]
    b1.save_npz(tmp_path / "one.npz")
    assert TokenBatch.load_npz(tmp_path / "one.npz") == b1


def test_bad_token_files_raise_input_error(tmp_path):
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="junk.npz"):
        load_batches(tmp_path / "junk.npz")
    good = tmp_path / "good.npz"
    save_batches(good, [batch(seed=1)])
    data = good.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="cut.npz: not a v22sdk token file"):
        load_batches(tmp_path / "cut.npz")
    np.savez(tmp_path / "list.npz", header=np.frombuffer(b"[1, 2]", dtype=np.uint8))
    with pytest.raises(InputError, match="list.npz: not a v22sdk token file"):
        load_batches(tmp_path / "list.npz")
    np.savez(
        tmp_path / "nobatch.npz",
        header=np.frombuffer(
            json.dumps({"format": "v22sdk.tokens", "batches": [{"modality": "x"}]}).encode(), dtype=np.uint8
        ),
    )
    with pytest.raises(InputError, match="nobatch.npz: cannot read token file: KeyError"):
        load_batches(tmp_path / "nobatch.npz")
    with pytest.raises(InputError):
        TokenBatch.from_json("{not json")
    with pytest.raises(InputError):
        TokenBatch.from_json('{"format": "other"}')


def test_concat():
    b = TokenBatch.concat([batch(2, offsets={"char": np.arange(2)}), batch(3, seed=1, offsets={"char": np.arange(3)})])
    assert len(b) == 5 and b.offsets["char"].tolist() == [0, 1, 0, 1, 2]
    with pytest.raises(ContractViolation):
        TokenBatch.concat([batch(), batch(modality="other")])


def test_equality_is_bitwise():
    b = batch()
    attr = b.attr.copy()
    attr[0, 0] = np.nextafter(attr[0, 0], np.float32(2))
    assert TokenBatch(b.emb.copy(), attr, "test") != b


@pytest.mark.parametrize("scale, ok", [(1 + 9.5e-5, True), (1 - 9.5e-5, True), (1 + 1.05e-4, False)])
def test_norm_tolerance_is_decided_exactly_near_the_edge(scale, ok):
    e = unit_rows(3).astype(np.float64)
    e[1] *= scale
    e = e.astype(np.float32)
    if ok:
        TokenBatch(e, np.zeros((3, 384), np.float32), "t")
    else:
        with pytest.raises(ContractViolation, match="unit_norm_emb"):
            TokenBatch(e, np.zeros((3, 384), np.float32), "t")


def test_a_batch_is_read_only_but_leaves_the_callers_arrays_writable():
    rng = np.random.default_rng(0)
    emb = rng.normal(size=(3, 256)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    attr = np.zeros((3, 384), dtype=np.float32)
    char = np.arange(3)
    b = TokenBatch(emb=emb, attr=attr, modality="m", offsets={"char": char})
    assert emb.flags.writeable and attr.flags.writeable and char.flags.writeable
    for array in (b.emb, b.attr, b.offsets["char"]):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0
    assert np.shares_memory(b.emb, emb)  # valid float32 input is not copied
