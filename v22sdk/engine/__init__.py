"""Built-in engines (registered through the v22sdk entry point ``engines = v22sdk.engine.plugin``).

Modules (only ``plugin``, ``fifo``, ``memory_head``, ``config``, ``vocab``, ``data`` and ``cli``
are importable without torch):

* ``config``     — :class:`EngineConfig` and the ``full`` / ``small`` presets;
* ``stages``     — the V22 stages, one ``nn.Module`` each, shapes in their docstrings;
* ``v22``        — :class:`V22Model` (the graph) and :class:`BaselineModel`;
* ``fifo``       — the ``fifo`` memory backend (cosine top-1, upstream's);
* ``vocab``      — the output vocabulary and its tied embeddings;
* ``data``       — manifests, cached tokenization, split, auxiliary targets;
* ``train``      — losses, safeguards, the training loop, evaluation;
* ``checkpoint`` — safe checkpoints; ``pipeline`` — train/eval end to end; ``runner`` — one input;
* ``cli``        — the ``train``, ``eval`` and ``run`` click commands.
"""
