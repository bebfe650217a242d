"""Why the engine answered what it did: the answer's log-probability attributed to named slots and input parts.

The quantity explained. For input tokens ``x`` (L, 640) the engine decodes an answer
``a = (a_0 … a_{n-1})`` (the argmax character of each P6 position up to and including the first
``<eos>``, at most P positions). Its log-probability

    f(x) = Σ_i log softmax(logits(x) / T)_i [a_i]      (the log of the ``confidence`` ``run`` prints;
                                                         T: the checkpoint's calibration, 1 without)

is what every attribution divides up, with the answer **held fixed**: a positive attribution
says a part of the input raised the probability of *this* answer, a negative one that it lowered
it. ``f`` is computed in float64 from the engine's logits, so that an answer decoded with
probability 1 − 1e-9 still has a finite, comparable log-probability.

What "absent" means (the baselines):

* a **slot** ``s``: value 0 in every token of the input, the contract's meaning of a slot that
  did not fire (undeclared slots are exactly 0 in every token);
* a **token** ``t``: the all-zero 640-vector (no embedding, no attribute), kept in the mask so
  that no other token changes position;
* a **region** of an image or a stretch of sound (see :func:`region_attribution`): the image's
  mean colour over the cell, or silence (zeros) over the stretch, re-tokenized by the modality's
  own plugin. This is how per-patch attribution is obtained for a checkpoint that sees an image
  as one global token: the engine never sees a patch, so the patch is removed from the *input*.

Two methods, both signed, both over the same baselines:

* ``"ig"``: integrated gradients (Sundararajan et al., 2017) along the straight path from the
  baseline to the input (adaptive trapezoid rule, :func:`integrated_gradients`). For slots the
  path moves the attribute half only (the embeddings stay), so the slot attributions sum to
  f(x) − f(x with every slot 0); for tokens it moves whole tokens, so the token attributions sum
  to f(x) − f(every token 0). The difference between the sum and that change is the
  *completeness gap*; intervals are halved where it lies until it is within
  :data:`IG_TOLERANCE` (or the budget is spent), and it is reported either way. Engines are not
  exactly path-integrable everywhere: V22's gate statistics and P3-L's attention statistics are
  computed without gradient, its memory read is a detached top-1 lookup, and P3-L reads *which*
  slots fired (non-zero), so f jumps where the path leaves an all-zero baseline. No gradient sees
  such a jump; an incomplete path reports it (``jump_off_baseline``), and on the bundled
  checkpoint it is most of the gap (measured in ``docs/explanations.md``).
* ``"occlusion"``: the attribution of a part is f(x) − f(x with that part at its baseline), one
  batched forward pass per set of parts. Needs no gradient: it works for any engine.

Any engine registered through the engine hook works: only ``model(tokens, mask, attr_sets)
["logits"]`` is used. ``"ig"`` needs the logits to depend differentiably on the tokens and
raises :class:`NotDifferentiable` otherwise. Memory is read as in ``run`` but never written.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..errors import InputError, V22Error

METHODS = ("ig", "occlusion")
#: the default method, chosen by the pre-registered rule of the deletion test (docs/explanations.md,
#: results/explain/faithfulness.json, the bundled checkpoint's held-out inputs)
DEFAULT_METHOD = "occlusion"
#: completeness of integrated gradients: |Σ attributions − Δf| ≤ rel·|Δf| + abs (nats)
IG_TOLERANCE = (0.01, 0.01)
#: inputs with fewer tokens than this are also explained region by region (when their plugin
#: gives token boxes or time spans and reads files as arrays)
REGION_BELOW_TOKENS = 4
#: image cells per side, and the most sound stretches, for region occlusion
REGION_GRID = 6
REGION_MAX_STRETCHES = 16
#: the shortest sound stretch occluded, in seconds
REGION_MIN_SECONDS = 0.1

_METHOD_NAMES = {"ig": "integrated gradients", "occlusion": "occlusion"}


class NotDifferentiable(V22Error):
    """``method="ig"`` on an engine whose logits do not depend differentiably on its input tokens."""

    exit_code = 2


# -- the objective ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    """The decoded answer held fixed while it is explained: ``ids`` (n,) incl. the closing ``<eos>``."""

    text: str
    ids: tuple[int, ...]
    log_prob: float


class Objective:
    """f(tokens) = the log-probability of one fixed answer, for a batch of variants of one input.

    ``mask`` (L,) bool marks the input's real tokens; ``attr_set`` maps a token batch (S, L, 640)
    to the attribute sets the engine reads (memory scoring), as ``run`` computes them. The logits
    are divided by ``temperature`` (the checkpoint's calibration, as ``run``'s confidence is). Calls
    are chunked (``chunk`` variants per forward pass); memory is read, never written.
    """

    def __init__(
        self,
        model,
        mask: torch.Tensor,
        answer_ids: Sequence[int],
        attr_sets: Callable[[torch.Tensor], list[frozenset[str]]] | None,
        chunk: int = 64,
        temperature: float = 1.0,
    ):
        self.model, self.mask, self.chunk, self.temperature = model, mask, chunk, float(temperature)
        self.ids = torch.as_tensor(list(answer_ids), dtype=torch.long)
        self.attr_sets = attr_sets
        self.calls = 0  # forward passes, for the cost report

    def _forward(self, tokens: torch.Tensor, masks: torch.Tensor | None = None) -> torch.Tensor:
        s = tokens.shape[0]
        sets = self.attr_sets(tokens) if self.attr_sets is not None else None
        self.calls += 1
        logits = self.model(tokens, self.mask.expand(s, -1) if masks is None else masks, sets)["logits"]
        n = len(self.ids)
        logp = torch.log_softmax(logits[:, :n].double() / self.temperature, -1)
        return logp.gather(-1, self.ids.view(1, n, 1).expand(s, n, 1)).squeeze(-1).sum(-1)  # (S,)

    def values(self, tokens: torch.Tensor, masks: torch.Tensor | None = None) -> np.ndarray:
        """(S,) float64 f of each variant, no gradient; ``masks`` (S, L) when the variants' lengths differ."""
        c = self.chunk
        with torch.no_grad():
            return torch.cat(
                [
                    self._forward(tokens[i : i + c], None if masks is None else masks[i : i + c])
                    for i in range(0, tokens.shape[0], c)
                ]
            ).numpy()

    def gradients(self, tokens: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        """(f (S,), ∂f/∂tokens (S, L, 640)) in float64."""
        fs, gs = [], []
        for i in range(0, tokens.shape[0], self.chunk):
            part = tokens[i : i + self.chunk].detach().clone().requires_grad_(True)
            with torch.enable_grad():
                y = self._forward(part)
                if not y.requires_grad:
                    raise NotDifferentiable(
                        "the engine's answer does not depend differentiably on its input "
                        "tokens, so integrated gradients cannot explain it; use "
                        "method 'occlusion'"
                    )
                (g,) = torch.autograd.grad(y.sum(), part, allow_unused=True)
            if g is None:
                raise NotDifferentiable(
                    "the engine's logits do not depend on its input tokens through autograd; use method 'occlusion'"
                )
            fs.append(y.detach())
            gs.append(g.double())
        return torch.cat(fs).numpy(), torch.cat(gs).numpy()


@contextlib.contextmanager
def read_only(model):
    """The model in eval mode with its memory read but not written; restored afterwards."""
    stage_e = getattr(model, "stage_e", None)
    was_training = model.training
    saved = (stage_e.write_enabled, stage_e.last) if stage_e is not None else None
    model.eval()
    if stage_e is not None:
        stage_e.write_enabled = False
    try:
        yield model
    finally:
        if stage_e is not None:
            stage_e.write_enabled, stage_e.last = saved
        model.train(was_training)


def decode_answer(
    model, tokens: torch.Tensor, mask: torch.Tensor, vocab, attr_sets=None, temperature: float = 1.0
) -> Answer:
    """The answer ``run`` decodes for one input (tokens (1, L, 640)), with its float64 log-probability
    (logits divided by ``temperature``, the checkpoint's calibration: the log of ``run``'s confidence)."""
    from .vocab import EOS, PAD

    with torch.no_grad():
        logits = model(tokens, mask, attr_sets)["logits"][0]  # (P, V)
    ids = logits.argmax(-1).tolist()
    n = next((i + 1 for i, t in enumerate(ids) if t in (PAD, EOS)), len(ids))
    logp = torch.log_softmax(logits.double() / float(temperature), -1)
    return Answer(vocab.decode(ids), tuple(ids[:n]), float(logp[torch.arange(n), ids[:n]].sum()))


def schema_attr_sets(schema) -> Callable[[torch.Tensor], list[frozenset[str]]]:
    """tokens (S, L, 640) → the attribute set of each variant: the schema's slots non-zero in any token
    (``AttributeSchema.active_names``, as ``run`` computes it for the engine's memory)."""
    idx = torch.as_tensor(schema.indices, dtype=torch.long)
    names = schema.names

    def sets(tokens: torch.Tensor) -> list[frozenset[str]]:
        active = (tokens[..., 256:].detach()[..., idx] != 0).any(1)  # (S, slots)
        return [frozenset(names[j] for j in row.nonzero().flatten().tolist()) for row in active]

    return sets


# -- the two methods -------------------------------------------------------------------------------
#: the path parameter α at which "just off the baseline" is measured, for the jump reported with an incomplete path
JUST_OFF_BASELINE = 1e-9


def integrated_gradients(
    objective: Objective,
    x: torch.Tensor,
    baseline: torch.Tensor,
    *,
    steps: int = 32,
    max_steps: int = 256,
    tolerance: tuple[float, float] = IG_TOLERANCE,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Attributions (L, 640) float64 of f along the straight path baseline → x (both (L, 640)).

    Adaptive trapezoid rule over the path parameter α ∈ [0, 1]: ``steps`` equal intervals first;
    at every node the forward pass gives f as well as ∂f, so each interval's error is known
    exactly, ``f(b) − f(a)`` minus the gradients' trapezoid estimate, and those errors sum to the
    completeness gap. While the gap exceeds ``tolerance`` (relative, absolute), the intervals
    holding most of it are halved (at most ``max_steps`` intervals in all; none shorter than
    2⁻¹²: a jump of f, where a gradient-free part of the engine switches, cannot be refined away
    and stays in the reported gap). Returns the attributions and ``{"steps" (intervals),
    "f_input", "f_baseline", "sum", "gap", "within_tolerance"}``; when the gap is over the
    tolerance, also ``"jump_off_baseline"``: f at α = 10⁻⁹ minus f at the baseline. V22's P3-L reads
    which slots fired (non-zero), so f jumps when the path leaves an all-zero baseline; no
    gradient sees that jump, and it is most of the gap (``docs/explanations.md``).
    """
    diff = (x - baseline).double()
    base64 = baseline.double()
    nodes: dict[float, tuple[float, np.ndarray]] = {}  # α → (f, ∂f/∂α = ∂f/∂x · diff summed per feature)

    def evaluate(alphas: list[float]) -> None:
        a = torch.tensor(alphas, dtype=torch.float64)
        fs, grads = objective.gradients((base64 + a.view(-1, 1, 1) * diff).to(x.dtype))
        for alpha, f, g in zip(alphas, fs, grads):
            nodes[alpha] = (float(f), g)

    evaluate([i / steps for i in range(steps + 1)])
    d = diff.numpy()
    while True:
        alphas = sorted(nodes)
        intervals = list(zip(alphas[:-1], alphas[1:]))
        parts = [(b - a) / 2 * (nodes[a][1] + nodes[b][1]) for a, b in intervals]  # per-feature estimates
        errors = [nodes[b][0] - nodes[a][0] - float((p * d).sum()) for (a, b), p in zip(intervals, parts)]
        f_x, f_b = nodes[1.0][0], nodes[0.0][0]
        gap = -sum(errors)
        ok = abs(gap) <= tolerance[0] * abs(f_x - f_b) + tolerance[1]
        room = max_steps - len(intervals)
        split = [iv for _, iv in sorted(zip((-abs(e) for e in errors), intervals)) if iv[1] - iv[0] > 2**-12]
        if ok or room <= 0 or not split:
            break
        # halve the worst intervals: enough of them to hold half the gap, at most 16 per pass
        worst, held = [], 0.0
        for (a, b), e in sorted(zip(intervals, errors), key=lambda t: -abs(t[1])):
            if b - a <= 2**-12:
                continue
            worst.append((a + b) / 2)
            held += abs(e)
            if held >= abs(gap) / 2 or len(worst) >= min(16, room):
                break
        evaluate(worst)
    attributions = np.sum(parts, axis=0) * d
    info = {
        "steps": len(intervals),
        "f_input": f_x,
        "f_baseline": f_b,
        "sum": float(attributions.sum()),
        "gap": float(gap),
        "within_tolerance": bool(ok),
    }
    if not ok:  # how much of the gap is a jump on leaving the baseline (a gradient-free switch at α = 0⁺)
        f_start = float(objective.values((base64 + JUST_OFF_BASELINE * diff).to(x.dtype).unsqueeze(0))[0])
        info["jump_off_baseline"] = f_start - f_b
    return attributions, info


def occlusion(objective: Objective, x: torch.Tensor, variants: torch.Tensor) -> np.ndarray:
    """f(x) − f(variant) for each variant (S, L, 640) of x (L, 640): what removing each part costs."""
    f = objective.values(torch.cat([x.unsqueeze(0), variants]))
    return f[0] - f[1:]


def zero_slots(x: torch.Tensor, slots: Sequence[int]) -> torch.Tensor:
    """(len(slots), L, 640): x with one attribute slot (0..383) set to 0 in every token per variant."""
    out = x.unsqueeze(0).repeat(len(slots), 1, 1)
    for i, s in enumerate(slots):
        out[i, :, 256 + s] = 0
    return out


def zero_tokens(x: torch.Tensor, tokens: Sequence[int]) -> torch.Tensor:
    """(len(tokens), L, 640): x with one token set to the zero vector per variant."""
    out = x.unsqueeze(0).repeat(len(tokens), 1, 1)
    for i, t in enumerate(tokens):
        out[i, t] = 0
    return out


def slot_attribution(
    objective: Objective, x: torch.Tensor, n: int, slots: Sequence[int], method: str, **ig
) -> tuple[np.ndarray, dict[str, Any] | None]:
    """Attribution of each slot in ``slots`` (attr positions 0..383) for the first ``n`` real tokens."""
    if method == "ig":
        baseline = x.clone()
        baseline[:n, 256:] = 0
        a, info = integrated_gradients(objective, x, baseline, **ig)
        return a[:n, 256:].sum(0)[list(slots)], info
    return occlusion(objective, x, zero_slots(x, slots)), None


def token_attribution(
    objective: Objective, x: torch.Tensor, n: int, method: str, **ig
) -> tuple[np.ndarray, dict[str, Any] | None]:
    """Attribution of each of the first ``n`` tokens (the real ones)."""
    if method == "ig":
        baseline = x.clone()
        baseline[:n] = 0
        a, info = integrated_gradients(objective, x, baseline, **ig)
        return a[:n].sum(1), info
    return occlusion(objective, x, zero_tokens(x, range(n))), None


# -- regions of the input, through the tokenizer ---------------------------------------------------
def _edges(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` near-equal [start, stop) pieces of ``n`` elements, each non-empty."""
    cuts = [round(i * n / parts) for i in range(parts + 1)]
    return [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


def region_kind(batch, data: Any) -> str | None:
    """``"image"`` (tokens with pixel boxes, an (H, W[, C]) array), ``"sound"`` (tokens with time
    spans, a (T[, C]) array) or None: how :func:`region_attribution` can cut this input."""
    if not isinstance(data, np.ndarray) or data.size == 0:
        return None
    if "box" in batch.offsets and data.ndim in (2, 3):
        return "image"
    if "time" in batch.offsets and data.ndim in (1, 2):
        return "sound"
    return None


def cut_regions(
    kind: str,
    data: np.ndarray,
    units: dict[str, float],
    *,
    grid: int = REGION_GRID,
    max_stretches: int = REGION_MAX_STRETCHES,
    min_seconds: float = REGION_MIN_SECONDS,
) -> list[tuple[tuple[slice, ...], dict[str, Any]]]:
    """The regions of an input: (index into the array, place) pairs.

    image: a ``grid`` × ``grid`` lattice of cells (fewer where the image is smaller); place
    ``{"box": [x0, y0, x1, y1]}`` in pixels. sound: up to ``max_stretches`` equal stretches of at
    least ``min_seconds`` (when the input carries a ``sample_rate``); place ``{"time": [t0, t1]}``
    in seconds (in fractions of the input without a rate).
    """
    if kind == "image":
        h, w = data.shape[:2]
        return [
            ((slice(y0, y1), slice(x0, x1)), {"box": [x0, y0, x1, y1]})
            for y0, y1 in _edges(h, min(grid, h))
            for x0, x1 in _edges(w, min(grid, w))
        ]
    t = data.shape[0]
    rate = units.get("sample_rate")
    longest = max(1, int(t // max(1, round(min_seconds * rate)))) if rate else max_stretches
    scale = rate if rate else t
    return [
        ((slice(a, b),), {"time": [a / scale, b / scale]}) for a, b in _edges(t, max(1, min(max_stretches, longest, t)))
    ]


def occlude(kind: str, data: np.ndarray, where: Sequence[tuple[slice, ...]]) -> np.ndarray:
    """``data`` with every region of ``where`` removed: filled with the image's mean value per channel,
    or silenced (zeros) for sound."""
    out = data.copy()
    if kind == "image":
        h, w = data.shape[:2]
        fill = data.reshape(h, w, -1).mean((0, 1))
        fill = (fill.round() if data.dtype.kind in "uib" else fill).astype(data.dtype)
        fill = fill if data.ndim == 3 else fill[0]
    else:
        fill = 0
    for index in where:
        out[index] = fill
    return out


def tokenize_variants(modality, sample, arrays: Sequence[np.ndarray]) -> list:
    """Each array tokenized as ``sample`` would be (same units and source)."""
    from ..modality import Sample

    return [modality.tokenize(Sample(a, dict(sample.units), sample.source)) for a in arrays]


def region_attribution(
    objective: Objective, batch, max_len: int, modality, sample, kind: str, **cut
) -> list[dict[str, Any]]:
    """Occlusion of input regions through the modality's tokenizer: f(input) − f(input without the
    region), for each region of :func:`cut_regions` (``batch``: the input's own tokens)."""
    from .data import to_tensors

    regions = cut_regions(kind, sample.data, dict(sample.units), **cut)
    batches = tokenize_variants(modality, sample, [occlude(kind, sample.data, [index]) for index, _ in regions])
    tokens, masks = to_tensors([batch, *batches], max_len)
    f = objective.values(tokens, masks)
    return [{**place, "attribution": float(f[0] - fv)} for (_, place), fv in zip(regions, f[1:])]


# -- one input end to end --------------------------------------------------------------------------
def explain_batch(
    model,
    cfg,
    vocab,
    batch,
    schema,
    *,
    method: str = DEFAULT_METHOD,
    sample=None,
    modality=None,
    regions: bool | None = None,
    steps: int = 32,
    max_steps: int = 256,
    grid: int = REGION_GRID,
    text: str | None = None,
    temperature: float = 1.0,
) -> dict[str, Any]:
    """The explanation of the engine's answer for one token batch (see the module docstring).

    ``schema`` names the slots (the modality plugin's own :class:`~v22sdk.schema.AttributeSchema`).
    ``sample`` (the decoded input, from ``modality.load``) and ``modality`` enable region occlusion:
    ``regions=None`` does it when the input has fewer than :data:`REGION_BELOW_TOKENS` tokens.
    ``text`` (the NFC input text) labels character tokens; ``temperature`` is the checkpoint's
    calibration of this modality (1: none). Returns a JSON-ready dict.
    """
    from .data import to_tensors

    if method not in METHODS:
        raise InputError(f"method {method!r}", f"unknown explanation method; methods are {', '.join(METHODS)}")
    start, cpu = time.perf_counter(), time.process_time()
    tokens, mask = to_tensors([batch], cfg.max_len)
    n = int(mask.sum())
    sets = schema_attr_sets(schema)
    with read_only(model):
        answer = decode_answer(model, tokens, mask, vocab, sets(tokens), temperature)
        objective = Objective(model, mask, answer.ids, sets, temperature=temperature)
        x = tokens[0]
        attr = x[:n, 256:].numpy()
        active = [int(s) for s in schema.indices if np.any(attr[:, s] != 0)]
        ig = {"steps": steps, "max_steps": max_steps}
        slot_scores, slot_info = (
            slot_attribution(objective, x, n, active, method, **ig) if active else (np.zeros(0), None)
        )
        token_scores, token_info = token_attribution(objective, x, n, method, **ig)
        wanted = regions if regions is not None else n < REGION_BELOW_TOKENS
        region_part = (
            _regions(objective, batch, cfg.max_len, modality, sample, grid) if wanted and sample is not None else {}
        )
    mean = attr.mean(0)
    slots = [
        {"name": schema.name(s), "index": s, "value": round(float(mean[s]), 4), "attribution": float(a)}
        for s, a in zip(active, slot_scores)
    ]
    slots.sort(key=lambda r: (-abs(r["attribution"]), r["index"]))
    out: dict[str, Any] = {
        "decoded": answer.text,
        "log_prob": answer.log_prob,
        "confidence": math.exp(answer.log_prob),
        "method": method_doc(method, steps=(slot_info or token_info or {}).get("steps"), temperature=temperature),
        "slots": slots,
        "tokens": [{**token_place(batch, i, text), "attribution": float(a)} for i, a in enumerate(token_scores)],
        "tokens_read": n,
        "tokens_total": len(batch),
    }
    if method == "ig":
        out["completeness"] = {"slots": slot_info, "tokens": token_info}
    out.update(region_part)
    out["forward_passes"] = objective.calls
    out["seconds"] = round(time.perf_counter() - start, 4)
    out["cpu_seconds"] = round(time.process_time() - cpu, 4)
    return out


def _regions(objective: Objective, batch, max_len: int, modality, sample, grid: int) -> dict[str, Any]:
    """``{"regions": …}`` by occlusion through the tokenizer, or ``{"regions_note": why not}``."""
    kind = region_kind(batch, sample.data) if modality is not None else None
    if kind is None:
        return {"regions_note": "regions not explained: the input's tokens carry no pixel boxes or time spans"}
    try:
        cells = region_attribution(objective, batch, max_len, modality, sample, kind, grid=grid)
    except InputError as exc:  # the plugin refuses an occluded input (silence, a flat image …)
        return {"regions_note": f"regions not explained: the {batch.modality} plugin refused an occluded input ({exc})"}
    return {
        "regions": {
            "kind": kind,
            "method": "occlusion through the tokenizer",
            "fill": "the image's mean value" if kind == "image" else "silence (zeros)",
            "cells": cells,
        }
    }


def method_doc(method: str, steps: int | None = None, temperature: float = 1.0) -> dict[str, Any]:
    """The method's name and baselines, as reported with every explanation."""
    calibrated = f", logits divided by the calibration temperature {temperature:.4g}" if temperature != 1.0 else ""
    doc: dict[str, Any] = {
        "key": method,
        "name": _METHOD_NAMES[method],
        "slot_baseline": "the slot at 0 in every token (embeddings kept)",
        "token_baseline": "the all-zero token (kept in place)",
        "explained": f"log-probability of the decoded answer (held fixed){calibrated}",
    }
    if method == "ig" and steps:
        doc["steps"] = steps
    return doc


def token_place(batch, i: int, text: str | None = None) -> dict[str, Any]:
    """Where token ``i`` came from: ``{"token": i, "at": label}`` plus ``char`` (the character, with
    ``offset`` into the NFC text), ``time`` ([t0, t1] seconds) or ``box`` ([x0, y0, x1, y1] pixels)."""
    off = batch.offsets
    row: dict[str, Any] = {"token": i}
    if "char" in off:
        c = int(off["char"][i])
        row["offset"] = c
        if text is not None and 0 <= c < len(text):
            row["char"] = text[c]
            row["at"] = f"{text[c]!r} (char {c})"
        else:
            row["at"] = f"char {c}"
    elif "time" in off:
        t0, t1 = (float(v) for v in off["time"][i])
        row["time"] = [t0, t1]
        row["at"] = f"{t0:.2f}-{t1:.2f} s"
    elif "box" in off:
        row["box"] = [int(v) for v in off["box"][i]]
        row["at"] = "box " + ",".join(str(v) for v in row["box"])
    else:
        row["at"] = f"token {i}"
    return row


def explain_input(
    runner,
    source: str,
    modality: str | None = None,
    *,
    method: str | None = None,
    regions: bool | None = None,
    text: bool = False,
    **options,
) -> dict[str, Any]:
    """:meth:`Runner.explain_answer <v22sdk.engine.runner.Runner.explain_answer>`: ``source`` (a file or
    a text; ``text=True``: the text itself) tokenized as ``run`` does, its answer explained by
    :func:`explain_batch`."""
    import unicodedata

    from .._paths import display
    from ..inputs import resolve

    got = resolve(source, text=text, extensions=runner.registry.extensions())
    # tokenized from what was resolved: standard input ("-") is read once
    batch = (
        runner.tokenize(str(got.path), modality) if got.is_file else runner.tokenize(got.literal, modality, text=True)
    )
    plugin = runner.registry.modality(batch.modality)
    schema = type(plugin).schema
    sample = None
    if got.is_file and (regions or (regions is None and len(batch) < REGION_BELOW_TOKENS)):
        sample = plugin.load(got.path)
    chars = None if got.is_file else unicodedata.normalize("NFC", got.literal)
    out = {
        "input": display(source),
        "modality": batch.modality,
        "engine": runner.cfg.engine,
        "checkpoint": str(runner.path),
    }
    temperature = runner.temperature_of(batch.modality) if hasattr(runner, "temperature_of") else 1.0
    out.update(
        explain_batch(
            runner.model,
            runner.cfg,
            runner.vocab,
            batch,
            schema,
            method=method or DEFAULT_METHOD,
            sample=sample,
            modality=plugin,
            regions=regions,
            text=chars,
            temperature=temperature,
            **options,
        )
    )
    # run's open-set verdict (None without one): an unfamiliar input's answer is withheld by run, explained here
    out["familiar"] = runner.judge([batch])[0]["familiar"] if getattr(runner, "open_set", None) is not None else None
    return out
