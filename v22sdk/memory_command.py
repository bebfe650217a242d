"""``v22sdk memory``: the memory package's commands, with ``search`` queries encoded by the engine.

The memory package never imports the engine (the engine depends on it); this is where the CLI
joins the two: any input the bundled checkpoint can read becomes a query (its ``sent_vec`` and
attribute set).
"""

from __future__ import annotations

from .memory.cli import make_memory_group


def _encode_with_engine(source: str, *, text: bool = False):
    from .engine.runner import Runner

    with Runner() as runner:  # no persistent memory: a query writes nothing
        return runner.encode(source, text=text)


memory = make_memory_group(encode_query=_encode_with_engine)
