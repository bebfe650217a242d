import numpy as np
import pytest

from v22sdk import ZONES, AttributeSchema, ContractViolation, Slot, TokenBatch
from v22sdk.schema import zone_of


def schema():
    return AttributeSchema.build("vision", [("vis.a.x", "x"), ("vis.a.y", "y", "tanh"), ("vis.b", "b")])


def test_build_lays_out_in_zone():
    s = schema()
    assert [x.index for x in s] == [128, 129, 130]
    assert s.index("vis.a.y") == 129 and s.name(130) == "vis.b" and s.name(200) is None
    assert s["vis.a.y"].scaling == "tanh" and s["vis.a.y"].token_index == 256 + 129
    assert s.declared_mask.sum() == 3 and "vis.a.x" in s


@pytest.mark.parametrize(
    "slots, message",
    [
        ((Slot("vis.a", 128, "m"), Slot("vis.a", 129, "m")), "used twice"),
        ((Slot("vis.a", 128, "m"), Slot("vis.b", 128, "m")), "position 128"),
        ((Slot("vis.a", 10, "m"),), "outside the vision zone"),
        ((Slot("Bad Name", 130, "m"),), "dotted"),
        ((Slot("vis.a", 130, " "),), "no meaning"),
    ],
)
def test_invalid_schemas_are_rejected(slots, message):
    with pytest.raises(ValueError, match=message):
        AttributeSchema("vision", slots)


def test_zones():
    assert [len(z) for z in ZONES.values()] == [128, 128, 128]
    assert zone_of(0) == "language" and zone_of(128) == "vision" and zone_of(383) == "audio"
    with pytest.raises(IndexError):
        zone_of(384)


def tokens(rows):
    e = np.zeros((len(rows), 256), np.float32)
    e[:, 0] = 1
    return TokenBatch(e, np.stack(rows).astype(np.float32), "t")


def test_explain_orders_by_magnitude_and_is_stable():
    s = schema()
    t = tokens([s.vector({"vis.a.x": 0.2, "vis.a.y": -0.9, "vis.b": 0.2}), s.vector({})])
    out = s.explain(t, top=2)
    assert out[0] == [("vis.a.y", pytest.approx(-0.9)), ("vis.a.x", pytest.approx(0.2))]
    assert out[1] == []
    assert s.active_names(t) == frozenset({"vis.a.x", "vis.a.y", "vis.b"})
    assert s.values(t.attr[0])["vis.b"] == pytest.approx(0.2)


def test_check_declared_names_slot_and_token():
    s = schema()
    row = s.vector({"vis.a.x": 0.5})
    bad = row.copy()
    bad[300] = 0.25
    s.check_declared(tokens([row]))
    with pytest.raises(ContractViolation) as info:
        s.check_declared(tokens([row, bad]))
    assert info.value.rule == "declared_slots" and info.value.index == 1 and "attr[300]" in str(info.value)


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 200])
def test_written_columns_is_exactly_any_nonzero(n):
    from v22sdk.contract import written_columns

    rng = np.random.default_rng(n)
    attr = np.zeros((n, 384), dtype=np.float32)
    if n:
        rows = rng.integers(0, n, 40)
        cols = rng.integers(0, 384, 40)
        attr[rows, cols] = rng.choice(np.array([-0.0, 1e-45, -1e-45, 0.5, -1.0], dtype=np.float32), 40)
        attr[n - 1, 383] = 1e-40  # a denormal in the last row (past the 64-row blocks)
        attr[0, 7] = -0.0  # -0.0 is not a written value
    assert (written_columns(attr) == (attr != 0).any(axis=0)).all()
    assert (written_columns(np.asfortranarray(attr)) == (attr != 0).any(axis=0)).all()  # any layout
    if n:
        assert (tokens(list(attr)).written_columns() == (attr != 0).any(axis=0)).all()


@pytest.mark.parametrize("n", [1000, 3000])  # 3000: validation computes the columns on its way
def test_check_declared_catches_a_stray_value_in_a_long_batch(n):
    s = schema()
    attr = np.zeros((n, 384), dtype=np.float32)
    s.check_declared(tokens(list(attr)))
    attr[n - 1, 300] = -1e-30  # the last row, beyond the last full 64-row block
    with pytest.raises(ContractViolation, match=r"attr\[300\]") as info:
        s.check_declared(tokens(list(attr)))
    assert info.value.index == n - 1


def test_markdown_table_lists_every_slot():
    table = schema().markdown_table()
    assert table.count("\n") == 4 and "`vis.a.y`" in table
