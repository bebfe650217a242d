# Types of the compiled row work of the per-turn write (v22sdk/memory/_rows.c); see
# v22sdk.memory.tiered.TieredMemory.write and v22sdk.memory.ring.RingTier.insert_one.
from typing import Any

# anything with the buffer protocol (numpy arrays); typing's Buffer needs Python 3.12
_Buffer = Any

SENT_DIM: int
MEM_DIM: int

def load(sent: Any, mem: Any, sent_out: _Buffer, units_out: _Buffer, mem_out: _Buffer, /) -> bool: ...

class Ring:
    masks: Any
    def __init__(
        self,
        sent: _Buffer,
        units: _Buffer,
        mem: _Buffer,
        masks: _Buffer,
        counts: _Buffer,
        ids: _Buffer,
        times: _Buffer,
        touched: _Buffer,
        /,
    ) -> None: ...
    def insert(
        self,
        ring: Any,
        turn_id: int,
        sent: _Buffer,
        units: _Buffer,
        mem: _Buffer,
        mask: bytes,
        time: float,
        touched: int,
        text: tuple[str, str, str, str],
        /,
    ) -> int: ...
