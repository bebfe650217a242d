"""The fifo memory backend: cosine top-1, FIFO capacity, cheap registration."""

import subprocess
import sys

import torch

from v22sdk.engine.fifo import FifoMemory
from v22sdk.engine.memory_head import MemoryHead


def test_top1_cosine_and_fifo_capacity():
    mem = FifoMemory(capacity=3)
    assert isinstance(mem, MemoryHead)
    empty = mem.read(torch.randn(2, 256), [frozenset()] * 2)
    assert not empty.found.any() and empty.values.shape == (2, 384)
    keys = torch.eye(4, 256)
    vals = torch.arange(4).float()[:, None].repeat(1, 384)
    ids = mem.write(keys, vals, [frozenset()] * 4)
    assert ids == [1, 2, 3, 4] and len(mem) == 3  # the oldest (key e0) was dropped
    r = mem.read(torch.stack([keys[2] * 5, keys[0] + 0.1 * keys[3]]), [frozenset()] * 2)
    assert r.found.all()
    assert r.values[0, 0] == 2 and r.ids[0] == 3  # cosine ignores scale
    assert r.values[1, 0] == 3 and r.ids[1] == 4  # e0 is gone; e3 is the nearest left
    assert abs(float(r.scores[0]) - 1.0) < 1e-6


def test_state_round_trip():
    mem = FifoMemory(capacity=5)
    mem.write(torch.randn(2, 256), torch.randn(2, 384), [frozenset()] * 2)
    other = FifoMemory(1)
    other.load_state_dict(mem.state_dict())
    q = torch.randn(1, 256)
    assert torch.equal(other.read(q, [frozenset()]).values, mem.read(q, [frozenset()]).values)
    assert other.capacity == 5 and other.next_id == 3


def test_registering_engines_and_backend_does_not_import_torch():
    code = (
        "import sys; import v22sdk.engine.plugin as p; "
        "assert [c.name for c in p.v22sdk_register_engines()] == ['v22', 'baseline']; "
        "assert [c.name for c in p.v22sdk_register_memory_backends()] == ['fifo']; "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
