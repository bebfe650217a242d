"""Inference-time knock-outs of the V22 stages: what does each stage contribute to the answers?

``with knocked_out(model, ["E", "gate"], gate_value=g): ...`` runs the model with the named
stages' outputs replaced by forward hooks (the stages' own maths is untouched; the hooks are
removed on exit, also after an error):

======== ===================================================================================
name     what the model sees instead
======== ===================================================================================
``E``    E's memory embedding ``me`` = 0, its recall score = 0 and its injection into sent_vec
         (``me_to_sent``) = 0: E contributes nothing to the gate or to P6
``ABC'`` the ABC' pressurisation = 0, in B's input and in its injection into sent_vec (``to_sent``)
``P3-L`` the P3-L feature ``p3lf`` = 0 (B, ABC' and the gate no longer see attribute linkage)
``A/C``  A's logits and hidden state ``ah`` = 0 and C's tone vector ``ac`` = 0
``gate`` the gate's output fixed to ``gate_value`` (e.g. its mean over the training inputs:
         :func:`mean_gate`), the same for every input
``memory`` E reads from an empty memory (the memory head is detached for the duration)
======== ===================================================================================

A knock-out that changes no answer shows that, for that checkpoint and those inputs, the stage's
contribution does not reach the decision; it does not show that the stage did nothing during
training (a trained model may have learnt to rely on other paths).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

import torch

from ..errors import InputError

KNOCKOUTS = ("E", "ABC'", "P3-L", "A/C", "gate", "memory")


def _zero(output):
    if isinstance(output, tuple):
        return tuple(torch.zeros_like(o) if torch.is_tensor(o) and o.is_floating_point() else o for o in output)
    return torch.zeros_like(output)


def _zero_first(output):
    """(p3lf, ids, mask) → (0, ids, mask): only the feature, not the ids P3-L selected."""
    return (torch.zeros_like(output[0]), *output[1:])


@contextlib.contextmanager
def knocked_out(model, names: Iterable[str], *, gate_value: torch.Tensor | None = None) -> Iterator[None]:
    """Run ``model`` (a :class:`~v22sdk.engine.v22.V22Model`) with the stages in ``names`` knocked
    out (see the module docstring). InputError for an unknown name, for a model without the
    stage (the baseline engine) and for ``gate`` without ``gate_value`` (256,)."""
    names = list(dict.fromkeys(names))
    unknown = [n for n in names if n not in KNOCKOUTS]
    if unknown:
        raise InputError(f"knock-out {', '.join(unknown)}", f"unknown stage; choose from {', '.join(KNOCKOUTS)}")
    if names and not hasattr(model, "stage_e"):
        raise InputError(f"knock-out {', '.join(names)}", f"the {type(model).__name__} has no V22 stages")
    if "gate" in names:
        if gate_value is None or tuple(gate_value.shape) != (256,):
            raise InputError("knock-out gate", "needs gate_value, a (256,) tensor (see mean_gate)")
        fixed = gate_value.detach().to(model.vocab_emb)
    plan = []
    for name in names:
        if name == "E":
            plan += [(model.stage_e, _zero), (model.me_to_sent, _zero)]
        elif name == "ABC'":
            plan += [(model.abc_prime, _zero), (model.abc_prime.to_sent, _zero)]
        elif name == "P3-L":
            plan += [(model.p3l, _zero_first)]
        elif name == "A/C":
            plan += [(model.stage_a, _zero), (model.stage_c, _zero)]
        elif name == "gate":
            plan += [(model.gate, lambda out: fixed.expand_as(out).clone())]
    handles = [module.register_forward_hook(lambda _m, _args, out, f=f: f(out)) for module, f in plan]
    memory = model.stage_e.memory if "memory" in names else None
    if "memory" in names:
        model.stage_e.memory = None
    try:
        yield
    finally:
        for h in handles:
            h.remove()
        if "memory" in names:
            model.stage_e.memory = memory


@torch.no_grad()
def mean_gate(model, tokens: torch.Tensor, mask: torch.Tensor, batch_size: int = 64) -> torch.Tensor:
    """The gate's mean output (256,) over ``tokens`` (N, L, 640) / ``mask`` (N, L), read without
    writing the memory: the value a fixed gate is set to."""
    model.eval()
    seen: list[torch.Tensor] = []
    handle = model.gate.register_forward_hook(lambda _m, _a, out: seen.append(out.detach()))
    old = model.stage_e.write_enabled
    model.stage_e.write_enabled = False
    try:
        for s in range(0, tokens.shape[0], batch_size):
            model(tokens[s : s + batch_size], mask[s : s + batch_size])
    finally:
        handle.remove()
        model.stage_e.write_enabled = old
    return torch.cat(seen).mean(0)
