"""Giving a trained draft a new input source (RFC hook 5): the ways of wiring it in.

The base draft is an :class:`~.models.EagleDraft` that reads some of the target's feature blocks
(``base.layers``); the new source is a further block (``new_layers``, e.g. the target's top layer).
``u`` below is the base draft's injected input (for the ``rmsnorm`` arm ``g * RMSNorm(W f_old)``),
``f_new`` the new block's features, ``W_new`` a fresh ``Linear(len(new_layers) * d, d_draft)``:

==============  ===========================================================  ======================
method          injected input after the change                               at step 0
==============  ===========================================================  ======================
rfc-additive    ``u + a * sqrt(d_draft) * F.normalize(W_new f_new)``, ``a`` a   ``|change| = 1 % of |u|``
                learned scalar starting at 0.01 (the RFC: additive, near-zero
                gain, unit normalisation; upstream ABC')
additive        ``u + W_new f_new``, PyTorch's default ``Linear`` init          disrupted
zero-additive   ``u + W_new f_new``, ``W_new = 0`` (ControlNet / LoRA style;   unchanged exactly
                a reference the RFC does not name)
concat          ``g * RMSNorm(W' [f_old; f_new])``, ``W'`` = ``W`` widened by    disrupted
                new columns with the default init of the widened layer
==============  ===========================================================  ======================

Everything else (GRU, output map, the frozen target parts) is the trained base draft's, copied.

Scale of the RFC arm: V22 adds ``0.01 * normalize(m(x))`` to a stream that is itself on the unit
sphere, so the new branch starts at 1 % of the stream. The stream it joins here is the draft's
RMS-normalised ``u``, on the sphere of radius ``sqrt(d_draft)``; the unit-normalised branch is put
on that same sphere before the 0.01 gain, so it also starts at 1 % (a bare unit vector would start
at 0.1 % and, with Adam moving ``a`` by about the learning rate per step, stay negligible).
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from v22sdk.specdec.errors import SpecDecError
from v22sdk.specdec.models import EagleDraft

METHODS = ("rfc-additive", "additive", "zero-additive", "concat")
RFC_GAIN = 0.01


class AdditiveExpansion(EagleDraft):
    """A copy of a trained draft plus an additive branch for ``new_layers`` (see the module table)."""

    def __init__(self, base: EagleDraft, method: str, new_layers: tuple[int, ...], gain: float = RFC_GAIN):
        if method not in ("rfc-additive", "additive", "zero-additive"):
            raise SpecDecError(f"{method!r} is not an additive expansion method")
        super().__init__(base.target, base.arm, d_draft=base.d_draft, warmup=base.warmup, layers=base.layers)
        self.load_state_dict(base.state_dict())
        self.method, self.new_layers = method, tuple(new_layers)
        self.new = nn.Linear(len(self.new_layers) * base.target.cfg.d, base.d_draft, bias=False)
        if method == "zero-additive":
            nn.init.zeros_(self.new.weight)
        if method == "rfc-additive":
            self.new_gain = nn.Parameter(torch.tensor(float(gain)))

    def inject(self, feats: torch.Tensor) -> torch.Tensor:
        u = super().inject(feats)
        extra = self.new(self.select(feats, self.new_layers))
        if self.method == "rfc-additive":
            extra = self.new_gain * math.sqrt(self.d_draft) * F.normalize(extra, dim=-1)
        return u + extra


def concat_expansion(base: EagleDraft, new_layers: tuple[int, ...]) -> EagleDraft:
    """A copy of ``base`` reading ``base.layers + new_layers`` through a widened input map: the old
    columns of ``W`` are the trained ones, the new columns get ``nn.Linear``'s default init."""
    if base.arm in ("nofeat", "perlayer") or base.layers is None:
        raise SpecDecError("concat expansion needs a draft with an explicit layer list and a single input map")
    wide = EagleDraft(
        base.target, base.arm, d_draft=base.d_draft, warmup=base.warmup, layers=base.layers + tuple(new_layers)
    )
    state = copy.deepcopy(base.state_dict())
    d_old = base.fc.weight.shape[1]
    w = wide.fc.weight.detach().clone()
    w[:, :d_old] = state["fc.weight"]
    state["fc.weight"] = w
    wide.load_state_dict(state)
    return wide


def expand(base: EagleDraft, method: str, new_layers: tuple[int, ...]) -> EagleDraft:
    """``base`` given the new feature blocks ``new_layers`` by ``method`` (one of :data:`METHODS`).
    Fresh parameters draw from torch's global RNG: seed it for a reproducible expansion."""
    if method == "concat":
        return concat_expansion(base, new_layers)
    if method in METHODS:
        return AdditiveExpansion(base, method, new_layers)
    raise SpecDecError(f"unknown expansion method {method!r}; choose one of {', '.join(METHODS)}")
