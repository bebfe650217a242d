# Types of the compiled top-1 scan (v22sdk/memory/_scan.c); see v22sdk.memory.ring.RingTier.search.
from typing import Any

# anything with the buffer protocol, C-contiguous (numpy arrays); typing's Buffer needs Python 3.12
_Buffer = Any

W_COS: float
W_JAC: float
MAX_WORDS: int

def top1(
    units: _Buffer,
    masks: _Buffer,
    row_stride: int,
    col_stride: int,
    counts: _Buffer,
    ids: _Buffer,
    n: int,
    q: _Buffer,
    qmask: _Buffer,
    qcount: int,
    margin: float,
    slack: float,
    /,
) -> tuple[int, float]: ...
