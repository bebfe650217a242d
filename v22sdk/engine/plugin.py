"""Built-in engines and the ``fifo`` memory backend, registered like any third-party plugin.

Registered classes are light specs: importing this module does not import torch (``v22sdk
plugins list`` must stay fast). ``build_model(cfg, vocab_emb)`` imports the model when it is used.
An engine spec from another distribution implements the same three attributes; its model takes
``(tokens (B, L, 640), mask (B, L), attr_sets)`` and returns ``{"logits": (B, P, V), "sent_vec":
(B, D), ...}`` (``sent_vec`` is needed whenever training has a validation split: calibration and
the open set are fitted on it; docs/engine.md, "Engines as plugins"), and provides
``stage_groups()``, ``update_loss_state(acc, ce)`` and ``memory``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hookspecs import hookimpl
from .fifo import FifoMemory

if TYPE_CHECKING:
    import torch
    from torch import nn

    from .config import EngineConfig


class V22EngineSpec:
    """The V22 graph P7 → P3-L → ABC' → A, B, C, D, E → gate → P6, every stage on at inference."""

    name = "v22"
    description = "V22 white-box engine: P7 → P3-L → ABC' → A/B/C/D/E → gate → tied P6 decoder"

    @staticmethod
    def build_model(cfg: EngineConfig, vocab_emb: torch.Tensor) -> nn.Module:
        from .v22 import build_model

        return build_model(cfg.replace(engine="v22"), vocab_emb)


class BaselineEngineSpec:
    """A plain transformer encoder with the same tied P6 decoder: the peer of every V22 result."""

    name = "baseline"
    description = "baseline: 640→256 projection, transformer encoder, mean pool, the same tied P6 decoder"

    @staticmethod
    def build_model(cfg: EngineConfig, vocab_emb: torch.Tensor) -> nn.Module:
        from .v22 import build_model

        return build_model(cfg.replace(engine="baseline"), vocab_emb)


@hookimpl
def v22sdk_register_engines() -> list[type]:
    return [V22EngineSpec, BaselineEngineSpec]


@hookimpl
def v22sdk_register_memory_backends() -> list[type]:
    return [FifoMemory]
